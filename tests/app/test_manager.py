"""The writing side of the window: compaction on demand, review queue, activity log."""

from __future__ import annotations

import os
import time

import pytest

from app.main_window import MainWindow
from core.io.writes import always
from tests.demo_copy import demo_copy
from tests.qt_read import cut_point, shown_records


@pytest.fixture
def home(tmp_path):
    return demo_copy(tmp_path / "home", segments=150)


def _open(qtbot, path, confirm=always):
    window = MainWindow(confirm=confirm)
    qtbot.addWidget(window)
    window.open_path(str(path))
    qtbot.waitUntil(
        lambda: window.data is not None and window.inspector.session is not None, timeout=30000
    )
    return window


def _pick_compactable(window):
    """A session with enough messages for a plan, selected in the navigator."""
    best = max(window.data.summaries, key=lambda s: s.messages)
    window.navigator.select_session(best.id)
    return window.data.session(best.path)


def test_compaction_on_demand_writes_a_new_leaf_and_feeds_review_and_activity(qtbot, home):
    window = _open(qtbot, home)
    session = _pick_compactable(window)
    panel = window.compaction_panel
    qtbot.waitUntil(lambda: panel.plan() is not None and not panel.is_busy(), timeout=30000)
    qtbot.waitUntil(lambda: cut_point(window.timeline) is not None, timeout=10000)
    assert cut_point(window.timeline) == panel.plan().first_kept_entry_id
    before = open(session.path, "rb").read()
    os.utime(session.path, (time.time() - 60, time.time() - 60))  # not "modified just now"
    panel.run()
    qtbot.waitUntil(lambda: panel.result() is not None and not panel.is_busy(), timeout=60000)
    compactions_before = len(session.compaction_entries())
    proposed = len(panel.result().facts)
    assert proposed > 0  # the offline extractor finds facts in the demo's work
    panel.write()
    qtbot.waitUntil(
        lambda: window.inspector.session is not None and window.inspector.session is not session,
        timeout=30000,
    )
    after = open(session.path, "rb").read()
    assert after.startswith(before) and after.count(b"\n") == before.count(b"\n") + 1
    reloaded = window.inspector.session
    assert len(reloaded.compaction_entries()) == compactions_before + 1
    assert reloaded.leaf.type == "compaction"
    # The timeline is rebuilt from the reloaded session: one more compaction marker.
    qtbot.waitUntil(
        lambda: (
            window.timeline.timeline() is not None
            and len(window.timeline.timeline().compactions) == compactions_before + 1
        ),
        timeout=20000,
    )
    markers = [m.entry_id for m in window.timeline.timeline().compactions]
    assert reloaded.leaf.id in markers
    records = shown_records(window.activity_view.table.model())
    assert any(
        r.path == session.path and r.action == "append" and r.offset == len(before) for r in records
    )
    assert (window.manager.activity.path).exists()
    assert window.review_queue.pending_count() > 0  # proposed facts wait for review
    assert window.tabs.tabText(window.tab_index("review")).startswith("Review (")


def test_a_refused_confirm_writes_nothing(qtbot, home):
    window = _open(qtbot, home, confirm=lambda _writes: False)
    session = _pick_compactable(window)
    panel = window.compaction_panel
    qtbot.waitUntil(lambda: panel.plan() is not None and not panel.is_busy(), timeout=30000)
    os.utime(session.path, (time.time() - 60, time.time() - 60))
    before = open(session.path, "rb").read()
    panel.run()
    qtbot.waitUntil(lambda: panel.result() is not None and not panel.is_busy(), timeout=60000)
    panel.write()
    assert open(session.path, "rb").read() == before
    assert not [
        r for r in shown_records(window.activity_view.table.model()) if r.path == session.path
    ]


def test_settings_dialog_opens_from_the_menu(qtbot, home):
    window = _open(qtbot, home)
    window.menu_actions.by_name["settings"].trigger()
    dialog = window.menu_actions.settings_dialog
    qtbot.waitUntil(dialog.isVisible, timeout=5000)
    dialog.reject()


def test_settings_time_limits_reach_the_compaction_panel(qtbot, tmp_path):
    from PySide6.QtCore import QSettings

    from app.app_config import SAFETY_CONNECT_TIMEOUT, SAFETY_READ_TIMEOUT, SAFETY_TOTAL_TIMEOUT
    from app.settings import AppSettings
    from core.compaction.provider import Timeouts

    store = QSettings(str(tmp_path / "memlens.ini"), QSettings.Format.IniFormat)
    settings = AppSettings(store)
    window = MainWindow(settings=settings, confirm=always)
    qtbot.addWidget(window)
    assert window.compaction_panel.timeouts() == Timeouts(10.0, 60.0, 120.0)
    settings.set_values(
        [(SAFETY_CONNECT_TIMEOUT, 3), (SAFETY_READ_TIMEOUT, 7), (SAFETY_TOTAL_TIMEOUT, 11)]
    )
    window.manager.apply_settings()  # what saving the settings dialog does
    assert window.compaction_panel.timeouts() == Timeouts(connect=3, read=7, total=11)
