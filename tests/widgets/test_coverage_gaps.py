"""Gaps in widget coverage: every navigator column, sort and filter on real data, and
the model tester on the item models no other test checks."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest
from PySide6.QtCore import QModelIndex, Qt

from app.app_config import ProviderSpec
from app.settings_providers import ProviderListModel
from core.context.trim import default_query
from core.dataset.load import load_dataset
from core.demo.build import write_demo
from core.transcript.loader import load_transcript
from core.transcript.replay import context_at
from widgets.common.record_model import RecordRole, SortRole
from widgets.session.navigator import COLUMNS, Navigator
from widgets.trim.model import (
    DECISIONS,
    DecisionFilterProxy,
    DecisionRole,
    TrimParameters,
    TrimTableModel,
    compute_run,
)

NOW = 1_760_000_000_000
ASC, DESC = Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder


@pytest.fixture(scope="module")
def summaries(tmp_path_factory):
    root = tmp_path_factory.mktemp("gaps") / "home"
    write_demo(root, now_ms=NOW, segments=300)
    found = load_dataset(root).summaries
    assert len(found) > 5 and len({s.agent for s in found}) > 1
    # The demo measures every session: blank one to cover the "no usage figure" cell.
    return [*found[:-1], replace(found[-1], tokens_measured=None)]


@pytest.fixture
def nav(qtbot, summaries):
    nav = Navigator()
    qtbot.addWidget(nav)
    nav.set_sessions(summaries)
    return nav


def expected_size(n: int) -> str:
    if n < 1024:
        return f"{n:,} B"
    for power, unit in ((1, "KB"), (2, "MB")):
        if n < 1024 ** (power + 1):
            return f"{n / 1024**power:,.1f} {unit}"
    return f"{n / 1024**3:,.1f} GB"


def expected_row(s) -> list[str]:
    """What each navigator column shows for *s*, written out independently of COLUMNS."""
    return [
        s.name or s.id,
        f"{s.messages:,}",
        f"~{s.tokens_estimated:,}" if s.tokens_measured is None else f"{s.tokens_measured:,}",
        f"{s.tokens_estimated:,}",
        f"{s.compactions:,}",
        datetime.fromtimestamp(s.modified, UTC).strftime("%Y-%m-%d %H:%M"),
        expected_size(s.size),
    ]


SORT_KEYS = (
    lambda s: (s.name or s.id).lower(),
    lambda s: s.messages,
    lambda s: s.tokens_estimated if s.tokens_measured is None else s.tokens_measured,
    lambda s: s.tokens_estimated,
    lambda s: s.compactions,
    lambda s: s.modified,
    lambda s: s.size,
)


def shown(nav) -> dict[str, list]:
    """Agent name -> its sessions, in the order the tree shows them."""
    out = {}
    for a in range(nav.proxy.rowCount()):
        agent = nav.proxy.index(a, 0)
        out[agent.data(SortRole)] = [
            nav.proxy.index(r, 0, agent).data(RecordRole) for r in range(nav.proxy.rowCount(agent))
        ]
    return out


# -- navigator: columns --------------------------------------------------------------------------


def test_headers_are_the_seven_figures(nav):
    headers = [nav.proxy.headerData(c, Qt.Orientation.Horizontal) for c in range(len(COLUMNS))]
    assert headers == [
        "Session",
        "Messages",
        "Context tokens",
        "chars/4 estimate",
        "Compactions",
        "Modified",
        "Size",
    ]
    assert nav.proxy.columnCount() == 7


def test_every_column_shows_the_sessions_figures(nav, summaries):
    assert sum(len(v) for v in shown(nav).values()) == len(summaries)
    for s in summaries:
        index = nav.proxy.mapFromSource(nav.model.session_index(s.id))
        assert index.isValid(), s.id
        assert index.data(RecordRole) is s
        cells = [index.siblingAtColumn(c).data() for c in range(len(COLUMNS))]
        assert cells == expected_row(s), s.id
        for c in range(1, len(COLUMNS)):
            align = Qt.AlignmentFlag(
                index.siblingAtColumn(c).data(Qt.ItemDataRole.TextAlignmentRole)
            )
            assert align & Qt.AlignmentFlag.AlignRight
        assert s.path in index.data(Qt.ItemDataRole.ToolTipRole)
    # Both size units the demo spans, and the blank measured cell, are exercised.
    units = {expected_size(s.size).split()[-1] for s in summaries}
    assert {"KB", "MB"} <= units
    assert any(s.tokens_measured is None for s in summaries)


def test_agent_rows_total_their_sessions(nav, summaries):
    for a in range(nav.model.rowCount()):
        agent = nav.model.index(a, 0)
        name = agent.data(SortRole)
        mine = [s for s in summaries if s.agent == name]
        assert agent.data() == f"{name} ({len(mine)})"
        row = [nav.model.index(a, c).data() for c in range(len(COLUMNS))]
        assert row[1] == f"{sum(s.messages for s in mine):,}"
        assert row[2] is None  # context tokens of unrelated sessions are not summed
        assert row[3] is None  # nor their chars/4 estimates (issue 17, defect 10)
        tip = nav.model.index(a, 3).data(Qt.ItemDataRole.ToolTipRole)
        assert "not added up" in tip
        assert row[4] == f"{sum(s.compactions for s in mine):,}"
        newest = max(s.modified for s in mine)
        assert row[5] == datetime.fromtimestamp(newest, UTC).strftime("%Y-%m-%d %H:%M")
        assert row[6] == expected_size(sum(s.size for s in mine))


# -- navigator: sorting --------------------------------------------------------------------------


def test_opens_sorted_newest_first(nav, summaries):
    assert nav.tree.header().sortIndicatorSection() == 5
    assert nav.tree.header().sortIndicatorOrder() == DESC
    for agent, rows in shown(nav).items():
        mine = [s for s in summaries if s.agent == agent]
        assert [s.modified for s in rows] == sorted((s.modified for s in mine), reverse=True)


@pytest.mark.parametrize("column", range(len(COLUMNS)), ids=[c.header for c in COLUMNS])
@pytest.mark.parametrize("order", [ASC, DESC], ids=["asc", "desc"])
def test_sorting_by_each_column_orders_the_sessions(nav, summaries, column, order):
    key = SORT_KEYS[column]
    nav.tree.sortByColumn(column, order)
    tree = shown(nav)
    assert set(tree) == {s.agent for s in summaries}
    for agent, rows in tree.items():
        mine = [s for s in summaries if s.agent == agent]
        assert sorted(map(id, rows)) == sorted(map(id, mine))
        assert [key(s) for s in rows] == sorted((key(s) for s in mine), reverse=order == DESC)
    # The view shows the same order as the proxy it sits on.
    first_agent = nav.proxy.index(0, 0)
    top = nav.tree.model().index(0, 0, first_agent).data(RecordRole)
    assert top is tree[first_agent.data(SortRole)][0]


def test_sorting_orders_the_agents_by_their_totals(nav, summaries):
    agents = sorted({s.agent for s in summaries})
    total = {a: sum(s.messages for s in summaries if s.agent == a) for a in agents}
    nav.tree.sortByColumn(1, ASC)
    assert list(shown(nav)) == sorted(agents, key=total.__getitem__)
    nav.tree.sortByColumn(1, DESC)
    assert list(shown(nav)) == sorted(agents, key=total.__getitem__, reverse=True)


# -- navigator: filter box -------------------------------------------------------------------------


def visible_ids(nav) -> set[str]:
    return {s.id for rows in shown(nav).values() for s in rows}


def test_filter_box_matches_any_column_case_insensitively(nav, summaries):
    named = next(s for s in summaries if s.name and len(s.name.split()) > 1)
    word = max(named.name.split(), key=len)
    for text in (word, word.upper(), word.lower()):
        nav.filter_box.setText(text)
        wanted = {
            s.id
            for s in summaries
            if any(text.lower() in cell.lower() for cell in expected_row(s))
            or text.lower() in s.id.lower()
            or text.lower() in s.agent.lower()
        }
        assert named.id in wanted
        assert visible_ids(nav) == wanted, text
        # Agents without a matching session are hidden.
        assert set(shown(nav)) == {s.agent for s in summaries if s.id in wanted}


def test_filter_by_agent_name_shows_its_sessions(nav, summaries):
    agent = summaries[-1].agent
    nav.filter_box.setText(agent.upper())
    mine = {s.id for s in summaries if s.agent == agent}
    others = {s.id for s in summaries if s.agent != agent and agent.lower() in s.agent.lower()}
    assert visible_ids(nav) == mine | others
    index = nav.proxy.index(0, 0)
    assert nav.proxy.rowCount(index) == len(mine)
    assert nav.tree.isExpanded(index)


def test_filter_box_matches_an_exact_figure(nav, summaries):
    target = max(summaries, key=lambda s: s.size)
    text = expected_size(target.size)
    nav.filter_box.setText(text)
    assert target.id in visible_ids(nav)
    assert visible_ids(nav) == {s.id for s in summaries if text in expected_row(s)[6]}


def test_filter_box_matches_the_session_id(nav, summaries):
    target = summaries[3]
    nav.filter_box.setText(target.id[-12:])
    assert visible_ids(nav) == {target.id}


def test_clearing_the_filter_brings_every_session_back(nav, summaries):
    nav.filter_box.setText("no-such-session-anywhere")
    assert nav.proxy.rowCount() == 0
    assert nav.current() is None
    nav.filter_box.clear()
    assert visible_ids(nav) == {s.id for s in summaries}
    # Every agent is expanded again after filtering.
    for a in range(nav.proxy.rowCount()):
        assert nav.tree.isExpanded(nav.proxy.index(a, 0))


def test_filtered_navigator_passes_the_model_tester(qtmodeltester, nav, summaries):
    qtmodeltester.check(nav.proxy)
    nav.filter_box.setText(summaries[0].name.split()[0])
    qtmodeltester.check(nav.proxy)
    nav.tree.sortByColumn(6, ASC)
    qtmodeltester.check(nav.proxy)


# -- ProviderListModel -----------------------------------------------------------------------------

PROVIDERS = [
    ProviderSpec("Local Ollama", "openai", "http://127.0.0.1:11434/v1", "qwen3:8b"),
    ProviderSpec(
        "Claude", "anthropic", "", "claude-sonnet-4-5", ("claude-haiku-4-5",), "ANTHROPIC_API_KEY"
    ),
    ProviderSpec("", "openai", "", ""),  # no label, no URL: shown with its problems
]


def test_provider_list_model_passes_the_model_tester(qtmodeltester):
    model = ProviderListModel()
    model.set_providers(PROVIDERS)
    qtmodeltester.check(model)
    assert [model.index(r).data() for r in range(3)] == ["Local Ollama", "Claude", "(no label)"]
    assert model.index(1).data(Qt.ItemDataRole.UserRole) is PROVIDERS[1]
    # Edits keep it consistent: the tester watches the signals each one emits.
    model.insert(1, ProviderSpec("Second", "openai", "http://localhost:8080/v1", "m"))
    model.move(0, 2)
    model.replace_at(0, replace(PROVIDERS[1], label="Renamed"))
    model.remove(3)
    qtmodeltester.check(model)
    assert [s.label for s in model.providers()] == ["Renamed", "Claude", "Local Ollama"]
    assert model.rowCount(model.index(0)) == 0


def test_provider_with_problems_is_flagged(qtmodeltester):
    model = ProviderListModel()
    model.set_providers(PROVIDERS)
    bad = model.index(2)
    assert PROVIDERS[2].problems()
    assert bad.data(Qt.ItemDataRole.ForegroundRole) is not None
    for problem in PROVIDERS[2].problems():
        assert problem in bad.data(Qt.ItemDataRole.ToolTipRole)
    assert model.index(0).data(Qt.ItemDataRole.ForegroundRole) is None


def test_empty_provider_list_passes_the_model_tester(qtmodeltester):
    model = ProviderListModel()
    model.set_providers([])
    qtmodeltester.check(model)
    assert model.data(QModelIndex()) is None


# -- DecisionFilterProxy ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trim_rows(fixtures_dir):
    session = load_transcript(fixtures_dir / "before-compaction.jsonl")
    messages = [item.message for item in context_at(session)]
    run = compute_run(messages, TrimParameters(1700, 0, 0, 6, default_query(messages)))
    assert len({r.decision.decision for r in run.rows}) > 1, "want rows of several decisions"
    return run.rows


def test_decision_filter_proxy_passes_the_model_tester(qtmodeltester, trim_rows):
    model = TrimTableModel()
    model.set_records(trim_rows)
    proxy = DecisionFilterProxy()
    proxy.setSourceModel(model)
    qtmodeltester.check(proxy)
    assert proxy.rowCount() == len(trim_rows)

    present = sorted({r.decision.decision for r in trim_rows}, key=DECISIONS.index)
    for decision in present:
        proxy.set_decisions([decision])
        qtmodeltester.check(proxy)
        want = [r for r in trim_rows if r.decision.decision == decision]
        assert proxy.rowCount() == len(want)
        got = [proxy.index(r, 0).data(RecordRole) for r in range(proxy.rowCount())]
        assert got == want
        assert {proxy.index(r, 0).data(DecisionRole) for r in range(proxy.rowCount())} == {decision}

    proxy.set_decisions([])
    assert proxy.rowCount() == 0
    qtmodeltester.check(proxy)
    proxy.set_decisions(DECISIONS)
    proxy.sort(2, DESC)  # tokens, by SortRole
    qtmodeltester.check(proxy)
    tokens = [proxy.index(r, 0).data(RecordRole).decision.tokens for r in range(proxy.rowCount())]
    assert tokens == sorted((r.decision.tokens for r in trim_rows), reverse=True)
