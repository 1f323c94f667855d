"""Timeline arrays: bars, the context curve, compactions and branches on real transcripts."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import orjson
import pytest

import core.timeline.arrays as timeline_mod
from bench.bench_timeline import synthetic_session
from core.context.budget import budget_for
from core.demo.build import write_demo
from core.timeline.arrays import Category, bar_outline, build_timeline, threshold_lines
from core.transcript import compactions, context_at, context_size, load_transcript, parse_transcript
from core.transcript.tokens import estimate_message, usage_total

NOW = 1_760_000_000_000


def _assert_matches_replay(session, tl, step=1):
    """The incremental walk gives what replay gives, message by message."""
    for pos in range(0, len(tl), step):
        size = context_size(context_at(session, tl.entry_ids[pos]))
        assert tl.context_estimated[pos] == size.estimated, pos
        if size.measured is None:
            assert math.isnan(tl.context_measured[pos]), pos
            assert tl.context[pos] == size.estimated, pos
        else:
            assert tl.context_measured[pos] == size.measured, pos
            assert tl.context[pos] == size.measured, pos


@pytest.fixture(scope="module")
def before(fixtures_dir):
    session = load_transcript(fixtures_dir / "before-compaction.jsonl")
    return session, build_timeline(session)


@pytest.fixture(scope="module")
def large(fixtures_dir):
    session = load_transcript(fixtures_dir / "large-session.jsonl")
    return session, build_timeline(session)


@pytest.fixture(scope="module")
def demo_sessions(tmp_path_factory):
    home = tmp_path_factory.mktemp("demo") / "home"
    write_demo(home, now_ms=NOW, segments=300)
    return [load_transcript(p) for p in sorted(Path(home).glob("agents/*/sessions/*.jsonl"))]


def test_one_bar_per_message_in_file_order(before):
    session, tl = before
    messages = session.messages()
    assert len(tl) == len(messages) == 990
    assert tl.entry_ids == tuple(e.id for e in messages)
    assert list(tl.entry_index) == [e.index for e in messages]
    assert np.array_equal(tl.x, np.arange(990))
    assert list(tl.tokens) == [estimate_message(e.message) for e in messages]
    assert all(tl.position(e.id) == i for i, e in enumerate(messages))
    assert tl.position(session.compaction_entries()[0].id) is None


def test_categories_follow_roles(before, large):
    for session, tl in (before, large):
        counts = session.role_counts()
        assert (tl.category == Category.ASSISTANT).sum() == counts["assistant"]
        assert (tl.category == Category.TOOL_RESULT).sum() == counts["toolResult"]
        assert (tl.category == Category.USER).sum() == counts["user"]
    assert (before[1].category == Category.BASH).sum() == 3


def test_context_curve_drops_at_both_compactions(before):
    session, tl = before
    assert [m.tokens_before for m in tl.compactions] == [175_004, 185_014]
    assert all(m.before_recorded and not m.after_recorded for m in tl.compactions)
    replayed = compactions(session)
    assert [m.tokens_after for m in tl.compactions] == [c.tokens_after for c in replayed]
    assert [m.label for m in tl.compactions] == ["175,004 -> 16,652", "185,014 -> 17,555"]
    for m in tl.compactions:
        last = int(m.x - 0.5)  # the message just before the compaction
        # The agent's own usage: the curve reaches exactly the recorded tokensBefore.
        assert tl.context[last] == m.tokens_before == m.context_before
        assert tl.measured[last]
        assert tl.context[last + 1] < m.tokens_before / 4  # dropped
        assert math.isnan(tl.context_measured[last + 1])  # no usage yet: estimated
        assert tl.context[last + 1] >= m.context_after == m.tokens_after
        # The path curve holds the drop as two points at the compaction's x.
        at = np.flatnonzero(tl.path_x == m.x)
        assert len(at) == 2
        assert tl.path_context[at[0]] == m.tokens_before
        assert tl.path_context[at[1]] == m.tokens_after
    assert np.all(np.diff(tl.path_x) >= 0)


def test_incremental_context_equals_replay(before, large):
    for session, tl in (before, large):
        _assert_matches_replay(session, tl, step=3)


def test_linear_walk_never_replays_a_normal_tree(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("context_at called: the walk must not replay per message")

    monkeypatch.setattr(timeline_mod, "context_at", refuse)
    session = synthetic_session(5000)
    tl = build_timeline(session)
    assert len(tl) >= 5000
    assert len(tl.compactions) >= 10
    assert len(tl.path_x) == int(tl.on_path.sum()) + 2 * sum(m.on_path for m in tl.compactions)
    drops = [
        tl.path_context[i + 1] < tl.path_context[i] / 2
        for i in np.flatnonzero(np.diff(tl.path_x) == 0)
    ]
    assert len(drops) == len(tl.compactions) and all(drops)


def test_measured_usage_where_present(large):
    session, tl = large
    first_usable = next(
        i
        for i, e in enumerate(session.messages())
        if e.message.role == "assistant"
        and e.message.stop_reason not in ("aborted", "error")
        and usage_total(e.message.usage)
    )
    assert not tl.measured[:first_usable].any()
    assert tl.measured[first_usable:].all()
    assert not tl.compactions and not tl.branches
    assert tl.on_path.all()
    assert np.array_equal(tl.path_x, tl.x)


def test_thinking_share_of_assistant_messages(demo_sessions):
    found = 0
    for session in demo_sessions:
        tl = build_timeline(session)
        for pos, e in enumerate(session.messages()):
            thinking = sum(len(b.text) for b in e.message.blocks if b.kind == "thinking")
            if e.message.role != "assistant" or not thinking:
                assert tl.thinking_share[pos] == 0
                continue
            found += 1
            assert 0 < tl.thinking_share[pos] <= 1
            assert tl.thinking_tokens[pos] == pytest.approx(thinking / 4, abs=1.0)
    assert found > 10


def test_demo_branch_is_shown(demo_sessions):
    session = next(s for s in demo_sessions if s.branch_points())
    tl = build_timeline(session)
    fork = session.branch_points()[0]
    assert [b.entry_id for b in tl.branches] == [fork.id]
    branch = tl.branches[0]
    assert branch.children == 2
    path_ids = {e.id for e in session.path_to(session.leaf.id)}
    off = [i for i, eid in enumerate(tl.entry_ids) if eid not in path_ids]
    assert off and list(np.flatnonzero(~tl.on_path)) == off
    assert set(tl.path_x) == set(np.flatnonzero(tl.on_path).astype(float))
    # Off-path messages hang from the fork through parent_pos.
    first = off[0]
    assert tl.parent_pos[first] == branch.x
    assert all(tl.parent_pos[i] == i - 1 for i in off[1:])
    assert (tl.category == Category.SUMMARY).sum() == 1  # the branch summary
    _assert_matches_replay(session, tl)  # off-path contexts too


def test_demo_recorded_tokens_after(demo_sessions):
    session = max(demo_sessions, key=lambda s: len(s.compaction_entries()))
    tl = build_timeline(session)
    raws = [c.raw for c in session.compaction_entries()]
    assert len(tl.compactions) == len(raws) >= 2
    for m, raw in zip(tl.compactions, raws, strict=True):
        assert m.after_recorded and m.before_recorded
        assert m.label == f"{raw['tokensBefore']:,} -> {raw['tokensAfter']:,}"
        assert m.on_path


def test_summaries(large, before):
    _, tl = large
    assert len(tl.summaries) == len(tl)
    assert tl.summary(1).startswith("assistant") and "aborted" in tl.summary(1)
    assert tl.summary(0).startswith("user") and "/mode" in tl.summary(0)
    assert "calls read \u00d72, bash" in tl.summary(3)
    _, tl2 = before
    tool = int(np.flatnonzero(tl2.category == Category.TOOL_RESULT)[0])
    assert tl2.summary(tool).startswith("tool result read \u00b7 12,483 tok")
    bash = int(np.flatnonzero(tl2.category == Category.BASH)[0])
    assert tl2.summary(bash).startswith("bash") and "$ " in tl2.summary(bash)
    assert all(len(s) < 260 for s in tl2.summaries)


def test_thresholds_from_budget(before):
    session, _ = before
    budget = budget_for(session)
    tl = build_timeline(session, budget)
    lines = {t.key: t.tokens for t in tl.thresholds}
    assert lines == {
        "window": budget.window,
        "compaction": budget.compaction_trigger,
        "flush": budget.flush_threshold,
        "safe_limit": budget.safe_limit,
    }
    assert tl.thresholds == threshold_lines(budget)
    assert build_timeline(session).thresholds == ()


def test_bar_outline():
    xs, ys = bar_outline(np.array([0.0, 3.0]), np.array([10.0, 5.0]), 0.8)
    assert xs.tolist() == pytest.approx([-0.4, -0.4, 0.4, 0.4, 2.6, 2.6, 3.4, 3.4])
    assert ys.tolist() == [0, 10, 10, 0, 0, 5, 5, 0]
    xs, ys = bar_outline(np.array([1.0]), np.array([9.0]), 0.5, bottom=np.array([4.0]))
    assert ys.tolist() == [4, 9, 9, 4]
    assert bar_outline(np.zeros(0), np.zeros(0))[0].shape == (0,)


def _lines(*objs):
    return b"\n".join(orjson.dumps(o) for o in objs) + b"\n"


def test_empty_and_damaged_sessions():
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z"}
    empty = build_timeline(parse_transcript(_lines(header), "empty.jsonl"))
    assert len(empty) == 0 and empty.path_x.shape == (0,) and empty.nearest(3.0) is None

    def msg(eid, parent, role, text):
        return {
            "type": "message",
            "id": eid,
            "parentId": parent,
            "timestamp": "2025-01-01T00:00:01Z",
            "message": {"role": role, "content": [{"type": "text", "text": text}]},
        }

    # b and c name each other as parent: unreachable from the root, replayed one by one.
    data = _lines(header, msg("a", None, "user", "x" * 40), msg("b", "c", "user", "y" * 80),
                  msg("c", "b", "assistant", "z" * 120))  # fmt: skip
    session = parse_transcript(data, "cycle.jsonl")
    tl = build_timeline(session)
    assert list(tl.tokens) == [10, 20, 30]
    _assert_matches_replay(session, tl)
    assert tl.nearest(-4.0) == 0 and tl.nearest(1.4) == 1 and tl.nearest(99.0) == 2


def test_a_line_the_agent_cannot_parse_adds_nothing_to_the_context():
    from core.timeline.arrays import build_timeline
    from core.transcript.loader import parse_transcript

    head = {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"}

    def user(i: str, parent: str | None, n: int) -> bytes:
        msg = {"role": "user", "content": "x" * n, "timestamp": 1}
        obj = {"type": "message", "id": i, "parentId": parent, "timestamp": "t", "message": msg}
        return orjson.dumps(obj)

    lines = [orjson.dumps(head), user("a", None, 400), user("b", "a", 800) + user("c", "b", 80)]
    lines.append(user("d", "a", 40))
    s = parse_transcript(b"\n".join(lines) + b"\n", "s.jsonl")
    tl = build_timeline(s)
    assert tl.entry_ids == ("a", "b", "c", "d")
    assert tl.unseen.tolist() == [False, True, True, False]
    assert tl.tokens.tolist() == [100, 200, 20, 10]  # each bar shows its own size
    assert tl.context.tolist() == [100, 100, 100, 110]  # but the context never holds b, c
    assert tl.summary(1).startswith("never seen by the agent (a line it cannot parse: 3")
    assert not tl.on_path[1] and not tl.on_path[2]


def test_a_compaction_on_a_line_the_agent_cannot_parse_is_no_marker(fixtures_dir, tmp_path):
    from core.timeline.arrays import build_timeline
    from core.transcript import load_transcript

    lines = (fixtures_dir / "before-compaction.jsonl").read_bytes().splitlines()
    at = next(i for i, x in enumerate(lines) if b'"type":"compaction"' in x)
    lines[at - 1 : at + 1] = [lines[at - 1] + lines[at]]  # the compaction glued to its parent
    path = tmp_path / "glued.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    s = load_transcript(path)
    (comp,) = [e for e in s.entries if e.type == "compaction" and e.recovered]
    tl = build_timeline(s)
    assert comp.id not in {m.entry_id for m in tl.compactions}
