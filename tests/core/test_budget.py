"""The budget model: every threshold from one call."""

from __future__ import annotations

from core.budget import budget_for, flush_gate, guard_for
from core.openclaw.config import CompactionConfig, parse_openclaw_config
from core.transcript import load_transcript


def test_thresholds_on_the_real_fixture(fixtures_dir):
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    b = budget_for(s, at="#358")
    assert b.window == 200_000 and b.window_source == "default"
    assert (b.context_tokens, b.context_source) == (175_004, "measured")
    assert b.reserve_tokens == 20_000  # max(pi 16,384, OpenClaw floor 20,000)
    assert b.compaction_trigger == 180_000 and not b.should_compact
    assert b.seed_trigger == 160_000 and b.should_compact_seed
    assert b.flush_threshold == 200_000 - 20_000 - 4_000
    assert b.hard_cap == 4000 and b.safe_limit == 200_000 - 4000 - 4000
    assert [t.key for t in b.thresholds] == ["window", "compaction", "seed", "flush", "safe_limit"]
    small = budget_for(s, at="#358", window=128_000)
    assert small.window_source == "override" and small.should_compact
    assert small.hard_cap == 4000 and budget_for(s, window=30_000).hard_cap == 3000


def test_window_from_config_and_cap(fixtures_dir):
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    cfg = parse_openclaw_config(
        "{agents: {defaults: {contextTokens: 150000, compaction: {reserveTokensFloor: 30000}}},"
        " models: {providers: {anthropic: {models: [{id: 'claude-opus-4-5', contextWindow: 180000}]}}}}"
    )
    b = budget_for(s, config=cfg, model_id="claude-opus-4-5")
    assert (b.window, b.window_source) == (150_000, "cap")
    assert b.reserve_tokens == 30_000 and b.compaction_trigger == 120_000


def test_guard():
    assert [guard_for(w) for w in (8000, 16_000, 31_999, 32_000)] == ["block", "warn", "warn", "ok"]


def test_flush_gate_rules():
    c = CompactionConfig()
    fires, at, why = flush_gate(176_000, 200_000, c, compaction_count=2, flush_compaction_count=1)
    assert fires and at == 176_000
    fires, _, why = flush_gate(176_000, 200_000, c, compaction_count=2, flush_compaction_count=2)
    assert not fires and "already flushed" in why
    fires, _, why = flush_gate(1000, 200_000, c, transcript_bytes=3 * 1024 * 1024)
    assert fires and "2 MiB" in why
    fires, _, _ = flush_gate(175_999, 200_000, c)
    assert not fires
