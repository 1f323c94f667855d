"""The compaction view's worker: one job (plan, run, prepare, write) in a QThreadPool."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QRunnable, Signal
from typing_extensions import override

from core.io.jobs import Cancelled

if TYPE_CHECKING:
    from collections.abc import Callable

    from core.io.jobs import CancelCheck, Progress


class CompactionTaskSignals(QObject):
    """Signals of :class:`CompactionTask`; each carries the task's serial."""

    progressed = Signal(int, int, int, str)
    """serial, done, total, label."""
    finished = Signal(int, object)
    failed = Signal(int, str)
    cancelled = Signal(int)


class CompactionTask(QRunnable):
    """Run ``fn(progress, cancelled)``; report the result, the failure or the cancel.

    Parameters
    ----------
    serial
        Identifies the task in its signals (the view ignores stale ones).
    kind
        What the task does (``plan``, ``run``, ``prepare``, ``write``).
    fn
        The job; it should call ``cancelled()`` often and raise
        :class:`~core.io.jobs.Cancelled` when it returns True.
    """

    def __init__(self, serial: int, kind: str, fn: Callable[[Progress, CancelCheck], Any]) -> None:
        super().__init__()
        self.serial = serial
        self.kind = kind
        self.signals = CompactionTaskSignals()
        self._fn = fn
        self._cancel = False

    def cancel(self) -> None:
        """Ask the job to stop at its next check."""
        self._cancel = True

    @property
    def cancel_requested(self) -> bool:
        """Whether :meth:`cancel` was called."""
        return self._cancel

    def _progress(self, done: int, total: int, label: str) -> None:
        self.signals.progressed.emit(self.serial, done, total, label)

    @override
    def run(self) -> None:
        try:
            result = self._fn(self._progress, lambda: self._cancel)
        except Cancelled:
            self.signals.cancelled.emit(self.serial)
        except Exception as exc:  # a worker turns every failure into a signal
            text = str(exc) or type(exc).__name__
            self.signals.failed.emit(self.serial, text)
        else:  # a job that got to its end reports it, even if a cancel came late
            self.signals.finished.emit(self.serial, result)
