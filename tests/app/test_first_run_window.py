"""The main window's first-run page, load races, Esc, shortcuts list and quitting mid-job."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app import main_window as main_window_module
from app.main import build_window
from app.main_window import MainWindow
from core.compaction.provider import ProviderChoice
from core.compaction.target import target_from_dataset
from core.dataset.load import Cancelled, load_dataset
from tests.demo_copy import demo_copy
from tests.llm_server import Reply

NOW = 1_760_000_000_000
DEMO_SESSION = "128b2f33"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def _window(qtbot, argv=()):  # type: ignore[no-untyped-def]
    window = build_window(list(argv))
    qtbot.addWidget(window)
    return window


def _loaded(qtbot, window):  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: window.data is not None and window.load_job is None, timeout=30_000)


# -- first run ----------------------------------------------------------------------------------
def test_first_run_lists_the_agent_home_and_opens_it(qtbot, isolated_home):
    demo_copy(isolated_home / ".openclaw", now_ms=NOW, segments=50)
    window = _window(qtbot)
    assert window.showing_first_run and window.data is None
    qtbot.waitUntil(lambda: window.homes_scanned, timeout=20_000)
    homes = window.first_run.homes
    assert [h.path for h in homes] == [isolated_home / ".openclaw"]
    assert homes[0].sessions == 12 and homes[0].problem is None
    view = window.first_run.homes_view
    assert view.currentIndex().row() == 0
    qtbot.keyClick(view, Qt.Key.Key_Return)  # Enter opens the selected home
    _loaded(qtbot, window)
    assert not window.showing_first_run
    assert window.central.currentWidget() is window.splitter
    assert len(window.navigator.model.sessions()) == 12
    assert Path(window.settings.recent[0]) == isolated_home / ".openclaw"


def test_first_run_says_when_no_home_is_found(qtbot):
    window = _window(qtbot)
    qtbot.waitUntil(lambda: window.homes_scanned, timeout=20_000)
    assert window.first_run.homes == []
    assert window.first_run.homes_empty.isVisibleTo(window.first_run)
    assert "No agent home found" in window.first_run.homes_empty.text()


def test_a_place_opened_at_start_skips_the_home_scan(qtbot, isolated_home, fixtures_dir):
    demo_copy(isolated_home / ".openclaw", now_ms=NOW, segments=50)
    window = _window(qtbot, [str(fixtures_dir / "before-compaction.jsonl")])
    qtbot.waitUntil(window.settled, timeout=30_000)
    qtbot.wait(50)
    assert not window.homes_scanned and window.homes_job is None
    assert window.first_run.homes == []


def test_a_failed_start_scans_the_homes_after_all(qtbot, isolated_home, tmp_path):
    demo_copy(isolated_home / ".openclaw", now_ms=NOW, segments=50)
    window = _window(qtbot, [str(tmp_path / "missing")])
    qtbot.waitUntil(lambda: window.homes_scanned, timeout=20_000)
    assert window.showing_first_run
    assert [h.path for h in window.first_run.homes] == [isolated_home / ".openclaw"]


def test_demo_button_opens_the_demo(qtbot, cache):
    window = _window(qtbot)
    window.first_run.demo_button.click()
    _loaded(qtbot, window)
    assert not window.showing_first_run
    assert len(window.navigator.model.sessions()) == 12


def test_a_place_that_cannot_open_keeps_the_first_run_page_with_the_reason(qtbot, tmp_path):
    bad = tmp_path / "not-a-transcript.jsonl"
    bad.write_bytes(b'{"hello": "world"}\n')
    window = _window(qtbot)
    window.open_path(str(bad))
    qtbot.waitUntil(lambda: window.load_job is None, timeout=20_000)
    assert window.showing_first_run and window.data is None
    message = window.first_run.message
    assert message.isVisibleTo(window.first_run)
    assert str(bad) in message.text() and "Could not open" in message.text()


def test_recent_places_appear_and_a_vanished_one_is_dropped(qtbot, tmp_path, fixtures_dir):
    gone = tmp_path / "gone"
    gone.mkdir()
    window = _window(qtbot)
    window.settings.add_recent(str(fixtures_dir / "before-compaction.jsonl"))
    window.settings.add_recent(str(gone))
    window.menu_actions.refresh_recent()
    assert window.first_run.recent_model.rowCount() == 2
    gone.rmdir()
    window.first_run.recent_view.setCurrentIndex(window.first_run.recent_model.index(0, 0))
    qtbot.keyClick(window.first_run.recent_view, Qt.Key.Key_Return)
    assert window.first_run.recent_model.rowCount() == 1
    assert "no longer exists" in window.first_run.message.text()
    assert window.load_job is None  # nothing was opened


def test_a_remembered_place_opens_without_the_first_run_page(qtbot, fixtures_dir):
    first = _window(qtbot, [str(fixtures_dir / "before-compaction.jsonl")])
    _loaded(qtbot, first)
    again = _window(qtbot)  # no path: the last place opens again
    assert not again.first_run.message.text() or "Opening" in again.first_run.message.text()
    _loaded(qtbot, again)
    assert not again.showing_first_run


# -- load races ---------------------------------------------------------------------------------
@pytest.fixture
def release():  # type: ignore[no-untyped-def]
    """Lets slow loads finish; always set at the end so no thread outlives the test."""
    event = threading.Event()
    yield event
    event.set()


def _slow_loader(release: threading.Event):  # type: ignore[no-untyped-def]
    """load_dataset that waits for *release* (a large place still loading), cancellable."""

    def load(path, *, progress, cancelled):  # type: ignore[no-untyped-def]
        while not release.wait(0.02):
            if cancelled():
                raise Cancelled
        return load_dataset(path, progress=progress, cancelled=cancelled)

    return load


def test_a_newer_load_is_not_disturbed_by_the_one_it_replaced(
    qtbot, fixtures_dir, monkeypatch, release
):
    monkeypatch.setattr(main_window_module, "load_deferred", _slow_loader(release))
    window = _window(qtbot)
    window.open_path(str(fixtures_dir / "large-session.jsonl"))
    first = window.load_job
    window.open_path(str(fixtures_dir / "before-compaction.jsonl"))
    second = window.load_job
    assert first is not None and first is not second
    qtbot.waitUntil(lambda: not first.running, timeout=5_000)  # the first has ended
    assert first.outcome == "stale"  # what it delivered was dropped
    qtbot.wait(50)
    assert window.load_job is second  # the old "cancelled" did not end the new load
    assert window.status.cancel_button.isVisibleTo(window)
    assert window.status.task_label.text() == "Loading…"
    release.set()
    _loaded(qtbot, window)
    assert [s.path for s in window.data.sessions] == [str(fixtures_dir / "before-compaction.jsonl")]


def test_failed_reload_keeps_the_open_place(qtbot, fixtures_dir, tmp_path):
    window = _window(qtbot, [str(fixtures_dir / "before-compaction.jsonl")])
    _loaded(qtbot, window)
    data = window.data
    window.open_path(str(tmp_path / "missing"))
    qtbot.waitUntil(lambda: window.load_job is None, timeout=10_000)
    assert window.data is data and not window.showing_first_run
    assert window.place == str(fixtures_dir / "before-compaction.jsonl")
    assert "missing" in window.status.place_label.text()
    assert window.live.controller.follower is not None  # still followed


# -- Esc -----------------------------------------------------------------------------------------
@pytest.fixture
def demo_home(tmp_path):
    home = tmp_path / "home"
    demo_copy(home, now_ms=NOW, segments=200)
    session = next(home.glob(f"agents/*/sessions/{DEMO_SESSION}*.jsonl"))
    old = time.time() - 3600
    os.utime(session, (old, old))
    return home


def test_esc_stops_compaction_in_its_panel_and_the_load_elsewhere(
    qtbot, demo_home, server, monkeypatch, fixtures_dir, release
):
    window = _window(qtbot, [str(demo_home)])
    window.show()
    qtbot.waitExposed(window)
    _loaded(qtbot, window)
    qtbot.waitUntil(
        lambda: window.settled() and window.inspector.session is not None, timeout=30_000
    )
    panel = window.compaction_panel
    answer = {"choices": [{"message": {"content": "late"}, "finish_reason": "stop"}]}
    server.add(Reply(200, answer, delay=8.0))
    panel.set_providers([ProviderChoice("Slow", f"openai:{server.url}/v1:slow-model")])
    panel.set_provider(1)
    window.show_view("compaction")
    with qtbot.waitSignal(panel.cut_point_changed, timeout=10_000):
        panel.set_target(target_from_dataset(window.data, window.data.session(DEMO_SESSION)))
    panel.run()
    qtbot.waitUntil(lambda: len(server.seen) == 1, timeout=5_000)
    assert window.menu_actions.by_name["cancel"].isEnabled()  # Esc has work to stop

    monkeypatch.setattr(main_window_module, "load_deferred", _slow_loader(release))
    window.open_path(str(fixtures_dir / "before-compaction.jsonl"))
    loading = window.load_job
    panel.run_button.setFocus()
    qtbot.keyClick(panel.run_button, Qt.Key.Key_Escape)  # in the panel: the compaction
    qtbot.waitUntil(lambda: not panel.is_busy(), timeout=6_000)
    assert window.load_job is loading and loading is not None and not loading.stop.is_set()

    window.navigator.tree.setFocus()
    qtbot.keyClick(window.navigator.tree, Qt.Key.Key_Escape)  # elsewhere: the load
    qtbot.waitUntil(lambda: window.load_job is None, timeout=5_000)
    assert window.status.task_label.text() == "Loading cancelled"
    assert not window.menu_actions.by_name["cancel"].isEnabled()


# -- shortcuts, menus --------------------------------------------------------------------------
def test_shortcut_list_includes_every_views_own_keys(qtbot):
    window = MainWindow()
    qtbot.addWidget(window)
    table = window.menu_actions.shortcut_table()
    places = {where for where, _, _ in table}
    assert {"Window", "Message", "Facts", "Review", "Compaction"} <= places
    assert ("Compaction", "Run Compaction", "Ctrl+Return, Ctrl+Enter") in table
    assert any(where == "Activity" and keys == "Ctrl+C" for where, _, keys in table)
    assert any(where == "Activity > Backups" and "Ctrl+Shift+R" in keys for where, _, keys in table)
    esc = [row for row in table if row[2] == "Esc"]
    assert esc == [("Window", "Cancel", "Esc")]  # one Esc, never ambiguous


def test_showing_activity_focuses_the_tab_in_front(qtbot):
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.show_view("activity")
    qtbot.waitUntil(lambda: window.activity_view.hasFocus())
    window.backups.show_backups()
    window.activity_view.setFocus()
    window.show_view("activity")
    qtbot.waitUntil(lambda: window.backups.view.table.hasFocus())


def test_view_menu_toggles_every_dock(qtbot):
    window = MainWindow()
    qtbot.addWidget(window)
    view_menu = next(
        a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "View"
    )
    actions = view_menu.actions()
    for dock in (window.nav_dock, window.problem_dock, window.activity_dock):
        assert dock.toggleViewAction() in actions


def test_window_has_the_app_icon(qtbot):
    window = MainWindow()
    qtbot.addWidget(window)
    assert not window.windowIcon().isNull()


# -- quitting mid-job -------------------------------------------------------------------------
def test_closing_while_jobs_run_waits_for_them_without_errors(qtbot, demo_home):
    window = _window(qtbot, [str(demo_home)])
    window.show()
    _loaded(qtbot, window)
    window.show_view("facts")
    window.navigator.select_session(DEMO_SESSION)
    window.open_path(str(demo_home))  # a reload and its indexing are running
    with qtbot.captureExceptions() as exceptions:
        window.close()
        assert window.wait_for_workers(10_000)
        qtbot.wait(100)
    assert exceptions == []


def test_docks_wait_behind_the_first_run_page_and_come_back(qtbot, fixtures_dir):
    window = _window(qtbot)
    assert window.nav_dock.isHidden() and window.problem_dock.isHidden()
    window.close()  # the hidden docks are not saved as the user's layout
    again = _window(qtbot, [str(fixtures_dir / "before-compaction.jsonl")])
    _loaded(qtbot, again)
    assert again.nav_dock.isVisible() and again.problem_dock.isVisible()


def test_main_window_fits_a_small_screen(qtbot):
    window = MainWindow()
    qtbot.addWidget(window)
    hint = window.minimumSizeHint()
    assert hint.width() <= 1024 and hint.height() <= 720  # 1366x768 laptops, with panels


def test_open_folder_and_transcript_buttons_ask_and_open(
    qtbot, monkeypatch, demo_home, fixtures_dir
):
    from PySide6.QtWidgets import QFileDialog

    asked = []
    monkeypatch.setattr(
        QFileDialog, "getExistingDirectory", lambda *a: asked.append("folder") or str(demo_home)
    )
    transcript = str(fixtures_dir / "before-compaction.jsonl")
    monkeypatch.setattr(
        QFileDialog, "getOpenFileName", lambda *a: asked.append("file") or (transcript, "")
    )
    window = _window(qtbot)
    window.first_run.folder_button.click()
    _loaded(qtbot, window)
    assert len(window.navigator.model.sessions()) == 12
    window.menu_actions.by_name["open_file"].trigger()  # File > Open Transcript… (Ctrl+Shift+O)
    qtbot.waitUntil(lambda: window.data is not None and window.data.discovery.kind == "transcript")
    assert asked == ["folder", "file"]
    assert [s.path for s in window.data.sessions] == [transcript]


def test_a_cancelled_file_dialog_opens_nothing(qtbot, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a: "")
    window = _window(qtbot)
    window.first_run.folder_button.click()
    assert window.load_job is None and window.showing_first_run
