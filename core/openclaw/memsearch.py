"""OpenClaw's memory search, reproduced over a read-only memory index.

``search(index, query, now_ms=...)`` returns what ``openclaw memory search
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
"""

from __future__ import annotations

import functools
import math
import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from core.io.problems import Problem
from core.openclaw.memindex import FTS_ONLY_MODEL, quote
from core.openclaw.memindex_embedding import decode_embedding, embedding_problem
from core.openclaw.memsearch_embed import EmbedError
from core.openclaw.memsearch_keyword import (
    SNIPPET_MAX_CHARS,
    Hit,
    compare_keyword_hits,
    exact_path_matcher,
    keyword_context,
    search_keyword_with_fallback,
)
from core.openclaw.memsearch_text import (
    jaccard_similarity,
    locale_cmp,
    lower_trimmed,
    mmr_tokens,
    truncate_utf16,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.openclaw.memindex import MemoryIndex
    from core.openclaw.memsearch_embed import QueryEmbedder

SEARCH_CANDIDATE_UNIVERSE = 200
CANDIDATE_MULTIPLIER = 4
VECTOR_WEIGHT = 0.7
TEXT_WEIGHT = 0.3
MMR_LAMBDA = 0.7
HALF_LIFE_DAYS = 30.0
DAY_MS = 864e5
INVALID_PROJECT_KEY = "!invalid-project-annotation"
_DATED = re.compile(r"(?:^|/)memory/(?:[^/]+/)*(\d{4})-(\d{2})-(\d{2})(?:-[^/]+)?\.md$")

Mode = Literal["hybrid", "fts-only", "vector-only", "empty"]
TimeFrom = Literal["path-date", "evergreen", "file-mtime", "index-mtime", "session-mtime", "none"]


@dataclass(slots=True)
class Candidate:
    """One chunk considered by the search, with every component of its score."""

    hit: Hit
    vector_score: float = 0.0
    text_score: float = 0.0
    keyword_score: float = 0.0
    """The boosted keyword score (``rankingScore`` of the keyword side; capped at 1)."""
    path_score: float = 0.0
    exact: int = 0
    has_vector: bool = False
    has_keyword: bool = False
    has_body: bool = False
    content_score: float = 0.0
    """``0.7 * vectorScore + 0.3 * keywordScore`` (keyword-only: the keyword score)."""
    lexical_rank: float = 0.0
    pre_decay: float = 0.0
    decay: float = 1.0
    age_days: float | None = None
    time_ms: float | None = None
    time_from: TimeFrom = "none"
    importance_multiplier: float = 1.0
    ranking_score: float = 0.0
    score: float = 0.0
    order: int = 0
    """Position after ranking (exact-path tiers first, then MMR order), from 1."""
    selected: bool = False
    below_min_score: bool = False

    def to_json(self, mode: Mode) -> dict[str, Any]:
        """OpenClaw's result fields, then memlens's components under ``memlens``."""
        h = self.hit
        out: dict[str, Any] = {
            "path": h.path,
            "startLine": h.start_line,
            "endLine": h.end_line,
            "score": self.score,
        }
        if mode != "fts-only":
            out["vectorScore"] = self.vector_score
        out["textScore"] = self.text_score
        out["snippet"] = h.snippet
        out["source"] = h.source
        if h.importance is not None:
            out["importance"] = h.importance
        if h.triggers:
            out["triggers"] = h.triggers
        if h.project_key:
            out["projectKey"] = h.project_key
        if h.provenance:
            out["provenance"] = h.provenance
        out["memlens"] = {
            "id": h.id,
            "keywordScore": self.keyword_score,
            "pathScore": self.path_score,
            "exactPathSpecificity": self.exact,
            "contentScore": self.content_score,
            "lexicalRank": self.lexical_rank,
            "scoreBeforeDecay": self.pre_decay,
            "decayFactor": self.decay,
            "ageDays": self.age_days,
            "timestampMs": self.time_ms,
            "timestampFrom": self.time_from,
            "importanceMultiplier": self.importance_multiplier,
            "rankingScore": self.ranking_score,
            "rank": self.order,
            "hasVector": self.has_vector,
            "hasKeyword": self.has_keyword,
            "selected": self.selected,
            "belowMinScore": self.below_min_score,
        }
        return out


@dataclass(slots=True)
class SearchResult:
    """The search's answer: ``results`` as OpenClaw returns them, ``candidates`` all of them."""

    query: str
    mode: Mode
    reason: str | None
    """Why the search was keyword-only (or empty), in plain words; None for hybrid."""
    now_ms: int
    max_results: int
    min_score: float
    index: str
    model: str | None
    results: list[Candidate] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """``{"results": [...], "mode", "reason", "index", ...}`` for ``--json``."""
        return {
            "results": [c.to_json(self.mode) for c in self.results],
            "mode": self.mode,
            "reason": self.reason,
            "query": self.query,
            "index": self.index,
            "model": self.model,
            "now": self.now_ms,
            "nowIso": datetime.fromtimestamp(self.now_ms / 1000, UTC).isoformat(),
            "maxResults": self.max_results,
            "minScore": self.min_score,
            "candidates": [c.to_json(self.mode) for c in self.candidates],
            "problems": [p.to_json() for p in self.problems],
        }


# -- vector side ----------------------------------------------------------------------


def _cosine(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> float:
    """``cosineSimilarity``: over the shorter length; 0 when either norm is 0."""
    if a.size == 0 or b.size == 0:
        return 0.0
    n = min(a.size, b.size)
    x, y = a[:n], b[:n]
    na, nb = float(np.dot(x, x)), float(np.dot(y, y))
    if na == 0 or nb == 0:
        return 0.0
    return float(np.dot(x, y)) / (math.sqrt(na) * math.sqrt(nb))


def search_vector(
    index: MemoryIndex, query_vec: Sequence[float], models: Sequence[str],
    sources: Sequence[str], limit: int, problems: list[Problem],
) -> list[Hit]:  # fmt: skip
    """``searchChunksByEmbedding``: the *limit* best cosines, chunks of *models* only."""
    table = index.layout.chunks
    if limit <= 0 or table is None or "embedding" not in index.columns(table):
        return []
    q = np.asarray(query_vec, dtype=np.float64)
    marks = ", ".join("?" for _ in models)
    src = f" AND source IN ({', '.join('?' for _ in sources)})" if sources else ""
    if "source" not in index.columns(table):
        src = ""
    order = "rowid"
    sql = f"SELECT rowid, id, path, embedding FROM {quote(table)} WHERE model IN ({marks}){src}"
    params = [*models, *(sources if src else ())]
    top: list[tuple[float, int]] = []
    for rowid, cid, cpath, value in index.db.rows(f"{sql} ORDER BY {order} ASC", params):
        vec, state = decode_embedding(value)
        if vec is None and state not in ("empty", "none"):
            problems.append(embedding_problem(index.path, str(cid), str(cpath), state))
        score = _cosine(q, vec if vec is not None else np.empty(0))
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
    out = []
    cols = "id, path, start_line, end_line, text, source" if src else (
        "id, path, start_line, end_line, text, 'memory'"
    )  # fmt: skip
    for score, rowid in top:
        cid, cpath, start, end, text, source = index.db.rows(
            f"SELECT {cols} FROM {quote(table)} WHERE rowid = ?", (rowid,)
        )[0]
        snippet = truncate_utf16(text if isinstance(text, str) else "", SNIPPET_MAX_CHARS)
        out.append(Hit(str(cid), str(cpath), int(start), int(end), str(source), snippet, score))
    return out


# -- recall metadata, decay, importance --------------------------------------------------


def attach_recall(index: MemoryIndex, hits: list[Hit]) -> list[Hit]:
    """``attachRecallMetadata``: keep live chunks; importance, provenance, session mtimes."""
    if not hits or index.layout.chunks is None:
        return hits
    ids = list({h.id for h in hits})
    live: set[str] = set()
    for i in range(0, len(ids), 500):
        part = ids[i : i + 500]
        marks = ", ".join("?" * len(part))
        sql = f"SELECT id FROM {quote(index.layout.chunks)} WHERE id IN ({marks})"
        live.update(str(r[0]) for r in index.db.rows(sql, part))
    info = index.recall_info(ids)
    session_mtimes = {f.path: f.mtime_ms for f in index.files("sessions")}
    out = []
    for h in hits:
        if h.id not in live:
            continue
        r = info.get(h.id)
        if r is not None:
            if r.importance is not None:
                h.importance = r.importance
            if r.triggers and r.triggers.strip():
                h.triggers = r.triggers.strip()
            if r.project_key and r.project_key.strip():
                h.project_key = r.project_key.strip()
            if r.provenance():
                h.provenance = r.provenance()
        if h.source == "sessions":
            h.source_mtime = session_mtimes.get(h.path)
        out.append(h)
    return out


def memory_date_ms(path: str) -> int | None:
    """``parseMemoryDateFromPath``: the UTC midnight of ``memory/…/YYYY-MM-DD[-x].md``."""
    norm = path.replace("\\", "/")
    norm = norm[2:] if norm.startswith("./") else norm
    m = _DATED.search(norm)
    if not m:
        return None
    try:
        day = datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), tzinfo=UTC)
    except ValueError:
        return None
    return int(day.timestamp() * 1000)


def is_evergreen(path: str) -> bool:
    """``isEvergreenMemoryPath``: ``MEMORY.md``, ``USER.md``, undated ``memory/*``."""
    norm = path.replace("\\", "/")
    norm = norm[2:] if norm.startswith("./") else norm
    if norm in ("MEMORY.md", "USER.md"):
        return True
    return norm.startswith("memory/") and not _DATED.search(norm)


@dataclass(frozen=True, slots=True)
class Clock:
    """Where timestamps come from: the search time, the workspace, the index's mtimes."""

    now_ms: int
    workspace: Path | None
    index_mtimes: dict[str, float | None]


def _timestamp(c: Candidate, clock: Clock) -> tuple[float | None, TimeFrom]:
    """``extractTimestamp`` (whole milliseconds, as a JavaScript Date)."""
    h = c.hit
    if h.source == "sessions":
        m = h.source_mtime
        return (
            (math.trunc(m), "session-mtime")
            if m is not None and math.isfinite(m)
            else (None, "none")
        )
    dated = memory_date_ms(h.path)
    if dated is not None:
        return float(dated), "path-date"
    if h.source == "memory" and is_evergreen(h.path):
        return None, "evergreen"
    if clock.workspace is None:
        # OpenClaw stats the workspace file; without a workspace the indexed mtime stands in.
        m = clock.index_mtimes.get(h.path)
        return (math.trunc(m), "index-mtime") if m is not None else (None, "none")
    target = Path(h.path) if os.path.isabs(h.path) else clock.workspace / h.path
    try:
        return float(target.stat().st_mtime_ns // 1_000_000), "file-mtime"
    except OSError:
        return None, "none"


def apply_decay(cands: list[Candidate], clock: Clock) -> None:
    """``applyTemporalDecayToHybridResults``: ``score * exp(-ln2/30 * ageDays)``."""
    for c in cands:
        c.pre_decay = c.score
        ts, origin = _timestamp(c, clock)
        c.time_from = origin
        if ts is None:
            continue
        c.time_ms = ts
        age = max(0.0, (clock.now_ms - ts) / DAY_MS)
        c.age_days = age
        if not math.isfinite(age):
            continue
        c.decay = math.exp(-(math.log(2) / HALF_LIFE_DAYS) * age)
        c.score = c.score * c.decay


def importance_multiplier(importance: int | None) -> float:
    """``importanceMultiplier``: 0.75 + 0.05 per importance point (1..10)."""
    if importance is None:
        return 1.0
    return 0.75 + max(1, min(10, math.floor(importance))) * 0.05


def apply_importance(cands: list[Candidate]) -> list[Candidate]:
    """Importance, then OpenClaw's project step (drops invalid project annotations)."""
    out = []
    for c in cands:
        c.importance_multiplier = importance_multiplier(c.hit.importance)
        c.score = c.score * c.importance_multiplier
        keys = [k.strip() for k in (c.hit.project_key or "").split(";")]
        if INVALID_PROJECT_KEY not in keys:
            out.append(c)
    return out


def _exact_tie(content: float) -> float:
    """``scoreExactPathTieForTemporalDecay``."""
    return (1 + max(0.0, min(1.0, content))) / 2


# -- MMR ------------------------------------------------------------------------------


def mmr_rerank(items: list[Candidate], lam: float = MMR_LAMBDA) -> list[Candidate]:
    """``mmrRerank``: greedy ``lam*relevance - (1-lam)*max Jaccard`` over snippet tokens."""
    if len(items) <= 1:
        return list(items)
    lam = max(0.0, min(1.0, lam))
    if lam == 1:
        return sorted(items, key=lambda c: -c.score)
    tokens = [mmr_tokens(c.hit.snippet) for c in items]
    empty_text = [
        lower_trimmed(c.hit.snippet) if not t else None for c, t in zip(items, tokens, strict=True)
    ]
    hi, lo = max(c.score for c in items), min(c.score for c in items)
    span = hi - lo
    rel = [1.0 if span == 0 else (c.score - lo) / span for c in items]
    max_sim = [0.0] * len(items)
    remaining = list(range(len(items)))
    picked: list[Candidate] = []
    while remaining:
        best, best_mmr = -1, -math.inf
        for i in remaining:
            m = lam * rel[i] - (1 - lam) * max_sim[i]
            if m > best_mmr or (
                m == best_mmr and items[i].score > (items[best].score if best >= 0 else -math.inf)
            ):
                best, best_mmr = i, m
        if best < 0:
            break
        picked.append(items[best])
        remaining.remove(best)
        for i in remaining:
            if not tokens[i] and not tokens[best]:
                sim = float(empty_text[i] == empty_text[best])
            else:
                sim = jaccard_similarity(tokens[i], tokens[best])
            max_sim[i] = max(max_sim[i], sim)
    return picked


# -- hybrid ---------------------------------------------------------------------------


def _cmp_ranking(a: Candidate, b: Candidate) -> int:
    for x, y in ((a.ranking_score, b.ranking_score), (a.lexical_rank, b.lexical_rank)):
        if x != y:
            return -1 if y < x else 1
    return (
        locale_cmp(a.hit.path, b.hit.path)
        or (a.hit.start_line - b.hit.start_line)
        or (a.hit.end_line - b.hit.end_line)
    )


def _cmp_non_exact(a: Candidate, b: Candidate) -> int:
    if a.score != b.score:
        return -1 if b.score < a.score else 1
    return _cmp_ranking(a, b)


def merge_hybrid(
    query: str, vector: list[Hit], keyword: list[Hit], clock: Clock
) -> list[Candidate]:
    """``mergeHybridResults`` (with ``projectHybridCandidates``): the ranked union."""
    match_exact = exact_path_matcher(query)
    by_id: dict[str, Candidate] = {}
    for h in vector:
        by_id[h.id] = Candidate(h, vector_score=h.score, exact=match_exact(h.path), has_vector=True)
    for h in keyword:
        c = by_id.get(h.id)
        if c is not None:
            c.text_score = h.text_score
            c.has_body = h.has_body
            c.keyword_score = h.score
            c.path_score = h.path_score
            c.exact = max(c.exact, h.exact)
            c.has_keyword = True
            v = c.hit
            v.importance = v.importance if v.importance is not None else h.importance
            v.triggers = v.triggers or h.triggers
            v.project_key = v.project_key or h.project_key
            v.provenance = v.provenance or h.provenance
            if v.source_mtime is None:
                v.source_mtime = h.source_mtime
            if h.snippet:
                v.snippet = h.snippet
        else:
            by_id[h.id] = Candidate(
                h, text_score=h.text_score, keyword_score=h.score, path_score=h.path_score,
                exact=h.exact, has_body=h.has_body, has_keyword=True,
            )  # fmt: skip
    cands = list(by_id.values())
    for c in cands:
        raw = c.keyword_score  # the keyword side's rankingScore (boosted, or the path score)
        kw = raw if c.text_score > 0 else (0.0 if c.exact > 0 else c.path_score)
        c.keyword_score = kw
        c.content_score = VECTOR_WEIGHT * c.vector_score + TEXT_WEIGHT * kw
        c.lexical_rank = raw if c.has_body and c.text_score == 0 else 0.0
        if c.exact > 0:
            c.score = _exact_tie(c.content_score)
        else:
            c.score = c.lexical_rank if c.content_score == 0 else c.content_score
    apply_decay(cands, clock)
    ranked = apply_importance(cands)
    for c in ranked:
        c.ranking_score = c.score
        c.score = 1.0 if c.exact > 0 else (0.0 if c.content_score == 0 else c.score)
    non_exact = sorted(
        (c for c in ranked if c.exact == 0), key=functools.cmp_to_key(_cmp_non_exact)
    )
    out: list[Candidate] = []
    for tier in (3, 2, 1):
        group = sorted(
            (c for c in ranked if c.exact == tier), key=functools.cmp_to_key(_cmp_ranking)
        )
        for c in group:
            c.score = c.ranking_score
        group = mmr_rerank(group)
        for c in group:
            c.score = 1.0
        out += group
    return out + mmr_rerank(non_exact)


def _range_key(h: Hit) -> str:
    return f"{h.source}:{h.path}:{h.start_line}:{h.end_line}"


def select_hybrid(
    merged: list[Candidate], keyword: list[Hit], max_results: int, min_score: float
) -> list[Candidate]:
    """``selectHybridSearchResults``: over minScore, then keyword-only hits to fill."""
    strict = [c for c in merged if c.score >= min_score]
    selected = strict[:max_results]
    if not keyword or len(selected) == max_results:
        return selected
    keys = {_range_key(h) for h in keyword}
    if not strict:
        return [c for c in merged if c.score >= 0 and _range_key(c.hit) in keys][:max_results]
    seen = {_range_key(c.hit) for c in selected}
    for c in merged:
        if len(selected) == max_results:
            break
        key = _range_key(c.hit)
        if c.score < min_score and c.vector_score == 0 and key in keys and key not in seen:
            seen.add(key)
            selected.append(c)
    return selected


def finalize_keyword_only(
    hits: list[Hit], clock: Clock, max_results: int, min_score: float
) -> tuple[list[Candidate], list[Candidate]]:
    """``finalizeKeywordOnlyResults``: decay, importance, sort, minScore (relaxed to 0)."""
    cands = []
    for h in hits:
        c = Candidate(h, text_score=h.text_score, keyword_score=h.score, path_score=h.path_score,
                      exact=h.exact, has_body=h.has_body, has_keyword=True)  # fmt: skip
        c.content_score = h.score if h.has_body else 0.0
        c.score = _exact_tie(c.content_score) if h.exact > 0 else h.score
        cands.append(c)
    apply_decay(cands, clock)
    ranked = apply_importance(cands)

    for c in ranked:
        c.hit.score = c.score  # compareKeywordSearchHits reads the decayed score

    ranked.sort(key=functools.cmp_to_key(_cmp_keyword_only))
    for c in ranked:
        c.ranking_score = c.score
        if c.exact > 0:
            c.score = 1.0
    strict = [c for c in ranked if c.score >= min_score]
    chosen = strict[:max_results] if strict else [c for c in ranked if c.score >= 0][:max_results]
    return ranked, chosen


# -- the search -----------------------------------------------------------------------


def search(
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
) -> SearchResult:
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
    """
    text = query.strip()
    meta = index.meta_dict()
    model = meta.get("model") if isinstance(meta.get("model"), str) else None
    result = SearchResult(text, "hybrid", None, now_ms, max_results, min_score, index.path, model)
    result.problems.extend(index.problems)
    space = Path(workspace) if workspace is not None else None
    clock = Clock(
        now_ms,
        space if space is not None and space.is_dir() else None,
        {f.path: f.mtime_ms for f in index.files("memory")},
    )
    if not text or not index.has_memory():
        result.mode, result.reason = "empty", "empty query" if not text else "no memory index here"
        return result
    ctx = keyword_context(index, sources)
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
                " OpenClaw would rebuild the index before searching; its vectors are not compared",
                "warning",
            )
        )
    if embedder is not None:
        try:
            query_vec = embedder.embed_query(text)
        except EmbedError as exc:
            reason = f"the query could not be embedded: {exc}"
    keyword = (
        attach_recall(index, search_keyword_with_fallback(ctx, text, candidates))
        if ctx.available
        else []
    )
    if query_vec is None:
        result.mode, result.reason = "fts-only", reason
        if not ctx.available:
            result.reason = f"{reason}; and the index has no FTS table"
            return result
        ranked, chosen = finalize_keyword_only(keyword, clock, cap, min_score)
        return _finish(result, ranked, chosen[:max_results], min_score)
    models = [embedder.model] if embedder is not None else []
    vector = []
    if any(v != 0 for v in query_vec):
        vector = attach_recall(
            index, search_vector(index, query_vec, models, sources, candidates, result.problems)
        )
    if not ctx.available:
        result.mode, result.reason = "vector-only", "the index has no FTS table"
        cands = [Candidate(h, vector_score=h.score, has_vector=True, score=h.score) for h in vector]
        apply_decay(cands, clock)
        ranked = apply_importance(cands)
        ranked.sort(key=functools.cmp_to_key(_cmp_vec))
        chosen = [c for c in ranked if c.score >= min_score][:max_results]
        return _finish(result, ranked, chosen, min_score)
    merged = merge_hybrid(text, vector, keyword, clock)
    chosen = select_hybrid(merged, keyword, cap, min_score)[:max_results]
    return _finish(result, merged, chosen, min_score)


def _cmp_keyword_only(a: Candidate, b: Candidate) -> int:
    return compare_keyword_hits(a.hit, b.hit, False)


def _cmp_vec(a: Candidate, b: Candidate) -> int:
    if a.score != b.score:
        return -1 if b.score < a.score else 1
    return (
        locale_cmp(a.hit.path, b.hit.path)
        or (a.hit.start_line - b.hit.start_line)
        or (a.hit.end_line - b.hit.end_line)
    )


def _finish(
    result: SearchResult, ranked: list[Candidate], chosen: list[Candidate], min_score: float
) -> SearchResult:
    picked = {id(c) for c in chosen}
    for i, c in enumerate(ranked, 1):
        c.order = i
        c.selected = id(c) in picked
        c.below_min_score = c.score < min_score
    result.candidates = ranked
    result.results = list(chosen)
    return result
