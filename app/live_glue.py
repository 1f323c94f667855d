"""Live mode in the window: the controller's batches reach every view.

Views are refreshed in place (selection and scroll kept); compactions and
memory flushes are announced in the status bar and the problems list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Slot

from app.live import LiveController, bind_indicator, kept_view
from widgets.common.record_model import RecordRole
from widgets.live.indicator import LiveIndicator

if TYPE_CHECKING:
    from PySide6.QtCore import QModelIndex

    from app.main_window import MainWindow
    from core.dataset.load import DataSet
    from core.dataset.open_recall import RecallData

ANNOUNCE_MS = 15_000


def session_key(index: QModelIndex) -> Any:
    """A navigator row's session path (what :func:`kept_view` keeps selected)."""
    return getattr(index.siblingAtColumn(0).data(RecordRole), "path", None)


class LiveGlue(QObject):
    """Owns the :class:`LiveController` of a window and applies its signals."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.w = window
        self.controller = LiveController(self)
        self.indicator = LiveIndicator()
        window.statusBar().addPermanentWidget(self.indicator)
        bind_indicator(self.controller, self.indicator)
        self.announcements: list[str] = []
        c = self.controller
        c.summaries_changed.connect(self._on_summaries)
        c.session_added.connect(self._on_session_added)
        c.sessions_changed.connect(self._on_sessions)
        c.knowledge_changed.connect(self._on_knowledge)
        c.segments_added.connect(self._on_segments)
        c.problem.connect(self._on_problem)
        c.compaction_announced.connect(self._announce)
        c.memory_flush_announced.connect(self._announce)
        c.recall_reopen_needed.connect(self._on_reopen)
        c.file_reset.connect(self._on_reset)

    def attach(self, data: DataSet) -> None:
        """Follow *data*'s files from now on."""
        self.controller.attach(data, None)

    def set_recall(self, recall: RecallData) -> None:
        """New segments and facts also reach the warm store and knowledge index."""
        self.controller.set_recall(recall)

    def detach(self) -> None:
        """Stop following (closing, or another place opened)."""
        self.controller.detach()

    # -- slots ---------------------------------------------------------------------------
    @Slot(list)
    def _on_summaries(self, _ids: list[str]) -> None:
        data = self.w.data
        if data is None:
            return
        with kept_view(self.w.navigator.tree, session_key):
            self.w.navigator.set_sessions(data.summaries)
        self.w._update_counts()

    @Slot(str)
    def _on_session_added(self, _session_id: str) -> None:
        self.w.manager.sync_message_index()
        self._on_summaries([])

    @Slot(list)
    def _on_sessions(self, ids: list[str]) -> None:
        self.w.manager.sync_message_index()
        session = self.w.inspector.session
        if session is not None and session.id in ids:
            self.w.inspector.session_grew()

    @Slot(list)
    def _on_knowledge(self, _ids: list[str]) -> None:
        self.w.facts_view.refresh()
        self.w.recall_view.refresh()
        self.w._update_counts()

    @Slot(int)
    def _on_segments(self, _count: int) -> None:
        self.w.recall_view.refresh()
        self.w._update_counts()

    @Slot(object)
    def _on_problem(self, _problem: object) -> None:
        data = self.w.data
        if data is None:
            return
        with kept_view(self.w.problem_view, lambda i: i.row()):
            self.w.problems.set_records(data.problems)
        self.w._update_counts()

    @Slot(str, str)
    def _announce(self, _session_id: str, message: str) -> None:
        self.announcements.append(message)
        self.w.statusBar().showMessage(message, ANNOUNCE_MS)

    @Slot()
    def _on_reopen(self) -> None:
        if self.w.data is not None:
            self.w._open_recall(self.w.data)

    @Slot(str)
    def _on_reset(self, path: str) -> None:
        self.w.manager.sync_message_index()
        session = self.w.inspector.session
        if session is not None and session.path == path:
            self.w.inspector.session_grew()
        self.w.facts_view.refresh()
