"""Context breakdown by section: exact sums on real transcripts, demo data and a built one."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.context.breakdown import (
    SECTION_KEYS,
    breakdown_at,
    context_breakdown,
    message_section_chars,
    split_tokens,
)
from core.context.budget import budget_for
from core.transcript import context_at, load_transcript, parse_transcript
from core.transcript.recalled_block import MARKER
from core.transcript.replay import context_size
from core.transcript.tokens import message_chars

FIXTURES = ("before-compaction.jsonl", "large-session.jsonl")


def _points(session, step=97):
    ids = [e.id for e in session.entries if e.message is not None]
    return [*ids[::step], None]


@pytest.mark.parametrize("name", FIXTURES)
def test_sections_sum_to_the_estimate_and_total_matches_the_budget(fixtures_dir, name):
    s = load_transcript(fixtures_dir / name)
    for at in _points(s):
        items = context_at(s, at)
        b = context_breakdown(items)
        budget = budget_for(s, at=at)
        attributed = sum(b.tokens(k) for k in SECTION_KEYS if k != "unattributed")
        assert attributed == b.estimated_tokens == context_size(items).estimated
        assert b.estimated_tokens == budget.estimated_tokens
        assert b.total_tokens == sum(x.tokens for x in b.sections)
        assert b.total_tokens == max(budget.context_tokens, budget.estimated_tokens)
        assert b.source == budget.context_source
        assert [x.key for x in b.sections] == list(SECTION_KEYS)


@pytest.mark.parametrize("name", FIXTURES)
def test_section_chars_add_up_to_pi_chars_for_every_message(fixtures_dir, name):
    s = load_transcript(fixtures_dir / name)
    for e in s.entries:
        if e.message is not None:
            assert sum(message_section_chars(e.message).values()) == message_chars(e.message)


def test_real_fixture_at_a_known_point(fixtures_dir):
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    b = breakdown_at(s, "#358")
    assert b.measured_tokens == 175_004  # as tests/core/test_budget.py
    assert b.total_tokens == 175_004
    assert b.tokens("unattributed") == 175_004 - b.estimated_tokens > 0
    # A coding session: tool traffic dominates, pi stores no system prompt.
    assert b.tokens("tool_results") > b.tokens("tool_calls") > b.tokens("user")
    assert b.tokens("thinking") > 0 and b.tokens("assistant_text") > 0
    assert b.tokens("system") == 0 and "does not store the system prompt" in b.system_note
    assert "reported but is not in the messages" in b.system_note
    assert b.section("tool_results").messages > 10
    top = b.section("tool_results")
    assert top.largest_entry is not None and top.largest_tokens > 0


def test_leaf_after_compactions_has_a_summary(fixtures_dir):
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    assert s.compaction_entries()
    b = breakdown_at(s)
    assert b.tokens("summary") > 0 and b.section("summary").messages == 1


def test_recalled_tokens_match_budget_extra_tokens(fixtures_dir):
    s = load_transcript(fixtures_dir / "large-session.jsonl")
    plain = breakdown_at(s)
    b = breakdown_at(s, recalled_tokens=3_500)
    budget = budget_for(s, extra_tokens=3_500)
    assert b.tokens("recalled") == plain.tokens("recalled") + 3_500
    assert b.estimated_tokens == plain.estimated_tokens + 3_500 == budget.estimated_tokens
    assert b.total_tokens == budget.context_tokens
    assert b.tokens("unattributed") == plain.tokens("unattributed")
    assert any("recalled block of 3,500" in n for n in b.notes)


def test_demo_sessions(tmp_path):
    from core.dataset.load import load_dataset
    from core.demo.build import write_demo

    write_demo(tmp_path / "home", now_ms=1_760_000_000_000, segments=300)
    ds = load_dataset(tmp_path / "home")
    assert len(ds.sessions) >= 5
    for s in ds.sessions:
        b = breakdown_at(s)
        budget = budget_for(s, config=ds.config)
        assert b.estimated_tokens == budget.estimated_tokens
        assert b.total_tokens == max(budget.context_tokens, budget.estimated_tokens)
        # The demo agent has a ~10k-token system prompt in its measured usage.
        if b.measured_tokens is not None:
            assert b.tokens("unattributed") >= 8_000


def _line(obj):
    return orjson.dumps(obj) + b"\n"


def _entry(i, parent, message):
    return {
        "type": "message",
        "id": f"e{i:07d}",
        "parentId": None if parent is None else f"e{parent:07d}",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": message,
    }


def _built_session(measured=5000):
    block = f"{MARKER}\n\n- [fact] x\n\n</recalled-context>"
    block = block.replace("- [fact] x", "- [fact] " + "x" * (80 - len(block) + 1))
    assert len(block) == 80
    usage = {"totalTokens": measured} if measured else None
    msgs = [
        {"role": "system", "content": "s" * 20},  # 5 tokens
        {"role": "user", "content": [{"type": "text", "text": "u" * 40 + block}]},  # 10 + 20
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "t" * 80},  # 20
                {"type": "text", "text": "a" * 40},  # 10
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "x"}},  # 4
            ],
            "stopReason": "toolUse",
        },
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [{"type": "text", "text": "r" * 20}, {"type": "image", "data": "AAAA"}],
        },  # (20 + 4800) / 4 = 1205
        {"role": "bashExecution", "command": "ls", "output": "o" * 6, "exitCode": 0},  # 2
        {"role": "assistant", "content": [{"type": "text", "text": "done"}], "usage": usage},
    ]
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00Z"}
    data = _line(header) + b"".join(
        _line(_entry(i, i - 1 if i else None, m)) for i, m in enumerate(msgs)
    )
    return parse_transcript(data, "built.jsonl")


def test_built_session_exact_sections():
    b = breakdown_at(_built_session())
    assert {s.key: s.tokens for s in b.sections} == {
        "system": 5,
        "summary": 0,
        "user": 10,
        "assistant_text": 10 + 1,
        "thinking": 20,
        "tool_calls": 4,
        "tool_results": 1205 + 2,
        "recalled": 20,
        "unattributed": 5000 - 1277,
    }
    assert b.estimated_tokens == 1277 and b.measured_tokens == 5000 == b.total_tokens
    assert "1 system message" in b.system_note
    assert b.section("assistant_text").messages == 2
    assert b.section("tool_results").largest_entry == "e0000003"


def test_without_usage_nothing_is_unattributed():
    b = breakdown_at(_built_session(measured=None))
    assert b.measured_tokens is None and b.source == "estimated"
    assert b.tokens("unattributed") == 0 and b.total_tokens == b.estimated_tokens == 1277


def test_estimate_above_measured_is_noted_not_subtracted():
    b = breakdown_at(_built_session(measured=1000))
    assert b.measured_tokens == 1000 and b.estimated_tokens == 1277
    assert b.tokens("unattributed") == 0 and b.total_tokens == 1277
    assert b.overestimate == 277 and any(
        "exceeds the reported context by 277" in n for n in b.notes
    )


def test_empty_context():
    b = context_breakdown([])
    assert b.total_tokens == 0 and b.measured_tokens is None and b.messages == 0
    assert "not counted" in b.system_note


@given(
    st.integers(0, 100_000),
    st.dictionaries(
        st.sampled_from(SECTION_KEYS), st.integers(0, 10**6), min_size=1, max_size=len(SECTION_KEYS)
    ),
)
def test_split_tokens_is_exact_and_proportional(tokens, chars):
    out = split_tokens(tokens, chars)
    assert sum(out.values()) == tokens and set(out) == set(chars)
    total = sum(chars.values())
    if total:
        for k, c in chars.items():
            assert abs(out[k] - tokens * c / total) < 1
