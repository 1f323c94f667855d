"""Markers of the session timeline: thresholds, compactions, memory flushes, forks, breaks.

Created once per view; :meth:`TimelineMarkers.show` feeds them a timeline.
:meth:`TimelineMarkers.layout` (call it whenever the x range or the size changes)
places the labels with :mod:`widgets.timeline.placement`: each threshold's label in
a row above (else below) its group of lines, clear of the curves, on a background;
the planned cut point's and the compactions' labels in two rows at the top, right
of their marker or flipped to its left near the right edge; a label that finds no
free spot at the current zoom is hidden.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg  # type: ignore[import-untyped]
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor

from core.context.terms import THRESHOLD_TERMS, threshold_help
from widgets.timeline.placement import (
    Frame,
    line_groups,
    place_beside,
    place_low,
    place_near,
    place_threshold,
    rows_above,
)
from widgets.timeline.style import (
    CUT_COLOR,
    FLUSH_COLOR,
    FLUSH_FAILED_COLOR,
    THRESHOLD_STYLES,
    short_tokens,
)

if TYPE_CHECKING:
    from core.timeline.arrays import CompactionMarker, ThresholdLine, Timeline

BREAK_COLOR = "#d62728"
"""Broken parent chains: the colour of an error, in light and dark themes alike."""
PREMADE_LABELS = 6
PAD_TOP = 2.0
"""Pixels between the top of the plot and the first row of compaction labels."""


def _pairs_item(plot: pg.PlotItem) -> pg.PlotDataItem:
    """Vertical segments as (x, y0), (x, y1) pairs: never clipped or downsampled."""
    item = pg.PlotDataItem(connect="pairs")
    item.setZValue(0)
    plot.addItem(item, ignoreBounds=True)
    item.setClipToView(False)
    item.setDownsampling(ds=1, auto=False)
    return item


def compaction_tip(m: CompactionMarker) -> str:
    """The tooltip of a compaction label: where each figure comes from."""
    before = "recorded" if m.before_recorded else "measured or estimated"
    after = "recorded" if m.after_recorded else "estimated"
    return (
        f"compaction {m.entry_id}: {m.tokens_before:,} tokens before ({before}), "
        f"{m.tokens_after:,} after ({after})"
    )


class TimelineMarkers:
    """Thresholds, compactions and forks over a context plot and a bar plot."""

    def __init__(self, ctx_plot: pg.PlotItem, bar_plot: pg.PlotItem) -> None:
        self._ctx_plot = ctx_plot
        self._colors: dict[str, QColor] = {}
        self._timeline: Timeline | None = None
        self._drawn: tuple[Any, ...] | None = None  # what the markers show now
        self._lines_drawn: tuple[Any, ...] | None = None  # what the compaction lines span
        self.ctx_lines = _pairs_item(ctx_plot)
        self.bar_lines = _pairs_item(bar_plot)
        self.compaction_points = pg.ScatterPlotItem(symbol="t", size=10)
        self.branch_points = pg.ScatterPlotItem(symbol="d", size=11)
        # An entry whose parentId is missing or in a cycle: the context is cut there.
        self.break_points = pg.ScatterPlotItem(symbol="x", size=13, hoverable=True)
        # The memory flush sessions.json records (a star; hollow when it failed).
        self.flush_points = pg.ScatterPlotItem(symbol="star", size=15, hoverable=True)
        for item in (
            self.compaction_points,
            self.branch_points,
            self.break_points,
            self.flush_points,
        ):
            item.setZValue(5)
            ctx_plot.addItem(item)
        # Under the compaction triangle it usually sits beside: both stay visible.
        self.flush_points.setZValue(4.5)
        self.thresholds: dict[str, pg.InfiniteLine] = {}
        self.threshold_labels: dict[str, pg.TextItem] = {}
        # The planned compaction's first kept entry, named on the plot.
        self.cut_label = pg.TextItem(anchor=(0, 0))
        self.cut_label.setObjectName("cut_label")
        self.cut_label.setZValue(9)
        self.cut_label.hide()
        ctx_plot.addItem(self.cut_label, ignoreBounds=True)
        self._cut_x: float | None = None
        self.compaction_labels: list[pg.TextItem] = []
        self.branch_labels: list[pg.TextItem] = []
        self.break_labels: list[pg.TextItem] = []
        self.flush_labels: list[pg.TextItem] = []
        # Made now, hidden, not when the first session arrives: ~15 ms of pyqtgraph
        # items the window would otherwise freeze for while a place opens.
        for key in THRESHOLD_STYLES:
            self._threshold(key).hide()
        for index in range(PREMADE_LABELS):
            self._label(self.compaction_labels, index).hide()
        for name, item in (
            ("compaction_points", self.compaction_points),
            ("branch_points", self.branch_points),
            ("break_points", self.break_points),
            ("flush_points", self.flush_points),
        ):
            item.setObjectName(name)

    # -- items --------------------------------------------------------------
    def _threshold(self, key: str) -> pg.InfiniteLine:
        line = self.thresholds.get(key)
        if line is None:
            line = pg.InfiniteLine(angle=0, movable=False)
            line.setZValue(4)
            line.setObjectName(f"threshold:{key}")
            self._ctx_plot.addItem(line, ignoreBounds=True)
            # Its label is an item of its own, above every line: layout() places it
            # where no line crosses it and the curve does not pass.
            label = pg.TextItem(anchor=(0, 0))
            label.setObjectName(f"threshold_label:{key}")
            label.setZValue(9)
            label.hide()
            self._ctx_plot.addItem(label, ignoreBounds=True)
            self.thresholds[key], self.threshold_labels[key] = line, label
            self._style_threshold(key, line)
        return line

    def _label(self, pool: list[pg.TextItem], index: int) -> pg.TextItem:
        kind = next(name for name, labels in self._pools() if labels is pool)
        while len(pool) <= index:
            item = pg.TextItem(anchor=(0, 0))
            item.setObjectName(f"{kind}#{len(pool)}")  # what it is, for accessibility and tests
            item.setZValue(8)
            self._ctx_plot.addItem(item, ignoreBounds=True)
            pool.append(item)
            self._style_text(item)
        return pool[index]

    # -- colours ------------------------------------------------------------
    def apply_colors(self, colors: dict[str, QColor]) -> None:
        """Follow the palette (see :func:`widgets.timeline.style.palette_colors`)."""
        self._colors = colors
        pen = pg.mkPen(colors["mid"], width=1, style=Qt.PenStyle.DashLine)
        self.ctx_lines.setPen(pen)
        self.bar_lines.setPen(pen)
        self.compaction_points.setPen(pg.mkPen(colors["text"]))
        self.compaction_points.setBrush(pg.mkBrush(colors["base"]))
        self.branch_points.setPen(pg.mkPen(colors["text"]))
        self.branch_points.setBrush(pg.mkBrush(colors["highlight"]))
        self.break_points.setPen(pg.mkPen(BREAK_COLOR, width=2))
        self.break_points.setBrush(pg.mkBrush(BREAK_COLOR))
        for key, line in self.thresholds.items():
            self._style_threshold(key, line)
        for item in (*self.compaction_labels, *self.branch_labels, *self.break_labels):
            self._style_text(item)
        self._style_text(self.cut_label)
        self.cut_label.setColor(QColor(CUT_COLOR))
        flushes = self._timeline.flushes if self._timeline is not None else ()
        for i, item in enumerate(self.flush_labels):
            self._style_flush_label(item, failed=i < len(flushes) and not flushes[i].succeeded)

    def _style_flush_label(self, item: pg.TextItem, failed: bool = False) -> None:
        self._style_text(item)
        item.setColor(QColor(FLUSH_FAILED_COLOR if failed else FLUSH_COLOR))

    def _style_threshold(self, key: str, line: pg.InfiniteLine) -> None:
        color, style = THRESHOLD_STYLES.get(key, ("#7f7f7f", Qt.PenStyle.DashLine))
        line.setPen(pg.mkPen(color, width=1.5, style=style))
        label = self.threshold_labels[key]
        label.setColor(QColor(color))
        label.fill = pg.mkBrush(self._colors["label_fill"] if self._colors else "#ffffffd9")
        label.border = pg.mkPen(color, width=1)

    def _style_text(self, item: pg.TextItem) -> None:
        if self._colors:
            item.setColor(self._colors["text"])
            item.fill = pg.mkBrush(self._colors["label_fill"])

    # -- content ------------------------------------------------------------
    def show(self, tl: Timeline, thresholds: tuple[ThresholdLine, ...], ctx_max: float) -> None:
        """Draw the markers of *tl* and the *thresholds* lines.

        A live append usually leaves every marker where it was: then nothing is
        set again (scatter points and text labels are slow to re-make).
        """
        self._timeline = tl
        comps = tl.compactions
        bar_top = float(max(tl.tokens.max(initial=1), 1)) * 10
        lines = (comps, ctx_max, bar_top)  # the context grows: these follow its peak
        if lines != self._lines_drawn:
            self._lines_drawn = lines
            pairs_x = np.repeat(np.array([m.x for m in comps], dtype=np.float64), 2)
            self.ctx_lines.setData(pairs_x, np.tile([0.0, ctx_max * 10], len(comps)))
            self.bar_lines.setData(pairs_x, np.tile([0.0, bar_top], len(comps)))
        drawn = (comps, tl.branches, tl.breaks, tl.flushes, thresholds)
        if drawn == self._drawn:
            self.layout()
            return
        self._drawn = drawn
        keys = {t.key for t in thresholds}
        for key, line in self.thresholds.items():
            line.setVisible(key in keys)
            self.threshold_labels[key].setVisible(key in keys)
        for t in thresholds:
            line = self._threshold(t.key)
            line.setValue(t.tokens)
            term = THRESHOLD_TERMS.get(t.key)
            label = self.threshold_labels[t.key]
            label.setText(f"{term.short if term else t.label} {short_tokens(t.tokens)}")
            label.setToolTip(f"{t.label}: {t.tokens:,} tokens\n{threshold_help(t.key)}")
            line.show()

        cx = np.array([m.x for m in comps], dtype=np.float64)
        self.compaction_points.setData(cx, [m.context_before for m in comps])
        for i, m in enumerate(comps):
            label = self._label(self.compaction_labels, i)
            label.setText(f" {m.label} ")
            label.setToolTip(compaction_tip(m))
        for label in self.compaction_labels[len(comps) :]:
            label.hide()

        branches = tl.branches
        self.branch_points.setData([b.x for b in branches], [b.context for b in branches])
        for i, b in enumerate(branches):
            label = self._label(self.branch_labels, i)
            label.setText(f" fork: {b.children} branches ")
            label.setAnchor((0.5, 1.3))
            label.setPos(b.x, b.context)
            label.show()
        for label in self.branch_labels[len(branches) :]:
            label.hide()

        breaks = tl.breaks
        self.break_points.setData(
            [b.x for b in breaks],
            [b.context for b in breaks],
            data=[b.message for b in breaks],
            tip=lambda x, y, data: str(data),
        )
        for i, brk in enumerate(breaks):
            label = self._label(self.break_labels, i)
            label.setText(f" {brk.label} ")
            label.setToolTip(brk.message)
            label.setAnchor((0.5, -0.3))
            label.setPos(brk.x, brk.context)
            label.show()
        for label in self.break_labels[len(breaks) :]:
            label.hide()
        self._show_flushes(tl)
        self.layout()

    def _show_flushes(self, tl: Timeline) -> None:
        flushes = tl.flushes
        self.flush_points.setData(
            [f.x for f in flushes],
            [f.context for f in flushes],
            pen=[pg.mkPen(FLUSH_COLOR if f.succeeded else FLUSH_FAILED_COLOR, width=1.5)
                 for f in flushes],
            brush=[pg.mkBrush(FLUSH_COLOR if f.succeeded else None) for f in flushes],
            data=[f.tooltip for f in flushes],
            tip=lambda x, y, data: str(data),
        )  # fmt: skip
        for i, f in enumerate(flushes):
            label = self._label(self.flush_labels, i)
            self._style_flush_label(label, failed=not f.succeeded)
            label.setText(f" {f.label} ")
            label.setToolTip(f.tooltip)
            label.show()  # layout() places it by its star
        for label in self.flush_labels[len(flushes) :]:
            label.hide()

    def clear(self) -> None:
        """Draw nothing."""
        self._timeline = None
        self._drawn = self._lines_drawn = None
        empty = np.zeros(0)
        self.ctx_lines.setData(empty, empty)
        self.bar_lines.setData(empty, empty)
        self.compaction_points.setData([], [])
        self.branch_points.setData([], [])
        self.break_points.setData([], [])
        self.flush_points.setData([], [])
        for line in self.thresholds.values():
            line.hide()
        self.set_cut(None)
        for label in (
            *self.threshold_labels.values(),
            *self.compaction_labels,
            *self.branch_labels,
            *self.break_labels,
            *self.flush_labels,
        ):
            label.hide()

    def set_cut(self, x: float | None, text: str = "", tip: str = "") -> None:
        """Name the planned cut point at plot x *x* (None hides the label)."""
        self._cut_x = x
        self.cut_label.setText(text)
        self.cut_label.setToolTip(tip)
        self.cut_label.setVisible(x is not None)
        self.layout()

    def layout(self) -> None:
        """Place every label for the current range and size; hide those with no free spot.

        Forks and broken links keep their spot at their marker; the others avoid
        them and each other, in this order: thresholds, compactions, memory
        flushes, the cut point.
        """
        tl = self._timeline
        if tl is None:
            return
        vb = self._ctx_plot.vb
        (x0, x1), (y0, y1) = vb.viewRange()
        frame = Frame(x0, x1, y0, y1, vb.width(), vb.height())
        shown = [k for k, line in self.thresholds.items() if line.isVisible()]
        ys = [frame.py(self.thresholds[k].value()) for k in shown]
        h = self.label_height()
        fixed = (*self.branch_labels, *self.break_labels)
        taken = [self._anchored(frame, label) for label in fixed if label.isVisible()]
        for group in line_groups(ys, h):
            span = (ys[group[0]], ys[group[-1]])
            for i in sorted(group, key=lambda i: ys[i]):  # the highest line first
                label = self.threshold_labels[shown[i]]
                rect = place_threshold(frame, self._size(label), span, ys, taken, tl.curve_span)
                self._put(label, frame, rect, taken)
        rows = rows_above(min(ys, default=frame.height), h, PAD_TOP)
        for m, label in zip(tl.compactions, self.compaction_labels, strict=False):
            rect = place_beside(frame, frame.px(m.x), self._size(label), rows, ys, taken)
            self._put(label, frame, rect, taken)
        for f, label in zip(tl.flushes, self.flush_labels, strict=False):
            point = (frame.px(f.x), frame.py(f.context))
            self._put(label, frame, place_near(frame, point, self._size(label), ys, taken), taken)
        if self._cut_x is not None:  # low beside its line, under the curve (or over it)
            size, px = self._size(self.cut_label), frame.px(self._cut_x)
            rect = place_low(frame, px, size, ys, taken, tl.curve_span)
            self._put(self.cut_label, frame, rect, taken)

    def label_height(self) -> float:
        """Pixel height of a one-line label (a row of labels)."""
        return float(self.threshold_labels["window"].boundingRect().height()) or 20.0

    def _anchored(self, frame: Frame, label: pg.TextItem) -> QRectF:
        """Where a label anchored at its marker sits, in view box pixels."""
        w, h = self._size(label)
        pos, anchor = label.pos(), label.anchor
        return QRectF(frame.px(pos.x()) - anchor.x() * w, frame.py(pos.y()) - anchor.y() * h, w, h)

    @staticmethod
    def _size(label: pg.TextItem) -> tuple[float, float]:
        r = label.boundingRect()
        return float(r.width()), float(r.height())

    @staticmethod
    def _put(label: pg.TextItem, frame: Frame, rect: QRectF | None, taken: list[QRectF]) -> None:
        if rect is None:
            label.hide()
            return
        taken.append(rect)
        label.setAnchor((0, 0))
        label.setPos(frame.x_at(rect.left()), frame.y_at(rect.top()))
        label.show()

    def _pools(self) -> tuple[tuple[str, list[pg.TextItem]], ...]:
        return (
            ("compaction_labels", self.compaction_labels),
            ("branch_labels", self.branch_labels),
            ("break_labels", self.break_labels),
            ("flush_labels", self.flush_labels),
        )
