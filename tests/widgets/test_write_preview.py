from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QDialog

from core.demo.build import write_demo
from core.io.fsutil import backup_path
from core.io.writes import PlannedWrite
from widgets.common.write_preview import WritePreviewDialog, confirm_with_dialog, payload_bytes


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    home = tmp_path_factory.mktemp("preview") / "home"
    write_demo(home, now_ms=1_760_000_000_000, segments=40)
    return home


@pytest.fixture
def writes(demo):
    knowledge = next(demo.rglob("knowledge.jsonl"))
    sessions = next(demo.rglob("sessions.json"))
    real = knowledge.read_text().splitlines()[:2]  # two real fact lines, as written
    return [
        PlannedWrite(
            str(knowledge), "append", "append 2 fact lines (UPDATE of 2 facts)", tuple(real)
        ),
        PlannedWrite(str(backup_path(sessions)), "backup", f"copy {sessions.name}"),
        PlannedWrite(str(sessions), "rewrite", "rewrite sessions.json with the new leaf"),
    ]


def _column(model, col):
    return [model.index(r, col).data() for r in range(model.rowCount())]


def test_lists_every_write_and_shows_the_exact_lines(qtbot, writes):
    dlg = WritePreviewDialog(writes)
    qtbot.addWidget(dlg)
    assert dlg.model.rowCount() == 3
    assert _column(dlg.model, 0) == ["append", "backup", "rewrite"]
    assert _column(dlg.model, 1) == [Path(w.path).name for w in writes]
    assert dlg.model.index(0, 1).data(Qt.ItemDataRole.ToolTipRole) == writes[0].path
    assert _column(dlg.model, 2) == ["2", "", ""]
    assert "3 files" in dlg.heading.text() and "3 writes" in dlg.heading.text()
    # the first write is selected: its lines, exactly, one per line
    assert dlg.selected_write() == writes[0]
    assert dlg.lines_view.toPlainText() == "\n".join(writes[0].lines)
    assert dlg.lines_view.toPlainText().splitlines() == list(writes[0].lines)
    where = dlg.where.text()
    assert writes[0].path in where and "2 lines" in where
    assert f"{payload_bytes(writes[0]):,} bytes" in where and "at the end of the file" in where
    dlg.table.selectRow(2)
    assert dlg.selected_write() == writes[2]
    assert "replaces the file as a whole" in dlg.lines_view.toPlainText()
    assert "backup beside it" in dlg.where.text()
    assert dlg.lines_view.isReadOnly() and dlg.write_button.isDefault()


def test_enter_writes_and_escape_cancels(qtbot, writes):
    dlg = WritePreviewDialog(writes)
    qtbot.addWidget(dlg)
    dlg.show()
    qtbot.waitExposed(dlg)
    assert dlg.focusWidget() is dlg.table
    qtbot.keyClick(dlg.table, Qt.Key.Key_Return)
    assert dlg.result() == QDialog.DialogCode.Accepted
    other = WritePreviewDialog(writes)
    qtbot.addWidget(other)
    other.show()
    qtbot.waitExposed(other)
    qtbot.keyClick(other.table, Qt.Key.Key_Escape)
    assert other.result() == QDialog.DialogCode.Rejected and not other.isVisible()


def _answer_next_dialog(qtbot, key):
    def press():
        dlg = QApplication.activeModalWidget()
        assert isinstance(dlg, WritePreviewDialog)
        qtbot.keyClick(dlg.table, key)

    QTimer.singleShot(0, press)


def test_confirm_is_true_only_on_write(qtbot, writes):
    confirmed = []
    confirm = confirm_with_dialog(None, on_confirmed=confirmed.append)
    _answer_next_dialog(qtbot, Qt.Key.Key_Return)
    assert confirm(writes) is True
    assert confirmed == [writes]
    _answer_next_dialog(qtbot, Qt.Key.Key_Escape)
    assert confirm(writes) is False
    assert confirmed == [writes]  # nothing remembered for a cancelled write
    assert confirm([]) is True  # nothing to write: no question
    qtbot.waitUntil(
        lambda: not any(isinstance(w, WritePreviewDialog) for w in QApplication.topLevelWidgets())
    )


def test_clicking_write(qtbot, writes):
    dlg = WritePreviewDialog(writes[:1])
    qtbot.addWidget(dlg)
    dlg.show()
    qtbot.mouseClick(dlg.write_button, Qt.MouseButton.LeftButton)
    assert dlg.result() == QDialog.DialogCode.Accepted
    cancel = WritePreviewDialog(writes[:1])
    qtbot.addWidget(cancel)
    cancel.show()
    qtbot.mouseClick(cancel.cancel_button, Qt.MouseButton.LeftButton)
    assert cancel.result() == QDialog.DialogCode.Rejected


def test_screenshot(qtbot, writes, tmp_path):
    dlg = WritePreviewDialog(writes)
    qtbot.addWidget(dlg)
    dlg.show()
    qtbot.waitExposed(dlg)
    assert not dlg.grab().isNull()
    assert dlg.grab().save(str(tmp_path / "write-preview.png"))
