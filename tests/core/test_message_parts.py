"""Display parts of messages and context rows, on the real fixtures and a built transcript."""

from __future__ import annotations

import base64

import orjson
import pytest

from core.transcript import context_at, load_transcript, parse_transcript
from core.transcript.parts import (
    ORIGIN_AFTER,
    ORIGIN_HISTORY,
    ORIGIN_KEPT,
    ORIGIN_NOT_SENT,
    ORIGIN_RECALLED,
    ORIGIN_SUMMARY,
    ORIGIN_SYNTHETIC,
    block_chars,
    clip_lines,
    collapse_line,
    context_rows,
    format_bytes,
    message_parts,
    message_preview,
    tool_call,
    tool_results,
)
from core.transcript.provider import provider_view
from core.transcript.recalled_block import MARKER
from core.transcript.tokens import estimate_message, message_chars

PNG = base64.b64encode(b"\x89PNG" + bytes(2996)).decode()  # 3,000 bytes
JPEG = base64.b64encode(bytes(1200)).decode()
RECALLED = f"{MARKER}\n\n<knowledge>\n- [decision] use uPlot\n</knowledge>\n\n</recalled-context>"


def _entry(i, parent, **fields):
    return {"id": i, "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z", **fields}


def _msg(i, parent, message):
    return _entry(i, parent, type="message", message=message)


def synthetic_session():
    """A v3 transcript with every block kind, paired and unpaired tool calls,
    HTML in its text, a compaction, a stored recalled block and non-message entries."""
    header = {
        "type": "session",
        "version": 3,
        "id": "s-parts",
        "timestamp": "2026-01-01T00:00:00Z",
        "cwd": "/w",
    }
    entries = [
        _msg(
            "e1",
            None,
            {
                "role": "user",
                "timestamp": 1,
                "content": [
                    {"type": "text", "text": "Look at <b>x</b> & 'quotes'"},
                    {"type": "image", "data": PNG, "mimeType": "image/png"},
                ],
            },
        ),
        _msg(
            "e2",
            "e1",
            {
                "role": "assistant",
                "timestamp": 2,
                "model": "claude-sonnet-4-5",
                "stopReason": "toolUse",
                "usage": {
                    "input": 100,
                    "output": 20,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": 120,
                },
                "content": [
                    {"type": "thinking", "thinking": "secret plan <i>hmm</i>\nsecond thought line"},
                    {"type": "text", "text": "Reading the file."},
                    {
                        "type": "toolCall",
                        "id": "call_1",
                        "name": "read",
                        "arguments": {"path": "/src/a<b>.py"},
                    },
                    {
                        "type": "toolCall",
                        "id": "call_2",
                        "name": "bash",
                        "arguments": {"command": "make && echo ok"},
                    },
                ],
            },
        ),
        _msg(
            "e3",
            "e2",
            {
                "role": "toolResult",
                "toolCallId": "call_1",
                "toolName": "read",
                "timestamp": 3,
                "content": [
                    {"type": "text", "text": "\n".join(f"line {n} <tag>" for n in range(1, 101))},
                    {"type": "image", "data": JPEG, "mimeType": "image/jpeg"},
                ],
            },
        ),
        _msg(
            "e4",
            "e3",
            {
                "role": "toolResult",
                "toolCallId": "call_2",
                "toolName": "bash",
                "isError": True,
                "timestamp": 4,
                "content": [{"type": "text", "text": "make: *** boom"}],
            },
        ),
        _msg(
            "e5",
            "e4",
            {
                "role": "assistant",
                "timestamp": 5,
                "content": [
                    {
                        "type": "toolCall",
                        "id": "call_3",
                        "name": "write",
                        "arguments": {"path": "/x", "content": "a\nb"},
                    },
                ],
            },
        ),
        _entry(
            "e6",
            "e5",
            type="compaction",
            summary="Summary with <script>alert(1)</script>",
            firstKeptEntryId="e4",
            tokensBefore=1234,
        ),
        _msg(
            "e7",
            "e6",
            {"role": "user", "timestamp": 7, "content": [{"type": "text", "text": RECALLED}]},
        ),
        _msg(
            "e8",
            "e7",
            {"role": "user", "timestamp": 8, "content": [{"type": "text", "text": "and now?"}]},
        ),
        _msg(
            "e9",
            "e8",
            {"role": "assistant", "timestamp": 9, "content": [{"type": "text", "text": "done"}]},
        ),
        _entry("e10", "e9", type="model_change", provider="anthropic", modelId="claude-opus-4-5"),
        _entry("e11", "e10", type="weird_thing", payload={"a": [1, 2]}, note="<u>raw</u>"),
    ]
    data = b"".join(orjson.dumps(o) + b"\n" for o in (header, *entries))
    return parse_transcript(data, "synthetic.jsonl")


@pytest.fixture(scope="module")
def before(fixtures_dir):
    return load_transcript(fixtures_dir / "before-compaction.jsonl")


def test_block_chars_add_up_to_pis_message_count(before, fixtures_dir):
    large = load_transcript(fixtures_dir / "large-session.jsonl")
    synth = synthetic_session()
    checked = 0
    for s in (before, large, synth):
        for e in s.entries:
            m = e.message
            if m is None:
                continue
            assert sum(block_chars(b, m.role) for b in m.blocks) == message_chars(m), e.id
            checked += 1
    assert checked > 1900


def test_parts_of_an_assistant_turn_with_thinking_and_calls(before):
    msg = before.entry("#31").message
    parts = message_parts(msg)
    assert [p.kind for p in parts] == ["thinking", "text", "tool_call", "tool_call", "tool_call"]
    assert parts[0].body.startswith("The user is pointing out")
    call = parts[2]
    assert call.title == "bash" and call.tool_id == "toolu_012su8ieja7iM2yaxPU6r3cp"
    assert call.arguments["command"].startswith("cd /Users/badlogic")
    assert '"command":' in call.body  # pretty JSON for display
    assert all(p.tokens > 0 for p in parts)
    # per-block estimates round up, so they add to the message estimate or a little more
    assert (
        estimate_message(msg) <= sum(p.tokens for p in parts) <= estimate_message(msg) + len(parts)
    )


def test_tool_pair_results_and_call(before):
    pairs = before.tool_pairs()
    first, second = before.entry("#2").message.tool_calls()
    results = tool_results(before, pairs[first.tool_id])
    assert [r.entry_id for r in results] == [before.entry("#3").id]
    assert results[0].text.startswith("import { Agent")
    assert results[0].tokens == estimate_message(before.entry("#3").message)
    assert not results[0].is_error
    assert tool_results(before, pairs[second.tool_id])[0].entry_id == before.entry("#4").id
    assert tool_call(before, pairs[first.tool_id]).name == "read"


def test_synthetic_images_errors_and_missing_results():
    s = synthetic_session()
    user = message_parts(s.by_id["e1"].message)
    assert [p.kind for p in user] == ["text", "image"]
    assert (user[1].mime, user[1].size, user[1].tokens) == (
        "image/png",
        3000,
        0,
    )  # pi counts no user images
    result = message_parts(s.by_id["e3"].message)
    assert [p.kind for p in result] == ["text", "image"]
    assert result[0].title == "Result"
    assert (result[1].mime, result[1].size, result[1].tokens) == (
        "image/jpeg",
        1200,
        1200,
    )  # 4,800 chars
    assert message_parts(s.by_id["e4"].message)[0].title == "Error result"
    pairs = s.tool_pairs()
    res = tool_results(s, pairs["call_1"])
    assert len(res) == 1 and res[0].images == 1
    assert res[0].tokens == estimate_message(s.by_id["e3"].message)
    assert tool_results(s, pairs["call_2"])[0].is_error
    assert tool_results(s, pairs["call_3"]) == []


def test_bash_execution_parts(before):
    bash = next(e for e in before.entries if e.message and e.message.role == "bashExecution")
    parts = message_parts(bash.message)
    assert [p.title for p in parts] == ["Command", "Output"]
    assert parts[0].body == bash.raw["message"]["command"]
    assert message_preview(bash.message).startswith("$ ")


def test_previews_are_one_line(before):
    for e in before.entries[:300]:
        if e.message is None:
            continue
        text = message_preview(e.message, 120)
        assert "\n" not in text and len(text) <= 120
    assert message_preview(before.entry("#2").message).startswith("→ read(path=/Users/badlogic")
    assert message_preview(before.entry("#3").message).startswith("read: import { Agent")
    s = synthetic_session()
    assert "[image image/png 2.9 KB]" in message_preview(s.by_id["e1"].message)


def test_context_after_second_compaction(before):
    target = before.entry("#700")
    items = context_at(before, target.id)
    rows = context_rows(items)
    comp = before.compaction_entries()[1]
    shown = provider_view(items)
    assert len(rows) == len(shown) == len(items) + 1  # pi adds a result at #627
    (made,) = [r for r in rows if r.origin == ORIGIN_SYNTHETIC]
    assert (made.entry_index, made.role) == (627, "toolResult")
    assert made.preview.endswith(": No result provided")
    skipped = [r for r in rows if r.origin == ORIGIN_NOT_SENT]
    assert skipped and all(
        before.entry(f"#{r.entry_index}").message.stop_reason == "aborted" for r in skipped
    )
    assert [r.position for r in rows] == list(range(1, len(rows) + 1))
    assert (rows[0].origin, rows[0].entry_id, rows[0].role) == (
        ORIGIN_SUMMARY,
        comp.id,
        "compactionSummary",
    )
    kept = [r for r in rows if r.origin == ORIGIN_KEPT]
    after = [r for r in rows if r.origin == ORIGIN_AFTER]
    assert kept[0].entry_id == comp.raw["firstKeptEntryId"] == before.entry("#551").id
    assert all(551 <= r.entry_index < 628 for r in kept)
    assert all(r.entry_index > 628 for r in after)
    marked = (ORIGIN_SYNTHETIC, ORIGIN_NOT_SENT)
    assert [r for r in rows[1:] if r.origin not in marked] == kept + after
    assert after[-1].entry_id == target.id
    assert [r.tokens for r in rows] == [i.tokens for i in shown]


def test_context_rows_mark_what_pi_adds_and_skips():
    head = {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"}
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "x"}}
    msgs = [
        {"role": "user", "content": "go", "timestamp": 1},
        {"role": "assistant", "content": [call], "stopReason": "toolUse", "timestamp": 2},
        {"role": "user", "content": "stop that", "timestamp": 3},
        {"role": "assistant", "content": [{"type": "text", "text": "h"}], "stopReason": "aborted"},
    ]
    lines = [orjson.dumps(head)]
    for n, m in enumerate(msgs):
        parent = f"e{n - 1}" if n else None
        lines.append(
            orjson.dumps(
                {
                    "type": "message",
                    "id": f"e{n}",
                    "parentId": parent,
                    "timestamp": "t",
                    "message": m,
                }
            )
        )
    s = parse_transcript(b"\n".join(lines) + b"\n", "s.jsonl")
    rows = context_rows(context_at(s))
    assert [(r.entry_id, r.role, r.origin) for r in rows] == [
        ("e0", "user", ORIGIN_HISTORY),
        ("e1", "assistant", ORIGIN_HISTORY),
        ("e1", "toolResult", ORIGIN_SYNTHETIC),
        ("e2", "user", ORIGIN_HISTORY),
        ("e3", "assistant", ORIGIN_NOT_SENT),
    ]


def test_context_before_any_compaction_is_history(before):
    rows = context_rows(context_at(before, "#100"))
    assert {r.origin for r in rows} - {ORIGIN_SYNTHETIC, ORIGIN_NOT_SENT} == {ORIGIN_HISTORY}
    assert rows[0].entry_id == before.entry("#1").id


def test_recalled_block_injection():
    s = synthetic_session()
    items = context_at(s, "e9")
    rows = context_rows(items)
    # e5's write call has no result in the file: pi sends one (synthetic)
    assert [r.entry_id for r in rows] == ["e6", "e4", "e5", "e5", "e7", "e8", "e9"]
    assert [r.origin for r in rows] == [
        ORIGIN_SUMMARY,
        ORIGIN_KEPT,
        ORIGIN_KEPT,
        ORIGIN_SYNTHETIC,
        ORIGIN_RECALLED,
        ORIGIN_AFTER,
        ORIGIN_AFTER,
    ]
    block = f"{MARKER}\n\n<detail>\n[2026-01-01 00:00 user] fresh\n</detail>\n\n</recalled-context>"
    injected = context_rows(items, block)
    # the stored block goes, the new one sits right after the compaction summary
    assert [r.entry_id for r in injected] == ["e6", "", "e4", "e5", "e5", "e8", "e9"]
    new = injected[1]
    assert (new.role, new.origin, new.entry_index) == ("user", ORIGIN_RECALLED, -1)
    assert new.tokens == -(-len(block) // 4)
    assert [r.position for r in injected] == [1, 2, 3, 4, 5, 6, 7]
    first = context_rows(items, block, 0)
    assert [r.entry_id for r in first] == ["", "e6", "e4", "e5", "e5", "e8", "e9"]
    assert context_rows(items, block, 99)[-1].entry_id == ""  # clamped to the end


def test_small_helpers():
    assert format_bytes(812) == "812 B"
    assert format_bytes(14_540) == "14.2 KB"
    assert format_bytes(3_250_000) == "3.1 MB"
    assert collapse_line("a\n  b\tc", 10) == "a b c"
    assert collapse_line("x" * 20, 10) == "x" * 9 + "…"
    assert clip_lines("1\n2\n3\n4", 2) == ("1\n2", 2)
    assert clip_lines("1\n2", 2) == ("1\n2", 0)
