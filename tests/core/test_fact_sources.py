"""Where a fact came from: segments (hybrid search) and transcript messages."""

from __future__ import annotations

import pytest

from core.dataset.load import load_dataset
from core.demo.build import write_demo
from core.embed import load_embedder
from core.knowledge.sources import VERBATIM, MessageIndex, fact_sources, segment_sources
from core.recall.warm_store import StoreSettings, WarmStore

NOW = 1_760_000_000_000


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    home = tmp_path_factory.mktemp("src") / "home"
    write_demo(home, now_ms=NOW, segments=300)
    return load_dataset(home)


@pytest.fixture(scope="module")
def store(data, tmp_path_factory):
    embedder, _ = load_embedder("hash")
    folder = data.discovery.memory_context
    cache = tmp_path_factory.mktemp("cache")
    st = WarmStore.open(folder, embedder, StoreSettings(), cache_dir=cache, now_ms=NOW)
    st.embed_missing()
    return st


def test_a_fact_said_word_for_word_finds_its_message(data):
    index = MessageIndex(data.sessions)
    content = "Context cancellation is the only shutdown signal inside the worker"
    hits = index.search(content, limit=5)
    assert hits and hits[0].kind == "message"
    assert hits[0].score >= VERBATIM and hits[0].detail == "says it word for word"
    assert content.lower() in hits[0].text.lower()
    assert hits[0].path.endswith(".jsonl") and hits[0].line > 1 and hits[0].session_id
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len({h.text for h in hits}) == len(hits)  # the same text once
    assert index.search("zzqx unrelated wording", limit=5) == []


def test_segments_rank_by_hybrid_score(store):
    hits = segment_sources(store, "next_invoice_number locks the year row", limit=4)
    assert hits and all(h.kind == "segment" for h in hits)
    assert "next_invoice_number" in hits[0].text
    assert 0 < hits[-1].score <= hits[0].score <= 1
    assert hits[0].line > 0 and hits[0].path.endswith("segments.jsonl")
    assert "cosine" in hits[0].detail


def test_fact_sources_merges_both_kinds(data, store):
    fact = next(f for f in data.knowledge.facts.values() if "shutdown signal" in f.content)
    hits = fact_sources(fact.content, store=store, messages=MessageIndex(data.sessions), limit=3)
    assert {h.kind for h in hits} == {"segment", "message"}
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert fact_sources(fact.content) == []
