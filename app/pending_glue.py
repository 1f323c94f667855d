"""Database sessions listed from their counts are read in a worker after the list shows.

:func:`core.dataset.load.load_dataset` with ``defer_db`` lists an OpenClaw database's
sessions from SQL counts (a 100,000-event database lists in well under a second);
this glue reads their transcripts in the background, then puts the full figures in
the navigator (the selection and scroll position kept). A session opened before
then is read on the spot by :meth:`core.dataset.load.DataSet.session`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Slot

from app.live import kept_view
from app.live_glue import session_key
from app.workers import TaskWorker, start
from core.dataset.load import read_all_pending

if TYPE_CHECKING:
    from app.main_window import MainWindow
    from core.dataset.load import DataSet


class PendingGlue(QObject):
    """Reads a data set's pending database sessions, one worker at a time."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.w = window
        self.worker: TaskWorker | None = None
        self._data: DataSet | None = None

    def start(self, data: DataSet) -> bool:
        """Read *data*'s pending sessions in a worker; False when there are none."""
        self.cancel()
        if not data.pending:
            return False
        todo = list(data.pending.values())  # taken here, on the thread owning data
        worker = TaskWorker(
            lambda *, progress, cancelled: read_all_pending(todo, progress, cancelled),
            "reading sessions",
        )
        worker.signals.progressed.connect(self.w._on_progressed)
        worker.signals.finished.connect(self._on_read)
        worker.signals.failed.connect(self._on_failed)
        worker.signals.cancelled.connect(self._on_cancelled)
        self.worker = worker
        self._data = data
        self.w._busy(True)
        self.w.state.setText(f"Reading {len(todo)} database session(s)…")
        start(worker)
        return True

    def cancel(self) -> None:
        """Stop reading (another place opened, Esc)."""
        if self.worker is not None:
            self.worker.cancel()

    def _mine(self) -> bool:
        return self.worker is not None and self.sender() is self.worker.signals

    def _end(self) -> None:
        self.worker = None
        self.w._busy(False)

    @Slot(object)
    def _on_read(self, loaded: list[Any]) -> None:
        if not self._mine():
            return
        self._end()
        data = self._data
        if data is None or data is not self.w.data:
            return  # another place was opened meanwhile
        data.adopt(loaded)
        with kept_view(self.w.navigator.tree, session_key):
            self.w.navigator.set_sessions(data.summaries)
        self.w.manager.sync_message_index(data)
        self.w.problems.set_records(data.problems)
        self.w._update_counts()
        left = len(data.pending)
        self.w.state.setText(
            "Sessions read" + (f"; {left} could not be read (open one to see why)" if left else "")
        )

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        if self._mine():
            self._end()
            self.w.state.setText(f"Reading sessions failed: {message}")

    @Slot()
    def _on_cancelled(self) -> None:
        if self._mine():
            self._end()
            self.w.state.setText("Reading sessions cancelled: each is read when opened")
