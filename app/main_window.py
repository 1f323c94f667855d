"""The main window: the open/load flow and the helpers around the views.

:class:`app.layout.WindowLayout` lays the views out; this module opens places (load,
then the data reaching the views in three turns of the event loop, then recall
indexing and the background read of database sessions), all as jobs of the app's
:class:`widgets.common.jobs.JobRunner`. What the views show is decided by
:class:`app.inspector.Inspector`, and the menus live in :mod:`app.actions`. The
helpers are handed the :class:`widgets.common.state.AppState` (``window.state``), the
views and each other; none of them imports this module.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer, Slot
from typing_extensions import override

from app.actions import Actions
from app.app_config import embedder_name
from app.apply_glue import ApplyGlue
from app.backups_glue import BackupsGlue
from app.context import AppContext
from app.demo_data import demo_path, load_demo
from app.drop import drop_action
from app.export import install_export
from app.gil import release_frozen, share_gil_with_gui
from app.inspector import Inspector
from app.layout import WindowLayout
from app.live_glue import LiveGlue
from app.manager import Manager
from app.navigation import install_navigation
from app.paths import cache_dir
from app.pending_glue import PendingGlue
from app.resources import app_icon
from app.settings import AppSettings
from app.settings_dialog import prepare_settings_and_warn
from core.dataset.home_scan import scan_homes
from core.dataset.load import load_dataset
from core.dataset.open_recall import open_recall
from core.safety.activity import ActivityEvent
from core.safety.redact import redact
from widgets.common.jobs import default_runner

if TYPE_CHECKING:
    from collections.abc import Callable

    from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent

    from core.dataset.load import DataSet
    from core.dataset.open_recall import RecallData
    from core.io.writes import Confirm
    from widgets.common.jobs import Job

RECALL_DELAY_MS = 250  # indexing waits for the first paint of a freshly loaded place
ERROR_MESSAGE_MS = 15_000


def load_deferred(path: str, **kw: Any) -> DataSet:
    """:func:`load_dataset` listing database sessions first (read after, in the background)."""
    return load_dataset(path, defer_db=True, **kw)


class MainWindow(WindowLayout):
    """Top-level window of memlens."""

    def __init__(self, settings: AppSettings | None = None, confirm: Confirm | None = None) -> None:
        super().__init__(settings or AppSettings())
        share_gil_with_gui()
        # secrets out of the settings file (with a warning), its limits applied
        self.secrets_warning = prepare_settings_and_warn(self.settings, self)
        self.setWindowTitle("memlens")
        self.setObjectName("memlens-main")
        self.setWindowIcon(app_icon())
        self.setAcceptDrops(True)
        self.runner = default_runner()
        # The app's runner is shared: a window's keys are its own (a second window, a test).
        tag = f"@{id(self):x}"
        self.load_key, self.recall_key = f"window.load{tag}", f"window.recall{tag}"
        self.homes_key = f"window.homes{tag}"
        self.runner.started.connect(self._on_jobs_changed)
        self.runner.ended.connect(self._on_jobs_changed)
        self.runner.error.connect(self._on_job_error)
        self._following_jobs = True
        self._closed = False
        self.recall_data: RecallData | None = None
        self.place = ""
        self._opened_place = ""
        self._arriving: DataSet | None = None  # loaded, on its way to the views
        self.load_job: Job | None = None
        self.recall_job: Job | None = None
        self.homes_job: Job | None = None
        self.homes_scanned = False
        """Whether the first-run page has the agent homes of this computer."""
        self._recall_timer = QTimer(self, singleShot=True, interval=RECALL_DELAY_MS)
        self._recall_timer.timeout.connect(self._start_recall)
        self.status.cancel_requested.connect(self.cancel_load)
        self.context = AppContext(self.state, self, self.settings, self.status, self.runner)
        self.manager = Manager(self.context, self, confirm)
        self.pending = PendingGlue(self.context, self.manager, self)
        self.backups = BackupsGlue(self.context, self.manager, self)
        self.applier = ApplyGlue(self.context, self.manager, self)
        self.inspector = Inspector(self.context, self.manager, self)
        self.inspector.restore_settings()
        # -- live mode (app/live_glue.py) -------------------------------------------------
        self.live = LiveGlue(
            self.context,
            manager=self.manager,
            inspector=self.inspector,
            open_recall=self.open_recall,
            parent=self,
        )
        # -- end of live mode -------------------------------------------------------------
        self.menu_actions = Actions(
            self,  # the menu bar and the shortcuts' home
            self,  # the commands: open, reload, Esc
            self,  # the views
            state=self.state,
            settings=self.settings,
            inspector=self.inspector,
            manager=self.manager,
            status=self.status,
            live_action=self.live.indicator.toggle_action,
        )
        self.menu_actions.by_name["cancel"].setEnabled(False)
        self.exporter = install_export(self)
        self.navigation = install_navigation(self)
        self.compaction_panel.cancel_action.setShortcuts([])  # the window's Esc decides
        self.compaction_panel.cancel_action.changed.connect(self._update_cancel)
        self._connect_first_run()
        self._restore_layout()
        self._hide_docks()  # the welcome page stands alone

    @property
    def data(self) -> DataSet | None:
        """The open data set (``window.state.data``)."""
        return self.state.data

    def save_layout(self) -> None:
        """Persist geometry, docks, splitter, the current tab and the inspector's settings."""
        self._save_layout()
        self.inspector.save_settings()
        self.settings.sync()

    # -- the first-run page ---------------------------------------------------------------
    def _connect_first_run(self) -> None:
        view = self.first_run
        view.open_requested.connect(self.menu_actions.open_recent)
        view.demo_requested.connect(self.menu_actions.by_name["open_demo"].trigger)
        view.open_folder_requested.connect(self.menu_actions.by_name["open_folder"].trigger)
        view.open_file_requested.connect(self.menu_actions.by_name["open_file"].trigger)
        view.set_recent(self.settings.recent)
        view.set_scanning(True)
        # Only a page that stays needs the homes: a place opened at start skips the scan.
        QTimer.singleShot(0, self, self._scan_if_shown)

    def _scan_if_shown(self) -> None:
        if self.showing_first_run and self.load_job is None and not self._closed:
            self.scan_homes()

    def _back_to_first_run(self, message: str, *, error: bool = False) -> None:
        """Nothing is open after all: the welcome page again, saying why."""
        self._hide_docks()
        self.central.setCurrentWidget(self.first_run)
        self.first_run.set_message(message, error=error)
        self.status.say(message)
        if not self.homes_scanned:
            self.scan_homes()

    def scan_homes(self) -> None:
        """Look for agent homes (``~/.openclaw``, ``~/.pi/agent/sessions``) in a job."""
        if self.homes_job is not None:
            return
        self.first_run.set_scanning(True)
        self.homes_job = self.runner.submit(
            "looking for agent homes",
            lambda *, progress, cancelled: scan_homes(cancelled=cancelled),
            key=self.homes_key,
            done=self._on_homes_scanned,
            failed=lambda _message: self._on_homes_scanned([]),
            cancelled=lambda: self._on_homes_scanned([]),
        )

    def _on_homes_scanned(self, homes: list[Any]) -> None:
        self.homes_job = None
        self.homes_scanned = True
        self.first_run.set_homes(homes)

    # -- opening -----------------------------------------------------------------------
    def open_demo(self) -> None:
        """Open the built-in demo data, generating it first (in the job) if needed."""
        self.open_path(str(demo_path()), loader=load_demo)

    def open_path(self, path: str, loader: Callable[..., DataSet] | None = None) -> None:
        """Load *path* (with *loader*, default ``load_dataset``) in a job."""
        self.cancel_load()
        release_frozen()
        self._recall_timer.stop()
        self._arriving = None
        self.live.detach()
        load = loader or load_deferred
        self._opened_place = self.place if self.data is not None else ""
        self.place = path
        # The key drops whatever an older load still delivers: B opened while A loads
        # never shows A.
        self.load_job = self.runner.submit(
            "loading",
            lambda *, progress, cancelled: load(path, progress=progress, cancelled=cancelled),
            key=self.load_key,
            done=self._on_loaded,
            failed=self._on_failed,
            cancelled=self._on_cancelled,
            progress=self.status.show_progress,
        )
        self.status.set_task("Loading…")
        self.status.say(path)
        if self.showing_first_run:
            self.first_run.set_message(f"Opening {path}…")

    @Slot()
    def cancel_load(self) -> None:
        """Stop the load (or the recall indexing, or the read of sessions) in progress."""
        for job in (self.load_job, self.recall_job):
            if job is not None:
                job.cancel()
        self.pending.cancel()

    @Slot()
    def escape(self) -> None:
        """Esc: stop what is running, one thing at a time.

        A running compaction is stopped first when the keyboard is in its panel (or
        nothing else runs); otherwise the load or indexing in progress.
        """
        panel = self.compaction_panel
        compacting = panel.cancel_action.isEnabled()
        loading = self._loading()
        in_panel = panel.isAncestorOf(self.focusWidget()) if self.focusWidget() else False
        if compacting and (in_panel or not loading):
            panel.cancel()
        elif loading:
            self.cancel_load()

    @Slot(object)
    def _on_jobs_changed(self, _job: object = None) -> None:
        """Show progress and Cancel while a load, indexing or read runs."""
        self.status.set_busy(self._loading())
        self._update_cancel()

    @Slot()
    def _update_cancel(self) -> None:
        if hasattr(self, "menu_actions"):
            compacting = self.compaction_panel.cancel_action.isEnabled()
            self.menu_actions.by_name["cancel"].setEnabled(self._loading() or compacting)

    def _loading(self) -> bool:
        """A load, the recall indexing or the read of database sessions is running."""
        return (
            self.runner.busy(self.load_key)
            or self.runner.busy(self.recall_key)
            or self.pending.running
        )

    @Slot(str, str)
    def _on_job_error(self, name: str, message: str) -> None:
        """A job failed: a row in Activity and a message in the status bar (traceback: log)."""
        text = redact(message)
        self.activity_view.add(
            ActivityEvent(
                time.time(), name, "failed", summary=text, source="memlens app", kind="job"
            )
        )
        self.statusBar().showMessage(f"{name} failed: {text}", ERROR_MESSAGE_MS)

    def _on_loaded(self, data: DataSet) -> None:
        self.load_job = None
        self._arriving = data
        self.status.set_task("Loaded")
        self.status.say(str(data.discovery.path))
        self._leave_first_run()
        # The data reaches the views, the first session is selected and recall indexing
        # starts, each in its own turn of the event loop: one long handler would freeze
        # the window (bench_responsiveness).
        QTimer.singleShot(1, self, lambda: self._show_data(data))

    def _show_data(self, data: DataSet) -> None:
        """The loaded data reaches the views in three turns of the event loop."""
        if self._arriving is not data:
            return  # another place is being opened
        self.state.set_data(data)
        self.recall_data = None
        self.settings.add_recent(self.place)
        self.menu_actions.refresh_recent()
        self.problems.set_records(data.problems)
        self.problem_view.resizeColumnsToContents()
        self.navigator.set_sessions(data.summaries)
        self.sessions_listed()
        self.status.update_counts()
        self.setWindowTitle(f"memlens — {data.discovery.path}")
        if data.problems:
            self.problem_dock.show()
        QTimer.singleShot(0, self, lambda: self._show_data_manager(data))

    def _show_data_manager(self, data: DataSet) -> None:
        if self._arriving is data:
            self.manager.set_data(data)
            QTimer.singleShot(0, self, lambda: self._show_data_inspector(data))

    def _show_data_inspector(self, data: DataSet) -> None:
        if self._arriving is not data:
            return
        self._arriving = None
        self.inspector.set_data(data)
        self.live.attach(data)
        QTimer.singleShot(10, self, lambda: self._select_first(data))
        self.pending.start(data)
        self._recall_timer.start()

    def settled(self) -> bool:
        """Nothing is loading, arriving, waiting to be indexed or being indexed."""
        return (
            not self.runner.busy(self.load_key)
            and self._arriving is None
            and not self._recall_timer.isActive()
            and not self.runner.busy(self.recall_key)
            and not self.pending.running
        )

    def _select_first(self, data: DataSet) -> None:
        if self.data is data and self.inspector.session is None:
            self.navigator.select_first()

    @Slot()
    def _start_recall(self) -> None:
        """Index memory for recall once the first session is on screen."""
        if self.data is not None and self.recall_data is None and not self._closed:
            self.open_recall(self.data)

    def open_recall(self, data: DataSet) -> None:
        """Index *data*'s memory for recall in a job (an indexing still running is dropped)."""
        cache = cache_dir()
        embedder = embedder_name(self.settings)

        def task(*, progress: Any, cancelled: Any) -> RecallData:
            return open_recall(
                data, cache_dir=cache, embedder=embedder, progress=progress, cancelled=cancelled
            )

        self.recall_job = self.runner.submit(
            "indexing memory",
            task,
            key=self.recall_key,
            done=self._on_recall_opened,
            failed=lambda message: self._recall_ended(f"Recall unavailable: {message}"),
            cancelled=lambda: self._recall_ended("Indexing cancelled: recall preview unavailable"),
            progress=self.status.show_progress,
        )
        self.status.set_task("Indexing memory…")

    def _recall_ended(self, message: str) -> None:
        self.recall_job = None
        self.status.set_task(message)

    def _on_recall_opened(self, recall: RecallData) -> None:
        self.recall_data = recall
        self.manager.set_recall(recall)
        self.inspector.set_recall(recall)
        self.live.set_recall(recall)
        note = f" ({'; '.join(recall.notes)})" if recall.notes else ""
        self._recall_ended(f"Ready{note}")

    def _on_failed(self, message: str) -> None:
        self.load_job = None
        self.status.set_task("Failed")
        self.status.say(f"Could not open {self.place}: {message}")
        self._keep_what_was_open()
        if self.data is None:
            self._back_to_first_run(f"Could not open {self.place}: {message}", error=True)

    def _on_cancelled(self) -> None:
        self.load_job = None
        self.status.set_task("Loading cancelled")
        self._keep_what_was_open()
        if self.data is None:
            self._back_to_first_run(f"Opening {self.place} was cancelled.")

    def _keep_what_was_open(self) -> None:
        """After a failed or cancelled load, the place open before stays open (and followed)."""
        if self.data is not None:
            self.place = self._opened_place
            self.live.attach(self.data)

    # -- Qt events ------------------------------------------------------------------------
    @override
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        """Accept a folder, a transcript, an agent database or a memlens:// reference."""
        action = drop_action(event.mimeData())
        if action is not None and action.kind != "refuse":
            event.acceptProposedAction()
        else:
            event.ignore()
            if action is not None:
                self.status.say(action.value)  # why it cannot be dropped

    @override
    def dropEvent(self, event: QDropEvent) -> None:
        action = drop_action(event.mimeData())
        if action is None or action.kind == "refuse":
            event.ignore()
            if action is not None:
                self.status.say(action.value)
            return
        event.acceptProposedAction()
        if action.kind == "reference":
            self.navigation.open_reference(action.value)
        else:
            self.open_path(action.value)

    @override
    def closeEvent(self, event: QCloseEvent) -> None:
        # What the window's jobs still deliver is dropped: their views are going away.
        self._closed = True
        self._recall_timer.stop()
        self._arriving = None
        for key in (self.load_key, self.recall_key, self.homes_key):
            self.runner.cancel(key)
        self.pending.drop_jobs()
        self.inspector.drop_jobs()
        self.backups.drop_jobs()
        self.compaction_panel.cancel()
        self.save_layout()
        self.live.detach()
        self.manager.close()
        super().closeEvent(event)
        self.wait_for_workers()
        if self._following_jobs:  # a window is closed once, but closeEvent may come twice
            self._following_jobs = False
            self.runner.started.disconnect(self._on_jobs_changed)
            self.runner.ended.disconnect(self._on_jobs_changed)
            self.runner.error.disconnect(self._on_job_error)
        release_frozen(window_closing=True)

    def wait_for_workers(self, msecs: int = 5000) -> bool:
        """Stop the jobs and wait for them: quitting mid-job must not crash them.

        What they still deliver is dropped (the views are going away); False if some
        did not end within *msecs*.
        """
        return self.runner.shutdown(msecs)
