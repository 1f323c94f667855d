"""Where the timeline's text labels go: inside the plot, clear of lines, curves and each other.

Geometry only, in the view box's pixels (y down): :class:`Frame` maps plot
coordinates to pixels, :func:`place_threshold` finds a spot for a threshold line's
label (above or below its group of lines, clear of the context curve) and
:func:`place_beside` one for a marker's label in the top rows (right of the marker,
else flipped to its left so that the last one near the right edge still shows).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QRectF

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

GAP = 3.0
"""Pixels between a label and a line, a marker or another label."""
PAD = 4.0
"""Pixels kept free along the view box's edges."""
ROWS_ABOVE = 3


@dataclass(frozen=True, slots=True)
class Frame:
    """The view box: its range in plot coordinates and its size in pixels."""

    x0: float
    x1: float
    y0: float
    y1: float
    width: float
    height: float

    def px(self, x: float) -> float:
        """Pixel x of plot x."""
        return (x - self.x0) * self.width / (self.x1 - self.x0) if self.x1 > self.x0 else 0.0

    def py(self, y: float) -> float:
        """Pixel y (down) of plot y."""
        return (self.y1 - y) * self.height / (self.y1 - self.y0) if self.y1 > self.y0 else 0.0

    def x_at(self, px: float) -> float:
        """Plot x of pixel x."""
        return self.x0 + px * (self.x1 - self.x0) / self.width if self.width > 0 else self.x0

    def y_at(self, py: float) -> float:
        """Plot y of pixel y."""
        return self.y1 - py * (self.y1 - self.y0) / self.height if self.height > 0 else self.y1

    def holds(self, r: QRectF) -> bool:
        """True when *r* lies inside the view box."""
        inside = r.left() >= 0 and r.top() >= 0
        return inside and r.right() <= self.width and r.bottom() <= self.height


def line_groups(ys: Sequence[float], height: float) -> list[list[int]]:
    """Indexes of lines (pixel ys, any order) grouped where no label fits between two."""
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    groups: list[list[int]] = []
    for i in order:
        if groups and ys[i] - ys[groups[-1][-1]] < height + 2 * GAP:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def _crosses(r: QRectF, lines: Sequence[float]) -> bool:
    return any(r.top() - 0.5 < y < r.bottom() + 0.5 for y in lines)


def place_threshold(
    frame: Frame,
    size: tuple[float, float],
    group: tuple[float, float],
    lines: Sequence[float],
    taken: Sequence[QRectF],
    curve: Callable[[float, float], tuple[float, float]],
) -> QRectF | None:
    """A rectangle for a threshold label of *size*, or None when none is clear.

    *group* is the pixel y of the highest and lowest line of the label's group
    (:func:`line_groups`): the label goes in a row above it, else below it, as far
    right as it can, crossing none of *lines*, overlapping nothing *taken* and
    clear of the curves (*curve* gives their lowest and highest plot y over a
    plot x range, as :meth:`core.timeline.arrays.Timeline.curve_span`).
    """
    w, h = size
    top, bottom = group
    rows = [top - GAP - h - k * (h + 1) for k in range(ROWS_ABOVE)]
    rows += [bottom + GAP + k * (h + 1) for k in range(2)]
    xs = {frame.width - PAD - w, PAD}
    xs |= {r.left() - GAP - w for r in taken} | {r.right() + GAP for r in taken}
    step = max(w / 2, 8.0)
    xs |= {frame.width - PAD - w - k * step for k in range(int(frame.width // step) + 1)}
    for y in rows:
        for x in sorted(xs, reverse=True):
            r = QRectF(x, y, w, h)
            if not frame.holds(r) or _crosses(r, lines) or any(r.intersects(t) for t in taken):
                continue
            lo, hi = curve(frame.x_at(r.left()), frame.x_at(r.right()))
            if hi < frame.y_at(r.bottom()) or lo > frame.y_at(r.top()):
                return r
    return None


def place_beside(
    frame: Frame,
    px: float,
    size: tuple[float, float],
    rows: Sequence[float],
    lines: Sequence[float],
    taken: Sequence[QRectF],
) -> QRectF | None:
    """A rectangle in one of *rows* (pixel tops) right of pixel x *px*, else left of it."""
    w, h = size
    if not 0 <= px <= frame.width:
        return None
    for x in (px + GAP, px - GAP - w):
        for y in rows:
            r = QRectF(x, y, w, h)
            clear = not _crosses(r, lines) and not any(r.intersects(t) for t in taken)
            if clear and frame.holds(r):
                return r
    return None


def place_near(
    frame: Frame,
    point: tuple[float, float],
    size: tuple[float, float],
    lines: Sequence[float],
    taken: Sequence[QRectF],
) -> QRectF | None:
    """A rectangle by pixel *point* (above left first), crossing no line, on nothing taken."""
    (px, py), (w, h) = point, size
    for dy in (-h - GAP, GAP, -2 * h - GAP - 1, h + GAP + 1, -3 * h - GAP - 2):
        for x in (px - w - GAP, px + GAP):
            r = QRectF(x, py + dy, w, h)
            clear = not _crosses(r, lines) and not any(r.intersects(t) for t in taken)
            if clear and frame.holds(r):
                return r
    return None


def rows_above(line: float, height: float, top: float) -> list[float]:
    """Pixel tops of the label rows from *top* down to a line at pixel y *line* (one at least)."""
    rows = [top]
    while rows[-1] + 2 * (height + 1) + GAP <= line:
        rows.append(rows[-1] + height + 1)
    return rows


def place_low(
    frame: Frame,
    px: float,
    size: tuple[float, float],
    lines: Sequence[float],
    taken: Sequence[QRectF],
    curve: Callable[[float, float], tuple[float, float]],
) -> QRectF | None:
    """A rectangle beside a vertical line at pixel x *px*, from the bottom up.

    Clear of the curve if it can be; else the lowest free spot (the label's
    background then covers the curve there).
    """
    w, h = size
    fallback: QRectF | None = None
    y = frame.height - PAD - h
    while y >= 0:
        for x in (px + GAP, px - GAP - w):
            r = QRectF(x, y, w, h)
            if not frame.holds(r) or _crosses(r, lines) or any(r.intersects(t) for t in taken):
                continue
            lo, hi = curve(frame.x_at(r.left()), frame.x_at(r.right()))
            if hi < frame.y_at(r.bottom()) or lo > frame.y_at(r.top()):
                return r
            fallback = fallback or r
        y -= h + 1
    return fallback
