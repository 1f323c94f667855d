"""One data directory, opened for the MCP tools: loaded on first use, reloaded when it changes.

The agent keeps writing while the server runs. Before answering, a tool asks for the
data; at most once a second memlens looks again at what the directory holds (the same
discovery the app does) and at each file's size and mtime, and reloads what changed:
the sessions (:func:`core.dataset.load.load_dataset`, database sessions read when
first asked for) and the recall side (:func:`core.dataset.open_recall.open_recall`;
vectors embedded by memlens stay in memory, never in the agent's folder). OpenClaw's
memory index and an OpenClaudeCode database stay open between searches, read-only, and
are refreshed when their agent writes (:meth:`ReadOnlyDb.refresh
<core.openclaw.sqlite_ro.ReadOnlyDb.refresh>`).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from core.dataset.discovery import STORE_FILES, discover
from core.dataset.load import load_dataset
from core.dataset.open_recall import open_recall
from core.io.problems import FormatError
from core.openclaudecode import MemoryFts
from core.openclaw.config import load_openclaw_config
from core.openclaw.memindex import open_memory_index
from core.openclaw.memory_home import MemoryCliError, load_settings, resolve_home

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from core.dataset.discovery import Discovery
    from core.dataset.load import DataSet
    from core.dataset.open_recall import RecallData
    from core.openclaw.memindex import MemoryIndex
    from core.openclaw.memory_home import MemoryHome
    from core.openclaw.memsearch_embed import SearchSettings
    from core.transcript.model import Session

T = TypeVar("T")
RECHECK_S = 1.0
"""How often, at most, the directory is looked at again for changes."""


class ToolError(ValueError):
    """A tool call that cannot be answered: bad arguments, no such session or store.

    The server turns it into an MCP error result carrying this message.
    """


def as_tool_error(exc: FormatError | OSError, path: Path) -> ToolError:
    """*exc* (unreadable data under *path*) as the error a caller reads: it names the file."""
    if isinstance(exc, FormatError):
        return ToolError(str(exc))
    return ToolError(f"{exc.filename or path}: {exc.strerror or exc}")


@dataclass(slots=True)
class OpenClawIndex:
    """One agent's memory index, kept open between searches, with its config read once."""

    home: MemoryHome
    settings: SearchSettings
    citations: str
    """``memory.citations``: ``on``, ``off`` or ``auto`` (the default)."""
    index: MemoryIndex


def citations_mode(home: MemoryHome) -> str:
    """The agent's ``memory.citations`` (``auto`` when unset, unknown or unreadable)."""
    if home.config is None:
        return "auto"
    try:
        memory = load_openclaw_config(home.config).raw.get("memory")
    except FormatError:
        return "auto"
    mode = memory.get("citations") if isinstance(memory, dict) else None
    return mode if mode in ("on", "off", "auto") else "auto"


def _stat_key(paths: Iterable[Path | None]) -> tuple[tuple[str, int, int], ...]:
    out = []
    for p in paths:
        if p is None:
            continue
        try:
            st = os.stat(p)
        except OSError:
            out.append((str(p), -1, -1))
            continue
        out.append((str(p), st.st_mtime_ns, st.st_size))
    return tuple(out)


def _wal(paths: Iterable[Path]) -> list[Path]:
    return [q for p in paths for q in (p, Path(f"{p}-wal"))]


class MemoryData:
    """DATA, as the tools read it (thread-safe: the server answers calls in worker threads).

    Raises
    ------
    ToolError
        From the constructor when *path* is missing or holds nothing memlens reads.
    """

    def __init__(self, path: str | os.PathLike[str], *, now_ms: int | None = None) -> None:
        self.path = Path(path).expanduser()
        if not self.path.exists():
            raise ToolError(f"{self.path}: no such file or folder")
        self.now_ms = now_ms
        self._lock = threading.RLock()
        # taken before the data's lock, never after: the recall lock, then the dataset's
        self._recall_lock = threading.Lock()
        self._dataset_lock = threading.Lock()
        self._found = self._discover()
        self._checked = time.monotonic()
        self._signature = self._signature_of(self._found)
        self._data: DataSet | None = None
        self._recall: RecallData | None = None
        self._recall_key: tuple[tuple[str, int, int], ...] | None = None
        self._indexes: dict[str, OpenClawIndex] = {}
        self._fts: MemoryFts | None = None

    def _discover(self) -> Discovery:
        try:
            return discover(self.path)
        except FormatError as exc:  # (its file named once when it is the data's path)
            why = exc.detail if exc.file == str(self.path) and not exc.line else str(exc)
            raise ToolError(f"{self.path}: not a data directory memlens reads: {why}") from None

    @staticmethod
    def _signature_of(found: Discovery) -> tuple[tuple[str, int, int], ...]:
        paths: list[Path | None] = [*found.transcripts, *_wal(found.databases), found.config]
        paths += _wal(found.memory_indexes)
        if found.openclaudecode is not None:  # its sessions table and memory_fts
            paths += _wal([found.openclaudecode.database])
        paths += [a.sessions_json for a in found.agents]
        for a in found.agents:
            paths.extend(a.archives)
        if found.memory_context is not None:
            paths += [found.memory_context / name for name in STORE_FILES]
        return _stat_key(paths)

    def _recall_signature(self, found: Discovery) -> tuple[tuple[str, int, int], ...]:
        folder = found.memory_context
        store = [folder / name for name in STORE_FILES] if folder is not None else []
        return _stat_key([*store, found.config])

    @property
    def discovery(self) -> Discovery:
        """What the directory holds, looked at again when :data:`RECHECK_S` has passed."""
        with self._lock:
            self._refresh()
            return self._found

    def _refresh(self) -> None:
        now = time.monotonic()
        if now - self._checked < RECHECK_S:
            return
        self._checked = now
        try:
            found = discover(self.path)
        except FormatError:
            return  # vanished or unreadable for a moment: answer from what was loaded
        signature = self._signature_of(found)
        if signature != self._signature:
            self._found, self._signature, self._data = found, signature, None
            self._close_indexes()

    def _close_indexes(self) -> None:
        for opened in self._indexes.values():
            opened.index.close()
        self._indexes.clear()
        if self._fts is not None:
            self._fts.close()
            self._fts = None

    def openclaudecode(self) -> MemoryFts | None:
        """The OpenClaudeCode ``memory_fts``, open (None when DATA has none).

        Call it inside :meth:`with_lock` (the connection is shared between calls).
        """
        self._refresh()
        home = self._found.openclaudecode
        if home is None or not home.has_memory:
            return None
        if self._fts is None:
            self._fts = MemoryFts(home.database)
        elif self._fts.db.refresh():
            self._fts.close()
            self._fts = MemoryFts(home.database)
        return self._fts

    def openclaw(self, agent: str | None) -> OpenClawIndex:
        """*agent*'s memory index, open (reopened when OpenClaw rebuilt or rewrote it).

        Call it inside :meth:`with_lock` (the connection is shared between calls).

        Raises
        ------
        MemoryCliError
            When DATA has no memory index for *agent* (or none at all).
        """
        self._refresh()
        key = agent or ""
        opened = self._indexes.get(key)
        if opened is None:
            home = resolve_home(self.path, agent)
            opened = OpenClawIndex(
                home, load_settings(home), citations_mode(home), open_memory_index(home.index)
            )
            self._indexes[key] = opened
        elif opened.index.db.refresh():
            # a writer came or went, or the file changed under an immutable view: the
            # schema and layout may have changed too
            opened.index.close()
            opened.index = open_memory_index(opened.home.index)
        return opened

    def dataset(self) -> DataSet:
        """The sessions, knowledge and config (loaded on first use, again after a change).

        Loaded outside the data's lock (every session of a large home takes seconds):
        a search of a memory index goes on meanwhile; other callers of this wait for
        this load rather than start another. Never call it holding the data's lock.
        """
        with self._dataset_lock:
            with self._lock:
                self._refresh()
                if self._data is not None:
                    return self._data
                signature = self._signature
            try:
                data = load_dataset(self.path, defer_db=True, now_ms=self.now_ms)
            except FormatError as exc:
                raise ToolError(str(exc)) from None
            with self._lock:
                if self._signature == signature:  # (changed meanwhile: read again next time)
                    self._data = data
            return data

    def recall(self) -> RecallData:
        """The warm store and knowledge index (reopened when the store's files change).

        Opened outside the data's lock (a large store, or the transformer embedder it
        asks for, takes seconds): calls that need neither go on meanwhile; those that
        do wait for this opening rather than start another.
        """
        with self._recall_lock:
            data = self.dataset()
            with self._lock:
                key = self._recall_signature(self._found)
                if self._recall is not None and key == self._recall_key:
                    return self._recall
            opened = open_recall(data, cache_dir=None, now_ms=self.now_ms)
            with self._lock:
                self._recall, self._recall_key = opened, key
            return opened

    def warm_search(self) -> bool:
        """Build now what the default agent's searches would build as they come.

        Its vector matrix (the first hybrid search would), and the per-generation
        tables of :func:`core.openclaw.memsearch.warm_tables` (the second search
        would). Homes without a memory index have nothing to build. Returns True when
        a matrix was built or found (keyword-only agents have none).

        The matrix is read through a connection of its own, outside the data's lock
        (seconds at 50,000 chunks): a call that needs no vector (``sessions_list``, a
        keyword search) does not wait for it; a hybrid search waits for the matrix it
        needs (the cache's lock), as it would have built it.
        """
        from core.openclaw.memsearch import warm_tables
        from core.openclaw.memsearch_vectors import DEFAULT_CACHE

        with self._lock:
            if not self.discovery.memory_indexes:
                return False
            try:
                opened = self.openclaw(None)
            except MemoryCliError:
                return False
            s = opened.settings
            hybrid = not s.keyword_only and bool(s.model)
            warm_tables(opened.index, hybrid=hybrid)
            path = opened.index.path
        if hybrid:
            with open_memory_index(path) as own:  # the same file, the same matrix's key
                DEFAULT_CACHE.matrix(own, [str(s.model)], s.sources)
        return hybrid

    def session(self, ref: str) -> Session:
        """The session *ref* names (id, id prefix or path), read now if it was pending.

        Raises
        ------
        ToolError
            When no session, or several, match.
        """
        data = self.dataset()
        with self._lock:  # reading a pending database session changes the set
            try:
                return data.session(ref)
            except KeyError as exc:
                raise ToolError(f"session {ref!r}: {exc.args[0]}") from None

    def with_lock(self, fn: Callable[[], T]) -> T:
        """Run *fn* holding the data's lock (the open indexes' connections are shared)."""
        with self._lock:
            return fn()
