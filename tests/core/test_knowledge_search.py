"""Knowledge search: the agent's IDF rule, the adaptive mode, explain(), the index."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

import orjson
import pytest

from core.recall.knowledge_search import (
    CJK_STOP,
    KnowledgeIndex,
    adaptive_required,
    fact_text,
    knowledge_tokens,
)
from core.store.knowledge import load_knowledge


def write(path, *objs):
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))


def fact(fid, content, ts, ftype="decision", **over):
    return {"id": fid, "type": ftype, "content": content, "timestamp": ts, **over}


@pytest.fixture
def tiny(tmp_path):
    """Four active facts, one superseded, one deleted (N = 4)."""
    p = tmp_path / "knowledge.jsonl"
    write(
        p,
        fact("f1", "Use orjson for JSON", 100),
        fact("f2", "Port is 8080", 200, "config", context="Dev server"),
        fact("f3", "Use httpx for HTTP", 300),
        fact("f4", "orjson fails on NaN", 400, "issue"),
        fact("old", "orjson json use httpx port nan", 500, supersededBy="f1"),
        fact("gone", "orjson json use httpx port nan", 600, _deleted=True),
    )
    return load_knowledge(p)


def ids(hits):
    return [h.fact.id for h in hits]


# -- tokens -------------------------------------------------------------------
def test_stop_words_are_the_agents_35():
    assert len(CJK_STOP) == 35 and "的" in CJK_STOP and "其" in CJK_STOP


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("工作流程", ["工作", "作流", "流程"]),
        ("好", ["好"]),
        ("的", []),  # a lone stop word goes
        ("我的", []),  # both characters are stop words
        ("我们", ["我们"]),  # only one is: kept
        ("是的话", ["的话"]),  # 是的 dropped, 的话 kept
        ("Redis缓存 OK", ["redis", "缓存", "ok"]),
        ("Use  ORJSON,\tnow", ["use", "orjson,", "now"]),  # words keep punctuation
        ("ＡＢＣ", ["ａｂｃ"]),
        ("a\u3000b\ufeffc", ["a", "b", "c"]),  # JavaScript's \s
        ("a\x1cb\x85c", ["a\x1cb\x85c"]),  # Python's \s, not JavaScript's
        ("ひらがな〇", ["ひらがな〇"]),  # kana and U+3007 are not in the CJK ranges
        ("\U00020000\U00020001", ["\U00020000\U00020001"]),  # nor is extension B
        ("配置 的 config.json", ["配置", "config.json"]),
        ("", []),
    ],
)
def test_tokens(text, tokens):
    assert knowledge_tokens(text) == tokens


def test_fact_text(tiny):
    assert fact_text(tiny.facts["f1"]) == "use orjson for json "
    assert fact_text(tiny.facts["f2"]) == "port is 8080 dev server"


# -- idf scoring ----------------------------------------------------------------
def test_hand_computed_idf_scores(tiny):
    index = KnowledgeIndex(tiny)
    assert index.active == 4  # superseded and deleted facts are not documents
    assert index.idf("orjson") == math.log(5 / 3)  # f1, f4
    assert index.idf("json") == math.log(5 / 2)  # only f1 has the *token*
    assert index.idf("nope") is None
    hits = index.search("orjson json")
    # "json" is a substring of f4's "orjson": f4 matches both, and is newer
    assert ids(hits) == ["f4", "f1"]
    assert [h.score for h in hits] == [1.0, 1.0]
    assert hits[0].rank == 1 and hits[1].rank == 2
    assert hits[0].idf == {"orjson": math.log(5 / 3), "json": math.log(5 / 2)}

    w_use, w_httpx = math.log(5 / 3), math.log(5 / 2)
    hits = index.search("use httpx", min_score=0)
    assert ids(hits) == ["f3", "f1", "f4", "f2"]
    assert hits[0].score == 1.0
    assert hits[1].score == w_use / (w_use + w_httpx)
    assert hits[1].matched == ("use",) and hits[1].missing == ("httpx",)
    assert hits[2].score == 0.0 == hits[3].score  # score 0 >= minScore 0, newest first
    assert ids(index.search("use httpx")) == ["f3"]


def test_unknown_query_tokens_are_ignored(tiny):
    index = KnowledgeIndex(tiny)
    terms = index.terms("HTTP zebra http 的")
    assert terms.tokens == ("http", "zebra")
    assert terms.ignored == ("zebra",)
    assert [w.token for w in terms.weights] == ["http"]
    hits = index.search("http zebra")
    assert ids(hits) == ["f3"] and hits[0].score == 1.0
    assert index.search("zebra") == []
    assert index.search("的") == []
    assert index.search("") == []


def test_min_score_edge_and_ties_newest_first(tiny):
    index = KnowledgeIndex(tiny)
    hits = index.search("use orjson")
    # x / (x + x) is exactly 0.5: f3 (use) and f4 (orjson) sit on the threshold
    assert ids(hits) == ["f1", "f4", "f3"]
    assert [h.score for h in hits] == [1.0, 0.5, 0.5]
    assert ids(index.search("use orjson", min_score=0.5000001)) == ["f1"]
    assert ids(index.search("use orjson", limit=2)) == ["f1", "f4"]
    assert index.search("use orjson", limit=0) == []


def test_equal_timestamps_keep_log_order(tmp_path):
    p = tmp_path / "knowledge.jsonl"
    write(p, fact("b", "cache alpha", 5), fact("a", "cache beta", 5), fact("c", "other", 1))
    assert ids(KnowledgeIndex(load_knowledge(p)).search("cache")) == ["b", "a"]


def test_no_weight_when_every_fact_has_the_token(tmp_path):
    p = tmp_path / "knowledge.jsonl"
    write(p, fact("a", "cache alpha", 1), fact("b", "cache beta", 2))
    index = KnowledgeIndex(load_knowledge(p))
    assert index.idf("cache") == 0.0
    assert index.search("cache") == []  # the agent: totalWeight <= 0
    # adaptive mode still filters by count; all scores are 0, newest first
    assert ids(index.search("cache", mode="adaptive")) == ["b", "a"]


# -- adaptive mode -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("known", "required"),
    list({0: 0, 1: 1, 2: 2, 3: 2, 4: 2, 5: 3, 8: 4, 9: 3, 10: 3, 11: 4, 20: 6, 21: 6}.items()),
)
def test_adaptive_required(known, required):
    assert adaptive_required(known) == required


WORDS = "apple banana cherry durian elder fig grape honeydew kiwi lemon".split()


@pytest.fixture
def fruit(tmp_path):
    p = tmp_path / "knowledge.jsonl"
    objs = [fact(f"k{k}", " ".join(WORDS[:k]), 100 + k) for k in range(1, 10)]
    objs.append(fact("none", "nothing in common", 1))
    write(p, *objs)
    return KnowledgeIndex(load_knowledge(p))


@pytest.mark.parametrize(
    ("n", "needed"),
    [
        (1, 1),
        (2, 2),  # <= 2 tokens: all must match
        (3, 2),  # <= 8: half, rounded up
        (8, 4),
        (9, 3),  # > 8: min(ceil(0.3 * 9), 6)
    ],
)
def test_adaptive_thresholds(fruit, n, needed):
    # fact k holds the first k words; the query is the first n: k matches min(k, n)
    query = " ".join(WORDS[:n])
    hits = fruit.search(query, mode="adaptive", limit=100)
    assert sorted(ids(hits)) == [f"k{k}" for k in range(needed, 10)]
    assert ids(hits)[0] == "k9"  # complete matches tie at 1.0: newest first
    assert ids(hits)[-1] == f"k{needed}"
    assert min(len(h.matched) for h in hits) == needed


def test_adaptive_counts_only_known_tokens(fruit):
    # "zebra" and "yak" are unknown: n = 2 known, both needed
    hits = fruit.search("apple banana zebra yak", mode="adaptive", limit=100)
    assert len(hits) == 8 and hits[0].weights[0].token == "apple"


# -- explain -----------------------------------------------------------------------
def test_explain_every_reason(tiny):
    index = KnowledgeIndex(tiny)
    e = index.explain("orjson", "f4")
    assert e.verdict == "hit" and e.rank == 1 and e.score == 1.0 and "rank 1" in e.message
    assert index.explain("orjson", "nope").verdict == "unknown_fact"
    e = index.explain("orjson", "old")
    assert e.verdict == "not_active" and "superseded by f1" in e.message
    assert index.explain("orjson", "gone").verdict == "not_active"
    e = index.explain("zebra 的", "f1")
    assert e.verdict == "no_known_tokens" and "zebra" in e.message
    e = index.explain("use httpx", "f1")
    assert e.verdict == "below_min_score"
    assert e.score == math.log(5 / 3) / (math.log(5 / 3) + math.log(5 / 2))
    assert e.matched == ("use",) and e.missing == ("httpx",)
    assert "0.3579 < minScore 0.5" in e.message
    assert "httpx missing (idf 0.9163)" in e.message and "0.5108 of 1.4271" in e.message
    e = index.explain("use orjson", "f3", limit=2)
    assert e.verdict == "cut_by_limit" and e.rank == 3 and e.passing == 3
    assert "cut by limit 2" in e.message
    assert index.explain("use orjson", "f3").verdict == "hit"


def test_explain_adaptive_and_no_weight(fruit, tmp_path):
    e = fruit.explain("apple banana", "k1", mode="adaptive")
    assert e.verdict == "too_few_matches" and "needs 2" in e.message
    p = tmp_path / "k2.jsonl"
    write(p, fact("a", "cache alpha", 1), fact("b", "cache beta", 2))
    e = KnowledgeIndex(load_knowledge(p)).explain("cache", "a")
    assert e.verdict == "no_weight"


# -- the index against the agent's loop -----------------------------------------------
def reference(log, query, limit=10, min_score=0.5):
    """The agent's search, line for line."""
    active = [f for f in log.facts.values() if f.status == "active"]
    df = Counter()
    for f in active:
        df.update(set(knowledge_tokens(fact_text(f))))
    idf = {t: math.log((len(active) + 1) / (c + 1)) for t, c in df.items()}
    weights = [(t, idf[t]) for t in dict.fromkeys(knowledge_tokens(query)) if t in idf]
    total = 0.0
    for _, w in weights:
        total += w
    if total <= 0:
        return []
    scored = []
    for f in active:
        text = fact_text(f)
        got = 0.0
        for t, w in weights:
            if t in text:
                got += w
        if got / total >= min_score:
            scored.append((f, got / total))
    scored.sort(key=lambda s: (-s[1], -s[0].timestamp))
    return [(f.id, s) for f, s in scored[:limit]]


VOCAB = (
    "cache cached redis orjson json port timeout session compaction 8080 src/core/a.ts "
    "工作流程 缓存 配置文件 的 是的 Use USE fix: fixed a e 8 缓".split()
)


@pytest.mark.parametrize("cache_size", [0, 2, 1024])
def test_incremental_index_equals_rebuild_and_reference(tmp_path, cache_size):
    rng = random.Random(7)
    p = tmp_path / "knowledge.jsonl"
    p.write_bytes(b"")
    log = load_knowledge(p)
    ids_ = (f"n{i}" for i in itertools.count())
    clock = itertools.count(0)
    log.new_id = lambda: next(ids_)
    log.clock = lambda: 1000 + next(clock) // 3  # equal timestamps happen
    index = KnowledgeIndex(log, cache_size=cache_size)

    def text():
        return " ".join(rng.choice(VOCAB) for _ in range(rng.randint(1, 6)))

    for step in range(150):
        live = [f.id for f in log.facts.values() if f.status == "active"]
        action = rng.random()
        if not live or action < 0.5:
            index.update(log.add("decision", text(), context=rng.choice([None, text()])))
        elif action < 0.7:
            index.update(log.update(rng.choice(live), content=text()))
        elif action < 0.85:
            old = rng.choice(live)
            index.update(log.supersede(old, text()))
            index.update(log.facts[old])
        elif action < 0.95:
            index.update(log.delete(rng.choice(live)))
        else:
            log.restore(rng.choice(list(log.facts)))
            assert index.sync() == 1
        if step % 10 == 0:
            fresh = KnowledgeIndex(load_knowledge(p))
            for _ in range(5):
                q = text()
                for min_score in (0.0, 0.3, 0.5):
                    want = reference(log, q, min_score=min_score)
                    got = [(h.fact.id, h.score) for h in index.search(q, min_score=min_score)]
                    assert got == want, (q, min_score)
                    again = fresh.search(q, min_score=min_score)
                    assert [(h.fact.id, h.score) for h in again] == want
    assert index.sync() == 0


def test_sync_after_appended_lines(tiny):
    index = KnowledgeIndex(tiny)
    tiny.add("issue", "zebra crossing is broken")
    assert index.search("zebra") == []
    assert index.sync() == 1
    assert [h.fact.content for h in index.search("zebra")] == ["zebra crossing is broken"]
    index.rebuild()
    assert index.active == 5
