"""Named ranking configurations: the agent's formula (``seed``) and the lab's proved ones.

``seed`` is :func:`core.recall.hybrid.search` itself, unchanged: what the agent does.
Every other ranking is scored here, on the same warm store, and returns the same
:class:`~core.recall.hybrid.SearchResult` (the same :class:`~core.recall.hybrid.Hit`
components), so the CLI and the lab show them alike. What a ranking may change:

* the text index: Porter stems without English stopwords (:mod:`core.recall.stem`),
  and BM25's saturation and length normalisation;
* the candidates: every searched segment instead of the top ``2 * limit`` of each list;
* the fusion: the agent's weighted sum (BM25 divided by the largest BM25 of the
  candidates) or reciprocal rank fusion;
* context: a segment adds a share of its neighbours' scores (the turns before and after
  it in the same session), since an answer usually sits next to the turn that asks;
* time decay stays the search config's ``decay ** days``.

The figures that chose each one are in ``docs/notes/recall-lab.md``
(``bench/bench_recall_lab.py`` on the LoCoMo dev half).
"""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from core.recall.bm25 import BM25Index
from core.recall.hybrid import Hit, SearchConfig, SearchResult, search
from core.recall.stem import STOPWORDS, stem
from core.recall.tokenize import tokenize
from core.recall.topk import best_k
from core.store.segments import DAY_MS

if TYPE_CHECKING:
    from core.recall.warm_store import WarmStore

F64 = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Ranking:
    """One named way of ranking the warm store for a query."""

    name: str
    summary: str
    stemmed: bool = False
    """Text index of Porter stems, English stopwords left out (query and segments)."""
    saturation: float = 1.5
    """BM25's term-frequency saturation (the agent: 1.5)."""
    length_b: float = 0.75
    """BM25's length normalisation (the agent: 0.75)."""
    every_candidate: bool = False
    """Score every searched segment, not the top ``2 * limit`` by cosine and by BM25."""
    fusion: Literal["weighted", "rrf"] = "weighted"
    rrf_k: int = 60
    neighbours: float = 0.0
    """Share of each adjacent turn's score (same session, file order) a segment adds."""
    vector_weight: float = 0.7
    text_weight: float = 0.3

    def search_config(self, base: SearchConfig) -> SearchConfig:
        """*base* with this ranking's weights."""
        return base.with_(vector_weight=self.vector_weight, bm25_weight=self.text_weight)


SEED = Ranking("seed", "the agent's formula (memory-context search.ts), unchanged")
RANKINGS: dict[str, Ranking] = {
    r.name: r
    for r in (
        SEED,
        Ranking(
            "all",
            "the agent's weighted sum over every searched segment (no 2 x limit cut-off)",
            every_candidate=True,
        ),
        Ranking(
            "rrf",
            "reciprocal rank fusion (k 60) of the cosine and BM25 rankings of every segment",
            every_candidate=True,
            fusion="rrf",
            vector_weight=0.3,
            text_weight=0.7,
        ),
        Ranking(
            "stem",
            "the agent's formula over a text index of Porter stems without stopwords",
            stemmed=True,
        ),
        Ranking(
            "stem-all",
            "stems without stopwords, BM25 k1 0.9 b 0.4, every segment, weights 0.3/0.7",
            stemmed=True,
            saturation=0.9,
            length_b=0.4,
            every_candidate=True,
            vector_weight=0.3,
            text_weight=0.7,
        ),
        Ranking(
            "context",
            "stems, BM25 k1 0.9 b 0.4, every segment, weights 0.4/0.6, plus 0.3 of each "
            "neighbouring turn's score (the recommended default)",
            stemmed=True,
            saturation=0.9,
            length_b=0.4,
            every_candidate=True,
            neighbours=0.3,
            vector_weight=0.4,
            text_weight=0.6,
        ),
    )
}
DEFAULT_RANKING = "context"
"""The recommended ranking: ``--ranking``'s default on ``recall`` and ``eval``."""


def get_ranking(name: str) -> Ranking:
    """The ranking called *name*.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the known ones).
    """
    found = RANKINGS.get(name)
    if found is None:
        raise ValueError(f"unknown ranking {name!r}: use one of {', '.join(RANKINGS)}")
    return found


def text_tokens(text: str, ranking: Ranking) -> list[str]:
    """The BM25 tokens of *text* for *ranking*'s text index."""
    tokens = tokenize(text)
    if not ranking.stemmed:
        return tokens
    return [stem(t) for t in tokens if t not in STOPWORDS]


def _own_text_index(ranking: Ranking) -> bool:
    """Whether *ranking* needs a text index other than the store's own."""
    return ranking.stemmed or (ranking.saturation, ranking.length_b) != (1.5, 0.75)


class _Slots:
    """Per store and ranking: each slot's liveness, session and (if needed) text index.

    Kept in step with the store on each search: new slots are indexed, evicted ones
    dropped; nothing is redone while the store has not changed.
    """

    def __init__(self, ranking: Ranking) -> None:
        self.ranking = ranking
        self.index = BM25Index(ranking.saturation, ranking.length_b, 0.25)
        self.own_index = _own_text_index(ranking)
        self.alive = np.zeros(0, dtype=bool)
        self.sessions = np.zeros(0, dtype=np.int64)
        self._codes: dict[str, int] = {}
        self._signature: tuple[int, int] = (-1, -1)

    def sync(self, store: WarmStore) -> None:
        """Index new slots and drop evicted ones (call under ``store.lock``)."""
        segments = store.segments
        signature = (len(segments), len(store))
        if signature == self._signature:
            return
        first = len(self.alive)
        new = segments[first:]
        if self.own_index:
            self.index.add_many([text_tokens(s.content, self.ranking) if s else [] for s in new])
        codes = [self._codes.setdefault(s.session_id, len(self._codes)) if s else -1 for s in new]
        self.sessions = np.concatenate([self.sessions, np.asarray(codes, dtype=np.int64)])
        self.alive = np.fromiter((s is not None for s in segments), dtype=bool, count=len(segments))
        if self.own_index:
            for slot in np.flatnonzero(~self.alive):
                self.index.remove(int(slot))
        self._signature = signature


_SLOTS: weakref.WeakKeyDictionary[WarmStore, dict[str, _Slots]] = weakref.WeakKeyDictionary()


def _slots(store: WarmStore, ranking: Ranking) -> _Slots:
    per_store = _SLOTS.setdefault(store, {})
    found = per_store.get(ranking.name)
    if found is None or found.ranking != ranking:
        found = per_store[ranking.name] = _Slots(ranking)
    found.sync(store)
    return found


@dataclass(slots=True)
class Scores:
    """Every searched slot's components for one query under one ranking."""

    allowed: npt.NDArray[np.bool_]
    cosine: F64
    text: F64
    """Raw BM25 of each slot."""
    text_norm: F64
    decay: F64
    score: F64
    effective: F64
    candidate: npt.NDArray[np.bool_]
    tokens: list[str]


def _top_mask(values: F64, allowed: npt.NDArray[np.bool_], k: int) -> npt.NDArray[np.bool_]:
    """The top *k* allowed slots by *values* (those > 0 for BM25, as the agent).

    Ties go to the earlier slot, as in the search (:func:`core.recall.topk.best_k`).
    """
    idx = np.flatnonzero(allowed)
    out = np.zeros(len(values), dtype=bool)
    if len(idx) > k:
        idx = idx[best_k(np.negative(values[idx]), k)]
    out[idx] = True
    return out


def _ranks(values: F64, allowed: npt.NDArray[np.bool_]) -> F64:
    """1-based rank of each allowed slot by *values*, best first (ties by slot)."""
    idx = np.flatnonzero(allowed)
    order = idx[np.argsort(-values[idx], kind="stable")]
    ranks = np.full(len(values), np.inf)
    ranks[order] = np.arange(1, len(order) + 1)
    return ranks


def score_all(
    store: WarmStore,
    query: str,
    cfg: SearchConfig,
    ranking: Ranking,
    *,
    session_id: str | None,
    now_ms: int,
) -> Scores:
    """Score every searched segment of *store* for *query* under *ranking* (not ``seed``)."""
    tokens = text_tokens(query, ranking)
    with store.lock:  # live mode indexes and evicts in a worker: one consistent view
        slots = _slots(store, ranking)
        mask = None if cfg.cross_session else store.session_mask(session_id)
        qvec = store.embedder.embed([query])[0]
        n = len(store.segments)
        cos = store.vectors.cosine(qvec)[:n].astype(np.float64)
        raw = (slots.index if slots.own_index else store.bm25).scores(tokens)[:n]
        alive, sessions = slots.alive[:n], slots.sessions[:n]
        ts = store.timestamps()[:n]
    cos = np.pad(cos, (0, n - len(cos)))
    raw = np.pad(raw.astype(np.float64), (0, n - len(raw)))
    allowed = alive if mask is None else alive & mask[:n]
    if ranking.every_candidate:
        candidate = allowed.copy()
    else:
        k = max(1, 2 * cfg.limit)
        candidate = _top_mask(cos, allowed, k) | _top_mask(raw, allowed & (raw > 0), k)
    cos_c = np.where(candidate, cos, 0.0)
    max_raw = float(raw[candidate].max()) if candidate.any() else 0.0
    norm = np.where(candidate, raw / max_raw, 0.0) if max_raw > 0 else np.zeros(n)
    wv, wt = cfg.vector_weight, cfg.bm25_weight
    if ranking.fusion == "rrf":
        rc = _ranks(cos_c, candidate)
        rt = _ranks(np.where(raw > 0, raw, -np.inf), candidate & (raw > 0))
        score = wv / (ranking.rrf_k + rc) + wt / (ranking.rrf_k + rt)
        full = (wv + wt) / (ranking.rrf_k + 1)
        effective = score / full if full > 0 else score * 0
    else:
        score = wv * cos_c + wt * norm
        weights = np.where(cos_c > 0, wv, 0.0) + np.where(norm > 0, wt, 0.0)
        effective = np.divide(score, weights, out=np.zeros(n), where=weights > 0)
    if ranking.neighbours:
        score = score + ranking.neighbours * _neighbour_sum(score, candidate, sessions)
        effective = effective + ranking.neighbours * _neighbour_sum(effective, candidate, sessions)
    decay = _decay(ts, now_ms, cfg.decay)
    score = np.where(candidate, score * decay, -np.inf)
    return Scores(allowed, cos, raw, norm, decay, score, effective * decay, candidate, tokens)


def _neighbour_sum(
    score: F64, candidate: npt.NDArray[np.bool_], sessions: npt.NDArray[np.int64]
) -> F64:
    """For each slot, the scores of the previous and next searched slot of its session."""
    idx = np.flatnonzero(candidate)
    out = np.zeros(len(score))
    if len(idx) < 2:
        return out
    s = score[idx]
    same = sessions[idx[1:]] == sessions[idx[:-1]]
    around = np.zeros(len(idx))
    around[1:] += np.where(same, s[:-1], 0.0)
    around[:-1] += np.where(same, s[1:], 0.0)
    out[idx] = around
    return out


def _decay(ts: F64, now_ms: int, decay: float) -> F64:
    if decay >= 1:
        return np.ones(len(ts))
    if decay <= 0:
        return np.zeros(len(ts))
    return np.power(decay, np.maximum(0.0, (now_ms - ts) / DAY_MS))


def ranked_search(
    store: WarmStore,
    query: str,
    config: SearchConfig | None = None,
    ranking: Ranking = SEED,
    *,
    session_id: str | None = None,
    now_ms: int | None = None,
) -> SearchResult:
    """Search *query* with *ranking*; ``seed`` is exactly :func:`~core.recall.hybrid.search`."""
    if ranking == SEED:
        return search(store, query, config, session_id=session_id, now_ms=now_ms)
    started = time.perf_counter()
    cfg = config or ranking.search_config(SearchConfig())
    now = int(time.time() * 1000) if now_ms is None else now_ms
    sc = score_all(store, query, cfg, ranking, session_id=session_id, now_ms=now)
    keep = max(1, 2 * cfg.limit)
    idx = np.flatnonzero(sc.candidate)
    order = idx[best_k(np.negative(sc.score[idx]), keep)]  # best first, ties by slot
    rank_cos = _rank_of(sc.cosine, sc.allowed, order)
    rank_text = _rank_of(np.where(sc.text > 0, sc.text, -np.inf), sc.allowed & (sc.text > 0), order)
    with store.lock:
        segments = [store.segments[int(i)] for i in order]
    ranked: list[Hit] = []
    for rank, (slot, seg) in enumerate(zip(order, segments, strict=True), 1):
        if seg is None:  # evicted meanwhile
            continue
        i = int(slot)
        eff = float(sc.effective[i])
        ranked.append(
            Hit(
                seg,
                i,
                float(sc.cosine[i]),
                float(sc.text[i]),
                float(sc.text_norm[i]),
                float(sc.decay[i]),
                float(sc.score[i]),
                eff,
                rank_cos.get(i),
                rank_text.get(i),
                rank,
                cfg.min_score <= 0 or eff >= cfg.min_score,
            )
        )
    hits = [h for h in ranked if h.passed_min_score][: cfg.limit]
    result = SearchResult(query, sc.tokens, cfg, session_id, now, hits, ranked)
    result.notes.append(f"ranking {ranking.name}: {ranking.summary}")
    result.seconds = time.perf_counter() - started
    return result


def _rank_of(
    values: F64, allowed: npt.NDArray[np.bool_], slots: npt.NDArray[np.intp]
) -> dict[int, int]:
    """1-based rank among *allowed* slots by *values* of each of *slots* that is allowed."""
    mine = slots[allowed[slots]]
    if not len(mine):
        return {}
    above = (values[allowed][None, :] > values[mine][:, None]).sum(axis=1)
    return {int(s): int(a) + 1 for s, a in zip(mine, above, strict=True)}


def rank_text(
    store: WarmStore, result: SearchResult, ranking: Ranking, segment_id: str
) -> str | None:
    """Where *segment_id* stands in *result*'s full ranking, in words (not ``seed``)."""
    slot = store.slot_of.get(segment_id)
    if slot is None:
        return None
    sc = score_all(
        store,
        result.query,
        result.config,
        ranking,
        session_id=result.session_id,
        now_ms=result.now_ms,
    )
    if not sc.allowed[slot]:
        return "not searched (another session)"
    mine = sc.score[slot]
    rank = int(np.sum(sc.allowed & (sc.score > mine))) + 1
    return (
        f"#{rank} of {int(sc.allowed.sum())} by the {ranking.name} ranking: score "
        f"{mine:.4f}, cosine {sc.cosine[slot]:.4f}, BM25 {sc.text[slot]:.4f} "
        f"(norm {sc.text_norm[slot]:.4f}), decay {sc.decay[slot]:.4f}"
    )
