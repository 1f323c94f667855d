"""Memory flushes recorded in sessions.json become markers on the timeline."""

from __future__ import annotations

import pytest

from core.context.budget import budget_for, flush_record
from core.openclaw.sessions_store import SessionEntry
from core.timeline.arrays import FlushMarker, build_timeline
from core.transcript import load_transcript


@pytest.fixture(scope="module")
def session(fixtures_dir):
    return load_transcript(fixtures_dir / "before-compaction.jsonl")


def _flush(session, raw) -> tuple[FlushMarker, ...]:
    return build_timeline(session, flush=flush_record(raw)).flushes


def test_a_2026_9_record_sits_before_the_compaction_that_ended_its_cycle(session):
    tl = build_timeline(session)
    assert len(tl.compactions) == 2 and not tl.flushes
    (m,) = _flush(
        session, {"compactionCount": 2, "memoryFlush": {"kind": "succeeded", "compactionCount": 1}}
    )
    second = tl.compactions[1]
    assert m.x == pytest.approx(second.x - 0.2) and m.x > tl.compactions[0].x
    assert m.succeeded and not m.timed and m.compaction_count == 1
    assert m.context == tl.context[int(second.x - 0.5)]
    assert "compaction cycle 1" in m.tooltip and "time not recorded" in m.tooltip


def test_a_flush_of_the_current_cycle_sits_after_the_last_message(session):
    tl = build_timeline(session)
    (m,) = _flush(
        session, {"compactionCount": 2, "memoryFlush": {"kind": "succeeded", "compactionCount": 2}}
    )
    last = max(i for i in range(len(tl)) if tl.on_path[i])
    assert m.x == pytest.approx(last + 0.3) and m.context == tl.context[last]


def test_a_legacy_record_is_placed_by_its_time(session):
    tl = build_timeline(session)
    path = [e for e in session.path_to(session.leaf.id) if tl.position(e.id) is not None]
    stamps = [e.message.timestamp for e in path]
    # a message whose successor came later: the flush ran between the two
    k = next(i for i in range(len(path) // 2, len(path) - 1) if stamps[i + 1] > stamps[i] + 1)
    (m,) = _flush(session, {"memoryFlushAt": stamps[k] + 1, "memoryFlushCompactionCount": 1})
    assert m.timed and m.x == pytest.approx(tl.position(path[k].id) + 0.3)
    assert "(memoryFlushAt)" in m.tooltip and "UTC" in m.tooltip


def test_a_failed_flush_is_marked_as_failed(session):
    (m,) = _flush(session, {"memoryFlush": {"kind": "failed", "failureCount": 2}})
    assert not m.succeeded and m.label == "memory flush failed"
    assert "failed 2 time(s)" in m.tooltip


def test_the_budget_carries_the_store_entrys_flush_to_the_timeline(session):
    entry = SessionEntry(
        "agent:main:main",
        {"sessionId": session.id, "compactionCount": 2,
         "memoryFlush": {"kind": "succeeded", "compactionCount": 1}},
    )  # fmt: skip
    budget = budget_for(session, store_entry=entry)
    assert budget.flush is not None and budget.flush.cycles_ago == 1
    tl = build_timeline(session, budget)
    assert len(tl.flushes) == 1 and tl.flushes[0].compaction_count == 1
    assert not build_timeline(session, budget_for(session)).flushes


def test_the_demo_flushes_sit_in_the_cycle_they_name(tmp_path):
    from core.demo.build import write_demo
    from core.openclaw.sessions_store import load_sessions_store

    home = tmp_path / "home"
    write_demo(home, now_ms=1_760_000_000_000, segments=40)
    seen = 0
    for store_path in home.glob("agents/*/sessions/sessions.json"):
        for entry in load_sessions_store(store_path).entries.values():
            if "memoryFlushAt" not in entry.raw:
                continue
            s = load_transcript(store_path.parent / entry.raw["sessionFile"])
            tl = build_timeline(s, budget_for(s, store_entry=entry))
            (m,) = tl.flushes
            n = entry.raw["memoryFlushCompactionCount"]
            xs = [c.x for c in tl.compactions]
            assert m.timed and xs[n - 1] < m.x < (xs[n] if n < len(xs) else len(tl))
            seen += 1
    assert seen >= 1
