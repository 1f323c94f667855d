"""The window's views as the app helpers see them (a Protocol: no import of the window).

:class:`app.layout.WindowLayout` builds them; :class:`app.inspector.Inspector`,
:class:`app.manager.Manager` and the other helpers are handed something that has them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from PySide6.QtWidgets import QDockWidget, QTableView, QTabWidget, QWidget

    from core.io.problems import Problem
    from widgets.activity.backups_view import BackupsView
    from widgets.activity.view import ActivityView
    from widgets.budget.gauge import BudgetGauge
    from widgets.common.record_model import RecordTableModel
    from widgets.compaction.panel import CompactionPanel
    from widgets.facts.review_queue import ReviewQueue
    from widgets.facts.view import FactsView
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


class Views(Protocol):
    """The views, docks and tabs of the main window, and how to bring one forward."""

    navigator: Navigator
    problems: RecordTableModel[Problem]
    problem_view: QTableView
    timeline: TimelineView
    gauge: BudgetGauge
    message_view: MessageView
    context_view: ContextView
    recall_view: RecallPreview
    lab_view: RecallLabView
    trim_view: TrimView
    facts_view: FactsView
    review_queue: ReviewQueue
    compaction_panel: CompactionPanel
    whatif_view: WhatIfView
    openclaw_view: OpenClawView
    activity_view: ActivityView
    backups_view: BackupsView
    activity_tabs: QTabWidget
    activity_dock: QDockWidget
    nav_dock: QDockWidget
    problem_dock: QDockWidget
    first_run: FirstRunView
    tabs: QTabWidget
    tab_views: tuple[QWidget, ...]

    def show_view(self, name: str) -> None:
        """Bring the view called *name* forward and give it the keyboard focus."""

    def tab_index(self, name: str) -> int:
        """Index of the inspector tab called *name*."""

    def reset_layout(self) -> None:
        """Forget the saved layout and lay the window out afresh."""
