"""The backups table: sorted newest first, filtered, and Restore… by button, menu, keys, Enter."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMenu

from core.safety.backups import Backup
from widgets.activity.backups_view import FILE, SIZE, TIME, BackupsModel, BackupsView
from widgets.common.record_model import RecordRole

T0 = 1_790_000_000.0


def _shown(view):
    """The records the table shows, in display order (through the proxy, as drawn)."""
    return [view.proxy.index(r, 0).data(RecordRole) for r in range(view.proxy.rowCount())]


def _b(of: str, t: float, seq: int = 0, size: int = 1000) -> Backup:
    name = f"{of}.memlens-backup-{int(t)}" + (f".{seq}" if seq else "")
    return Backup(f"/h/agents/main/sessions/{name}", f"/h/agents/main/sessions/{of}", t, seq, size)


BACKUPS = [
    _b("a.jsonl", T0 - 60),
    _b("a.jsonl", T0, 0, 2_500_000),
    _b("a.jsonl", T0, 1, 2_600_000),
    _b("sessions.json", T0 - 3600, 0, 512),
]


def test_model_passes_the_model_tester(qtmodeltester):
    model = BackupsModel()
    model.set_records(BACKUPS)
    qtmodeltester.check(model)


def test_newest_first_filter_and_count(qtbot):
    view = BackupsView()
    qtbot.addWidget(view)
    assert view.count_label.text() == "No backups" and not view.restore_button.isEnabled()
    view.set_backups(BACKUPS)
    shown = _shown(view)
    assert shown[0] == BACKUPS[2] and shown[1] == BACKUPS[1]  # same second: .1 is newer
    assert shown[-1] == BACKUPS[3]
    assert view.count_label.text() == "4 backups"
    index = view.proxy.index(0, SIZE)
    assert index.data() == "2,600,000"
    assert "a copy of /h/agents/main/sessions/a.jsonl" in index.data(Qt.ItemDataRole.ToolTipRole)
    view.filter_edit.setText("SESSIONS.json")
    assert _shown(view) == [BACKUPS[3]] and view.count_label.text() == "1 of 4 backups"
    view.filter_edit.clear()
    view.table.sortByColumn(FILE, Qt.SortOrder.AscendingOrder)
    assert _shown(view)[-1] == BACKUPS[3]
    view.table.sortByColumn(TIME, Qt.SortOrder.AscendingOrder)
    assert _shown(view)[0] == BACKUPS[3]


@pytest.mark.qt_log_ignore("This plugin does not support")  # the offscreen popup
def test_restore_by_button_keys_enter_and_menu(qtbot):
    view = BackupsView()
    qtbot.addWidget(view)
    with qtbot.waitActive(view):
        view.show()
        view.activateWindow()
    view.set_backups(BACKUPS)
    asked = []
    view.restore_requested.connect(asked.append)
    view.restore_button.click()
    assert asked == [] and not view.restore_action.isEnabled()  # nothing selected
    assert view.select(BACKUPS[0].path)
    assert view.restore_button.isEnabled()
    view.restore_button.click()
    view.table.setFocus()
    qtbot.keyClick(
        view.table,
        Qt.Key.Key_R,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    qtbot.keyClick(view.table, Qt.Key.Key_Return)
    assert asked == [BACKUPS[0]] * 3
    # the context menu offers the same action
    seen: list[list[str]] = []

    def close_menu():
        menu = QApplication.activePopupWidget()
        if isinstance(menu, QMenu):
            seen.append([a.text() for a in menu.actions()])
            menu.close()

    QTimer.singleShot(50, close_menu)
    view.table.customContextMenuRequested.emit(
        view.table.visualRect(view.proxy.index(0, 0)).center()
    )
    assert seen and seen[0][0] == "&Restore…"
    # a new listing keeps the selection; busy means no second restore
    view.set_backups([*BACKUPS, _b("b.jsonl", T0 + 5)])
    assert view.selected_backup() == BACKUPS[0]
    view.set_busy(True, "Restoring…")
    assert not view.restore_button.isEnabled() and view.status_label.text() == "Restoring…"
    view.restore_action.trigger()
    assert len(asked) == 3
    view.set_busy(False)
    assert view.restore_button.isEnabled() and view.status_label.isHidden()


def test_refresh_button(qtbot):
    view = BackupsView()
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.refresh_requested, timeout=1000):
        view.refresh_button.click()
