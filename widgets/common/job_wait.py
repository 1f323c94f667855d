"""Waiting for a job of the runner to report, without blocking its delivery."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QDeadlineTimer, QEventLoop

if TYPE_CHECKING:
    from widgets.common.jobs import JobRunner


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
