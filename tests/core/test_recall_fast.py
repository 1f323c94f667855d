"""The fast recall paths give what the straightforward computation gives, bit for bit.

The reference here is the search as it was before it was made fast (issue 19 item 7),
with its one rule for ties: the vector and BM25 top-k by a stable sort of every slot
by score (ties to the earlier slot), BM25 summed term by term from
each document's own token counts, the candidates scored one at a time and each
:class:`Hit` built by its constructor. The store has ties (the same text in two
sessions, short texts), terms in most documents, sessions large and small, slots
without a vector, removed slots, and it changes after its caches are filled.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import FrozenInstanceError

import numpy as np
import pytest

from core.embed.hash import HashEmbedder
from core.recall.bm25 import length_norm, term_scores
from core.recall.hybrid import Hit, SearchConfig, explain, search
from core.recall.tokenize import tokenize
from core.recall.topk import SORTED, best_k
from core.recall.warm_store import StoreSettings, WarmStore
from core.store.segments import DAY_MS, append_segments, make_segment

NOW = 1_800_000_000_000
WORDS = [f"w{i}" for i in range(150)] + ["parser", "apply_discount", "cacheKey", "src/app.ts"]
SESSIONS = ["big"] * 8 + ["s1", "s2", "s3", "s4"] * 3 + ["tiny"]


def _text(rng: random.Random) -> str:
    words = [
        rng.choice(WORDS[: 12 if rng.random() < 0.5 else None]) for _ in range(rng.randint(1, 9))
    ]
    if rng.random() < 0.6:  # "the" in most segments: a term denser than a quarter of the slots
        words.insert(rng.randrange(len(words) + 1), "the")
    return " ".join(words)


def _segments(rng: random.Random, count: int, start: int) -> list:
    ids = iter(f"00000000-0000-4000-8000-{start + i:012d}" for i in range(count))
    out, texts = [], []
    for _ in range(count):
        if texts and rng.random() < 0.05:  # the same text again in another session: ties
            text = rng.choice(texts)
        else:
            text = _text(rng)
            texts.append(text)
        out.append(
            make_segment(
                rng.choice(SESSIONS),
                rng.choice(["user", "assistant"]),
                text,
                timestamp=NOW - rng.choice([0, DAY_MS, rng.randint(0, 200 * DAY_MS)]),
                new_id=lambda: next(ids),
            )
        )
    return out


def _queries(rng: random.Random, count: int) -> list[str]:
    out = ["", "the", "the the parser", "nothing-known xyzzy", "w3 w3 w3", "apply_discount"]
    while len(out) < count:
        out.append(
            " ".join(rng.choice([*WORDS, "the", "unseen"]) for _ in range(rng.randint(1, 5)))
        )
    return out


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> WarmStore:
    rng = random.Random(19)
    folder = tmp_path_factory.mktemp("recall-fast")
    append_segments(folder / "segments.jsonl", _segments(rng, 2400, 0))
    store = WarmStore.open(folder, HashEmbedder(), StoreSettings(eviction_days=0), now_ms=NOW)
    store.embed_missing(save=False)
    for query in _queries(rng, 40):  # fill the caches, then change the store under them
        search(store, query, SearchConfig(min_score=0, cross_session=True), now_ms=NOW)
        search(store, query, SearchConfig(), session_id="s1", now_ms=NOW)
    store.index_appended(_segments(rng, 60, 10_000), now_ms=NOW)  # slots without a vector
    store.add("s1", "user", "the parser w1 w2 once more", timestamp=NOW, write=False)
    store.settings = StoreSettings(max_segments=2300, eviction_days=0)
    assert len(store.evict(now_ms=NOW)) > 100  # removed slots
    return store


# -- the reference: the search as it was ----------------------------------------------
def _ref_vector_top(store: WarmStore, query: str, k: int, mask):
    sims = store.vectors.cosine(store.embedder.embed([query])[0])
    n = len(sims)
    has = np.array([store.vectors.has(i) for i in range(n)], dtype=bool)
    allowed = has if mask is None else has & mask[:n]
    idx = np.flatnonzero(allowed)
    chosen = idx[np.argsort(-sims[idx], kind="stable")][:k]
    return chosen, sims[chosen]


class _RefBM25:
    """BM25 of every slot from the live segments' own token counts."""

    def __init__(self, store: WarmStore) -> None:
        self.index = store.bm25
        counts = [Counter(tokenize(s.content)) if s else Counter() for s in store.segments]
        lengths = np.array([sum(c.values()) for c in counts], dtype=np.float64)
        self.norm = length_norm(lengths, self.index.avgdl())
        postings: dict[str, list[tuple[int, int]]] = {}
        for slot, c in enumerate(counts):
            for term, tf in c.items():
                postings.setdefault(term, []).append((slot, tf))
        self.postings = {
            t: (np.array([d for d, _ in p]), np.array([f for _, f in p], dtype=np.float64))
            for t, p in postings.items()
        }
        self.n = len(counts)

    def scores(self, tokens: list[str]) -> np.ndarray:
        out = np.zeros(self.n)
        for term in tokens:
            idf = self.index.idf(term)
            if idf and term in self.postings:
                docs, tf = self.postings[term]
                out[docs] += term_scores(idf, tf, self.norm[docs])
        return out

    def top(self, tokens: list[str], k: int, mask):
        scores = self.scores(tokens)
        if mask is not None:
            scores = np.where(mask[: len(scores)], scores, 0.0)
        positive = np.flatnonzero(scores > 0)
        chosen = positive[np.argsort(-scores[positive], kind="stable")][:k]
        return chosen, scores[chosen]


def _decay(timestamp: int, base: float) -> float:
    if base >= 1:
        return 1.0
    if base <= 0:
        return 0.0
    days = (NOW - timestamp) / DAY_MS
    return float(base**days) if days > 0 else 1.0


def _ref_search(store: WarmStore, bm: _RefBM25, query: str, cfg: SearchConfig, session):
    k = max(1, 2 * cfg.limit)
    mask = None if cfg.cross_session else store.session_mask(session)
    v_slots, v_scores = _ref_vector_top(store, query, k, mask)
    b_slots, b_scores = bm.top(tokenize(query), k, mask)
    vec = {int(s): (float(c), r) for r, (s, c) in enumerate(zip(v_slots, v_scores, strict=True), 1)}
    bms = {int(s): (float(c), r) for r, (s, c) in enumerate(zip(b_slots, b_scores, strict=True), 1)}
    max_bm = float(b_scores.max()) if len(b_scores) else 0.0
    rows = []
    for slot in [*vec, *(s for s in bms if s not in vec)]:
        seg = store.segments[slot]
        v, v_rank = vec.get(slot, (0.0, None))
        raw, b_rank = bms.get(slot, (0.0, None))
        norm = raw / max_bm if max_bm > 0 else 0.0
        decay = _decay(seg.timestamp, cfg.decay)
        score = (cfg.vector_weight * v + cfg.bm25_weight * norm) * decay
        weights = (cfg.vector_weight if v > 0 else 0.0) + (cfg.bm25_weight if norm > 0 else 0.0)
        eff = score / weights if weights > 0 else 0.0
        rows.append((score, seg, slot, v, raw, norm, decay, eff, v_rank, b_rank))
    rows.sort(key=lambda r: -r[0])
    low = cfg.min_score
    ranked = [
        Hit(seg, slot, v, raw, norm, decay, score, eff, vr, br, rank, low <= 0 or eff >= low)
        for rank, (score, seg, slot, v, raw, norm, decay, eff, vr, br) in enumerate(rows, 1)
    ]
    return [h for h in ranked if h.passed_min_score][: cfg.limit], ranked


def _bits(hits: list[Hit]) -> list[tuple]:
    floats = ("vector_score", "bm25_raw", "bm25_norm", "decay", "score", "effective")
    return [
        (
            h.segment.id,
            h.slot,
            h.vector_rank,
            h.bm25_rank,
            h.rank,
            h.passed_min_score,
            *(float(getattr(h, name)).hex() for name in floats),
        )
        for h in hits
    ]


CONFIGS = [
    (SearchConfig(min_score=0, cross_session=True), None),
    (SearchConfig(), "big"),  # more than a quarter of the slots
    (SearchConfig(limit=3, min_score=0.3, decay=1.0), "s1"),  # a few hundred slots
    (SearchConfig(limit=20, min_score=0.5, decay=0.9), "tiny"),  # fewer than 2 x limit
    (SearchConfig(limit=5, min_score=0.0), "no-such-session"),
    (SearchConfig(limit=1, min_score=0.0, decay=0.0, cross_session=True), None),
]


def test_search_equals_the_straightforward_computation(store: WarmStore) -> None:
    bm = _RefBM25(store)
    queries = _queries(random.Random(7), 240)
    compared = tied = 0
    for i, query in enumerate(queries):
        for cfg, session in (CONFIGS[i % len(CONFIGS)], CONFIGS[(i * 7 + 3) % len(CONFIGS)]):
            got = search(store, query, cfg, session_id=session, now_ms=NOW)
            hits, ranked = _ref_search(store, bm, query, cfg, session)
            assert _bits(got.candidates) == _bits(ranked), (query, cfg, session)
            assert _bits(got.hits) == _bits(hits)
            assert all(type(h) is Hit for h in got.candidates)
            assert all(any(h is c for c in got.candidates) for h in got.hits)
            scores = [h.bm25_raw for h in got.candidates if h.bm25_rank is not None]
            tied += len(scores) != len(set(scores))
            compared += 1
    assert compared == 2 * len(queries)
    assert tied > 50  # BM25 ties at the cut were compared


def test_why_not_ranks_agree_with_the_candidate_cut(store: WarmStore) -> None:
    """A standing rank within the cut-off is a candidate, ties included, and vice versa."""
    checked = tied = 0
    for i, query in enumerate(_queries(random.Random(11), 24)):
        cfg, session = CONFIGS[i % len(CONFIGS)]
        result = search(store, query, cfg, session_id=session, now_ms=NOW)
        by_slot = {h.slot: h for h in result.candidates}
        mask = None if cfg.cross_session else store.session_mask(session)
        slots = [
            s
            for s, seg in enumerate(store.segments)
            if seg is not None and (mask is None or (s < len(mask) and mask[s]))
        ]
        for slot in slots[:: max(1, len(slots) // 30)] + list(by_slot):
            st = explain(store, result, store.segments[slot].id).standing
            assert st is not None
            hit = by_slot.get(slot)
            in_vec = store.vectors.has(slot) and st.cosine_rank <= st.cutoff
            in_bm = st.bm25 > 0 and st.bm25_rank <= st.cutoff
            assert (hit is not None and hit.vector_rank is not None) == in_vec, (query, slot)
            assert (hit is not None and hit.bm25_rank is not None) == in_bm, (query, slot)
            if hit is not None and hit.bm25_rank is not None:
                assert hit.bm25_rank == st.bm25_rank
                tied += sum(h.bm25_raw == hit.bm25_raw for h in result.candidates) > 1
            checked += 1
    assert checked > 500 and tied > 10


def test_bm25_scores_equal_the_reference(store: WarmStore) -> None:
    bm = _RefBM25(store)
    assert any(store.bm25.df(t) * 4 > store.bm25.slots for t in ["the"])  # a dense term
    for query in _queries(random.Random(8), 120):
        tokens = tokenize(query)
        got, want = store.bm25.scores(tokens), bm.scores(tokens)
        assert np.array_equal(got + 0.0, want + 0.0)  # + 0.0: a removed slot's -0.0 is 0.0
        assert np.array_equal((got + 0.0).view(np.int64), (want + 0.0).view(np.int64))


def test_hits_are_frozen_hits(store: WarmStore) -> None:
    result = search(store, "the parser", SearchConfig(min_score=0), session_id="s1", now_ms=NOW)
    hit = result.hits[0]
    with pytest.raises(FrozenInstanceError):
        hit.score = 1.0  # type: ignore[misc]
    assert hit == Hit(*(getattr(hit, f) for f in Hit.__slots__))


def test_session_mask_is_kept_until_a_slot_is_added(tmp_path) -> None:
    store = WarmStore(tmp_path, HashEmbedder(), StoreSettings(eviction_days=0))
    store.add("a", "user", "one", timestamp=NOW, write=False)
    store.add("b", "user", "two", timestamp=NOW, write=False)
    first = store.session_mask("a")
    assert first is store.session_mask("a")
    assert first.tolist() == [True, False]
    with pytest.raises(ValueError, match="read-only"):
        first[1] = True
    store.add("a", "user", "three", timestamp=NOW, write=False)
    assert store.session_mask("a").tolist() == [True, False, True]
    assert store.session_mask("b").tolist() == [False, True, False]


@pytest.mark.parametrize("n", [40, 3000, 20_000])
def test_best_k_is_the_first_k_of_a_stable_sort(n: int) -> None:
    rng = np.random.default_rng(n)
    spiked = rng.standard_normal(n)
    spiked[rng.integers(0, n, 5)] = np.nan
    cases = [
        (rng.standard_normal(n).astype(np.float32), np.inf),  # distinct
        (np.round(rng.standard_normal(n), 1), np.inf),  # ties everywhere, over SORTED tied
        (np.round(rng.standard_normal(n), 1), 0.0),  # ... and only the negative keys
        (np.zeros(n), 0.0),  # nothing below the bound
        (np.zeros(n), np.inf),  # all tied
        (spiked, np.inf),  # NaN is never taken
        (np.where(rng.random(n) < 0.9, np.inf, rng.standard_normal(n)), np.inf),  # masked
        (np.where(rng.random(n) < 0.995, 0.0, -rng.random(n)), 0.0),  # a few below the bound
    ]
    for values, bound in cases:
        for k in (1, 16, 33, SORTED + 7):
            sel = np.flatnonzero(values < bound)
            want = sel[np.argsort(values[sel], kind="stable")][:k]
            assert best_k(values, k, bound).tolist() == want.tolist(), (k, bound)
    assert best_k(np.ones(5), 0).tolist() == []
    assert best_k(np.ones(0), 3).tolist() == []
