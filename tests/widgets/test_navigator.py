from __future__ import annotations

from dataclasses import replace

import pytest
from PySide6.QtCore import Qt

from core.dataset.load import load_dataset
from core.demo.build import write_demo
from widgets.common.record_model import RecordRole, SortRole
from widgets.session.navigator import Navigator, SessionTreeModel

NOW = 1_760_000_000_000


@pytest.fixture(scope="module")
def demo_data(tmp_path_factory):
    summary = write_demo(tmp_path_factory.mktemp("nav") / "home", now_ms=NOW, segments=50)
    return load_dataset(summary.root)


def test_model_passes_the_model_tester(qtmodeltester, demo_data):
    model = SessionTreeModel()
    model.set_sessions(demo_data.summaries)
    qtmodeltester.check(model)


def test_agents_hold_their_sessions_with_totals(qtbot, demo_data):
    nav = Navigator()
    qtbot.addWidget(nav)
    nav.set_sessions(demo_data.summaries)
    agents = {s.agent for s in demo_data.summaries}
    assert nav.model.rowCount() == len(agents)
    for row in range(nav.model.rowCount()):
        agent = nav.model.index(row, 0)
        mine = [s for s in demo_data.summaries if s.agent == agent.data(SortRole)]
        assert nav.model.rowCount(agent) == len(mine)
        messages = nav.model.index(row, 1).data(SortRole)
        assert messages == sum(s.messages for s in mine)
        child = nav.model.index(0, 0, agent)
        assert child.data(RecordRole) in mine


def test_selection_emits_the_session(qtbot, demo_data):
    nav = Navigator()
    qtbot.addWidget(nav)
    nav.set_sessions(demo_data.summaries)
    target = demo_data.summaries[-1]
    with qtbot.waitSignal(nav.session_selected) as sig:
        assert nav.select_session(target.id)
    assert sig.args[0] is target
    assert nav.current() is target


def test_filter_keeps_matching_sessions_and_their_agent(qtbot, demo_data):
    nav = Navigator()
    qtbot.addWidget(nav)
    nav.set_sessions(demo_data.summaries)
    target = demo_data.summaries[0]
    nav.filter_box.setText(target.id[:8])
    shown = []
    for a in range(nav.proxy.rowCount()):
        agent = nav.proxy.index(a, 0)
        shown += [
            nav.proxy.index(r, 0, agent).data(RecordRole) for r in range(nav.proxy.rowCount(agent))
        ]
    assert shown == [target]
    nav.filter_box.setText("no-such-session-anywhere")
    assert nav.proxy.rowCount() == 0
    assert not nav.select_session(target.id)


def test_sorting_by_messages_orders_sessions(qtbot, demo_data):
    many = [
        replace(s, agent="main", messages=n)
        for n, s in zip((5, 50, 1), demo_data.summaries, strict=False)
    ]
    nav = Navigator()
    qtbot.addWidget(nav)
    nav.set_sessions(many)
    nav.tree.sortByColumn(1, nav.tree.header().sortIndicatorOrder().AscendingOrder)
    agent = nav.proxy.index(0, 0)
    counts = [nav.proxy.index(r, 1, agent).data(SortRole) for r in range(nav.proxy.rowCount(agent))]
    assert counts == sorted(counts)
    assert len(counts) == len(many)


def test_every_number_fits_its_column(qtbot, demo_data):
    nav = Navigator()
    qtbot.addWidget(nav)
    nav.set_sessions(demo_data.summaries)
    fm = nav.tree.fontMetrics()
    model = nav.model
    rows = [model.index(r, 0) for r in range(model.rowCount())]
    rows += [model.index(r, 0, agent) for agent in list(rows) for r in range(model.rowCount(agent))]
    for column in range(1, model.columnCount()):
        width = nav.tree.columnWidth(column)
        for row in rows:
            text = str(row.siblingAtColumn(column).data() or "")
            assert fm.horizontalAdvance(text) + 8 <= width, (column, text, width)
        title = str(model.headerData(column, Qt.Orientation.Horizontal))
        assert nav.tree.header().fontMetrics().horizontalAdvance(title) < width
