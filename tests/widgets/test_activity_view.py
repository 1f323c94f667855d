from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from core.io.fsutil import (
    WriteRecord,
    add_write_observer,
    append_lines,
    atomic_write,
    remove_write_observer,
)
from core.io.writes import PlannedWrite
from core.safety.activity import ActivityLog
from tests.demo_copy import demo_copy
from widgets.activity.view import (
    ACTION,
    FILE,
    LENGTH,
    LINE,
    OFFSET,
    SUMMARY,
    TIME,
    ActivityView,
    local_time,
)
from widgets.common.record_model import RecordRole


def _shown(view):
    """The records the table shows, in display order (through the proxy, as drawn)."""
    return [view.proxy.index(r, 0).data(RecordRole) for r in range(view.proxy.rowCount())]


@pytest.fixture
def logged(tmp_path):
    """A real activity log of real writes to demo data."""
    home = tmp_path / "home"
    demo_copy(home, now_ms=1_760_000_000_000, segments=40)
    knowledge = next(home.rglob("knowledge.jsonl"))
    sessions = next(home.rglob("sessions.json"))
    log = ActivityLog(tmp_path / "data" / "activity.jsonl")
    add_write_observer(log.record)
    try:
        log.expect([PlannedWrite(str(knowledge), "append", "append 1 fact line (ADD of fact-1)")])
        append_lines(
            knowledge, b'{"id":"fact-1","type":"decision","content":"use uv","timestamp":1}\n'
        )
        atomic_write(sessions, sessions.read_bytes())
        append_lines(knowledge, b'{"id":"fact-1","_deleted":true,"timestamp":2}\n')
    finally:
        remove_write_observer(log.record)
    return log, knowledge, sessions


def _cells(view, row):
    return [view.proxy.index(row, c).data() for c in range(view.proxy.columnCount())]


def test_shows_every_write_newest_first(qtbot, qtmodeltester, logged):
    log, knowledge, _ = logged
    records = log.load().records
    view = ActivityView()
    qtbot.addWidget(view)
    view.set_records(records)
    qtmodeltester.check(view.model)
    assert view.proxy.rowCount() == 4
    assert [r.action for r in _shown(view)] == ["append", "rewrite", "backup", "append"]
    newest = records[-1]
    cells = _cells(view, 0)
    assert cells[TIME] == local_time(newest.time)
    assert cells[FILE] == "knowledge.jsonl" and cells[ACTION] == "append"
    size_before = knowledge.stat().st_size - newest.length
    assert cells[OFFSET] == str(size_before) and cells[LENGTH] == str(newest.length)
    lines = knowledge.read_bytes().splitlines()
    assert cells[LINE] == str(len(lines)) and b"_deleted" in lines[newest.first_line - 1]
    oldest = _cells(view, 3)
    assert oldest[SUMMARY] == "append 1 fact line (ADD of fact-1)"
    tip = view.proxy.index(0, FILE).data(Qt.ItemDataRole.ToolTipRole)
    assert f"{knowledge}:{newest.first_line}" in tip
    assert view.count_label.text() == "4 writes"
    backup = _shown(view)[2]  # the backup kept by the rewrite: its hash shows
    tip = view.proxy.index(2, FILE).data(Qt.ItemDataRole.ToolTipRole)
    assert backup.action == "backup" and f"SHA-256 of the verified copy: {backup.sha256}" in tip
    assert backup.sha256 and "SHA-256" not in view.proxy.index(1, FILE).data(
        Qt.ItemDataRole.ToolTipRole
    )


def test_add_inserts_one_row(qtbot, logged):
    log, knowledge, _ = logged
    view = ActivityView()
    qtbot.addWidget(view)
    view.set_records(log.load().records)
    resets = []
    view.model.modelReset.connect(lambda: resets.append(1))
    rec = WriteRecord(
        2_000_000_000.0, str(knowledge), "append", 999, 50, 42, 1, summary="restore fact-1"
    )
    with qtbot.waitSignal(view.model.rowsInserted) as blocker:
        view.add(rec)
    assert blocker.args[1:] == [4, 4] and resets == []
    assert _shown(view)[0] == rec  # newest, so on top
    assert _cells(view, 0)[LINE] == "42" and view.count_label.text() == "5 writes"


def test_post_from_a_writer_thread(qtbot, tmp_path):
    # The app's wiring: fsutil observer -> ActivityLog -> view.post, writes in a worker thread.
    log = ActivityLog(tmp_path / "activity.jsonl")
    view = ActivityView()
    qtbot.addWidget(view)
    log.subscribe(view.post)
    add_write_observer(log.record)
    target = tmp_path / "knowledge.jsonl"
    try:
        worker = threading.Thread(target=lambda: [append_lines(target, b"{}\n") for _ in range(5)])
        worker.start()
        worker.join()
    finally:
        remove_write_observer(log.record)
    qtbot.waitUntil(lambda: view.model.rowCount() == 5)
    assert sorted(r.first_line for r in _shown(view)) == [1, 2, 3, 4, 5]
    assert {r.time for r in _shown(view)} == {r.time for r in log.load().records}


def test_filter_by_text_and_action(qtbot, logged):
    log, _, _ = logged
    view = ActivityView()
    qtbot.addWidget(view)
    view.set_records(log.load().records)
    view.filter_edit.setText("sessions")
    assert {r.action for r in _shown(view)} == {"rewrite", "backup"}
    assert view.count_label.text() == "2 of 4 writes"
    view.filter_edit.setText("FACT-1")  # any case, in the summary
    assert [r.summary for r in _shown(view)] == ["append 1 fact line (ADD of fact-1)"]
    view.filter_edit.setText("")
    view.action_box.setCurrentIndex(view.action_box.findData("append"))
    assert [r.action for r in _shown(view)] == ["append", "append"]
    view.filter_edit.setText("nothing like this")
    assert _shown(view) == [] and view.count_label.text() == "0 of 4 writes"


def test_activate_and_copy(qtbot, logged):
    log, knowledge, _ = logged
    view = ActivityView()
    qtbot.addWidget(view)
    view.set_records(log.load().records)
    view.show()
    view.table.setFocus()
    view.table.selectRow(0)
    with qtbot.waitSignal(view.record_activated) as blocker:
        qtbot.keyClick(view.table, Qt.Key.Key_Return)
    assert blocker.args[0] == _shown(view)[0]
    rec = _shown(view)[0]
    view.table.selectRow(0)  # the copy reads the selection, not the current row
    qtbot.waitUntil(lambda: view.selected_records() == [rec])
    view.copy_action.trigger()
    assert QApplication.clipboard().text() == (
        f"{knowledge}:{rec.first_line} (bytes {rec.offset}-{rec.offset + rec.length})"
    )


def test_empty_and_screenshot(qtbot, logged, tmp_path):
    view = ActivityView()
    qtbot.addWidget(view)
    assert view.count_label.text() == "No writes yet"
    view.set_records(logged[0].load().records)
    view.resize(980, 260)
    view.show()
    qtbot.waitExposed(view)
    view.grab().save(str(tmp_path / "activity-view.png"))
    assert (tmp_path / "activity-view.png").stat().st_size > 0
