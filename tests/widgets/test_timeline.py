"""TimelineView: feed it timelines of real transcripts and read what the plots show."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QLabel

from bench.bench_timeline import synthetic_session
from core.context.budget import budget_for
from core.context.terms import THRESHOLD_TERMS
from core.demo.build import write_demo
from core.timeline.arrays import Category, build_timeline
from core.transcript import load_transcript, parse_transcript
from tests.qt_read import cut_point, plot_items
from widgets.common.jobs import JobRunner
from widgets.timeline.style import short_tokens
from widgets.timeline.view import TimelineView
from widgets.timeline.worker import timeline_job

NOW = 1_760_000_000_000


@pytest.fixture(scope="module")
def before(fixtures_dir):
    session = load_transcript(fixtures_dir / "before-compaction.jsonl")
    return session, build_timeline(session), budget_for(session)


@pytest.fixture(scope="module")
def branched(tmp_path_factory):
    home = tmp_path_factory.mktemp("demo") / "home"
    write_demo(home, now_ms=NOW, segments=300)
    for path in sorted(Path(home).glob("agents/*/sessions/*.jsonl")):
        session = load_transcript(path)
        if session.branch_points():
            return session, build_timeline(session)
    raise AssertionError("the demo data has no branched session")


@pytest.fixture(scope="module")
def big():
    return build_timeline(synthetic_session(5000))


@pytest.fixture
def view(qtbot):
    w = TimelineView()
    qtbot.addWidget(w)
    w.resize(1400, 700)
    w.show()
    qtbot.waitExposed(w)
    return w


def _xy(item):
    x, y = item.getOriginalDataset()
    return (np.zeros(0), np.zeros(0)) if x is None else (x, y)


def _drawn(item):
    ds = item._getDisplayDataset()  # what the next paint draws (clipped, downsampled)
    return 0 if ds is None else len(ds.x)


def _info(view):
    return view.findChild(QLabel, "timeline-info").text()


def _legend(view):
    return view.findChild(QLabel, "timeline-legend").text()


def _to_widget(view, x, y=0.0):
    """Where message position *x* (and *y* tokens) sits in the bar plot, in view pixels."""
    scene = plot_items(view)["bar_plot"].vb.mapViewToScene(QPointF(x, y))
    return QPointF(view.graphics_view().mapFromScene(scene))


def _viewport_point(view, pos):
    tl = view.timeline()
    point = _to_widget(view, float(pos), float(tl.tokens.max()) / 3)
    return view.graphics_view().viewport().mapFrom(view.graphics_view(), point.toPoint())


def test_bars_curve_and_markers(view, before):
    _, tl, budget = before
    view.set_timeline(tl, budget)
    items = plot_items(view)
    for cat in Category:
        x, y = _xy(items[f"bars:{cat.name.lower()}"])
        mask = tl.category == cat
        assert len(x) == 4 * mask.sum()
        assert np.array_equal(y[1::4], tl.tokens[mask])  # bar tops
        assert np.allclose(x[1::4] + 0.4, tl.x[mask])  # bar centres
    assert len(_xy(items["bars:tool_result"])[0]) == 4 * 448
    cx, cy = _xy(items["context"])
    assert np.array_equal(cx, tl.path_x) and np.array_equal(cy, tl.path_context)
    assert np.array_equal(_xy(items["estimate"])[1], tl.path_estimated)
    # Two compactions: the curve drops at both, markers labelled before -> after.
    labels = [lab for lab in items["compaction_labels"] if lab.isVisible()]
    assert [lab.toPlainText().strip() for lab in labels] == [
        "175,004 -> 16,652",
        "185,014 -> 17,555",
    ]
    px, py = items["compaction_points"].getData()
    assert list(py) == [175_004, 185_014] and list(px) == [m.x for m in tl.compactions]
    # Threshold lines at the budget's values, labelled.
    expected = {
        "window": ("context window", budget.window),
        "compaction": ("compaction trigger", budget.compaction_trigger),
        "flush": ("memory flush", budget.flush_threshold),
        "safe_limit": ("safeLimit", budget.safe_limit),
    }
    for key, (label, tokens) in expected.items():
        line = items[f"threshold:{key}"]
        assert line.isVisible() and line.value() == tokens
        text = items[f"threshold_label:{key}"].toPlainText()
        assert text == f"{THRESHOLD_TERMS[key].short} {short_tokens(tokens)}"
        assert items[f"threshold_label:{key}"].toolTip().startswith(f"{label}: {tokens:,} tokens")
    assert "990 messages" in _info(view) and "2 compactions" in _info(view)


def test_legend_names_every_role(view):
    text = _legend(view)
    for name in ("user", "assistant", "thinking", "tool result", "bash", "custom", "context"):
        assert name in text


def test_thinking_stacked_in_assistant_bars(view, branched):
    _, tl = branched
    view.set_timeline(tl)
    x, y = _xy(plot_items(view)["thinking"])
    mask = tl.thinking_share > 0
    assert mask.sum() > 0 and len(x) == 4 * mask.sum()
    assert np.allclose(y[1::4], tl.thinking_tokens[mask])
    assert np.all(y[1::4] <= tl.tokens[mask])  # inside its assistant bar
    assert set(tl.category[mask]) == {Category.ASSISTANT}


def test_branch_shown(view, branched):
    _, tl = branched
    view.set_timeline(tl)
    items = plot_items(view)
    off = ~tl.on_path
    assert off.sum() > 0
    x, _ = _xy(items["off_path"])
    assert len(x) == 4 * off.sum()
    sx, sy = _xy(items["off_path_context"])
    assert len(sx) == 2 * off.sum()  # one segment per abandoned message, from its parent
    assert sx[0] == tl.branches[0].x and sy[0] == tl.branches[0].context
    labels = [lab.toPlainText().strip() for lab in items["branch_labels"] if lab.isVisible()]
    assert labels == ["fork: 2 branches"]
    assert "forks" in _info(view) and f"{int(off.sum())} messages off" in _info(view)


def test_hover_emits_entry_and_shows_summary(qtbot, view, before):
    _, tl, _ = before
    view.set_timeline(tl)
    target = _viewport_point(view, 120)
    with qtbot.waitSignal(view.entry_hovered, timeout=2000) as blocker:
        qtbot.mouseMove(view.graphics_view().viewport(), target)
    assert blocker.args == [tl.entry_ids[120]]
    assert tl.summary(120) in _info(view)
    assert f"#{tl.entry_index[120]}" in _info(view)
    assert all(line.isVisible() and line.value() == 120 for line in plot_items(view)["hover_lines"])


def test_click_activates_and_selects(qtbot, view, before):
    _, tl, _ = before
    view.set_timeline(tl)
    target = _viewport_point(view, 400)
    with qtbot.waitSignal(view.entry_activated, timeout=2000) as blocker:
        qtbot.mouseClick(view.graphics_view().viewport(), Qt.MouseButton.LeftButton, pos=target)
    assert blocker.args == [tl.entry_ids[400]]
    assert view.selected_entry() == tl.entry_ids[400]
    assert all(line.value() == 400 for line in plot_items(view)["select_lines"])


def test_select_entry_scrolls_into_view(view, big):
    view.set_timeline(big)
    plot = plot_items(view)["context_plot"]
    plot.setXRange(0, 100, padding=0)
    assert view.select_entry(big.entry_ids[4000])
    x0, x1 = plot.vb.viewRange()[0]
    assert x0 <= 4000 <= x1 and x1 - x0 == pytest.approx(100, rel=0.05)
    assert view.selected_entry() == big.entry_ids[4000]
    assert big.summary(4000) in _info(view)
    assert not view.select_entry("no-such-entry")
    assert view.selected_entry() is None
    assert not any(line.isVisible() for line in plot_items(view)["select_lines"])


def test_5000_messages_downsampled_and_clipped(qtbot, view, big):
    view.set_timeline(big)
    view.grab()
    items = plot_items(view)
    bars = items["bars:tool_result"]
    original = len(_xy(bars)[0])
    assert original > 8000
    assert _drawn(bars) < original  # peak-downsampled when zoomed out
    items["context_plot"].setXRange(2000, 2200, padding=0)
    view.grab()
    assert _drawn(bars) < 4 * 260  # clipped to the 200 messages in view
    assert _drawn(items["context"]) < 300
    # The bar axis follows the tallest bar in view, not the whole session.
    top = items["bar_plot"].vb.viewRange()[1][1]
    assert top == pytest.approx(big.tokens[2000:2202].max() * 1.08, rel=0.02)


def test_compaction_labels_never_overlap(view, big):
    view.resize(960, 500)
    view.set_timeline(big)
    view.grab()
    shown = [lab for lab in plot_items(view)["compaction_labels"] if lab.isVisible()]
    assert 0 < len(shown) <= len(big.compactions)
    view.resize(600, 500)
    view.grab()
    shown = [lab for lab in plot_items(view)["compaction_labels"] if lab.isVisible()]
    assert 0 < len(shown) < len(big.compactions)  # some hidden at this width
    rects = [lab.sceneBoundingRect() for lab in shown]
    for i, a in enumerate(rects):
        assert all(not a.intersects(b) for b in rects[i + 1 :])
    plot_items(view)["context_plot"].setXRange(0, 800, padding=0)
    view.grab()
    in_view = [m for m in big.compactions if 0 <= m.x <= 700]
    visible = [lab for lab in plot_items(view)["compaction_labels"] if lab.isVisible()]
    assert len(visible) >= len(in_view) >= 1


def test_palette_followed(view, before):
    _, tl, _ = before
    view.set_timeline(tl)
    palette = QPalette()
    palette.setColor(QPalette.ColorRole.Base, QColor("#16171a"))
    palette.setColor(QPalette.ColorRole.Text, QColor("#e6e6e6"))
    view.setPalette(palette)
    assert view.graphics_view().backgroundBrush().color() == QColor("#16171a")
    assert plot_items(view)["context"].opts["pen"].color() == QColor("#e6e6e6")
    axis = plot_items(view)["bar_plot"].getAxis("left")
    assert axis.textPen().color() == QColor("#e6e6e6")


def test_clear(view, before):
    _, tl, budget = before
    view.set_timeline(tl, budget)
    view.select_entry(tl.entry_ids[5])
    view.clear()
    items = plot_items(view)
    assert view.timeline() is None and view.selected_entry() is None
    assert len(_xy(items["bars:assistant"])[0]) == 0 and len(_xy(items["context"])[0]) == 0
    assert not any(lab.isVisible() for lab in items["compaction_labels"])
    assert not items["threshold:window"].isVisible()
    assert _info(view) == "No session"
    assert not view.select_entry(tl.entry_ids[5])


def test_thresholds_from_timeline_without_budget(view, before):
    session, _, budget = before
    view.set_timeline(build_timeline(session, budget))
    assert {t.key for t in view.thresholds()} == {"window", "compaction", "flush", "safe_limit"}
    view.set_timeline(build_timeline(session))
    assert view.thresholds() == ()
    assert not plot_items(view)["threshold:window"].isVisible()


def test_worker_builds_off_the_gui_thread(qtbot, before):
    session, tl, budget = before
    runner = JobRunner()
    got = []
    with qtbot.waitSignal(runner.ended, timeout=10_000):
        runner.submit("timeline", timeline_job(session, lambda _s: budget), done=got.append)
    built, used = got[0]
    assert built.entry_ids == tl.entry_ids and len(built.thresholds) == 4 and used is budget


def test_map_to_widget_round_trip(view, before):
    _, tl, _ = before
    view.set_timeline(tl)
    point = _to_widget(view, 300.0, 0.0)
    scene = view.graphics_view().mapToScene(point.toPoint())
    back = plot_items(view)["bar_plot"].vb.mapSceneToView(QPointF(scene))
    assert back.x() == pytest.approx(300, abs=0.5)


def test_empty_session(view):
    header = b'{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z"}\n'
    view.set_timeline(build_timeline(parse_transcript(header, "empty.jsonl")))
    view.grab()
    assert _info(view) == "No messages in this session"
    assert len(_xy(plot_items(view)["context"])[0]) == 0


def test_cut_point_is_marked_and_removed(qtbot, fixtures_dir):
    from core.timeline.arrays import build_timeline
    from core.transcript import load_transcript
    from widgets.timeline.view import TimelineView

    session = load_transcript(fixtures_dir / "before-compaction.jsonl")
    view = TimelineView()
    qtbot.addWidget(view)
    tl = build_timeline(session)
    view.set_timeline(tl)
    target = tl.entry_ids[len(tl) // 2]
    assert view.set_cut_point(target)
    assert cut_point(view) == target
    lines = view._cut_lines
    assert all(line.isVisible() and line.value() == tl.position(target) for line in lines)
    view.set_timeline(build_timeline(session))  # a rebuild keeps the mark
    assert cut_point(view) == target
    assert not view.set_cut_point("")
    assert cut_point(view) is None and not any(line.isVisible() for line in lines)
    view.clear()
    assert not view.set_cut_point(target)  # no timeline yet: remembered, drawn later
    view.set_timeline(tl)
    assert all(line.isVisible() and line.value() == tl.position(target) for line in lines)


def test_a_live_rebuild_keeps_the_users_zoom(qtbot, fixtures_dir):
    from core.timeline.arrays import build_timeline
    from core.transcript import load_transcript
    from widgets.timeline.view import TimelineView

    session = load_transcript(fixtures_dir / "before-compaction.jsonl")
    view = TimelineView()
    qtbot.addWidget(view)
    view.resize(900, 400)
    tl = build_timeline(session)
    view.set_timeline(tl)
    view._ctx_plot.setXRange(100, 200, padding=0)
    view.set_timeline(build_timeline(session), keep_view=True)
    x0, x1 = view._ctx_plot.vb.viewRange()[0]
    assert abs(x0 - 100) < 1 and abs(x1 - 200) < 1
    view.set_timeline(build_timeline(session))  # a fresh selection shows everything
    x0, x1 = view._ctx_plot.vb.viewRange()[0]
    assert x0 < 0 and x1 > len(tl) - 1


def test_threshold_lines_are_made_with_the_view_hidden(qtbot):
    from widgets.timeline.style import THRESHOLD_STYLES

    view = TimelineView()
    qtbot.addWidget(view)
    lines = view._markers.thresholds
    assert set(lines) == set(THRESHOLD_STYLES)  # not made when the first session arrives
    assert not any(line.isVisible() for line in lines.values())
