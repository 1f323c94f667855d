"""Fixes from a code review: a second place, stale fact sources, the compacted session reloaded."""

from __future__ import annotations

import shutil
import time

import pytest

from app.main_window import MainWindow
from core.demo import write_demo
from core.writes import always

NOW = int(time.time() * 1000)  # live segments must not be older than evictionDays


@pytest.fixture
def home(tmp_path):
    return write_demo(tmp_path / "home", now_ms=NOW, segments=150).root


def _window(qtbot, confirm=always):
    window = MainWindow(confirm=confirm)
    qtbot.addWidget(window)
    return window


def _open(qtbot, window, path):
    """Open *path* and wait until it is loaded, a session is shown and recall is ready."""
    old = window.data
    window.open_path(str(path))
    qtbot.waitUntil(
        lambda: (
            window.data is not None
            and window.data is not old
            and window.inspector.session is not None
        ),
        timeout=30000,
    )
    qtbot.waitUntil(lambda: window._recall_worker is None, timeout=30000)
    return window


def _show_facts(qtbot, window):
    window.show()
    qtbot.waitExposed(window)
    window.show_view("facts")
    assert window.facts_view.isVisible()


# -- 1. a second place ----------------------------------------------------------------------------
def _second_places(tmp_path, first):
    """Places whose facts are none of *first*'s: another demo, an empty log, no log at all."""
    other = write_demo(tmp_path / "other", seed=11, now_ms=NOW - 86_400_000, segments=120).root
    empty = tmp_path / "empty"
    shutil.copytree(first, empty)
    (empty / "memory" / "context" / "knowledge.jsonl").write_bytes(b"")
    single = tmp_path / "single"
    single.mkdir()
    transcript = max(first.glob("agents/*/sessions/*.jsonl"), key=lambda p: p.stat().st_size)
    shutil.copy(transcript, single / transcript.name)
    return {"other demo": other, "empty log": empty, "no knowledge": single / transcript.name}


@pytest.mark.parametrize("second", ["other demo", "empty log", "no knowledge"])
def test_opening_a_place_with_other_facts_drops_the_selection(qtbot, home, tmp_path, second):
    place = _second_places(tmp_path, home)[second]
    window = _open(qtbot, _window(qtbot), home)
    _show_facts(qtbot, window)
    view = window.facts_view
    old = window.data.knowledge
    ids = [f.id for f in old.facts.values() if f.status == "active"]
    assert view.select_ids(ids[:3], ids[1])
    assert view.selected_ids() and view.current_id() == ids[1]
    with qtbot.captureExceptions() as raised:
        _open(qtbot, window, place)
    assert raised == []
    new = window.data.knowledge
    assert view.log() is new
    known = set(new.facts) if new is not None else set()
    assert not set(ids[:3]) & known  # the places share no fact
    assert set(view.selected_ids()) <= known
    assert {f.id for f in view.selected_facts()} <= known
    assert view.current_id() in known | {""}
    view.wait_for_sources()
