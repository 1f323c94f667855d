from __future__ import annotations

import pytest

from core.dataset.load import load_dataset
from core.dataset.open_recall import open_recall
from core.demo.build import write_demo
from core.io.jobs import Cancelled
from core.recall.engine import recall

NOW = 1_760_000_000_000


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return write_demo(tmp_path_factory.mktemp("open") / "home", now_ms=NOW, segments=120)


def test_opens_store_and_knowledge_with_the_agents_settings(demo, tmp_path):
    data = load_dataset(demo.root, now_ms=NOW)
    before = (demo.root / "memory" / "context" / "vectors.bin").read_bytes()
    steps = []
    opened = open_recall(
        data, cache_dir=tmp_path / "cache", now_ms=NOW, progress=lambda *a: steps.append(a)
    )
    assert opened.store is not None and len(opened.store) == len(data.segments.segments)
    assert opened.store.missing_vector_slots() == []
    assert opened.knowledge is not None
    mc = data.config.memory_context
    assert opened.settings.hard_cap_tokens == mc.hard_cap_tokens
    assert opened.settings.search.min_score == mc.auto_recall_min_score
    assert steps and steps[-1][0] == steps[-1][1]
    seg = opened.store.live()[0]
    result = recall(
        seg.content[:80],
        store=opened.store,
        knowledge=opened.knowledge,
        settings=opened.settings,
        now_ms=NOW,
    )
    assert result.search is not None
    after = (demo.root / "memory" / "context" / "vectors.bin").read_bytes()
    assert after == before  # the agent's vectors are never rewritten by opening


def test_a_data_set_without_a_store_says_so(fixtures_dir):
    data = load_dataset(fixtures_dir)
    opened = open_recall(data, cache_dir=None)
    assert opened.store is None and opened.knowledge is None
    assert "no memory-context store" in opened.notes[0]


def test_opening_can_be_cancelled(demo, tmp_path):
    data = load_dataset(demo.root, now_ms=NOW)
    with pytest.raises(Cancelled):
        open_recall(data, cache_dir=tmp_path, cancelled=lambda: True)
