"""Issue 17, defect 6: in live mode the compaction plan follows the session as it grows.

The window follows a demo home; the session shown gets new messages appended by
another process (here: this test, writing whole lines); the Compaction tab plans
again, in a job, and its table and header count the new entries.
"""

from __future__ import annotations

import time

import orjson
import pytest

from app.main_window import MainWindow
from core.io.writes import always
from tests.demo_copy import demo_copy

NOW = int(time.time() * 1000)
DEMO_SESSION = "128b2f33"  # plans a compaction (its leaf is a message)


@pytest.fixture
def window(qtbot, tmp_path):
    root = demo_copy(tmp_path / "home", now_ms=NOW, segments=60)
    window = MainWindow(confirm=always)
    qtbot.addWidget(window)
    window.open_path(str(root))
    qtbot.waitUntil(lambda: window.recall_data is not None, timeout=60_000)
    qtbot.waitUntil(lambda: window.state.live.following, timeout=10_000)
    return window


def _kept_messages(panel) -> int:  # type: ignore[no-untyped-def]
    model = panel.plan_model
    for row in range(model.rowCount()):
        if (
            model.index(row, 0).data() == "Kept verbatim"
            or "kept" in str(model.index(row, 0).data()).lower()
        ):
            return int(model.index(row, 1).data())
    raise AssertionError("no kept row in the plan table")


def test_the_plan_follows_the_session_as_it_grows(qtbot, window):
    panel = window.compaction_panel
    session = window.data.session(DEMO_SESSION)
    assert window.navigator.select_session(session.path)
    qtbot.waitUntil(lambda: panel.plan() is not None and panel.plan().ok, timeout=10_000)
    assert panel.target().session.path == session.path
    entries = len(session.entries)
    kept = _kept_messages(panel)
    assert f"{entries:,} entries" in panel.session_label.text()
    parent = session.leaf.id
    added = 6
    with open(session.path, "ab") as fh:
        for i in range(added):
            role = "user" if i % 2 == 0 else "assistant"
            content = (
                f"live message {i}"
                if role == "user"
                else [{"type": "text", "text": f"live answer {i}"}]
            )
            line = {
                "type": "message",
                "id": f"live{i:04d}",
                "parentId": parent,
                "timestamp": "2026-01-01T00:00:00.000Z",
                "message": {"role": role, "content": content, "timestamp": NOW},
            }
            fh.write(orjson.dumps(line) + b"\n")
            parent = line["id"]
    qtbot.waitUntil(lambda: panel.plan().leaf_id == parent, timeout=10_000)
    assert _kept_messages(panel) == kept + added  # the new messages are kept after the cut
    assert f"{entries + added:,} entries" in panel.session_label.text()
    assert panel.plan().ok and panel.run_button.isEnabled()
