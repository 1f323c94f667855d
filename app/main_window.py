"""The main window: navigator, timeline, gauges and the inspector tabs.

The window only lays views out and owns the load state; what the views show is
decided by :class:`app.inspector.Inspector`, and the menus live in
:mod:`app.actions`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QThreadPool, QTimer, Slot
from PySide6.QtWidgets import (
    QDockWidget,
    QFrame,
    QLabel,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTableView,
    QTabWidget,
    QWidget,
)
from typing_extensions import override

from app.actions import build_actions
from app.app_config import embedder_name
from app.backups_glue import BackupsGlue
from app.demo_data import demo_path, load_demo
from app.inspector import Inspector
from app.live_glue import LiveGlue
from app.manager import Manager
from app.paths import cache_dir
from app.pending_glue import PendingGlue
from app.resources import app_icon
from app.settings import AppSettings
from app.settings_dialog import prepare_settings_and_warn
from app.workers import LoadWorker, TaskWorker, release_frozen, share_gil_with_gui, start
from core.dataset.home_scan import scan_homes
from core.recall.opening import open_recall
from widgets.activity.view import ActivityView
from widgets.budget.gauge import BudgetGauge
from widgets.common.record_model import Column, RecordTableModel
from widgets.compaction.panel import CompactionPanel
from widgets.facts.review_queue import ReviewQueue
from widgets.facts.view import FactsView
from widgets.openclaw.memory_index_view import MemoryIndexView
from widgets.openclaw.view import OpenClawView
from widgets.recall.preview import RecallPreview
from widgets.session.context_view import ContextView
from widgets.session.message_view import MessageView
from widgets.session.navigator import Navigator
from widgets.start.first_run import FirstRunView
from widgets.timeline.view import TimelineView
from widgets.trim.view import TrimView

if TYPE_CHECKING:
    from collections.abc import Callable

    from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent

    from core.dataset.load import DataSet
    from core.io.problems import Problem
    from core.recall.opening import RecallData
    from core.safety.writes import Confirm

PROBLEM_COLUMNS: list[Column[Problem]] = [
    Column("Severity", lambda p: p.severity),
    Column("File", lambda p: Path(p.file).name, lambda p: p.file),
    Column("Line", lambda p: p.line, align_right=True, thousands=False),
    Column("Message", lambda p: p.message),
]
RECALL_DELAY_MS = 250  # indexing waits for the first paint of a freshly loaded place
TABS = ("Message", "Context", "Recall", "Trim", "Facts", "Review", "Compaction", "OpenClaw")


class MainWindow(QMainWindow):
    """Top-level window of memlens."""

    def __init__(self, settings: AppSettings | None = None, confirm: Confirm | None = None) -> None:
        super().__init__()
        share_gil_with_gui()
        self.settings = settings or AppSettings()
        # secrets out of the settings file (with a warning), its limits applied
        self.secrets_warning = prepare_settings_and_warn(self.settings, self)
        self.setWindowTitle("memlens")
        self.setObjectName("memlens-main")
        self.setWindowIcon(app_icon())
        self.resize(1400, 900)
        self.setAcceptDrops(True)
        self.data: DataSet | None = None
        self.recall_data: RecallData | None = None
        self.place = ""
        self._opened_place = ""
        self._arriving: DataSet | None = None  # loaded, on its way to the views
        self._worker: LoadWorker | None = None
        self._recall_worker: TaskWorker | None = None
        self.pending = PendingGlue(self)
        self._scan_worker: TaskWorker | None = None
        self.homes_scanned = False
        """Whether the first-run page has the agent homes of this computer."""
        self._recall_timer = QTimer(self, singleShot=True, interval=RECALL_DELAY_MS)
        self._recall_timer.timeout.connect(self._start_recall)
        self._build_views()
        self._build_status()
        self.live = LiveGlue(self)
        self.manager = Manager(self, confirm)
        self.backups = BackupsGlue(self)  # the Activity dock's Backups tab
        self.inspector = Inspector(self)
        self.inspector.restore_settings()
        self.actions = build_actions(self)
        self.actions.by_name["cancel"].setEnabled(False)
        self.compaction_panel.cancel_action.setShortcuts([])  # the window's Esc decides
        self.compaction_panel.cancel_action.changed.connect(self._update_cancel)
        self._connect_first_run()
        self._restore_layout()
        self._hide_docks()  # the welcome page stands alone

    # -- layout ------------------------------------------------------------------------
    def _build_views(self) -> None:
        self.navigator = Navigator()
        self.problems = RecordTableModel(PROBLEM_COLUMNS, self)
        self.problem_view = QTableView()
        self.problem_view.setModel(self.problems)
        self.problem_view.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.problem_view.horizontalHeader().setStretchLastSection(True)
        self.problem_view.verticalHeader().hide()
        self.problem_view.setAccessibleName("Problems")
        self.timeline = TimelineView()
        self.gauge = BudgetGauge()
        self.message_view = MessageView()
        self.context_view = ContextView()
        self.recall_view = RecallPreview()
        self.trim_view = TrimView()
        self.facts_view = FactsView()
        self.review_queue = ReviewQueue()
        self.compaction_panel = CompactionPanel()
        self.openclaw_view = OpenClawView()
        self.openclaw_view.set_memory_view(MemoryIndexView())
        self.activity_view = ActivityView()
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        views = (
            self.message_view,
            self.context_view,
            self.recall_view,
            self.trim_view,
            self.facts_view,
            self.review_queue,
            self.compaction_panel,
            self.openclaw_view,
        )
        self.tab_views: tuple[QWidget, ...] = views
        for view, name in zip(views, TABS, strict=True):
            # A small window scrolls a view instead of being held taller than the screen.
            scroll = QScrollArea()
            scroll.setWidget(view)
            scroll.setWidgetResizable(True)
            scroll.setFrameShape(QFrame.Shape.NoFrame)
            scroll.setFocusProxy(view)
            self.tabs.addTab(scroll, name)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setObjectName("central-splitter")
        self.splitter.addWidget(self.timeline)
        self.splitter.addWidget(self.gauge)
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 0)
        self.splitter.setStretchFactor(2, 4)
        self.gauge.setMinimumHeight(175)
        self.splitter.setSizes([340, 175, 420])
        self.first_run = FirstRunView()
        self.central = QStackedWidget()
        self.central.addWidget(self.first_run)
        self.central.addWidget(self.splitter)
        self.setCentralWidget(self.central)
        self.nav_dock = self._dock("Sessions", "sessions-dock", self.navigator)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.nav_dock)
        self.problem_dock = self._dock("Problems", "problems-dock", self.problem_view)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.problem_dock)
        self.activity_dock = self._dock("Activity", "activity-dock", self.activity_view)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.activity_dock)
        self.tabifyDockWidget(self.problem_dock, self.activity_dock)
        self.problem_dock.raise_()
        self.resizeDocks([self.nav_dock], [460], Qt.Orientation.Horizontal)
        self.resizeDocks([self.problem_dock], [120], Qt.Orientation.Vertical)

    def _dock(self, title: str, name: str, widget: QWidget) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        return dock

    def _build_status(self) -> None:
        self.place_label = QLabel("No data directory open")
        self.place_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.counts_label = QLabel("")
        self.state = QLabel("Idle")
        self.progress = QProgressBar(maximumWidth=220, visible=False)
        self.cancel_button = QPushButton("Cancel", visible=False)
        self.cancel_button.setToolTip("Stop loading (Esc)")
        self.cancel_button.clicked.connect(self.cancel_load)
        bar = self.statusBar()
        bar.addWidget(self.place_label, 1)
        bar.addWidget(self.counts_label)
        bar.addPermanentWidget(self.state)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.cancel_button)

    def _restore_layout(self) -> None:
        geometry = self.settings.blob("geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        state = self.settings.blob("state")
        if state is not None:
            self.restoreState(state)
        split = self.settings.blob("splitter")
        if split is not None:
            self.splitter.restoreState(split)
        tab = self.settings.value("layout/tab", 0)
        self.tabs.setCurrentIndex(int(tab) if str(tab).isdigit() else 0)

    def save_layout(self) -> None:
        """Persist geometry, docks, splitter and the current tab."""
        self.settings.set_blob("geometry", self.saveGeometry())
        if not self.showing_first_run:  # its hidden docks are not the user's layout
            self.settings.set_blob("state", self.saveState())
        self.settings.set_blob("splitter", self.splitter.saveState())
        self.settings.set_values([("layout/tab", self.tabs.currentIndex())])
        self.inspector.save_settings()
        self.settings.sync()

    def _connect_first_run(self) -> None:
        view = self.first_run
        view.open_requested.connect(self.actions.open_recent)
        view.demo_requested.connect(self.actions.by_name["open_demo"].trigger)
        view.open_folder_requested.connect(self.actions.by_name["open_folder"].trigger)
        view.open_file_requested.connect(self.actions.by_name["open_file"].trigger)
        view.set_recent(self.settings.recent)
        view.set_scanning(True)
        # Only a page that stays needs the homes: a place opened at start skips the scan.
        QTimer.singleShot(0, self, self._scan_if_shown)

    def _scan_if_shown(self) -> None:
        if self.showing_first_run and self._worker is None:
            self.scan_homes()

    def _hide_docks(self) -> None:
        """Hide the docks, remembering which to show again when a place opens."""
        docks = (self.nav_dock, self.problem_dock, self.activity_dock)
        self._docks_to_show = [d for d in docks if not d.isHidden()]
        for dock in self._docks_to_show:
            dock.hide()

    def _leave_first_run(self) -> None:
        if not self.showing_first_run:
            return
        self.first_run.set_message("")
        # Docks first: each one shown resizes the central widget, and the welcome page
        # takes that more cheaply than the inspector's plots.
        for dock in self._docks_to_show:
            dock.show()
        self.problem_dock.raise_()
        self.central.setCurrentWidget(self.splitter)

    def _back_to_first_run(self, message: str, *, error: bool = False) -> None:
        """Nothing is open after all: the welcome page again, saying why."""
        self._hide_docks()
        self.central.setCurrentWidget(self.first_run)
        self.first_run.set_message(message, error=error)
        self.place_label.setText(message)
        if not self.homes_scanned:
            self.scan_homes()

    @property
    def showing_first_run(self) -> bool:
        """Whether the welcome page is shown (no place has been opened yet)."""
        return self.central.currentWidget() is self.first_run

    def scan_homes(self) -> None:
        """Look for agent homes (``~/.openclaw``, ``~/.pi/agent/sessions``) in a worker."""
        if self._scan_worker is not None:
            return

        def task(*, progress: object, cancelled: object) -> object:
            return scan_homes(cancelled=cancelled)  # type: ignore[arg-type]

        worker = TaskWorker(task, "looking for agent homes")
        worker.signals.finished.connect(self._on_homes_scanned)
        worker.signals.failed.connect(self._on_homes_failed)
        worker.signals.cancelled.connect(self._on_homes_failed)
        self._scan_worker = worker
        self.first_run.set_scanning(True)
        start(worker)

    @Slot(object)
    def _on_homes_scanned(self, homes: list[object]) -> None:
        self._scan_worker = None
        self.homes_scanned = True
        self.first_run.set_homes(homes)  # type: ignore[arg-type]

    @Slot()
    @Slot(str)
    def _on_homes_failed(self, *_: object) -> None:
        self._scan_worker = None
        self.homes_scanned = True
        self.first_run.set_homes([])

    def show_view(self, name: str) -> None:
        """Bring a view forward and give it the keyboard focus."""
        if name == "sessions":
            self.nav_dock.show()
            self.nav_dock.raise_()
            self.navigator.tree.setFocus()
        elif name == "problems":
            self.problem_dock.show()
            self.problem_dock.raise_()
            self.problem_view.setFocus()
        elif name == "timeline":
            self.timeline.setFocus()
        elif name == "budget":
            self.gauge.setFocus()
        elif name == "activity":
            self.activity_dock.show()
            self.activity_dock.raise_()
            self.backups.current_view().setFocus()
        else:
            self.tabs.setCurrentIndex(self.tab_index(name))
            self.current_view().setFocus()

    def current_view(self) -> QWidget:
        """The view of the current tab."""
        return self.tab_views[self.tabs.currentIndex()]

    def tab_index(self, name: str) -> int:
        """Index of the tab called *name* (lower case, as in :data:`TABS`)."""
        return [t.lower() for t in TABS].index(name)

    # -- opening -----------------------------------------------------------------------
    def open_demo(self) -> None:
        """Open the built-in demo data, generating it first (in the worker) if needed."""
        self.open_path(str(demo_path()), loader=load_demo)

    def open_path(self, path: str, loader: Callable[..., DataSet] | None = None) -> None:
        """Load *path* (with *loader*, default ``load_dataset``) in a worker."""
        self.cancel_load()
        release_frozen()
        self._recall_timer.stop()
        self._arriving = None
        self.live.detach()
        worker = LoadWorker(path) if loader is None else LoadWorker(path, loader=loader)
        worker.signals.progressed.connect(self._on_progressed)
        worker.signals.finished.connect(self._on_loaded)
        worker.signals.failed.connect(self._on_failed)
        worker.signals.cancelled.connect(self._on_cancelled)
        self._worker = worker
        self._opened_place = self.place if self.data is not None else ""
        self.place = path
        self._busy(True)
        self.state.setText("Loading…")
        self.place_label.setText(path)
        if self.showing_first_run:
            self.first_run.set_message(f"Opening {path}…")
        start(worker)

    @Slot()
    def cancel_load(self) -> None:
        """Stop the load (or the recall indexing) in progress, if any."""
        for worker in (self._worker, self._recall_worker, self.pending.worker):
            if worker is not None:
                worker.cancel()

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

    def _busy(self, busy: bool) -> None:
        """Show or hide progress and Cancel (Esc only cancels while something runs)."""
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)
        self._update_cancel()

    @Slot()
    def _update_cancel(self) -> None:
        if hasattr(self, "actions"):
            compacting = self.compaction_panel.cancel_action.isEnabled()
            self.actions.by_name["cancel"].setEnabled(self._loading() or compacting)

    def _loading(self) -> bool:
        """A load or the recall indexing is running."""
        return (
            self._worker is not None
            or self._recall_worker is not None
            or self.pending.worker is not None
        )

    def _done(self) -> None:
        self._worker = None
        self._busy(False)

    def _current(self, worker: TaskWorker | None) -> bool:
        """Whether the signal being handled comes from *worker* (not an older one)."""
        return worker is not None and self.sender() is worker.signals

    @Slot(int, int, str)
    def _on_progressed(self, done: int, total: int, label: str) -> None:
        if not (
            self._current(self._worker)
            or self._current(self._recall_worker)
            or self._current(self.pending.worker)
        ):
            return
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat(f"{label} %p%")

    @Slot(object)
    def _on_loaded(self, data: DataSet) -> None:
        if not self._current(self._worker):
            return  # a load replaced by a newer one
        self._done()
        self._arriving = data
        self.state.setText("Loaded")
        self.place_label.setText(str(data.discovery.path))
        self._leave_first_run()
        # The data reaches the views, the first session is selected and recall indexing
        # starts, each in its own turn of the event loop: one long handler would freeze
        # the window (bench_responsiveness).
        QTimer.singleShot(1, self, lambda: self._show_data(data))

    def _show_data(self, data: DataSet) -> None:
        """The loaded data reaches the views in three turns of the event loop."""
        if self._arriving is not data:
            return  # another place is being opened
        self.data = data
        self.recall_data = None
        self.settings.add_recent(self.place)
        self.actions.refresh_recent()
        self.problems.set_records(data.problems)
        self.problem_view.resizeColumnsToContents()
        self.navigator.set_sessions(data.summaries)
        self._update_counts()
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
            self._worker is None
            and self._arriving is None
            and not self._recall_timer.isActive()
            and self._recall_worker is None
            and self.pending.worker is None
        )

    def _select_first(self, data: DataSet) -> None:
        if self.data is data and self.inspector.session is None:
            self.navigator.select_first()

    @Slot()
    def _start_recall(self) -> None:
        """Index memory for recall once the first session is on screen."""
        if self.data is not None and self.recall_data is None:
            if self._recall_worker is not None:
                self._recall_worker.cancel()  # indexing the place open before
            self._open_recall(self.data)

    def _update_counts(self) -> None:
        data = self.data
        if data is None:
            self.counts_label.setText("")
            return
        facts = data.knowledge.counts()["active"] if data.knowledge else 0
        segs = len(data.segments.segments) if data.segments else 0
        self.counts_label.setText(
            f"{len(data.summaries)} sessions · {segs:,} segments · {facts:,} active facts · "
            f"{len(data.problems)} problems"
        )

    def _open_recall(self, data: DataSet) -> None:
        cache = cache_dir()

        embedder = embedder_name(self.settings)

        def task(*, progress: object, cancelled: object) -> RecallData:
            return open_recall(
                data,
                cache_dir=cache,
                embedder=embedder,
                progress=progress,  # type: ignore[arg-type]
                cancelled=cancelled,  # type: ignore[arg-type]
            )

        worker = TaskWorker(task, "indexing memory")
        worker.signals.progressed.connect(self._on_progressed)
        worker.signals.finished.connect(self._on_recall_opened)
        worker.signals.failed.connect(self._on_recall_failed)
        worker.signals.cancelled.connect(self._on_recall_cancelled)
        self._recall_worker = worker
        self._busy(True)
        self.state.setText("Indexing memory…")
        start(worker)

    def _recall_done(self) -> None:
        self._recall_worker = None
        self._busy(False)

    @Slot(object)
    def _on_recall_opened(self, recall: RecallData) -> None:
        if not self._current(self._recall_worker):
            return
        self._recall_done()
        self.recall_data = recall
        self.inspector.set_recall(recall)
        self.live.set_recall(recall)
        note = f" ({'; '.join(recall.notes)})" if recall.notes else ""
        self.state.setText(f"Ready{note}")

    @Slot(str)
    def _on_recall_failed(self, message: str) -> None:
        if not self._current(self._recall_worker):
            return
        self._recall_done()
        self.state.setText(f"Recall unavailable: {message}")

    @Slot()
    def _on_recall_cancelled(self) -> None:
        if not self._current(self._recall_worker):
            return
        self._recall_done()
        self.state.setText("Indexing cancelled: recall preview unavailable")

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        if not self._current(self._worker):
            return
        self._done()
        self.state.setText("Failed")
        self.place_label.setText(f"Could not open {self.place}: {message}")
        self._keep_what_was_open()
        if self.data is None:
            self._back_to_first_run(f"Could not open {self.place}: {message}", error=True)

    @Slot()
    def _on_cancelled(self) -> None:
        if not self._current(self._worker):
            return
        self._done()
        self.state.setText("Loading cancelled")
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
        urls = event.mimeData().urls()
        if urls and urls[0].isLocalFile():
            event.acceptProposedAction()

    @override
    def dropEvent(self, event: QDropEvent) -> None:
        urls = [u for u in event.mimeData().urls() if u.isLocalFile()]
        if urls:
            event.acceptProposedAction()
            self.open_path(urls[0].toLocalFile())

    @override
    def closeEvent(self, event: QCloseEvent) -> None:
        self.cancel_load()
        if self._scan_worker is not None:
            self._scan_worker.cancel()
        self.compaction_panel.cancel()
        self.save_layout()
        self.live.detach()
        self.manager.close()
        super().closeEvent(event)
        self.wait_for_workers()
        release_frozen(window_closing=True)

    def wait_for_workers(self, msecs: int = 5000) -> bool:
        """Let the views' background jobs finish (quitting mid-job must not crash them)."""
        views = (self.facts_view, self.context_view, self.trim_view, self.compaction_panel)
        for view in views:
            view.jobs.clear()  # not started yet: never started
        pools = [QThreadPool.globalInstance(), *(view.jobs for view in views)]
        self.openclaw_view.jobs.clear()
        pools.append(self.openclaw_view.jobs)
        memory = self.openclaw_view.memory_view
        if memory is not None:
            memory.jobs.clear()
            pools.append(memory.jobs)
        return all(pool.waitForDone(msecs) for pool in pools)
