"""Colours, pens and axes of the session timeline (readable on light and dark palettes)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg  # type: ignore[import-untyped]
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontMetrics, QPalette
from typing_extensions import override

from core.context.terms import CONTEXT_TOKENS, MESSAGE_TOKENS
from core.timeline.arrays import Category

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

# Mid-luminance hues (Tableau 10): they keep their contrast on a white and on a
# near-black background, and stay apart for the common colour-vision deficiencies.
CATEGORY_COLORS: dict[Category, str] = {
    Category.USER: "#4c78a8",
    Category.ASSISTANT: "#f58518",
    Category.TOOL_RESULT: "#54a24b",
    Category.BASH: "#e45756",
    Category.CUSTOM: "#72b7b2",
    Category.SUMMARY: "#eeca3b",
    Category.OTHER: "#9d755d",
}
THINKING_COLOR = "#b279a2"
CUT_COLOR = "#d62728"
"""The planned compaction cut point (first kept entry)."""
THRESHOLD_STYLES: dict[str, tuple[str, Qt.PenStyle]] = {
    "window": ("#d62728", Qt.PenStyle.SolidLine),
    "compaction": ("#ff7f0e", Qt.PenStyle.DashLine),
    "flush": ("#9467bd", Qt.PenStyle.DashDotLine),
    "safe_limit": ("#17a2b8", Qt.PenStyle.DotLine),
}
FLUSH_COLOR = THRESHOLD_STYLES["flush"][0]
"""A memory flush the agent recorded: the colour of the flush threshold line."""
FLUSH_FAILED_COLOR = "#d62728"
BAR_WIDTH = 0.8
AXIS_TITLES = {
    "context_plot": (CONTEXT_TOKENS.name, "context", ""),
    "bar_plot": (MESSAGE_TOKENS.name, "message", ""),
}
"""Each y axis's title, from longest to none: the longest that fits its plot's height."""


def fit_axis_title(plot: pg.PlotItem, titles: Sequence[str]) -> None:
    """Give *plot*'s left axis the longest of *titles* that fits its height (none: hidden).

    A rotated title longer than its plot spills over the other plot's and draws
    over its title: a short timeline says "context" or nothing instead.
    """
    axis = plot.getAxis("left")
    metrics = QFontMetrics(axis.label.font())
    room = plot.vb.height() - 6
    title = next((t for t in titles if metrics.horizontalAdvance(t) + 8 <= room), "")
    if title == (axis.labelText if axis.label.isVisible() else ""):
        return
    if title:
        plot.setLabel("left", title)
    else:
        plot.showLabel("left", False)


def short_tokens(value: float) -> str:
    """``183,400`` -> ``183.4k``: axis ticks that fit."""
    a = abs(value)
    if a >= 1_000_000:
        return f"{value / 1_000_000:.2f}".rstrip("0").rstrip(".") + "M"
    if a >= 1000:
        return f"{value / 1000:.1f}".rstrip("0").rstrip(".") + "k"
    return f"{value:g}"


class TokenAxis(pg.AxisItem):  # type: ignore[misc]  # pyqtgraph has no type hints
    """A value axis in tokens with ``k``/``M`` suffixes instead of an SI scale factor."""

    def __init__(self, orientation: str, **kwargs: Any) -> None:
        super().__init__(orientation, **kwargs)
        self.enableAutoSIPrefix(False)

    @override
    def tickStrings(self, values: Sequence[float], scale: float, spacing: float) -> list[str]:
        return [short_tokens(v) for v in values]


class IndexAxis(pg.AxisItem):  # type: ignore[misc]  # pyqtgraph has no type hints
    """The message axis, labelled with entry numbers (``#N``, as every other view says).

    The plot's x is the message position; :meth:`set_entries` gives each position's
    entry number. Ticks fall on round entry numbers (the entries between messages,
    compactions among them, sit between two positions).
    """

    def __init__(self, orientation: str, **kwargs: Any) -> None:
        super().__init__(orientation, **kwargs)
        self._entries: NDArray[np.float64] | None = None
        self._positions: NDArray[np.float64] = np.zeros(0)

    def set_entries(self, entry_index: NDArray[np.int64] | None) -> None:
        """The entry number of each message position (None: plain positions)."""
        if entry_index is None or len(entry_index) < 2:
            self._entries = None
        else:
            self._entries = entry_index.astype(np.float64)
            self._positions = np.arange(len(entry_index), dtype=np.float64)
        self.picture = None  # drawn again with the new labels
        self.update()

    @override
    def tickValues(self, minVal: float, maxVal: float, size: float) -> list[Any]:
        entries = self._entries
        if entries is None:
            return super().tickValues(minVal, maxVal, size)  # type: ignore[no-any-return]
        lo, hi = sorted((minVal, maxVal))
        e_lo, e_hi = np.interp([lo, hi], self._positions, entries)
        per_entry = (self._positions[-1] - self._positions[0]) / max(1.0, entries[-1] - entries[0])
        levels = []
        for spacing, values in super().tickValues(e_lo, e_hi, size):
            whole = [v for v in values if float(v).is_integer()]
            at = np.interp(whole, entries, self._positions)
            levels.append((max(spacing, 1.0) * per_entry, [float(x) for x in at]))
        return levels

    @override
    def tickStrings(self, values: Sequence[float], scale: float, spacing: float) -> list[str]:
        entries = self._entries
        if entries is None:
            return [f"{round(v):,}" if float(v).is_integer() else "" for v in values]
        numbers = np.interp(values, self._positions, entries)
        return [f"#{round(n):,}" for n in numbers]


def palette_colors(palette: QPalette) -> dict[str, QColor]:
    """The colours of the current palette that the plot follows."""
    base = palette.color(QPalette.ColorRole.Base)
    text = palette.color(QPalette.ColorRole.Text)
    mid = QColor(text)
    mid.setAlphaF(0.55)
    grid = QColor(text)
    grid.setAlphaF(0.35)
    label_fill = QColor(base)
    label_fill.setAlphaF(0.85)
    return {
        "base": base,
        "text": text,
        "mid": mid,
        "grid": grid,
        "label_fill": label_fill,
        "highlight": palette.color(QPalette.ColorRole.Highlight),
    }


def legend_html(entries: Sequence[tuple[str, str, str]], text: QColor) -> str:
    """A one-line legend: ``(glyph, colour, label)`` per entry."""
    cells = [
        f'<span style="color:{color}; font-weight:bold">{glyph}</span>'
        f'&nbsp;<span style="color:{text.name()}">{label}</span>'
        for glyph, color, label in entries
    ]
    return "&nbsp;&nbsp;&nbsp;".join(cells)
