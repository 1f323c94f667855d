"""Safe writes to files an agent may also be using.

* An append is whole lines in one ``write`` on an ``O_APPEND`` descriptor; if the
  file does not end with a newline (an agent's line in progress, or a crash),
  our lines start on a fresh line so they are never glued to a partial one.
  The write is made by a helper process (:mod:`core._append_worker`), so even a
  SIGKILL of memlens in the middle of it leaves the file as it was or with the
  whole lines appended, never half a line.
* A rewrite is atomic: temp file in the same folder, fsync, rename, with the old
  file kept as a backup beside it.
* Every write is reported to the write observers (:func:`add_write_observer`)
  as a :class:`WriteRecord`: the activity log listens there.
"""

from __future__ import annotations

import atexit
import errno
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from core import _append_worker as worker
from core.problems import FormatError

if TYPE_CHECKING:
    from core.writes import WriteAction

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class AppendResult:
    """Where an append landed."""

    path: str
    offset: int
    """Byte offset of the first byte written."""
    length: int


@dataclass(frozen=True, slots=True)
class WriteRecord:
    """One write memlens made, as the activity log keeps it (never the content).

    Attributes
    ----------
    time
        Epoch seconds when the write completed.
    path
        The file written (for a backup: the file that was copied).
    action
        ``append``, ``rewrite``, ``create`` or ``backup``.
    offset, length
        The bytes written: for an append, exactly where they landed (a newline
        ending someone else's partial line is included); 0 and the size otherwise.
    first_line
        1-based line number of the first line memlens wrote (0 when unknown).
    lines
        How many lines were written.
    backup
        The backup file made (``backup``, or a ``rewrite`` that kept one).
    summary
        One short, redacted line for people; filled in by the activity log.
    """

    time: float
    path: str
    action: WriteAction
    offset: int
    length: int
    first_line: int
    lines: int
    backup: str | None = None
    summary: str = ""


WriteObserver = Callable[[WriteRecord], object]
_observers: list[WriteObserver] = []
_observers_lock = threading.Lock()


def add_write_observer(fn: WriteObserver) -> None:
    """Call *fn* with a :class:`WriteRecord` after every write this module makes.

    Observers run in the thread that wrote; an exception in one is logged and
    never reaches the writer (the write has happened by then).
    """
    with _observers_lock:
        if fn not in _observers:
            _observers.append(fn)


def remove_write_observer(fn: WriteObserver) -> None:
    """Stop calling *fn* (no error if it was not observing)."""
    with _observers_lock:
        if fn in _observers:
            _observers.remove(fn)


def _observed() -> list[WriteObserver]:
    with _observers_lock:
        return list(_observers)


def _notify(observers: list[WriteObserver], record: WriteRecord) -> None:
    for fn in observers:
        try:
            fn(record)
        except Exception:
            log.exception("write observer %r failed for %s", fn, record.path)


def _count_lines(data: bytes) -> int:
    """Lines in *data*: newlines, plus one for a last line without one."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def line_at(path: str | os.PathLike[str], offset: int, *, chunk: int = 1 << 20) -> int:
    """1-based number of the line that starts at byte *offset* (0 if unreadable).

    Counts the newlines before *offset*, a chunk at a time: fine for the
    occasional write, linear in the offset.
    """
    count = 0
    try:
        with open(path, "rb") as fh:
            left = offset
            while left > 0:
                data = fh.read(min(chunk, left))
                if not data:
                    break
                count += data.count(b"\n")
                left -= len(data)
    except OSError:
        return 0
    return count + 1


def read_file(path: str | os.PathLike[str]) -> bytes:
    """Read a whole file; any OS error becomes a :class:`FormatError` naming it."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise FormatError(name, f"cannot read: {exc.strerror or exc}") from exc


# --- the append helper process --------------------------------------------------


class _Helper:
    """The running :mod:`core._append_worker` process, started on first use."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[bytes] | None = None
        self.owner = 0
        self.disabled = False

    @staticmethod
    def available() -> bool:
        """A helper can run: POSIX, a real interpreter, the worker on disk."""
        return (
            os.name == "posix"
            and not getattr(sys, "frozen", False)
            and bool(sys.executable)
            and Path(worker.__file__).is_file()
        )

    def _start(self) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", worker.__file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,  # no Ctrl-C or process-group kill reaches it
            close_fds=True,
        )
        self.proc, self.owner = proc, os.getpid()
        return proc

    def _running(self) -> subprocess.Popen[bytes]:
        proc = self.proc
        if proc is None or self.owner != os.getpid() or proc.poll() is not None:
            if proc is not None and self.owner == os.getpid():
                self._close(proc)
            proc = self._start()
        return proc

    @staticmethod
    def _close(proc: subprocess.Popen[bytes]) -> None:
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass

    def append(self, name: str, payload: bytes) -> tuple[int, int] | None:
        """Ask the helper to append; None when no helper can run (write inline)."""
        if self.disabled or not self.available():
            return None
        path = os.fsencode(name)
        request = worker.HEADER.pack(len(path), len(payload)) + path + payload
        with self.lock:
            for attempt in (1, 2):
                try:
                    proc = self._running()
                except OSError:
                    log.warning("cannot start the append helper; appending in-process")
                    self.disabled = True
                    return None
                assert proc.stdin is not None and proc.stdout is not None
                try:
                    proc.stdin.write(request)
                    proc.stdin.flush()
                except BrokenPipeError:
                    # The helper died before it had the whole request: it wrote nothing.
                    self._close(proc)
                    self.proc = None
                    if attempt == 2:
                        log.warning("the append helper keeps exiting; appending in-process")
                        self.disabled = True
                        return None
                    continue
                return self._reply(proc.stdout, name)
        return None  # pragma: no cover (the loop returns or raises)

    def _reply(self, out: IO[bytes], name: str) -> tuple[int, int]:
        kind = out.read(1)
        if kind == b"K":
            data = out.read(worker.OK.size)
            if len(data) == worker.OK.size:
                offset, length = worker.OK.unpack(data)
                return offset, length
        elif kind == b"E":
            data = out.read(worker.ERR.size)
            if len(data) == worker.ERR.size:
                code, size = worker.ERR.unpack(data)
                message = out.read(size).decode("utf-8", "replace")
                raise OSError(code, message, name) if code else OSError(message)
        self.proc = None
        raise OSError(
            errno.EIO,
            "the append helper stopped during the write; the lines may or may not be there",
            name,
        )

    def stop(self) -> None:
        """Close the helper's input (it exits) and wait for it briefly."""
        with self.lock:
            proc, self.proc = self.proc, None
            if proc is None or self.owner != os.getpid():
                return
            self._close(proc)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                log.warning("the append helper did not exit")


_helper = _Helper()
atexit.register(_helper.stop)


def use_append_helper(enabled: bool) -> None:
    """Turn the helper process on (the default) or off (appends then write in-process).

    In-process appends are still one write, but a kill in the middle of a write of
    several pages can leave part of it: keep the helper on except where no child
    process may be started.
    """
    _helper.disabled = not enabled
    if not enabled:
        _helper.stop()


def append_lines(path: str | os.PathLike[str], payload: bytes) -> AppendResult:
    """Append *payload* (one or more whole lines, ending in a newline) in one write.

    Raises
    ------
    ValueError
        If *payload* does not end with a newline.
    OSError
        When the file cannot be written (nothing was appended then).
    """
    if not payload.endswith(b"\n"):
        raise ValueError("an append must be whole lines ending with a newline")
    name = os.fspath(path)
    done = _helper.append(name, payload)
    offset, length = done if done is not None else worker.append_payload(name, payload)
    observers = _observed()
    if observers:
        glued = length - len(payload)  # the newline that ended a partial line, if any
        record = WriteRecord(
            time.time(),
            name,
            "append",
            offset,
            length,
            line_at(name, offset + glued),
            payload.count(b"\n"),
        )
        _notify(observers, record)
    return AppendResult(name, offset, length)


def backup_path(path: Path) -> Path:
    """Base name of the backup kept beside *path* (see :func:`make_backup`)."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    return path.with_name(f"{path.name}.memlens-backup-{stamp}")


def make_backup(path: str | os.PathLike[str]) -> Path:
    """Copy *path* to a new backup beside it and return the backup's path.

    The name is :func:`backup_path`'s, with ``.1``, ``.2``... appended when taken:
    each name is claimed with ``O_EXCL``, so two backups in the same second (or
    from two processes) never overwrite one another. Mode and times are copied.

    Raises
    ------
    OSError
        When the copy fails (no backup is left behind then).
    """
    src = Path(path)
    base = backup_path(src)
    candidate, n = base, 0
    while True:
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            break
        except FileExistsError:
            n += 1
            candidate = base.with_name(f"{base.name}.{n}")
    size = lines = 0
    last = b"\n"
    try:
        with os.fdopen(fd, "wb") as dst, open(src, "rb") as fh:
            while chunk := fh.read(1 << 20):
                dst.write(chunk)
                size += len(chunk)
                lines += chunk.count(b"\n")
                last = chunk[-1:]
            dst.flush()
            os.fsync(dst.fileno())
        shutil.copystat(src, candidate)
    except BaseException:
        candidate.unlink(missing_ok=True)
        raise
    observers = _observed()
    if observers:
        lines += 0 if last == b"\n" else 1
        record = WriteRecord(
            time.time(), os.fspath(path), "backup", 0, size, 1, lines, str(candidate)
        )
        _notify(observers, record)
    return candidate


def atomic_write(path: str | os.PathLike[str], data: bytes, *, backup: bool = True) -> Path | None:
    """Replace *path* with *data* atomically; returns the backup path, if any."""
    target = Path(path)
    existed = target.exists()
    saved: Path | None = None
    if backup and existed:
        saved = make_backup(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if target.exists():
            os.chmod(tmp, target.stat().st_mode & 0o777)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    observers = _observed()
    if observers:
        record = WriteRecord(
            time.time(),
            os.fspath(path),
            "rewrite" if existed else "create",
            0,
            len(data),
            1,
            _count_lines(data),
            str(saved) if saved is not None else None,
        )
        _notify(observers, record)
    return saved
