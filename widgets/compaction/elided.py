"""A one-line label that fits the width it gets: an ellipsis, and all of it on hover."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget
from typing_extensions import override

if TYPE_CHECKING:
    from PySide6.QtGui import QResizeEvent


class ElidedLabel(QLabel):
    """One line of plain text, cut with an ellipsis to the width it gets (all of it on hover).

    :meth:`text` is the whole text, not what fits.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    @override
    def setText(self, text: str) -> None:
        self._full = text
        self.setToolTip(text)
        self._elide()

    @override
    def text(self) -> str:
        return self._full

    @override
    def clear(self) -> None:
        self.setText("")

    @override
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        shown = self.fontMetrics().elidedText(
            self._full, Qt.TextElideMode.ElideRight, max(self.width(), 1)
        )
        super().setText(shown)
