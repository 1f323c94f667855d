from __future__ import annotations

import shutil
import time

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from app.main_window import MainWindow
from app.settings import AppSettings
from core.context.budget import budget_for
from core.transcript.replay import context_at
from tests.qt_read import legend_text
from widgets.common.record_model import RecordRole


def _open(qtbot, path, settings=None):
    window = MainWindow(settings)
    qtbot.addWidget(window)
    window.open_path(str(path))
    qtbot.waitUntil(lambda: window.data is not None, timeout=30000)
    return window


def _sessions(window):
    model = window.navigator.model
    return model.sessions()


def test_opens_a_folder_and_selects_the_newest_session(qtbot, fixtures_dir):
    window = _open(qtbot, fixtures_dir)
    assert len(_sessions(window)) == 2
    assert "2 sessions" in window.status.counts_label.text()
    assert not window.status.progress.isVisible() or window.status.task_label.text().startswith(
        "Indexing"
    )
    qtbot.waitUntil(lambda: window.inspector.session is not None, timeout=5000)
    session = window.inspector.session
    assert window.inspector.entry_id == session.leaf.id
    # the app state says the same: the data open, the session and entry selected
    assert window.state.data is window.data
    assert (window.state.session, window.state.entry) == (session.path, session.leaf.id)
    qtbot.waitUntil(lambda: window.timeline.timeline() is not None, timeout=10000)
    assert window.timeline.timeline().session_id == session.id
    assert window.message_view.entry_id == session.leaf.id
    budget = budget_for(session, model_id=window.inspector._model_id())
    assert window.gauge.headline_text().replace(",", "").find(str(budget.context_tokens)) >= 0


def test_clicking_an_entry_drives_every_view(qtbot, fixtures_dir):
    window = _open(qtbot, fixtures_dir / "before-compaction.jsonl")
    qtbot.waitUntil(lambda: window.inspector.session is not None, timeout=5000)
    session = window.inspector.session
    target = session.messages()[len(session.messages()) // 2]
    qtbot.waitUntil(lambda: window.timeline.timeline() is not None, timeout=10000)
    window.timeline.entry_activated.emit(target.id)
    assert window.message_view.entry_id == target.id == window.state.entry
    assert window.timeline.selected_entry() == target.id
    qtbot.waitUntil(lambda: not window.context_view.is_busy(), timeout=10000)
    assert len(window.context_view.rows()) == len(context_at(session, target.id))
    assert window.trim_view.parameters() is not None


def test_window_selector_recomputes_the_budget(qtbot, fixtures_dir):
    window = _open(qtbot, fixtures_dir / "before-compaction.jsonl")
    qtbot.waitUntil(lambda: window.inspector.budget is not None, timeout=5000)
    window.gauge.set_selected_window(128_000)
    window.gauge.window_changed.emit(128_000)
    assert window.inspector.budget.window == 128_000
    assert "128,000" in window.gauge.headline_text() or "128k" in window.gauge.headline_text()


def test_bad_path_is_reported_not_raised(qtbot, tmp_path):
    window = MainWindow()
    qtbot.addWidget(window)
    window.open_path(str(tmp_path / "missing"))
    qtbot.waitUntil(lambda: "Could not open" in window.status.place_label.text(), timeout=10000)
    assert "no such file or folder" in window.status.place_label.text()
    assert window.data is None


def test_problems_are_listed_with_file_and_line(qtbot, fixtures_dir, tmp_path):
    lines = (fixtures_dir / "large-session.jsonl").read_bytes().split(b"\n")
    (tmp_path / "s.jsonl").write_bytes(b"\n".join([*lines[:4], b"{broken", *lines[4:8]]) + b"\n")
    shutil.copy(fixtures_dir / "large-session.jsonl", tmp_path / "ok.jsonl")
    window = _open(qtbot, tmp_path)
    rows = [window.problems.record(r) for r in range(window.problems.rowCount())]
    assert any(p.line == 5 and p.file.endswith("s.jsonl") for p in rows)
    assert window.problem_view.model().index(0, 2).data() == str(rows[0].line)


def test_load_can_be_cancelled(qtbot, fixtures_dir, monkeypatch):
    from app import main_window as main_window_module
    from core.io.jobs import Cancelled

    def endless(path, *, progress, cancelled):  # type: ignore[no-untyped-def]
        progress(0, 1, "waiting")
        while not cancelled():
            time.sleep(0.01)
        raise Cancelled

    monkeypatch.setattr(main_window_module, "load_deferred", endless)
    window = MainWindow()
    qtbot.addWidget(window)
    window.open_path(str(fixtures_dir))
    job = window.load_job
    assert job is not None and window.status.cancel_button.isVisibleTo(window)
    qtbot.waitUntil(lambda: window.status.progress.format().startswith("waiting"), timeout=5000)
    window.cancel_load()
    qtbot.waitUntil(lambda: window.load_job is None, timeout=10_000)
    assert job.outcome == "cancelled"
    assert window.status.task_label.text() == "Loading cancelled" and window.data is None


def test_recent_places_and_layout_persist(qtbot, fixtures_dir):
    settings = AppSettings()
    window = _open(qtbot, fixtures_dir, settings)
    window.tabs.setCurrentIndex(2)
    window.splitter.setSizes([200, 150, 500])
    sizes = window.splitter.sizes()
    window.close()
    assert settings.recent[0] == str(fixtures_dir)
    assert settings.last_place == str(fixtures_dir)
    again = MainWindow(AppSettings())
    qtbot.addWidget(again)
    assert again.tabs.currentIndex() == 2
    assert again.splitter.sizes() == sizes
    labels = [a.text() for a in again.menu_actions.recent_menu.actions() if a.data()]
    assert labels and str(fixtures_dir) in labels[0]


def test_a_vanished_recent_place_is_dropped(qtbot, tmp_path):
    settings = AppSettings()
    gone = tmp_path / "gone"
    settings.add_recent(str(gone))
    window = MainWindow(settings)
    qtbot.addWidget(window)
    window.menu_actions.open_recent(str(gone))
    assert str(gone) not in settings.recent
    assert "no longer exists" in window.status.place_label.text()


def test_dropping_a_file_opens_it(qtbot, fixtures_dir):
    window = MainWindow()
    qtbot.addWidget(window)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(fixtures_dir / "large-session.jsonl"))])
    event = QDropEvent(
        QPointF(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dropEvent(event)
    qtbot.waitUntil(lambda: window.data is not None, timeout=20000)
    assert len(_sessions(window)) == 1


@pytest.mark.parametrize(
    ("name", "tab"),
    [
        ("message", 0),
        ("context", 1),
        ("recall", 2),
        ("recall lab", 3),
        ("trim", 4),
        ("compaction", 7),
        ("what-if", 8),
        ("openclaw", 9),
    ],
)
def test_every_view_has_a_shortcut(qtbot, name, tab):
    window = MainWindow()
    qtbot.addWidget(window)
    action = window.menu_actions.by_name[f"view_{name}"]
    assert not action.shortcut().isEmpty()
    action.trigger()
    assert window.tabs.currentIndex() == tab
    rows = [(a, k) for where, a, k in window.menu_actions.shortcut_table() if where == "Window"]
    assert len({k for _, k in rows}) == len(rows)  # no window shortcut used twice


def test_find_focuses_the_session_filter(qtbot):
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    qtbot.waitActive(window)
    window.menu_actions.by_name["find"].trigger()
    qtbot.waitUntil(window.navigator.filter_box.hasFocus, timeout=2000)


def test_theme_switch_applies_a_dark_palette(qtbot):
    from PySide6.QtWidgets import QApplication

    from widgets.common.palette import is_dark

    window = MainWindow()
    qtbot.addWidget(window)
    app = QApplication.instance()
    old = app.palette()
    try:
        window.menu_actions.by_name["theme_dark"].trigger()
        assert is_dark(app.palette()) and window.settings.theme == "dark"
        window.menu_actions.by_name["theme_light"].trigger()
        assert not is_dark(app.palette())
    finally:
        app.setPalette(old)


def test_about_lists_versions(qtbot):
    from app.about import about_text, versions

    assert {"memlens", "Qt", "PySide6", "numpy", "pyqtgraph"} <= set(versions())
    assert "memlens" in about_text()
    window = MainWindow()
    qtbot.addWidget(window)
    window.menu_actions.by_name["about"].trigger()


def test_navigator_records_are_session_summaries(qtbot, fixtures_dir):
    window = _open(qtbot, fixtures_dir)
    agent = window.navigator.model.index(0, 0)
    rec = window.navigator.model.index(0, 0, agent).data(RecordRole)
    assert rec in window.data.summaries


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory):
    from core.demo.build import write_demo

    return write_demo(tmp_path_factory.mktemp("win") / "home", segments=200).root


def test_recall_block_feeds_the_gauge_and_context(qtbot, demo_home):
    window = _open(qtbot, demo_home)
    qtbot.waitUntil(lambda: window.recall_data is not None, timeout=30000)
    assert window.recall_data.store is not None
    session = window.inspector.session
    user = next(e for e in reversed(session.messages()) if e.message.role == "user")
    window.inspector.show_entry(user.id)
    seg = next(s for s in window.recall_data.store.live() if s.session_id == session.id)
    window.recall_view.query_box.setText(seg.content)
    window.recall_view.refresh()
    qtbot.waitUntil(  # the recall runs in a job: its block arrives later
        lambda: (
            window.recall_view.block_tokens() > 0
            and window.inspector.recalled_tokens == window.recall_view.block_tokens()
        ),
        timeout=5000,
    )
    assert window.inspector.recalled_block == window.recall_view.block_text()
    qtbot.waitUntil(lambda: not window.context_view.is_busy(), timeout=10000)
    assert any(r.origin == "recalled" for r in window.context_view.rows())
    assert "recalled memory" in legend_text(window.gauge, "recalled")


def test_why_not_explains_the_selected_message(qtbot, demo_home):
    window = _open(qtbot, demo_home)
    qtbot.waitUntil(lambda: window.recall_data is not None, timeout=30000)
    session = window.inspector.session
    user = next(e for e in reversed(session.messages()) if e.message.role == "user")
    window.inspector.show_entry(user.id)
    window.menu_actions.by_name["why_not"].trigger()
    assert window.current_view() is window.recall_view
    text = window.recall_view.why_box.label.text()
    assert "segment" in text and ("score" in text or "not in the warm store" in text), text


def test_trim_result_is_shown_against_the_gauges_figure(qtbot, fixtures_dir):
    window = _open(qtbot, fixtures_dir / "before-compaction.jsonl")
    qtbot.waitUntil(lambda: window.trim_view.result() is not None, timeout=10000)
    result = window.trim_view.result()
    expected = window.inspector.budget.context_tokens - (result.tokens_before - result.tokens_after)
    assert str(f"{expected:,}") in window.gauge.comparison_text()


def test_trim_comparison_follows_the_gauges_figure_and_the_selected_point(qtbot, fixtures_dir):
    window = _open(qtbot, fixtures_dir / "before-compaction.jsonl")
    qtbot.waitUntil(lambda: window.trim_view.result() is not None, timeout=10000)
    result = window.trim_view.result()
    saved = result.tokens_before - result.tokens_after
    before = window.inspector.budget.context_tokens
    window.inspector._on_block_changed(1_000)  # a recalled block arrives after the trim
    after = window.inspector.budget.context_tokens
    assert after != before  # the figure changed, and the comparison with it
    assert f"{max(after - saved, 0):,}" in window.gauge.comparison_text()
    session = window.inspector.session
    window.inspector.show_entry(session.messages()[10].id)  # another point: no stale bar
    assert window.gauge.comparison_text() == ""
    qtbot.waitUntil(lambda: window.gauge.comparison_text() != "", timeout=10000)


def test_the_what_if_window_persists(qtbot, fixtures_dir):
    settings = AppSettings()
    window = _open(qtbot, fixtures_dir / "before-compaction.jsonl", settings)
    window.gauge.set_selected_window(128_000)
    window.gauge.window_changed.emit(128_000)
    window.close()
    again = MainWindow(AppSettings())
    qtbot.addWidget(again)
    assert again.gauge.selected_window() == 128_000
    assert again.inspector.window_override == 128_000


def test_two_windows_load_side_by_side(qtbot, fixtures_dir):
    """The app's job runner is shared: one window's load never drops another's."""
    first, second = MainWindow(), MainWindow()
    qtbot.addWidget(first)
    qtbot.addWidget(second)
    first.open_path(str(fixtures_dir / "before-compaction.jsonl"))
    second.open_path(str(fixtures_dir / "large-session.jsonl"))
    qtbot.waitUntil(lambda: first.data is not None and second.data is not None, timeout=30000)
    assert [s.path for s in first.data.sessions] == [str(fixtures_dir / "before-compaction.jsonl")]
    assert [s.path for s in second.data.sessions] == [str(fixtures_dir / "large-session.jsonl")]


def test_a_live_redraw_replays_the_budget_in_the_job_not_on_the_gui_thread(
    qtbot, fixtures_dir, monkeypatch
):
    """The soak saw ``budget_for`` (a context replay) stall the GUI on every live batch."""
    import threading

    import app.inspector as inspector_module

    window = _open(qtbot, fixtures_dir / "before-compaction.jsonl")
    qtbot.waitUntil(lambda: window.timeline.timeline() is not None, timeout=10000)
    threads: list[str] = []
    real = inspector_module.budget_for

    def spy(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(inspector_module, "budget_for", spy)
    drawn = window.timeline.timeline()
    window.inspector.session_grew()  # what live mode calls after appending to the session
    qtbot.waitUntil(lambda: window.timeline.timeline() is not drawn, timeout=10000)
    assert threads and threading.main_thread().name not in threads
