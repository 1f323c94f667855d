"""The parts of the window that change an agent's memory: facts, review, compaction.

Every write goes through one confirm (a preview dialog naming file and lines),
is recorded in the activity log, and is followed by a refresh from disk.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Slot

from app.app_config import llm_providers, safety_defaults
from app.context import AppContext, AppHelper
from app.live import kept_view
from app.paths import data_dir
from core.compaction.extract import summary_lines_keeping
from core.compaction.provider import ProviderChoice, Timeouts
from core.compaction.target import target_from_dataset
from core.dataset.load import summarize
from core.io import fsutil
from core.io.problems import FormatError
from core.knowledge.provenance import ProvenanceIndex
from core.knowledge.sources import MessageIndex, SourceHit, fact_sources
from core.openclaw.agentdb import load_session_ref
from core.safety.activity import ActivityLog
from widgets.common.record_model import RecordRole
from widgets.common.write_preview import confirm_with_dialog

if TYPE_CHECKING:
    from PySide6.QtCore import QModelIndex
    from PySide6.QtWidgets import QWidget

    from core.compaction.run import CompactionRun
    from core.dataset.load import DataSet
    from core.dataset.open_recall import RecallData
    from core.io.writes import Confirm
    from core.transcript.model import Session


class Manager(AppHelper):
    """Wires the writing views to the data set, the confirm dialog and the activity log.

    The open data and the shown session come from *state*; messages go to *status*;
    the write preview opens over *parent*.
    """

    def __init__(
        self,
        context: AppContext,
        parent: QWidget,
        confirm: Confirm | None = None,
    ) -> None:
        super().__init__(context, parent)
        views, status = context.views, context.status
        self.recall: RecallData | None = None
        """The warm store and knowledge index of the open data, once indexed."""
        self.activity = ActivityLog(data_dir() / "activity.jsonl")
        fsutil.add_write_observer(self.activity.record)
        read = self.activity.load()
        views.activity_view.set_records(read.items)  # writes and compaction events
        self.activity.subscribe(views.activity_view.post)
        self.activity.subscribe_events(views.activity_view.post)
        self.confirm: Confirm = confirm or confirm_with_dialog(
            parent, on_confirmed=self.activity.expect
        )
        panel = views.compaction_panel
        panel.set_confirm(self.confirm)
        panel.set_activity(self.activity)
        panel.cut_point_changed.connect(self._on_cut_point)
        panel.written.connect(self._on_compaction_written)
        panel.facts_proposed.connect(self._on_facts_proposed)
        panel.failed.connect(status.say)
        views.review_queue.queue_changed.connect(self._on_queue_changed)
        views.review_queue.written.connect(self._on_facts_written)
        views.facts_view.written.connect(self._on_facts_written)
        views.facts_view.failed.connect(status.say)
        self._messages: MessageIndex | None = None
        self._sessions: list[Session] = []  # the snapshots both indexes read
        self._provenance: tuple[tuple[int, int], ProvenanceIndex] | None = None
        self.apply_settings()

    def close(self) -> None:
        """Stop observing writes (the window is closing)."""
        fsutil.remove_write_observer(self.activity.record)
        self.activity.unsubscribe(self.views.activity_view.post)
        self.activity.unsubscribe_events(self.views.activity_view.post)
        self.views.compaction_panel.cancel_all()

    def apply_settings(self) -> None:
        """Providers (offline always first) and the model-call time limits, from the settings."""
        choices = [
            ProviderChoice(p.label, p.spec(), p.key_env or None)
            for p in llm_providers(self.settings)
        ]
        self.views.compaction_panel.set_providers(choices)
        safety = safety_defaults(self.settings)
        self.views.compaction_panel.set_timeouts(
            Timeouts(
                connect=safety.connect_timeout,
                read=safety.read_timeout,
                total=safety.total_timeout,
            )
        )

    # -- data ----------------------------------------------------------------------------
    def set_data(self, data: DataSet) -> None:
        """A new data directory: the review queue writes to its knowledge log."""
        self.recall = None
        self.sync_message_index(data)
        self.views.review_queue.set_items([], data.knowledge, self.confirm)
        self.views.facts_view.attach(data.knowledge, self.confirm, self._sources)
        self.views.compaction_panel.set_target(None)
        self.views.compaction_panel.audit_view.set_session(None)

    def sync_message_index(self, data: DataSet | None = None) -> None:
        """Sessions grew, appeared or were reloaded: a fact's sources search sees them.

        Call on the GUI thread (where live mode and reloads change the sessions).
        The message index is built, in the sources job on its first search,
        from copies of the entry lists taken here: the job never iterates a
        list that live mode appends to meanwhile (a list copy is cheap; the index
        is rebuilt on the next search either way).
        """
        data = data if data is not None else self.app_state.data
        if data is None:
            return
        self._sessions = [s.snapshot() for s in data.sessions]
        self._messages = MessageIndex(self._sessions)

    def provenance_index(self) -> ProvenanceIndex | None:
        """Where the open data's facts came from, searched in the Sources tab's message index.

        Made again with that index (when the sessions changed) or when segments were
        added; the facts themselves are asked per call.
        """
        data = self.app_state.data
        if data is None or self._messages is None:
            return None
        segments = data.segments.segments if data.segments is not None else []
        key = (id(self._messages), len(segments))  # the old index is held: its id stays its own
        if self._provenance is None or self._provenance[0] != key:
            index = ProvenanceIndex(
                self._sessions,
                segments=list(segments),
                keeps=summary_lines_keeping,
                messages=self._messages,
            )
            self._provenance = (key, index)
        return self._provenance[1]

    def set_recall(self, recall: RecallData | None) -> None:
        """The warm store and knowledge index a fact's sources are searched in."""
        self.recall = recall

    def _sources(self, content: str) -> list[SourceHit]:
        """Segments and messages a fact most likely came from (runs in the view's job)."""
        recall = self.recall
        store = recall.store if recall is not None else None
        return fact_sources(content, store=store, messages=self._messages)

    def set_session(self, data: DataSet, session: Session, window: int | None) -> None:
        """The session the compaction panel plans for."""
        target = target_from_dataset(data, session, window=window)
        self.views.compaction_panel.set_target(target)
        self.views.compaction_panel.audit_view.set_session(session, target.settings)

    def reload_session(self, path: str) -> Session | None:
        """Re-read one transcript after memlens wrote to it; the views follow.

        The navigator keeps the session the inspector shows: the reloaded one is
        shown again (its new entries included), another one stays as it is.
        """
        data = self.app_state.data
        if data is None:
            return None
        try:
            session = load_session_ref(path)
        except FormatError as exc:
            self.status.say(f"Could not reload {path}: {exc}")
            return None
        for i, old in enumerate(data.sessions):
            if old.path == path:
                data.sessions[i] = session
                agent = data.summaries[i].agent
                prev = data.summaries[i]
                modified = os.path.getmtime(path) if os.path.isfile(path) else prev.modified
                data.summaries[i] = summarize(
                    session, agent, modified, storage=prev.storage, key=prev.key
                )
                break
        self.sync_message_index(data)
        shown = self.app_state.session
        nav = self.views.navigator
        if shown is None or shown == path:
            nav.set_sessions(data.summaries)
            nav.select_session(session.id)
        else:
            with kept_view(nav.tree, summary_path):
                nav.set_sessions(data.summaries)
        return session

    # -- signals ---------------------------------------------------------------------------
    @Slot(str)
    def _on_cut_point(self, entry_id: str) -> None:
        self.views.timeline.set_cut_point(entry_id or None)

    @Slot(object)
    def _on_compaction_written(self, run: CompactionRun) -> None:
        # The transcript the run appended to: the inspector may show another by now.
        written = run.appended.path if run.appended is not None else None
        data = self.app_state.data
        if written is None or data is None:
            return
        path = next((s.path for s in data.sessions if Path(s.path) == Path(written)), None)
        if path is not None:
            self.reload_session(path)
        entry = run.entry["id"] if run.entry else "?"
        self.status.say(f"Compaction {entry} appended to {written} (backup {run.backup})")

    @Slot(list, dict)
    def _on_facts_proposed(self, operations: list[Any], provenance: dict[str, Any]) -> None:
        self.views.review_queue.add_proposals(
            operations, source="compaction", provenance=provenance
        )
        self.views.tabs.setTabText(self.views.tab_index("review"), self._review_title())

    @Slot(list)
    def _on_facts_written(self, _written: list[Any]) -> None:
        """A fact write: both fact views and the recall index follow the log."""
        self.views.facts_view.refresh()
        recall = self.recall
        if recall is not None and recall.knowledge is not None:
            recall.knowledge.sync()
            self.views.recall_view.refresh()
        self.status.update_counts()

    @Slot(int)
    def _on_queue_changed(self, _pending: int) -> None:
        self.views.tabs.setTabText(self.views.tab_index("review"), self._review_title())

    def _review_title(self) -> str:
        pending = self.views.review_queue.pending_count()
        return f"Review ({pending})" if pending else "Review"


def summary_path(index: QModelIndex) -> str | None:
    """A navigator row's session path (what :func:`app.live.kept_view` keeps selected)."""
    return getattr(index.siblingAtColumn(0).data(RecordRole), "path", None)
