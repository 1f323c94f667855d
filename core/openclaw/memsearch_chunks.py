"""Per-index-generation tables of memory search: every chunk's tokens and recall row.

A search touches ~150 to ~400 chunks out of tens of thousands, each fresh: tokenizing
each hit's text for OpenClaw's lexical boost and for MMR, and reading its recall
rows, cost more than the SQL that finds them. Once an index has been seen unchanged
by two searches in a row, its chunks are read once and kept:

* :class:`ChunkTokens`: the search tokens of every ASCII chunk text (and of its
  snippet, when the snippet is shorter) as integer ids, one numbering per table.
  Looked up *by the text itself* (a dict keyed by the exact string), so a hit whose
  text is not in the table (non-ASCII, changed, new) simply takes the tokenizing
  path: the answer never depends on the table being current.
* :class:`RecallTable`: every chunk id of the chunks table and the recall metadata /
  provenance row of each (:func:`core.openclaw.memsearch_recall.live_recall`'s join,
  without its ``WHERE``). It is keyed by a signature that changes with any write to
  the database: :func:`core.openclaw.memsearch_vectors.index_signature`, the
  database and WAL files' inode, size and mtime, and SQLite's ``data_version`` of
  the connection with the connection's serial number (a version read by another
  connection says nothing: a search that opens the index afresh reads its rows).

Memory and time, measured at 50,000 chunks of 60 words (bench/bench_mcp_search.py,
tracemalloc): the token table 42 MB (the texts it is keyed by, the ids, the
dictionaries), built in 1.9 s of CPU; the recall table 19 MB (a provenance row for
every chunk), read in 0.55 s. At most :data:`MAX_TABLES` of each are kept (one per
index file), and an index of more than :data:`MAX_CHUNKS` chunks gets none (its
searches take the per-hit paths).
"""

from __future__ import annotations

import contextlib
import functools
import queue
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from core.openclaw.memindex import open_memory_index, quote
from core.openclaw.memsearch_text import SNIPPET_CHARS, ascii_words, truncate_utf16
from core.openclaw.memsearch_vectors import _stat, canonical, chunk_count, index_signature

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    import numpy.typing as npt

    from core.openclaw.memindex import MemoryIndex
    from core.openclaw.memindex_records import Attached

ENABLED = True
"""False: every search takes the per-hit paths (a test compares the two)."""

MAX_TABLES = 2
"""Tables of each kind kept at once (one per index file)."""

MAX_CHUNKS = 300_000
"""Indexes with more chunks get no table (about 250 MB of tokens at that size)."""


@dataclass(frozen=True, slots=True)
class ChunkTokens:
    """The ASCII search tokens of chunk texts, as ids: row *r*'s are ``ids[starts[r]:starts[r+1]]``.

    ``rows``: text -> row. ``vocab``: token (bytes, :func:`ascii_words`) -> id. Each
    row's ids are distinct (the text's token set) and sorted. ``lengths``: each text's
    length (UTF-16 units; ASCII: characters).
    """

    rows: dict[str, int]
    vocab: dict[bytes, int]
    starts: npt.NDArray[np.int64]
    ids: npt.NDArray[np.int32]
    lengths: npt.NDArray[np.int64]

    def positions(self, texts: Sequence[str]) -> list[int | None]:
        """The row of each of *texts* (None: not in the table)."""
        get = self.rows.get
        return [get(t) for t in texts]

    def counts(self, rows: Sequence[int], wanted: Sequence[int]) -> npt.NDArray[np.int64]:
        """How many of the token ids *wanted* (distinct) each of *rows* has."""
        r = np.asarray(rows, dtype=np.int64)
        first, sizes = self.starts[r], self.starts[r + 1] - self.starts[r]
        total = int(sizes.sum())
        if not total or not wanted:
            return np.zeros(r.size, dtype=np.int64)
        offset = np.repeat(first - (np.cumsum(sizes) - sizes), sizes)
        found = np.isin(self.ids[offset + np.arange(total)], np.asarray(wanted, dtype=np.int32))
        owner = np.repeat(np.arange(r.size), sizes)
        return np.bincount(owner[found], minlength=r.size).astype(np.int64)

    def token_ids(
        self, texts: Sequence[str]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32]] | None:
        """How many token ids each text has, and all of them, text after text.

        None when a text is not here.
        """
        rows = self.positions(texts)
        if None in rows:
            return None
        r = np.asarray(rows, dtype=np.int64)
        first, sizes = self.starts[r], self.starts[r + 1] - self.starts[r]
        offset = np.repeat(first - (np.cumsum(sizes) - sizes), sizes)
        return sizes, np.take(self.ids, offset + np.arange(int(sizes.sum())))


def _tokens_of(texts: Sequence[str], canon: Callable[[str], str] = str) -> ChunkTokens:
    rows: dict[str, int] = {}
    vocab: dict[bytes, int] = {}
    setdefault = vocab.setdefault
    parts: list[list[int]] = []
    lengths: list[int] = []
    for text in texts:
        if not text.isascii():
            continue
        snippet = truncate_utf16(text, SNIPPET_CHARS)
        for t in (text, snippet) if snippet != text else (text,):
            if t in rows:
                continue
            # the hits' snippets are the same objects: a lookup finds the very one, and
            # compares no characters (see core.openclaw.memsearch_vectors.canonical)
            t = canon(t)
            rows[t] = len(parts)
            parts.append(sorted(setdefault(w, len(vocab)) for w in set(ascii_words(t).split())))
            lengths.append(len(t))
    sizes = np.fromiter((len(p) for p in parts), dtype=np.int64, count=len(parts))
    starts = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(sizes, out=starts[1:])
    flat = np.fromiter((i for p in parts for i in p), dtype=np.int32, count=int(starts[-1]))
    return ChunkTokens(rows, vocab, starts, flat, np.asarray(lengths, dtype=np.int64))


@dataclass(frozen=True, slots=True)
class RecallTable:
    """Every chunk id of an index, with what its recall row attaches to a hit.

    ``rows``: each chunk id -> :meth:`~core.openclaw.memindex_records.RecallInfo.attached`
    of its recall row, worked out once (a hit's provenance object is shared, not
    copied), or None when it has none: one lookup answers both.
    """

    rows: dict[str, Attached | None]


class GenerationTables:
    """Tables of one kind, per index file, built once the index was seen unchanged twice.

    A build runs outside the lock: a search meanwhile (another thread) gets None and
    takes the per-hit paths, as before the table existed, instead of waiting for it.
    *apart*: asked within :func:`builds_apart`, the table is built in a thread of its
    own, through a connection of its own, and :meth:`get` answers None meanwhile. It is
    kept under the signature the asking connection read when the build started: a
    later search of that connection that reads the same signature (no commit since,
    for a signature holding its ``data_version``) has the very rows the build read.
    """

    def __init__(
        self, signature: Callable[[MemoryIndex], tuple[Any, ...]], *, apart: bool = False
    ) -> None:
        self._signature = signature
        self.apart = apart
        self._seen: dict[str, tuple[Any, ...]] = {}
        self._tables: dict[str, tuple[tuple[Any, ...], Any]] = {}
        self._building: dict[str, threading.Event] = {}
        self._lock = threading.Lock()
        self.builds = 0
        """How many tables were built (a test reads it)."""

    def get(self, index: MemoryIndex, build: Callable[[MemoryIndex], Any]) -> Any:
        """The table of *index* as it is now, or None (not yet seen unchanged, or too big).

        Within :func:`eagerly`, a missing table is built at once (a server warming
        up), not at the second sighting.
        """
        if not ENABLED or index.layout.chunks is None:
            return None
        key = index.db.real_path
        with self._lock:
            sig = self._signature(index)
            found = self._tables.get(key)
            if found is not None and found[0] == sig:
                return found[1]
            if key in self._building:  # being built: this search does without it
                return None
            self._tables.pop(key, None)
            eager = getattr(_LOCAL, "eager", False)
            if not eager and self._seen.get(key) != sig:  # changed since the last search
                self._seen[key] = sig
                return None
            done = self._building[key] = threading.Event()
            elsewhere = self.apart and getattr(_LOCAL, "apart", False)
            # (a private snapshot: another connection would copy the whole file again)
            elsewhere = elsewhere and index.db.mode != "snapshot"
        if elsewhere:
            _apart(functools.partial(self._build_apart, index.path, key, sig, build, done))
            return None
        try:
            table = build(index)
        except BaseException:
            self._finish(key, None, None, done)  # nothing kept: the search fails as it would
            raise
        return self._finish(key, sig, table, done)

    def _finish(
        self, key: str, sig: tuple[Any, ...] | None, table: Any, done: threading.Event
    ) -> Any:
        """Keep *table* as the one of *sig* (None: keep nothing) and end the build."""
        with self._lock:
            if self._building.get(key) is done:
                del self._building[key]
                if sig is None:
                    self._seen.pop(key, None)  # tried again at the second sighting, not the next
                else:
                    self._tables.pop(key, None)
                    self.builds += 1
                    self._tables[key] = (sig, table)
                    while len(self._tables) > MAX_TABLES:
                        del self._tables[next(iter(self._tables))]
        done.set()
        return table

    def _build_apart(
        self, path: str, key: str, sig: tuple[Any, ...],
        build: Callable[[MemoryIndex], Any], done: threading.Event,
    ) -> None:  # fmt: skip
        kept: tuple[Any, ...] | None = None
        table = None
        try:
            with open_memory_index(path) as own:
                if own.db.real_path == key:  # (not a file put in its place since)
                    kept, table = sig, build(own)
        except Exception:  # none for this state: the searches do without it
            kept, table = sig, None
        finally:
            self._finish(key, kept, table, done)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the builds running now; False when *timeout* passed first."""
        with self._lock:
            events = list(self._building.values())
        return all(e.wait(timeout) for e in events)

    def current(self) -> list[Any]:
        """The tables kept now (lookups by content need no index)."""
        if not ENABLED:
            return []
        with self._lock:
            return [t for _, t in self._tables.values() if t is not None]


def _apart(job: Callable[[], None]) -> None:
    """Run *job* in the one builder thread (started at the first), after those queued.

    One at a time: each build is Python that holds the GIL most of the time, and a
    search meanwhile gets a half of it rather than a third. A daemon thread: a server
    exiting does not wait for a table it will not use.
    """
    global _BUILDER
    _JOBS.put(job)
    with _BUILDER_LOCK:
        if _BUILDER is None or not _BUILDER.is_alive():
            _BUILDER = threading.Thread(target=_builder, name="memlens-index-tables", daemon=True)
            _BUILDER.start()


def _builder() -> None:
    while True:
        _JOBS.get()()


_JOBS: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
_BUILDER: threading.Thread | None = None
_BUILDER_LOCK = threading.Lock()
_LOCAL = threading.local()


@contextlib.contextmanager
def _flag(name: str) -> Iterator[None]:
    before = getattr(_LOCAL, name, False)
    setattr(_LOCAL, name, True)
    try:
        yield
    finally:
        setattr(_LOCAL, name, before)


def eagerly() -> contextlib.AbstractContextManager[None]:
    """Within it, this thread's :meth:`GenerationTables.get` builds a missing table at once."""
    return _flag("eager")


def builds_apart() -> contextlib.AbstractContextManager[None]:
    """Within it, this thread's searches have their tables built apart (see the class).

    For long-lived callers (the MCP server's calls, the app's search jobs): a second
    search of an index answers from SQLite rather than waiting seconds for its tables.
    """
    return _flag("apart")


def _too_big(index: MemoryIndex) -> bool:
    return chunk_count(index) > MAX_CHUNKS


def _build_tokens(index: MemoryIndex) -> ChunkTokens | None:
    if _too_big(index) or "text" not in index.columns(index.layout.chunks or ""):
        return None
    rows = index.db.rows(f"SELECT text FROM {quote(index.layout.chunks or '')}")
    return _tokens_of([t for (t,) in rows if isinstance(t, str)], canonical(index))


def _recall_signature(index: MemoryIndex) -> tuple[Any, ...]:
    version = index.db.data_version()
    return (
        index_signature(index),
        _stat(index.path),
        _stat(index.path + "-wal"),
        index.db.serial,  # data_version is per connection
        version,
    )


TOKENS = GenerationTables(index_signature, apart=True)
RECALL = GenerationTables(_recall_signature, apart=True)


def chunk_tokens(index: MemoryIndex) -> ChunkTokens | None:
    """The token table of *index*, when it has one now."""
    found: ChunkTokens | None = TOKENS.get(index, _build_tokens)
    return found


def token_ids_of(
    texts: Sequence[str],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32]] | None:
    """:meth:`ChunkTokens.token_ids` from one kept table holding every text, or None."""
    for table in TOKENS.current():
        found: tuple[npt.NDArray[np.int64], npt.NDArray[np.int32]] | None = table.token_ids(texts)
        if found is not None:
            return found
    return None


def recall_table(
    index: MemoryIndex, build: Callable[[MemoryIndex], RecallTable | None]
) -> RecallTable | None:
    """The recall table of *index* (made by *build*), when it has one now."""
    found: RecallTable | None = RECALL.get(index, lambda i: None if _too_big(i) else build(i))
    return found
