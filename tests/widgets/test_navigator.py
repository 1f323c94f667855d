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


def test_live_updates_insert_and_change_rows_keeping_selection_scroll_and_expansion(
    qtbot, qtmodeltester, demo_data
):
    summaries = list(demo_data.summaries)
    nav = Navigator()
    qtbot.addWidget(nav)
    nav.resize(500, 140)
    nav.set_sessions(summaries)
    nav.show()
    qtbot.waitExposed(nav)
    agents = [nav.proxy.index(r, 0) for r in range(nav.proxy.rowCount())]
    assert len(agents) >= 2
    collapsed = agents[-1]
    nav.tree.collapse(collapsed)
    collapsed_name = collapsed.data(SortRole)
    target = next(s for s in summaries if s.agent != collapsed_name)
    assert nav.select_session(target.id)
    bar = nav.tree.verticalScrollBar()
    assert bar.maximum() > 0
    bar.setValue(1)
    selected, resets, inserted = [], [], []
    nav.session_selected.connect(selected.append)
    nav.model.modelReset.connect(lambda: resets.append(1))
    nav.model.rowsInserted.connect(lambda parent, first, last: inserted.append(first))
    grown = replace(target, messages=target.messages + 7, name="grown live")
    sibling = replace(target, path=target.path + ".new.jsonl", id="new-session-in-agent")
    stranger = replace(target, path="/elsewhere/x.jsonl", id="new-agent-session", agent="zz-new")
    nav.update_sessions([grown, sibling, stranger])
    assert resets == [] and len(inserted) == 2  # a row under an agent, a new agent row
    assert nav.current() is grown and selected == []  # same row, nothing re-emitted
    assert bar.value() == 1
    assert not nav.tree.isExpanded(nav.proxy.mapFromSource(nav.model.index(len(agents) - 1, 0)))
    for row in range(len(agents) - 1):
        assert nav.tree.isExpanded(nav.proxy.mapFromSource(nav.model.index(row, 0)))
    new_agent = nav.model.index(len(agents), 0)
    assert new_agent.data(SortRole) == "zz-new" and nav.tree.isExpanded(
        nav.proxy.mapFromSource(new_agent)
    )
    agent_row = nav.model.session_index(target.path).parent()
    mine = [s for s in nav.model.sessions() if s.agent == target.agent]
    assert nav.model.index(agent_row.row(), 1).data(SortRole) == sum(s.messages for s in mine)
    assert nav.model.session_index("new-session-in-agent").isValid()
    qtmodeltester.check(nav.model)


def test_a_live_update_that_re_sorts_rows_does_not_re_select_the_session(qtbot, demo_data):
    """The soak saw each live batch re-show the whole selected session (a long GUI stall)."""
    summaries = list(demo_data.summaries)
    nav = Navigator()
    qtbot.addWidget(nav)
    nav.set_sessions(summaries)
    oldest = min(summaries, key=lambda s: s.modified)
    assert nav.select_session(oldest.id)
    selected: list[object] = []
    nav.session_selected.connect(selected.append)
    newest = max(s.modified for s in summaries)
    for step in range(1, 4):  # it moves to the top of the modified-descending sort
        nav.update_sessions(
            [replace(oldest, modified=newest + step, messages=oldest.messages + step)]
        )
        sibling = replace(  # and a new session of its agent lands above it
            oldest, path=f"{oldest.path}.{step}.jsonl", id=f"new-{step}", modified=newest + 9
        )
        nav.update_sessions([sibling])
    assert nav.current().path == oldest.path
    assert selected == []
    other = next(s for s in summaries if s.path != oldest.path)
    assert nav.select_session(other.id)
    assert [s.path for s in selected] == [other.path]  # a real change still reaches the app
