"""``memlens mcp DATA`` spoken to by the official MCP SDK's own client, over stdio.

The server runs as a user's MCP host runs it (``memlens mcp DATA`` as a child process,
no display, no Qt platform set): initialize, ``tools/list`` with each tool's JSON
Schema, ``tools/call`` of every tool, bad arguments and a data directory that is not
one, each an MCP error result with a clear message.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from core.mcp.schemas import TOOL_NAMES
from tests.conftest import ROOT
from tests.demo_copy import demo_copy

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio
NOW = 1_795_700_000_000


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _params(data: Path) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY")}
    env["MEMLENS_NOW"] = str(NOW)
    return StdioServerParameters(
        command=sys.executable, args=["-m", "app.launcher", "mcp", str(data)], env=env,
        cwd=str(ROOT),
    )  # fmt: skip


def _json(result: Any) -> dict[str, Any]:
    assert result.isError is False, result.content[0].text
    text = json.loads(result.content[0].text)
    assert text == result.structuredContent
    assert result.content[0].text == json.dumps(text)  # compact: fewer tokens for the model
    return text  # type: ignore[no-any-return]


def _error(result: Any) -> str:
    assert result.isError is True
    return str(result.content[0].text)


async def test_every_tool_over_stdio(tmp_path: Path) -> None:
    data = demo_copy(tmp_path / "demo", now_ms=NOW, segments=300)
    async with stdio_client(_params(data)) as (read, write), ClientSession(read, write) as s:
        init = await s.initialize()
        assert init.serverInfo.name == "memlens"
        assert init.capabilities.tools is not None
        assert "memory_search" in (init.instructions or "")

        listed = (await s.list_tools()).tools
        assert [t.name for t in listed] == list(TOOL_NAMES)
        for tool in listed:
            schema = tool.inputSchema
            assert schema["type"] == "object" and schema["additionalProperties"] is False
            assert set(schema["required"]) <= set(schema["properties"])
            assert tool.annotations is not None and tool.annotations.readOnlyHint is True
        search = next(t for t in listed if t.name == "memory_search").inputSchema
        assert search["properties"]["corpus"]["enum"] == ["memory", "wiki", "all", "sessions"]
        assert search["required"] == ["query"]

        sessions = _json(await s.call_tool("sessions_list", {"limit": 3}))
        assert sessions["total"] == 12 and len(sessions["sessions"]) == 3
        sid = sessions["sessions"][0]["id"]
        context = _json(await s.call_tool("session_context", {"session": sid, "maxTokens": 800}))
        assert context["session"] == sid and context["items"] and context["keptTokens"] <= 800

        found = _json(await s.call_tool("memory_search", {"query": "deploy hook", "minScore": 0}))
        assert found["now"] == NOW and found["results"]
        assert {s["store"] for s in found["stores"]} == {"openclaw-index", "memory-context"}
        note = _json(await s.call_tool("memory_get", {"path": "memory/2026-11-16.md"}))
        assert note["status"] == "ok" and note["text"]
        facts = _json(await s.call_tool("knowledge_search", {"query": "alembic migration"}))
        assert facts["results"] and facts["results"][0]["matched"]
        preview = _json(await s.call_tool("recall_preview", {"query": "alembic migration"}))
        assert preview["block"].startswith("<recalled-context") and preview["blockTokens"] > 0

        assert "'bogus' was unexpected" in _error(
            await s.call_tool("memory_search", {"query": "x", "bogus": 1})
        )
        assert "'query' is a required property" in _error(await s.call_tool("memory_search", {}))
        assert "less than the minimum of 1" in _error(
            await s.call_tool("session_context", {"session": sid, "maxTokens": 0})
        )
        assert "no session matches 'nope'" in _error(
            await s.call_tool("session_context", {"session": "nope"})
        )
        assert "unknown tool 'forget_everything'" in _error(
            await s.call_tool("forget_everything", {})
        )
        # the server lives on after errors
        assert _json(await s.call_tool("sessions_list", {"limit": 1}))["total"] == 12


async def test_a_data_directory_that_is_not_one(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-home"
    async with stdio_client(_params(missing)) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        assert len((await s.list_tools()).tools) == len(TOOL_NAMES)
        message = _error(await s.call_tool("sessions_list", {}))
        assert message == f"{missing}: no such file or folder"
    (tmp_path / "empty").mkdir()
    async with (
        stdio_client(_params(tmp_path / "empty")) as (read, write),
        ClientSession(read, write) as s,
    ):
        await s.initialize()
        message = _error(await s.call_tool("memory_search", {"query": "deploy"}))
        assert "not a data directory memlens reads" in message and str(tmp_path) in message


def test_the_server_process_leaves_httpxs_command_line_unloaded(tmp_path: Path) -> None:
    """``memlens mcp`` answers sooner without rich and pygments (httpx's optional CLI)."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY")}
    data = demo_copy(tmp_path / "demo", now_ms=NOW, segments=20)
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "app.launcher", "mcp", str(data)],
        input=b"", capture_output=True, cwd=ROOT, env=env, timeout=120,
    )  # fmt: skip
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.decode().splitlines()}
    assert "mcp.server.lowlevel" in imported  # the server did start
    assert not {"rich", "pygments"} & imported


def test_run_by_hand_in_a_terminal_it_says_what_it_waits_for(tmp_path: Path) -> None:
    """A user trying ``memlens mcp ~/.openclaw`` in a terminal sees one line on stderr
    (an MCP host, stdin a pipe, sees none); Ctrl-D (end of input) ends it, status 0."""
    import pty
    import subprocess

    from core.cli.mcp import TTY_HINT

    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY")}
    data = demo_copy(tmp_path / "demo", now_ms=NOW, segments=20)
    command = [sys.executable, "-m", "app.launcher", "mcp", str(data)]
    piped = subprocess.run(command, input=b"", capture_output=True, cwd=ROOT, env=env, timeout=120)
    assert (piped.returncode, piped.stderr, piped.stdout) == (0, b"", b"")
    try:
        terminal, child_end = pty.openpty()
    except OSError as exc:  # a container without /dev/ptmx
        pytest.skip(f"no pseudo-terminal here: {exc}")
    try:
        child = subprocess.Popen(
            command, stdin=child_end, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=ROOT, env=env,
        )  # fmt: skip
        os.write(terminal, b"\x04")  # Ctrl-D: end of input (kept until it is read)
        out, err = child.communicate(timeout=60)
    finally:
        os.close(terminal)
        os.close(child_end)
    assert (child.returncode, out, err.decode()) == (0, b"", TTY_HINT.format(data=data) + "\n")


def _raw_calls(data: Path, calls: list[str]) -> tuple[dict[int, Any], bytes]:
    """*calls* (raw ``tools/call`` params, JSON text, ids 2, 3...) after the handshake,
    as a host writes them: the answers by id, and stderr. Fails (not hangs) within 120 s
    when a call goes unanswered."""
    import subprocess
    import threading

    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY")}
    env["MEMLENS_NOW"] = str(NOW)
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    }
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
    lines += [
        f'{{"jsonrpc": "2.0", "id": {n}, "method": "tools/call", "params": {params}}}'
        for n, params in enumerate(calls, 2)
    ]
    server = subprocess.Popen(
        [sys.executable, "-m", "app.launcher", "mcp", str(data)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        cwd=ROOT, env=env,
    )  # fmt: skip
    watchdog = threading.Timer(120, server.kill)
    watchdog.start()
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write("".join(line + "\n" for line in lines).encode())
        server.stdin.flush()
        answers: dict[int, Any] = {}
        while len(answers) <= len(calls) and (line := server.stdout.readline()):
            message = json.loads(line)
            answers[message.get("id")] = message
        server.stdin.close()
        server.wait(timeout=60)
        assert server.stderr is not None
        return answers, server.stderr.read()
    finally:
        watchdog.cancel()
        server.kill()


def test_a_lone_surrogate_from_a_node_host_is_answered(tmp_path: Path) -> None:
    """Node writes half a surrogate pair as ``"\\ud800"`` (valid JSON); the SDK's parser
    refused such a line and never answered its request, so the host waited until its
    timeout. The half is read as U+FFFD, as Node's own UTF-8 has it."""
    from core.mcp.server import node_json_line

    data = demo_copy(tmp_path / "demo", now_ms=NOW, segments=20)
    call = '{"name": "memory_search", "arguments": {"query": "deploy \\ud800 hook"}}'
    answers, err = _raw_calls(data, [call])
    result = answers[2]["result"]
    assert not result["isError"] and result["structuredContent"]["query"] == "deploy \ufffd hook"
    assert err == b""
    cases = {
        r'"\ud83c\udf89"': r'"\ud83c\udf89"',  # a whole pair stays
        r'"\udf89\ud83c"': r'"\ufffd\ufffd"',  # halves in the wrong order
        r'"\\ud800"': r'"\\ud800"',  # an escaped backslash, then text
        r'"\\\uD800x"': r'"\\\ufffdx"',
        '"plain"': '"plain"',
    }
    assert {k: node_json_line(k) for k in cases} == cases


def test_half_a_surrogate_pair_in_a_transcript_is_sent_as_fffd(tmp_path: Path) -> None:
    """A transcript Node wrote holds ``"\\ud83d"`` (an emoji cut in two): the SDK cannot
    write that string, so the call went unanswered; it is sent as U+FFFD (an emoji
    whole stays as it is)."""
    data = demo_copy(tmp_path / "demo", now_ms=NOW, segments=20)
    transcript = next((data / "agents" / "main" / "sessions").glob("*.jsonl"))
    last = json.loads(transcript.read_text(encoding="utf-8").splitlines()[-1])
    message = {"role": "user", "content": [{"type": "text", "text": "TEXT"}], "timestamp": 1}
    entry = {"type": "message", "id": "half0001", "parentId": last["id"],
             "timestamp": "2026-11-19T11:49:00.000Z", "message": message}  # fmt: skip
    line = json.dumps(entry).replace("TEXT", "half \\ud83d, whole \\ud83c\\udf89")
    with transcript.open("a", encoding="utf-8") as fh:
        fh.write(line + "\n")
    call = json.dumps({"name": "session_context", "arguments": {"session": transcript.stem}})
    answers, err = _raw_calls(data, [call])
    result = answers[2]["result"]
    assert not result["isError"] and err == b""
    item = result["structuredContent"]["items"][-1]
    assert item["entry"] == "half0001" and item["text"] == "half \ufffd, whole \U0001f389"
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
