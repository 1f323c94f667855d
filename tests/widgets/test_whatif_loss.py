"""The what-if panel's loss audit: the losses fill in after the replay; a lost item navigates."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from core.transcript import load_transcript
from widgets.whatif.table import COLUMNS, TableAndLoss
from widgets.whatif.view import WhatIfView

LOSS = [c.header for c in COLUMNS].index("Loss")
LOST = [c.header for c in COLUMNS].index("Lost for good")


@pytest.fixture
def view(qtbot):
    v = WhatIfView()
    qtbot.addWidget(v)
    v.resize(1366, 768)
    v.show()
    return v


def _cells(model, column):
    return [model.index(r, column).data() for r in range(model.rowCount())]


def test_losses_fill_in_after_the_replay_and_a_lost_item_shows_its_entry(
    qtbot, qtmodeltester, view, fixtures_dir
):
    session = load_transcript(fixtures_dir / "large-session.jsonl")
    with qtbot.waitSignal(view.result_ready, timeout=30_000):
        view.set_session(session)  # its own 200k window: no compaction, nothing to audit
    model = view.table.model()
    seen_at_replay: list[list[str]] = []
    view.result_ready.connect(lambda _r: seen_at_replay.append(_cells(model, LOST)))
    combo = view.preset_combo
    with qtbot.waitSignal(view.result_ready, timeout=30_000):
        combo.setCurrentIndex(combo.findData("128k"))
    # the replay's figures come first; the audit runs after it and can be cancelled
    assert seen_at_replay == [["", ""]] and view.state_label.text() == "Auditing losses…"
    view.cancel_button.click()
    assert view.state_label.text() == "Cancelled" and _cells(model, LOSS) == ["", ""]
    view.audit_check.setChecked(False)
    with qtbot.waitSignal(view.losses_ready, timeout=30_000) as blocker:
        view.audit_check.setChecked(True)  # audits the replay shown
    audit = blocker.args[0]
    assert view.state_label.text() == "" and len(audit.simulated) == 2
    assert _cells(model, LOST) == [f"{x.total.lost:,}" for x in audit.simulated]
    assert _cells(model, LOSS) == [f"{x.total.loss:.0%}" for x in audit.simulated]
    qtmodeltester.check(model)
    assert "lost for good: 0 items as it ran" in view.summary_label.text()
    second = audit.simulated[1]
    tip = model.index(1, LOSS).data(Qt.ItemDataRole.ToolTipRole)
    assert f"Loss {second.total.loss:.0%}" in tip and second.lost_items(1)[0].text[:40] in tip
    marker = next(
        i for i in view.chart.scene().items()
        if hasattr(i, "objectName") and i.objectName() == "simulated_markers"
    )  # fmt: skip
    point = marker.points()[1]
    assert "lost for good" in marker.opts["tip"](point.pos().x(), point.pos().y(), point.data())
    # the selected row's lost items, requests first; Enter on one shows its entry
    view.table.setCurrentIndex(model.index(1, 0))
    pane = view.lost_pane
    lost = second.lost_items(None)
    assert pane.model.rowCount() == len(lost) == second.total.lost
    assert f"{len(lost)} of {second.total.items} items lost for good" in pane.title.text()
    assert pane.model.index(0, 1).data() == lost[0].text and lost[0].category == "request"
    qtmodeltester.check(pane.model)
    assert pane.model.index(0, 2).data() == f"#{session.by_id[lost[0].source[0]].index}"
    pane.table.setFocus()
    pane.table.setCurrentIndex(pane.model.index(0, 1))
    with qtbot.waitSignal(view.entry_activated) as shown:
        qtbot.keyClick(pane.table, Qt.Key.Key_Return)
    assert shown.args == [lost[0].source[0]] and lost[0].source[0] in session.by_id
    # an item of the first compaction's summary, folded in: its compaction's entry
    folded = next(k for k, i in enumerate(lost) if i.source[0] == "whatif-1")
    pane.table.setCurrentIndex(pane.model.index(folded, 1))
    with qtbot.waitSignal(view.entry_activated) as shown:
        qtbot.keyClick(pane.table, Qt.Key.Key_Return)
    assert shown.args == [audit.simulated[0].entry_id]
    # in a narrow tab (the inspector's) the lost items go under the table
    split = view.findChild(TableAndLoss)
    assert split.orientation() == Qt.Orientation.Horizontal
    view.resize(500, 900)
    qtbot.waitUntil(lambda: split.orientation() == Qt.Orientation.Vertical)
