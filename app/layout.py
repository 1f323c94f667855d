"""The main window's layout: the views, the inspector tabs, the docks and the status bar.

:class:`WindowLayout` builds them and knows how to bring one forward; it satisfies
:class:`app.views.Views`, which is all the app helpers see of the window.
:class:`app.main_window.MainWindow` adds the open/load flow and the helpers.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QRect, QSize, Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDockWidget,
    QFrame,
    QMainWindow,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QStyle,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from app.status import StatusBar
from widgets.activity.backups_view import BackupsView
from widgets.activity.view import ActivityView
from widgets.budget.gauge import BudgetGauge
from widgets.common.record_model import Column, RecordTableModel
from widgets.common.state import AppState
from widgets.compaction.panel import CompactionPanel
from widgets.facts.review_queue import ReviewQueue
from widgets.facts.view import FactsView
from widgets.openclaudecode.memory_view import OccMemoryView
from widgets.openclaw.memory_index_view import MemoryIndexView
from widgets.openclaw.view import OpenClawView
from widgets.recall.preview import RecallPreview
from widgets.recall_lab.view import RecallLabView
from widgets.session.context_view import ContextView
from widgets.session.message_view import MessageView
from widgets.session.navigator import Navigator
from widgets.start.first_run import FirstRunView
from widgets.timeline.view import TimelineView
from widgets.trim.view import TrimView
from widgets.whatif.view import WhatIfView

if TYPE_CHECKING:
    from PySide6.QtGui import QShowEvent

    from app.settings import AppSettings
    from core.io.problems import Problem

PROBLEM_COLUMNS: list[Column[Problem]] = [
    Column("Severity", lambda p: p.severity),
    Column("File", lambda p: Path(p.file).name, lambda p: p.file),
    Column("Line", lambda p: p.line, align_right=True, thousands=False),
    Column("Message", lambda p: p.message),
]
SHORT_SCREEN = 900
"""Screens less tall than this (a 1366x768 laptop) get the Problems and Activity docks
on the left, under Sessions."""
PREFERRED_SIZE = QSize(1600, 1000)
FRAME_GUESS = 32  # title bar height before the window is shown and its frame known
NAV_MIN, NAV_SHARE = 260, 0.27
DOCK_TABLE_ROOM = 312  # a dock's title and tabs, a filter row and eight table rows
GAUGE_MARGIN, DOCK_TITLE = 14, 30  # a dock's scroll area and frame; its title bar
BOTTOM_DOCK = 150


def default_size(area: QRect) -> QSize:
    """The window's first size: roomy, but never more than the free area of its screen."""
    return QSize(
        min(PREFERRED_SIZE.width(), area.width()),
        min(PREFERRED_SIZE.height(), area.height() - FRAME_GUESS),
    )


TABS = (
    "Message", "Context", "Recall", "Recall lab", "Trim", "Facts", "Review", "Compaction",
    "What-if", "OpenClaw",
)  # fmt: skip
WRITES_TAB, BACKUPS_TAB = 0, 1


class WindowLayout(QMainWindow):
    """The views of the main window laid out: tabs in a splitter, docks around it."""

    def __init__(self, settings: AppSettings) -> None:
        super().__init__()
        self.settings = settings
        self.state = AppState(self)
        self._docks_hidden = False
        self._default_sizes = True
        self._shown_once = False
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
        self.lab_view = RecallLabView()
        self.trim_view = TrimView()
        self.facts_view = FactsView()
        self.review_queue = ReviewQueue()
        self.compaction_panel = CompactionPanel()
        self.whatif_view = WhatIfView()
        self.openclaw_view = OpenClawView()
        self.openclaw_view.set_memory_view(MemoryIndexView())
        self.occ_memory_view = OccMemoryView()  # an OpenClaudeCode home's memory_fts
        self.occ_memory_view.attach(self.state)
        self.openclaw_view.tabs.addTab(self.occ_memory_view, "OpenClau&deCode memory")
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
            self.lab_view,
            self.trim_view,
            self.facts_view,
            self.review_queue,
            self.compaction_panel,
            self.whatif_view,
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
        # The gauge sits between the timeline and the tabs, or, on a short screen, in
        # the Budget dock of the left column (place_gauge): the slot stays in the
        # splitter either way, so a saved splitter state always has three parts.
        self.gauge_slot = QWidget()
        self.gauge_slot.setObjectName("gauge-slot")
        self._slot_layout = QVBoxLayout(self.gauge_slot)
        self._slot_layout.setContentsMargins(0, 0, 0, 0)
        # In the dock the gauge is held, not scrolled: the dock is as tall as its legend.
        self.gauge_holder = QWidget()
        self._holder_layout = QVBoxLayout(self.gauge_holder)
        self._holder_layout.setContentsMargins(0, 0, 0, 0)
        self.gauge_docked = False
        self._slot_layout.addWidget(self.gauge)
        self.splitter.addWidget(self.timeline)
        self.splitter.addWidget(self.gauge_slot)
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 0)
        self.splitter.setStretchFactor(2, 4)
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
        self.budget_dock = self._dock("Budget", "budget-dock", self.gauge_holder)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.budget_dock)
        self.budget_dock.hide()

    def _dock(self, title: str, name: str, widget: QWidget) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        return dock

    def _restore_layout(self) -> None:
        """The saved layout, else the default one; either way the window fits its screen."""
        geometry = self.settings.blob("geometry")
        state = self.settings.blob("state")
        if geometry is None or not self.restoreGeometry(geometry):
            self.resize(default_size(self._available()))
        self.apply_default_layout()
        docked = self.settings.value("layout/gaugeDocked")
        if state is not None and docked is not None:
            self.restoreState(state)
            self.place_gauge(str(docked).lower() in ("true", "1"))
        split = self.settings.blob("splitter")
        self._default_sizes = split is None or not self.splitter.restoreState(split)
        self.fit_to_screen()
        tab = self.settings.value("layout/tab", 0)
        self.tabs.setCurrentIndex(int(tab) if str(tab).isdigit() else 0)

    def _save_layout(self) -> None:
        self.settings.set_blob("geometry", self.saveGeometry())
        if not self.showing_first_run:  # its hidden docks are not the user's layout
            self.settings.set_blob("state", self.saveState())
        self.settings.set_blob("splitter", self.splitter.saveState())
        self.settings.set_values(
            [("layout/tab", self.tabs.currentIndex()), ("layout/gaugeDocked", self.gauge_docked)]
        )

    # -- the default layout ---------------------------------------------------------------
    @override
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._shown_once:  # the frame is known now: all of it on the screen
            self._shown_once = True
            self.fit_to_screen()
            QTimer.singleShot(0, self, self.fit_to_screen)  # again once the frame is known

    def _available(self) -> QRect:
        """The free area of the screen the window is on (the primary one before it shows)."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        return screen.availableGeometry() if screen is not None else QRect(0, 0, 1400, 900)

    def fit_to_screen(self) -> None:
        """Shrink and move the window so all of it, frame included, is on its screen."""
        area = self._available()
        frame = self.frameGeometry()
        extra_w = max(0, frame.width() - self.width())
        extra_h = max(0, frame.height() - self.height()) or FRAME_GUESS
        width = min(self.width(), area.width() - extra_w)
        height = min(self.height(), area.height() - extra_h)
        if (width, height) != (self.width(), self.height()):
            self.resize(width, height)
        x = min(max(frame.x(), area.x()), area.right() + 1 - width - extra_w)
        y = min(max(frame.y(), area.y()), area.bottom() + 1 - height - extra_h)
        if (x, y) != (frame.x(), frame.y()):
            self.move(x, y)

    def apply_default_layout(self) -> None:
        """Docks where the screen has room for them, sized to their content.

        On a short screen (a 1366x768 laptop) the Budget gauge, Problems and Activity
        share the left column under Sessions, so the timeline gets half the height and
        the tabs the other half.
        """
        small = self._available().height() < SHORT_SCREEN
        area = (
            Qt.DockWidgetArea.LeftDockWidgetArea
            if small
            else Qt.DockWidgetArea.BottomDockWidgetArea
        )
        for dock in (self.problem_dock, self.activity_dock):
            hidden = dock.isHidden()
            self.removeDockWidget(dock)  # which hides it
            self.addDockWidget(area, dock)
            dock.setHidden(hidden)
        self.place_gauge(small)
        if small:
            self.splitDockWidget(self.nav_dock, self.budget_dock, Qt.Orientation.Vertical)
            self.splitDockWidget(self.budget_dock, self.problem_dock, Qt.Orientation.Vertical)
        self.tabifyDockWidget(self.problem_dock, self.activity_dock)
        self.problem_dock.raise_()
        self._default_dock_sizes()
        self._default_splitter()

    def _default_dock_sizes(self) -> None:
        """The docks' default sizes for the window's size now.

        Sessions as wide as its columns (within a share of the window); a docked gauge
        as tall as its wrapped legend, Sessions and Problems sharing the rest.
        """
        nav = min(max(self._navigator_width(), NAV_MIN), int(self.width() * NAV_SHARE))
        self.resizeDocks([self.nav_dock], [nav], Qt.Orientation.Horizontal)
        if not self.gauge_docked:
            self.resizeDocks([self.problem_dock], [BOTTOM_DOCK], Qt.Orientation.Vertical)
            return
        column = self.central.height()  # the left column spans the central area
        self.gauge.resize(nav - GAUGE_MARGIN, self.gauge.height())  # its legend wraps so
        gauge = self.gauge.minimumSizeHint().height() + DOCK_TITLE
        rest = max(column - gauge, 0)
        self.resizeDocks(
            [self.nav_dock, self.budget_dock, self.problem_dock],
            [rest * 3 // 5, gauge, rest * 2 // 5],
            Qt.Orientation.Vertical,
        )

    def sessions_listed(self) -> None:
        """The first sessions are in the navigator: a default layout's docks fit them.

        Once: later places keep the docks as the user sized them.
        """
        if self._default_sizes:
            self._default_sizes = False
            QTimer.singleShot(0, self, self._default_dock_sizes)

    def _navigator_width(self) -> int:
        """What the Sessions tree's columns need, with its frame and scroll bar."""
        tree = self.navigator.tree
        bar = tree.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
        return tree.header().length() + 2 * tree.frameWidth() + bar + 8

    def place_gauge(self, docked: bool) -> None:
        """The gauge in the Budget dock (*docked*) or between the timeline and the tabs."""
        self.gauge_docked = docked
        holder = self._holder_layout if docked else self._slot_layout
        if self.gauge.parentWidget() is not holder.parentWidget():
            holder.addWidget(self.gauge)
            self.gauge.show()
        self.gauge_slot.setVisible(not docked)
        hidden_page = self._docks_hidden  # the first-run page shows it again when it goes
        if docked and hidden_page and self.budget_dock not in self._docks_to_show:
            self._docks_to_show.append(self.budget_dock)
        self.budget_dock.setVisible(docked and not hidden_page)
        if not docked and self.budget_dock in self._docks_to_show:
            self._docks_to_show.remove(self.budget_dock)
        self.budget_dock.toggleViewAction().setEnabled(docked)

    def _default_splitter(self) -> None:
        """Timeline half the height (more if the tabs need less); the gauge what it needs."""
        total = sum(self.splitter.sizes()) or self.splitter.height()
        if self.gauge_docked:  # a short screen: half and half
            self.splitter.setSizes([total - total // 2, 0, total // 2])
            return
        gauge = self.gauge.minimumSizeHint().height()
        timeline = max(total // 2, (total - gauge) * 11 // 20)
        self.splitter.setSizes([timeline, gauge, max(0, total - timeline - gauge)])

    def reset_layout(self) -> None:
        """View > Reset Layout: forget the saved layout and lay the window out afresh."""
        self.settings.forget_layout()
        for dock in (self.nav_dock, self.activity_dock):
            dock.setFloating(False)
            if not self.showing_first_run:
                dock.show()
        self.problem_dock.setFloating(False)
        self.budget_dock.setFloating(False)
        self.resize(default_size(self._available()))
        self.fit_to_screen()
        self.apply_default_layout()
        self._default_sizes = True
        QTimer.singleShot(0, self, self._default_splitter)  # once the resize is laid out
        QTimer.singleShot(0, self, self._default_dock_sizes)

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
        docks = (self.nav_dock, self.budget_dock, self.problem_dock, self.activity_dock)
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
        if self._default_sizes:  # sized now the splitter and the docks are shown
            QTimer.singleShot(0, self, self._default_splitter)
            QTimer.singleShot(0, self, self._default_dock_sizes)

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
            if self.gauge_docked:
                self.budget_dock.show()
                self.budget_dock.raise_()
            self.gauge.setFocus()
        elif name == "activity":
            self.activity_dock.show()
            self.activity_dock.raise_()
            self._room_for(self.activity_dock)
            self.activity_front().setFocus()
        else:
            self.tabs.setCurrentIndex(self.tab_index(name))
            self.current_view().setFocus()

    def _room_for(self, dock: QDockWidget) -> None:
        """A dock brought forward in a shared column gets the height its table needs.

        The room comes from the docks above it (Sessions, Budget), never below what
        they need; a taller dock is left as the user made it.
        """
        if self.dockWidgetArea(dock) != Qt.DockWidgetArea.LeftDockWidgetArea:
            return
        need = DOCK_TABLE_ROOM
        if dock.height() >= need:
            return
        above = [d for d in (self.nav_dock, self.budget_dock) if d.isVisible()]
        heights = [d.height() for d in above]
        short = need - dock.height()
        nav_room = max(0, heights[0] - self.nav_dock.minimumSizeHint().height()) if above else 0
        if above and above[0] is self.nav_dock:
            heights[0] -= min(short, nav_room)
        self.resizeDocks([*above, dock], [*heights, need], Qt.Orientation.Vertical)

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
