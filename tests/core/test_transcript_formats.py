"""v2/v3 trees, branches, every entry type, and the message shapes of other agents."""

from __future__ import annotations

import orjson
import pytest

from core.transcript import compactions, context_at, parse_transcript
from core.transcript.tokens import estimate_message


def _file(header, *entries):
    return b"".join(orjson.dumps(o) + b"\n" for o in (header, *entries))


def _msg(i, parent, message, **extra):
    return {
        "type": "message",
        "id": i,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": message,
        **extra,
    }


H3 = {
    "type": "session",
    "version": 3,
    "id": "s-3",
    "timestamp": "2026-01-01T00:00:00Z",
    "cwd": "/w",
}


def test_v2_hook_message_reads_as_custom():
    data = _file(
        {**H3, "version": 2},
        _msg("a0000001", None, {"role": "user", "content": "hi", "timestamp": 1}),
        _msg(
            "a0000002",
            "a0000001",
            {
                "role": "hookMessage",
                "customType": "x",
                "content": "hook",
                "display": True,
                "timestamp": 2,
            },
        ),
    )
    s = parse_transcript(data, "v2.jsonl")
    assert s.version == 2
    m = s.entries[1].message
    assert m.role == "custom" and m.source_role == "hookMessage"
    assert s.entries[1].raw["message"]["role"] == "hookMessage"  # raw stays as written


def test_tree_branches_and_leaf():
    data = _file(
        H3,
        _msg("00000001", None, {"role": "user", "content": "one"}),
        _msg(
            "00000002",
            "00000001",
            {"role": "assistant", "content": [{"type": "text", "text": "A"}]},
        ),
        _msg("00000003", "00000002", {"role": "user", "content": "abandoned"}),
        {
            "type": "branch_summary",
            "id": "00000004",
            "parentId": "00000002",
            "timestamp": "2026-01-01T00:00:01Z",
            "fromId": "00000003",
            "summary": "tried X",
        },
        _msg("00000005", "00000004", {"role": "user", "content": "two"}),
        {
            "type": "label",
            "id": "00000006",
            "parentId": "00000005",
            "timestamp": "t",
            "targetId": "00000001",
            "label": "start",
        },
    )
    s = parse_transcript(data, "tree.jsonl")
    assert s.leaf.id == "00000006"
    assert [e.id for e in s.branch_points()] == ["00000002"]
    assert {e.id for e in s.leaves()} == {"00000003", "00000006"}
    roles = [i.message.role for i in context_at(s)]
    assert roles == ["user", "assistant", "branchSummary", "user"]
    assert [i.message.text() for i in context_at(s, "00000003")] == ["one", "A", "abandoned"]


def test_compaction_by_id_and_every_entry_type():
    data = _file(
        H3,
        _msg("e1", None, {"role": "user", "content": "old question"}),
        _msg(
            "e2", "e1", {"role": "assistant", "content": [{"type": "text", "text": "old answer"}]}
        ),
        {
            "type": "model_change",
            "id": "e3",
            "parentId": "e2",
            "timestamp": "t",
            "provider": "anthropic",
            "modelId": "claude",
        },
        {
            "type": "thinking_level_change",
            "id": "e4",
            "parentId": "e3",
            "timestamp": "t",
            "thinkingLevel": "high",
        },
        _msg("e5", "e4", {"role": "user", "content": "kept question"}),
        {
            "type": "compaction",
            "id": "e6",
            "parentId": "e5",
            "timestamp": "2026-01-01T00:00:00Z",
            "summary": "S",
            "firstKeptEntryId": "e5",
            "tokensBefore": 999,
            "tokensAfter": 10,
        },
        {
            "type": "custom",
            "id": "e7",
            "parentId": "e6",
            "timestamp": "t",
            "customType": "openclaw.cache-ttl",
            "data": {},
        },
        {
            "type": "custom_message",
            "id": "e8",
            "parentId": "e7",
            "timestamp": "t",
            "customType": "note",
            "content": "injected",
            "display": True,
        },
        {"type": "session_info", "id": "e9", "parentId": "e8", "timestamp": "t", "name": "n"},
        {"type": "future_thing", "id": "ea", "parentId": "e9", "timestamp": "t", "x": 1},
    )
    s = parse_transcript(data, "all.jsonl")
    assert any("unknown entry type 'future_thing'" in p.message for p in s.problems)
    assert s.entry("ea").raw["x"] == 1  # kept raw
    items = context_at(s)
    assert [i.message.role for i in items] == ["compactionSummary", "user", "custom"]
    assert items[0].message.text() == "S"
    (c,) = compactions(s)
    assert (c.tokens_before, c.tokens_after, c.tokens_after_estimated) == (999, 10, False)
    assert [i.entry.id for i in c.replaced] == ["e1", "e2"]


SHAPES = {
    "pi": [
        {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.py"}}
            ],
        },
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [{"type": "text", "text": "print(1)"}],
            "isError": False,
        },
    ],
    "anthropic": [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "c1", "name": "read", "input": {"path": "a.py"}}
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "c1",
                    "content": [{"type": "text", "text": "print(1)"}],
                }
            ],
        },
    ],
    "openai-blocks": [
        {
            "role": "assistant",
            "content": [
                {
                    "type": "functionCall",
                    "id": "c1",
                    "name": "read",
                    "arguments": '{"path": "a.py"}',
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "print(1)"},
    ],
    "openai-chat": [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"a.py"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "print(1)"},
    ],
    "bedrock": [
        {
            "role": "assistant",
            "content": [
                {"type": "toolUse", "toolUseId": "c1", "name": "read", "input": {"path": "a.py"}}
            ],
        },
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "content": [{"type": "text", "text": "print(1)"}],
        },
    ],
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_shape_normalises_to_the_same_model(shape):
    call, result = SHAPES[shape]
    data = _file(H3, _msg("m1", None, call), _msg("m2", "m1", result))
    s = parse_transcript(data, f"{shape}.jsonl")
    c, r = s.entries[0].message, s.entries[1].message
    (block,) = c.tool_calls()
    assert (block.tool_id, block.name, block.arguments) == ("c1", "read", {"path": "a.py"})
    assert r.role == "toolResult"
    assert r.result_ids() == ("c1",)
    assert r.text() == "print(1)"
    pair = s.tool_pairs()["c1"]
    assert pair.call_entry == "m1" and pair.result_entries == ("m2",)
    # the same normalised message gives pi's estimate whatever the shape
    assert estimate_message(c) == 5  # len("read") + len('{"path":"a.py"}') = 19 -> 5
    assert estimate_message(r) == 2


def test_images_and_thinking_blocks():
    msg = {
        "role": "user",
        "content": [
            {"type": "text", "text": "look"},
            {"type": "image", "data": "A" * 400, "mimeType": "image/png"},
        ],
    }
    res = {
        "role": "toolResult",
        "toolCallId": "c",
        "content": [
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/jpeg", "data": "B" * 8},
            }
        ],
    }
    think = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "redacted_thinking", "data": "x"},
        ],
    }
    s = parse_transcript(
        _file(H3, _msg("1", None, msg), _msg("2", "1", res), _msg("3", "2", think)), "i"
    )
    img = s.entries[0].message.blocks[1]
    assert (img.kind, img.mime, img.size) == ("image", "image/png", 300)
    assert estimate_message(s.entries[0].message) == 1  # pi counts no image in user messages
    assert estimate_message(s.entries[1].message) == 1200  # 4,800 chars in a tool result
    assert [b.kind for b in s.entries[2].message.blocks] == ["thinking", "thinking"]


def test_v1_compaction_position_resolves_as_pi_without_its_unparsable_line():
    """pi's parse drops the line of two objects run together before it migrates v1.

    ``firstKeptEntryIndex`` 3 then names no entry (pi: header, "c", compaction), so
    pi's context is the summary alone (checked with pi 0.73.1 in tests/oracle); the
    two recovered messages stay in the session, marked, and out of every context.
    """
    header = {"type": "session", "id": "s1", "timestamp": "t", "cwd": "/"}
    objs = [
        orjson.dumps(o)
        for o in (
            header,
            {"type": "message", "timestamp": "t", "message": {"role": "user", "content": "a"}},
            {"type": "message", "timestamp": "t", "message": {"role": "user", "content": "b"}},
            {"type": "message", "timestamp": "t", "message": {"role": "user", "content": "c"}},
            {
                "type": "compaction",
                "timestamp": "t",
                "summary": "S",
                "firstKeptEntryIndex": 3,
                "tokensBefore": 5,
            },
        )
    ]
    data = objs[0] + b"\n" + objs[1] + objs[2] + b"\n" + objs[3] + b"\n" + objs[4] + b"\n"
    s = parse_transcript(data, "v1.jsonl")
    assert [e.recovered for e in s.entries] == [True, True, False, False]
    assert any("firstKeptEntryIndex 3 names no entry" in p.message for p in s.problems)
    assert [i.message.text() for i in context_at(s)] == ["S"]
    # the recovered ones are in no context, and pi's chain skips them
    assert s.entries[2].parent_id is None and s.entries[3].parent_id == s.entries[2].id
    assert context_at(s, s.entries[1].id) == []
    assert [i.message.text() for i in context_at(s, s.entries[2].id)] == ["c"]


def test_v1_compaction_position_counts_pi_positions_after_an_unparsable_line():
    header = {"type": "session", "id": "s1", "timestamp": "t", "cwd": "/"}

    def user(text: str) -> bytes:
        msg = {"type": "message", "timestamp": "t", "message": {"role": "user", "content": text}}
        return orjson.dumps(msg)

    comp = {"type": "compaction", "timestamp": "t", "summary": "S", "firstKeptEntryIndex": 2}
    data = b"\n".join(
        [orjson.dumps(header), user("a") + user("b"), user("c"), user("d"), orjson.dumps(comp)]
    )
    s = parse_transcript(data + b"\n", "v1.jsonl")
    # pi: [header, c, d, compaction]; index 2 is "d"
    assert [i.message.text() for i in context_at(s)] == ["S", "d"]


def test_v3_child_of_an_unparsable_line_restarts_the_context_as_pi():
    def entry(i: str, parent: str | None, text: str) -> bytes:
        msg = {"role": "user", "content": text, "timestamp": 1}
        obj = {"type": "message", "id": i, "parentId": parent, "timestamp": "t", "message": msg}
        return orjson.dumps(obj)

    data = b"\n".join(
        [
            orjson.dumps({**H3}),
            entry("a", None, "a"),
            entry("b", "a", "b") + entry("c", "b", "c"),
            entry("d", "c", "d"),
            entry("e", "d", "e"),
        ]
    )
    s = parse_transcript(data + b"\n", "v3.jsonl")
    assert [e.id for e in s.entries if e.recovered] == ["b", "c"]
    assert s.leaf is not None and s.leaf.id == "e"
    # pi's byId lacks c: the walk from e stops at d
    assert [i.message.text() for i in context_at(s)] == ["d", "e"]
    (brk,) = [b for b in s.parent_breaks() if b.kind == "unparsed"]
    assert brk.entry_id == "d" and "cannot parse" in brk.message


def test_newer_version_is_read_with_a_warning():
    s = parse_transcript(_file({**H3, "version": 9}), "v9.jsonl")
    assert s.version == 9
    assert any("newer than memlens knows" in p.message for p in s.problems)


def test_a_header_glued_to_an_entry_leaves_the_agent_no_session(tmp_path):
    """pi's loadEntriesFromFile drops the header's line and then finds no header."""
    from core.compaction.refusals import CompactionRefused
    from core.compaction.run import compact
    from core.compaction.write import write_compaction

    def user(i: str, parent: str | None) -> bytes:
        msg = {"role": "user", "content": f"text {i} " * 200, "timestamp": 1}
        obj = {"type": "message", "id": i, "parentId": parent, "timestamp": "t", "message": msg}
        return orjson.dumps(obj)

    ids = [f"e{n}" for n in range(8)]
    body = [user(i, ids[n - 1] if n else None) for n, i in enumerate(ids)]
    data = b"\n".join([orjson.dumps(H3) + body[0], *body[1:]]) + b"\n"
    path = tmp_path / "glued-header.jsonl"
    path.write_bytes(data)
    s = parse_transcript(data, str(path))
    assert not s.agent_readable and all(e.recovered for e in s.entries)
    assert any("session header has another object" in p.message for p in s.problems)
    assert s.leaf is None and context_at(s) == []
    run = compact(s, keep_recent_tokens=100)
    assert not run.plan.ok
    with pytest.raises(CompactionRefused, match="the session has no entries"):
        write_compaction(run, s, force=True)
    assert path.read_bytes() == data
