"""The vector side of OpenClaw's memory search, fast: a cached embedding matrix.

OpenClaw's brute-force ``searchChunksByEmbedding`` (ported in
:func:`core.openclaw.memsearch.search_vector`) decodes every stored embedding of
the model and keeps the best cosines. Decoding 50,000 BLOBs per query takes
seconds; a server answering ``memory_search`` calls cannot. :class:`VectorCache`
keeps, per index file, model and sources, the unit-normalised vectors as one
float32 matrix, and answers a query in three steps:

1. a float32 matrix-vector product picks every row whose score can reach the
   *limit* best: the rows within a proven error margin of the limit-th float32
   score (rounding the vectors to float32 and summing d products, in any order
   BLAS takes, moves a cosine by at most ``(d + 4) * 2**-24``, both sides taken);
   the product runs in fixed blocks of rows (:mod:`core.openclaw.memsearch_scan`), most
   of them in a worker thread while the caller's keyword search runs;
2. those rows' stored vectors (a copy kept beside the matrix while that stays under
   :data:`RAW_MAX_BYTES`, else read again from SQLite) are scored in float64
   with the uncached path's formula (``cosineSimilarity``), one product per row:
   the same cosines to within an ulp or two (the order of the sums differs), and
   equal vectors get equal scores;
3. the best *limit* by score, the earliest rowid first on equal scores (OpenClaw's
   scan order), with rows without a usable vector at score 0 as OpenClaw has them.

The answer is therefore the uncached path's answer (OpenClaw's own sqlite-vec
search is further from it: float32). A cache entry is used only
while the index is unchanged: its signature (:func:`index_signature`: the chunks
table's row count and largest rowid, OpenClaw's ``memory_index_state`` revision,
and unless triggers keep that revision, the database and WAL files' inode, size
and mtime) is read again before every use; OpenClaw re-indexing while memlens
runs makes a new entry. Anything unusual (a query of
another length than the stored vectors, a non-finite or zero query) returns None:
the caller takes the uncached path.
"""

from __future__ import annotations

import math
import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from core.openclaw.memindex import quote
from core.openclaw.memindex_embedding import decode_embedding
from core.openclaw.memsearch_scan import NORM_RANGE, Scan, prepare
from core.openclaw.memsearch_text import SNIPPET_CHARS, truncate_utf16

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import numpy.typing as npt

    from core.openclaw.memindex import MemoryIndex

MAX_ENTRIES = 4
"""Cached matrices kept at once (one per index, model and sources searched)."""


@dataclass(frozen=True, slots=True)
class VectorMatrix:
    """The searchable vectors of one index, model and sources.

    ``rowids`` / ``columns``: the rows with a usable vector of the common length,
    unit-normalised, float32, one column each (``dims x rows``: the product with a
    query reads long contiguous rows, which BLAS runs about 1.5x as fast on one
    thread: 4.9 ms against 7.5 for 50,000 x 384). ``zero_rowids``: rows scored 0 whatever the query
    (no vector, an unusable one, a zero vector), in rowid order. ``odd``: rows with
    a vector of another length or an extreme norm, scored exactly per query.
    ``problems``: ``(chunk id, path, state)`` of unusable vectors, in rowid order.
    """

    signature: tuple[Any, ...]
    dims: int
    rowids: npt.NDArray[np.int64]
    columns: npt.NDArray[np.float32]
    zero_rowids: npt.NDArray[np.int64]
    odd: tuple[tuple[int, npt.NDArray[np.float64]], ...]
    problems: tuple[tuple[str, str, str], ...]
    hits: dict[int, tuple[str, str, int, int, str, str]]
    """Each row's :func:`hit_fields` (read as :data:`HIT_COLUMNS`), by rowid: a search reads
    only its candidates' vectors again (about 45 MB more at 50,000 chunks, and 0.6 s more
    to build: the texts decoded)."""
    raw: npt.NDArray[np.floating[Any]] | None
    """The stored vectors as decoded (not normalised), one row per ``rowids`` entry, for
    the exact rescoring: float64, or float32 when every value is one (embedding models
    answer float32: the same values, half the memory); None past :data:`RAW_MAX_BYTES`
    (the search reads its candidates' vectors from SQLite again, about 2 ms for 200)."""


HITS_MAX_ROWS = 100_000
"""Indexes of more chunks keep no hit rows (about 90 MB at that size): their searches read them."""

RAW_MAX_BYTES = 256 * 1024 * 1024
"""The largest float64 copy of the vectors kept for rescoring (50,000 x 384: 154 MB)."""

HIT_COLUMNS = "id, path, start_line, end_line, text, {source}"
"""What a vector hit reads of its row (``{source}``: :func:`source_column`)."""


def hit_fields(
    row: Sequence[Any], canon: Callable[[str], str] = str
) -> tuple[str, str, int, int, str, str]:
    """A :data:`HIT_COLUMNS` row as ``MemoryHit``'s first fields.

    Its id, path, start and end line, source and snippet (the text cut to
    :data:`SNIPPET_CHARS` UTF-16 units). *canon*: :func:`canonical` strings.
    """
    cid, cpath, start, end, text, source = row
    snippet = truncate_utf16(text if isinstance(text, str) else "", SNIPPET_CHARS)
    cid, cpath = canon(str(cid)), canon(str(cpath))
    return cid, cpath, int(start), int(end), str(source), canon(snippet)


def canonical(index: MemoryIndex) -> Callable[[str], str]:
    """One object for each distinct string of this generation of *index*'s tables.

    The per-generation tables (the cached hits here, the recall table, the postings,
    the token table) take their chunk ids, paths, texts and snippets through it, so
    that a lookup in one table by another's string finds the very object and compares
    no characters (among 100,000 strings: a tenth of a hybrid search). ``sys.intern``
    would do the same, but its strings are immortal in some Pythons (3.12.0 to 3.12.4,
    free-threaded builds): every re-indexing would leak them. These go with the
    generation: the dictionary is replaced when the index changes.
    """
    key = index.db.real_path
    signature = index_signature(index)
    with _CANON_LOCK:
        found = _CANON.get(key)
        if found is None or found[0] != signature:
            _CANON.pop(key, None)
            found = _CANON[key] = (signature, {})
            while len(_CANON) > MAX_ENTRIES:
                del _CANON[next(iter(_CANON))]
    known = found[1]

    def canon(text: str) -> str:
        return known.setdefault(text, text)

    return canon


_CANON: dict[str, tuple[tuple[Any, ...], dict[str, str]]] = {}
_CANON_LOCK = threading.Lock()


def source_column(index: MemoryIndex, sources: Sequence[str]) -> str:
    """The hit's source: the column when *sources* filter by it, else ``'memory'``."""
    has = index.layout.chunks is not None and "source" in index.columns(index.layout.chunks)
    return "source" if sources and has else "'memory'"


def cosine(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]) -> float:
    """``cosineSimilarity``: over the shorter length; 0 when either norm is 0.

    In IEEE doubles as in JavaScript: a norm past 1e308 is inf and the score 0 (or
    nan); callers hold ``np.errstate(over="ignore", invalid="ignore")`` around their
    loop so that numpy says nothing of it (per call it would double the cost).
    """
    if a.size == 0 or b.size == 0:
        return 0.0
    n = min(a.size, b.size)
    x, y = a[:n], b[:n]
    na, nb = float(np.dot(x, x)), float(np.dot(y, y))
    if na == 0 or nb == 0:
        return 0.0
    return float(np.dot(x, y)) / (math.sqrt(na) * math.sqrt(nb))


def _stat(path: str) -> tuple[int, ...]:
    try:
        st = os.stat(path)
    except OSError:
        return (-1,)
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def index_signature(index: MemoryIndex) -> tuple[Any, ...]:
    """What changes whenever OpenClaw changes the chunks (read in well under a millisecond).

    The chunks table's largest rowid and row count, the schema's version and
    OpenClaw's ``memory_index_state`` revision. When triggers bump that revision on every
    insert, update and delete of a chunk, it says it all, and the rest of the agent
    database (transcripts, written all the time) may change freely; otherwise any
    change of the file or its WAL (inode, size, mtime) counts as a change.
    """
    table = index.layout.chunks
    assert table is not None
    # five queries (two count the chunks): once per change of the database, not per search
    found: tuple[Any, ...] = index.db.per_version(
        f"index_signature {table}", lambda: _signature(index, table)
    )
    return found


def chunk_count(index: MemoryIndex) -> int:
    """How many rows the chunks table has (read with :func:`index_signature`, once a version)."""
    return int(index_signature(index)[1])


def _signature(index: MemoryIndex, table: str) -> tuple[Any, ...]:
    t = quote(table)
    # two queries: together in one SELECT, SQLite scans the table
    out: list[Any] = [index.db.rows(f"SELECT max(rowid) FROM {t}")[0][0]]
    out.append(index.db.rows(f"SELECT count(*) FROM {t}")[0][0])
    # a rebuilt table (a new revision count from 0) changes the schema's version
    out.append(index.db.rows("PRAGMA schema_version")[0][0])
    if "memory_index_state" in index.tables():
        out.append(tuple(index.db.rows("SELECT * FROM memory_index_state ORDER BY 1")))
        if _revision_triggers(index, table):
            return tuple(out)
    return (*out, _stat(index.path), _stat(index.path + "-wal"))


def _revision_triggers(index: MemoryIndex, table: str) -> bool:
    """Whether an insert, an update and a delete of *table* each bump the revision."""
    rows = index.db.rows(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?", (table,)
    )
    events = set()
    for (sql,) in rows:
        text = " ".join(str(sql or "").lower().split())
        if "update memory_index_state" not in text:
            continue
        head = text.split(" begin ", 1)[0]
        if " when " in head:  # a condition: not every change bumps it
            continue
        events |= {e for e in ("insert", "update", "delete") if f" {e} on " in f"{head} "}
    return events == {"insert", "update", "delete"}


def vector_filter(
    index: MemoryIndex, models: Sequence[str], sources: Sequence[str]
) -> tuple[str, list[Any]]:
    """The uncached path's filter: the chunks of *models* (and *sources* when it has them)."""
    table = index.layout.chunks
    assert table is not None
    marks = ", ".join("?" for _ in models)
    src = f" AND source IN ({', '.join('?' for _ in sources)})" if sources else ""
    if "source" not in index.columns(table):
        src = ""
    return f"WHERE model IN ({marks}){src}", [*models, *(sources if src else ())]


def build_matrix(
    index: MemoryIndex, models: Sequence[str], sources: Sequence[str], signature: tuple[Any, ...]
) -> VectorMatrix:
    """Decode every vector of *models* once (as the uncached path decodes them).

    The float64 BLOBs of the common length are decoded together; any other value
    one at a time by :func:`decode_embedding`.
    """
    table = index.layout.chunks
    assert table is not None
    where, params = vector_filter(index, models, sources)
    cols = HIT_COLUMNS.format(source=source_column(index, sources))
    chunks = chunk_count(index)
    if chunks > HITS_MAX_ROWS:  # its searches read their hits' rows: no text read here
        cols = "NULL, NULL, NULL, NULL, NULL, NULL"
    sql = f"SELECT rowid, id, path, embedding, {cols} FROM {quote(table)} {where} ORDER BY rowid"
    found = index.db.rows(sql, params)
    canon = canonical(index)
    hits = {int(r[0]): hit_fields(r[4:], canon) for r in (found if chunks <= HITS_MAX_ROWS else ())}
    found = [r[:4] for r in found]
    sizes: dict[int, int] = {}
    for r in found:
        if isinstance(r[3], bytes) and r[3] and len(r[3]) % 8 == 0:
            sizes[len(r[3])] = sizes.get(len(r[3]), 0) + 1
    blob = max(sizes, key=lambda n: (sizes[n], n)) if sizes else 0
    bulk = [r for r in found if isinstance(r[3], bytes) and r[3] and len(r[3]) == blob]
    vectors: list[tuple[int, npt.NDArray[np.float64]]] = []  # decoded one at a time
    zero: list[int] = []
    problems: list[tuple[int, str, str, str]] = []
    for rowid, cid, cpath, value in found:
        if isinstance(value, bytes) and value and len(value) == blob:
            continue
        vec, state = decode_embedding(value)
        if vec is None:
            if state not in ("empty", "none"):
                problems.append((int(rowid), str(cid), str(cpath), state))
            zero.append(int(rowid))
        else:
            vectors.append((int(rowid), vec))
    x = np.frombuffer(b"".join(r[3] for r in bulk), dtype="<f8").astype(np.float64)
    x = x.reshape(len(bulk), blob // 8)
    finite = np.isfinite(x).all(axis=1)
    for i in np.flatnonzero(~finite).tolist():  # decode_embedding: unusable
        problems.append((int(bulk[i][0]), str(bulk[i][1]), str(bulk[i][2]), "non-finite"))
        zero.append(int(bulk[i][0]))
    lengths = {blob // 8: int(finite.sum())} if bulk else {}
    for _, vec in vectors:
        lengths[vec.size] = lengths.get(vec.size, 0) + 1
    dims = max(lengths, key=lambda n: (lengths[n], n)) if lengths else 0
    rowids = np.array([r[0] for r in bulk], dtype=np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        norms = np.sqrt(np.einsum("ij,ij->i", x, x))
    nonzero = x.any(axis=1)
    usual = finite & nonzero & (norms > NORM_RANGE[0]) & (norms < NORM_RANGE[1])
    if blob // 8 != dims:
        usual[:] = False
    zero += rowids[finite & ~nonzero].tolist()  # an all-zero vector scores 0
    odd = [(int(rowids[i]), x[i]) for i in np.flatnonzero(finite & nonzero & ~usual).tolist()]
    rows_in = rowids[usual].tolist()
    parts = [(x[usual] / norms[usual, None]).astype(np.float32)] if usual.any() else []
    raws = [x if usual.all() else x[usual]] if usual.any() else []
    for rowid, vec in vectors:  # JSON arrays (before schema v23), and other lengths
        with np.errstate(over="ignore"):
            norm = math.sqrt(float(np.dot(vec, vec)))
        if not vec.any():
            zero.append(rowid)
        elif vec.size == dims and NORM_RANGE[0] < norm < NORM_RANGE[1]:
            rows_in.append(rowid)
            parts.append((vec / norm).astype(np.float32)[None, :])
            raws.append(vec[None, :])
        else:
            odd.append((rowid, vec))
    problems.sort()
    matrix = np.vstack(parts) if parts else np.zeros((0, dims), dtype=np.float32)
    raw: npt.NDArray[np.floating[Any]] | None = None
    if 8 * len(rows_in) * dims <= RAW_MAX_BYTES:
        raw = raws[0] if len(raws) == 1 else np.vstack(raws) if raws else np.zeros((0, dims))
        narrow = raw.astype(np.float32)
        if np.array_equal(narrow, raw):  # float32 values (a model's output): half the memory
            raw = narrow
    return VectorMatrix(
        signature,
        dims,
        np.asarray(rows_in, dtype=np.int64),
        np.ascontiguousarray(matrix.T),
        np.asarray(sorted(zero), dtype=np.int64),
        tuple(sorted(odd, key=lambda r: r[0])),
        tuple(p[1:] for p in problems),
        hits,
        raw,
    )


class VectorCache:
    """Embedding matrices of memory indexes, reused while each index is unchanged.

    Thread-safe: a server may search from several threads.
    """

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: dict[tuple[Any, ...], VectorMatrix] = {}
        self._lock = threading.Lock()
        self.builds = 0
        """How many matrices were built (a test reads it to see reuse and staleness)."""

    def matrix(
        self, index: MemoryIndex, models: Sequence[str], sources: Sequence[str]
    ) -> VectorMatrix:
        """The matrix of *index* for *models* / *sources*, rebuilt when the index changed."""
        has_source = index.layout.chunks is not None and "source" in index.columns(
            index.layout.chunks
        )
        key = (index.db.real_path, tuple(models), tuple(sources) if has_source else ())
        with self._lock:
            signature = index_signature(index)
            found = self._entries.pop(key, None)
            if found is None or found.signature != signature:
                found = build_matrix(index, models, sources, signature)
                self.builds += 1
                # entries of an older state of the same file are stale: drop them
                for k in [k for k, v in self._entries.items() if k[0] == key[0]]:
                    if self._entries[k].signature != signature:
                        del self._entries[k]
            self._entries[key] = found  # most recently used last
            while len(self._entries) > self.max_entries:
                del self._entries[next(iter(self._entries))]
            return found


DEFAULT_CACHE = VectorCache()


def _rescore(
    index: MemoryIndex, rowids: list[int], q: npt.NDArray[np.float64], dims: int
) -> npt.NDArray[np.float64] | None:
    """The float64 ``cosineSimilarity`` of *rowids*, their stored vectors read again.

    One product per row (``einsum``, the same operations for equal rows: equal
    vectors keep equal scores); None when a row changed since the matrix was made.
    """
    table = quote(index.layout.chunks or "")
    found: dict[int, bytes] = {}
    for i in range(0, len(rowids), 500):
        part = rowids[i : i + 500]
        marks = ", ".join("?" * len(part))
        sql = f"SELECT rowid, embedding FROM {table} WHERE rowid IN ({marks})"
        for rowid, value in index.db.rows(sql, part):
            if not isinstance(value, bytes) or len(value) != 8 * dims:
                vec, _ = decode_embedding(value)  # a JSON array (before schema v23)
                if vec is None or vec.size != dims:
                    return None
                value = vec.astype("<f8").tobytes()
            found[int(rowid)] = value
    if len(found) != len(rowids):
        return None  # the index changed under us
    blobs = b"".join(found[r] for r in rowids)  # in the order asked
    x = np.frombuffer(blobs, dtype="<f8").astype(np.float64).reshape(len(rowids), dims)
    if not np.all(np.isfinite(x)):
        return None
    return _cosines(x, q)


def _cosines(x: npt.NDArray[np.float64], q: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``cosineSimilarity(x[i], q)`` of each row: one product per row (see :func:`_rescore`)."""
    na = np.einsum("ij,ij->i", x, x)
    nb = float(np.dot(q, q))
    dot = np.einsum("ij,j->i", x, q)
    with np.errstate(divide="ignore", invalid="ignore"):
        scores: npt.NDArray[np.float64] = dot / (np.sqrt(na) * math.sqrt(nb))
    scores[na == 0] = 0.0
    return scores


def top_rows(
    index: MemoryIndex,
    cached: VectorMatrix,
    query_vec: Sequence[float],
    limit: int,
    started: Scan | None = None,
) -> list[tuple[float, int]] | None:
    """``(score, rowid)`` of the *limit* best rows, best first; None to take the slow path.

    The scores are the uncached path's float64 cosines of the same rows. *started*:
    :func:`~core.openclaw.memsearch_scan.start_top_rows`'s scan of the same *cached*,
    *query_vec* and *limit*.
    """
    prepared = (started.q, started.qnorm) if started is not None else prepare(cached, query_vec)
    if prepared is None:
        return None
    q, qnorm = prepared
    keep = (started if started is not None else Scan(cached, q, qnorm, limit)).keep()
    rowids = cached.rowids[keep]
    if not rowids.size:
        scores = np.zeros(0)
    elif cached.raw is not None:
        scores = _cosines(cached.raw[keep].astype(np.float64, copy=False), q)
    else:
        exact = _rescore(index, rowids.tolist(), q, cached.dims)
        if exact is None:
            return None
        scores = exact
    zero = cached.zero_rowids[:limit]
    if cached.odd or zero.size:
        with np.errstate(over="ignore", invalid="ignore"):
            odd = [cosine(q, vec) for _, vec in cached.odd]
        scores = np.concatenate((scores, np.asarray(odd, dtype=np.float64), np.zeros(zero.size)))
        odd_rows = np.asarray([rowid for rowid, _ in cached.odd], dtype=np.int64)
        rowids = np.concatenate((rowids, odd_rows, zero))
    finite = np.isfinite(scores)
    if not finite.all():
        scores, rowids = scores[finite], rowids[finite]
    order = np.lexsort((rowids, -scores))[:limit]  # the best first, then the earliest row
    return list(zip(scores[order].tolist(), rowids[order].tolist(), strict=True))
