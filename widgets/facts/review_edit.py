"""The dialog that edits the content and type of one proposed fact."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QKeySequence, QShortcut, QTextCursor
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from core.store.knowledge import FACT_TYPES
from widgets.facts.review_model import OP_COLORS, OP_TIPS, WARNING_COLOR

if TYPE_CHECKING:
    from core.knowledge.review import ReviewItem


class ReviewEditDialog(QDialog):
    """Edit what an accepted proposal will write; OK accepts the proposal with the edit.

    The edited item (redacted when *redaction*) is :attr:`result_item` after the
    dialog is accepted; invalid input keeps the dialog open with the reason shown.
    """

    def __init__(self, item: ReviewItem, *, redaction: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Edit proposal {item.label}")
        self.item = item
        self.result_item: ReviewItem | None = None
        self._redaction = redaction
        head = QLabel(
            f'<b style="color:{OP_COLORS[item.op]}">{item.op}</b> — {OP_TIPS[item.op].lower()}.'
        )
        self.type_combo = QComboBox()
        self.type_combo.setToolTip("The fact's type")
        self.type_combo.addItems(list(FACT_TYPES))
        self.type_combo.setCurrentText(item.candidate.type)
        self.content_edit = QPlainTextEdit(item.candidate.content)
        self.content_edit.setToolTip(
            "What the fact will say (secrets are redacted when it is saved)"
        )
        self.content_edit.setTabChangesFocus(True)
        self.content_edit.setMinimumSize(520, 120)
        self.error_label = QLabel(wordWrap=True)
        self.error_label.setStyleSheet(f"color: {WARNING_COLOR}")
        self.error_label.hide()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.button(QDialogButtonBox.StandardButton.Ok).setToolTip(
            "Accept the proposal with this content and type (Ctrl+Enter)"
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.buttons = buttons
        for key in ("Ctrl+Return", "Ctrl+Enter"):
            QShortcut(QKeySequence(key), self, self.accept)
        form = QFormLayout()
        form.addRow("Type", self.type_combo)
        form.addRow("Content", self.content_edit)
        if item.target is not None:
            was = QLabel(f"Matched fact: {item.target.content}", wordWrap=True)
            was.setEnabled(False)
            form.addRow("", was)
        layout = QVBoxLayout(self)
        layout.addWidget(head)
        layout.addLayout(form)
        layout.addWidget(self.error_label)
        layout.addWidget(buttons)
        self.content_edit.moveCursor(QTextCursor.MoveOperation.End)
        self.content_edit.setFocus()

    @override
    def accept(self) -> None:
        try:
            self.result_item = self.item.edited(
                self.content_edit.toPlainText(),
                self.type_combo.currentText(),
                redaction=self._redaction,
            )
        except ValueError as exc:
            self.error_label.setText(str(exc))
            self.error_label.show()
            return
        super().accept()
