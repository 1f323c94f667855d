"""The review queue widget: decisions by keyboard, confirm before write, only accepted appended."""

from __future__ import annotations

import orjson
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox

from core.recall.updater import Candidate, propose
from core.store.knowledge import load_knowledge
from tests.core.test_review import SECRET, build_queue, demo_knowledge  # noqa: F401
from widgets.facts.review_model import COLUMNS, STATE_COL, ReviewTableModel
from widgets.facts.review_queue import ReviewQueue

HEADERS = [c.header for c in COLUMNS]


class Confirm:
    """A confirm callback that records what it was shown."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.calls: list[list] = []

    def __call__(self, writes) -> bool:
        self.calls.append(list(writes))
        return self.answer


@pytest.fixture
def queue(tmp_path, fixtures_dir, demo_knowledge):  # noqa: F811
    return build_queue(tmp_path, fixtures_dir, demo_knowledge)


def make_view(qtbot, queue, answer=True):
    view = ReviewQueue()
    qtbot.addWidget(view)
    view.resize(1400, 860)
    confirm = Confirm(answer)
    view.set_items(queue.items, queue.log, confirm)
    with qtbot.waitActive(view):
        view.show()
        view.activateWindow()
    return view, confirm


def cell(view, row, header):
    model = view.proxy
    return model.data(model.index(row, HEADERS.index(header)))


def select_key(view, key):
    row = view.model.row_of(key)
    view._select_proxy_row(view.proxy.mapFromSource(view.model.index(row, 0)).row())
    return view.proxy.mapFromSource(view.model.index(row, 0)).row()


def press(qtbot, view, key, modifier=Qt.KeyboardModifier.NoModifier):
    view.table.setFocus()
    qtbot.keyClick(view.table, key, modifier)


def state_of(view, key):
    return next(i for i in view.items() if i.key == key).state


def appended(queue):
    data = queue.path.read_bytes()
    assert data.startswith(queue.original), "existing bytes were rewritten"
    return data[len(queue.original) :]


def test_model_passes_qtmodeltester(qtmodeltester, queue):
    model = ReviewTableModel()
    model.set_records(queue.items)
    qtmodeltester.check(model)
    model.set_record(0, queue.items[0].accepted())
    model.append_records(queue.items[:0])
    qtmodeltester.check(model)


def test_rows_show_op_content_compared_fact_similarity_reason_state(qtbot, queue):
    view, _ = make_view(qtbot, queue)
    assert view.proxy.rowCount() == len(queue.items)
    assert HEADERS == [
        "#",
        "Op",
        "Proposed",
        "Type",
        "Compared against",
        "Similarity",
        "Reason",
        "State",
    ]
    sup = queue.first("SUPERSEDE")
    row = select_key(view, sup.key)
    assert cell(view, row, "Op") == "SUPERSEDE"
    assert cell(view, row, "Proposed") == sup.candidate.content
    assert cell(view, row, "Type") == "decision"
    assert cell(view, row, "Compared against") == sup.target.content
    assert cell(view, row, "Similarity") == f"{sup.similarity:.3f}"
    assert cell(view, row, "Reason") == sup.reason
    assert cell(view, row, "State") == "pending"
    none = queue.first("NONE")
    assert cell(view, select_key(view, none.key), "Similarity") == "1.000"
    # The detail pane: the proposal and the facts compared with, side by side.
    select_key(view, sup.key)
    left = view.proposed_view.toPlainText()
    right = view.compared_view.toPlainText()
    assert sup.candidate.content in left and sup.reason in left
    assert sup.target.content in right and f"{sup.similarity:.3f}" in right
    assert sup.target.id in right
    for other in sup.compared[1:]:
        assert other.content in right
    assert "SUPERSEDE" in view.proposed_title.text()
    # Sorting by similarity (the proxy sorts by value, not text).
    view.table.sortByColumn(HEADERS.index("Similarity"), Qt.SortOrder.DescendingOrder)
    sims = [
        view.model.record(view.proxy.mapToSource(view.proxy.index(r, 0)).row()).similarity
        for r in range(view.proxy.rowCount())
    ]
    assert sims == sorted(sims, reverse=True)


def test_keyboard_decisions_and_counts(qtbot, queue):
    view, _ = make_view(qtbot, queue)
    changes = []
    view.queue_changed.connect(changes.append)
    keys = [i.key for i in queue.items]
    select_key(view, keys[0])
    press(qtbot, view, Qt.Key.Key_A)
    assert state_of(view, keys[0]) == "accepted"
    # The next pending proposal becomes current: R rejects it.
    assert view.selected_rows() == [1]
    press(qtbot, view, Qt.Key.Key_R)
    assert state_of(view, keys[1]) == "rejected"
    press(qtbot, view, Qt.Key.Key_Delete)
    assert state_of(view, keys[2]) == "rejected"
    press(qtbot, view, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert state_of(view, keys[3]) == "accepted"
    select_key(view, keys[2])
    press(qtbot, view, Qt.Key.Key_U)
    assert state_of(view, keys[2]) == "pending"
    assert changes[-1] == len(keys) - 3 == view.pending_count()
    assert cell(view, 0, "State") == "✓ accepted" and cell(view, 1, "State") == "✗ rejected"
    assert "2 accepted" in view.counts_label.text()
    # Accept all / reject all touch pending proposals only.
    press(
        qtbot,
        view,
        Qt.Key.Key_R,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert state_of(view, keys[1]) == "rejected" and state_of(view, keys[0]) == "accepted"
    assert all(i.state != "pending" for i in view.items()) and changes[-1] == 0
    for i in range(len(keys)):
        select_key(view, keys[i])
        press(qtbot, view, Qt.Key.Key_U)
    press(
        qtbot,
        view,
        Qt.Key.Key_A,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert all(i.is_accepted for i in view.items())
    # The context menu offers every action, with its shortcut in the tooltip.
    texts = [a.text() for a in view.table.actions()]
    assert "&Accept" in texts and "&Write Accepted…" in texts
    assert "(A, Ctrl+Return" in view.accept_action.toolTip()


def test_confirm_false_writes_nothing(qtbot, queue):
    view, confirm = make_view(qtbot, queue, answer=False)
    view.accept_all()
    with qtbot.assertNotEmitted(view.written):
        press(qtbot, view, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert len(confirm.calls) == 1
    [w] = confirm.calls[0]
    assert w.path == str(queue.path) and w.action == "append" and w.lines
    assert queue.path.read_bytes() == queue.original
    assert "cancelled" in view.status_label.text()
    assert all(i.is_accepted for i in view.items())  # the decisions are kept


def test_write_appends_only_accepted_exactly_as_confirmed(qtbot, queue):
    view, confirm = make_view(qtbot, queue)
    add, upd, sup, none = (queue.first(op) for op in ("ADD", "UPDATE", "SUPERSEDE", "NONE"))
    for item in (add, upd, sup, none):
        select_key(view, item.key)
        press(qtbot, view, Qt.Key.Key_A)
    rejected = [i.key for i in queue.items if i.key not in {add.key, upd.key, sup.key, none.key}][
        :2
    ]
    for key in rejected:
        select_key(view, key)
        press(qtbot, view, Qt.Key.Key_R)
    pending_before = view.pending_count()
    with qtbot.waitSignal(view.written) as sig:
        press(qtbot, view, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    [[w]] = confirm.calls
    tail = appended(queue)
    assert tail == b"".join(line.encode() + b"\n" for line in w.lines)
    lines = [orjson.loads(x) for x in tail.splitlines()]
    assert [x["id"] for x in lines] == [add.new_id, upd.target.id, sup.new_id, sup.target.id]
    results = sig.args[0]
    assert [r.item.key for r in results] == [add.key, upd.key, sup.key]
    assert all(r.outcome == "written" for r in results)
    # Written and decided proposals leave the queue; pending ones stay.
    left = {i.key for i in view.items()}
    assert not left & {add.key, upd.key, sup.key, none.key, *rejected}
    assert view.pending_count() == pending_before == view.proxy.rowCount()
    assert "Appended 4 line(s)" in view.status_label.text()
    # A second write has nothing to do and asks nothing.
    view.write_accepted()
    assert len(confirm.calls) == 1 and appended(queue) == tail


def test_edit_changes_what_is_written(qtbot, queue):
    view, confirm = make_view(qtbot, queue)
    add = queue.first("ADD")
    select_key(view, add.key)
    press(qtbot, view, Qt.Key.Key_F2)
    dialog = view.edit_dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.content_edit.toPlainText() == add.candidate.content
    # Letters typed in the editor are text, not the queue's A/R/E shortcuts.
    dialog.content_edit.setFocus()
    qtbot.keyClicks(dialog.content_edit, " are")
    assert dialog.content_edit.toPlainText().endswith(" are")
    assert state_of(view, add.key) == "pending" and dialog.isVisible()
    # Empty content is refused in place.
    dialog.content_edit.setPlainText("  ")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    assert dialog.isVisible() and "content" in dialog.error_label.text()
    dialog.content_edit.setPlainText(f"Staging deploy key is {SECRET}; rotate monthly")
    dialog.type_combo.setCurrentText("config")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    assert state_of(view, add.key) == "edited"
    row = select_key(view, add.key)
    assert cell(view, row, "Type") == "config" and "rotate monthly" in cell(view, row, "Proposed")
    assert SECRET not in cell(view, row, "Proposed")
    view.write_accepted()
    [line] = [orjson.loads(x) for x in appended(queue).splitlines()]
    assert line["id"] == add.new_id and line["type"] == "config"
    assert "rotate monthly" in line["content"] and SECRET not in queue.path.read_text()
    assert SECRET not in "".join(confirm.calls[0][0].lines)
    # E also opens the editor; NONE proposals have nothing to edit.
    none = queue.first("NONE")
    select_key(view, none.key)
    assert not view.edit_action.isEnabled()
    assert view.edit_current() is None
    other = next(i for i in view.items() if i.editable)
    select_key(view, other.key)
    press(qtbot, view, Qt.Key.Key_E)
    assert view.edit_dialog is not None and view.edit_dialog.item.key == other.key
    view.edit_dialog.reject()
    assert state_of(view, other.key) == "pending"


def test_target_deleted_meanwhile_is_reported(qtbot, queue):
    view, confirm = make_view(qtbot, queue)
    upd, add = queue.first("UPDATE"), queue.first("ADD")
    for item in (upd, add):
        select_key(view, item.key)
        press(qtbot, view, Qt.Key.Key_A)
    agent = load_knowledge(queue.path)  # the running agent, writing the same file
    agent.delete(upd.target.id)
    before = queue.path.read_bytes()
    with qtbot.waitSignal(view.written) as sig:
        view.write_accepted()
    # The plan shown already knew: one line, and why the other is not written.
    [[w]] = confirm.calls
    assert len(w.lines) == 1 and "deleted" in w.summary
    after = queue.path.read_bytes()
    assert after.startswith(before)
    assert [orjson.loads(x)["id"] for x in after[len(before) :].splitlines()] == [add.new_id]
    assert [r.item.key for r in sig.args[0]] == [add.key]
    # The stale proposal stays, pending, with the reason shown.
    row = select_key(view, upd.key)
    stale = next(i for i in view.items() if i.key == upd.key)
    assert stale.state == "pending" and "deleted" in stale.note
    assert cell(view, row, "State").startswith("⚠")
    idx = view.proxy.index(row, STATE_COL)
    assert "deleted" in view.proxy.data(idx, Qt.ItemDataRole.ToolTipRole)
    assert "Not written" in view.proposed_view.toPlainText()
    assert "not written" in view.status_label.text()


def test_add_proposals_and_no_log(qtbot, queue):
    view = ReviewQueue()
    qtbot.addWidget(view)
    assert view.proxy.rowCount() == 0 and view.write_accepted() == []
    assert "Select a proposal" in view.proposed_view.toPlainText()
    view.set_items([], queue.log, lambda _w: True)
    with qtbot.waitSignal(view.queue_changed) as sig:
        view.add_proposals(
            propose(queue.log, [Candidate("issue", "Flaky test in CI on Windows")]), source="manual"
        )
    assert sig.args == [1] and view.proxy.rowCount() == 1
    assert cell(view, 0, "Op") == "ADD" and "manual" in view.proposed_view.toPlainText()
