"""OpenClaw 2026.9.6 as the MCP host of ``memlens mcp``: registered as the README says, probed.

``openclaw mcp add memlens --command ... --arg mcp --arg DATA`` saves the server in
``openclaw.json`` (the README's OpenClaw lines), and ``openclaw mcp probe memlens
--json`` makes OpenClaw's own MCP client start the server, initialize and list its
tools: the six tools must be there, under OpenClaw's ``memlens__`` prefix, with no
diagnostic. Two OpenClaw starts, about 40 s.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest

from core.mcp.schemas import TOOL_NAMES
from tests.conftest import ROOT
from tests.demo_copy import demo_copy

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow


def _openclaw(openclaw: Any, home: Path, *args: str) -> str:
    done = subprocess.run(
        [*openclaw.cli, *args], env=openclaw.env(home), cwd=home, capture_output=True,
        text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return done.stdout


def test_openclaw_registers_and_probes_memlens(tmp_path: Path, openclaw: Any) -> None:
    data = demo_copy(tmp_path / "demo", now_ms=1_795_700_000_000, segments=300)
    home = tmp_path / "user"
    (home / ".openclaw").mkdir(parents=True)
    (home / ".openclaw" / "openclaw.json").write_text("{}\n", encoding="utf-8")
    launch = ["--arg", "-m", "--arg", "app.launcher", "--arg", "mcp", "--arg", str(data)]
    _openclaw(
        openclaw, home, "mcp", "add", "memlens", "--command", sys.executable, *launch,
        "--cwd", str(ROOT),
    )  # fmt: skip
    saved = json.loads((home / ".openclaw" / "openclaw.json").read_text(encoding="utf-8"))
    assert saved["mcp"]["servers"]["memlens"]["args"] == ["-m", "app.launcher", "mcp", str(data)]

    out = _openclaw(openclaw, home, "mcp", "probe", "memlens", "--json")
    probe = json.loads(out[out.index("{") :])
    assert probe["diagnostics"] == []
    assert probe["servers"]["memlens"]["tools"] == len(TOOL_NAMES)
    assert sorted(probe["tools"]) == sorted(f"memlens__{name}" for name in TOOL_NAMES)
