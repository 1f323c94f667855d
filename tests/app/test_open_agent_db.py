"""The app on a current OpenClaw home (issue 15): the list first, transcripts after.

Database sessions are listed from their SQL counts (tokens shown as …), then read in a
background worker; a session picked before that is read in its own worker, never on
the GUI thread, and shown when it arrives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.main_window import MainWindow
from core.openclaw.agentdb import session_path
from tests.openclaw_db import add_session, conversation, create_agent_db

if TYPE_CHECKING:
    from pathlib import Path


def _home(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / ".openclaw"
    db = home / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    con = create_agent_db(db)
    for i in range(3):
        add_session(con, f"s{i}", conversation(f"s{i}", 20 + i), created_at=1_795_600_000_000 + i)
    con.close()
    return home, db


def test_sessions_listed_first_then_read_in_the_background(qtbot, tmp_path):
    home, _db = _home(tmp_path)
    window = MainWindow()
    qtbot.addWidget(window)
    window.open_path(str(home))
    qtbot.waitUntil(lambda: window.data is not None, timeout=30_000)
    qtbot.waitUntil(lambda: window.settled() and not window.data.pending, timeout=30_000)
    rows = window.navigator.model.sessions()
    assert sorted(r.id for r in rows) == ["s0", "s1", "s2"]
    assert all(r.loaded and r.storage == "sqlite" for r in rows)  # the figures came in
    assert {r.messages for r in rows} == {40, 42, 44}


def test_a_session_picked_before_it_is_read_is_read_in_a_worker(qtbot, tmp_path, monkeypatch):
    home, db = _home(tmp_path)
    window = MainWindow()
    qtbot.addWidget(window)
    monkeypatch.setattr(window.pending, "start", lambda data: False)  # no background read
    window.open_path(str(home))
    qtbot.waitUntil(lambda: window.data is not None and window.inspector.session is not None,
                    timeout=30_000)  # fmt: skip
    data = window.data
    target = session_path(db, "s1")
    if window.inspector.session.path == target:
        target = session_path(db, "s0")
    assert target in data.pending
    assert window.navigator.select_session(target)
    assert window.runner.busy(window.inspector.read_key)  # a job reads it
    qtbot.waitUntil(lambda: window.inspector.session.path == target, timeout=30_000)
    assert target not in data.pending
    assert window.inspector.entry_id == window.inspector.session.leaf.id
