"""Claude Code, a real MCP host from npm, registers ``memlens mcp`` and uses it, offline.

Claude Code (``@anthropic-ai/claude-code``, pinned below, installed into the oracle
cache) runs with its own home in ``tmp_path``. memlens is registered as the README says
(``claude mcp add --scope user memlens -- memlens mcp DATA``, the clock pinned with
``-e MEMLENS_NOW=...``); ``claude mcp list`` and ``claude mcp get`` start the server and
report it connected.

Then ``claude -p`` answers a question with its model at
:class:`tests.oracle.fake_anthropic.FakeAnthropic` (``ANTHROPIC_BASE_URL``): the fake
model calls memlens's tools wrongly, then ``memory_search`` rightly, then answers. What
Claude Code sends back to the model as ``tool_result`` must be memlens's own answer
(the same JSON as :class:`core.mcp.tools.MemoryTools` gives in process) and memlens's
own error messages. Nothing leaves 127.0.0.1: telemetry, auto-update and other traffic
are switched off, and the fake records every request Claude Code makes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from core.mcp.data import ToolError
from core.mcp.schemas import TOOLS
from core.mcp.tools import MemoryTools
from tests.conftest import ROOT
from tests.demo_copy import demo_copy
from tests.oracle.fake_anthropic import FakeAnthropic, Reply, ToolUse, offers_tool, tool_results

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.slow

NOW = 1_795_700_000_000  # 2026-11-26T13:33:20Z
SEARCH = "mcp__memlens__memory_search"
CONTEXT = "mcp__memlens__session_context"
GOOD = {"query": "deploy hook token", "minScore": 0}
UNKNOWN_ARGUMENT = {"query": "deploy hook token", "bogus": 1}
NO_SESSION = {"session": "nope"}
QUIET = {
    # -p sends its first request without waiting for MCP servers unless told to wait.
    "MCP_CONNECTION_NONBLOCKING": "0",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
}


def memlens_command() -> list[str]:
    """``memlens`` as installed beside this python (``pip install -e .``), else the module."""
    script = Path(sys.executable).parent / "memlens"
    return [str(script)] if script.exists() else [sys.executable, "-m", "app.launcher"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_copy(tmp_path_factory.mktemp("claude-code") / "demo", now_ms=NOW, segments=300)


class Host:
    """Claude Code with its own home and project folder, memlens registered."""

    def __init__(self, claude: Path, root: Path, data: Path, api: FakeAnthropic) -> None:
        self.claude, self.data, self.api = claude, data, api
        self.home, self.project = root / "home", root / "project"
        self.home.mkdir()
        self.project.mkdir()
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "CLAUDE", "QT_")) and k != "DISPLAY"
        }
        self.env.update(QUIET, HOME=str(self.home), ANTHROPIC_API_KEY="fake-key")
        # Every command, not only -p: `mcp list` also asks the API (remote settings,
        # policy limits) and retries for 18 s when it cannot reach it.
        self.env["ANTHROPIC_BASE_URL"] = api.base_url
        # The server runs from the project folder: the repository must still import.
        self.env["PYTHONPATH"] = str(ROOT)
        self.added = self.run(
            "mcp", "add", "--scope", "user", "memlens", "-e", f"MEMLENS_NOW={NOW}",
            "--", *memlens_command(), "mcp", str(data),
        )  # fmt: skip

    def run(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.claude), *args],
            cwd=self.project,
            env=self.env | env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


def _script(body: dict[str, Any]) -> Reply | None:
    """The fake model: two wrong calls at once, then a right one, then an answer."""
    if not offers_tool(body, SEARCH):
        return None  # a side request (a title, a probe): the default text
    done = {r["tool_use_id"] for r in tool_results(body)}
    if not done:
        return Reply(
            "Let me look.",
            (ToolUse("toolu_unknown", SEARCH, UNKNOWN_ARGUMENT),
             ToolUse("toolu_nosession", CONTEXT, NO_SESSION)),
        )  # fmt: skip
    if "toolu_search" not in done:
        return Reply(tool_uses=(ToolUse("toolu_search", SEARCH, GOOD),))
    return Reply("The deploy hook still has a hardcoded token; move it to the env.")


@pytest.fixture(scope="module")
def api() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(_script) as fake:
        yield fake


@pytest.fixture(scope="module")
def host(
    claude: Path, demo: Path, api: FakeAnthropic, tmp_path_factory: pytest.TempPathFactory
) -> Host:
    return Host(claude, tmp_path_factory.mktemp("claude-host"), demo, api)


def test_claude_mcp_add_registers_memlens_and_it_connects(host: Host) -> None:
    assert host.added.returncode == 0, host.added.stderr
    assert "Added stdio MCP server memlens" in host.added.stdout
    config = json.loads((host.home / ".claude.json").read_text())
    assert config["mcpServers"]["memlens"] == {
        "type": "stdio",
        "command": memlens_command()[0],
        "args": [*memlens_command()[1:], "mcp", str(host.data)],
        "env": {"MEMLENS_NOW": str(NOW)},
    }
    listed = host.run("mcp", "list")
    assert listed.returncode == 0, listed.stderr
    line = next(x for x in listed.stdout.splitlines() if x.startswith("memlens: "))
    assert line.endswith(f"mcp {host.data} - ✔ Connected"), listed.stdout
    got = host.run("mcp", "get", "memlens")
    assert got.returncode == 0, got.stderr
    assert "Status: ✔ Connected" in got.stdout and "Scope: User config" in got.stdout
    assert f"MEMLENS_NOW={NOW}" in got.stdout


class Asked:
    """One ``claude -p`` run against the fake model: its result and what it sent."""

    def __init__(self, host: Host) -> None:
        before = files_of(host.data)
        self.done = host.run(
            "-p", "what do you remember about the deploy hook?",
            "--allowedTools", f"{SEARCH} {CONTEXT}",
            "--output-format", "json",
        )  # fmt: skip
        self.api = host.api
        self.written = files_of(host.data) != before
        self.bodies = [b for b in host.api.messages() if offers_tool(b, SEARCH)]

    def result(self, tool_use_id: str) -> dict[str, Any]:
        """The ``tool_result`` Claude Code sent the model for *tool_use_id*."""
        results = [r for r in tool_results(self.bodies[-1]) if r["tool_use_id"] == tool_use_id]
        assert len(results) == 1, tool_results(self.bodies[-1])
        return results[0]


def files_of(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under *folder*: its size and modification time."""
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in folder.rglob("*")
        if p.is_file()
    }


def text_of(result: dict[str, Any]) -> str:
    """The text of a tool_result (a string, or text blocks)."""
    content = result["content"]
    if isinstance(content, str):
        return content
    return "".join(b["text"] for b in content if b.get("type") == "text")


@pytest.fixture(scope="module")
def asked(host: Host) -> Asked:
    return Asked(host)


def test_claude_p_calls_memory_search_and_gets_memlens_answer(asked: Asked, demo: Path) -> None:
    assert asked.done.returncode == 0, (asked.done.stdout, asked.done.stderr[-3000:])
    assert asked.api.errors == []
    out = json.loads(asked.done.stdout)
    assert out["is_error"] is False, out
    assert out["result"] == "The deploy hook still has a hardcoded token; move it to the env."
    assert len(asked.bodies) == 3  # the question, the two errors, the search result
    offered = {t["name"]: t for t in asked.bodies[0]["tools"]}
    for spec in TOOLS:  # the six tools reach the model with memlens's own schemas
        assert offered[f"mcp__memlens__{spec.name}"]["input_schema"] == spec.input_schema
    assert {r.path for r in asked.api.requests if r.method == "POST"} == {"/v1/messages"}
    assert not asked.written  # memlens read DATA and wrote nothing

    found = asked.result("toolu_search")
    assert found.get("is_error") is not True
    answer = json.loads(text_of(found))
    local = MemoryTools(demo, environ={"MEMLENS_NOW": str(NOW)}).call("memory_search", GOOD)
    assert answer == local  # the wire added nothing and lost nothing
    top = answer["results"][0]
    assert "the deploy hook still has token=[REDACTED] hardcoded" in top["snippet"]
    assert [(r["entryIds"], r["score"]) for r in answer["results"]] == [
        (r["entryIds"], r["score"]) for r in local["results"]
    ]


def test_bad_calls_come_back_to_the_model_as_memlens_errors(asked: Asked, demo: Path) -> None:
    unknown = asked.result("toolu_unknown")
    assert unknown["is_error"] is True
    # The SDK's schema check in memlens's server, word for word.
    assert text_of(unknown) == (
        "Input validation error: Additional properties are not allowed ('bogus' was unexpected)"
    )
    nobody = asked.result("toolu_nosession")
    assert nobody["is_error"] is True
    local = MemoryTools(demo, environ={"MEMLENS_NOW": str(NOW)})
    with pytest.raises(ToolError) as expected:
        local.call("session_context", NO_SESSION)
    assert text_of(nobody) == str(expected.value) == "session 'nope': no session matches 'nope'"
