"""Issue 17 on the timeline and the gauge: labels in view, one name per quantity, #N axis.

Every assertion reads what the widgets show: label items and their rectangles in the
scene, axis tick strings, the info line, the gauge's headline and tooltips.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QImage, QPainter, QPalette
from PySide6.QtWidgets import QLabel

from core.context.breakdown import breakdown_at
from core.context.budget import budget_for
from core.context.terms import CONTEXT_TOKENS, README_THRESHOLDS, THRESHOLD_TERMS
from core.timeline.arrays import build_timeline
from core.transcript import load_transcript, parse_transcript
from tests.core.build import assistant, entry, lines, user
from tests.qt_read import gauge_canvas, plot_items
from widgets.budget.gauge import BudgetGauge
from widgets.timeline.view import TimelineView

THRESHOLD_KEYS = ("window", "compaction", "flush", "safe_limit")


@pytest.fixture(scope="module")
def before(fixtures_dir):
    session = load_transcript(fixtures_dir / "before-compaction.jsonl")
    budget = budget_for(session)
    return session, build_timeline(session, budget), budget


@pytest.fixture(scope="module")
def overestimated():
    """A session whose chars/4 estimate (~1,000) exceeds what the provider reported (100)."""
    text = "check the build and run the tests " * 118
    objs = [entry(1, None, user(text)), entry(2, "00000001", assistant("ok", 100))]
    return parse_transcript(("\n".join(lines(objs)) + "\n").encode(), "over.jsonl")


@pytest.fixture
def view(qtbot):
    w = TimelineView()
    qtbot.addWidget(w)
    w.resize(1400, 700)
    w.show()
    qtbot.waitExposed(w)
    return w


@pytest.fixture
def gauge(qtbot):
    g = BudgetGauge()
    qtbot.addWidget(g)
    g.resize(900, 140)
    g.show()
    qtbot.waitExposed(g)
    return g


def _dark(view):
    palette = QPalette()
    palette.setColor(QPalette.ColorRole.Base, QColor("#16171a"))
    palette.setColor(QPalette.ColorRole.Window, QColor("#1e1f22"))
    palette.setColor(QPalette.ColorRole.Text, QColor("#e6e6e6"))
    palette.setColor(QPalette.ColorRole.WindowText, QColor("#e6e6e6"))
    view.setPalette(palette)


def _vb_rect(view) -> QRectF:
    return plot_items(view)["context_plot"].vb.sceneBoundingRect()


def _inside(inner: QRectF, outer: QRectF) -> bool:
    return outer.adjusted(-0.5, -0.5, 0.5, 0.5).contains(inner)


def _threshold_labels(view):
    items = plot_items(view)
    return {k: items[f"threshold_label:{k}"] for k in THRESHOLD_KEYS}


def _curve_range(view, x0: float, x1: float) -> tuple[float, float]:
    """Lowest and highest token value any drawn context curve takes over [x0, x1]."""
    tl = view.timeline()
    lo, hi = np.inf, -np.inf
    for xs, ys in ((tl.path_x, tl.path_context), (tl.path_x, tl.path_estimated)):
        keep = ~np.isnan(ys)
        xs, ys = xs[keep], ys[keep]
        inside = ys[(xs >= x0) & (xs <= x1)]
        ends = np.interp([x0, x1], xs, ys)
        vals = np.concatenate([inside, ends])
        lo, hi = min(lo, vals.min()), max(hi, vals.max())
    return lo, hi


# -- defect 2: labels in view, clear of the curve and of the lines ---------------------------


def test_the_last_compaction_label_is_flipped_inside_at_the_right_edge(view, before):
    _, tl, budget = before
    view.set_timeline(tl, budget)
    last = tl.compactions[-1]
    plot_items(view)["context_plot"].setXRange(last.x - 40, last.x + 1.5, padding=0)
    view.grab()
    labels = plot_items(view)["compaction_labels"]
    label = labels[len(tl.compactions) - 1]
    assert label.isVisible()
    assert label.toPlainText().strip() == last.label
    assert _inside(label.sceneBoundingRect(), _vb_rect(view))
    # flipped: the label ends at its marker instead of starting there
    marker_px = plot_items(view)["context_plot"].vb.mapViewToScene(QPointF(last.x, 0)).x()
    assert label.sceneBoundingRect().right() <= marker_px + 1


@pytest.mark.parametrize("size", [(1400, 700), (900, 330), (700, 260)])
@pytest.mark.parametrize("dark", [False, True])
def test_threshold_labels_sit_clear_of_the_curve_and_every_line(view, before, size, dark):
    _, tl, budget = before
    if dark:
        _dark(view)
    view.resize(*size)
    view.set_timeline(tl, budget)
    view.grab()
    vb = plot_items(view)["context_plot"].vb
    items = plot_items(view)
    lines_y = {
        k: vb.mapViewToScene(QPointF(0, items[f"threshold:{k}"].value())).y()
        for k in THRESHOLD_KEYS
    }
    shown = {k: lab for k, lab in _threshold_labels(view).items() if lab.isVisible()}
    assert set(shown) == set(THRESHOLD_KEYS)
    rects = {k: lab.sceneBoundingRect() for k, lab in shown.items()}
    compaction = [lab.sceneBoundingRect() for lab in items["compaction_labels"] if lab.isVisible()]
    for key, label in shown.items():
        r = rects[key]
        assert _inside(r, _vb_rect(view)), key
        assert label.fill.color().alpha() > 0, key  # a background: lines never show through
        assert label.zValue() > items[f"threshold:{key}"].zValue()
        for other, y in lines_y.items():
            assert not (r.top() + 0.5 < y < r.bottom() - 0.5), (key, other)  # no line through it
        top = vb.mapSceneToView(r.topLeft())
        bottom = vb.mapSceneToView(r.bottomRight())
        lo, hi = _curve_range(view, top.x(), bottom.x())
        assert hi < bottom.y() or lo > top.y(), key  # the curve passes above or below
        assert all(not r.intersects(o) for k, o in rects.items() if k != key)
        assert all(not r.intersects(c) for c in compaction)
        assert budget_tokens(budget, key) is not None
        assert THRESHOLD_TERMS[key].line in label.toolTip()


def budget_tokens(budget, key):
    return {t.key: t.tokens for t in budget.thresholds}.get(key)


# -- item 12 (timeline part): y-axis titles and legend ------------------------------------


@pytest.mark.parametrize("height", [150, 180, 220, 300, 500])
def test_y_axis_titles_never_overlap(view, before, height):
    _, tl, budget = before
    view.resize(900, height)
    view.set_timeline(tl, budget)
    view.grab()
    items = plot_items(view)
    titles = []
    for name in ("context_plot", "bar_plot"):
        axis = items[name].getAxis("left")
        if axis.label.isVisible() and axis.labelText:
            r = axis.label.sceneBoundingRect()
            span = items[name].vb.sceneBoundingRect()  # the axis runs along the view box
            assert span.top() - 1 <= r.top() and r.bottom() <= span.bottom() + 1, (name, height)
            titles.append(r)
    if len(titles) == 2:
        assert not titles[0].intersects(titles[1])
    assert titles or height < 300  # a usual height names its axes
    if height >= 500:
        assert len(titles) == 2


@pytest.mark.parametrize("width", [900, 683])
def test_legend_wraps_and_is_never_cut(view, before, width):
    _, tl, budget = before
    view.set_timeline(tl, budget)
    view.resize(width, 400)
    view.grab()
    for name in ("timeline-legend", "timeline-info"):  # wrapped, whole
        label = view.findChild(QLabel, name)
        assert label.width() <= view.width()
        assert label.height() >= label.heightForWidth(label.width())


# -- defect 4: entry numbers on the x axis, a labelled cut point ---------------------------


def test_x_axis_ticks_are_entry_numbers(view, before):
    _, tl, budget = before
    view.set_timeline(tl, budget)
    view.grab()
    plot = plot_items(view)["bar_plot"]
    axis = plot.getAxis("bottom")
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        _, _, texts = axis.generateDrawSpecs(painter)  # what the axis draws, and where
    finally:
        painter.end()
    assert len(texts) >= 3
    positions = np.arange(len(tl), dtype=np.float64)
    (x0, x1) = plot.vb.viewRange()[0]
    per_px = (tl.entry_index[-1] - tl.entry_index[0]) / len(tl) * (x1 - x0) / plot.vb.width()
    numbers = []
    for rect, _, text in texts:
        assert re.fullmatch(r"#[\d,]+", text), text
        n = int(text[1:].replace(",", ""))
        x = plot.vb.mapSceneToView(axis.mapToScene(rect.center())).x()
        assert abs(np.interp(x, positions, tl.entry_index) - n) <= 2 + 2 * per_px, (text, x)
        numbers.append(n)
    assert len(set(numbers)) == len(numbers)
    assert "entry" in axis.labelText


@pytest.mark.parametrize(("size", "pos"), [((1400, 700), 700), ((715, 357), 930)])
def test_cut_point_line_is_labelled_with_its_entry(qtbot, view, before, size, pos):
    _, tl, budget = before
    view.resize(*size)
    view.set_timeline(tl, budget)
    assert view.set_cut_point(tl.entry_ids[pos])
    view.grab()
    label = plot_items(view)["cut_label"]
    assert label.isVisible()
    assert f"cut point #{int(tl.entry_index[pos])}" in label.toPlainText()
    assert _inside(label.sceneBoundingRect(), _vb_rect(view))
    view.set_cut_point(None)
    assert not label.isVisible()


# -- defect 3: one name and one number ------------------------------------------------------


def _first_number(text: str) -> int:
    m = re.search(r"\d[\d,]*", text)
    assert m, text
    return int(m.group().replace(",", ""))


def _leaf_number(view) -> int:
    info = view.findChild(QLabel, "timeline-info").text()
    m = re.search(rf"{CONTEXT_TOKENS.name} at the leaf ([\d,]+)", info)
    assert m, info
    return int(m.group(1).replace(",", ""))


@pytest.mark.parametrize("recalled", [0, 190])
def test_timeline_and_gauge_show_the_same_context_tokens(view, gauge, overestimated, recalled):
    session = overestimated
    budget = budget_for(session, extra_tokens=recalled)
    view.set_timeline(build_timeline(session, budget), budget)
    gauge.set_breakdown(breakdown_at(session, None, recalled_tokens=recalled), budget)
    assert _leaf_number(view) == 100
    head = gauge.headline_text()
    assert _first_number(head) == 100, head
    assert f"{CONTEXT_TOKENS.name} (reported)" in head
    if recalled:
        assert f"+{recalled:,}" in head  # the block that would be injected, said apart


def test_one_name_for_the_context_size_in_every_view(view, gauge, before):
    session, tl, budget = before
    view.set_timeline(tl, budget)
    gauge.set_breakdown(breakdown_at(session, None), budget)
    texts = [
        view.findChild(QLabel, "timeline-legend").text(),
        view.findChild(QLabel, "timeline-info").text(),
        gauge.headline_text(),
        gauge.accessibleDescription(),
    ]
    for text in texts:
        assert "measured" not in text, text
    assert "reported" in texts[1] and "reported" in texts[2]
    assert CONTEXT_TOKENS.name in texts[0] and "chars/4" in texts[0]


# -- item 10: every threshold explained, with the README section ---------------------------


def test_every_gauge_threshold_has_a_tooltip_that_explains_it(gauge, before):
    session, _, budget = before
    gauge.set_breakdown(breakdown_at(session, None), budget)
    canvas = gauge_canvas(gauge)
    markers = canvas.markers()
    assert {m.threshold.key for m in markers} == {"window", "compaction", "seed", "flush",
                                                   "safe_limit"}  # fmt: skip
    for m in markers:
        tip = canvas.tooltip_at(m.label.center())
        term = THRESHOLD_TERMS[m.threshold.key]
        assert term.line in tip, m.threshold.key
        assert README_THRESHOLDS in tip
    seed = next(m for m in markers if m.threshold.key == "seed")
    assert "80%" in canvas.tooltip_at(seed.label.center())


# -- the gauge squeezed by the window's splitter: its legend never covers the bar -----------


def test_a_squeezed_gauge_keeps_its_legend_clear_of_the_bar(qtbot, before):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QSplitter, QWidget

    session, _, budget = before
    splitter = QSplitter(Qt.Orientation.Vertical)
    qtbot.addWidget(splitter)
    gauge = BudgetGauge()
    splitter.addWidget(QWidget())
    splitter.addWidget(gauge)
    gauge.set_breakdown(breakdown_at(session, None), budget)
    gauge.set_comparison(150_000, "after trim")
    splitter.resize(715, 500)
    splitter.show()
    qtbot.waitExposed(splitter)
    splitter.setSizes([480, 20])  # the window gives the gauge less than it needs
    splitter.grab()
    canvas = gauge_canvas(gauge)
    bar = canvas.geometry()
    entries = [w for w in gauge.findChildren(QWidget) if w.objectName().startswith("legend-entry")]
    shown = [w for w in entries if w.isVisible()]
    assert shown
    for w in shown:
        assert not w.geometry().intersects(bar), w.objectName()
        assert w.geometry().bottom() <= gauge.height()


# -- the Sessions navigator: the same name and number as the timeline ----------------------


def test_navigator_shows_the_timelines_context_tokens(qtbot, view, tmp_path):
    from dataclasses import replace

    from PySide6.QtCore import Qt

    from core.dataset.load import load_dataset
    from core.demo.build import write_demo
    from widgets.session.navigator import Navigator

    write_demo(tmp_path / "home", now_ms=1_760_000_000_000, segments=50)
    summaries = load_dataset(tmp_path / "home").summaries
    summaries = [*summaries[:-1], replace(summaries[-1], tokens_measured=None)]
    nav = Navigator()
    qtbot.addWidget(nav)
    nav.set_sessions(summaries)
    model = nav.proxy
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    assert not any("measured" in h for h in headers), headers
    column = headers.index("Context tokens")
    tip = model.headerData(column, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert CONTEXT_TOKENS.help in tip
    for s in summaries[:3]:
        session = load_transcript(s.path)
        view.set_timeline(build_timeline(session))
        cell = model.mapFromSource(nav.model.session_index(s.id)).siblingAtColumn(column)
        assert _first_number(cell.data()) == _leaf_number(view), s.id
        assert "reported" in cell.data(Qt.ItemDataRole.ToolTipRole)
    blank = model.mapFromSource(nav.model.session_index(summaries[-1].id)).siblingAtColumn(column)
    assert _first_number(blank.data()) == summaries[-1].tokens_estimated
    assert "chars/4" in blank.data(Qt.ItemDataRole.ToolTipRole)
