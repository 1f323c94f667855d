"""The selection that drives every view: a session, a point in it, a window.

The navigator picks the session, the timeline or the context view pick the
point; the inspector computes what each view needs from core and hands it over.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Slot

from app.context import AppContext, AppHelper
from core.context.breakdown import breakdown_at
from core.context.budget import RECALL_RESERVE, budget_for
from core.context.trim import default_query
from core.dataset.load import read_pending
from core.openclaw.config import context_window_for
from core.openclaw.session_rows import find_row
from core.recall.engine import query_from_context
from core.recall.hybrid import SearchConfig
from core.transcript.provider import provider_messages
from core.transcript.recalled_block import injection_index
from core.transcript.replay import context_at
from widgets.timeline.worker import timeline_job

if TYPE_CHECKING:
    from collections.abc import Callable

    from app.manager import Manager
    from core.context.budget import Budget
    from core.dataset.load import DataSet, SessionSummary
    from core.dataset.open_recall import RecallData
    from core.openclaw.sessions_store import SessionEntry
    from core.timeline.arrays import Timeline
    from core.transcript.model import Session


class Inspector(AppHelper):
    """Holds the current session and point, and feeds the views.

    It reports the selected session and entry to the :class:`AppState`, its messages
    to the :class:`StatusBar`, and builds timelines and reads sessions on *runner*.
    """

    def __init__(
        self, context: AppContext, manager: Manager, parent: QObject | None = None
    ) -> None:
        super().__init__(context, parent)
        self.manager = manager
        views = context.views
        self.read_key = f"inspector.read@{id(self):x}"
        self.timeline_key = f"inspector.timeline@{id(self):x}"
        self.data: DataSet | None = None
        self.session: Session | None = None
        self.entry_id: str | None = None
        self.window_override: int | None = None
        self.recalled_block: str | None = None
        self.recalled_tokens = 0
        self.budget: Budget | None = None
        self._trim_saved: int | None = None  # tokens the trim of the selected point saved
        self.timeline: Timeline | None = None
        views.navigator.session_selected.connect(self._on_session_selected)
        views.timeline.entry_activated.connect(self.show_entry)
        views.compaction_panel.audit_view.entry_activated.connect(self.show_entry)
        views.whatif_view.entry_activated.connect(self.show_entry)
        views.context_view.entry_activated.connect(self._on_context_entry)
        views.gauge.window_changed.connect(self._on_window_changed)
        views.recall_view.block_changed.connect(self._on_block_changed)
        views.trim_view.result_ready.connect(self._on_trim_result)
        views.trim_view.export_requested.connect(self._on_export_requested)
        views.openclaw_view.hit_activated.connect(self._on_transcript_hit)
        views.lab_view.drill_requested.connect(self._on_lab_drill_requested)
        views.lab_view.problems_found.connect(views.problems.append_rows)
        views.recall_view.preview_changed.connect(self._on_recall_shown)

    # -- data ----------------------------------------------------------------------------
    def set_data(self, data: DataSet) -> None:
        """A new data directory: forget the old selection."""
        self.data = data
        self.session = None
        self.entry_id = None
        self.drop_jobs()  # what they deliver belongs to the old place
        self.views.recall_view.detach()
        self.views.lab_view.detach()
        self.views.timeline.clear()
        self.views.message_view.clear()
        self.views.context_view.clear()
        self.views.gauge.clear()
        self.views.trim_view.clear()
        self.views.whatif_view.set_session(None)
        self.views.openclaw_view.set_data(data)

    def drop_jobs(self) -> None:
        """Drop whatever the session read and the timeline build still deliver."""
        for key in (self.read_key, self.timeline_key):
            self.runner.cancel(key)

    def set_recall(self, recall: RecallData) -> None:
        """The warm store and knowledge index are ready."""
        self.views.recall_view.attach(recall.store, recall.knowledge, recall.settings)
        folder = self.data.discovery.memory_context if self.data is not None else None
        self.views.lab_view.attach(recall.store, recall.settings.search, folder)
        self._feed_recall()

    def restore_settings(self) -> None:
        """The "what if" window the user picked last time."""
        value = self.settings.value("budget/window", 0)
        window = int(value) if str(value).isdigit() else 0
        self.window_override = window or None
        self.views.gauge.set_selected_window(self.window_override)

    def save_settings(self) -> None:
        """Persist the "what if" window (0: the model's own)."""
        self.settings.set_values([("budget/window", self.views.gauge.selected_window() or 0)])

    def _on_recall_shown(self, _outcome: object) -> None:
        """The lab offers the Recall view's settings as they are now."""
        self.views.lab_view.set_view_settings(self.views.recall_view.settings())

    def _on_lab_drill_requested(
        self, query: str, session_id: object, segment_id: str, config: object, ranking: str
    ) -> None:
        """A query of the recall lab, shown in the Recall view with its "why not?"."""
        recall = self.views.recall_view
        if isinstance(config, SearchConfig):
            recall.set_search_config(config, ranking)
        recall.ask(query, session_id if isinstance(session_id, str) else None, segment_id)
        self.views.show_view("recall")

    def explain_current_message(self) -> str:
        """Run "why not?" for the selected message and show the Recall tab; returns its text."""
        if self.session is None or self.entry_id is None:
            return "Select a message first."
        message = self.session.entry(self.entry_id).message
        if message is None:
            return "The selected entry is not a message."
        self.views.show_view("recall")
        self.views.recall_view.explain_message(self.session.id, message.role, message.text())
        return "explained"

    def refresh(self) -> None:
        """Redraw the current point (after a theme change)."""
        if self.session is not None and self.entry_id is not None:
            self.show_entry(self.entry_id)

    def _store_entry(self, session: Session) -> SessionEntry | None:
        if self.data is None:
            return None
        found = find_row(self.data.stores, session)
        return found[1] if found is not None else None

    # -- selection ---------------------------------------------------------------------------
    @Slot(object)
    def _on_session_selected(self, summary: SessionSummary | None) -> None:
        if summary is None or self.data is None:
            return
        if summary.path in self.data.pending:
            self._read_then_show(self.data, summary)
            return
        try:
            session = self.data.session(summary.path)
        except KeyError:
            return
        self._show_session(session)

    def _read_then_show(self, data: DataSet, summary: SessionSummary) -> None:
        """A database session not read yet: read it in a job, then show it if still wanted."""
        self.runner.submit(
            "reading the session",
            lambda **_: read_pending(summary),
            key=self.read_key,  # a newer pick drops this read's result
            done=lambda read: self._on_pending_read(data, summary, read),
            failed=lambda message: self.status.say(f"Could not read {summary.path}: {message}"),
        )
        self.status.say(f"Reading session {summary.id}…")

    def _on_pending_read(self, data: DataSet, summary: SessionSummary, read: Any) -> None:
        current = self.views.navigator.current()
        if data is not self.data or current is None or current.path != summary.path:
            return  # another place or another session was picked meanwhile
        data.adopt([read])  # a no-op when the background read adopted it first
        self.status.say(str(data.discovery.path))
        self._show_session(data.session(summary.path))

    def _show_session(self, session: Session) -> None:
        """Make *session* the one every view shows, at its leaf."""
        self.session = session
        self.app_state.select_session(session.path)
        self.recalled_block = None
        self.recalled_tokens = 0
        self.views.timeline.clear()  # also forgets the previous session's cut point
        self.views.timeline.set_cut_point(None)
        if self.data is not None:
            self.manager.set_session(self.data, session, self.window_override)
        self.views.openclaw_view.show_session(session)
        self.views.whatif_view.set_session(session, self.data.config if self.data else None)
        self._build_timeline()
        leaf = session.leaf
        if leaf is not None:
            self.show_entry(leaf.id)

    def session_grew(self) -> None:
        """Live appends reached the current session: redraw, keeping the selection and zoom."""
        session = self.session
        if session is None:
            return
        if self.entry_id is not None and self.entry_id not in session.by_id:
            leaf = session.leaf  # the file was replaced and the entry is gone
            if leaf is not None:
                self.show_entry(leaf.id)
        self._build_timeline(keep_view=True)
        self.views.compaction_panel.session_grew(session)  # its plan follows the new leaf

    def _build_timeline(self, *, keep_view: bool = False) -> None:
        """Build the timeline arrays in a job (tens of ms on 5,000 messages)."""
        assert self.session is not None
        make_budget = self._budget_maker(None)  # replays the context: in the job
        self.runner.submit(
            "building the timeline",
            timeline_job(self.session.snapshot(), make_budget),  # live mode may extend it
            key=self.timeline_key,  # a newer selection drops this build
            done=lambda built: self._on_timeline_built(built[0], built[1], keep_view),
            failed=lambda message: self.status.say(f"Timeline failed: {message}"),
        )

    def _on_timeline_built(
        self, timeline: Timeline, budget: Budget | None, keep_view: bool
    ) -> None:
        self.timeline = timeline
        self.views.timeline.set_timeline(timeline, budget, keep_view=keep_view)
        if self.entry_id is not None:
            self.views.timeline.select_entry(self.entry_id)

    @Slot(str, str)
    def _on_transcript_hit(self, path: str, message_id: str) -> None:
        """Show the entry OpenClaw's transcript search found (its session selected first)."""
        if self.session is None or self.session.path != path:
            if not self.views.navigator.select_session(path):
                self.status.say(f"{path} is not in the session list (filtered out?)")
                return
        if self.session is not None and message_id in self.session.by_id:
            self.show_entry(message_id)
            self.views.show_view("message")

    @Slot(str)
    def _on_context_entry(self, entry_id: str) -> None:
        if self.session is not None and entry_id in self.session.by_id:
            self.show_entry(entry_id)

    def _budget(self, at: str | None) -> Budget:
        assert self.session is not None
        return self._budget_maker(at)(self.session)

    def _budget_maker(self, at: str | None) -> Callable[[Session], Budget]:
        """``budget_for`` with this moment's settings, for a session (or its snapshot)."""
        assert self.session is not None
        config = self.data.config if self.data else None
        model_id, window = self._model_id(), self.window_override
        store_entry, extra = self._store_entry(self.session), self.recalled_tokens

        def make(session: Session) -> Budget:
            return budget_for(
                session,
                at=at,
                config=config,
                model_id=model_id,
                window=window,
                store_entry=store_entry,
                extra_tokens=extra,
            )

        return make

    @Slot(str)
    def show_entry(self, entry_id: str) -> None:
        """Make *entry_id* of the current session the selected point of every view."""
        session = self.session
        if session is None:
            return
        self.entry_id = entry_id
        self.app_state.select_entry(entry_id)
        self._trim_saved = None  # until the trim of this point reports
        self.views.gauge.set_comparison(None)
        self.views.timeline.select_entry(entry_id)
        self.views.message_view.show_entry(session, entry_id)
        items = context_at(session, entry_id)
        self.views.recall_view.set_default_query(query_from_context(items), session.id)
        self._feed_context(items)
        # trimmed as sent: pi's results for calls without one, no aborted turns
        messages = provider_messages([i.message for i in items])
        budget = self.budget or self._budget(entry_id)
        self.views.trim_view.set_context(
            messages,
            default_query(messages),
            budget.window,
            RECALL_RESERVE,
            budget.hard_cap,
        )

    def _feed_recall(self) -> None:
        if self.session is None or self.entry_id is None:
            return
        items = context_at(self.session, self.entry_id)
        self.views.recall_view.set_default_query(query_from_context(items), self.session.id)

    def _feed_context(self, items: list[Any] | None = None) -> None:
        """Context view and gauge of the current point (after recall or window changes)."""
        session, entry_id = self.session, self.entry_id
        if session is None or entry_id is None:
            return
        if items is None:
            items = context_at(session, entry_id)
        roles = [i.message.role for i in items]
        self.views.context_view.show_context(
            session,
            entry_id,
            self.recalled_block,
            injection_index(roles) if self.recalled_block else None,
        )
        self.budget = self._budget(entry_id)
        self.views.gauge.set_breakdown(
            breakdown_at(session, entry_id, recalled_tokens=self.recalled_tokens),
            self.budget,
            model_window=self._model_window(),
        )
        if self._trim_saved is not None:
            self._show_trim_saving()  # the recalled block or the window changed the figure

    def _model_id(self) -> str | None:
        if self.data is None or self.session is None:
            return None
        summary = next((s for s in self.data.summaries if s.path == self.session.path), None)
        return summary.model if summary and summary.model else None

    def _model_window(self) -> int:
        config = self.data.config if self.data else None
        return context_window_for(config, self._model_id())[0]

    @Slot(int)
    def _on_window_changed(self, _window: int) -> None:
        self.window_override = self.views.gauge.selected_window()
        self._feed_context()
        if self.session is not None:
            self._build_timeline()

    @Slot(int)
    def _on_block_changed(self, tokens: int) -> None:
        self.recalled_tokens = tokens
        self.recalled_block = self.views.recall_view.block_text() or None
        self._feed_context()

    @Slot(object)
    def _on_trim_result(self, result: Any) -> None:
        # The gauge shows the measured context where there is one; trim works on
        # estimates, so apply its saving to the figure the gauge shows.
        self._trim_saved = result.tokens_before - result.tokens_after
        self._show_trim_saving(result.tokens_before)

    def _show_trim_saving(self, fallback: int = 0) -> None:
        """The gauge's "after trim" bar: the trim's saving off the figure shown now."""
        if self._trim_saved is None:
            self.views.gauge.set_comparison(None)
            return
        shown = self.budget.context_tokens if self.budget is not None else fallback
        self.views.gauge.set_comparison(max(shown - self._trim_saved, 0), "after trim")

    @Slot(bytes)
    def _on_export_requested(self, payload: bytes) -> None:
        from app.export import save_export

        save_export(self.views.trim_view, payload, self.status.say)
