"""TimelineView under live mode: redraws throttled, unchanged items not fed again."""

from __future__ import annotations

import itertools

import pytest
from PySide6.QtWidgets import QGraphicsItem

from bench.bench_timeline import synthetic_session
from core.timeline.arrays import build_timeline
from core.transcript import parse_transcript
from tests.qt_read import plot_items
from widgets.timeline.view import TimelineView


@pytest.fixture(scope="module")
def grown(fixtures_dir):
    """One session's timelines as it grows by one message at a time (live appends)."""
    lines = (fixtures_dir / "before-compaction.jsonl").read_bytes().splitlines(keepends=True)
    out: list = []
    for k in range(len(lines) - 8, len(lines) + 1):
        tl = build_timeline(parse_transcript(b"".join(lines[:k]), "grown.jsonl"))
        if not out or len(tl) > len(out[-1]):
            out.append(tl)
    assert len(out) >= 5 and all(len(b) == len(a) + 1 for a, b in itertools.pairwise(out))
    return out[-5:]


@pytest.fixture
def view(qtbot):
    w = TimelineView()
    qtbot.addWidget(w)
    w.resize(1000, 500)
    shown: list[object] = []
    real = w._show
    w._show = lambda tl, *a, **k: (shown.append(tl), real(tl, *a, **k))[1]
    w.shown = shown
    return w


def test_live_redraws_are_throttled_and_the_newest_wins(qtbot, view, grown):
    first, second, *held, last = grown
    view.set_timeline(first)
    view.set_timeline(second, keep_view=True)  # the first live redraw: at once
    assert view.timeline() is second
    for tl in [*held, last]:
        view.set_timeline(tl, keep_view=True)  # within the interval: held
    assert view.timeline() is second
    qtbot.waitUntil(lambda: view.timeline() is last, timeout=5000)
    drawn = [first, second, last]  # the held ones in between never drawn
    assert len(view.shown) == 3 and all(a is b for a, b in zip(view.shown, drawn, strict=True))
    qtbot.waitUntil(lambda: not view._redraw.isActive(), timeout=5000)
    assert len(view.shown) == 3


def test_a_held_redraw_keeps_the_selection(qtbot, view, grown):
    view.set_timeline(grown[0])
    view.set_timeline(grown[1], keep_view=True)
    target = grown[1].entry_ids[len(grown[1]) // 2]
    assert view.select_entry(target)
    view.set_timeline(grown[2], keep_view=True)
    qtbot.waitUntil(lambda: view.timeline() is grown[2], timeout=5000)
    assert view.selected_entry() == target
    assert all(line.isVisible() for line in view._select_lines)


def test_another_session_or_a_clear_drops_the_held_redraw(qtbot, view, grown):
    other = build_timeline(synthetic_session(40))
    assert other.session_id != grown[0].session_id or len(other) != len(grown[0])
    view.set_timeline(grown[0])
    view.set_timeline(grown[1], keep_view=True)
    view.set_timeline(grown[2], keep_view=True)  # held
    view.set_timeline(other)  # a new selection: at once, and the held one is dropped
    assert view.timeline() is other
    qtbot.waitUntil(lambda: not view._redraw.isActive(), timeout=5000)
    assert view.timeline() is other and all(t is not grown[2] for t in view.shown)
    view.set_timeline(grown[0])
    view.set_timeline(grown[1], keep_view=True)
    view.set_timeline(grown[2], keep_view=True)  # held
    view.clear()
    qtbot.waitUntil(lambda: not view._redraw.isActive(), timeout=5000)
    assert view.timeline() is None and all(t is not grown[2] for t in view.shown)


def test_only_items_whose_data_changed_are_fed(qtbot, view, grown, monkeypatch):
    view.set_timeline(grown[0])
    fed: list[str] = []
    for name, item in plot_items(view).items():
        if hasattr(item, "setData") and hasattr(item, "getData"):
            real = item.setData
            monkeypatch.setattr(
                item, "setData", lambda *a, _n=name, _r=real, **k: (fed.append(_n), _r(*a, **k))
            )
    view.set_timeline(grown[1], keep_view=True)  # one more message
    bars = [n for n in fed if n.startswith("bars:")]
    assert 1 <= len(bars) <= 2, fed  # the new message's category (and its outline's)
    assert not [n for n in fed if n.endswith("_points")], fed  # the markers did not move
    view.clear()
    view.set_timeline(grown[1])  # after a clear everything is fed again
    assert sum(n.startswith("bars:") for n in fed) > len(bars) + 2


def test_axes_are_cached_as_pixmaps(view):
    for name in ("context_plot", "bar_plot"):
        plot = plot_items(view)[name]
        for side in ("left", "bottom"):
            mode = plot.getAxis(side).cacheMode()
            assert mode == QGraphicsItem.CacheMode.DeviceCoordinateCache, (name, side)


def test_a_higher_context_peak_moves_only_the_compaction_lines(view, grown, monkeypatch):
    tl = grown[-1]
    assert tl.compactions  # the fixture has compactions: their lines span the peak
    markers = view._markers
    markers.show(tl, tl.thresholds, 100_000.0)
    fed: list[str] = []
    for name in ("ctx_lines", "bar_lines", "compaction_points", "flush_points"):
        item = getattr(markers, name)
        real = item.setData
        monkeypatch.setattr(
            item, "setData", lambda *a, _n=name, _r=real, **k: (fed.append(_n), _r(*a, **k))
        )
    markers.show(tl, tl.thresholds, 100_000.0)
    assert fed == []
    markers.show(tl, tl.thresholds, 150_000.0)
    assert fed == ["ctx_lines", "bar_lines"]
    top = max(markers.ctx_lines.getData()[1])
    assert top == 1_500_000.0
