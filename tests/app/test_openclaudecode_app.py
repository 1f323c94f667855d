"""The app opens an OpenClaudeCode data directory: sessions listed, memory searchable."""

from __future__ import annotations

import shutil
from pathlib import Path

from PySide6.QtCore import Qt

from app.main_window import MainWindow

FIXTURE = Path(__file__).parents[1] / "data" / "openclaudecode" / "home"


def test_opens_sessions_and_memory(qtbot, tmp_path):
    home = tmp_path / ".openclaudecode"
    shutil.copytree(FIXTURE, home)
    window = MainWindow()
    qtbot.addWidget(window)
    window.open_path(str(home))
    qtbot.waitUntil(lambda: window.data is not None, timeout=30_000)
    qtbot.waitUntil(window.settled, timeout=30_000)
    rows = window.navigator.model.sessions()
    assert sorted(r.id for r in rows) == ["dc-0002", "tg-0001", "tg-0004", "wa-0003"]
    assert {r.name for r in rows} >= {"telegram:5054873275", "whatsapp:15551234567"}
    assert all(r.storage == "openclaudecode" for r in rows)
    page = window.occ_memory_view
    assert page.search_button.isEnabled()
    page.query.setText("potions")
    page.search()
    qtbot.waitUntil(lambda: page.model.rowCount() == 2, timeout=10_000)
    tips = []
    model = window.navigator.model
    for a in range(model.rowCount()):
        agent = model.index(a, 0)
        tips += [
            model.index(r, 0, agent).data(Qt.ItemDataRole.ToolTipRole)
            for r in range(model.rowCount(agent))
        ]
    assert len(tips) == 4
    assert all("OpenClaudeCode transcript (read-only)" in t for t in tips)
    assert any("session key telegram:5054873275" in t for t in tips)
