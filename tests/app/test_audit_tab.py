"""The Loss audit tab in the window (issue 20 #1): it follows the session, and an item navigates.

A demo home opened in the window; a session with compactions selected; the
Compaction view's Loss audit tab shows the audit of its newest compaction, and
activating an item makes the entry it came from the selected point of every view.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.main_window import MainWindow
from core.compaction.audit import audit_compaction
from tests.qt_read import shown_records
from widgets.common.jobs import default_runner
from widgets.common.view_jobs import wait_idle


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory):
    from core.demo.build import write_demo

    return write_demo(tmp_path_factory.mktemp("audit") / "home", segments=60).root


def test_the_loss_audit_tab_follows_the_session_and_navigates(qtbot, demo_home):
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    window.open_path(str(demo_home))
    qtbot.waitUntil(lambda: window.inspector.session is not None, timeout=30_000)
    qtbot.waitUntil(window.settled, timeout=30_000)
    session = max(window.data.sessions, key=lambda s: len(s.compaction_entries()))
    assert session.compaction_entries()
    assert window.navigator.select_session(session.path)
    qtbot.waitUntil(lambda: window.inspector.session.path == session.path, timeout=10_000)
    panel = window.compaction_panel
    view = panel.audit_view
    window.show_view("compaction")
    titles = [panel.tabs.tabText(i).replace("&", "") for i in range(panel.tabs.count())]
    assert "Loss audit" in titles
    panel.tabs.setCurrentWidget(view)
    qtbot.waitUntil(lambda: view.outcome is not None, timeout=30_000)
    assert wait_idle(default_runner(), view._key, 30_000)
    newest = session.compaction_entries()[-1]
    assert view.outcome.request.at == newest.id
    expected = audit_compaction(session, newest.id)
    rows = shown_records(view.proxy)
    key = lambda i: (i.text, i.category, i.status, i.source)  # noqa: E731
    assert sorted(key(r.item) for r in rows) == sorted(map(key, expected.items))
    # an item whose first source is not the selected point: Enter goes there
    row = next(
        r for r in range(view.proxy.rowCount())
        if rows[r].item.source and rows[r].item.source[0] != window.inspector.entry_id
    )  # fmt: skip
    target = rows[row].item.source[0]
    view.items_table.setFocus()
    view.items_table.setCurrentIndex(view.proxy.index(row, 0))
    qtbot.keyClick(view.items_table, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.inspector.entry_id == target, timeout=10_000)
    assert window.state.entry == target  # every view follows the selected entry
