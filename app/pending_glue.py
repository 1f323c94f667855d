"""Database sessions listed from their counts are read in a job after the list shows.

:func:`core.dataset.load.load_dataset` with ``defer_db`` lists an OpenClaw database's
sessions from SQL counts (a 100,000-event database lists in well under a second);
this glue reads their transcripts in the background, then puts the full figures in
the navigator (the selection and scroll position kept). A session opened before
then is read on the spot by :meth:`core.dataset.load.DataSet.session`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.context import AppContext, AppHelper
from app.live import kept_view
from app.manager import summary_path
from core.dataset.load import read_all_pending

if TYPE_CHECKING:
    from PySide6.QtCore import QObject

    from app.manager import Manager
    from core.dataset.load import DataSet
    from widgets.common.jobs import Job


class PendingGlue(AppHelper):
    """Reads a data set's pending database sessions, one job at a time."""

    def __init__(
        self,
        context: AppContext,
        manager: Manager,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(context, parent)
        self.manager = manager
        self.job_key = f"pending@{id(self):x}"
        self.job: Job | None = None

    def start(self, data: DataSet) -> bool:
        """Read *data*'s pending sessions in a job; False when there are none."""
        self.drop_jobs()  # what an older read still delivers is dropped
        if not data.pending:
            return False
        todo = list(data.pending.values())  # taken here, on the thread owning data
        self.job = self.runner.submit(
            "reading sessions",
            lambda *, progress, cancelled: read_all_pending(todo, progress, cancelled),
            key=self.job_key,
            done=lambda loaded: self._on_read(data, loaded),
            failed=lambda message: self.status.set_task(f"Reading sessions failed: {message}"),
            cancelled=lambda: self.status.set_task(
                "Reading sessions cancelled: each is read when opened"
            ),
            progress=self.status.show_progress,
        )
        self.status.set_task(f"Reading {len(todo)} database session(s)…")
        return True

    def cancel(self) -> None:
        """Stop reading (Esc): each session is read when opened instead."""
        if self.job is not None:
            self.job.cancel()

    def drop_jobs(self) -> None:
        """Drop whatever the current read still delivers (another place, or closing)."""
        self.runner.cancel(self.job_key)

    @property
    def running(self) -> bool:
        """Whether a read is running."""
        return self.runner.busy(self.job_key)

    def _on_read(self, data: DataSet, loaded: list[Any]) -> None:
        if data is not self.app_state.data:
            return  # another place was opened meanwhile
        data.adopt(loaded)
        with kept_view(self.views.navigator.tree, summary_path):
            self.views.navigator.set_sessions(data.summaries)
        self.manager.sync_message_index(data)
        self.views.problems.set_records(data.problems)
        self.status.update_counts()
        left = len(data.pending)
        self.status.set_task(
            "Sessions read" + (f"; {left} could not be read (open one to see why)" if left else "")
        )
