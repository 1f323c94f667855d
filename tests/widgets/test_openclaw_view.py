"""The OpenClaw tab: a session's row and OpenClaw's own transcript search (issue 15)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from core.dataset.load import load_dataset
from core.openclaw.agentdb import session_path
from tests.openclaw_db import add_session, conversation, create_agent_db, message
from widgets.common.record_model import RecordRole
from widgets.openclaw.view import OpenClawView

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    root = tmp_path / ".openclaw"
    for agent in ("main", "ops"):
        path = root / "agents" / agent / "agent" / "openclaw-agent.sqlite"
        path.parent.mkdir(parents=True)
        db = create_agent_db(path)
        events = conversation("s1", 2)
        events.append(message("deploy-1", "s1-a1", "user", f"{agent} deploys the parser on Friday"))
        add_session(
            db, "s1", events, key=f"agent:{agent}:main",
            entry={"compactionCount": 2, "totalTokens": 1234, "model": "m", "contextTokens": 16000},
            window={"channel": "telegram", "primary_conversation_id": "chat-9"},
        )  # fmt: skip
        db.close()
    return root


def _search_for(view, text):
    """Search *text* as a user does: the search tab, the query box, Search."""
    view.tabs.setCurrentWidget(view.search_page)
    view.query.setText(text)
    view.search()


def test_session_row_shows_the_database_fields(qtbot, home):
    data = load_dataset(home)
    view = OpenClawView()
    qtbot.addWidget(view)
    view.set_data(data)
    session = next(s for s in data.sessions if "/ops/" in s.path)
    view.show_session(session)
    fields = {
        view.row_model.record(r).key: view.row_model.record(r).value
        for r in range(view.row_model.rowCount())
    }
    assert fields["key"] == "agent:ops:main"
    assert fields["channel"] == "telegram" and fields["conversationId"] == "chat-9"
    assert fields["compactionCount"] == "2" and fields["totalTokens"] == "1,234"
    assert fields["contextTokens"] == "16,000"
    assert "OpenClaw agent database" in view.row_source.text()
    assert "ops/agent/openclaw-agent.sqlite" in view.row_source.text()


def test_transcript_search_covers_every_agent_and_activates_a_hit(qtbot, home):
    data = load_dataset(home)
    view = OpenClawView()
    qtbot.addWidget(view)
    view.set_data(data)
    with qtbot.waitSignal(view.searched, timeout=10_000):
        _search_for(view, "deploys Friday")
    hits = [view.hit_model.record(r) for r in range(view.hit_model.rowCount())]
    assert sorted(h.agent for h in hits) == ["main", "ops"]
    assert all(h.hit.message_id == "deploy-1" for h in hits)
    assert "2 hit(s)" in view.search_note.text()
    with qtbot.waitSignal(view.searched, timeout=10_000):
        _search_for(view, "deploys nothing-like-this")  # every word must match
    assert view.hit_model.rowCount() == 0
    # this session only
    ops = next(s for s in data.sessions if "/ops/" in s.path)
    view.show_session(ops)
    view.this_session.setChecked(True)
    with qtbot.waitSignal(view.searched, timeout=10_000):
        _search_for(view, "deploys")
    assert [view.hit_model.record(r).agent for r in range(view.hit_model.rowCount())] == ["ops"]
    index = view.hit_model.index(0, 0)
    assert index.data(RecordRole).hit.session_id == "s1"
    with qtbot.waitSignal(view.hit_activated) as blocker:
        view.hit_table.activated.emit(index)
    db = str(home / "agents" / "ops" / "agent" / "openclaw-agent.sqlite")
    assert blocker.args == [session_path(db, "s1"), "deploy-1"]


def test_without_a_database_search_says_why(qtbot, tmp_path):
    (tmp_path / "h" / "agents" / "main" / "sessions").mkdir(parents=True)
    (tmp_path / "h" / "openclaw.json").write_text("{}")
    data = load_dataset(tmp_path / "h")
    view = OpenClawView()
    qtbot.addWidget(view)
    view.set_data(data)
    assert not view.query.isEnabled()
    assert "2026.9" in view.search_note.text()
