"""The oracle tier: what pi sends to the provider, and memlens's view of it.

pi's ``buildSessionContext``, ``convertToLlm`` and pi-ai's ``transformMessages``
(pinned by ``tests/oracle/agents.py``) turn a transcript into the request's
messages: a tool call whose result was never written gets a synthetic error
result, an aborted or failed turn is not sent, a ``!!`` bash run is not sent.
memlens's :func:`core.transcript.provider.provider_context` must agree message
for message, and its trim and compaction inputs stay valid in the same way.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from core.transcript import context_at, load_transcript
from core.transcript.provider import SYNTHETIC_RESULT_TEXT, USER_LIKE, provider_context
from tests.oracle.agents import run_node

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).with_name("pi_provider.mjs")
HEADER = {
    "type": "session",
    "version": 3,
    "id": "s",
    "timestamp": "2026-01-01T00:00:00Z",
    "cwd": "/",
}


def _entries(messages: list[dict]) -> bytes:
    out = [orjson.dumps(HEADER)]
    parent = None
    for n, msg in enumerate(messages):
        kind = msg.pop("_type", "message")
        eid = f"e{n:03d}"
        obj = {"type": kind, "id": eid, "parentId": parent, "timestamp": "2026-01-01T00:00:00Z"}
        obj.update(msg if kind != "message" else {"message": msg})
        out.append(orjson.dumps(obj))
        parent = eid
    return b"\n".join(out) + b"\n"


def user(text: str) -> dict:
    return {"role": "user", "content": text, "timestamp": 1}


def call(*ids: str, stop: str = "toolUse") -> dict:
    blocks = [{"type": "toolCall", "id": i, "name": "read", "arguments": {"path": i}} for i in ids]
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": "calling"}, *blocks],
        "stopReason": stop,
        "provider": "p",
        "model": "m",
        "api": "openai-completions",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "timestamp": 2,
    }


def result(i: str) -> dict:
    return {
        "role": "toolResult",
        "toolCallId": i,
        "toolName": "read",
        "content": [{"type": "text", "text": f"contents of {i}"}],
        "isError": False,
        "timestamp": 3,
    }


def answer(text: str, stop: str = "stop") -> dict:
    return {**call(), "content": [{"type": "text", "text": text}], "stopReason": stop}


CASES = {
    "interrupted then user": [
        user("a"),
        call("c1", "c2"),
        result("c1"),
        user("go on"),
        answer("ok"),
    ],
    "interrupted at the end": [user("a"), call("c1"), result("c1"), call("c2")],
    "aborted turn": [user("a"), call("c1", stop="aborted"), user("again"), answer("x", "error")],
    "bash and custom": [
        user("a"),
        call("c1"),
        {"role": "bashExecution", "command": "ls", "output": "x", "exitCode": 0, "timestamp": 4},
        {
            "role": "bashExecution",
            "command": "ls",
            "output": "y",
            "exitCode": 0,
            "timestamp": 5,
            "excludeFromContext": True,
        },
        {"_type": "custom_message", "customType": "note", "content": "hello", "display": True},
        answer("done"),
    ],
    "clean": [user("a"), call("c1"), result("c1"), answer("done")],
}


def pi_sent(pkg: Path, path: Path) -> list[dict]:
    return list(run_node(SCRIPT, str(pkg), str(path), timeout=120))


def memlens_sent(path: Path) -> list[dict]:
    out = []
    for item in provider_context(context_at(load_transcript(path))):
        m = item.message
        role = "user" if m.role in USER_LIKE else m.role
        out.append(
            {
                "role": role,
                "toolCallId": m.tool_call_id if m.role == "toolResult" else None,
                "calls": [c.tool_id for c in m.tool_calls()] if role == "assistant" else [],
                "text": m.text() if m.role == "toolResult" else None,
                "isError": m.is_error if m.role in ("toolResult",) else None,
                "synthetic": item.synthetic,
            }
        )
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_memlens_sends_what_pi_sends(pi_package, tmp_path, case):
    path = tmp_path / "s.jsonl"
    path.write_bytes(_entries([dict(m) for m in CASES[case]]))
    theirs = pi_sent(pi_package, path)
    mine = memlens_sent(path)
    assert [{k: v for k, v in m.items() if k != "synthetic"} for m in mine] == [
        {**t, "isError": t["isError"] if t["role"] == "toolResult" else None} for t in theirs
    ]
    made = [m for m in mine if m["synthetic"]]
    assert all(m["text"] == SYNTHETIC_RESULT_TEXT and m["isError"] for m in made)
    if case.startswith("interrupted"):
        assert [m["toolCallId"] for m in made] == ["c2"]
