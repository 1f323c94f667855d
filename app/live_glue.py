"""Live mode in the window: each batch the controller applies reaches the views.

:class:`LiveGlue` is handed the :class:`widgets.common.state.AppState`, the views, the
status bar and the helpers it updates; it never sees the main window. A batch becomes
row inserts and ``dataChanged`` (the navigator's rows, the problems list), never a model
reset for an append, so selection, scroll position and expanded rows are kept. Live
status goes to ``state.live``; compactions and memory flushes are announced in the
status bar.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Slot

from app.context import AppContext, AppHelper
from app.live import LiveController, bind_indicator
from widgets.common.state import LiveStatus
from widgets.live.indicator import LiveIndicator

if TYPE_CHECKING:
    from collections.abc import Callable

    from app.inspector import Inspector
    from app.manager import Manager
    from core.dataset.load import DataSet
    from core.dataset.open_recall import RecallData
    from core.live.changes import LiveChanges

ANNOUNCE_MS = 15_000


class LiveGlue(AppHelper):
    """Owns the window's :class:`LiveController` and applies its batches to the views.

    Parameters
    ----------
    state
        The app state: its data is what is followed; its live status is kept current.
    views
        The navigator, the problems list, the facts and recall views.
    status
        Counts and announcements; the live indicator joins its bar.
    manager, inspector
        Told when sessions grow (the message index, the shown session).
    runner
        Where the controller reads and embeds.
    open_recall
        Opens the recall side again (segments.jsonl was replaced).
    """

    def __init__(
        self,
        context: AppContext,
        *,
        manager: Manager,
        inspector: Inspector,
        open_recall: Callable[[DataSet], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(context, parent)
        runner, status = context.runner, context.status
        self.manager = manager
        self.inspector = inspector
        self.open_recall = open_recall
        self.controller = LiveController(self, runner=runner)
        self.indicator = LiveIndicator()
        status.bar.addPermanentWidget(self.indicator)
        bind_indicator(self.controller, self.indicator)
        self._error = ""
        c = self.controller
        c.batch_applied.connect(self._on_batch)
        c.state_changed.connect(self._on_state)
        c.read_failed.connect(self._on_read_failed)
        c.polled.connect(self._on_polled)

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
    @Slot(object)
    def _on_batch(self, changes: LiveChanges) -> None:
        data = self.app_state.data
        follower = self.controller.follower
        if data is None or follower is None or follower.data is not data:
            return
        views = self.views
        if changes.sessions_added or changes.sessions_changed or changes.resets:
            self.manager.sync_message_index()
        if changes.summaries_changed:
            wanted = set(changes.summaries_changed)
            views.navigator.update_sessions([s for s in data.summaries if s.id in wanted])
        session = self.inspector.session
        if session is not None and (
            session.id in changes.sessions_changed or session.path in changes.resets
        ):
            self.inspector.session_grew()
        if changes.facts_changed or changes.resets:
            views.facts_view.refresh()
        if changes.facts_changed or changes.segments_added or changes.segments_evicted:
            views.recall_view.refresh()
        if changes.problems_dropped:  # a reloaded file's old problems went: not an append
            views.problems.set_records(data.problems)
        else:
            views.problems.append_rows(changes.problems)
        self.status.update_counts()
        for a in changes.announcements:
            self.status.bar.showMessage(a.message, ANNOUNCE_MS)
        if changes.store_reopen_needed:
            self.open_recall(data)
        self._publish()

    @Slot(str)
    def _on_state(self, _state: str) -> None:
        self._publish()

    @Slot(str)
    def _on_read_failed(self, message: str) -> None:
        self._error = message

    @Slot()
    def _on_polled(self) -> None:
        self._publish()
        self._error = ""  # shown until a read succeeds

    def _publish(self) -> None:
        """Tell the app state what live mode does now."""
        c = self.controller
        follower = c.follower
        if follower is None or c.state == "off":
            self.app_state.set_live(LiveStatus())
            return
        self.app_state.set_live(
            LiveStatus(
                following=c.state == "live",
                path=str(follower.data.discovery.path),
                last_change=c.last_event_time or 0.0,
                error=self._error,
            )
        )
