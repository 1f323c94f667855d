"""Compaction: the plan, the staged summary with its ladder, the safeguard, the run."""

from __future__ import annotations

import os
import time

import orjson
import pytest

from core.compaction.overflow import max_tool_result_chars, simulate_overflow
from core.compaction.plan import (
    adaptive_chunk_ratio,
    chunk_by_max_tokens,
    plan_compaction,
    stage_split,
    summary_chunks,
)
from core.compaction.prompts import REQUIRED_HEADINGS
from core.compaction.refusals import CompactionRefused
from core.compaction.run import compact
from core.compaction.safeguard import MAX_SUMMARY_CHARS, TRUNCATED_MARKER, safeguard
from core.compaction.summarize import summarize_plan
from core.compaction.summarizers import OfflineSummarizer
from core.compaction.write import write_compaction
from core.demo.build import write_demo
from core.io.jobs import Cancelled
from core.store.knowledge import load_knowledge
from core.store.segments import load_segments
from core.transcript import context_at, load_transcript

NOW = 1_795_305_600_000


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo") / "home"
    write_demo(root, now_ms=NOW, segments=200)
    sessions = sorted(
        (root / "agents" / "main" / "sessions").glob("*.jsonl"), key=lambda p: p.stat().st_size
    )
    return root, sessions[-1]  # the longest session


def _items(tmp_path, chars):
    objs, parent = [], None
    for i, n in enumerate(chars, 1):
        msg = {"role": "user" if i % 2 else "assistant", "timestamp": 1}
        msg["content"] = [{"type": "text", "text": "x" * n}]
        if i % 2 == 0:
            msg["stopReason"] = "stop"
        objs.append({"type": "message", "id": f"{i:08x}", "parentId": parent, "message": msg})
        parent = f"{i:08x}"
    head = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00Z"}
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(o) for o in [head, *objs]) + b"\n")
    return plan_compaction(load_transcript(path), keep_recent_tokens=10**9).kept  # all kept


def test_chunking_rules(tmp_path):
    assert adaptive_chunk_ratio([100] * 10, 200_000) == 0.4
    # average 20k tokens * 1.2 / 100k = 0.24 > 0.1: 0.4 - min(0.48, 0.25) = 0.15 (+1 ulp)
    assert adaptive_chunk_ratio([20_000] * 3, 100_000) == 0.4 - 0.25
    # OpenClaw's buildStageSplitPlan: 2 parts by token share, only above the max
    assert stage_split(_items(tmp_path, [40, 40, 40, 40]), 39) == [[0, 1], [2, 3]]
    assert stage_split(_items(tmp_path, [200, 4, 4, 4]), 39) == [[0], [1, 2, 3]]
    assert stage_split(_items(tmp_path, [40, 40, 40, 40]), 40) is None
    # buildSummaryChunks: max 120 -> effective 100; after the oversized 500, a new chunk
    chunks = summary_chunks(_items(tmp_path, [240, 120, 2000, 80, 360]), 120)
    assert chunks == [[0, 1], [2], [3], [4]]
    assert chunk_by_max_tokens([60, 30, 500, 20, 90], 120) == [[0, 1], [2], [3], [4]]


def test_plan_on_the_real_fixture(fixtures_dir):
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    plan = plan_compaction(s, at="#358")
    assert plan.ok and plan.tokens_before == 175_004 and plan.tokens_before_measured
    kept = sum(i.tokens for i in plan.kept)
    biggest = max(i.tokens for i in plan.summarize + plan.kept)
    assert 20_000 - biggest <= kept <= 20_000 + biggest
    assert plan.first_kept_index == plan.kept[0].entry.index
    assert s.entry(f"#{plan.first_kept_index}").message.role != "toolResult"
    # nothing summarised is also kept
    assert not {i.entry.id for i in plan.summarize} & {i.entry.id for i in plan.kept}
    assert plan.calls == len(plan.chunks) + len(plan.history_chunks) + (
        1 if plan.turn_prefix else 0
    ) + (len(plan.parts) > 1)
    assert "/Users/badlogic/workspaces/pi-mono/packages/coding-agent/src/main.ts" in plan.read_files
    after_first = plan_compaction(s, at="#627")
    # the range starts at the previous compaction's first kept entry (#293)
    first = min(i.entry.index for i in (*after_first.history_dropped, *after_first.summarize))
    assert first == 293
    assert after_first.previous_summary.startswith("# Context Checkpoint")
    assert not plan_compaction(s, at="#359").ok  # the leaf is a compaction


def test_offline_summary_run_and_safeguard(fixtures_dir):
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    plan = plan_compaction(s, at="#358")
    seen = []
    run = summarize_plan(plan, OfflineSummarizer(), progress=lambda d, t, label: seen.append(label))
    text = run.summary
    positions = [text.index(h) for h in REQUIRED_HEADINGS]
    assert positions == sorted(positions)
    assert "Offline summary" in text
    assert len(text) <= MAX_SUMMARY_CHARS
    assert "<read-files>" in text or "<modified-files>" in text
    assert run.provider == "offline" and run.calls == plan.calls and seen[-1] == "done"
    with pytest.raises(Cancelled):
        summarize_plan(plan, OfflineSummarizer(), cancelled=lambda: True)


def test_file_lists_are_redacted_in_the_summary_and_the_entry(fixtures_dir):
    from core.compaction.run import compaction_entry

    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    plan = plan_compaction(s, at="#358")
    secret = "https://bob:hunter2hunter2@git.example.com/repo.git"
    plan.read_files = [*plan.read_files, secret]
    run = summarize_plan(plan, OfflineSummarizer())
    entry = compaction_entry(plan, run, taken=set(s.by_id))
    assert "hunter2hunter2" not in run.summary
    assert "hunter2hunter2" not in str(entry["details"]) and entry["details"]["readFiles"]


class Failing:
    """A summarizer whose model always fails, to walk down the fallback ladder."""

    name = "broken"

    def summarize(self, messages, **kw):
        raise RuntimeError("model unavailable")

    def summarize_turn_prefix(self, messages, **kw):
        return "prefix"

    def merge(self, summaries, **kw):
        raise RuntimeError("model unavailable")


def test_fallback_ladder_ends_in_a_note(fixtures_dir):
    s = load_transcript(fixtures_dir / "large-session.jsonl")
    plan = plan_compaction(s)
    run = summarize_plan(plan, Failing())
    assert run.fallback == 2
    assert "Summary unavailable due to size limits." in run.summary
    assert all(h in run.summary for h in REQUIRED_HEADINGS)  # the safeguard adds them
    assert any("full summary failed" in n for n in run.notes)


def test_safeguard_caps_at_16000_and_keeps_headings(fixtures_dir):
    s = load_transcript(fixtures_dir / "large-session.jsonl")
    plan = plan_compaction(s)
    body = "\n\n".join(f"{h}\n" + "item one. " * 900 for h in REQUIRED_HEADINGS)
    text, truncated = safeguard(
        body, plan, "turn start", [{"toolName": "bash", "error": "E" * 900}]
    )
    assert truncated and len(text) <= MAX_SUMMARY_CHARS and TRUNCATED_MARKER in text
    positions = [text.index(h) for h in REQUIRED_HEADINGS]
    assert positions == sorted(positions)
    assert "**Turn Context (split turn):**" in text and "## Tool Failures" in text
    failures = [{"toolName": "t", "error": "e"}] * 11
    text, _ = safeguard("## Decisions\nok", plan, None, failures)
    assert "...and 3 more" in text and "## Open TODOs\n(none)" in text


def test_dry_run_writes_nothing_and_write_appends_a_leaf(demo):
    root, path = demo
    store = root / "memory" / "context"
    before = {
        p: p.read_bytes() for p in [path, store / "segments.jsonl", store / "knowledge.jsonl"]
    }
    session = load_transcript(path)
    run = compact(session, store_dir=store)
    assert {p: p.read_bytes() for p in before} == before
    entry = run.entry
    assert entry["type"] == "compaction" and entry["parentId"] == session.leaf.id
    assert len(entry["id"]) == 8 and entry["firstKeptEntryId"] == run.plan.first_kept_entry_id
    assert entry["tokensAfter"] < entry["tokensBefore"]
    assert run.segments and all(s.role in ("user", "assistant") for s in run.segments)
    assert run.facts  # proposals only, nothing written yet
    os.utime(path, None)  # as if the agent had just written to it
    with pytest.raises(CompactionRefused, match="modified"):
        write_compaction(run, session, store_dir=store)
    old = time.time() - 60
    os.utime(path, (old, old))
    write_compaction(run, session, store_dir=store)
    data = path.read_bytes()
    assert data.startswith(before[path])
    assert orjson.loads(data[len(before[path]) :]) == entry
    assert run.backup.read_bytes() == before[path]
    again = load_transcript(path)
    assert again.leaf.id == entry["id"]
    items = context_at(again)
    assert items[0].message.role == "compactionSummary"
    assert items[1].entry.id == entry["firstKeptEntryId"]
    segs = load_segments(store / "segments.jsonl", max_segments=-1, eviction_days=0)
    assert (store / "segments.jsonl").read_bytes().startswith(before[store / "segments.jsonl"])
    assert run.segments_appended <= len(run.segments) and len(segs.segments) >= 200
    log = load_knowledge(store / "knowledge.jsonl")
    assert (store / "knowledge.jsonl").read_bytes().startswith(before[store / "knowledge.jsonl"])
    assert all(fid in log.facts for fid in run.facts_written)
    # every fact written says where it came from: this session's summarised messages
    added = (store / "knowledge.jsonl").read_bytes()[len(before[store / "knowledge.jsonl"]) :]
    records = [orjson.loads(line) for line in added.splitlines()]
    assert run.facts_written and {r["id"] for r in records} >= set(run.facts_written)
    summarised = {i.entry.id for i in (*run.plan.history_dropped, *run.plan.summarize)}
    new = [r for r in records if "supersededBy" not in r]  # not the old facts' closing lines
    assert new
    for record in new:
        source = record["memlensSource"]
        assert source["by"] == "extraction" and source["sessionId"] == session.id
        assert source["entryIds"] and set(source["entryIds"]) <= summarised
    with pytest.raises(CompactionRefused, match=r"nothing to write|changed"):
        write_compaction(compact(again), again, force=False)


def test_v1_transcripts_are_never_written(fixtures_dir, tmp_path):
    target = tmp_path / "s.jsonl"
    target.write_bytes((fixtures_dir / "large-session.jsonl").read_bytes())
    old = time.time() - 60
    os.utime(target, (old, old))
    session = load_transcript(target)
    run = compact(session)
    with pytest.raises(CompactionRefused, match="v1 transcript"):
        write_compaction(run, session, force=True)
    assert target.read_bytes() == (fixtures_dir / "large-session.jsonl").read_bytes()


def test_overflow_steps(fixtures_dir):
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    assert [x.kind for x in simulate_overflow(s, 200_000, at="#358")] == ["fits"]
    assert [x.kind for x in simulate_overflow(s, 128_000, at="#358")] == [
        "overflow",
        "compact",
        "recovered",
    ]
    # OpenClaw's run loop: a fresh plan after the first compaction has nothing left to
    # summarise; no tool result is over the limit: the overflow error surfaces
    steps = simulate_overflow(s, 20_000, at="#358")
    assert [x.kind for x in steps] == ["overflow", "compact", "overflow", "compact", "give_up"]
    assert max_tool_result_chars(200_000) == 64_000 and max_tool_result_chars(1000) == 1200


def test_tokens_before_is_the_context_size_as_the_agent_measures_it(tmp_path):
    from core.transcript import context_size

    from .build import chain, entry, lines, user, write_file

    # the last usage (8,000 at #8) plus pi's estimate of the paste after it
    objs = [*chain(8), entry(9, "00000008", user("x" * 40_000))]
    p = tmp_path / "a.jsonl"
    write_file(p, lines(objs))
    s = load_transcript(p)
    plan = plan_compaction(s, keep_recent_tokens=2000)
    assert plan.tokens_before == 8000 + 10_000 and plan.tokens_before_measured
    # after a compaction the kept turns' usage predates it
    comp = {
        "type": "compaction",
        "id": "0000000c",
        "parentId": "00000008",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "summary": "S" * 400,
        "firstKeptEntryId": "00000007",
        "tokensBefore": 8000,
    }
    after = [
        entry(i, f"{i - 1:08x}" if i > 13 else "0000000c", user("y" * 8000)) for i in range(13, 17)
    ]
    p = tmp_path / "b.jsonl"
    write_file(p, lines([*chain(8), comp, *after]))
    s = load_transcript(p)
    plan = plan_compaction(s, keep_recent_tokens=2000)
    size = context_size(context_at(s))
    assert size.measured is None  # the timeline's measure skips the stale usage...
    # ...but pi's prepareCompaction (estimateContextTokens) takes the last usage in
    # context, a kept turn's from before the compaction (tests/oracle/test_pi_roundtrip)
    assert plan.tokens_before == 8000 + 4 * 2000 and plan.tokens_before_measured
