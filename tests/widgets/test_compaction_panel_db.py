"""The compaction panel on a session of OpenClaw's agent database (issue 15).

memlens never writes there: the panel says so, its Write action stays off, and
"Compact with OpenClaw…" runs OpenClaw's CLI. Here a stand-in script plays the CLI
(it records its argv and environment and answers as OpenClaw does); the real
OpenClaw and its gateway are driven in tests/oracle/test_openclaw_gateway_compact.py.
"""

from __future__ import annotations

import hashlib
import json
import sys
from typing import TYPE_CHECKING

import pytest

from core.compaction.target import target_for
from core.openclaw.agentdb import AgentDb
from tests.openclaw_db import add_session, conversation, create_agent_db
from widgets.compaction.panel import CompactionPanel

if TYPE_CHECKING:
    from pathlib import Path

FAKE_CLI = """
import json, os, sys
open(sys.argv[1], "w").write(json.dumps({"argv": sys.argv[2:],
    "state": os.environ.get("OPENCLAW_STATE_DIR")}))
if "fail" in sys.argv[1]:
    print(json.dumps({"ok": False, "error": {"type": "cli_error",
        "message": "Gateway not reachable at ws://127.0.0.1:1 (ECONNREFUSED)"}}))
    sys.exit(1)
print(json.dumps({"ok": True, "key": sys.argv[5], "compacted": True,
    "result": {"summary": "S", "firstKeptEntryId": "x", "tokensBefore": 900,
               "tokensAfter": 120}}))
"""


@pytest.fixture
def db_home(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / ".openclaw"
    path = home / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    path.parent.mkdir(parents=True)
    db = create_agent_db(path)
    add_session(db, "s1", conversation("s1", 120, size=800))
    db.close()
    return home, path


def _panel(qtbot, tmp_path: Path, record: str) -> CompactionPanel:  # type: ignore[no-untyped-def]
    script = tmp_path / "fake_openclaw.py"
    script.write_text(FAKE_CLI)
    panel = CompactionPanel(confirm=lambda writes: True)
    qtbot.addWidget(panel)
    panel.resize(1200, 900)
    panel.openclaw_command = f"{sys.executable} {script} {tmp_path / record}"
    return panel


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_database_session_is_dry_run_only(qtbot, tmp_path, db_home):
    _home, path = db_home
    before = _digest(path)
    with AgentDb(path) as db:
        session = db.load_session("s1")
    panel = _panel(qtbot, tmp_path, "argv.json")
    with qtbot.waitSignal(panel.cut_point_changed, timeout=10_000):
        panel.set_target(target_for(session, window=4000))
    assert panel.db_note.isVisibleTo(panel) and "never writes" in panel.db_note.text()
    assert panel.openclaw_button.isVisibleTo(panel) and not panel.write_button.isVisibleTo(panel)
    with qtbot.waitSignal(panel.summary_ready, timeout=20_000):
        panel.run()  # the offline dry run works as on a file
    assert panel.result() is not None and panel.result().entry is not None
    assert not panel.write_action.isEnabled()
    panel.write()  # even triggered, nothing happens
    assert _digest(path) == before


def test_compact_with_openclaw_runs_its_cli(qtbot, tmp_path, db_home):
    home, path = db_home
    with AgentDb(path) as db:
        session = db.load_session("s1")
    panel = _panel(qtbot, tmp_path, "argv.json")
    with qtbot.waitSignal(panel.cut_point_changed, timeout=10_000):
        panel.set_target(target_for(session, window=4000))
    asked: list[str] = []
    panel._ask_openclaw = lambda s: asked.append(s.id) or True  # type: ignore[method-assign]
    assert panel.openclaw_action.isEnabled()
    with qtbot.waitSignal(panel.openclaw_compacted, timeout=20_000) as blocker:
        panel.openclaw_action.trigger()
    assert asked == ["s1"] and blocker.args == ["agent:main:explicit:s1"]
    seen = json.loads((tmp_path / "argv.json").read_text())
    assert seen["argv"][:5] == ["sessions", "compact", "agent:main:explicit:s1", "--json",
                                "--timeout"]  # fmt: skip
    assert seen["argv"][-2:] == ["--agent", "main"] and seen["state"] == str(home)
    assert "900 -> 120 tokens" in panel.state_label.text()


def test_openclaw_failure_is_shown_and_nothing_written(qtbot, tmp_path, db_home):
    _home, path = db_home
    before = _digest(path)
    with AgentDb(path) as db:
        session = db.load_session("s1")
    panel = _panel(qtbot, tmp_path, "fail.json")
    with qtbot.waitSignal(panel.cut_point_changed, timeout=10_000):
        panel.set_target(target_for(session, window=4000))
    panel._ask_openclaw = lambda s: True  # type: ignore[method-assign]
    with qtbot.waitSignal(panel.failed, timeout=20_000) as blocker:
        panel.compact_with_openclaw()
    assert "Gateway not reachable" in blocker.args[0]
    assert "nothing was written" in panel.state_label.text()
    assert _digest(path) == before


def test_declined_question_runs_nothing(qtbot, tmp_path, db_home):
    _home, path = db_home
    with AgentDb(path) as db:
        session = db.load_session("s1")
    panel = _panel(qtbot, tmp_path, "argv.json")
    with qtbot.waitSignal(panel.cut_point_changed, timeout=10_000):
        panel.set_target(target_for(session, window=4000))
    panel._ask_openclaw = lambda s: False  # type: ignore[method-assign]
    panel.compact_with_openclaw()
    assert not (tmp_path / "argv.json").exists()
    assert "nothing was written" in panel.state_label.text()
