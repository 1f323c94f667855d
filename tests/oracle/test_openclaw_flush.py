"""The oracle tier: OpenClaw's own memory-flush gate against memlens's ``flush_gate``.

``tests/oracle/openclaw_flush.mjs`` evaluates the source text of OpenClaw 2026.9.6's
``shouldRunMemoryFlush``, ``hasAlreadyFlushedForCurrentCompaction`` and
``resolveCompactionThreshold`` (dist/agent-runner-memory-*.mjs) and of the
memory-core plugin's ``buildMemoryFlushPlan``, normalises each ``sessions.json``
entry with the agent's exported ``projectCanonicalSessionEntryShape`` and composes
them as ``runMemoryFlushIfNeeded`` does. memlens must fire exactly when the agent
does, at the same threshold, reading the same flush record.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from core.context.budget import flush_gate, flush_plan, flush_record, flush_threshold
from core.openclaw.config import CompactionConfig, MemoryFlushConfig

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).with_name("openclaw_flush.mjs")

WINDOWS = [1, 1000, 16_000, 24_001, 30_000, 80_000, 128_000, 200_000, 1_000_000]
FLUSH = [
    {},
    {"enabled": False},
    {"enabled": True, "softThresholdTokens": 0},
    {"softThresholdTokens": 50_000},
    {"softThresholdTokens": 12_345, "forceFlushTranscriptBytes": "1kb"},
    {"forceFlushTranscriptBytes": 0},
    {"forceFlushTranscriptBytes": "2.5mb"},
    {"forceFlushTranscriptBytes": 1_048_576},
]
ENTRIES: list[dict[str, Any] | None] = [
    None,
    {"sessionId": "s"},
    {"sessionId": "s", "compactionCount": 3},
    {"sessionId": "s", "compactionCount": 3, "memoryFlushCompactionCount": 3},
    {"sessionId": "s", "compactionCount": 3, "memoryFlushCompactionCount": 2,
     "memoryFlushAt": 1_700_000_000_000},
    {"sessionId": "s", "memoryFlushCompactionCount": 0},
    {"sessionId": "s", "compactionCount": 3, "memoryFlush": {"kind": "succeeded", "compactionCount": 3}},
    {"sessionId": "s", "compactionCount": 4, "memoryFlush": {"kind": "succeeded", "compactionCount": 3}},
    {"sessionId": "s", "compactionCount": 3,
     "memoryFlush": {"kind": "failed", "compactionCount": 3, "failureCount": 1}},
    {"sessionId": "s", "compactionCount": 3, "memoryFlush": {"kind": "failed", "failureCount": 0}},
    {"sessionId": "s", "compactionCount": 2, "memoryFlushFailureCount": 2,
     "memoryFlushCompactionCount": 2},
    {"sessionId": "s", "compactionCount": 1, "memoryFlush": {"kind": "odd", "compactionCount": 1}},
    {"sessionId": "s", "incognito": True},
]  # fmt: skip
BYTES = [None, 0, 1023, 1024, 2_097_151, 2_097_152, 2_621_440]


def _config(flush: dict[str, Any]) -> CompactionConfig:
    keys = {"enabled": "enabled", "softThresholdTokens": "soft_threshold_tokens"}
    kw = {keys[k]: v for k, v in flush.items() if k in keys}
    if "forceFlushTranscriptBytes" in flush:
        kw["force_flush_transcript_bytes"] = flush["forceFlushTranscriptBytes"]
    return CompactionConfig(memory_flush=MemoryFlushConfig(**kw))


def _cases() -> list[dict[str, Any]]:
    rng = random.Random(14)
    out = []
    for window, flush, entry in itertools.product(WINDOWS, FLUSH, ENTRIES):
        plan = flush_plan(window, _config(flush).memory_flush)
        at = flush_threshold(window, *plan[:2]) if plan else 1000
        for tokens in {0, 1, at - 1, at, at + 1, rng.randrange(1, window * 2 + 2)}:
            out.append(
                {
                    "window": window,
                    "tokens": tokens,
                    "memoryFlush": flush,
                    "entry": entry,
                    "transcriptBytes": rng.choice(BYTES),
                    "isHeartbeat": rng.random() < 0.03,
                    "isCli": rng.random() < 0.03,
                }
            )
    return out


def _memlens(case: dict[str, Any]) -> dict[str, Any]:
    entry = case["entry"]
    record = flush_record(entry) if entry is not None else None
    fires, threshold, why = flush_gate(
        case["tokens"],
        case["window"],
        _config(case["memoryFlush"]),
        transcript_bytes=case["transcriptBytes"],
        compaction_count=(entry or {}).get("compactionCount") or 0,
        flush_compaction_count=record.compaction_count if record else None,
        has_entry=entry is not None,
        incognito=bool(entry and entry.get("incognito") is True),
        heartbeat=case["isHeartbeat"],
        cli=case["isCli"],
    )
    return {"fires": fires, "threshold": threshold, "why": why, "record": record}


def test_memlens_flushes_exactly_when_the_agent_does(openclaw, tmp_path):
    cases = _cases()
    path = tmp_path / "cases.json"
    path.write_bytes(orjson.dumps(cases))
    theirs = openclaw.run(SCRIPT, str(path), timeout=180)
    assert len(theirs) == len(cases) > 3000
    fired = 0
    for case, agent in zip(cases, theirs, strict=True):
        ours = _memlens(case)
        assert ours["fires"] == agent["fires"], (case, agent, ours["why"])
        fired += agent["fires"]
        if agent["threshold"] is not None:
            assert ours["threshold"] == agent["threshold"], (case, agent)
            plan = flush_plan(case["window"], _config(case["memoryFlush"]).memory_flush)
            assert plan == (
                agent["reserveTokensFloor"],
                agent["softThresholdTokens"],
                agent["forceFlushTranscriptBytes"],
            ), case
            record = ours["record"]
            assert (record.compaction_count if record else None) == agent["flushCompactionCount"]
        if agent["threshold"] == 0:
            assert not agent["fires"] or "transcript" in ours["why"]
    assert 0.05 < fired / len(cases) < 0.95  # both outcomes are exercised
