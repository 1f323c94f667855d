"""Build a session timeline off the GUI thread."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QRunnable, Signal
from typing_extensions import override

from core.timeline.arrays import build_timeline

if TYPE_CHECKING:
    from core.context.budget import Budget
    from core.transcript.model import Session


class TimelineWorkerSignals(QObject):
    """Signals of :class:`TimelineWorker` (a runnable is not a QObject)."""

    finished = Signal(object)
    """The :class:`~core.timeline.arrays.Timeline`."""
    failed = Signal(str)


class TimelineWorker(QRunnable):
    """Run :func:`core.timeline.arrays.build_timeline` in a ``QThreadPool`` thread.

    A session of thousands of messages takes tens of milliseconds or more (its
    messages are normalised on first use): more than a GUI-thread budget.
    """

    def __init__(self, session: Session, budget: Budget | None = None) -> None:
        super().__init__()
        self.session = session
        self.budget = budget
        self.signals = TimelineWorkerSignals()

    @override
    def run(self) -> None:
        try:
            timeline = build_timeline(self.session, self.budget)
        except Exception as exc:  # a worker turns every failure into a signal
            self.signals.failed.emit(f"{type(exc).__name__}: {exc}")
        else:
            self.signals.finished.emit(timeline)
