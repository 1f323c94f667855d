"""The what-if panel on real sessions: what it draws is the replay's, presets, cancel, errors."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

from core.compaction.whatif import replay_whatif
from core.compaction.whatif_report import preset_window, whatif_settings
from core.transcript import load_transcript
from widgets.whatif.view import WhatIfView


@pytest.fixture
def session(fixtures_dir, tmp_path):
    path = tmp_path / "before-compaction.jsonl"
    shutil.copy(fixtures_dir / "before-compaction.jsonl", path)
    return load_transcript(path)


@pytest.fixture
def view(qtbot):
    v = WhatIfView()
    qtbot.addWidget(v)
    v.audit_check.setChecked(False)  # the loss audit has its own tests: test_whatif_loss.py
    v.resize(1200, 700)
    v.show()
    return v


def _items(view):
    return {
        item.objectName(): item
        for item in view.chart.scene().items()
        if hasattr(item, "objectName") and item.objectName()
    }


def _shown(qtbot, view, session, config=None):
    with qtbot.waitSignal(view.result_ready, timeout=30_000) as blocker:
        view.set_session(session, config)
    return blocker.args[0]


def _same(a, b):
    assert [(c.entry_id, c.tokens_before, c.tokens_after) for c in a.simulated] == [
        (c.entry_id, c.tokens_before, c.tokens_after) for c in b.simulated
    ]
    assert a.simulated_context == b.simulated_context
    assert a.real_context == b.real_context


def test_the_plots_are_the_replays_curves_and_compactions(qtbot, view, session):
    result = _shown(qtbot, view, session)
    settings, own = whatif_settings(session)
    _same(result, replay_whatif(session, settings, own=own.compaction))
    items = _items(view)
    assert np.array_equal(items["real_curve"].getData()[1], result.real_context)
    assert np.array_equal(items["simulated_curve"].getData()[1], result.simulated_context)
    assert len(items["real_markers"].points()) == len(result.real) == 2
    assert len(items["simulated_markers"].points()) == len(result.simulated)
    assert len(items["simulated_overflows"].points()) == len(result.overflows)
    assert len(items["simulated_flushes"].points()) == len(result.flushes)
    assert items["real_window_line"].value() == result.own.window
    assert items["simulated_compaction_line"].value() == result.settings.trigger
    # the table holds both sides, in path order
    model = view.table.model()
    assert model.rowCount() == len(result.real) + len(result.simulated)
    kinds = [model.index(r, 0).data() for r in range(model.rowCount())]
    assert kinds.count("as it ran") == 2
    assert "2 compactions as it ran" in view.summary_label.text()


def test_the_128k_preset_is_what_the_core_replay_gives(qtbot, view, session):
    _shown(qtbot, view, session)
    with qtbot.waitSignal(view.result_ready, timeout=30_000) as blocker:
        combo = view.preset_combo
        combo.setCurrentIndex(combo.findData("128k"))
    result = blocker.args[0]
    assert view.window_spin.value() == preset_window("128k") == 128_000
    assert combo.currentText() == "128k"
    settings, own = whatif_settings(session, model="128k")
    expected = replay_whatif(session, settings, own=own.compaction)
    _same(result, expected)
    assert len(result.simulated) > len(result.real)
    assert "with a 128k window" in view.summary_label.text()
    assert "128k preset" in view.detail_label.text()
    points = _items(view)["simulated_markers"].points()
    assert len(points) == len(expected.simulated)
    # "Own settings" goes back to the session's own window
    with qtbot.waitSignal(view.result_ready, timeout=30_000) as blocker:
        view.own_button.click()
    assert blocker.args[0].settings.compaction.window == own.compaction.window
    assert view.preset_combo.currentIndex() == 0


def test_a_changed_setting_reruns_after_a_pause(qtbot, view, session):
    _shown(qtbot, view, session)
    with qtbot.waitSignal(view.result_ready, timeout=30_000) as blocker:
        view.window_spin.setValue(100_000)
    assert blocker.args[0].settings.compaction.window == 100_000
    assert view.result() is blocker.args[0]


def test_cancel_stops_the_replay_and_keeps_nothing(qtbot, view, session):
    view.set_session(session)
    assert view.cancel_button.isEnabled()
    view.cancel_button.click()  # the same turn of the event loop: its result cannot be in
    assert view.state_label.text() == "Cancelled"
    assert not view.cancel_button.isEnabled()
    with qtbot.assertNotEmitted(view.result_ready, wait=600):
        pass
    assert view.result() is None
    assert view.table.model().rowCount() == 0
    with qtbot.waitSignal(view.result_ready, timeout=30_000):
        qtbot.keyClick(view.run_button, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert view.result() is not None


def test_settings_the_agent_would_refuse_are_a_message(qtbot, view, session):
    result = _shown(qtbot, view, session)
    view.reserve_spin.setValue(view.window_spin.value())
    view.run()
    assert "Cannot replay" in view.detail_label.text()
    assert "leaves nothing" in view.detail_label.text()
    assert view.result() is result  # the last good replay stays drawn


def test_a_row_and_a_marker_show_their_entry(qtbot, view, session):
    result = _shown(qtbot, view, session)
    table = view.table
    first = table.model().index(0, 1)
    rect = table.visualRect(first)
    with qtbot.waitSignal(view.entry_activated) as blocker:
        qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == [min(result.real + result.simulated, key=lambda c: c.position).entry_id]
    target = result.real[1]
    plot = view.real_plot
    scene = plot.vb.mapViewToScene(QPointF(target.position - 0.5, target.tokens_before))
    at = view.chart.mapFromScene(scene)
    with qtbot.waitSignal(view.entry_activated) as blocker:
        qtbot.mouseClick(view.chart.viewport(), Qt.MouseButton.LeftButton, pos=at)
    assert blocker.args == [target.entry_id]


def test_no_session_clears_the_view(qtbot, view, session):
    _shown(qtbot, view, session)
    view.set_session(None)
    assert view.result() is None
    assert view.summary_label.text() == "No session"
    assert not view.run_button.isEnabled()
    x = _items(view)["real_curve"].getData()[0]
    assert x is None or len(x) == 0


def test_the_app_tab_replays_the_selected_session_and_navigates(qtbot, tmp_path):
    from app.main_window import MainWindow
    from core.demo.build import write_demo
    from core.transcript.replay import compactions

    root = write_demo(tmp_path / "home", now_ms=1_780_000_000_000, segments=60).root
    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1366, 768)
    window.show()
    window.open_path(str(root))
    qtbot.waitUntil(lambda: window.recall_data is not None, timeout=60_000)
    data = window.data
    with_compactions = [
        s for s in (data.session(x.path) for x in data.summaries if x.path not in data.pending)
        if compactions(s)
    ]  # fmt: skip
    session = with_compactions[0]
    assert window.navigator.select_session(session.path)
    qtbot.waitUntil(lambda: window.state.session == session.path, timeout=10_000)
    view = window.whatif_view
    action = window.menu_actions.by_name["view_what-if"]
    assert action.shortcut().toString() == "Ctrl+Shift+I"
    with qtbot.waitSignal(view.result_ready, timeout=30_000) as blocker:
        action.trigger()  # the replay waits for its tab to be shown
    assert window.tabs.tabText(window.tabs.currentIndex()) == "What-if"
    result = blocker.args[0]
    assert result.session_id == session.id and len(result.real) == len(compactions(session))
    last = view.table.model().index(view.table.model().rowCount() - 1, 0)
    view.table.activated.emit(last)
    wanted = max(result.real + result.simulated, key=lambda c: c.position).entry_id
    assert window.state.entry == wanted
