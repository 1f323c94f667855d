"""The session timeline: message bars by role, the context curve, thresholds, compactions.

Two plots share the message axis (x = message position in file order, ticks
labelled with entry numbers ``#N``): above,
the context the model had at each message along the current leaf path (with the
abandoned branches dashed, compaction drops marked ``tokensBefore -> tokensAfter``
and the budget thresholds as labelled lines); below, one bar per message,
coloured by role, the thinking share of assistant messages stacked at the
bottom of their bars. Every data item is created once and fed with ``setData``;
bars are drawn as one filled outline per role so that pyqtgraph can clip them to
the view and peak-downsample them (smooth at 5,000 messages and beyond).

Live mode hands over a new timeline of the same session after every batch that
extends it. Those redraws are throttled (at most one per :data:`LIVE_REDRAW_MS`, the
newest timeline wins) and only the items whose data changed are fed again: a redraw
repaints axes and curves, tens of milliseconds of GUI thread each.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg  # type: ignore[import-untyped]
from PySide6.QtCore import QEvent, QPointF, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QGraphicsItem, QLabel, QSizePolicy, QVBoxLayout, QWidget
from typing_extensions import override

from core.context.terms import CHARS4_ESTIMATE, CONTEXT_TOKENS, MESSAGE_TOKENS, source_label
from core.timeline.arrays import Category, Timeline, bar_outline, threshold_lines
from widgets.timeline.markers import TimelineMarkers
from widgets.timeline.style import (
    AXIS_TITLES,
    BAR_WIDTH,
    CATEGORY_COLORS,
    CUT_COLOR,
    FLUSH_COLOR,
    THINKING_COLOR,
    IndexAxis,
    TokenAxis,
    fit_axis_title,
    legend_html,
    palette_colors,
)

if TYPE_CHECKING:
    from core.context.budget import Budget
    from core.timeline.arrays import ThresholdLine

LIVE_REDRAW_MS = 250
"""Live appends to the shown session redraw the timeline at most this often."""
HEADROOM_SHARE = 0.45
"""At most this share of the context plot is kept above its highest line for labels."""
LEGEND_CATEGORIES = (
    Category.USER,
    Category.ASSISTANT,
    Category.TOOL_RESULT,
    Category.BASH,
    Category.CUSTOM,
    Category.SUMMARY,
)


def _empty() -> np.ndarray[Any, np.dtype[np.float64]]:
    return np.zeros(0)


def _same(a: Any, b: Any) -> bool:
    return a is b or bool(np.array_equal(a, b, equal_nan=True))


class TimelineView(QWidget):
    """One session on a message axis; hover shows a message, click activates it."""

    entry_hovered = Signal(str)
    """Entry id of the message under the mouse."""
    entry_activated = Signal(str)
    """Entry id of a clicked message."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._timeline: Timeline | None = None
        self._thresholds: tuple[ThresholdLine, ...] = ()
        self._hover: int | None = None
        self._selected: int | None = None
        self._ctx_max = 1.0
        self._fed: dict[int, tuple[Any, Any]] = {}  # what each data item was last fed
        self._pending: tuple[Timeline, Budget | None] | None = None  # a held live redraw
        self._redraw = QTimer(self)
        self._redraw.setSingleShot(True)
        self._redraw.setInterval(LIVE_REDRAW_MS)
        self._redraw.timeout.connect(self._on_redraw_timeout)

        self._legend = QLabel()
        self._legend.setObjectName("timeline-legend")
        self._legend.setTextFormat(Qt.TextFormat.RichText)
        self._legend.setWordWrap(True)  # a narrow window wraps the legend, never widens
        self._graphics = pg.GraphicsLayoutWidget()
        self._graphics.setMinimumHeight(170)
        self._info = QLabel()
        self._info.setObjectName("timeline-info")
        self._info.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._info.setWordWrap(True)  # a narrow window wraps the figures, never cuts them
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addWidget(self._legend)
        layout.addWidget(self._graphics, 1)
        layout.addWidget(self._info)

        self._ctx_plot = self._make_plot(0, AXIS_TITLES["context_plot"][0])
        self._bar_plot = self._make_plot(1, AXIS_TITLES["bar_plot"][0])
        self._bar_plot.setXLink(self._ctx_plot)
        self._bar_plot.setLabel("bottom", "entry #N (messages in file order)")
        self._ctx_plot.hideAxis("bottom")  # the bar plot's axis below names the entries
        self._graphics.ci.layout.setRowStretchFactor(0, 3)
        self._graphics.ci.layout.setRowStretchFactor(1, 2)
        self._create_items()

        self._ctx_plot.vb.sigXRangeChanged.connect(self._on_x_range_changed)
        self._ctx_plot.vb.sigResized.connect(self._on_view_resized)
        self._graphics.scene().sigMouseClicked.connect(self._on_mouse_clicked)
        self._mouse_proxy = pg.SignalProxy(
            self._graphics.scene().sigMouseMoved, rateLimit=60, slot=self._on_mouse_moved
        )
        self._apply_palette()
        self.clear()

    # -- construction -------------------------------------------------------
    def _make_plot(self, row: int, label: str) -> pg.PlotItem:
        plot = self._graphics.addPlot(
            row=row,
            col=0,
            axisItems={"left": TokenAxis("left"), "bottom": IndexAxis("bottom")},
        )
        plot.setMouseEnabled(x=True, y=False)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.showGrid(x=False, y=True, alpha=0.12)
        plot.setLabel("left", label)
        plot.getAxis("left").setWidth(70)
        for name in ("left", "bottom"):
            # An axis replays its drawing (text included) whenever anything near it
            # repaints; cached as a pixmap it is drawn again only when its range moved.
            plot.getAxis(name).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        plot.disableAutoRange()
        plot.setClipToView(True)
        plot.setDownsampling(auto=True, mode="peak")
        return plot

    def _data_item(self, plot: pg.PlotItem, z: float, **opts: Any) -> pg.PlotDataItem:
        # Peak-downsample once two points share a pixel (pyqtgraph waits for five): a
        # bar is four points, so a zoomed-out session would otherwise be drawn in full.
        item = pg.PlotDataItem(autoDownsampleFactor=2.0, **opts)
        item.setSkipFiniteCheck(True)
        item.setZValue(z)
        plot.addItem(item)  # applies the plot's clip-to-view and downsampling
        if opts.get("connect") == "pairs":  # clipping or downsampling would split the pairs
            item.setClipToView(False)
            item.setDownsampling(ds=1, auto=False)
        return item

    def _bar_item(self, color: str, z: float) -> pg.PlotDataItem:
        return self._data_item(
            self._bar_plot, z, pen=pg.mkPen(color, width=1), brush=color, fillLevel=0
        )

    def _create_items(self) -> None:
        self._bars = {cat: self._bar_item(CATEGORY_COLORS[cat], 1) for cat in Category}
        self._thinking = self._bar_item(THINKING_COLOR, 2)
        self._off_path_fade = self._data_item(self._bar_plot, 3, pen=None, fillLevel=0)
        self._off_path = self._data_item(self._bar_plot, 4, pen=None, fillLevel=0)
        self._ctx_off_path = self._data_item(self._ctx_plot, 1, connect="pairs")
        self._markers = TimelineMarkers(self._ctx_plot, self._bar_plot)
        self._ctx_estimate = self._data_item(self._ctx_plot, 2)
        self._ctx_curve = self._data_item(self._ctx_plot, 3)
        self._ctx_curve.setCurveClickable(False)
        self._hover_lines = [self._vline(plot, 6) for plot in (self._ctx_plot, self._bar_plot)]
        self._select_lines = [self._vline(plot, 7) for plot in (self._ctx_plot, self._bar_plot)]
        self._cut_lines = [self._vline(plot, 5) for plot in (self._ctx_plot, self._bar_plot)]
        self._cut_id: str | None = None
        # Every plot item carries its name (``bars:<category>``, ``context``, ``select_lines#0``
        # ...): what it shows is readable through Qt's object names (accessibility, tests).
        named: list[tuple[str, Any]] = [
            (f"bars:{c.name.lower()}", i) for c, i in self._bars.items()
        ]
        named += [
            ("thinking", self._thinking),
            ("off_path", self._off_path),
            ("context", self._ctx_curve),
            ("estimate", self._ctx_estimate),
            ("off_path_context", self._ctx_off_path),
            ("context_plot", self._ctx_plot),
            ("bar_plot", self._bar_plot),
        ]
        for kind, lines in (
            ("select_lines", self._select_lines),
            ("hover_lines", self._hover_lines),
            ("cut_lines", self._cut_lines),
        ):
            named += [(f"{kind}#{n}", line) for n, line in enumerate(lines)]
        for name, item in named:
            item.setObjectName(name)

    def _vline(self, plot: pg.PlotItem, z: float) -> pg.InfiniteLine:
        line = pg.InfiniteLine(angle=90, movable=False)
        line.setZValue(z)
        line.hide()
        plot.addItem(line, ignoreBounds=True)
        return line

    # -- palette ------------------------------------------------------------
    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_palette()
        super().changeEvent(event)

    def _apply_palette(self) -> None:
        c = palette_colors(self.palette())
        self._colors = c
        self._graphics.setBackground(c["base"])
        for plot in (self._ctx_plot, self._bar_plot):
            for name in ("left", "bottom"):
                axis = plot.getAxis(name)
                axis.setPen(pg.mkPen(c["grid"]))
                axis.setTextPen(pg.mkPen(c["text"]))
                axis.label.setDefaultTextColor(c["text"])
        self._ctx_curve.setPen(pg.mkPen(c["text"], width=2))
        self._ctx_estimate.setPen(pg.mkPen(c["mid"], width=1, style=Qt.PenStyle.DashLine))
        self._ctx_off_path.setPen(pg.mkPen(c["highlight"], width=1.5, style=Qt.PenStyle.DashLine))
        fade = QColor(c["base"])
        fade.setAlphaF(0.45)
        self._off_path_fade.setBrush(pg.mkBrush(fade))
        self._off_path.setBrush(QBrush(c["highlight"], Qt.BrushStyle.BDiagPattern))
        for line in self._hover_lines:
            line.setPen(pg.mkPen(c["mid"], width=1))
        for line in self._select_lines:
            line.setPen(pg.mkPen(c["highlight"], width=2))
        for line in self._cut_lines:
            line.setPen(pg.mkPen(CUT_COLOR, width=2, style=Qt.PenStyle.DashDotLine))
        self._markers.apply_colors(c)
        self._legend.setText(self._legend_text())

    def _legend_text(self) -> str:
        entries = [("\u25a0", CATEGORY_COLORS[c], c.label) for c in LEGEND_CATEGORIES]
        entries.insert(2, ("\u25a0", THINKING_COLOR, "thinking"))
        text = self._colors["text"].name()
        mid = self._colors["mid"].name(QColor.NameFormat.HexRgb)
        entries += [
            ("\u2501", text, f"{CONTEXT_TOKENS.name} (reported, else chars/4)"),
            ("\u2504", mid, CHARS4_ESTIMATE.name),
            ("\u2571", self._colors["highlight"].name(), "off the current path"),
            ("\u2605", FLUSH_COLOR, "memory flush (sessions.json)"),
        ]
        return legend_html(entries, self._colors["text"])

    # -- public API ---------------------------------------------------------
    def timeline(self) -> Timeline | None:
        """The timeline shown, if any."""
        return self._timeline

    def thresholds(self) -> tuple[ThresholdLine, ...]:
        """The threshold lines drawn."""
        return self._thresholds

    def set_timeline(
        self, timeline: Timeline, budget: Budget | None = None, *, keep_view: bool = False
    ) -> None:
        """Show *timeline*; *budget* (else the timeline's own) gives the threshold lines.

        With *keep_view*, a new timeline of the same session (live appends) keeps
        the user's zoom and scroll, unless they were looking at the end, which then
        follows the new messages. Such redraws come at most every
        :data:`LIVE_REDRAW_MS`: one within that time of the last is held, and the
        newest held one is drawn when it is up (keeping the selected entry).
        """
        previous = self._timeline
        live = keep_view and previous is not None and previous.session_id == timeline.session_id
        if live and self._redraw.isActive():
            self._pending = (timeline, budget)
            return
        self._pending = None
        self._show(timeline, budget, keep_view=keep_view)
        if live:
            self._redraw.start()
        else:
            self._redraw.stop()

    @Slot()
    def _on_redraw_timeout(self) -> None:
        pending, self._pending = self._pending, None
        if pending is None:
            return
        selected = self.selected_entry()
        self._show(*pending, keep_view=True)
        tl = self._timeline
        pos = tl.position(selected) if tl is not None and selected is not None else None
        if pos is not None:  # the selection stays where it was, without scrolling to it
            self._selected = pos
            for line in self._select_lines:
                line.setValue(pos)
                line.show()
        self._redraw.start()

    def _feed(self, item: pg.PlotDataItem, x: Any, y: Any) -> None:
        """``item.setData(x, y)`` unless it holds that data already (live appends)."""
        old = self._fed.get(id(item))
        if old is not None and _same(old[0], x) and _same(old[1], y):
            return
        self._fed[id(item)] = (x, y)
        item.setData(x, y)

    def _show(self, timeline: Timeline, budget: Budget | None, *, keep_view: bool) -> None:
        tl = timeline
        previous = self._timeline
        kept: tuple[float, float] | None = None
        if keep_view and previous is not None and previous.session_id == tl.session_id:
            x0, x1 = self._ctx_plot.vb.viewRange()[0]
            at_end = x1 >= len(previous) - 1
            kept = (
                (x0 + len(tl) - len(previous), x1 + len(tl) - len(previous)) if at_end else (x0, x1)
            )
        self._timeline = tl
        for plot in (self._ctx_plot, self._bar_plot):
            plot.getAxis("bottom").set_entries(tl.entry_index)
        self._thresholds = threshold_lines(budget) if budget is not None else tl.thresholds
        self._hover = self._selected = None
        x = tl.x
        tokens = tl.tokens.astype(np.float64)
        for cat, item in self._bars.items():
            mask = tl.category == cat
            self._feed(item, *bar_outline(x[mask], tokens[mask], BAR_WIDTH))
        thinking = tl.thinking_tokens
        mask = thinking > 0
        self._feed(self._thinking, *bar_outline(x[mask], thinking[mask], BAR_WIDTH))
        off = ~tl.on_path
        outline = bar_outline(x[off], tokens[off], BAR_WIDTH)
        self._feed(self._off_path_fade, *outline)
        self._feed(self._off_path, *outline)

        self._feed(self._ctx_curve, tl.path_x, tl.path_context)
        self._feed(self._ctx_estimate, tl.path_x, tl.path_estimated)
        linked = off & (tl.parent_pos >= 0)
        parents = tl.parent_pos[linked]
        self._feed(
            self._ctx_off_path,
            np.column_stack([x[parents], x[linked]]).ravel(),
            np.column_stack([tl.context[parents], tl.context[linked]]).ravel(),
        )
        peaks = [1.0, *(t.tokens for t in self._thresholds)]
        for arr in (tl.path_context, tl.context, tl.path_estimated):
            if len(arr):
                peaks.append(float(np.nanmax(arr)))
        self._ctx_max = max(peaks)

        n = len(tl)
        pad = max(3.0, n * 0.01)  # the limits must stay wider than minXRange
        for plot in (self._ctx_plot, self._bar_plot):
            plot.vb.setLimits(xMin=-0.5 - pad, xMax=n - 0.5 + pad, minXRange=4)
        if kept is not None and kept[1] - kept[0] < n + 2 * pad:
            self._ctx_plot.setXRange(kept[0], kept[1], padding=0)
        else:
            self._ctx_plot.setXRange(-0.5 - pad, n - 0.5 + pad, padding=0)
        self._update_y_ranges()
        self._markers.show(tl, self._thresholds, self._ctx_max)
        self._hide_lines(self._hover_lines)
        self._hide_lines(self._select_lines)
        self.set_cut_point(self._cut_id)  # kept across rebuilds of the same session
        self._info.setText(self._overview())

    def clear(self) -> None:
        """Show nothing."""
        self._pending = None
        self._redraw.stop()
        self._fed.clear()
        self._timeline = None
        for plot in (self._ctx_plot, self._bar_plot):
            plot.getAxis("bottom").set_entries(None)
        self._thresholds = ()
        self._hover = self._selected = None
        for item in (
            *self._bars.values(),
            self._thinking,
            self._off_path_fade,
            self._off_path,
            self._ctx_curve,
            self._ctx_estimate,
            self._ctx_off_path,
        ):
            item.setData(_empty(), _empty())
        self._markers.clear()
        self._hide_lines(self._hover_lines)
        self._hide_lines(self._select_lines)
        self._hide_lines(self._cut_lines)
        self._info.setText("No session")

    def select_entry(self, entry_id: str) -> bool:
        """Highlight *entry_id* and scroll it into view; False when it has no bar."""
        tl = self._timeline
        pos = tl.position(entry_id) if tl is not None else None
        self._selected = pos
        if pos is None:
            self._hide_lines(self._select_lines)
            return False
        for line in self._select_lines:
            line.setValue(pos)
            line.show()
        (x0, x1) = self._ctx_plot.vb.viewRange()[0]
        if not x0 <= pos <= x1:
            half = (x1 - x0) / 2
            self._ctx_plot.setXRange(pos - half, pos + half, padding=0)
        if self._hover is None:
            self._info.setText(self._describe(pos))
        return True

    def set_cut_point(self, entry_id: str | None) -> bool:
        """Mark a planned compaction's first kept entry (None or "" removes the mark).

        The mark is remembered when the entry has no bar yet (the timeline is
        still being built) and drawn once it has one; returns whether it is drawn.
        """
        tl = self._timeline
        pos = tl.position(entry_id) if tl is not None and entry_id else None
        self._cut_id = entry_id or None
        if tl is None or pos is None:
            self._hide_lines(self._cut_lines)
            self._markers.set_cut(None)
            return False
        for line in self._cut_lines:
            line.setValue(pos)
            line.show()
        n = int(tl.entry_index[pos])
        self._markers.set_cut(
            pos,
            f"cut point #{n:,}",
            f"cut point of the planned compaction: #{n:,} is the first entry it keeps;\n"
            "the entries before it (since the last compaction) become the summary",
        )
        return True

    def selected_entry(self) -> str | None:
        """The id of the highlighted message."""
        if self._timeline is None or self._selected is None:
            return None
        return self._timeline.entry_ids[self._selected]

    def graphics_view(self) -> pg.GraphicsLayoutWidget:
        """The graphics view (for events, tests and screenshots)."""
        return self._graphics

    # -- drawing ------------------------------------------------------------
    def _update_y_ranges(self) -> None:
        h = self._ctx_plot.vb.height()
        # Two rows of compaction labels and a row of threshold labels above the lines;
        # a short plot keeps two rows and gives the rest to the curve.
        row = self._markers.label_height() + 1
        room_px = min(3 * row + 8, max(2 * row + 8, HEADROOM_SHARE * h))
        room = min(room_px / h, 0.6) if h > 0 else 0.22
        top = self._ctx_max / (1 - room)
        self._ctx_plot.setYRange(-0.03 * top, top, padding=0)  # below 0: the 0 tick shows
        tl = self._timeline
        peak = 1.0
        if tl is not None and len(tl):
            x0, x1 = self._ctx_plot.vb.viewRange()[0]
            lo = max(0, math.floor(x0))
            hi = min(len(tl), math.ceil(x1) + 1)
            if hi > lo:
                peak = max(peak, float(tl.tokens[lo:hi].max()))
        self._bar_plot.setYRange(-0.05 * peak, peak * 1.08, padding=0)

    @staticmethod
    def _hide_lines(lines: list[pg.InfiniteLine]) -> None:
        for line in lines:
            line.hide()

    def _overview(self) -> str:
        tl = self._timeline
        assert tl is not None
        n = len(tl)
        if not n:
            return "No messages in this session"
        last = int(tl.path_context[-1]) if len(tl.path_context) else 0
        kind = source_label("measured" if bool(tl.measured[tl.on_path][-1:].all()) else "estimated")
        off = int((~tl.on_path).sum())
        parts = [
            f"{CONTEXT_TOKENS.name} at the leaf {last:,} ({kind})",
            f"{n:,} messages",
            f"{int(tl.tokens.sum()):,} {MESSAGE_TOKENS.name} in all",
            f"{len(tl.compactions)} compactions",
            f"{len(tl.branches)} forks ({off:,} messages off the current path)",
        ]
        for f in tl.flushes:
            cycle = (
                f" in compaction cycle {f.compaction_count}"
                if f.compaction_count is not None
                else ""
            )
            parts.append(f"last {f.label}{cycle}")
        if tl.breaks:
            # A missing or cyclic parentId cuts the context: say so, with the line.
            first = tl.breaks[0]
            more = f" (+{len(tl.breaks) - 1} more, see Problems)" if len(tl.breaks) > 1 else ""
            parts.append(f"{len(tl.breaks)} broken parent link(s): {first.message}{more}")
        return " \u00b7 ".join(parts)

    def _describe(self, pos: int) -> str:
        tl = self._timeline
        assert tl is not None
        kind = source_label("measured" if tl.measured[pos] else "estimated")
        text = (
            f"#{int(tl.entry_index[pos])}  {tl.summary(pos)}  \u2502  "
            f"{CONTEXT_TOKENS.name} {int(tl.context[pos]):,} ({kind})"
        )
        if not tl.on_path[pos]:
            text += "  \u2502  off the current path"
        return text

    # -- events -------------------------------------------------------------
    def _position_at(self, scene_pos: QPointF) -> int | None:
        tl = self._timeline
        if tl is None or not len(tl):
            return None
        for plot in (self._ctx_plot, self._bar_plot):
            if plot.vb.sceneBoundingRect().contains(scene_pos):
                x = plot.vb.mapSceneToView(scene_pos).x()
                if -0.5 <= x <= len(tl) - 0.5:
                    return tl.nearest(x)
                return None
        return None

    @Slot(object)
    def _on_mouse_moved(self, args: tuple[QPointF]) -> None:
        pos = self._position_at(args[0])
        if pos == self._hover:
            return
        self._hover = pos
        tl = self._timeline
        if pos is None or tl is None:
            self._hide_lines(self._hover_lines)
            if tl is not None:
                sel = self._selected
                self._info.setText(self._describe(sel) if sel is not None else self._overview())
            return
        for line in self._hover_lines:
            line.setValue(pos)
            line.show()
        self._info.setText(self._describe(pos))
        self.entry_hovered.emit(tl.entry_ids[pos])

    @Slot(object)
    def _on_mouse_clicked(self, event: Any) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        pos = self._position_at(event.scenePos())
        if pos is None or self._timeline is None:
            return
        entry_id = self._timeline.entry_ids[pos]
        self.select_entry(entry_id)
        self.entry_activated.emit(entry_id)

    def _on_x_range_changed(self, *_: object) -> None:
        self._update_y_ranges()
        self._markers.layout()

    def _on_view_resized(self, *_: object) -> None:
        fit_axis_title(self._ctx_plot, AXIS_TITLES["context_plot"])
        fit_axis_title(self._bar_plot, AXIS_TITLES["bar_plot"])
        self._update_y_ranges()
        self._markers.layout()
