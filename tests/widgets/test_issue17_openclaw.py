"""Issue 17, defect 10: per-agent figures never add up unrelated sessions' context sizes."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from core.dataset.load import load_dataset
from core.demo.build import write_demo
from widgets.openclaw.view import OpenClawView

NOW = 1_760_000_000_000


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    home = write_demo(tmp_path_factory.mktemp("demo") / "home", now_ms=NOW, segments=40).root
    return load_dataset(home)


def _cells(view, row):
    model = view.agent_table.model()
    return [
        str(model.index(row, c).data(Qt.ItemDataRole.DisplayRole) or "")
        for c in range(model.columnCount())
    ]


def _headers(view):
    model = view.agent_table.model()
    return [
        model.headerData(c, Qt.Orientation.Horizontal, Qt.ItemDataRole.DisplayRole)
        for c in range(model.columnCount())
    ]


def test_agents_tab_shows_counts_and_the_largest_and_latest_context_never_a_sum(
    qtbot, qtmodeltester, demo
):
    view = OpenClawView()
    qtbot.addWidget(view)
    view.set_data(demo)
    view.tabs.setCurrentWidget(view.agents_page)
    qtmodeltester.check(view.agent_table.model())
    agents = sorted({s.agent for s in demo.summaries})
    assert view.agent_table.model().rowCount() == len(agents) >= 2
    headers = _headers(view)
    assert "Largest context (est.)" in headers and "Latest session's context (est.)" in headers
    assert not [h for h in headers if "total" in h.lower() or h.startswith("Tokens")]
    for row in range(len(agents)):
        cells = _cells(view, row)
        mine = [s for s in demo.summaries if s.agent == cells[0]]
        assert len(mine) > 1  # a sum would add up unrelated sessions
        summed = sum(s.tokens_estimated for s in mine)
        assert not [c for c in cells if f"{summed:,}" in c]
        largest = max(mine, key=lambda s: s.tokens_estimated)
        latest = max(mine, key=lambda s: s.modified)
        by_header = dict(zip(headers, cells, strict=True))
        assert by_header["Sessions"] == str(len(mine))
        assert by_header["Messages"] == f"{sum(s.messages for s in mine):,}"
        assert by_header["Largest context (est.)"].startswith(f"{largest.tokens_estimated:,}")
        assert (largest.name or largest.id) in by_header["Largest context (est.)"]
        assert by_header["Latest session's context (est.)"].startswith(
            f"{latest.tokens_estimated:,}"
        )
    assert "never a sum" in view.agents_note.text()
