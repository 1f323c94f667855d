"""Workers for long jobs: run in QThreadPool, report through signals, cancellable."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QRunnable, Signal
from typing_extensions import override

from core.dataset import Cancelled, load_dataset

if TYPE_CHECKING:
    from collections.abc import Callable


class WorkerSignals(QObject):
    """Signals live on a QObject; the runnable itself is not one."""

    progressed = Signal(int, int, str)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()


class LoadWorker(QRunnable):
    """Load a data directory with :func:`core.dataset.load_dataset`."""

    def __init__(self, path: str, loader: Callable[..., Any] = load_dataset) -> None:
        super().__init__()
        self.path = path
        self.signals = WorkerSignals()
        self._cancel = False
        self._loader = loader

    def cancel(self) -> None:
        """Ask the load to stop at its next step."""
        self._cancel = True

    @override
    def run(self) -> None:
        try:
            data = self._loader(
                self.path,
                progress=self.signals.progressed.emit,
                cancelled=lambda: self._cancel,
            )
        except Cancelled:
            self.signals.cancelled.emit()
        except Exception as exc:  # a worker must turn every failure into a signal
            self.signals.failed.emit(str(exc))
        else:
            self.signals.finished.emit(data)


class TaskWorker(QRunnable):
    """Run ``fn(progress=..., cancelled=...)`` in the pool; the result arrives as a signal."""

    def __init__(self, fn: Callable[..., Any], label: str = "") -> None:
        super().__init__()
        self.label = label
        self.signals = WorkerSignals()
        self._cancel = False
        self._fn = fn

    def cancel(self) -> None:
        """Ask the task to stop at its next check."""
        self._cancel = True

    @property
    def cancelled(self) -> bool:
        """Whether :meth:`cancel` was called."""
        return self._cancel

    @override
    def run(self) -> None:
        try:
            result = self._fn(progress=self.signals.progressed.emit, cancelled=lambda: self._cancel)
        except Cancelled:
            self.signals.cancelled.emit()
        except Exception as exc:  # a worker must turn every failure into a signal
            self.signals.failed.emit(f"{type(exc).__name__}: {exc}" if not str(exc) else str(exc))
        else:
            self.signals.finished.emit(result)
