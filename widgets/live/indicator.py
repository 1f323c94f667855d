"""Live indicator for the status bar: a dot and "Live", "Paused" or "Off".

A click, Enter/Space when it has focus, or its action's shortcut (Ctrl+L,
see :attr:`LiveIndicator.toggle_action`, which the app may also put in a menu)
asks to pause or resume through :attr:`LiveIndicator.toggle_requested`; the
app decides and calls :meth:`LiveIndicator.set_state`. When changes arrive
the dot flashes briefly and the tooltip says what came and when.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QSize, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QColor, QIcon, QKeySequence, QPainter, QPalette, QPixmap
from PySide6.QtWidgets import (
    QPushButton,
    QSizePolicy,
    QStyle,
    QStyleOptionButton,
    QStylePainter,
    QWidget,
)
from typing_extensions import override

if TYPE_CHECKING:
    from PySide6.QtGui import QMouseEvent, QPaintEvent

__all__ = ["LiveIndicator"]

COLORS = {"live": "#2e9d4c", "paused": "#d39a1c"}
"""Dot colours; "off" uses the palette's placeholder-text grey."""
TEXT = {"live": "Live", "paused": "Paused", "off": "Off"}
FLASH_MS = 700


class LiveIndicator(QPushButton):
    """A status-bar button showing the live state (see the module docstring)."""

    toggle_requested = Signal()
    """The user asked to pause (when live) or resume (when paused)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("live-indicator")
        # A flat push button: a tool button would show the shortcut's action as a menu.
        self.setFlat(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.setIconSize(QSize(12, 12))
        self._state = "off"
        self._last_time: float | None = None
        self._last_text = ""
        self._flashing = False
        self._flash = QTimer(self, singleShot=True, interval=FLASH_MS)
        self._flash.timeout.connect(self._on_flash_timeout)
        self.toggle_action = QAction("Pause Live Updates", self)
        """Pause or resume (Ctrl+L); the app may add it to a menu as well."""
        self.toggle_action.setShortcut(QKeySequence("Ctrl+L"))
        self.toggle_action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        self.toggle_action.triggered.connect(self._on_toggle_triggered)
        self.addAction(self.toggle_action)
        self.clicked.connect(self._on_toggle_triggered)
        self.setAccessibleName("Live mode")
        self._refresh()
        self._fit_width()

    # -- state ------------------------------------------------------------------------------
    def state(self) -> str:
        """``live``, ``paused`` or ``off``."""
        return self._state

    @Slot(str)
    def set_state(self, state: str) -> None:
        """Show *state* (``live``, ``paused`` or ``off``)."""
        if state not in TEXT:
            raise ValueError(f"unknown live state {state!r}")
        self._state = state
        self._refresh()

    @Slot(str, object)
    def note_changes(self, summary: str, when: float | None = None) -> None:
        """Changes were applied: flash the dot and tell when and what in the tooltip."""
        self._last_time = time.time() if when is None else when
        self._last_text = summary
        self._flashing = True
        self._flash.start()
        self._refresh()

    def last_event_text(self) -> str:
        """The tooltip's line about the last change (empty before any)."""
        if self._last_time is None:
            return ""
        stamp = time.strftime("%H:%M:%S", time.localtime(self._last_time))
        return f"Last change at {stamp}: {self._last_text}"

    # -- drawing ----------------------------------------------------------------------------
    def _refresh(self) -> None:
        state = self._state
        self.setText(TEXT[state])
        self.setIcon(self._dot())
        self.setEnabled(True)
        self.toggle_action.setEnabled(state != "off")
        self.toggle_action.setText(
            "Resume Live Updates" if state == "paused" else "Pause Live Updates"
        )
        lines = {
            "live": "Live: following the agent's appends to transcripts, segments and facts.",
            "paused": "Paused: changes on disk are noted and applied when you resume.",
            "off": "Off: no data directory is followed.",
        }
        tip = [lines[state]]
        if self._last_time is not None:
            tip.append(self.last_event_text())
        if state != "off":
            tip.append(f"Click or press Ctrl+L to {'resume' if state == 'paused' else 'pause'}.")
        self.setToolTip("\n".join(tip))
        self.setAccessibleDescription(tip[0])

    def _dot(self) -> QIcon:
        ratio = max(self.devicePixelRatioF(), 1.0)
        size = 12
        pix = QPixmap(int(size * ratio), int(size * ratio))
        pix.setDevicePixelRatio(ratio)
        pix.fill(Qt.GlobalColor.transparent)
        grey = self.palette().color(QPalette.ColorRole.PlaceholderText)
        color = QColor(COLORS[self._state]) if self._state in COLORS else grey
        painter = QPainter(pix)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        if self._flashing and self._state == "live":
            halo = QColor(color)
            halo.setAlpha(90)
            painter.setBrush(halo)
            painter.drawEllipse(0, 0, size, size)
            painter.setBrush(color.lighter(130))
        else:
            painter.setBrush(color)
        painter.drawEllipse(2, 2, size - 4, size - 4)
        painter.end()
        return QIcon(pix)

    @Slot()
    def _on_flash_timeout(self) -> None:
        self._flashing = False
        self._refresh()

    @Slot()
    def _on_toggle_triggered(self) -> None:
        if self._state != "off":
            self.toggle_requested.emit()

    def _fit_width(self) -> None:
        """As wide as the widest state, so the status bar does not shift on a toggle."""
        shown = self.text()
        widths = []
        for text in TEXT.values():
            self.setText(text)
            widths.append(self.sizeHint().width())
        self.setText(shown)
        self.setMinimumWidth(max(widths))

    @override
    def paintEvent(self, event: QPaintEvent) -> None:
        # The style draws the flat button (hover, press, focus); the dot and the
        # text are drawn left-aligned, so the dot stays put when the text changes.
        painter = QStylePainter(self)
        opt = QStyleOptionButton()
        self.initStyleOption(opt)
        opt.text = ""
        opt.icon = QIcon()
        painter.drawControl(QStyle.ControlElement.CE_PushButton, opt)
        margin = self.style().pixelMetric(QStyle.PixelMetric.PM_ButtonMargin, opt, self) // 2 + 2
        icon = self.iconSize()
        top = (self.height() - icon.height()) // 2
        painter.drawPixmap(margin, top, self.icon().pixmap(icon))
        left = margin + icon.width() + 4
        text_rect = self.rect().adjusted(left, 0, -margin, 0)
        align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        painter.setPen(self.palette().color(QPalette.ColorRole.ButtonText))
        painter.drawText(text_rect, int(align), self.text())
        painter.end()

    @override
    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.setIcon(self._dot())
        elif event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._fit_width()

    @override
    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        event.accept()  # the first click toggled; the second press must not toggle back
