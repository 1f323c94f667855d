"""The status bar: where the window says what it is doing.

:class:`StatusBar` owns the labels (the open place or the last message, the counts of
the open data, what runs now), the progress bar and the Cancel button. Helpers are
handed it to report; they never reach for the window's widgets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QSizePolicy

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStatusBar

    from widgets.common.state import AppState


class StatusBar(QObject):
    """The labels, progress bar and Cancel button of the window's status bar.

    Signals
    -------
    cancel_requested()
        The Cancel button was pressed.
    """

    cancel_requested = Signal()

    def __init__(self, bar: QStatusBar, state: AppState) -> None:
        super().__init__(bar)
        self.bar = bar
        self.app_state = state
        self.place_label = QLabel("No data directory open")
        self.place_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.counts_label = QLabel("")
        self.task_label = QLabel("Idle")
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(220)
        self.progress.setVisible(False)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setVisible(False)
        self.cancel_button.setToolTip("Stop loading (Esc)")
        self.cancel_button.clicked.connect(self.cancel_requested)
        # A long place is cut on a narrow window (the whole of it in the tooltip), so the
        # status bar never holds the window wider than a laptop's screen.
        self.place_label.setMinimumWidth(0)
        self.place_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        bar.addWidget(self.place_label, 1)
        bar.addWidget(self.counts_label)
        bar.addPermanentWidget(self.task_label)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.cancel_button)

    def say(self, text: str) -> None:
        """Show *text* where the open place is named (a result, an error)."""
        self.place_label.setText(text)
        self.place_label.setToolTip(text)

    def set_task(self, text: str) -> None:
        """What runs now, or how the last job ended (``Loading…``, ``Ready``)."""
        self.task_label.setText(text)

    def set_busy(self, busy: bool) -> None:
        """Show or hide the progress bar and Cancel."""
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)

    def show_progress(self, done: int, total: int, label: str) -> None:
        """A job's progress: *done* of *total*, called *label*."""
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat(f"{label} %p%")

    def update_counts(self) -> None:
        """Sessions, segments, active facts and problems of the open data."""
        data = self.app_state.data
        if data is None:
            self.counts_label.setText("")
            return
        facts = data.knowledge.counts()["active"] if data.knowledge else 0
        segs = len(data.segments.segments) if data.segments else 0
        text = (
            f"{len(data.summaries)} sessions · {segs:,} segments · {facts:,} active facts · "
            f"{len(data.problems)} problems"
        )
        self.counts_label.setText(text)
        self.counts_label.setToolTip(text)
