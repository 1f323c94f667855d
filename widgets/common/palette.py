"""Reading the palette: whether a view draws light text on a dark window, plot colours."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QColor, QPalette


def is_dark(palette: QPalette) -> bool:
    """True when *palette* draws light text on a dark window."""
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def color_plots(chart: Any, plots: Any, palette: QPalette) -> QColor:
    """Give a pyqtgraph *chart* the palette's base and its *plots*' axes the text colour.

    Returns the text colour, for what else the view draws in it.
    """
    chart.setBackground(palette.color(QPalette.ColorRole.Base))
    text = palette.color(QPalette.ColorRole.Text)
    for plot in plots:
        for name in ("left", "bottom"):
            plot.getAxis(name).setPen(text)
            plot.getAxis(name).setTextPen(text)
    return text
