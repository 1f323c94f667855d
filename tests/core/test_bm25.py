"""Our incremental BM25 equals rank-bm25's BM25Okapi (the oracle) to 1e-9."""

from __future__ import annotations

import random

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from core.recall.bm25 import BM25Index
from core.recall.tokenize import tokenize
from core.transcript import load_transcript


def _check(index, corpus, queries):
    oracle = BM25Okapi(corpus)
    for q in queries:
        ours = index.scores(q)
        live = [i for i in range(index.slots) if index._doc_terms[i] is not None]
        assert np.max(np.abs(ours[live] - oracle.get_scores(q)), initial=0) < 1e-9


@pytest.mark.parametrize("seed", range(5))
def test_random_corpus_incremental(seed):
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(rng.randint(20, 400))]
    index = BM25Index()
    corpus = []
    for step in range(300):
        doc = [rng.choice(vocab[: rng.randint(1, len(vocab))]) for _ in range(rng.randint(1, 30))]
        index.add(doc)
        corpus.append(doc)
        if step % 60 == 59:  # equal to a fresh rank-bm25 after every batch of adds
            queries = [[rng.choice(vocab) for _ in range(rng.randint(1, 5))] for _ in range(10)]
            _check(index, corpus, [*queries, ["not-in-corpus"], [corpus[0][0]] * 3])


def test_removal_matches_a_corpus_without_the_document():
    rng = random.Random(9)
    vocab = [f"t{i}" for i in range(50)]
    docs = [[rng.choice(vocab) for _ in range(rng.randint(1, 12))] for _ in range(120)]
    index = BM25Index()
    for d in docs:
        index.add(d)
    removed = set(rng.sample(range(120), 40))
    for slot in removed:
        index.remove(slot)
    kept = [d for i, d in enumerate(docs) if i not in removed]
    oracle = BM25Okapi(kept)
    alive = [i for i in range(120) if i not in removed]
    for _ in range(20):
        q = [rng.choice(vocab) for _ in range(3)]
        assert np.max(np.abs(index.scores(q)[alive] - oracle.get_scores(q))) < 1e-9
        assert np.all(index.scores(q)[sorted(removed)] == 0)


def test_negative_idf_uses_epsilon_times_mean_idf():
    docs = [["a", "b"], ["a", "c"], ["a", "d"], ["e"]]  # "a" in 3 of 4: negative idf
    index = BM25Index()
    for d in docs:
        index.add(d)
    oracle = BM25Okapi(docs)
    assert index.idf("a") == pytest.approx(oracle.idf["a"], abs=1e-12)
    assert index.idf("a") > 0


def test_real_corpus_from_fixtures(fixtures_dir):
    session = load_transcript(fixtures_dir / "large-session.jsonl")
    texts = [e.message.text() for e in session.messages() if e.message and e.message.text()]
    corpus = [tokenize(t) for t in texts[:400]]
    corpus = [c for c in corpus if c]
    index = BM25Index()
    for c in corpus:
        index.add(c)
    queries = [
        tokenize(q)
        for q in (
            "theme selector",
            "oauth-selector.ts port",
            "user message",
            "read packages/coding-agent/docs/theme.md",
            "TUI",
        )
    ]
    _check(index, corpus, queries)


def test_top_k_is_sorted_and_positive():
    index = BM25Index()
    docs = [["x", "y"], ["x"], ["z"], ["x", "x", "y"], ["q"], ["r"], ["s"], ["t"]]
    for d in docs:
        index.add(d)
    slots, scores = index.top(["x", "y"], 2)
    oracle = BM25Okapi(docs).get_scores(["x", "y"])
    assert list(slots) == list(np.argsort(-oracle, kind="stable")[:2])
    assert scores[0] > scores[1] > 0
    assert np.allclose(scores, oracle[slots], atol=1e-12)
    assert len(index.top(["nothing"], 5)[0]) == 0


def test_add_many_equals_one_by_one_and_the_oracle():
    rng = random.Random(3)
    vocab = [f"v{i}" for i in range(80)]
    docs = [[rng.choice(vocab) for _ in range(rng.randint(1, 15))] for _ in range(200)]
    bulk, single = BM25Index(), BM25Index()
    bulk.add_many(docs[:150])
    for d in docs[:150]:
        single.add(d)
    for d in docs[150:]:  # incremental adds after a bulk build
        bulk.add(d)
        single.add(d)
    oracle = BM25Okapi(docs)
    for _ in range(20):
        q = [rng.choice(vocab) for _ in range(4)]
        assert np.array_equal(bulk.scores(q), single.scores(q))
        assert np.max(np.abs(bulk.scores(q) - oracle.get_scores(q))) < 1e-9
