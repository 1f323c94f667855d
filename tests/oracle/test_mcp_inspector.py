"""``memlens mcp DATA`` spoken to by the official MCP Inspector (npm, CLI mode).

The Inspector (``@modelcontextprotocol/inspector`` 2.12.0, pinned in
:mod:`tests.oracle.agents`) starts the server as an MCP host does, a stdio child
process (``python -m app.launcher mcp DATA`` from the repository, the venv's python),
and prints one JSON object per method (``--format json -q``). Its exit code says how
the call went: 0 for an answer, 5 when the tool answered ``isError: true``.

The Inspector lists the six tools with their schemas (``--strict``); the answers it
reads for ``memory_search``, ``sessions_list`` and ``session_context`` must be exactly
the answers of the same calls in process (:class:`core.mcp.tools.MemoryTools`, the
clock pinned by ``MEMLENS_NOW``): the wire adds nothing and loses nothing. Each
Inspector run starts Node and the server, about 2-3 s, so the other tools are left to
the SDK's client (``tests/core/test_mcp_server.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest

from core.mcp.schemas import TOOLS
from core.mcp.tools import MemoryTools
from tests.conftest import ROOT
from tests.demo_copy import demo_copy
from tests.oracle import agents

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow

NOW = 1_795_700_000_000  # 2026-11-26T13:33:20Z
TOOL_ERROR_EXIT = 5
"""The Inspector's exit code when a tool answered ``isError: true`` (EXIT_CODES.TOOL_ERROR)."""


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_copy(tmp_path_factory.mktemp("inspector") / "demo", now_ms=NOW, segments=300)


class Run:
    """One Inspector run: its exit code, its JSON stdout and its stderr."""

    def __init__(self, done: subprocess.CompletedProcess[str]) -> None:
        self.code, self.stderr = done.returncode, done.stderr
        assert done.stdout.strip(), f"no JSON on stdout (exit {self.code}): {done.stderr[-2000:]}"
        self.out: dict[str, Any] = json.loads(done.stdout)

    @property
    def result(self) -> dict[str, Any]:
        return self.out["result"]  # type: ignore[no-any-return]

    def answer(self) -> dict[str, Any]:
        """The tool's JSON answer (its text block, which must equal structuredContent)."""
        assert self.code == 0, (self.out, self.stderr[-2000:])
        assert self.result.get("isError") is not True
        text = json.loads(self.result["content"][0]["text"])
        assert text == self.result["structuredContent"]
        return text  # type: ignore[no-any-return]

    def error(self) -> str:
        """The message of a tool error (``isError: true``)."""
        assert self.code == TOOL_ERROR_EXIT, (self.out, self.stderr[-2000:])
        assert self.result["isError"] is True
        return str(self.result["content"][0]["text"])


def inspect(inspector: agents.McpInspector, tmp_path: Path, data: Path, *method: str) -> Run:
    """``inspector --cli --format json -q python -m app.launcher mcp DATA --method ...``."""
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY")}
    env["HOME"] = str(tmp_path / "inspector-home")  # its catalog and secrets, not the user's
    env.setdefault("NODE_COMPILE_CACHE", str(agents.cache_root() / "node-compile-cache"))
    argv = [
        *inspector.cli, "--format", "json", "-q", "--cwd", str(ROOT),
        "-e", f"MEMLENS_NOW={NOW}",
        sys.executable, "-m", "app.launcher", "mcp", str(data), *method,
    ]  # fmt: skip
    done = subprocess.run(
        argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    return Run(done)


def call(inspector: agents.McpInspector, tmp_path: Path, data: Path, tool: str, *pairs: str) -> Run:
    method = ["--method", "tools/call", "--tool-name", tool]
    return inspect(inspector, tmp_path, data, *method, *(["--tool-arg", *pairs] if pairs else []))


def test_tools_list_shows_every_tool_and_its_schema(
    inspector: agents.McpInspector, tmp_path: Path, demo: Path
) -> None:
    run = inspect(inspector, tmp_path, demo, "--method", "tools/list", "--strict")
    assert run.code == 0, run.stderr[-2000:]  # --strict: no schema portability error
    listed = run.result["tools"]
    assert [t["name"] for t in listed] == [t.name for t in TOOLS]
    for tool, spec in zip(listed, TOOLS, strict=True):
        assert tool["title"] == spec.title and tool["description"] == spec.description
        assert tool["inputSchema"] == spec.input_schema
        assert tool["annotations"]["readOnlyHint"] is True
        assert tool["annotations"]["destructiveHint"] is False


def test_every_tool_answers_as_in_process(
    inspector: agents.McpInspector, tmp_path: Path, demo: Path
) -> None:
    local = MemoryTools(demo, environ={"MEMLENS_NOW": str(NOW)})

    found = call(inspector, tmp_path, demo, "memory_search", "query=deploy hook", "minScore=0",
                 "maxResults=5").answer()  # fmt: skip
    assert found["now"] == NOW and 0 < len(found["results"]) <= 5
    assert {s["store"] for s in found["stores"]} == {"openclaw-index", "memory-context"}
    for hit in found["results"]:
        assert {"path", "score", "snippet", "source", "memlens"} <= hit.keys()
    assert found == local.call(
        "memory_search", {"query": "deploy hook", "minScore": 0, "maxResults": 5}
    )

    sessions = call(inspector, tmp_path, demo, "sessions_list", "limit=3").answer()
    assert sessions["total"] == 12 and len(sessions["sessions"]) == 3
    assert sessions == local.call("sessions_list", {"limit": 3})

    sid = sessions["sessions"][0]["id"]
    context = call(
        inspector, tmp_path, demo, "session_context", f"session={sid}", "maxTokens=800"
    ).answer()
    assert context["session"] == sid and context["items"] and context["keptTokens"] <= 800
    assert context == local.call("session_context", {"session": sid, "maxTokens": 800})

    # memory_get, knowledge_search and recall_preview: the SDK's client covers them
    # (tests/core/test_mcp_server.py); each Inspector run costs a Node start.


def test_bad_arguments_are_tool_errors(
    inspector: agents.McpInspector, tmp_path: Path, demo: Path
) -> None:
    unknown = call(inspector, tmp_path, demo, "memory_search", "query=x", "bogus=1").error()
    assert "'bogus' was unexpected" in unknown
    nobody = call(inspector, tmp_path, demo, "session_context", "session=nope").error()
    assert "no session matches 'nope'" in nobody


def test_a_missing_data_directory(inspector: agents.McpInspector, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-home"
    listed = inspect(inspector, tmp_path, missing, "--method", "tools/list")
    assert listed.code == 0 and len(listed.result["tools"]) == len(TOOLS)
    message = call(inspector, tmp_path, missing, "sessions_list").error()
    assert message == f"{missing}: no such file or folder"
    assert not missing.exists()  # nothing written
