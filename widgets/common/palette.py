"""Reading the palette: whether a view draws light text on a dark window."""

from __future__ import annotations

from PySide6.QtGui import QPalette


def is_dark(palette: QPalette) -> bool:
    """True when *palette* draws light text on a dark window."""
    return palette.color(QPalette.ColorRole.Window).lightness() < 128
