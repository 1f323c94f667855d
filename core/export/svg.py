"""A session's timeline as an SVG chart, drawn from its arrays (no screenshot, no Qt).

Two panels share the x axis, labelled with each message's entry ``#N``: the context
curve along the current path, with the threshold lines and each compaction's
``before -> after``; below it one bar per message, coloured by role. Labels sit in the
margins or are stacked on rows, so none is clipped or drawn over another. Thousands of
messages are binned per pixel column (the tallest bar, the curve's minimum and maximum).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING

import numpy as np

from core.context.terms import CHARS4_ESTIMATE, CONTEXT_TOKENS, MESSAGE_TOKENS
from core.safety.redact import redact
from core.timeline.arrays import Category

if TYPE_CHECKING:
    from collections.abc import Iterable

    from numpy.typing import NDArray

    from core.timeline.arrays import Timeline

__all__ = ["CATEGORY_COLORS", "ChartBox", "safe_text", "timeline_svg"]

CATEGORY_COLORS = {
    Category.USER: "#4e79a7",
    Category.ASSISTANT: "#f28e2b",
    Category.TOOL_RESULT: "#59a14f",
    Category.BASH: "#76b7b2",
    Category.CUSTOM: "#b07aa1",
    Category.SUMMARY: "#9c755f",
    Category.OTHER: "#a0a0a0",
}
"""The colour of each message category (a light page: the report is read anywhere)."""
_THRESHOLD_COLORS = {
    "window": "#555555",
    "compaction": "#d62728",
    "flush": "#b8860b",
    "safe_limit": "#8c564b",
}
_CURVE = "#1f4e99"
_ESTIMATE = "#7f7f7f"
_COMPACTION = "#d62728"
_CUT = "#2ca02c"
_AXIS = "#444444"
_GRID = "#e4e4e4"
_LABEL_ROWS = 3


def safe_text(value: object) -> str:
    """*value* as safe markup text: secrets redacted, then escaped (quotes too)."""
    return escape(redact(str(value)), quote=True)


@dataclass(frozen=True, slots=True)
class ChartBox:
    """Where the two panels sit in the picture, in pixels."""

    width: int
    height: int
    left: int = 70
    right: int = 150
    top: int = 58
    bottom: int = 40
    gap: int = 22

    @property
    def plot_width(self) -> float:
        """Width of the plotting area."""
        return float(max(self.width - self.left - self.right, 10))

    @property
    def context_bottom(self) -> float:
        """The bottom of the context panel (62 % of the plotting height)."""
        return self.top + 0.62 * (self.height - self.top - self.bottom - self.gap)

    @property
    def bars_top(self) -> float:
        """The top of the bar panel."""
        return self.context_bottom + self.gap

    @property
    def bars_bottom(self) -> float:
        """The bottom of the bar panel (the x axis)."""
        return float(self.height - self.bottom)


class _Scale:
    """Message position and tokens to pixels."""

    def __init__(self, box: ChartBox, n: int, context_max: float, bar_max: float) -> None:
        self.box = box
        self.n = max(n, 1)
        self.context_max = max(context_max, 1.0)
        self.bar_max = max(bar_max, 1.0)

    def x(self, pos: float) -> float:
        return self.box.left + (pos + 0.5) / self.n * self.box.plot_width

    def y(self, tokens: float) -> float:
        b = self.box
        return b.context_bottom - tokens / self.context_max * (b.context_bottom - b.top)

    def bar_y(self, tokens: float) -> float:
        b = self.box
        return b.bars_bottom - tokens / self.bar_max * (b.bars_bottom - b.bars_top)


def _fmt(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _tokens(value: float) -> str:
    if value >= 1000:
        return f"{value / 1000:,.0f}k" if value % 1000 == 0 or value >= 10_000 else f"{value:,.0f}"
    return f"{value:,.0f}"


def _nice_ticks(top: float, count: int = 5) -> list[float]:
    """Round values from 0 up to *top*, about *count* of them."""
    if top <= 0:
        return [0.0]
    raw = top / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [i * step for i in range(int(top // step) + 1)]


def _finite_max(*arrays: NDArray[np.float64] | NDArray[np.int64]) -> float:
    best = 0.0
    for a in arrays:
        if len(a):
            finite = np.asarray(a, dtype=np.float64)
            finite = finite[np.isfinite(finite)]
            if len(finite):
                best = max(best, float(finite.max()))
    return best


def _curve_path(xs: Iterable[float], ys: Iterable[float]) -> str:
    """An SVG path through the points, broken at NaN.

    Per pixel column, the first and last points and the minimum and maximum are kept
    (peak downsampling).
    """
    parts: list[str] = []
    pen_down = False
    column: float | None = None
    bucket: list[tuple[float, float]] = []

    def flush() -> None:
        nonlocal pen_down
        if not bucket:
            return
        points = bucket
        if len(bucket) > 4:
            low = min(bucket, key=lambda p: p[1])
            high = max(bucket, key=lambda p: p[1])
            middle = sorted({low, high}, key=bucket.index)
            points = [bucket[0], *middle, bucket[-1]]
        for px, py in points:
            parts.append(f"{'L' if pen_down else 'M'}{_fmt(px)},{_fmt(py)}")
            pen_down = True
        bucket.clear()

    for px, py in zip(xs, ys, strict=True):
        if not (math.isfinite(px) and math.isfinite(py)):
            flush()
            pen_down = False
            column = None
            continue
        col = math.floor(px)
        if col != column:
            flush()
            column = col
        bucket.append((px, py))
    flush()
    return "".join(parts)


def _bars(timeline: Timeline, scale: _Scale) -> list[str]:
    """One path per (category, on path): the bars, the tallest kept per pixel column."""
    n = len(timeline)
    slot = scale.box.plot_width / max(n, 1)
    width = max(slot * 0.8, 0.6)
    cols: dict[int, int] = {}  # pixel column -> position of its tallest bar
    for pos in range(n):
        col = math.floor(scale.x(pos)) if slot < 1.5 else pos
        best = cols.get(col)
        if best is None or timeline.tokens[pos] > timeline.tokens[best]:
            cols[col] = pos
    paths: dict[tuple[int, bool], list[str]] = {}
    base = scale.bar_y(0)
    for pos in cols.values():
        key = (int(timeline.category[pos]), bool(timeline.on_path[pos]))
        x0 = scale.x(pos) - width / 2
        top = scale.bar_y(float(timeline.tokens[pos]))
        paths.setdefault(key, []).append(
            f"M{_fmt(x0)},{_fmt(base)}V{_fmt(top)}h{_fmt(width)}V{_fmt(base)}Z"
        )
    out = []
    for (cat, on_path), d in sorted(paths.items()):
        color = CATEGORY_COLORS.get(Category(cat), CATEGORY_COLORS[Category.OTHER])
        opacity = "" if on_path else ' fill-opacity="0.35"'
        out.append(f'<path d="{"".join(d)}" fill="{color}"{opacity}/>')
    return out


def _entry_ticks(index: NDArray[np.int64], count: int = 8) -> list[tuple[float, int]]:
    """Round entry numbers ``#N`` and where they fall among the messages (interpolated)."""
    if not len(index):
        return []
    first, last = int(index[0]), int(index[-1])
    if last <= first:
        return [(0.0, first)]
    step = max(1, int(_nice_ticks(last - first, count)[1]))
    ticks = []
    for number in range(math.ceil(first / step) * step, last + 1, step):
        pos = float(np.interp(number, index.astype(np.float64), np.arange(len(index))))
        ticks.append((pos, number))
    return ticks


def _axes(timeline: Timeline, scale: _Scale) -> list[str]:
    b = scale.box
    right = b.left + b.plot_width
    out = []
    for tick in _nice_ticks(scale.context_max):
        y = scale.y(tick)
        out.append(
            f'<line x1="{b.left}" y1="{_fmt(y)}" x2="{_fmt(right)}" y2="{_fmt(y)}" '
            f'stroke="{_GRID}"/>'
            f'<text x="{b.left - 6}" y="{_fmt(y + 4)}" text-anchor="end">{_tokens(tick)}</text>'
        )
    for tick in _nice_ticks(scale.bar_max, 3):
        y = scale.bar_y(tick)
        out.append(
            f'<line x1="{b.left}" y1="{_fmt(y)}" x2="{_fmt(right)}" y2="{_fmt(y)}" '
            f'stroke="{_GRID}"/>'
            f'<text x="{b.left - 6}" y="{_fmt(y + 4)}" text-anchor="end">{_tokens(tick)}</text>'
        )
    for top, bottom in ((b.top, b.context_bottom), (b.bars_top, b.bars_bottom)):
        out.append(
            f'<rect x="{b.left}" y="{_fmt(top)}" width="{_fmt(b.plot_width)}" '
            f'height="{_fmt(bottom - top)}" fill="none" stroke="{_AXIS}" stroke-width="0.8"/>'
        )
    for pos, number in _entry_ticks(timeline.entry_index):
        x = scale.x(pos)
        out.append(
            f'<line x1="{_fmt(x)}" y1="{_fmt(b.bars_bottom)}" x2="{_fmt(x)}" '
            f'y2="{_fmt(b.bars_bottom + 4)}" stroke="{_AXIS}"/>'
            f'<text x="{_fmt(x)}" y="{_fmt(b.bars_bottom + 16)}" text-anchor="middle">'
            f"#{number:,}</text>"
        )
    mid_context = (b.top + b.context_bottom) / 2
    mid_bars = (b.bars_top + b.bars_bottom) / 2
    out.append(
        f'<text x="14" y="{_fmt(mid_context)}" text-anchor="middle" '
        f'transform="rotate(-90 14 {_fmt(mid_context)})">{CONTEXT_TOKENS.name}</text>'
        f'<text x="14" y="{_fmt(mid_bars)}" text-anchor="middle" '
        f'transform="rotate(-90 14 {_fmt(mid_bars)})">{MESSAGE_TOKENS.name}</text>'
        f'<text x="{_fmt(b.left + b.plot_width / 2)}" y="{b.height - 6}" '
        f'text-anchor="middle">entry #N</text>'
    )
    return out


def _thresholds(timeline: Timeline, scale: _Scale) -> list[str]:
    """Dashed lines across the context panel, their labels in the right margin, spread."""
    b = scale.box
    right = b.left + b.plot_width
    lines = sorted(timeline.thresholds, key=lambda t: -t.tokens)
    out = []
    label_y: list[float] = []
    for line in lines:
        y = scale.y(line.tokens)
        color = _THRESHOLD_COLORS.get(line.key, _AXIS)
        out.append(
            f'<line x1="{b.left}" y1="{_fmt(y)}" x2="{_fmt(right)}" y2="{_fmt(y)}" '
            f'stroke="{color}" stroke-dasharray="6 4" stroke-width="1"/>'
        )
        ly = max(y + 4, label_y[-1] + 13) if label_y else y + 4
        label_y.append(ly)
        out.append(
            f'<text x="{_fmt(right + 6)}" y="{_fmt(ly)}" fill="{color}">'
            f"{safe_text(line.label)} {line.tokens:,}</text>"
        )
    return out


@dataclass(frozen=True, slots=True)
class _Label:
    """A compaction's ``before -> after`` label: where its line is, its row and side."""

    x: float
    row: int
    anchor: str
    text: str


def _compaction_labels(timeline: Timeline, scale: _Scale) -> list[_Label]:
    """Each compaction's label on the first row where it overlaps none (x only: no top yet)."""
    right = scale.box.left + scale.box.plot_width
    rows_end = [-math.inf] * _LABEL_ROWS
    labels = []
    for i, marker in enumerate(timeline.compactions):
        x = scale.x(marker.x)
        label = f"{marker.tokens_before:,} \u2192 {marker.tokens_after:,}"
        width = 6.2 * len(label)
        start, anchor = x + 3, "start"
        if start + width > right:  # the last compactions: the label ends at the line
            start, anchor = x - 3 - width, "end"
        row = next((r for r in range(_LABEL_ROWS) if rows_end[r] < start - 4), i % _LABEL_ROWS)
        rows_end[row] = start + width
        labels.append(_Label(x, row, anchor, label))
    return labels


def _compactions(timeline: Timeline, scale: _Scale, labels: list[_Label]) -> list[str]:
    """A line at each compaction, its label on its row above the plot."""
    b = scale.box
    out = []
    for marker, label in zip(timeline.compactions, labels, strict=True):
        dash = "" if marker.on_path else ' stroke-dasharray="3 3"'
        x = label.x
        out.append(
            f'<line x1="{_fmt(x)}" y1="{b.top}" x2="{_fmt(x)}" y2="{_fmt(b.context_bottom)}" '
            f'stroke="{_COMPACTION}" stroke-width="1.2"{dash}/>'
        )
        tx = x + 3 if label.anchor == "start" else x - 3
        out.append(
            f'<text x="{_fmt(tx)}" y="{_fmt(b.top - 6 - 13 * label.row)}" '
            f'fill="{_COMPACTION}" text-anchor="{label.anchor}">{safe_text(label.text)}</text>'
        )
    return out


def _cut(timeline: Timeline, scale: _Scale, cut_entry_id: str | None) -> list[str]:
    pos = timeline.position(cut_entry_id) if cut_entry_id else None
    if pos is None:
        return []
    b = scale.box
    x = scale.x(pos - 0.5)
    label = f"cut point: first kept #{int(timeline.entry_index[pos])}"
    anchor = "end" if x > b.left + b.plot_width * 0.7 else "start"
    tx = x - 4 if anchor == "end" else x + 4
    return [
        f'<line x1="{_fmt(x)}" y1="{b.top}" x2="{_fmt(x)}" y2="{_fmt(b.bars_bottom)}" '
        f'stroke="{_CUT}" stroke-width="1.5" stroke-dasharray="8 3"/>',
        f'<text x="{_fmt(tx)}" y="{_fmt(b.context_bottom - 6)}" fill="{_CUT}" '
        f'text-anchor="{anchor}">{safe_text(label)}</text>',
    ]


def _legend(timeline: Timeline, box: ChartBox) -> tuple[str, float]:
    """The legend's markup, on as many rows as the width needs, and its bottom."""
    present = sorted({int(c) for c in timeline.category})
    items = [
        (f'<rect width="10" height="10" y="-9" fill="{CATEGORY_COLORS[Category(c)]}"/>', 14,
         Category(c).label)
        for c in present
    ]  # fmt: skip
    items += [
        (f'<line x2="14" y1="-4" y2="-4" stroke="{_CURVE}" stroke-width="2"/>', 18,
         f"{CONTEXT_TOKENS.name} (reported, else chars/4)"),
        (f'<line x2="14" y1="-4" y2="-4" stroke="{_ESTIMATE}" stroke-dasharray="4 3"/>', 18,
         CHARS4_ESTIMATE.name),
        (f'<line x1="5" x2="5" y1="-10" y2="2" stroke="{_COMPACTION}"/>', 10, "compaction"),
    ]  # fmt: skip
    parts = []
    x = float(box.left)
    y = 14.0
    for mark, width, label in items:
        advance = width + 6.2 * len(label) + 14
        if x + advance > box.width - 8 and x > box.left:
            x, y = float(box.left), y + 14
        parts.append(
            f'<g transform="translate({_fmt(x)} {_fmt(y)})">{mark}'
            f'<text x="{width}" y="0">{safe_text(label)}</text></g>'
        )
        x += advance
    return "".join(parts), y + 6


def timeline_svg(
    timeline: Timeline,
    *,
    width: int = 1100,
    height: int = 460,
    cut_entry_id: str | None = None,
    title: str = "",
) -> str:
    """The SVG markup of *timeline*'s chart (a complete ``<svg>`` element).

    Parameters
    ----------
    timeline
        The session's arrays (:func:`core.timeline.arrays.build_timeline`).
    width, height
        The picture's size in pixels.
    cut_entry_id
        A compaction's first kept entry: drawn as a labelled line.
    title
        The ``<title>`` of the picture (redacted and escaped).
    """
    legend, legend_bottom = _legend(timeline, ChartBox(width, height))
    texts = [f"{t.label} {t.tokens:,}" for t in timeline.thresholds]
    right = round(max((6.4 * len(t) + 14 for t in texts), default=30))
    n = len(timeline)
    labels = _compaction_labels(timeline, _Scale(ChartBox(width, height, right=right), n, 1, 1))
    rows = max((label.row + 1 for label in labels), default=0)
    box = ChartBox(width, height, right=right, top=round(legend_bottom + 10 + 13 * rows))
    context_max = _finite_max(
        timeline.path_context,
        timeline.path_estimated,
        timeline.context,
        np.asarray([t.tokens for t in timeline.thresholds], dtype=np.float64),
    )
    scale = _Scale(box, len(timeline), context_max * 1.05, _finite_max(timeline.tokens) * 1.05)
    curve_x = [scale.x(x) for x in timeline.path_x]
    curve = _curve_path(curve_x, [scale.y(y) for y in timeline.path_context])
    estimate = _curve_path(curve_x, [scale.y(y) for y in timeline.path_estimated])
    body = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" '
        f'font-size="11" fill="#222222">',
        f"<title>{safe_text(title or f'Timeline of session {timeline.session_id}')}</title>",
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        *_axes(timeline, scale),
        *_bars(timeline, scale),
        *_thresholds(timeline, scale),
        f'<path d="{estimate}" fill="none" stroke="{_ESTIMATE}" stroke-width="1" '
        f'stroke-dasharray="4 3"/>'
        if estimate
        else "",
        f'<path d="{curve}" fill="none" stroke="{_CURVE}" stroke-width="1.8"/>' if curve else "",
        *_compactions(timeline, scale, labels),
        *_cut(timeline, scale, cut_entry_id),
        legend,
    ]
    if not len(timeline):
        body.append(
            f'<text x="{_fmt(box.left + box.plot_width / 2)}" y="{_fmt(box.context_bottom)}" '
            f'text-anchor="middle">no messages</text>'
        )
    body.append("</svg>")
    return "\n".join(part for part in body if part)
