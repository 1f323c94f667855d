"""The painted part of the budget gauge: stacked bar, threshold markers, scale.

Kept apart from :mod:`widgets.budget.gauge` (the widget with its selector and
legend) so each stays small. Nothing here is public API of the app beyond the
formatting helpers and :func:`spread_labels`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainter, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget
from typing_extensions import override

from core.context.terms import THRESHOLD_TERMS
from widgets.common.palette import is_dark

if TYPE_CHECKING:
    from collections.abc import Callable

    from PySide6.QtGui import QHelpEvent, QPaintEvent

    from core.context.breakdown import ContextBreakdown, SectionKey
    from core.context.budget import Budget, Threshold

SECTION_COLORS: dict[str, str] = {
    "system": "#8a94a6",
    "summary": "#9b6dd6",
    "user": "#3b82f6",
    "assistant_text": "#16a34a",
    "thinking": "#84cc16",
    "tool_calls": "#f59e0b",
    "tool_results": "#ea580c",
    "recalled": "#db2777",
    "unattributed": "#9ca3af",
}
"""Mid-tone section colours, readable on light and dark backgrounds."""

MARKER_SHORT = {key: t.short for key, t in THRESHOLD_TERMS.items()}
"""The short names of :data:`core.context.terms.THRESHOLD_TERMS`: the timeline's too."""
MARKER_COLORS = {  # (light palette, dark palette)
    "compaction": ("#c81e1e", "#ff6b6b"),
    "seed": ("#a16207", "#facc15"),
    "flush": ("#0369a1", "#38bdf8"),
    "safe_limit": ("#7e22ce", "#c084fc"),
}
BAR_H = 20
LEADER = 7
OVER_WINDOW = QColor(220, 38, 38, 60)


def fmt_k(tokens: int) -> str:
    """Compact token count: ``950``, ``24.8k``, ``180k``, ``1M``, ``1.05M``."""
    if abs(tokens) >= 1_000_000:
        return f"{tokens / 1_000_000:.2f}".rstrip("0").rstrip(".") + "M"
    if abs(tokens) >= 1000:
        return f"{tokens / 1000:.1f}".rstrip("0").rstrip(".") + "k"
    return str(tokens)


def fmt_pct(tokens: int, window: int) -> str:
    """Percent of *window* with one decimal (``<0.1%`` for small non-zero counts)."""
    if window <= 0:
        return "-"
    pct = 100 * tokens / window
    if 0 < pct < 0.05:
        return "<0.1%"
    return f"{pct:.1f}%"


def hatch(color: QColor) -> QBrush:
    """The diagonal hatch drawn over the measured-difference section."""
    return QBrush(color.darker(135), Qt.BrushStyle.BDiagPattern)


def _text_on(color: QColor) -> QColor:
    lum = 0.299 * color.redF() + 0.587 * color.greenF() + 0.114 * color.blueF()
    return QColor("#111111") if lum > 0.6 else QColor("#ffffff")


def small_font(font: QFont) -> QFont:
    """*font* at 85% of its size (labels on and around the bar)."""
    f = QFont(font)
    f.setPointSizeF(max(6.5, f.pointSizeF() * 0.85))
    return f


def spread_labels(centres: list[float], widths: list[float], lo: float, hi: float) -> list[float]:
    """Left edges for labels kept in order, not overlapping, as near their centres as can be.

    Overlapping neighbours merge into a group centred on its members' mean;
    groups are clamped into ``[lo, hi]``.
    """
    gap = 8.0
    groups: list[tuple[list[int], float]] = []  # (members, left edge)

    def width(members: list[int]) -> float:
        return sum(widths[i] for i in members) + gap * (len(members) - 1)

    def place(members: list[int]) -> float:
        mean = sum(centres[i] for i in members) / len(members)
        return min(max(lo, mean - width(members) / 2), max(lo, hi - width(members)))

    for i in range(len(centres)):
        members = [i]
        left = place(members)
        while groups and groups[-1][1] + width(groups[-1][0]) + gap > left:
            members = groups.pop()[0] + members
            left = place(members)
        groups.append((members, left))
    out = [0.0] * len(centres)
    for members, left in groups:
        for i in members:
            out[i] = left
            left += widths[i] + gap
    return out


@dataclass(frozen=True, slots=True)
class Marker:
    """A threshold as drawn: its line's x and its label's rectangle."""

    threshold: Threshold
    x: float
    label: QRectF


class GaugeCanvas(QWidget):
    """The bar stacked by section, the threshold markers, the comparison bar, the scale.

    The three callables word the tooltips of a section, a threshold and the
    comparison bar (the gauge owns the wording).
    """

    def __init__(
        self,
        section_tip: Callable[[SectionKey], str],
        threshold_tip: Callable[[Threshold], str],
        comparison_tip: Callable[[], str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.breakdown: ContextBreakdown | None = None
        self.budget: Budget | None = None
        self.after: int | None = None
        self._section_tip, self._threshold_tip = section_tip, threshold_tip
        self._comparison_tip = comparison_tip
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMinimumWidth(320)
        self.setFixedHeight(self.bar_top() + BAR_H + 10 + QFontMetrics(self._small()).height() + 1)

    # -- geometry -------------------------------------------------------------
    def _small(self) -> QFont:
        return small_font(self.font())

    def bar_top(self) -> int:
        """Pixel y of the top of the bar."""
        return QFontMetrics(self._small()).height() + 2 + LEADER

    def _span(self) -> tuple[float, float]:
        return 6.0, max(7.0, self.width() - 6.0)

    def scale_max(self) -> int:
        """Tokens at the right end of the bar."""
        b, bd = self.budget, self.breakdown
        if b is None or bd is None:
            return 1
        return max(b.window, bd.total_tokens, self.after or 0, 1)

    def x_of(self, tokens: float) -> float:
        """Pixel x of *tokens* on the bar."""
        left, right = self._span()
        return left + (right - left) * tokens / self.scale_max()

    def section_rects(self) -> dict[str, QRectF]:
        """Rectangle of every non-empty section of the bar."""
        out: dict[str, QRectF] = {}
        if self.breakdown is None or self.budget is None:
            return out
        top, acc = self.bar_top(), 0
        for s in self.breakdown.sections:
            if s.tokens > 0:
                x0, x1 = self.x_of(acc), self.x_of(acc + s.tokens)
                out[s.key] = QRectF(x0, top, max(1.0, x1 - x0), BAR_H)
                acc += s.tokens
        return out

    def marker_font(self, t: Threshold) -> QFont:
        """Bold when the context is past the threshold."""
        font = self._small()
        font.setBold(t.crossed)
        return font

    @staticmethod
    def marker_text(t: Threshold) -> str:
        """Short label of a marker: ``compaction 180k``."""
        return f"{MARKER_SHORT.get(t.key, t.key)} {fmt_k(t.tokens)}"

    def markers(self) -> list[Marker]:
        """Threshold markers with their label rectangles, left to right."""
        if self.budget is None or self.breakdown is None:
            return []
        ths = sorted(self.budget.thresholds, key=lambda t: (t.tokens, t.key))
        xs = [self.x_of(max(0, t.tokens)) for t in ths]
        widths = [
            float(QFontMetrics(self.marker_font(t)).horizontalAdvance(self.marker_text(t)) + 4)
            for t in ths
        ]
        lefts = spread_labels(xs, widths, 0.0, float(self.width()))
        h = QFontMetrics(self._small()).height()
        return [
            Marker(t, x, QRectF(lx, 1, w, h))
            for t, x, lx, w in zip(ths, xs, lefts, widths, strict=True)
        ]

    def marker_color(self, key: str) -> QColor:
        """Colour of a marker in the current palette."""
        if key not in MARKER_COLORS:
            return self.palette().color(QPalette.ColorRole.WindowText)
        light, dark = MARKER_COLORS[key]
        return QColor(dark if is_dark(self.palette()) else light)

    # -- painting -------------------------------------------------------------
    @override
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        pal = self.palette()
        top = self.bar_top()
        left, right = self._span()
        p.setFont(self._small())
        if self.budget is None or self.breakdown is None:
            p.setPen(pal.color(QPalette.ColorRole.PlaceholderText))
            box = QRectF(left, top, right - left, BAR_H)
            p.drawText(box, Qt.AlignmentFlag.AlignCenter, "no point selected")
            p.end()
            return
        window_x = self.x_of(self.budget.window)
        p.fillRect(QRectF(left, top, window_x - left, BAR_H), pal.color(QPalette.ColorRole.Base))
        if right > window_x + 0.5:
            p.fillRect(QRectF(window_x, top, right - window_x, BAR_H), OVER_WINDOW)
        self._paint_sections(p)
        p.setPen(QPen(pal.color(QPalette.ColorRole.Mid), 1))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(QRectF(left, top, right - left, BAR_H).adjusted(0, 0, -1, -1))
        if self.after is not None:
            bar = QRectF(left, top + BAR_H + 2, self.x_of(self.after) - left, 5)
            p.fillRect(bar, pal.color(QPalette.ColorRole.Highlight))
        self._paint_scale(p, top + BAR_H + 9)
        self._paint_markers(p, top)
        p.end()

    def _paint_sections(self, p: QPainter) -> None:
        assert self.breakdown is not None and self.budget is not None
        sep = self.palette().color(QPalette.ColorRole.Base)
        marks = [m.x for m in self.markers()]
        for key, r in self.section_rects().items():
            color = QColor(SECTION_COLORS[key])
            p.fillRect(r, color)
            if key == "unattributed":
                p.fillRect(r, hatch(color))
            if r.width() > 2:
                p.setPen(sep)
                p.drawLine(QPointF(r.right(), r.top()), QPointF(r.right(), r.bottom()))
            section = self.breakdown.section(key)  # type: ignore[arg-type]
            pct = fmt_pct(section.tokens, self.budget.window)
            self._paint_inside(p, r, (f"{section.label} {pct}", pct), marks, _text_on(color))
        if self.budget.window < self.breakdown.total_tokens:
            over = QRectF(self.x_of(self.budget.window), self.bar_top(), 0, 3)
            over.setRight(self.x_of(self.breakdown.total_tokens))
            p.fillRect(over, QColor("#dc2626"))

    def _paint_inside(
        self, p: QPainter, r: QRectF, labels: tuple[str, ...], marks: list[float], pen: QColor
    ) -> None:
        """Draw the first label that fits in *r*, clear of the marker lines."""
        fm = QFontMetrics(self._small())
        cuts = sorted(x for x in marks if r.left() < x < r.right())
        edges = [r.left(), *cuts, r.right()]
        parts = [QRectF(a, r.top(), b - a, r.height()) for a, b in itertools.pairwise(edges)]
        boxes = [r, *sorted(parts, key=lambda b: -b.width())]
        for label in labels:
            w = fm.horizontalAdvance(label)
            for box in boxes:
                cx = box.center().x()
                clear = all(abs(x - cx) > w / 2 + 3 for x in marks)
                if w + 8 <= box.width() and clear:
                    p.setPen(pen)
                    p.drawText(box, Qt.AlignmentFlag.AlignCenter, label)
                    return

    def _paint_scale(self, p: QPainter, y: float) -> None:
        left, right = self._span()
        top = self.scale_max()
        steps = (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2500, 5000)
        step = next((s * 1000 for s in steps if top / (s * 1000) <= 8), 10_000_000)
        fm = QFontMetrics(self._small())
        faint = QColor(self.palette().color(QPalette.ColorRole.WindowText))
        faint.setAlphaF(0.65)
        p.setPen(faint)
        last_right = -1e9
        for t in range(0, top + 1, step):
            x = self.x_of(t)
            label = fmt_k(t)
            w = fm.horizontalAdvance(label)
            lx = min(max(left, x - w / 2), right - w)
            p.drawLine(QPointF(x, y - 2), QPointF(x, y + 1))
            if lx > last_right + 6:
                p.drawText(QPointF(lx, y + 2 + fm.ascent()), label)
                last_right = lx + w

    def _paint_markers(self, p: QPainter, top: int) -> None:
        bg = self.palette().color(QPalette.ColorRole.Window)
        for m in self.markers():
            color = self.marker_color(m.threshold.key)
            solid = m.threshold.key == "window"
            # A halo in the background colour keeps the line visible on any section.
            p.setPen(QPen(bg, 4 if solid else 3.5))
            p.drawLine(QPointF(m.x, top), QPointF(m.x, top + BAR_H))
            pen = QPen(color, 2 if solid else 1.5)
            if not solid:
                pen.setDashPattern([3.0, 2.0])
            p.setPen(pen)
            p.drawLine(QPointF(m.x, top - 3), QPointF(m.x, top + BAR_H + 2))
            p.setPen(QPen(color, 1))
            p.drawLine(QPointF(m.label.center().x(), m.label.bottom()), QPointF(m.x, top - 3))
            p.fillRect(m.label, bg)
            p.setFont(self.marker_font(m.threshold))
            p.drawText(m.label, Qt.AlignmentFlag.AlignCenter, self.marker_text(m.threshold))

    # -- tooltips -------------------------------------------------------------
    @override
    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ToolTip:
            help_event: QHelpEvent = e  # type: ignore[assignment]
            tip = self.tooltip_at(QPointF(help_event.pos()))
            if tip:
                QToolTip.showText(help_event.globalPos(), tip, self)
            else:
                QToolTip.hideText()
                e.ignore()
            return True
        return super().event(e)

    def tooltip_at(self, pos: QPointF) -> str:
        """Tooltip text for the marker, section or comparison bar at *pos* ('' for none)."""
        top = self.bar_top()
        for m in self.markers():
            near_line = abs(pos.x() - m.x) <= 3 and top - LEADER <= pos.y() <= top + BAR_H + 2
            if m.label.contains(pos) or near_line:
                return self._threshold_tip(m.threshold)
        for key, r in self.section_rects().items():
            if r.contains(pos):
                return self._section_tip(key)  # type: ignore[arg-type]
        if self.after is not None and top + BAR_H < pos.y() <= top + BAR_H + 8:
            return self._comparison_tip()
        return ""
