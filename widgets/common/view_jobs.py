"""What views do with the job runner: one key per view and request kind, waiting, cleanup."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QDeadlineTimer, QEventLoop

if TYPE_CHECKING:
    from PySide6.QtCore import QObject

    from widgets.common.jobs import JobRunner


def view_key(view: QObject, runner: JobRunner, kind: str) -> str:
    """The runner key of *view*'s requests of *kind*; cancelled when the view is destroyed.

    A newer request of the same key drops whatever an older one still delivers, and
    two views of one class have keys of their own. Once *view* is destroyed, what its
    job still delivers is dropped: nothing reaches a deleted view.
    """
    key = f"{kind}-{id(view)}"
    view.destroyed.connect(lambda *_: runner.cancel(key))
    return key


def wait_idle(runner: JobRunner, key: str, msecs: int = 5000) -> bool:
    """Process events until the job of *key* has reported; False after *msecs*.

    A job's end is delivered on the GUI thread, so waiting on the pool alone would
    leave its result undelivered: the events are processed while waiting.
    """
    deadline = QDeadlineTimer(msecs)
    while runner.busy(key):
        if deadline.hasExpired():
            return False
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
    return True
