"""Workers for long jobs: run in QThreadPool, report through signals, cancellable."""

from __future__ import annotations

import gc
import sys
import time
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot
from typing_extensions import override

from core.dataset.load import Cancelled, load_dataset
from core.io.jsonio import freeze_after_pauses

if TYPE_CHECKING:
    from collections.abc import Callable


class WorkerSignals(QObject):
    """Signals live on a QObject; the runnable itself is not one."""

    progressed = Signal(int, int, str)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()


PROGRESS_INTERVAL_S = 0.05
GIL_SWITCH_INTERVAL_S = 0.0005


def share_gil_with_gui() -> None:
    """Keep workers from holding the GIL for long while the window is up.

    - Threads take the GIL from each other every 0.5 ms (Python's default: 5 ms).
      Each call from Qt into Python on the GUI thread (a slot, a model's ``data``,
      a paint) takes the GIL back from a busy worker first, and at 5 ms a time one
      repaint of the window while a worker loaded took ~300 ms instead of ~40
      (bench_responsiveness). The workers lose a few percent.
    - What a loader builds is frozen out of the cyclic collector
      (:func:`core.io.jsonio.freeze_after_pauses`): collecting it took 65-75 ms in a
      worker, holding the GIL. :func:`release_frozen` undoes it for data closed.
    """
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    freeze_after_pauses(True)


def release_frozen(*, window_closing: bool = False) -> None:
    """Let the collector see what loads froze (the data they built is being replaced)."""
    gc.unfreeze()
    if window_closing:
        freeze_after_pauses(False)


def throttled(emit: Callable[[int, int, str], Any]) -> Callable[[int, int, str], None]:
    """*emit* at most every 50 ms (first, last and label changes always pass).

    A loader reports every file or segment; each report is a queued call on the GUI
    thread, and thousands of them in a row would stall it.
    """
    last = [0.0, ""]

    def progress(done: int, total: int, label: str) -> None:
        now = time.monotonic()
        if done >= total or label != last[1] or now - float(last[0]) >= PROGRESS_INTERVAL_S:
            last[0], last[1] = now, label
            emit(done, total, label)

    return progress


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
            result = self._fn(
                progress=throttled(self.signals.progressed.emit), cancelled=lambda: self._cancel
            )
        except Cancelled:
            self.signals.cancelled.emit()
        except Exception as exc:  # a worker must turn every failure into a signal
            self.signals.failed.emit(f"{type(exc).__name__}: {exc}" if not str(exc) else str(exc))
        else:
            self.signals.finished.emit(result)


def load_deferred(path: str, **kw: Any) -> Any:
    """:func:`load_dataset` listing database sessions first (read after, in the background)."""
    return load_dataset(path, defer_db=True, **kw)


class LoadWorker(TaskWorker):
    """Load a data directory with *loader* (:func:`core.dataset.load.load_dataset`)."""

    def __init__(self, path: str, loader: Callable[..., Any] = load_deferred) -> None:
        super().__init__(
            lambda *, progress, cancelled: loader(path, progress=progress, cancelled=cancelled),
            "loading",
        )


class _Keeper(QObject):
    """Holds every started worker until it has reported its end.

    A worker dropped by its owner (a second load replacing the first) must not
    take its signals object with it while its thread still emits.
    """

    def __init__(self) -> None:
        super().__init__()
        self.running: dict[QObject, TaskWorker] = {}

    def keep(self, worker: TaskWorker) -> None:
        self.running[worker.signals] = worker
        for signal in (worker.signals.finished, worker.signals.failed, worker.signals.cancelled):
            signal.connect(self.release)

    @Slot()
    @Slot(object)
    @Slot(str)
    def release(self, *_: object) -> None:
        self.running.pop(self.sender(), None)


_keeper: _Keeper | None = None


def start(worker: TaskWorker, pool: QThreadPool | None = None) -> None:
    """Run *worker* in *pool* (the global one by default), kept alive until it ends.

    Connect the caller's slots before calling this: they then run before the
    worker is released.
    """
    global _keeper
    if _keeper is None:
        _keeper = _Keeper()
    _keeper.keep(worker)
    (pool or QThreadPool.globalInstance()).start(worker)


def running() -> int:
    """How many started workers have not reported their end yet."""
    return len(_keeper.running) if _keeper is not None else 0
