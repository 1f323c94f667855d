"""Light and dark palettes; by default memlens follows the system's colour scheme."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette

if TYPE_CHECKING:
    from PySide6.QtWidgets import QApplication

_DARK = {
    QPalette.ColorRole.Window: "#2b2d30",
    QPalette.ColorRole.WindowText: "#dfe1e5",
    QPalette.ColorRole.Base: "#1e1f22",
    QPalette.ColorRole.AlternateBase: "#26282b",
    QPalette.ColorRole.ToolTipBase: "#3c3f41",
    QPalette.ColorRole.ToolTipText: "#dfe1e5",
    QPalette.ColorRole.PlaceholderText: "#8c8f94",
    QPalette.ColorRole.Text: "#dfe1e5",
    QPalette.ColorRole.Button: "#393b40",
    QPalette.ColorRole.ButtonText: "#dfe1e5",
    QPalette.ColorRole.BrightText: "#ff6b68",
    QPalette.ColorRole.Highlight: "#2f65ca",
    QPalette.ColorRole.HighlightedText: "#ffffff",
    QPalette.ColorRole.Link: "#589df6",
    QPalette.ColorRole.Mid: "#4e5157",
    QPalette.ColorRole.Dark: "#1b1c1f",
    QPalette.ColorRole.Light: "#4e5157",
}


def dark_palette() -> QPalette:
    """The dark palette memlens uses when the system (or the user) asks for dark."""
    palette = QPalette()
    for role, color in _DARK.items():
        palette.setColor(role, QColor(color))
    for role in (
        QPalette.ColorRole.Text,
        QPalette.ColorRole.WindowText,
        QPalette.ColorRole.ButtonText,
    ):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6f737a"))
    return palette


_platform_lightness: list[int] = []


def _platform_window_lightness() -> int:
    """Lightness of the platform's own window colour, read before memlens sets a palette."""
    if not _platform_lightness:
        _platform_lightness.append(
            QGuiApplication.palette().color(QPalette.ColorRole.Window).lightness()
        )
    return _platform_lightness[0]


def system_is_dark(scheme: Qt.ColorScheme | None = None) -> bool:
    """Whether the platform reports a dark colour scheme.

    Where the platform does not say (``Unknown``), its own palette decides.
    """
    if scheme is None:
        scheme = QGuiApplication.styleHints().colorScheme()
    if scheme == Qt.ColorScheme.Unknown:
        return _platform_window_lightness() < 128
    return scheme == Qt.ColorScheme.Dark


def apply_theme(app: QApplication, theme: str, scheme: Qt.ColorScheme | None = None) -> bool:
    """Apply ``system``, ``light`` or ``dark``; returns True when the result is dark.

    *scheme* is the system's colour scheme when known (from ``colorSchemeChanged``).
    """
    _platform_window_lightness()
    app.setStyle("Fusion")
    dark = theme == "dark" or (theme == "system" and system_is_dark(scheme))
    palette = dark_palette() if dark else app.style().standardPalette()
    app.setPalette(palette)
    app.setProperty("memlens_dark", dark)
    return dark
