"""Provider-valid contexts: pi's synthetic results in trim and replay."""

from __future__ import annotations

import pytest

from core.context.trim import smart_trim
from core.transcript import context_at, load_transcript
from core.transcript.provider import (
    SYNTHETIC_RESULT_TEXT,
    is_synthetic,
    provider_context,
    provider_messages,
)


def unanswered_calls(messages):
    """Tool calls with no result before the next turn (what a provider rejects)."""
    given = {id(m) for m in messages}
    return [m.tool_call_id for m in provider_messages(messages) if id(m) not in given]


@pytest.fixture(scope="module")
def before(fixtures_dir):
    return load_transcript(fixtures_dir / "before-compaction.jsonl")


def test_a_real_interrupted_call_gets_pis_synthetic_result(before):
    items = context_at(before, "#700")
    messages = [i.message for i in items]
    (missing,) = unanswered_calls(messages)  # #627 called a tool, then the compaction came
    assert missing in [c.tool_id for c in before.entry("#627").message.tool_calls()]
    sent = provider_context(items)
    (made,) = [i for i in sent if i.synthetic]
    assert made.entry.index == 627 and made.message.tool_call_id == missing
    assert made.message.text() == SYNTHETIC_RESULT_TEXT and made.message.is_error
    assert is_synthetic(made.message) and not any(is_synthetic(m) for m in messages)
    # aborted turns are not sent
    aborted = [i for i in items if i.message.stop_reason == "aborted"]
    assert aborted and not any(i in sent for i in aborted)
    assert unanswered_calls([i.message for i in sent]) == []


def test_a_trim_of_the_raw_context_keeps_a_call_without_its_result(before):
    raw = smart_trim([i.message for i in context_at(before, "#700")], window=36_000)
    assert raw.ran and unanswered_calls(raw.kept_messages())  # what the app fed before


@pytest.mark.parametrize("window", [12_000, 20_000, 30_000, 36_000])
def test_the_trimmed_context_is_valid_for_the_provider(before, window):
    messages = [i.message for i in context_at(before, "#700")]
    trimmed = smart_trim(provider_messages(messages), window=window)
    assert trimmed.ran and unanswered_calls(trimmed.kept_messages()) == []
    kept_made = [m for m in trimmed.kept_messages() if is_synthetic(m)]
    # a synthetic result goes or stays with its call, as any pair does
    calls = {c.tool_id for m in trimmed.kept_messages() for c in m.tool_calls()}
    assert all(m.tool_call_id in calls for m in kept_made)


def test_the_trim_command_trims_what_pi_sends(fixtures_dir, capsys):
    import orjson

    from core.cli.main import run_cli

    path = str(fixtures_dir / "before-compaction.jsonl")
    assert run_cli(["trim", path, "--window", "36000", "--at", "#700", "--json"]) == 0
    out = orjson.loads(capsys.readouterr().out)
    (made,) = [d for d in out["decisions"] if d.get("synthetic")]
    assert made["role"] == "toolResult"
    sent = out["messages"]
    assert not any("__memlens" in m for m in sent)
    calls = {
        b["id"]
        for m in sent
        if m.get("role") == "assistant"
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "toolCall"
    }
    answered = {m["toolCallId"] for m in sent if m.get("role") == "toolResult"}
    assert calls <= answered  # every call kept has its result


def test_the_summary_input_holds_the_result_pi_sends_for_an_interrupted_call(before):
    from core.compaction.summarizers import serialize

    items = context_at(before, "#700")
    text = serialize([i.message for i in items])
    (call,) = before.entry("#627").message.tool_calls()
    line = f"[Tool result]: {SYNTHETIC_RESULT_TEXT} (synthetic: the {call.name} result was never"
    assert text.count(line) == 1
    clean = serialize([i.message for i in provider_context(items) if not i.synthetic])
    assert "(synthetic:" in clean  # the call is still there, so is its stand-in


def test_the_exported_trim_holds_no_memlens_marker(before):
    messages = provider_messages([i.message for i in context_at(before, "#700")])
    kept = smart_trim(messages, window=200_000).kept_raw()  # nothing trimmed: all kept
    made = [
        m for m in kept if m.get("content") == [{"type": "text", "text": SYNTHETIC_RESULT_TEXT}]
    ]
    assert made and not any("__memlens" in m for m in kept)
