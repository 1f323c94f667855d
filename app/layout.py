"""The main window's layout: the views, the inspector tabs, the docks and the status bar.

:class:`WindowLayout` builds them and knows how to bring one forward; it satisfies
:class:`app.views.Views`, which is all the app helpers see of the window.
:class:`app.main_window.MainWindow` adds the open/load flow and the helpers.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDockWidget,
    QFrame,
    QMainWindow,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTableView,
    QTabWidget,
    QWidget,
)

from app.status import StatusBar
from widgets.activity.backups_view import BackupsView
from widgets.activity.view import ActivityView
from widgets.budget.gauge import BudgetGauge
from widgets.common.record_model import Column, RecordTableModel
from widgets.common.state import AppState
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
    from app.settings import AppSettings
    from core.io.problems import Problem

PROBLEM_COLUMNS: list[Column[Problem]] = [
    Column("Severity", lambda p: p.severity),
    Column("File", lambda p: Path(p.file).name, lambda p: p.file),
    Column("Line", lambda p: p.line, align_right=True, thousands=False),
    Column("Message", lambda p: p.message),
]
TABS = ("Message", "Context", "Recall", "Trim", "Facts", "Review", "Compaction", "OpenClaw")
WRITES_TAB, BACKUPS_TAB = 0, 1


class WindowLayout(QMainWindow):
    """The views of the main window laid out: tabs in a splitter, docks around it."""

    def __init__(self, settings: AppSettings) -> None:
        super().__init__()
        self.settings = settings
        self.state = AppState(self)
        self._docks_hidden = False
        self._docks_to_show: list[QDockWidget] = []
        self._build_views()
        self.status = StatusBar(self.statusBar(), self.state)

    def _build_views(self) -> None:
        self.navigator = Navigator()
        self.problems: RecordTableModel[Problem] = RecordTableModel(PROBLEM_COLUMNS, self)
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
        self.backups_view = BackupsView()
        self.activity_tabs = QTabWidget()
        self.activity_tabs.setDocumentMode(True)
        self.activity_tabs.addTab(self.activity_view, "Writes")
        self.activity_tabs.addTab(self.backups_view, "Backups")
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tab_views: tuple[QWidget, ...] = (
            self.message_view,
            self.context_view,
            self.recall_view,
            self.trim_view,
            self.facts_view,
            self.review_queue,
            self.compaction_panel,
            self.openclaw_view,
        )
        for view, name in zip(self.tab_views, TABS, strict=True):
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
        self.activity_dock = self._dock("Activity", "activity-dock", self.activity_tabs)
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

    def _save_layout(self) -> None:
        self.settings.set_blob("geometry", self.saveGeometry())
        if not self.showing_first_run:  # its hidden docks are not the user's layout
            self.settings.set_blob("state", self.saveState())
        self.settings.set_blob("splitter", self.splitter.saveState())
        self.settings.set_values([("layout/tab", self.tabs.currentIndex())])

    # -- the first-run page ---------------------------------------------------------------
    @property
    def showing_first_run(self) -> bool:
        """Whether the welcome page is shown (no place has been opened yet)."""
        return self.central.currentWidget() is self.first_run

    def _hide_docks(self) -> None:
        """Hide the docks, remembering which to show again when a place opens.

        Hidden already (a second failed open from the first-run page): what to show
        again stays what the user had, not the hidden docks.
        """
        if self._docks_hidden:
            return
        docks = (self.nav_dock, self.problem_dock, self.activity_dock)
        self._docks_to_show = [d for d in docks if not d.isHidden()]
        self._docks_hidden = True
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
        self._docks_hidden = False
        self.problem_dock.raise_()
        self.central.setCurrentWidget(self.splitter)

    # -- bringing a view forward ----------------------------------------------------------
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
            self.activity_front().setFocus()
        else:
            self.tabs.setCurrentIndex(self.tab_index(name))
            self.current_view().setFocus()

    def activity_front(self) -> QWidget:
        """The Activity dock's view in front: the write log or the backups list."""
        if self.activity_tabs.currentIndex() == BACKUPS_TAB:
            return self.backups_view.table
        return self.activity_view

    def current_view(self) -> QWidget:
        """The view of the current tab."""
        return self.tab_views[self.tabs.currentIndex()]

    def tab_index(self, name: str) -> int:
        """Index of the tab called *name* (lower case, as in :data:`TABS`)."""
        return [t.lower() for t in TABS].index(name)
