"""Warm store, hybrid search (the exact formula), explain, and the vector index."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest

from core.embed import hashembed
from core.embed.hash import HashEmbedder
from core.recall.bm25 import BM25Index
from core.recall.hybrid import SearchConfig, explain, search
from core.recall.tokenize import tokenize
from core.recall.vector_index import VectorIndex
from core.recall.warm_store import StoreSettings, WarmStore, cache_path
from core.store.segments import DAY_MS, append_segments, load_segments, make_segment
from core.store.vectors import load_vectors, write_vectors

NOW = 1_800_000_000_000
TEXTS = [
    ("s1", "user", "The parser crashes on empty lines in segments.jsonl"),
    ("s1", "assistant", "Fixed the parser: blank lines are now skipped and reported"),
    ("s1", "user", "Use orjson for all JSON parsing please"),
    ("s1", "assistant", "Switched every JSON call to orjson"),
    ("s2", "user", "Deploy the dashboard to staging tonight"),
    ("s2", "assistant", "The dashboard deploy to staging is done"),
    ("s1", "user", "What about the token budget for compaction?"),
    ("s1", "assistant", "Compaction fires when the context passes the window minus the reserve"),
]


def _ids():
    n = 0

    def new():
        nonlocal n
        n += 1
        return f"00000000-0000-4000-8000-{n:012d}"

    return new


@pytest.fixture
def folder(tmp_path):
    new = _ids()
    segs = [
        make_segment(s, r, t, timestamp=NOW - (len(TEXTS) - i) * DAY_MS, new_id=new)
        for i, (s, r, t) in enumerate(TEXTS)
    ]
    append_segments(tmp_path / "segments.jsonl", segs)
    keep = segs[:-1]  # the last segment has no vector, as in real stores
    write_vectors(
        tmp_path / "vectors.bin",
        [s.id for s in keep],
        hashembed.embed_many([s.content for s in keep]),
        384,
    )
    for p in tmp_path.glob("*.memlens-backup-*"):
        p.unlink()
    return tmp_path


def _digest(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


def test_open_uses_agent_vectors_and_reports_missing(folder):
    store = WarmStore.open(folder, HashEmbedder(), now_ms=NOW)
    assert len(store) == 8
    assert store.stats.vectors_from == "vectors.bin"
    assert store.stats.vectors_loaded == 7 and store.stats.missing_vectors == 1


def test_embed_missing_goes_to_our_cache_not_the_agents_file(folder, tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    before = _digest(folder)
    store = WarmStore.open(folder, HashEmbedder(), cache_dir=cache, now_ms=NOW)
    calls = []
    assert store.embed_missing(progress=lambda d, t, _l: calls.append((d, t))) == 1
    assert calls == [(1, 1)]
    assert store.missing_vector_slots() == []
    assert _digest(folder) == before  # vectors.bin untouched
    cached = load_vectors(cache_path(cache, folder, "hash"))
    assert len(cached.ids) == 8
    assert not list(folder.glob("vectors.bin.memlens-backup-*"))


def test_add_redacts_dedups_appends_one_line_and_indexes(folder):
    store = WarmStore.open(folder, HashEmbedder(), now_ms=NOW)
    size = (folder / "segments.jsonl").stat().st_size
    seg = store.add("s1", "user", "the api_key=abcdefghijklmnopqrstu for staging", timestamp=NOW)
    assert seg is not None and "[REDACTED]" in seg.content
    data = (folder / "segments.jsonl").read_bytes()
    assert data[size:].count(b"\n") == 1 and b"abcdefghijklmnop" not in data
    assert store.add("s1", "user", "the api_key=abcdefghijklmnopqrstu for staging") is None
    assert (folder / "segments.jsonl").stat().st_size == len(data)  # nothing written
    assert store.vectors.has(store.slot_of[seg.id])
    hits = search(store, "api_key staging", SearchConfig(min_score=0), session_id="s1", now_ms=NOW)
    assert hits.hits[0].segment.id == seg.id


def test_eviction_by_count_and_age(folder):
    store = WarmStore.open(folder, HashEmbedder(), StoreSettings(max_segments=5), now_ms=NOW)
    assert len(store) == 5  # oldest 3 evicted on load
    store.add("s1", "user", "one more message about the parser", timestamp=NOW)
    assert len(store) == 5
    assert store.get(load_segments(folder / "segments.jsonl", now_ms=NOW).segments[3].id) is None
    aged = WarmStore.open(folder, HashEmbedder(), StoreSettings(eviction_days=3.5), now_ms=NOW)
    assert len(aged) == 4  # ages 3, 2 and 1 days, and the one just added


def test_hybrid_score_formula_by_hand(folder):
    store = WarmStore.open(folder, HashEmbedder(), now_ms=NOW)
    store.embed_missing(save=False)
    cfg = SearchConfig(limit=3, min_score=0, cross_session=True)
    query = "parser blank lines"
    result = search(store, query, cfg, now_ms=NOW)
    q = hashembed.embed(query)
    bm = BM25Index()
    for s in store.live():
        bm.add(tokenize(s.content))
    raw = bm.scores(tokenize(query))
    top_bm = np.argsort(-raw, kind="stable")[:6]
    top_bm = [i for i in top_bm if raw[i] > 0]
    cos = store.vectors.matrix @ q
    top_vec = list(np.argsort(-cos, kind="stable")[:6])
    max_bm = max(raw[i] for i in top_bm)
    for hit in result.candidates:
        i = hit.slot
        v = float(cos[i]) if i in top_vec else 0.0
        n = raw[i] / max_bm if i in top_bm else 0.0
        d = 0.995 ** ((NOW - hit.segment.timestamp) / DAY_MS)
        assert hit.vector_score == pytest.approx(v, abs=1e-6)
        assert hit.bm25_norm == pytest.approx(n, abs=1e-12)
        assert hit.decay == pytest.approx(d, rel=1e-12)
        assert hit.score == pytest.approx((0.7 * v + 0.3 * n) * d, abs=1e-6)
        w = (0.7 if v > 0 else 0) + (0.3 if n > 0 else 0)
        assert hit.effective == pytest.approx(hit.score / w if w else 0.0, abs=1e-6)
    assert [h.rank for h in result.candidates] == list(range(1, len(result.candidates) + 1))
    assert result.hits == result.candidates[:3]
    assert result.hits[0].segment.content.startswith("Fixed the parser")


def test_min_score_session_scope_and_explain(folder):
    store = WarmStore.open(folder, HashEmbedder(), now_ms=NOW)
    store.embed_missing(save=False)
    result = search(
        store,
        "dashboard staging deploy",
        SearchConfig(limit=1, min_score=0.2),
        session_id="s2",
        now_ms=NOW,
    )
    assert {h.segment.session_id for h in result.candidates} == {"s2"}
    first, second = result.candidates
    assert explain(store, result, first.segment.id).reason == "hit"
    cut = explain(store, result, second.segment.id)
    assert cut.reason in ("cut_by_limit", "below_min_score")
    other = store.live()[0]
    assert explain(store, result, other.id).reason == "other_session"
    assert explain(store, result, "nope").reason == "unknown"
    strict = search(
        store, "dashboard staging deploy", SearchConfig(min_score=0.99), session_id="s2", now_ms=NOW
    )
    why = explain(store, strict, first.segment.id)
    assert why.reason == "below_min_score" and "< minScore 0.99" in why.message
    wide = search(
        store, "orjson", SearchConfig(limit=1, min_score=0, cross_session=True), now_ms=NOW
    )
    far = [
        s
        for s in store.live()
        if wide.hits[0].segment.id != s.id and all(c.segment.id != s.id for c in wide.candidates)
    ]
    assert far and explain(store, wide, far[0].id).reason == "no_candidate"


def test_evicted_segment_is_explained(folder):
    store = WarmStore.open(folder, HashEmbedder(), StoreSettings(max_segments=2), now_ms=NOW)
    result = search(store, "parser", SearchConfig(cross_session=True), now_ms=NOW)
    oldest = load_segments(folder / "segments.jsonl", now_ms=NOW).segments[0]
    assert explain(store, result, oldest.id).reason == "evicted"


def test_time_decay_of_each_hit(tmp_path):
    store = WarmStore(tmp_path, HashEmbedder(), StoreSettings(eviction_days=0))
    for ts in (NOW, NOW - 2 * DAY_MS, NOW + DAY_MS, NOW - DAY_MS // 2):
        store.add("s", "user", f"the parser at {ts}", timestamp=ts, write=False)

    def decays(base):
        cfg = SearchConfig(min_score=0, decay=base)
        hits = search(store, "parser", cfg, session_id="s", now_ms=NOW).candidates
        return {h.segment.timestamp: h.decay for h in hits}

    got = decays(0.995)
    assert got[NOW] == 1 and got[NOW + DAY_MS] == 1  # future timestamps do not grow
    assert got[NOW - 2 * DAY_MS] == 0.995**2.0
    assert got[NOW - DAY_MS // 2] == 0.995**0.5  # fractional days
    assert set(decays(1).values()) == {1.0} and set(decays(0).values()) == {0.0}
    assert set(decays(1.5).values()) == {1.0}


def test_vector_index_grows_without_losing_rows():
    index = VectorIndex(4, capacity=2)
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((50, 4)).astype(np.float32)
    for i, v in enumerate(vecs):
        index.set(i, v)
    unit = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    assert np.allclose(index.matrix, unit, atol=1e-6)
    slots, sims = index.top(unit[7], 5)
    assert slots[0] == 7 and sims[0] == pytest.approx(1, abs=1e-6)
    assert list(sims) == sorted(sims, reverse=True)
    index.clear(7)
    assert 7 not in index.top(unit[7], 5)[0]
    mask = np.zeros(50, dtype=bool)
    mask[[3, 4]] = True
    assert set(index.top(unit[7], 5, mask)[0]) == {3, 4}
    assert not math.isnan(float(index.cosine(unit[0]).sum()))


def test_runtime_eviction_drops_the_oldest_by_timestamp(folder):
    settings = StoreSettings(max_segments=8, eviction_days=0)  # count only
    store = WarmStore.open(folder, HashEmbedder(), settings, now_ms=NOW)
    first = store.live()[0]
    # an old message archived late (last in the file) is still the oldest
    old = store.add("s3", "user", "an old message archived late", timestamp=NOW - 100 * DAY_MS)
    assert old is not None and store.get(old.id) is None
    assert store.get(first.id) is not None and len(store) == 8
    # equal timestamps: file order decides, the earlier one goes
    tie = store.add("s3", "user", "a second message", timestamp=first.timestamp)
    assert tie is not None and store.get(tie.id) is not None
    assert store.get(first.id) is None and len(store) == 8


def test_explain_names_a_hit_the_hard_cap_left_out(folder):
    from core.recall.block import Detail, build_block

    store = WarmStore.open(folder, HashEmbedder(), now_ms=NOW)
    store.embed_missing(save=False)
    result = search(
        store, "dashboard staging deploy parser", SearchConfig(min_score=0, cross_session=True),
        now_ms=NOW,
    )  # fmt: skip
    assert len(result.hits) >= 2
    details = [Detail(h.segment, h.score) for h in result.hits]
    tokens = [math.ceil(len(h.segment.content) / 4) for h in result.hits]
    block = build_block([], details, cap=tokens[0] + 40)  # room for about one detail
    assert block.cut_details
    cut_id = block.cut_details[0][0].segment.id
    why = explain(store, result, cut_id, block)
    assert why.reason == "cut_by_hard_cap" and "left out of the block" in why.message
    assert why.hit is not None and why.hit.segment.id == cut_id
    kept = [d.segment.id for d in block.details]
    assert all(explain(store, result, sid, block).reason == "hit" for sid in kept)
    assert explain(store, result, cut_id).reason == "hit"  # without the block: a hit


@pytest.mark.parametrize("seed", range(30))
def test_count_eviction_picks_what_oldest_first_picks(seed):
    import random

    from core.recall.warm_store import _oldest
    from core.store.segments import oldest_first

    rng = random.Random(seed)
    n = rng.randint(1, 60)
    stamps = [rng.randint(0, 6) for _ in range(n)]  # many ties
    slots = np.array(sorted(rng.sample(range(200), n)), dtype=np.intp)
    for k in (0, 1, rng.randint(1, n), n, n + 3):
        want = [int(slots[i]) for i in oldest_first(stamps)[:k]]
        got = _oldest(slots, np.array(stamps, dtype=np.int64), k).tolist()
        assert got == want


def test_adding_to_a_full_store_evicts_the_oldest_once(folder):
    store = WarmStore.open(folder, HashEmbedder(), now_ms=NOW)
    full = len(store)
    store.settings = StoreSettings(max_segments=full, eviction_days=0)
    oldest = min(store.live(), key=lambda s: s.timestamp)
    added = store.add("s9", "user", "a brand new turn about tokenizers", timestamp=NOW + 1)
    assert added is not None and len(store) == full
    assert store.get(oldest.id) is None and store.get(added.id) is not None


def test_a_sparse_query_reads_only_its_rows_and_scores_as_the_dense_product():
    rng = np.random.default_rng(3)
    index = VectorIndex(384, capacity=64)
    rows = rng.standard_normal((500, 384)).astype(np.float32)
    index.set_many(np.arange(500), rows)
    query = hashembed.embed_many(["retry the parser cache on staging"])[0]
    assert 0 < np.count_nonzero(query) * 4 < 384  # the hash embedder's few dims
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    dense = unit.astype(np.float64) @ query.astype(np.float64)
    assert np.allclose(index.cosine(query), dense, atol=1e-6)
    full = rng.standard_normal(384).astype(np.float32)  # a model's dense query: every row
    assert np.allclose(index.cosine(full), unit.astype(np.float64) @ full, atol=1e-4)
