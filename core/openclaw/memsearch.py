"""OpenClaw's memory search, reproduced over a read-only memory index.

``memory_search(index, query, now_ms=...)`` returns what ``openclaw memory search
--query Q --json`` returns for the same index, config and clock (OpenClaw
2026.9.6, memory-core ``searchCandidates``; docs/notes/openclaw-sqlite.md
section 6), and every component behind each score:

1. keyword hits (:mod:`core.openclaw.memsearch_keyword`): bm25 body matches
   with OpenClaw's lexical boost, path matches (exact path tiers 3/2/1), the
   one-keyword-at-a-time fallback;
2. vector hits: cosine between the query embedding and each stored float64
   embedding of the index's model (OpenClaw's own brute-force fallback; its
   sqlite-vec path scores at float32 precision, about 1e-7 away);
3. the merge ``0.7 * vectorScore + 0.3 * keywordScore`` (the boosted keyword
   score), the 30-day half-life decay of dated notes (``MEMORY.md``,
   ``USER.md`` and undated ``memory/*`` are evergreen), the importance
   multiplier, MMR (lambda 0.7) and the cut at ``minScore`` / ``maxResults``.

Without a query embedding (provider ``none``, no endpoint, no key, network
error) the search is keyword-only, as OpenClaw's, and the result says so and why.
The clock is a parameter: decay depends on it.

The records are :mod:`core.openclaw.memsearch_records`, the ranking (decay,
importance, MMR, merge) :mod:`core.openclaw.memsearch_rank`.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import TYPE_CHECKING, Concatenate, ParamSpec

import numpy as np

from core.io.problems import Problem
from core.openclaw.memindex import FTS_ONLY_MODEL, quote
from core.openclaw.memindex_embedding import decode_embedding, embedding_problem
from core.openclaw.memsearch_chunks import chunk_tokens, eagerly
from core.openclaw.memsearch_embed import EmbedError
from core.openclaw.memsearch_keyword import (
    keyword_context,
    search_keyword_with_fallback,
)
from core.openclaw.memsearch_merge import KeywordSide, VectorRow, merge_hybrid, select_hybrid
from core.openclaw.memsearch_postings import body_postings
from core.openclaw.memsearch_rank import (
    Clock,
    apply_decay,
    apply_importance,
    attach_recall,
    finalize_keyword_only,
    is_evergreen,
    memory_date_ms,
    recall_rows,
    warm_path_caches,
)
from core.openclaw.memsearch_recall import live_recall
from core.openclaw.memsearch_records import MemoryCandidate, MemoryHit, MemorySearchResult
from core.openclaw.memsearch_scan import start_top_rows
from core.openclaw.memsearch_text import locale_cmp
from core.openclaw.memsearch_vectors import (
    DEFAULT_CACHE,
    HIT_COLUMNS,
    VectorCache,
    VectorMatrix,
    cosine,
    hit_fields,
    source_column,
    top_rows,
    vector_filter,
)

if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Sequence

    from core.openclaw.memindex import MemoryIndex
    from core.openclaw.memsearch_embed import QueryEmbedder
    from core.openclaw.memsearch_scan import Scan

SEARCH_CANDIDATE_UNIVERSE = 200
CANDIDATE_MULTIPLIER = 4


# -- vector side ----------------------------------------------------------------------


def search_vector(
    index: MemoryIndex, query_vec: Sequence[float], models: Sequence[str],
    sources: Sequence[str], limit: int, problems: list[Problem],
    cache: VectorCache | None = DEFAULT_CACHE, early: Early | None = None,
) -> list[MemoryHit]:  # fmt: skip
    """``searchChunksByEmbedding``: the *limit* best cosines, chunks of *models* only.

    With a *cache* (the default), the vectors are decoded once per index state
    (:mod:`core.openclaw.memsearch_vectors`); the answer is the same. *early*:
    :func:`start_vector`'s product, started before the keyword search.
    """
    found = vector_rows(index, query_vec, models, sources, limit, problems, cache, early)
    return [MemoryHit(*fields, score) for fields, score in found]


def vector_rows(
    index: MemoryIndex, query_vec: Sequence[float], models: Sequence[str],
    sources: Sequence[str], limit: int, problems: list[Problem],
    cache: VectorCache | None = DEFAULT_CACHE, early: Early | None = None,
) -> list[VectorRow]:  # fmt: skip
    """:func:`search_vector`'s hits as their fields and scores (no hit made)."""
    table = index.layout.chunks
    if limit <= 0 or table is None or "embedding" not in index.columns(table):
        return []
    cols = HIT_COLUMNS.format(source=source_column(index, sources))  # as OpenClaw reads them
    found: dict[int, tuple[str, str, int, int, str, str]] = {}  # kept with the matrix, or read
    top: list[tuple[float, int]] | None = None
    if cache is not None:
        if early is None:
            early = (cache.matrix(index, models, sources), None)
        cached, started = early
        top = top_rows(index, cached, query_vec, limit, started)
        if top is not None:
            problems += [embedding_problem(index.path, *p) for p in cached.problems]
            kept = cached.hits
            try:  # every row kept with the matrix (the usual case): no read, no second pass
                return [(kept[rowid], score) for score, rowid in top]
            except KeyError:
                found = {rowid: kept[rowid] for _, rowid in top if rowid in kept}
    if top is None:
        top = _scan_vectors(index, query_vec, models, sources, limit, problems)
    wanted = [rowid for _, rowid in top if rowid not in found]
    for i in range(0, len(wanted), 500):
        part = wanted[i : i + 500]
        marks = ", ".join("?" * len(part))
        sql = f"SELECT rowid, {cols} FROM {quote(table)} WHERE rowid IN ({marks})"
        found.update((int(r[0]), hit_fields(r[1:])) for r in index.db.rows(sql, part))
    return [(found[rowid], score) for score, rowid in top]


Early = tuple[VectorMatrix, "Scan | None"]
"""A cached matrix and its product with the query, running (:func:`start_vector`)."""


def start_vector(
    index: MemoryIndex, query_vec: Sequence[float], models: Sequence[str],
    sources: Sequence[str], limit: int, cache: VectorCache | None,
) -> Early | None:  # fmt: skip
    """The cached matrix of :func:`search_vector` and its query product, started now.

    The product runs in a worker thread while the keyword search runs (two cores:
    about 5 ms of a 50,000-chunk index off the answer's time); None where
    :func:`search_vector` would not use the cache.
    """
    table = index.layout.chunks
    if cache is None or limit <= 0 or table is None or "embedding" not in index.columns(table):
        return None
    cached = cache.matrix(index, models, sources)
    return cached, start_top_rows(cached, query_vec, limit)


def _scan_vectors(
    index: MemoryIndex, query_vec: Sequence[float], models: Sequence[str],
    sources: Sequence[str], limit: int, problems: list[Problem],
) -> list[tuple[float, int]]:  # fmt: skip
    """OpenClaw's scan: every vector decoded, the best kept (equal scores: earliest row)."""
    table = index.layout.chunks
    assert table is not None
    q = np.asarray(query_vec, dtype=np.float64)
    where, params = vector_filter(index, models, sources)
    sql = f"SELECT rowid, id, path, embedding FROM {quote(table)} {where} ORDER BY rowid ASC"
    top: list[tuple[float, int]] = []
    with np.errstate(over="ignore", invalid="ignore"):  # extreme norms: see cosine
        for rowid, cid, cpath, value in index.db.rows(sql, params):
            vec, state = decode_embedding(value)
            if vec is None and state not in ("empty", "none"):
                problems.append(embedding_problem(index.path, str(cid), str(cpath), state))
            score = cosine(q, vec if vec is not None else np.empty(0))
            if not math.isfinite(score):
                continue
            if len(top) < limit:
                top.append((score, rowid))
                if len(top) == limit:
                    top.sort(key=lambda t: -t[0])
            elif score > top[-1][0]:
                top[-1] = (score, rowid)
                top.sort(key=lambda t: -t[0])
    top.sort(key=lambda t: -t[0])
    return top


def warm_tables(index: MemoryIndex, *, hybrid: bool) -> None:
    """Build now the per-generation tables a search of *index* would build at its second.

    A long-lived server calls it once the index is open, so that no search answers
    in seconds rather than milliseconds because it builds them: every file's path
    caches, the recall table, the body postings and, for a
    *hybrid* search, the chunks' token table. Within
    :func:`core.openclaw.memsearch_chunks.builds_apart` the recall table, postings and
    tokens are built in a thread of their own (this returns at once; searches meanwhile
    do without them). The answers are the same with or without any of them.
    """
    lay = index.layout
    if lay.chunks is None:
        return
    with eagerly():
        warm_path_caches(index)
        live_recall(index, [])  # (the quickest first: built one after another)
        if lay.fts is not None:
            body_postings(index, lay.fts, lay.chunks)
        if hybrid:
            chunk_tokens(index)


# -- the search -----------------------------------------------------------------------


_P = ParamSpec("_P")


def _one_version(
    fn: Callable[Concatenate[MemoryIndex, _P], MemorySearchResult],
) -> Callable[Concatenate[MemoryIndex, _P], MemorySearchResult]:
    """*fn* (of an index) run with the index's ``data_version`` read once (see sqlite_ro)."""

    @functools.wraps(fn)
    def run(index: MemoryIndex, /, *args: _P.args, **kwargs: _P.kwargs) -> MemorySearchResult:
        with index.db.one_version():
            return fn(index, *args, **kwargs)

    return run


@_one_version
def memory_search(
    index: MemoryIndex,
    query: str,
    *,
    now_ms: int,
    embedder: QueryEmbedder | None = None,
    no_embed_reason: str | None = None,
    max_results: int = 6,
    min_score: float = 0.35,
    sources: Sequence[str] = ("memory",),
    workspace: str | os.PathLike[str] | None = None,
    vector_cache: VectorCache | None = DEFAULT_CACHE,
    rank_all: bool = True,
) -> MemorySearchResult:
    """Search *index* the way OpenClaw 2026.9.6 does.

    Parameters
    ----------
    index
        The open memory index.
    query
        The query text (trimmed; an empty query finds nothing).
    now_ms
        The clock, epoch milliseconds: dated notes decay against it.
    embedder
        Embeds the query; None searches keyword-only, and *no_embed_reason*
        (or a default) says why in the result.
    max_results, min_score
        ``memory.search.query.maxResults`` / ``minScore``.
    sources
        The searched sources (OpenClaw's ``searchSources``, default memory only).
    workspace
        The agent's workspace: undated, non-evergreen notes decay from their
        file's mtime there (the indexed mtime stands in without one).
    vector_cache
        Where decoded embeddings are kept between searches (None: decode them
        every time, as OpenClaw's scan does; the answer is the same).
    rank_all
        Place every hybrid candidate in OpenClaw's order (False: MMR orders them only
        as far as the results need, and the candidates listed are those placed; the
        others are scored but never made. The results are the same: an MCP tool
        answer, which shows only those, needs no more).
    """
    text = query.strip()
    meta = index.meta_dict()
    model = meta.get("model") if isinstance(meta.get("model"), str) else None
    result = MemorySearchResult(
        text, "hybrid", None, now_ms, max_results, min_score, index.path, model
    )
    result.problems.extend(index.problems)
    space = Path(workspace) if workspace is not None else None
    if space is not None and not space.is_dir():
        space = None
    if not text or not index.has_memory():
        result.mode, result.reason = "empty", "empty query" if not text else "no memory index here"
        return result
    forms = warm_path_caches(index)  # the exact-path forms of its chunks, once known
    ctx = keyword_context(index, sources, meta, forms)
    cap = max(SEARCH_CANDIDATE_UNIVERSE, max_results)
    candidates = min(200, max(1, math.floor(cap * CANDIDATE_MULTIPLIER)))
    query_vec: list[float] | None = None
    reason = no_embed_reason
    if embedder is None and reason is None:
        reason = "no embedding provider"
    if meta.get("provider") == "none" or model == FTS_ONLY_MODEL:
        embedder, reason = None, reason or "the index is FTS-only (provider none)"
    if embedder is not None and model and embedder.model != model:
        result.problems.append(
            Problem(
                index.path,
                0,
                f"the config's embedding model {embedder.model!r} is not the index's {model!r}:"
                " OpenClaw pauses its search until `openclaw memory index` rebuilds the index;"
                " its vectors are not compared",
                "warning",
            )
        )
    if embedder is not None:
        try:
            query_vec = embedder.embed_query(text)
        except EmbedError as exc:
            reason = f"the query could not be embedded: {exc}"
    models = [embedder.model] if embedder is not None else []
    early = None
    if query_vec is not None and any(v != 0 for v in query_vec):
        early = start_vector(index, query_vec, models, sources, candidates, vector_cache)
    # keyword-only, the finish sorts every hit by a total order: none needed before it
    ordered = query_vec is not None
    keyword = search_keyword_with_fallback(ctx, text, candidates, ordered) if ctx.available else []
    if query_vec is None:
        keyword = attach_recall(index, keyword)
        result.mode, result.reason = "fts-only", reason
        if not ctx.available:
            result.reason = f"{reason}; and the index has no FTS table"
            return result
        clock = _clock(index, now_ms, space, [(h.source, h.path) for h in keyword])
        ranked, chosen = finalize_keyword_only(keyword, clock, cap, min_score)
        return _finish(result, ranked, chosen[:max_results], min_score)
    # while the vector product runs: the keyword side's recall rows and file times
    keyword = attach_recall(index, keyword)
    keyword_clock = _clock(index, now_ms, space, [(h.source, h.path) for h in keyword])
    searched = any(v != 0 for v in query_vec)
    args = (index, query_vec, models, sources, candidates, result.problems, vector_cache, early)
    if not ctx.available:
        vector = attach_recall(index, search_vector(*args) if searched else [])
        result.mode, result.reason = "vector-only", "the index has no FTS table"
        cands = [
            MemoryCandidate(h, vector_score=h.score, has_vector=True, score=h.score) for h in vector
        ]
        apply_decay(cands, _clock(index, now_ms, space, [(h.source, h.path) for h in vector]))
        ranked = apply_importance(cands)
        ranked.sort(key=functools.cmp_to_key(_cmp_vec))
        chosen = [c for c in ranked if c.score >= min_score][:max_results]
        return _finish(result, ranked, chosen, min_score)
    side = KeywordSide(keyword, keyword_clock)  # scored before the product is waited for
    rows = vector_rows(*args) if searched else []
    chunk_tokens(index)  # MMR's snippet tokens come from it (the postings serve keywords)
    # the vector hits' recall rows and times (attachRecallMetadata), without making hits
    live, attached = recall_rows(index, list({f[0] for f, _ in rows})) if rows else (set(), {})
    session_mtimes = index.file_mtimes("sessions", [f[1] for f, _ in rows if f[4] == "sessions"])
    clock = _clock(index, now_ms, space, [(f[4], f[1]) for f, _ in rows])
    clock.index_mtimes.update(keyword_clock.index_mtimes)
    recall = (live, attached, session_mtimes)
    merged = merge_hybrid(text, rows, side, clock, recall, lazy=not rank_all, forms=forms)
    chosen = select_hybrid(merged, keyword, max_results, min_score, cap, side.range_keys)
    if rank_all:
        return _finish(result, merged.ordered(), chosen, min_score)
    return _finish(result, merged.done, chosen, min_score)


def _clock(
    index: MemoryIndex, now_ms: int, space: Path | None, hits: list[tuple[str, str]]
) -> Clock:
    """The clock, with the indexed mtimes the decay of *hits* (source, path) reads (only those).

    A session's time is its transcript's, a dated note's its date, an evergreen
    note has none: only the other notes need their file's indexed mtime.
    """
    if space is not None:
        return Clock(now_ms, space, {})
    paths = [
        path
        for source, path in hits
        if source != "sessions"
        and memory_date_ms(path) is None
        and not (source == "memory" and is_evergreen(path))
    ]
    return Clock(now_ms, space, index.file_mtimes("memory", paths))


def _cmp_vec(a: MemoryCandidate, b: MemoryCandidate) -> int:
    if a.score != b.score:
        return -1 if b.score < a.score else 1
    return (
        locale_cmp(a.hit.path, b.hit.path)
        or (a.hit.start_line - b.hit.start_line)
        or (a.hit.end_line - b.hit.end_line)
    )


def _finish(
    result: MemorySearchResult,
    ranked: list[MemoryCandidate],
    chosen: list[MemoryCandidate],
    min_score: float,
) -> MemorySearchResult:
    """*result* with its candidates (*ranked*, in order) and results."""
    picked = {id(c) for c in chosen}
    for i, c in enumerate(ranked, 1):
        c.order = i
        c.selected = id(c) in picked
        c.below_min_score = c.score < min_score
    result.candidates = list(ranked)
    result.results = list(chosen)
    return result
