"""The oracle tier: every entry type and field pi 0.73.1's SessionManager writes.

pi's own ``SessionManager`` (``dist/core/session-manager.js``) writes a session
holding each kind of entry it knows: ``message`` (roles ``user`` with text and
image blocks, ``assistant`` with thinking, text and tool calls, usage and an
error stop, ``toolResult`` with images, details and ``isError``,
``bashExecution`` with ``exitCode``/``truncated``/``fullOutputPath`` and
``excludeFromContext``, and ``custom``), ``thinking_level_change``,
``model_change``, ``compaction`` (details, fromHook), ``branch_summary``
(details, fromHook, an empty summary, one from the root), ``custom`` (data),
``custom_message`` (string and block content, display, details), ``label``
(set and cleared), ``session_info`` (named and cleared); and a second file by
``createBranchedSession``. A line of an entry type pi does not know yet is
added. memlens reads both files with no problems, keeps the unknown entry with
its raw JSON, and replays every entry as pi's ``buildSessionContext`` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from core.transcript import context_at, load_transcript
from tests.oracle import pi_agent

pytestmark = pytest.mark.slow

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
T0 = 1_795_000_000_000
USAGE = {
    "input": 120,
    "output": 30,
    "cacheRead": 10,
    "cacheWrite": 0,
    "totalTokens": 160,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


def user(text: Any, ts: int) -> dict[str, Any]:
    return {"call": "appendMessage", "args": [{"role": "user", "content": text, "timestamp": ts}]}


def assistant(content: list[dict[str, Any]], ts: int, **extra: Any) -> dict[str, Any]:
    msg = {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": "fake",
        "model": "m1",
        "usage": USAGE,
        "stopReason": "stop",
        "timestamp": ts,
        **extra,
    }
    return {"call": "appendMessage", "args": [msg]}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def image() -> dict[str, Any]:
    return {"type": "image", "data": PNG, "mimeType": "image/png"}


OPS: list[dict[str, Any]] = [
    {"call": "appendModelChange", "args": ["fake", "m1"]},  # 0
    {"call": "appendThinkingLevelChange", "args": ["high"]},  # 1
    user("a string prompt: naïve café ☕ 𝄞", T0),  # 2
    user([text("look at this"), image()], T0 + 1),  # 3
    assistant(  # 4
        [
            {"type": "thinking", "thinking": "let me think", "thinkingSignature": "sig"},
            text("Reading two things."),
            {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "a.txt"}},
            {"type": "toolCall", "id": "call_2", "name": "bash", "arguments": {"command": "ls /x"}},
        ],
        T0 + 2,
        stopReason="toolUse",
        responseId="resp-1",
    ),
    {  # 5
        "call": "appendMessage",
        "args": [
            {
                "role": "toolResult",
                "toolCallId": "call_1",
                "toolName": "read",
                "content": [text("file a"), image()],
                "details": {"lines": 1},
                "isError": False,
                "timestamp": T0 + 3,
            }
        ],
    },
    {  # 6
        "call": "appendMessage",
        "args": [
            {
                "role": "toolResult",
                "toolCallId": "call_2",
                "toolName": "bash",
                "content": [text("ls: cannot access '/x'")],
                "isError": True,
                "timestamp": T0 + 4,
            }
        ],
    },
    assistant([], T0 + 5, stopReason="error", errorMessage="500 overloaded"),  # 7
    {  # 8
        "call": "appendMessage",
        "args": [
            {
                "role": "bashExecution",
                "command": "make test",
                "output": "FAIL\n",
                "exitCode": 1,
                "cancelled": False,
                "truncated": True,
                "fullOutputPath": "/work/out.log",
                "timestamp": T0 + 6,
            }
        ],
    },
    {  # 9
        "call": "appendMessage",
        "args": [
            {
                "role": "bashExecution",
                "command": "secret",
                "output": "",
                "cancelled": True,
                "truncated": False,
                "excludeFromContext": True,
                "timestamp": T0 + 7,
            }
        ],
    },
    {  # 10
        "call": "appendMessage",
        "args": [
            {
                "role": "custom",
                "customType": "note",
                "content": "an extension's note",
                "display": True,
                "details": {"n": 1},
                "timestamp": T0 + 8,
            }
        ],
    },
    {"call": "appendCustomEntry", "args": ["ext.state", {"k": [1, 2]}]},  # 11
    {
        "call": "appendCustomMessageEntry",
        "args": ["ext.msg", [text("hidden"), image()], False, {"d": 1}],
    },  # 12
    {"call": "appendCustomMessageEntry", "args": ["ext.str", "plain string", True]},  # 13
    {"call": "appendLabelChange", "args": ["$4", "bookmark"]},  # 14
    {"call": "appendLabelChange", "args": ["$4"]},  # 15: cleared (label undefined)
    {"call": "appendSessionInfo", "args": ["  my session  "]},  # 16
    {"call": "appendSessionInfo", "args": [""]},  # 17
    user("more", T0 + 9),  # 18
    assistant([text("ok")], T0 + 10),  # 19
    {  # 20
        "call": "appendCompaction",
        "args": ["SUMMARY ONE", "$18", 1234, {"readFiles": ["a.txt"], "modifiedFiles": []}, False],
    },
    user("after", T0 + 11),  # 21
    assistant([text("after ok")], T0 + 12, model="m2"),  # 22
    {
        "call": "branchWithSummary",
        "args": ["$7", "went elsewhere", {"readFiles": ["b"]}, True],
    },  # 23
    user("on branch", T0 + 13),  # 24
    assistant([text("on branch ok")], T0 + 14),  # 25
    {"call": "branchWithSummary", "args": ["$25", ""]},  # 26: empty summary, not in context
    user("x", T0 + 15),  # 27
    assistant([text("y")], T0 + 16),  # 28
    {"call": "branchWithSummary", "args": [None, "from the root"]},  # 29: parentId null
    user("fresh start", T0 + 17),  # 30
    assistant([text("fresh ok")], T0 + 18),  # 31
    {"call": "appendCompaction", "args": ["SUMMARY TWO", "$30", 99]},  # 32
    user("then", T0 + 19),  # 33
    assistant([text("then ok")], T0 + 20),  # 34
    {"call": "appendCompaction", "args": ["SUMMARY THREE", "$33", 77, None, True]},  # 35
    user("last", T0 + 21),  # 36
    assistant([text("last ok")], T0 + 22),  # 37
]
FUTURE = {"type": "future_thing", "payload": {"nested": [1, "two"]}, "newField": True}


@pytest.fixture(scope="module")
def written(pi_package, tmp_path_factory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("pi-formats")
    (root / "work").mkdir()
    done = pi_agent.pi_session_ops(
        pi_package,
        {"create": {"cwd": str(root / "work"), "sessionDir": str(root / "sessions")}, "ops": OPS},
        root / "ops",
    )
    path = Path(done["file"])
    # A line of a type pi does not know yet, then pi goes on after it.
    last = orjson.loads(path.read_bytes().splitlines()[-1])
    future = {**FUTURE, "id": "f0f0f0f0", "parentId": last["id"], "timestamp": last["timestamp"]}
    with path.open("ab") as fh:
        fh.write(orjson.dumps(future) + b"\n")
    more = pi_agent.pi_session_ops(
        pi_package,
        {
            "open": str(path),
            "ops": [
                user("after the future", T0 + 30),
                assistant([text("still fine")], T0 + 31),
                {"call": "createBranchedSession", "args": ["$1"]},
            ],
        },
        root / "ops",
    )
    branched = Path(more["results"][2])
    return {"path": path, "branched": branched, "ids": done["results"], "future": future}


def raw_entries(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]


def test_pi_wrote_every_entry_type(written):
    types = {e["type"] for e in raw_entries(written["path"])}
    assert types == {
        "message",
        "thinking_level_change",
        "model_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
        "future_thing",
    }
    roles = {e["message"]["role"] for e in raw_entries(written["path"]) if e["type"] == "message"}
    assert roles == {"user", "assistant", "toolResult", "bashExecution", "custom"}


@pytest.mark.parametrize("which", ["path", "branched"])
def test_memlens_reads_pi_files_without_problems(written, which):
    session = load_transcript(written[which])
    # Only the note that an unknown type is kept (severity info), nothing else.
    assert [(p.severity, p.message) for p in session.problems] == [
        ("info", "unknown entry type 'future_thing' kept raw")
    ]
    assert [e.id for e in session.entries] == [e["id"] for e in raw_entries(written[which])]
    assert session.version == 3


@pytest.mark.parametrize("which", ["path", "branched"])
def test_replay_equals_pi_at_every_entry(pi_package, written, which):
    theirs = pi_agent.pi_entries(pi_package, written[which])
    assert pi_agent.replay_mismatches(load_transcript(written[which]), theirs) == []


def test_unknown_entry_type_is_kept_raw(written):
    session = load_transcript(written["path"])
    entry = session.by_id["f0f0f0f0"]
    assert entry.type == "future_thing"
    assert entry.raw == written["future"]
    assert entry.message is None
    child = next(e for e in session.entries if e.parent_id == "f0f0f0f0")
    assert [e.id for e in session.path_to(child.id)][-2:] == ["f0f0f0f0", child.id]
    assert context_at(session, child.id)[-1].message.text() == "after the future"


def test_fields_memlens_reads(written):
    ids = written["ids"]
    s = load_transcript(written["path"])

    def msg(n: int) -> Any:
        m = s.by_id[ids[n]].message
        assert m is not None
        return m

    assert msg(2).text() == "a string prompt: naïve café ☕ 𝄞"
    assert [b.kind for b in msg(3).blocks] == ["text", "image"]
    a = msg(4)
    assert [b.kind for b in a.blocks] == ["thinking", "text", "tool_call", "tool_call"]
    assert [(b.tool_id, b.name, b.arguments) for b in a.tool_calls()] == [
        ("call_1", "read", {"path": "a.txt"}),
        ("call_2", "bash", {"command": "ls /x"}),
    ]
    assert (a.stop_reason, a.model, a.provider, a.usage) == ("toolUse", "m1", "fake", USAGE)
    r = msg(5)
    assert (r.role, r.tool_call_id, r.tool_name, r.is_error) == (
        "toolResult",
        "call_1",
        "read",
        False,
    )
    assert [b.kind for b in r.blocks] == ["text", "image"]
    assert (msg(6).is_error, msg(6).tool_call_id) == (True, "call_2")
    assert msg(7).stop_reason == "error"
    assert msg(8).role == "bashExecution" and msg(8).text() == "make test\nFAIL\n"
    assert msg(10).role == "custom" and msg(10).text() == "an extension's note"
    assert s.by_id[ids[11]].message is None and s.by_id[ids[11]].raw["data"] == {"k": [1, 2]}
    cm = msg(12)
    assert (cm.role, cm.text(), [b.kind for b in cm.blocks]) == (
        "custom",
        "hidden",
        ["text", "image"],
    )
    assert msg(13).text() == "plain string"
    for n in (14, 15, 16, 17, 0, 1):
        assert s.by_id[ids[n]].message is None
    assert s.by_id[ids[14]].raw["label"] == "bookmark"
    assert "label" not in s.by_id[ids[15]].raw
    assert msg(20).role == "compactionSummary" and msg(20).text() == "SUMMARY ONE"
    assert msg(23).role == "branchSummary" and msg(23).text() == "went elsewhere"
    assert s.by_id[ids[26]].message is None  # pi puts no empty branch summary in context
    assert s.by_id[ids[29]].parent_id is None
    tree = s.tool_pairs()
    assert tree["call_2"].is_error and not tree["call_1"].is_error


def test_branched_file_keeps_its_labels(written):
    entries = raw_entries(written["branched"])
    header = orjson.loads(written["branched"].read_bytes().splitlines()[0])
    assert header["parentSession"] == str(written["path"])
    assert load_transcript(written["branched"]).header["parentSession"] == str(written["path"])
    assert [e["type"] for e in entries].count("message") >= 2


@pytest.mark.parametrize("which", ["path", "branched"])
def test_leaf_is_the_one_pi_opens_at(pi_package, written, which, tmp_path):
    opened = pi_agent.pi_session_ops(pi_package, {"open": str(written[which]), "ops": []}, tmp_path)
    session = load_transcript(written[which])
    assert session.leaf is not None and session.leaf.id == opened["leaf"]
