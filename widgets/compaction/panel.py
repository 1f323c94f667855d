"""Compaction on demand: plan, summarise in a worker, compare, then write or discard.

:class:`CompactionPanel` is handed a :class:`~core.compaction.target.CompactionTarget`
(built by the app). It plans in a worker (again when live mode grows the session),
shows what would be pruned, summarised and kept and reports the cut point. Run
summarises with the chosen provider in a worker with progress and cancel, bounded by
the app's :class:`~core.compaction.provider.Timeouts`; the summary is shown with its
sections, beside the previous one, with the segments it archives and the fact
operations it proposes (handed on, ``facts_proposed``, for the review queue). Write
asks the app's ``confirm`` with the exact lines and files, then backs the transcript
up, archives the segments and appends the entry. A failed summariser call is shown
with the attempt log; Write is disabled, and Retry, another summariser or an explicit
"Write the fallback summary anyway" are offered.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, Qt, Signal, Slot
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from typing_extensions import override

from core.compaction.provider import Timeouts
from core.compaction.refusals import CompactionRefused, RecentlyModified
from core.compaction.run import CompactionRun, SummaryFailed, failure_headline
from core.io.writes import planned_backup
from core.openclaw.gateway import GatewayCompaction, GatewayError
from widgets.common.jobs import default_runner
from widgets.common.view_jobs import view_key
from widgets.compaction import jobs
from widgets.compaction.actions import PanelFacts, add_action, enabled
from widgets.compaction.ask import ask_openclaw
from widgets.compaction.display import CompactionDisplay
from widgets.compaction.markup import anchor

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from PySide6.QtWidgets import QPushButton, QWidget

    from core.compaction.plan import CompactionPlan
    from core.compaction.provider import ProviderChoice
    from core.compaction.target import CompactionTarget
    from core.io.writes import Confirm
    from core.safety.activity import ActivityLog
    from core.transcript.model import Session
    from widgets.common.jobs import Job, JobRunner


class CompactionPanel(CompactionDisplay):
    """Plan, run, compare and write a compaction of one session.

    Parameters
    ----------
    confirm
        Asked with the planned writes before anything is written (the app shows
        a preview dialog); without one, Write is refused.

    Signals
    -------
    cut_point_changed(str)
        The planned ``firstKeptEntryId`` ("" when there is no plan): highlight it.
    summary_ready(object)
        A dry run finished: the :class:`~core.compaction.run.CompactionRun`.
    summary_failed(object)
        A dry run finished but a summariser call failed: the run (its
        ``failure`` and ``call_log`` say which and why).
    written(object)
        The compaction was written: the run, with ``backup`` and ``appended``.
        Reload the session (the timeline shows the new compaction).
    facts_proposed(list, dict)
        After a write, the proposed fact operations and their provenance records
        by content hash (the run's ``fact_sources``), for the review queue.
    discarded()
        The summary was thrown away; nothing was written.
    failed(str)
        Planning, the run or the write failed; the text says why.
    """

    cut_point_changed = Signal(str)
    summary_ready = Signal(object)
    summary_failed = Signal(object)
    written = Signal(object)
    facts_proposed = Signal(list, dict)
    discarded = Signal()
    failed = Signal(str)
    openclaw_compacted = Signal(str)
    """OpenClaw's gateway compacted the session with this key (its database changed)."""

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        confirm: Confirm | None = None,
        runner: JobRunner | None = None,
    ) -> None:
        super().__init__(parent)
        self._confirm = confirm
        self._target: CompactionTarget | None = None
        self._plan: CompactionPlan | None = None
        self._result: CompactionRun | None = None
        self._runner = runner if runner is not None else default_runner()
        # a newer plan (or run) drops what an older one still delivers; writes always report
        self._plan_key = view_key(self, self._runner, "compaction-plan")
        self._run_key = view_key(self, self._runner, "compaction-run")
        self._active: Job | None = None
        self._active_kind = ""
        self._timeouts = Timeouts()
        self._allow_fallback = False  # the write being prepared is the explicit fallback one
        self._replan = False  # the session grew while a plan was being made: plan again
        self._activity: ActivityLog | None = None
        self.openclaw_command: str | None = None
        """The openclaw command for :meth:`compact_with_openclaw` (None: the default)."""
        self._make_actions()
        self.picker.provider_changed.connect(self._on_provider_changed)
        self.show_cut_button.clicked.connect(self._on_show_cut_clicked)
        self.sections_table.clicked.connect(self._on_section_clicked)
        self.sections_table.activated.connect(self._on_section_clicked)
        self.clear()

    def _make_actions(self) -> None:
        def action(text: str, keys: list[str | QKeySequence], slot: Callable[[], None]) -> QAction:
            return add_action(self, text, keys, slot)

        self.run_action = action("&Run Compaction", ["Ctrl+Return", "Ctrl+Enter"], self.run)
        self.cancel_action = action("&Cancel Compaction", ["Esc"], self.cancel)
        self.write_action = action(
            "&Write Compaction…", [QKeySequence(QKeySequence.StandardKey.Save)], self.write
        )
        self.discard_action = action("&Discard Summary", ["Ctrl+D"], self.discard)
        self.openclaw_action = action(
            "Compact with &OpenClaw…", ["Ctrl+Shift+G"], self.compact_with_openclaw
        )
        self.fallback_action = action(
            "Write the &Fallback Summary Anyway…", [], self.write_fallback
        )
        for button, act in self._button_actions():
            button.clicked.connect(act.trigger)
        self.other_button.clicked.connect(self._on_other_clicked)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)

    # -- public API ---------------------------------------------------------------------------

    def set_confirm(self, confirm: Confirm | None) -> None:
        """The callback asked before any write (None: writes are refused)."""
        self._confirm = confirm

    def set_activity(self, activity: ActivityLog | None) -> None:
        """The log that gets each write's ``compaction started`` / ``finished`` events."""
        self._activity = activity

    def set_timeouts(self, timeouts: Timeouts) -> None:
        """Connect, read and total time limits of the model calls of each run (and probe)."""
        self._timeouts = self.audit_view.probe_pane.timeouts = timeouts

    def timeouts(self) -> Timeouts:
        """The time limits the next run uses."""
        return self._timeouts

    def set_providers(self, choices: Sequence[ProviderChoice]) -> None:
        """Offer *choices* (an offline choice is always first); keeps the selection if offered."""
        self.picker.set_providers(choices)

    def provider(self) -> ProviderChoice:
        """The provider chosen."""
        return self.picker.provider()

    def set_provider(self, index: int) -> None:
        """Choose the provider at *index* (0 is offline)."""
        self.picker.set_provider(index)

    def set_target(self, target: CompactionTarget | None) -> None:
        """Plan a compaction of *target* (None: show nothing); any unwritten run is dropped."""
        if self._active is not None and self._active_kind in ("run", "prepare"):
            self._runner.cancel(self._run_key)  # what it still delivers is dropped
            self._active = None
        self._target = target
        self._plan = None
        self._show_result(None)
        self.progress.hide()
        self.set_message("")
        if target is None:
            self.clear()
            return
        s = target.session
        in_db = s.db is not None
        self.db_note.setVisible(in_db)
        self.openclaw_button.setVisible(in_db)
        self.force_check.setVisible(not in_db)
        self.write_button.setVisible(not in_db)
        self.show_session(target.session)
        st = target.settings
        self.settings_label.setText(
            f"window {st.window:,} ({st.window_source}) · reserve {st.reserve_tokens:,} · "
            f"keep recent {st.keep_recent_tokens:,} · history share {st.max_history_share:g}"
            + ("" if target.store_dir else " · no memory-context folder: nothing to archive")
        )
        self.plan_title.setText("Planning…")
        self._replan = False
        self._start("plan", jobs.plan_job(target), track=False)
        self._update_actions()

    def session_grew(self, session: Session) -> None:
        """Live mode appended to *session*: plan again, keeping what is shown meanwhile.

        Only the target's session counts. The plan is made in a job over a
        snapshot; while one is being made, one more follows it (never a queue:
        a burst of appends costs two plans). A summary made before the growth
        stays readable, but cannot be written: it names an older leaf.
        """
        target = self._target
        if target is None or session.path != target.session.path:
            return
        if session is not target.session:  # the file was read again (replaced)
            self._target = target = replace(target, session=session)
        self.show_session(target.session)
        if self._stale_result():  # a summary not written, for the old leaf
            self.set_message(
                "The session grew since this summary was made: Run again to compact its "
                "new leaf (this summary cannot be written).",
                error=True,
            )
        self._replan = self._runner.busy(self._plan_key)  # then one more plan follows it
        if not self._replan:
            self._start("plan", jobs.plan_job(target), track=False)
        self._update_actions()

    def _stale_result(self) -> bool:
        """True when the summary shown was made for another leaf than the session's now."""
        result, target = self._result, self._target
        if result is None or target is None or result.written:
            return False
        leaf = target.session.leaf
        return leaf is not None and leaf.id != result.plan.leaf_id

    def clear(self) -> None:
        """Show no session."""
        self._replan = False
        self._target, self._plan = None, None
        self._runner.cancel(self._plan_key)
        self._show_result(None)
        self.session_label.setText("<b>No session</b>")
        self.settings_label.setText("Select a session to plan a compaction.")
        self.show_plan(None)
        self.progress.hide()
        self.state_label.clear()
        self.set_message("")
        self._update_actions()

    def target(self) -> CompactionTarget | None:
        """The session being compacted."""
        return self._target

    def plan(self) -> CompactionPlan | None:
        """The plan shown, once computed."""
        return self._plan

    def result(self) -> CompactionRun | None:
        """The summary run shown (written or not), if any."""
        return self._result

    def is_busy(self) -> bool:
        """True while planning, summarising or writing."""
        return self._active is not None or self._runner.busy(self._plan_key)

    def summary_text(self) -> str:
        """The summary pane's text, as displayed."""
        return self.summary_view.toPlainText()

    @Slot()
    def run(self) -> None:
        """Summarise with the chosen provider, in a worker (Ctrl+Enter)."""
        if not self.run_action.isEnabled() or self._target is None or self._plan is None:
            return
        choice = self.provider()
        error = self.picker.error()
        if error is not None:
            self.set_message(error, error=True)
            return
        job = jobs.run_job(self._target, choice, self._timeouts)
        self._show_result(None)
        self.set_message("")
        self.progress.setRange(0, max(1, self._plan.calls))
        self.progress.setValue(0)
        self.progress.setFormat("starting…")
        self.progress.show()
        self.state_label.setText(f"Summarising with {choice.label}…")
        self._start("run", job)

    @Slot()
    def cancel(self) -> None:
        """Stop the running summary at once (Esc); nothing is written."""
        job = self._active
        if job is None or self._active_kind not in ("run", "prepare"):
            return
        job.cancel()
        self.state_label.setText("Cancelling…")
        self.cancel_action.setEnabled(False)

    @Slot()
    def write(self) -> None:
        """Check, show what will be written (confirm), then write in a worker (Ctrl+S).

        A run whose summariser failed is refused here (see :meth:`write_fallback`).
        """
        self._begin_write(allow_fallback=False)

    @Slot()
    def write_fallback(self) -> None:
        """Write a failed run's fallback summary anyway, after the same confirm as a write.

        The entry's first line says it is a fallback, not a real summary.
        """
        result = self._result
        if result is None or result.failure is None:
            return
        self._begin_write(allow_fallback=True)

    def _begin_write(self, *, allow_fallback: bool) -> None:
        result, target = self._result, self._target
        if result is None or target is None or self._active is not None or result.written:
            return
        if self._confirm is None:
            self.set_message("Cannot write: no confirmation dialog is available.", error=True)
            return
        if result.failure is not None and not allow_fallback:
            # decided at once: a failure is never written unless the fallback is asked for
            self._refused(SummaryFailed(result, result.failure))
            return
        force = self.force_check.isChecked()
        self._allow_fallback = allow_fallback

        prepare = jobs.prepare_job(result, target, force=force, allow_fallback=allow_fallback)
        self.state_label.setText("Preparing the write…")
        self._start("prepare", prepare)

    def _ask_openclaw(self, session: Session) -> bool:
        """Ask before OpenClaw compacts *session* (tests replace this)."""
        return ask_openclaw(self, session)

    @Slot()
    def compact_with_openclaw(self) -> None:
        """Have OpenClaw's gateway compact a database session, after asking (Ctrl+Shift+G)."""
        target = self._target
        if target is None or target.session.db is None or self._active is not None:
            return
        if not self._ask_openclaw(target.session):
            self.state_label.setText("Not asked: nothing was written.")
            return
        job = jobs.openclaw_job(target.session, self.openclaw_command)
        self.state_label.setText("OpenClaw is compacting (its gateway)…")
        self.progress.setRange(0, 0)
        self.progress.setFormat("openclaw sessions compact")
        self.progress.show()
        self._start("openclaw", job)

    def _on_openclaw_done(self, value: object) -> None:
        if isinstance(value, GatewayError):
            self.state_label.setText("OpenClaw did not compact: nothing was written.")
            self.set_message(str(value), error=True)
            self.failed.emit(str(value))
            return
        assert isinstance(value, GatewayCompaction)
        self.state_label.setText(value.describe())
        self.set_message("")
        self.openclaw_compacted.emit(value.key)

    @Slot()
    def discard(self) -> None:
        """Throw the summary away; nothing is written (Ctrl+D)."""
        if self._result is None or self._active is not None or self._result.written:
            return
        self._show_result(None)
        self.state_label.setText("Discarded: nothing was written.")
        self.set_message("")
        self._update_actions()
        self.discarded.emit()

    def cancel_all(self) -> None:
        """Stop planning and summarising (a write in progress finishes); call before quitting."""
        self._runner.cancel(self._plan_key)
        if self._active is not None and self._active_kind in ("run", "prepare"):
            self._active.cancel()

    @override
    def closeEvent(self, event: QCloseEvent) -> None:
        self.cancel_all()
        super().closeEvent(event)

    def _button_actions(self) -> tuple[tuple[QPushButton, QAction], ...]:
        """Each button and the action it triggers (and takes its enabled state from)."""
        return (
            (self.run_button, self.run_action),
            (self.cancel_button, self.cancel_action),
            (self.write_button, self.write_action),
            (self.discard_button, self.discard_action),
            (self.retry_button, self.run_action),
            (self.fallback_button, self.fallback_action),
            (self.openclaw_button, self.openclaw_action),
        )

    # -- jobs ---------------------------------------------------------------------------------

    def _start(self, kind: str, fn: jobs.Job, *, track: bool = True) -> None:
        key = {"plan": self._plan_key, "run": self._run_key, "prepare": self._run_key}.get(kind)
        submitted: list[Job] = []

        def ended() -> str:
            if submitted and submitted[0] is self._active:
                self._active = None
                self.progress.hide()
            return kind

        job = self._runner.submit(
            f"compaction {kind}",
            fn,
            key=key,
            done=lambda value: self._on_task_done(ended(), value),
            failed=lambda text: self._on_task_failed(ended(), text),
            cancelled=lambda: self._on_task_cancelled(ended()),
            progress=self.show_progress if kind == "run" else None,
        )
        submitted.append(job)
        if track:
            self._active, self._active_kind = job, kind
        self._update_actions()

    # -- handlers -----------------------------------------------------------------------------

    def _plan_again(self) -> None:
        """Start the plan the session's growth asked for while another was made."""
        if self._replan and self._target is not None:
            self._replan = False
            self._start("plan", jobs.plan_job(self._target), track=False)

    def _on_task_done(self, kind: str, value: Any) -> None:
        if kind == "plan":
            self._on_plan_ready(value)
            self._plan_again()
        elif kind == "run":
            self._on_run_ready(value)
        elif kind == "prepare":
            self._on_writes_prepared(value)
        elif kind == "write":
            self._on_write_done(value)
        elif kind == "openclaw":
            self._on_openclaw_done(value)
        self._update_actions()

    def _on_task_failed(self, kind: str, text: str) -> None:
        what = {"plan": "Planning", "run": "The compaction", "prepare": "Preparing the write"}
        message = f"{what.get(kind, 'The write')} failed: {text}"
        if kind == "plan":
            self.plan_title.setText("Planning failed")
            self._plan_again()
        self.state_label.clear()
        self.set_message(message, error=True)
        self._update_actions()
        self.failed.emit(message)

    def _on_task_cancelled(self, _kind: str) -> None:
        self.state_label.setText("Cancelled: nothing was written.")
        self._update_actions()

    def _on_plan_ready(self, plan: CompactionPlan) -> None:
        self._plan = plan
        self.show_plan(plan)
        self.cut_point_changed.emit(plan.first_kept_entry_id if plan.ok else "")

    def _on_run_ready(self, result: CompactionRun) -> None:
        self._show_result(result)
        if result.summary is None:
            self.state_label.setText("Nothing to summarise.")
            self.set_message(result.plan.reason, error=True)
            return
        s = result.summary
        failure = result.failure
        if failure is not None:
            headline = failure_headline(failure).capitalize()  # the summary's or the facts'
            message = f"{headline}, nothing was written: {failure.describe()}"
            self.state_label.setText(f"{headline}: nothing was written.")
            self.set_message(message, error=True)
            self.retry_button.setFocus()
            self.summary_failed.emit(result)
            self.failed.emit(message)
            return
        self.state_label.setText(
            f"Summary ready ({s.calls} call(s)): compare it, then write or discard."
        )
        self.summary_ready.emit(result)

    def _on_writes_prepared(self, writes: list[Any] | CompactionRefused) -> None:
        if isinstance(writes, CompactionRefused):
            self._refused(writes)
            return
        result, target, confirm = self._result, self._target, self._confirm
        if result is None or target is None or confirm is None:
            return
        if not confirm(writes):
            self.state_label.setText("Not written: the write was not confirmed.")
            return
        job = jobs.write_job(
            result,
            target,
            self._activity,
            force=self.force_check.isChecked(),
            allow_fallback=self._allow_fallback,
            backup_to=planned_backup(writes, target.session.path),  # the name previewed
        )
        self.state_label.setText("Writing…")
        self._start("write", job)

    def _on_write_done(self, value: object) -> None:
        if isinstance(value, CompactionRefused):
            self._refused(value)
            return
        if not isinstance(value, CompactionRun):
            return
        run = value
        if run.summary_failed:
            self.state_label.setText("Written (fallback summary).")
        elif run.failure is not None:
            self.state_label.setText("Written (without facts: their extraction failed).")
        else:
            self.state_label.setText("Written.")
        self.set_message(
            jobs.written_message(run),
            ok=run.store_update is None or run.store_update.updated,
            error=run.store_update is not None and not run.store_update.updated,
        )
        self._update_actions()
        self.written.emit(run)
        if run.facts:
            self.facts_proposed.emit(list(run.facts), dict(run.fact_sources))

    def _refused(self, exc: CompactionRefused) -> None:
        text = f"Not written: {exc}"
        if isinstance(exc, RecentlyModified):
            text += "  Tick “Write even if the agent just wrote” to override."
            self.force_check.setFocus()
        self.state_label.clear()
        self.set_message(text, error=True)
        self._update_actions()

    @Slot(object)
    def _on_provider_changed(self, _choice: object) -> None:
        self._update_actions()

    @Slot()
    def _on_other_clicked(self) -> None:
        """Pick another summariser: the picker gets the focus (arrow keys or F4 choose)."""
        self.provider_combo.setFocus(Qt.FocusReason.OtherFocusReason)
        self.state_label.setText("Choose another summariser, then Run.")

    @Slot()
    def _on_show_cut_clicked(self) -> None:
        if self._plan is not None and self._plan.ok:
            self.cut_point_changed.emit(self._plan.first_kept_entry_id)

    @Slot(QModelIndex)
    def _on_section_clicked(self, index: QModelIndex) -> None:
        self.summary_view.scrollToAnchor(anchor(index.row()))

    def _show_result(self, result: CompactionRun | None) -> None:
        self._result = result
        self.show_run(result, self._plan.previous_summary if self._plan is not None else None)
        self.show_failure(result)
        self._update_actions()

    def _update_actions(self) -> None:
        active, target = self._active, self._target
        on = enabled(
            PanelFacts(
                plan=self._plan,
                result=self._result,
                busy=active is not None,
                planning=self._runner.busy(self._plan_key),
                cancellable=active is not None
                and self._active_kind in ("run", "prepare")
                and not active.stop.is_set(),
                provider_ok=self.picker.error() is None,
                in_db=target is not None and target.session.db is not None,
                grown=self._stale_result(),
            )
        )
        self.run_action.setEnabled(on.run)
        self.cancel_action.setEnabled(on.cancel)
        self.write_action.setEnabled(on.write)
        self.fallback_action.setEnabled(on.fallback)
        self.openclaw_action.setEnabled(on.openclaw)
        self.discard_action.setEnabled(on.discard)
        self.picker.setEnabled(on.picker)
        self.force_check.setEnabled(on.force)
        self.show_cut_button.setEnabled(on.show_cut)
        for button, act in self._button_actions():
            button.setEnabled(act.isEnabled())
        self.other_button.setEnabled(active is None and len(self.picker.providers()) > 1)
