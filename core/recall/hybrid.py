"""Hybrid search over the warm store, with every score component, and ``explain``.

The agent's formula (memory-context ``search.ts``):

* candidates: the top ``2 * limit`` segments by cosine and the top ``2 * limit``
  by BM25 (only the current session's unless cross-session);
* BM25 scores are divided by the largest BM25 score of the BM25 candidates;
* ``score = (vector_weight * cosine + bm25_weight * bm25_norm) * decay ** days``,
  where a BM25-only candidate has cosine 0 and a vector-only one bm25_norm 0;
* ``effective = score / (sum of the weights of the components that are > 0)``
  is what ``minScore`` is compared with; hits are sorted by score and cut at
  ``limit``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

import numpy as np

from core.recall.tokenize import tokenize
from core.store.segments import DAY_MS, Segment

if TYPE_CHECKING:
    from core.recall.block import RecalledBlock
    from core.recall.warm_store import WarmStore


@dataclass(frozen=True, slots=True)
class SearchConfig:
    """Knobs of the hybrid search (the agent's defaults)."""

    limit: int = 8
    min_score: float = 0.7
    vector_weight: float = 0.7
    bm25_weight: float = 0.3
    decay: float = 0.995
    cross_session: bool = False

    def with_(self, **changes: float | int | bool) -> SearchConfig:
        """A copy with some fields changed."""
        return replace(self, **changes)  # type: ignore[arg-type]


def time_decay(timestamp_ms: float, now_ms: float, decay: float) -> float:
    """``decay ** days_since`` (fractional days; 1 when decay >= 1)."""
    if decay >= 1:
        return 1.0
    if decay <= 0:
        return 0.0
    days = max(0.0, (now_ms - timestamp_ms) / DAY_MS)
    return float(decay**days)


@dataclass(frozen=True, slots=True)
class Hit:
    """One candidate with every component of its score."""

    segment: Segment
    slot: int
    vector_score: float
    """Cosine, if the segment is a vector candidate, else 0."""
    bm25_raw: float
    """BM25 score, if the segment is a BM25 candidate, else 0."""
    bm25_norm: float
    decay: float
    score: float
    """The final (ranking) score."""
    effective: float
    """Score divided by the weights of the components that are > 0 (vs minScore)."""
    vector_rank: int | None
    """1-based rank in the vector candidate list."""
    bm25_rank: int | None
    rank: int
    """1-based rank among all candidates by score."""
    passed_min_score: bool


@dataclass(slots=True)
class SearchResult:
    """Hits (after minScore and limit) and every candidate, for explanations."""

    query: str
    tokens: list[str]
    config: SearchConfig
    session_id: str | None
    now_ms: int
    hits: list[Hit]
    candidates: list[Hit]
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


def search(
    store: WarmStore,
    query: str,
    config: SearchConfig | None = None,
    *,
    session_id: str | None = None,
    now_ms: int | None = None,
) -> SearchResult:
    """Hybrid search of *query* (only *session_id*'s segments unless cross-session)."""
    started = time.perf_counter()
    cfg = config or SearchConfig()
    now = int(time.time() * 1000) if now_ms is None else now_ms
    tokens = tokenize(query)
    k = max(1, 2 * cfg.limit)
    with store.lock:  # live mode indexes and evicts in a worker: one consistent view
        mask = None if cfg.cross_session else store.session_mask(session_id)
        qvec = store.embedder.embed([query])[0]
        v_slots, v_scores = store.vectors.top(qvec, k, mask)
        b_slots, b_scores = store.bm25.top(tokens, k, mask)
        segments = store.segments
    vec = {int(s): (float(c), r) for r, (s, c) in enumerate(zip(v_slots, v_scores, strict=True), 1)}
    bm = {int(s): (float(c), r) for r, (s, c) in enumerate(zip(b_slots, b_scores, strict=True), 1)}
    max_bm = float(b_scores.max()) if len(b_scores) else 0.0
    rows = []
    for slot in [*vec, *(s for s in bm if s not in vec)]:
        seg = segments[slot]
        if seg is None:
            continue
        v, v_rank = vec.get(slot, (0.0, None))
        raw, b_rank = bm.get(slot, (0.0, None))
        norm = raw / max_bm if max_bm > 0 else 0.0
        decay = time_decay(seg.timestamp, now, cfg.decay)
        score = (cfg.vector_weight * v + cfg.bm25_weight * norm) * decay
        weights = (cfg.vector_weight if v > 0 else 0.0) + (cfg.bm25_weight if norm > 0 else 0.0)
        effective = score / weights if weights > 0 else 0.0
        rows.append((score, seg, slot, v, raw, norm, decay, effective, v_rank, b_rank))
    rows.sort(key=lambda r: -r[0])  # stable: vector candidates first on ties, as the agent
    ranked = [
        Hit(
            seg,
            slot,
            v,
            raw,
            norm,
            decay,
            score,
            eff,
            v_rank,
            b_rank,
            rank,
            cfg.min_score <= 0 or eff >= cfg.min_score,
        )
        for rank, (score, seg, slot, v, raw, norm, decay, eff, v_rank, b_rank) in enumerate(rows, 1)
    ]
    hits = [h for h in ranked if h.passed_min_score][: cfg.limit]
    result = SearchResult(query, tokens, cfg, session_id, now, hits, ranked)
    result.seconds = time.perf_counter() - started
    return result


Reason = Literal[
    "hit",
    "unknown",
    "evicted",
    "other_session",
    "no_candidate",
    "below_min_score",
    "cut_by_limit",
    "cut_by_hard_cap",
]


@dataclass(frozen=True, slots=True)
class SegmentExplanation:
    """Why a segment is or is not among the hits."""

    segment_id: str
    reason: Reason
    message: str
    hit: Hit | None = None
    cosine: float | None = None
    """The segment's cosine with the query, candidate or not."""
    cosine_rank: int | None = None
    """Its rank by cosine among the searched segments."""
    bm25: float | None = None
    bm25_rank: int | None = None


def explain(
    store: WarmStore, result: SearchResult, segment_id: str, block: RecalledBlock | None = None
) -> SegmentExplanation:
    """Tell why *segment_id* is or is not a hit of *result*.

    With the *block* built from *result*'s hits, a hit that the hard cap kept out of the
    block is reported as ``cut_by_hard_cap``.
    """
    cfg = result.config
    with store.lock:  # an eviction between the lookup and the read would break it
        slot = store.slot_of.get(segment_id)
        seg = store.segments[slot] if slot is not None else None
    if slot is None:
        known = store.stats.load is not None and any(s.id == segment_id for s in _all_loaded(store))
        if known:
            return SegmentExplanation(
                segment_id,
                "evicted",
                "evicted from the warm store (older than evictionDays or over maxSegments)",
            )
        return SegmentExplanation(segment_id, "unknown", "no segment with this id in the store")
    assert seg is not None
    if (
        not cfg.cross_session
        and result.session_id is not None
        and seg.session_id != result.session_id
    ):
        return SegmentExplanation(
            segment_id,
            "other_session",
            f"belongs to session {seg.session_id}, and cross-session recall is off",
        )
    cos, cos_rank, bm, bm_rank = _standing(store, result, slot)
    for hit in result.candidates:
        if hit.slot != slot:
            continue
        if not hit.passed_min_score:
            return SegmentExplanation(
                segment_id,
                "below_min_score",
                f"candidate (rank {hit.rank}), but effective score {hit.effective:.4f} "
                f"< minScore {cfg.min_score}",
                hit,
                cos,
                cos_rank,
                bm,
                bm_rank,
            )
        if hit in result.hits:
            pos = result.hits.index(hit) + 1
            cut = block.cut_reason(segment_id) if block is not None else None
            if cut is not None:
                return SegmentExplanation(
                    segment_id,
                    "cut_by_hard_cap",
                    f"hit #{pos}, score {hit.score:.4f}, but left out of the block: {cut}",
                    hit,
                    cos,
                    cos_rank,
                    bm,
                    bm_rank,
                )
            return SegmentExplanation(
                segment_id,
                "hit",
                f"hit #{pos}, score {hit.score:.4f}",
                hit,
                cos,
                cos_rank,
                bm,
                bm_rank,
            )
        passing = [h for h in result.candidates if h.passed_min_score]
        return SegmentExplanation(
            segment_id,
            "cut_by_limit",
            f"passes minScore but ranks {passing.index(hit) + 1} of {len(passing)}; "
            f"limit is {cfg.limit}",
            hit,
            cos,
            cos_rank,
            bm,
            bm_rank,
        )
    k = 2 * cfg.limit
    return SegmentExplanation(
        segment_id,
        "no_candidate",
        f"not a candidate in either list: cosine {cos:.4f} ranks {cos_rank}, "
        f"BM25 {bm:.4f} ranks {bm_rank if bm > 0 else '-'}; only the top {k} of each are taken",
        None,
        cos,
        cos_rank,
        bm,
        bm_rank,
    )


def _all_loaded(store: WarmStore) -> list[Segment]:
    # Segments read from the file but evicted are not kept; re-read lazily for explain.
    from core.store.segments import load_segments

    every = load_segments(store.segments_path, max_segments=-1, eviction_days=0)
    return every.segments


def _standing(store: WarmStore, result: SearchResult, slot: int) -> tuple[float, int, float, int]:
    with store.lock:  # live mode indexes and evicts in a worker: one consistent view
        mask = None if result.config.cross_session else store.session_mask(result.session_id)
        qvec = store.embedder.embed([result.query])[0]
        sims = store.vectors.cosine(qvec).astype(np.float64)
        bm = store.bm25.scores(result.tokens)
        alive = np.array([s is not None for s in store.segments], dtype=bool)
        has_vec = np.array([store.vectors.has(i) for i in range(len(alive))], dtype=bool)
    allowed = alive if mask is None else alive & mask[: len(alive)]
    cos = float(sims[slot]) if has_vec[slot] else 0.0
    cos_rank = int(np.sum(allowed & has_vec & (sims > cos))) + 1
    b = float(bm[slot])
    bm_rank = int(np.sum(allowed & (bm > b))) + 1
    return cos, cos_rank, b, bm_rank
