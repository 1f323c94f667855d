"""Issue 17 in the compaction view: the backup previewed is the one written (defect 7),
and the panel fits a laptop screen (item 12).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from core.compaction.target import target_from_dataset
from core.dataset.load import load_dataset
from core.io import fsutil
from tests.demo_copy import demo_copy
from widgets.common.write_preview import WritePreviewDialog
from widgets.compaction.panel import CompactionPanel

NOW = 1_760_000_000_000
DEMO_SESSION = "128b2f33"
OLD = time.time() - 3600


class SteppingClock:
    """``time`` for core.io.fsutil whose UTC clock moves one second at each reading.

    A preview and the write it confirms are seconds apart for a person; here they
    are one reading apart, so a name computed twice differs every time.
    """

    def __init__(self) -> None:
        self.now = 1_767_225_600.0

    def gmtime(self, secs: float | None = None) -> time.struct_time:
        self.now += 1
        return time.gmtime(self.now if secs is None else secs)

    def __getattr__(self, name: str) -> object:
        return getattr(time, name)


@pytest.fixture
def demo(tmp_path):
    home = tmp_path / "home"
    demo_copy(home, now_ms=NOW, segments=300)
    data = load_dataset(home)
    session = data.session(DEMO_SESSION)
    os.utime(session.path, (OLD, OLD))
    return data, session


class PreviewReader:
    """A confirm that opens the write preview and reads the backup it names."""

    def __init__(self, qtbot) -> None:  # type: ignore[no-untyped-def]
        self.qtbot = qtbot
        self.shown: list[str] = []
        self.said = ""

    def __call__(self, writes):  # type: ignore[no-untyped-def]
        dialog = WritePreviewDialog(writes)
        self.qtbot.addWidget(dialog)
        model = dialog.model
        for row in range(model.rowCount()):
            if model.index(row, 0).data() == "backup":
                self.shown.append(model.index(row, 1).data(0x03))  # the full path (tooltip)
            elif model.index(row, 0).data() == "append" and dialog.writes[row].backup:
                dialog.table.selectRow(row)  # the transcript's append names its backup too
                self.said = dialog.where.text()
        return True


def test_the_backup_previewed_is_the_backup_written(qtbot, demo, monkeypatch):
    data, session = demo
    transcript = Path(session.path)
    monkeypatch.setattr(fsutil, "time", SteppingClock())
    confirm = PreviewReader(qtbot)
    panel = CompactionPanel(confirm=confirm)
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.cut_point_changed, timeout=10_000):
        panel.set_target(target_from_dataset(data, session))
    with qtbot.waitSignal(panel.summary_ready, timeout=20_000):
        panel.run()
    with qtbot.waitSignal(panel.written, timeout=10_000) as done:
        panel.write()
    (previewed,) = confirm.shown
    made = sorted(transcript.parent.glob(transcript.name + ".memlens-backup-*"))
    assert [str(p) for p in made] == [previewed]
    assert str(done.args[0].backup) == previewed
    assert previewed in panel.message_label.text()
    assert previewed in confirm.said


def _inside(widget, panel) -> bool:  # type: ignore[no-untyped-def]
    top_left = widget.mapTo(panel, widget.rect().topLeft())
    return panel.rect().contains(top_left) and panel.rect().contains(
        widget.mapTo(panel, widget.rect().bottomRight())
    )


@pytest.mark.parametrize("size", [(900, 330), (1300, 560)])
def test_the_panel_fits_a_laptop_tab_without_scrolling(qtbot, demo, size):
    """Item 12: in a tab of a 1366x768 window the buttons and every plan row show."""
    from PySide6.QtWidgets import QFrame, QScrollArea

    data, session = demo
    panel = CompactionPanel(confirm=lambda writes: True)
    scroll = QScrollArea()  # as the window holds each tab
    scroll.setWidget(panel)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    qtbot.addWidget(scroll)
    scroll.resize(*size)
    scroll.show()
    with qtbot.waitSignal(panel.cut_point_changed, timeout=10_000):
        panel.set_target(target_from_dataset(data, session))
    with qtbot.waitSignal(panel.summary_ready, timeout=20_000):
        panel.run()
    qtbot.waitUntil(lambda: panel.size() == scroll.viewport().size())
    assert not scroll.verticalScrollBar().isVisible()
    assert not scroll.horizontalScrollBar().isVisible()
    for button in (panel.run_button, panel.cancel_button, panel.discard_button):
        assert button.isVisible() and _inside(button, panel), button.text()
    assert panel.write_button.isVisible() and _inside(panel.write_button, panel)
    assert panel.write_button.isEnabled()
    table = panel.plan_table
    rows = table.model().rowCount()
    assert rows == 4
    for row in range(rows):  # every row of the plan, whole, without scrolling
        rect = table.visualRect(table.model().index(row, 0))
        assert table.viewport().rect().contains(rect), row
    assert _inside(table, panel)
    # the summary gets the rest, a few lines at least
    assert panel.summary_view.viewport().height() >= 40
