"""Issue 17, item 12: the Facts, Review and OpenClaw tabs and the Activity view are compact.

At the default layout of a 1366x768 window a tab's page is about 330-400 px tall (the
window wraps each tab in a scroll area): the page must fit without scrolling, with its
main table showing at least eight rows.
"""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QFrame, QScrollArea, QTableView

from core.dataset.load import load_dataset
from core.demo.build import write_demo
from widgets.activity.backups_view import BackupsView
from widgets.activity.view import ActivityView
from widgets.facts.review_queue import ReviewQueue
from widgets.facts.view import FactsView
from widgets.openclaw.memory_index_view import MemoryIndexView
from widgets.openclaw.view import OpenClawView

TAB_WIDTH, TAB_HEIGHT = 700, 330
"""The page of a tab in a 1366x768 window (its smallest expected size, the Sessions dock
beside it)."""


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    home = write_demo(tmp_path_factory.mktemp("demo") / "home", now_ms=1_760_000_000_000)
    return load_dataset(home.root)


def _page(qtbot, view, height=TAB_HEIGHT, width=TAB_WIDTH):
    """*view* in a tab's scroll area of the page's size, shown (as the window does)."""
    area = QScrollArea()
    area.setWidget(view)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    qtbot.addWidget(area)
    area.resize(width, height)
    area.show()
    qtbot.waitExposed(area)
    qtbot.wait(20)  # the layout requests posted by showing are handled
    return area


def _rows(table: QTableView) -> float:
    """How many rows the table's viewport holds."""
    return table.viewport().height() / table.verticalHeader().defaultSectionSize()


def _fits(area: QScrollArea) -> bool:
    return not area.verticalScrollBar().isVisible() and not area.horizontalScrollBar().isVisible()


def test_facts_table_shows_eight_rows_beside_its_detail(qtbot, demo):
    view = FactsView()
    view.attach(demo.knowledge, None)
    area = _page(qtbot, view)
    assert _fits(area)
    assert _rows(view.table) >= 8
    assert view.detail.isVisible() and view.detail.height() > 0  # in a splitter below
    # the filters and the edit buttons share one row above the table
    # the content stays readable on a narrow page: the Context column gives up room
    content, context = (view.table.horizontalHeader().sectionSize(c) for c in (1, 2))
    assert content >= 100 and context < 220  # (about 30 px before)
    bar = {w.mapTo(view, w.rect().topLeft()).y() for w in (view.filter_edit, view.type_combo)}
    assert len(bar) == 1 and max(bar) < view.table.mapTo(view, view.table.rect().topLeft()).y()


def test_review_table_shows_eight_rows(qtbot, demo):
    view = ReviewQueue()
    view.set_items([], demo.knowledge, None)
    area = _page(qtbot, view)
    assert _fits(area)
    assert _rows(view.table) >= 8


@pytest.mark.parametrize("page", ["row_page", "search_page", "agents_page"])
def test_openclaw_pages_show_eight_rows(qtbot, demo, page):
    view = OpenClawView()
    view.set_memory_view(MemoryIndexView())
    view.set_data(demo)
    view.show_session(demo.sessions[0])
    area = _page(qtbot, view)
    view.tabs.setCurrentWidget(getattr(view, page))
    qtbot.wait(10)
    table = {"row_page": view.row_table, "search_page": view.hit_table}.get(page, view.agent_table)
    assert _fits(area)
    assert _rows(table) >= 8


def test_memory_index_search_shows_eight_rows(qtbot, demo):
    view = OpenClawView()
    memory = MemoryIndexView()
    view.set_memory_view(memory)
    view.set_data(demo)
    area = _page(qtbot, view)
    view.tabs.setCurrentWidget(memory)
    qtbot.wait(10)
    assert _fits(area)
    assert _rows(memory.results_table) >= 8
    memory.tabs.setCurrentWidget(memory.chunks_table.parentWidget().parentWidget())
    qtbot.wait(10)
    assert _rows(memory.chunks_table) >= 8


@pytest.mark.parametrize("kind", [ActivityView, BackupsView])
def test_activity_dock_pages_show_eight_rows_in_a_small_dock(qtbot, kind):
    view = kind()
    qtbot.addWidget(view)
    view.resize(900, 230)  # a page of the Activity dock (Writes, Backups) at 1366x768
    view.show()
    qtbot.waitExposed(view)
    assert view.minimumSizeHint().height() <= 120
    assert _rows(view.table) >= 8
