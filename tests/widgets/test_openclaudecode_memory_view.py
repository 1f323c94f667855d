"""The OpenClaudeCode memory page: a search as a job, hits with score and bm25 rank."""

from __future__ import annotations

import shutil
from pathlib import Path

from PySide6.QtCore import Qt

from core.dataset.load import load_dataset
from widgets.common.jobs import JobRunner
from widgets.openclaudecode.memory_view import ALL_CHANNELS, OccMemoryView

FIXTURE = Path(__file__).parents[1] / "data" / "openclaudecode" / "home"


def _cell(view: OccMemoryView, row: int, col: int) -> str:
    return str(view.model.data(view.model.index(row, col), Qt.ItemDataRole.DisplayRole))


def _view(qtbot, tmp_path) -> OccMemoryView:
    home = tmp_path / "home"
    shutil.copytree(FIXTURE, home)
    view = OccMemoryView(runner=JobRunner())
    qtbot.addWidget(view)
    view.set_data(load_dataset(home))
    return view


def test_search_lists_hits_best_first(qtbot, qtmodeltester, tmp_path):
    view = _view(qtbot, tmp_path)
    assert view.search_button.isEnabled()
    channels = [view.channel.itemText(i) for i in range(view.channel.count())]
    assert channels == [ALL_CHANNELS, "discord", "telegram", "whatsapp"]
    view.query.setText("deploy window")
    view.search_button.click()
    qtbot.waitUntil(lambda: view.model.rowCount() == 3, timeout=10_000)
    qtmodeltester.check(view.model)
    headers = [view.model.headerData(c, Qt.Orientation.Horizontal) for c in range(6)]
    assert headers == ["Score", "bm25 rank", "Session key", "Source", "When (UTC)", "Text"]
    scores = [float(_cell(view, r, 0)) for r in range(3)]
    assert scores == sorted(scores, reverse=True)
    assert float(_cell(view, 0, 1)) < 0
    assert _cell(view, 0, 2) == "telegram:5054873275"
    assert "deploy window" in _cell(view, 0, 5)
    assert '"deploy" AND "window"' in view.note.text()


def test_channel_filter_and_a_query_without_words(qtbot, tmp_path):
    view = _view(qtbot, tmp_path)
    view.query.setText("deploy")
    view.channel.setCurrentText("discord")
    view.search()
    qtbot.waitUntil(lambda: view.model.rowCount() == 1, timeout=10_000)
    assert _cell(view, 0, 2) == "discord:918273645546372819"
    view.query.setText("?!")
    view.search()
    qtbot.waitUntil(lambda: "No search" in view.note.text(), timeout=10_000)
    assert view.model.rowCount() == 0


def test_disabled_without_an_openclaudecode_home(qtbot):
    view = OccMemoryView(runner=JobRunner())
    qtbot.addWidget(view)
    view.set_data(None)
    assert not view.query.isEnabled() and not view.search_button.isEnabled()
    assert "OpenClaudeCode data directory" in view.note.text()
