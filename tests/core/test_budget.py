"""The budget model: every threshold from one call."""

from __future__ import annotations

from core.context.budget import (
    FlushRecord,
    budget_for,
    flush_gate,
    flush_record,
    guard_for,
    parse_byte_size,
)
from core.openclaw.config import CompactionConfig, MemoryFlushConfig, parse_openclaw_config
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
    fires, _, why = flush_gate(1000, 200_000, c, transcript_bytes=2 * 1024 * 1024)
    assert fires and "forceFlushTranscriptBytes 2,097,152" in why  # at 2 MiB, not only past it
    fires, _, _ = flush_gate(175_999, 200_000, c)
    assert not fires


def test_flush_never_fires_at_a_threshold_of_zero():
    # 30,000 window: floor min(20,000, 30,000 / 4) = 7,500, soft min(50,000, 22,500 / 2)
    c = CompactionConfig(memory_flush=MemoryFlushConfig(soft_threshold_tokens=50_000))
    assert flush_gate(11_249, 30_000, c)[:2] == (False, 11_250)
    assert flush_gate(11_250, 30_000, c)[:2] == (True, 11_250)
    # a positive window always leaves a positive threshold (the caps see to it) ...
    assert flush_gate(5, 1, CompactionConfig())[:2] == (True, 1)
    # ... an unknown (0) one does not: the floor stays 20,000
    fires, at, why = flush_gate(5, 0, CompactionConfig())
    assert (fires, at) == (False, 0) and "too small" in why
    fires, at, why = flush_gate(5, 0, CompactionConfig(), transcript_bytes=3 << 20)
    assert fires and at == 0  # only the transcript size can force it then


def test_flush_gate_skips_as_the_agent_does():
    c = CompactionConfig()
    assert not flush_gate(190_000, 200_000, c, has_entry=False)[0]
    assert not flush_gate(190_000, 200_000, c, heartbeat=True)[0]
    assert not flush_gate(190_000, 200_000, c, cli=True)[0]
    assert not flush_gate(190_000, 200_000, c, incognito=True)[0]
    off = CompactionConfig(memory_flush=MemoryFlushConfig(enabled=False))
    assert flush_gate(190_000, 200_000, off) == (False, 0, "memoryFlush is disabled")
    no_force = CompactionConfig(memory_flush=MemoryFlushConfig(force_flush_transcript_bytes=0))
    assert not flush_gate(1, 200_000, no_force, transcript_bytes=10 << 20)[0]


def test_incognito_session_keys():
    from core.context.budget import is_incognito_key

    assert is_incognito_key(" Agent:main:dashboard:incognito-7 ")
    assert not is_incognito_key("agent:main:telegram:direct:123")
    assert not is_incognito_key("agent:main:dashboard:incognito-7:x")


def test_flush_record_reads_both_shapes():
    assert flush_record({}) is None
    assert flush_record({"memoryFlushCompactionCount": 2, "memoryFlushAt": 5}) == FlushRecord(
        "succeeded", 2, at=5
    )
    new = flush_record({"memoryFlush": {"kind": "succeeded", "compactionCount": 3}})
    assert new == FlushRecord("succeeded", 3)
    failed = flush_record({"memoryFlush": {"kind": "failed", "failureCount": 2}})
    assert failed == FlushRecord("failed", None, 2)
    # an invalid new record falls back to the legacy fields
    legacy = {"memoryFlush": {"kind": "x"}, "memoryFlushCompactionCount": 1.7}
    assert flush_record(legacy) == FlushRecord("succeeded", 1)


def test_byte_sizes_parse_as_the_agent_parses_them():
    assert [parse_byte_size(v) for v in (0, 2.9, "2mb", " 1.5KB ", "10", "2 mb", "-1", "x")] == [
        0, 2, 2 << 20, 1536, 10, None, None, None
    ]  # fmt: skip


def test_no_flush_line_where_the_agent_never_flushes(fixtures_dir):
    from core.timeline.arrays import threshold_lines

    cfg = parse_openclaw_config(
        "{agents: {defaults: {compaction: {memoryFlush: {enabled: false}}}}}"
    )
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    b = budget_for(s, at="#358", config=cfg)
    assert not b.should_flush and b.flush_threshold == 0
    assert "flush" not in {t.key for t in b.thresholds}  # was a line at 0, "crossed"
    assert "flush" not in {t.key for t in threshold_lines(b)}
    on = budget_for(s, at="#358")
    assert "flush" in {t.key for t in on.thresholds} | {t.key for t in threshold_lines(on)}
