"""Hybrid search over the warm store, with every score component, and ``explain``.

The agent's formula (memory-context ``search.ts``):

* candidates: the top ``2 * limit`` segments by cosine and the top ``2 * limit``
  by BM25 (only the current session's unless cross-session);
* BM25 scores are divided by the largest BM25 score of the BM25 candidates;
* ``score = (vector_weight * cosine + bm25_weight * bm25_norm) * decay ** days``,
  where a BM25-only candidate has cosine 0 and a vector-only one bm25_norm 0, days
  are fractional days since the segment (a future one: 0), and a decay >= 1 gives 1,
  <= 0 gives 0;
* ``effective = score / (sum of the weights of the components that are > 0)``
  is what ``minScore`` is compared with; hits are sorted by score and cut at
  ``limit``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from operator import attrgetter
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
    ranked = _rank(segments, v_slots.tolist(), v_scores, b_slots.tolist(), b_scores, cfg, now)
    hits = [h for h in ranked if h.passed_min_score][: cfg.limit]
    result = SearchResult(query, tokens, cfg, session_id, now, hits, ranked)
    result.seconds = time.perf_counter() - started
    return result


def _rank(
    segments: list[Segment | None],
    v_slots: list[int],
    v_scores: np.ndarray,
    b_slots: list[int],
    b_scores: np.ndarray,
    cfg: SearchConfig,
    now: int,
) -> list[Hit]:
    """Score the candidates with the agent's formula and rank them (see the module doc).

    The vector candidates first, then the BM25-only ones; a stable sort by score keeps
    that order on ties, as the agent. Plain floats throughout (``tolist`` gives what
    ``float()`` of each item gives), each expression as the module doc writes it, so
    the figures are the formula's to the last bit.
    """
    cosines: list[float] = v_scores.tolist()
    raws: list[float] = b_scores.tolist()
    max_bm = max(raws) if raws else 0.0  # no NaN: BM25 candidates score > 0
    b_rank = {slot: rank for rank, slot in enumerate(b_slots, 1)}
    # (slot, cosine, vector rank, raw BM25, BM25 rank): the vector candidates, then the
    # BM25-only ones (cosine 0 in the same expression below)
    rows: list[tuple[int, float, int | None, float, int | None]] = []
    for v_rank, (slot, v) in enumerate(zip(v_slots, cosines, strict=True), 1):
        found = b_rank.get(slot)
        rows.append((slot, v, v_rank, raws[found - 1] if found else 0.0, found))
    in_vec = set(v_slots)
    for b_at, (slot, raw) in enumerate(zip(b_slots, raws, strict=True), 1):
        if slot not in in_vec:
            rows.append((slot, 0.0, None, raw, b_at))
    wv, wb, low, base = cfg.vector_weight, cfg.bm25_weight, cfg.min_score, cfg.decay
    decaying = 0 < base < 1  # else every decay is 1 (decay >= 1) or 0 (decay <= 0)
    flat = 1.0 if base >= 1 else 0.0
    built: list[_HitBuilder] = []
    for slot, v, vr, raw, br in rows:
        seg = segments[slot]
        if seg is None:  # evicted meanwhile
            continue
        norm = raw / max_bm if max_bm > 0 else 0.0
        if decaying:  # decay ** days_since, fractional days, 1 for the future (inline)
            days = (now - seg.timestamp) / DAY_MS
            decay = float(base**days) if days > 0 else 1.0
        else:
            decay = flat
        score = (wv * v + wb * norm) * decay
        weights = (wv if v > 0 else 0.0) + (wb if norm > 0 else 0.0)
        eff = score / weights if weights > 0 else 0.0
        ok = low <= 0 or eff >= low
        hit = _HitBuilder(seg, slot, v, raw, norm, decay, score, eff, vr, br, 0, ok)
        built.append(hit)
    # stable, and stable reversed: vector candidates first on ties, as the agent
    built.sort(key=_SCORE, reverse=True)
    for rank, b in enumerate(built, 1):
        b.rank = rank
        b.__class__ = Hit  # type: ignore[assignment]  # see _HitBuilder
    return built  # type: ignore[return-value]


_SCORE = attrgetter("score")


class _HitBuilder:
    """A :class:`Hit` built at plain-attribute speed, then given its class.

    A frozen dataclass sets each field through ``object.__setattr__``: 12 fields cost
    about 2 us, a search builds some 30 hits, a fifth of a 1 ms budget. This class has
    the same slots, so an instance of it may take the class ``Hit`` (Python allows
    ``__class__`` assignment between classes of one layout, and refuses it otherwise:
    a field added to ``Hit`` and not here fails on the first search).
    """

    __slots__ = Hit.__slots__

    def __init__(
        self,
        segment: Segment,
        slot: int,
        vector_score: float,
        bm25_raw: float,
        bm25_norm: float,
        decay: float,
        score: float,
        effective: float,
        vector_rank: int | None,
        bm25_rank: int | None,
        rank: int,
        passed_min_score: bool,
    ) -> None:
        self.segment = segment
        self.slot = slot
        self.vector_score = vector_score
        self.bm25_raw = bm25_raw
        self.bm25_norm = bm25_norm
        self.decay = decay
        self.score = score
        self.effective = effective
        self.vector_rank = vector_rank
        self.bm25_rank = bm25_rank
        self.rank = rank
        self.passed_min_score = passed_min_score


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
class Standing:
    """Where a segment stands for a query, candidate or not: every score component.

    The *full ranking* scores every searched segment with the agent's formula as if it
    were in both candidate lists (cosine and BM25 normalised by the largest BM25 of the
    search); the search itself scores only the candidates, the top ``cutoff`` by cosine
    and the top ``cutoff`` by BM25.
    """

    cosine: float
    cosine_rank: int
    """1-based rank by cosine among the searched segments that have a vector (ties: the
    earlier slot first, as the search cuts its candidates: a rank within :attr:`cutoff`
    is a vector candidate)."""
    bm25: float
    """Raw BM25 of the segment's text for the query tokens (0: no query token)."""
    bm25_rank: int
    """1-based rank by raw BM25, ties as :attr:`cosine_rank` (a candidate when within
    :attr:`cutoff` and :attr:`bm25` > 0)."""
    bm25_norm: float
    decay: float
    score: float
    """``(vector_weight * cosine + bm25_weight * bm25_norm) * decay``."""
    rank: int
    """1-based rank of :attr:`score` in the full ranking."""
    searched: int
    """Segments searched (this session's, or every session's with cross-session)."""
    cutoff: int
    """Candidates taken from each list: ``2 * limit``."""


@dataclass(frozen=True, slots=True)
class SegmentExplanation:
    """Why a segment is or is not among the hits."""

    segment_id: str
    reason: Reason
    message: str
    hit: Hit | None = None
    standing: Standing | None = None
    """Its place in the full ranking (None when it is not searched at all)."""


HEADLINES: dict[str, str] = {
    "hit": "Recalled",
    "unknown": "Not in the store",
    "evicted": "Evicted",
    "other_session": "Another session",
    "no_candidate": "Not a candidate",
    "below_min_score": "Below minScore",
    "cut_by_limit": "Cut by the limit",
    "cut_by_hard_cap": "Cut by the hard cap",
}
"""The reason of an explanation in a few words (the app's headline, the CLI's prefix)."""


def explain_text(expl: SegmentExplanation) -> str:
    """*expl* in one paragraph: the reason, the full-ranking rank, the cut-off, the components.

    The recall view and ``memlens eval`` both print this text, so that they never tell
    two stories about one segment.
    """
    text = f"{HEADLINES.get(expl.reason, expl.reason)}: {expl.message}"
    st = expl.standing
    if st is None:
        return text + "."
    bm = f"BM25 {st.bm25:.4f} (#{st.bm25_rank})" if st.bm25 > 0 else "BM25 0 (no query token)"
    return (
        f"{text}. Full ranking: #{st.rank} of {st.searched} searched segments, "
        f"score {st.score:.4f} = (vector weight x cosine {st.cosine:.4f} (#{st.cosine_rank}) "
        f"+ text weight x BM25 norm {st.bm25_norm:.4f}) x decay {st.decay:.4f}; {bm}. "
        f"Candidate cut-off: the top {st.cutoff} by cosine and the top {st.cutoff} by BM25."
    )


def explain(
    store: WarmStore, result: SearchResult, segment_id: str, block: RecalledBlock | None = None
) -> SegmentExplanation:
    """Tell why *segment_id* is or is not a hit of *result*.

    With the *block* built from *result*'s hits, a hit that the hard cap kept out of the
    block is reported as ``cut_by_hard_cap``. :func:`explain_text` says it in words.
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
    st = _standing(store, result, slot)
    hit = next((h for h in result.candidates if h.slot == slot), None)
    if hit is None:
        b_rank = f"#{st.bm25_rank}" if st.bm25 > 0 else "no rank (no query token)"
        return SegmentExplanation(
            segment_id,
            "no_candidate",
            f"in neither candidate list: cosine #{st.cosine_rank} and BM25 {b_rank}, "
            f"and only the top {st.cutoff} of each list are scored",
            None,
            st,
        )
    n = len(result.candidates)
    if not hit.passed_min_score:
        return SegmentExplanation(
            segment_id,
            "below_min_score",
            f"candidate #{hit.rank} of {n}, but below minScore: its effective score "
            f"{hit.effective:.4f} < minScore {cfg.min_score}",
            hit,
            st,
        )
    if hit in result.hits:
        pos = result.hits.index(hit) + 1
        cut = block.cut_reason(segment_id) if block is not None else None
        if cut is not None:
            return SegmentExplanation(
                segment_id,
                "cut_by_hard_cap",
                f"hit #{pos} (candidate #{hit.rank} of {n}), score {hit.score:.4f}, "
                f"but left out of the block: {cut}",
                hit,
                st,
            )
        return SegmentExplanation(
            segment_id,
            "hit",
            f"hit #{pos} (candidate #{hit.rank} of {n}), score {hit.score:.4f}",
            hit,
            st,
        )
    passing = [h for h in result.candidates if h.passed_min_score]
    return SegmentExplanation(
        segment_id,
        "cut_by_limit",
        f"candidate #{hit.rank} of {n} passes minScore but ranks {passing.index(hit) + 1} "
        f"of {len(passing)} that do; the limit is {cfg.limit}",
        hit,
        st,
    )


def _all_loaded(store: WarmStore) -> list[Segment]:
    # Segments read from the file but evicted are not kept; re-read lazily for explain.
    from core.store.segments import load_segments

    every = load_segments(store.segments_path, max_segments=-1, eviction_days=0)
    return every.segments


def _standing(store: WarmStore, result: SearchResult, slot: int) -> Standing:
    """Where the segment in *slot* stands for *result*'s query (see :class:`Standing`)."""
    cfg = result.config
    with store.lock:  # live mode indexes and evicts in a worker: one consistent view
        mask = None if cfg.cross_session else store.session_mask(result.session_id)
        qvec = store.embedder.embed([result.query])[0]
        sims = store.vectors.cosine(qvec).astype(np.float64)
        bm = store.bm25.scores(result.tokens).astype(np.float64)
        alive = np.array([s is not None for s in store.segments], dtype=bool)
        has_vec = np.array([store.vectors.has(i) for i in range(len(alive))], dtype=bool)
        ts = store.timestamps()
    n = len(alive)
    sims, bm, ts = _fit(sims, n), _fit(bm, n), _fit(ts, n)
    allowed = alive if mask is None else alive & mask[:n]
    cos_all = np.where(has_vec, sims, 0.0)
    cos = float(cos_all[slot])
    before = np.arange(n) < slot  # ties rank the earlier slot first, as the search's cut
    cos_rank = int(np.sum(allowed & has_vec & ((sims > cos) | ((sims == cos) & before)))) + 1
    b = float(bm[slot])
    bm_rank = int(np.sum(allowed & ((bm > b) | ((bm == b) & before)))) + 1
    max_bm = float(bm[allowed].max()) if allowed.any() else 0.0
    norm = bm / max_bm if max_bm > 0 else np.zeros(n)
    if cfg.decay >= 1:
        decay = np.ones(n)
    elif cfg.decay <= 0:
        decay = np.zeros(n)
    else:
        days = np.maximum(0.0, (result.now_ms - ts) / DAY_MS)
        decay = np.power(cfg.decay, days)
    score = (cfg.vector_weight * cos_all + cfg.bm25_weight * norm) * decay
    mine = float(score[slot])
    rank = int(np.sum(allowed & (score > mine))) + 1
    return Standing(
        cos,
        cos_rank,
        b,
        bm_rank,
        float(norm[slot]),
        float(decay[slot]),
        mine,
        rank,
        int(allowed.sum()),
        max(1, 2 * cfg.limit),
    )


def _fit(values: np.ndarray, n: int) -> np.ndarray:
    """*values* cut or zero-padded to *n* (an index may lag a slot appended meanwhile)."""
    if len(values) >= n:
        return values[:n]
    return np.concatenate([values, np.zeros(n - len(values))])
