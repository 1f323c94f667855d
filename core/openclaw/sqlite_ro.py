"""Open an OpenClaw SQLite database read-only, safely beside a running gateway.

OpenClaw (2026.9+) keeps sessions, transcripts and the memory index in
``agents/<id>/agent/openclaw-agent.sqlite`` in WAL mode (rollback journal on
network file systems). memlens must never take a write lock there, never leave
files OpenClaw did not make, and read consistently while OpenClaw writes.

How a database is opened (:func:`connect_ro`):

* rollback-journal database (header bytes 18/19 = 1): ``mode=ro``. Readers of
  such a database create no file; shared locks only.
* WAL database whose ``-wal`` and ``-shm`` both exist (a writer is or was
  there): ``mode=ro``, which reads the WAL and creates nothing new.
* WAL database without a ``-wal``, or with an empty ``-wal`` and no ``-shm``
  (nobody is writing; nothing waits in a WAL): ``immutable=1``. A plain
  ``mode=ro`` would create ``-wal`` and ``-shm`` files (tested with SQLite
  3.40). :meth:`ReadOnlyDb.refresh` notices when a writer appears and reopens
  with ``mode=ro``.
* WAL database with a non-empty ``-wal`` but no ``-shm`` (a writer died before
  checkpointing): the database and its WAL are copied to a private temporary
  folder and the copy is opened, so that the WAL's transactions are seen and
  nothing is created beside OpenClaw's files.

Every connection sets ``query_only``; busy and locked moments are retried for
a bounded time (:data:`RETRY_SECONDS`), then reported as a :class:`FormatError`
naming the file.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import sqlite3
import tempfile
import threading
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from core.io.closing import Closing
from core.io.jsonio import printable
from core.io.problems import FormatError
from core.io.safe_read import open_regular

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

SQLITE_MAGIC = b"SQLite format 3\x00"
RETRY_SECONDS = 5.0
"""How long a busy or locked database is retried (OpenClaw's own busy_timeout)."""

OpenMode = Literal["ro", "immutable", "snapshot"]


def _lenient_text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def read_header(path: str | os.PathLike[str]) -> bytes:
    """The first 100 bytes of an SQLite file (never a FIFO or a device).

    Raises
    ------
    FormatError
        When the file is missing, unreadable or not an SQLite database.
    """
    name = os.fspath(path)
    try:
        with open_regular(name) as fh:
            head = fh.read(100)
    except FileNotFoundError:
        raise FormatError(name, "no such file") from None
    except FormatError:
        raise
    except OSError as exc:
        raise FormatError(name, f"cannot read: {exc.strerror or exc}") from exc
    if not head.startswith(SQLITE_MAGIC):
        if len(head) < len(SQLITE_MAGIC):
            raise FormatError(name, f"not an SQLite database (only {len(head)} bytes)")
        raise FormatError(name, "not an SQLite database")
    return head


def _size(path: str) -> int | None:
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def choose_mode(path: str | os.PathLike[str], header: bytes | None = None) -> OpenMode:
    """How :func:`connect_ro` opens *path* now (see the module's notes)."""
    name = os.fspath(path)
    head = header if header is not None else read_header(name)
    wal_mode = len(head) >= 20 and head[18] == 2 and head[19] == 2
    if not wal_mode:
        return "ro"
    wal = _size(name + "-wal")
    shm = _size(name + "-shm")
    if wal is not None and shm is not None:
        return "ro"
    if not wal:  # no WAL, or an empty one without a wal-index
        return "immutable"
    return "snapshot"


def is_busy(exc: BaseException) -> bool:
    """True for SQLite's busy / locked errors, worth retrying."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def retry(
    fn: Callable[[], Any], name: str, *, seconds: float | None = None, what: str = "read"
) -> Any:
    """Run *fn*, retrying busy/locked errors for up to *seconds* (:data:`RETRY_SECONDS`).

    Raises
    ------
    FormatError
        When it still fails (naming *name*), or on any other SQLite error.
    """
    if seconds is None:
        seconds = RETRY_SECONDS
    deadline = time.monotonic() + seconds
    delay = 0.01
    while True:
        try:
            return fn()
        except (sqlite3.Error, ValueError) as exc:
            if is_busy(exc) and time.monotonic() < deadline:
                time.sleep(delay)
                delay = min(delay * 2, 0.25)
                continue
            detail = f"cannot {what}: {exc}"
            if is_busy(exc):
                detail += f" (still busy after {seconds:g} s: OpenClaw is writing; try again)"
            raise FormatError(name, detail) from exc


_SERIALS = itertools.count(1)


class ReadOnlyDb(Closing):
    """A read-only connection to an SQLite database that OpenClaw may be writing.

    :attr:`serial` numbers each connection it opens, never twice in a process (unlike
    ``id()``, which a later object may take): what one connection has seen (its
    ``data_version``) is only comparable with what the same connection sees.
    """

    serial: int
    real_path: str
    """The file this connection opened: :attr:`path` with every symbolic link resolved."""

    def __init__(self, path: str | os.PathLike[str], *, timeout: float | None = None) -> None:
        self.path = os.fspath(path)
        self._pinned = threading.local()
        self.timeout = RETRY_SECONDS if timeout is None else timeout
        self.mode: OpenMode = "ro"
        self._snapshot_dir: str | None = None
        self._db: sqlite3.Connection | None = None
        self._stamp: tuple[int, ...] | None = None
        self._memo: dict[str, tuple[int, Any]] = {}
        self._connect()

    # -- opening -----------------------------------------------------------------

    def _file_stamp(self) -> tuple[int, ...] | None:
        """Identity, size and time of the file and its WAL (what a writer changes)."""
        out: list[int] = []
        for name in (self.path, self.path + "-wal"):
            try:
                st = os.stat(name)
            except OSError:
                if name == self.path:
                    return None
                continue
            out += [st.st_ino, st.st_size, st.st_mtime_ns]
        return tuple(out)

    def _connect(self) -> None:
        header = read_header(self.path)
        mode = choose_mode(self.path, header)
        self._stamp = self._file_stamp()
        target = Path(self.path).resolve()
        self.real_path = str(target)
        if mode == "snapshot":
            target = self._copy_snapshot(target)
        uri = target.as_uri() + ("?mode=ro&immutable=1" if mode == "immutable" else "?mode=ro")
        try:
            db = sqlite3.connect(
                uri, uri=True, timeout=self.timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise FormatError(self.path, f"cannot open: {exc}") from exc
        db.text_factory = _lenient_text
        try:
            wait = self.timeout
            for pragma in ("PRAGMA query_only = ON", "PRAGMA trusted_schema = OFF"):
                retry(partial(db.execute, pragma), self.path, what="open", seconds=wait)
            # reading the schema now proves the file is a database, not damage
            retry(
                lambda: db.execute("SELECT count(*) FROM sqlite_master").fetchone(),
                self.path,
                seconds=wait,
            )
        except FormatError:
            db.close()
            raise
        self._db = db
        self._memo = {}  # a new connection: nothing it has seen is known
        self.serial = next(_SERIALS)
        self.mode = mode

    def _copy_snapshot(self, target: Path) -> Path:
        self._drop_snapshot()
        folder = tempfile.mkdtemp(prefix="memlens-sqlite-")
        self._snapshot_dir = folder
        copy = Path(folder) / target.name
        try:
            shutil.copyfile(target, copy)
            shutil.copyfile(str(target) + "-wal", str(copy) + "-wal")
        except OSError as exc:
            self._drop_snapshot()
            raise FormatError(self.path, f"cannot copy for reading: {exc.strerror or exc}") from exc
        return copy

    def _drop_snapshot(self) -> None:
        if self._snapshot_dir is not None:
            shutil.rmtree(self._snapshot_dir, ignore_errors=True)
            self._snapshot_dir = None

    def refresh(self) -> bool:
        """Reopen when the right way to open the file changed (a writer appeared or left).

        Also reopens an ``immutable`` connection or a private snapshot whose file (or
        WAL) changed (a writer came and went between two calls: SQLite keeps the old
        pages of an immutable file), and a connection a failed reopen left closed.
        Returns True when it reopened.

        Raises
        ------
        FormatError
            When the file cannot be opened now (the next call tries again).
        """
        mode = choose_mode(self.path)
        if self._db is not None and mode == self.mode:
            # a private copy or an immutable view is stale once the file or WAL changed
            if mode == "ro" or self._file_stamp() == self._stamp:
                return False
        self.close()
        self._connect()
        return True

    # -- plumbing ----------------------------------------------------------------

    @property
    def connection(self) -> sqlite3.Connection:
        """The underlying connection (read-only)."""
        if self._db is None:
            raise FormatError(self.path, "the database is closed")
        return self._db

    def close(self) -> None:
        """Close the connection (and drop a private snapshot)."""
        if self._db is not None:
            self._db.close()
            self._db = None
        self._drop_snapshot()

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        r"""Run one query; busy moments retried, errors as :class:`FormatError`.

        A text parameter holding a lone surrogate (``"\ud800"`` in a JSON query)
        is bound as Node's SQLite binding binds it: each one as U+FFFD.
        """
        db = self.connection

        def run() -> list[tuple[Any, ...]]:
            try:
                return db.execute(sql, params).fetchall()
            except UnicodeEncodeError:  # (printable: a lone surrogate as U+FFFD, as Node has it)
                fixed = [printable(p) if isinstance(p, str) else p for p in params]
                return db.execute(sql, fixed).fetchall()

        return retry(run, self.path, seconds=self.timeout)  # type: ignore[no-any-return]

    def snapshot(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        """Run *fn* inside one read transaction: every query sees the same database.

        Retried as a whole on busy moments.
        """
        db = self.connection

        def run() -> Any:
            db.execute("BEGIN")
            try:
                return fn(db)
            finally:
                db.execute("COMMIT")  # a read transaction: nothing to write

        return retry(run, self.path, seconds=self.timeout)

    def per_version(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()``, run again only when the database changed since its last run.

        SQLite's ``PRAGMA data_version`` of this connection changes whenever another
        connection commits (OpenClaw writing anything); while it stands, every query of
        this connection reads the same database, so a value derived from it (an index
        signature of a few ``count(*)`` queries) is the same. Reopening forgets them.
        """
        version = self.data_version()
        found = self._memo.get(key)
        if found is not None and found[0] == version:
            return found[1]
        value = compute()
        self._memo[key] = (version, value)
        return value

    def data_version(self) -> int:
        """SQLite's ``PRAGMA data_version`` of this connection (see :meth:`one_version`)."""
        pinned: int | None = getattr(self._pinned, "version", None)
        if pinned is not None:
            return pinned
        return int(self.rows("PRAGMA data_version")[0][0])

    @contextlib.contextmanager
    def one_version(self) -> Iterator[None]:
        """Within it, this thread reads :meth:`data_version` once (re-entrant).

        One search asks several per-generation tables whether the database changed:
        they then agree on the answer, and the pragma runs once, not five times. A
        write landing mid-search is seen by the next search, as without it.
        """
        if getattr(self._pinned, "version", None) is not None:
            yield
            return
        self._pinned.version = self.data_version()
        try:
            yield
        finally:
            self._pinned.version = None

    def tables(self) -> set[str]:
        """Names of every table (virtual and shadow tables included)."""
        return {str(r[0]) for r in self.rows("SELECT name FROM sqlite_master WHERE type='table'")}

    def user_version(self) -> int:
        """``PRAGMA user_version``."""
        rows = self.rows("PRAGMA user_version")
        return int(rows[0][0]) if rows else 0
