"""Small pi v3 transcripts built in tests (entries, messages, file lines)."""

from __future__ import annotations

import json

STAMP = "2026-01-01T00:00:00.000Z"
MSG_TIME = 1767225600000


def entry(i, parent, msg):
    return {
        "type": "message",
        "id": f"{i:08x}",
        "parentId": parent,
        "timestamp": STAMP,
        "message": msg,
    }


def user(text):
    return {"role": "user", "content": text, "timestamp": MSG_TIME}


def assistant(text, total=None):
    m = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "stopReason": "stop",
        "timestamp": MSG_TIME,
    }
    if total:
        m["usage"] = {
            "input": total,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": total,
        }
    return m


def chain(n, *, start=1, parent=None, usage_step=1000):
    """*n* alternating user/assistant entries of ~4,000 chars (~1,000 pi tokens)."""
    out = []
    for i in range(start, start + n):
        text = f"step {i}: " + "check the build and run the tests " * 118
        m = user(text) if i % 2 else assistant(text, usage_step * i)
        out.append(entry(i, parent, m))
        parent = f"{i:08x}"
    return out


def lines(objs):
    head = {"type": "session", "version": 3, "id": "sess-1", "timestamp": STAMP, "cwd": "/w"}
    return [json.dumps(o) for o in [head, *objs]]


def write_file(path, raw_lines):
    path.write_text("\n".join(raw_lines) + "\n")
    return path.read_bytes()


def run_json(capsys, *args):  # type: ignore[no-untyped-def]
    """Run ``memlens ARGS --json`` in-process; exit 0 and the parsed JSON output."""
    import orjson

    from core.cli.main import run_cli

    code = run_cli([*args, "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return orjson.loads(out.out)


SESSION_KEYS = {  # a session row of `info` and `sessions` (SessionSummary.to_json)
    "agent",
    "id",
    "path",
    "storage",
    "key",
    "loaded",
    "version",
    "entries",
    "messages",
    "compactions",
    "roles",
    "tokens_estimated",
    "tokens_measured",
    "tokens_total",
    "branches",
    "modified",
    "size",
    "name",
    "model",
}


def extend_session_objects(cursor, objects, problems, *, flush_prompt=None):  # type: ignore[no-untyped-def]
    """Add objects already read to a session at once, as live mode's read then apply do."""
    from core.live.draft import SessionDraft
    from core.live.session import attach_append, prepare_append

    added = prepare_append(
        cursor, SessionDraft(cursor.session), objects, problems, flush_prompt=flush_prompt
    )
    attach_append(cursor.session, added)
    return added
