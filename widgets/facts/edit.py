"""The dialog that adds a fact, edits one (UPDATE) or supersedes one with a new fact.

The dialog only collects the type, content and context. OK hands them to the
*submit* callback, which plans the write, asks for confirmation and appends; the
dialog closes only when *submit* returns None, else it shows the message it
returned (an edit that changes nothing, a cancelled write...) and stays open
with the user's text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from PySide6.QtGui import QKeySequence, QShortcut, QTextCursor
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from core.safety.redact import maybe_redact
from core.store.knowledge import FACT_TYPES

if TYPE_CHECKING:
    from collections.abc import Callable

    from core.store.knowledge import Fact

EditMode = Literal["add", "edit", "supersede"]
WARNING = "#c0392b"
TITLES = {"add": "New fact", "edit": "Edit fact", "supersede": "Supersede fact"}
HEADS = {
    "add": "A new fact is appended to knowledge.jsonl.",
    "edit": "A new version of the fact (same id) is appended: an UPDATE.",
    "supersede": (
        "A new fact is appended, and the old one again with <i>supersededBy</i> naming it."
    ),
}


@dataclass(frozen=True, slots=True)
class FactValues:
    """What the user typed: the type, content and context (None when left empty)."""

    type: str
    content: str
    context: str | None


class FactEditDialog(QDialog):
    """Type, content and context of a fact to add, edit or supersede.

    Parameters
    ----------
    mode
        ``add``, ``edit`` or ``supersede``.
    fact
        The fact edited or superseded (its values fill the form); None to add.
    submit
        Called with the values on OK; returns None when the write happened (the
        dialog closes) or a message to show (the dialog stays open).
    redaction
        Whether what is written is redacted (the dialog previews it).
    """

    def __init__(
        self,
        mode: EditMode,
        fact: Fact | None,
        submit: Callable[[FactValues], str | None],
        *,
        redaction: bool = True,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.mode = mode
        self.fact = fact
        self._submit = submit
        self._redaction = redaction
        short = f" {fact.id[:8]}" if fact is not None else ""
        self.setWindowTitle(TITLES[mode] + short)
        head = QLabel(HEADS[mode], wordWrap=True)
        self.type_combo = QComboBox()
        self.type_combo.addItems(list(FACT_TYPES))
        self.type_combo.setToolTip("The fact's type")
        self.content_edit = QPlainTextEdit()
        self.content_edit.setTabChangesFocus(True)
        self.content_edit.setMinimumSize(520, 110)
        self.content_edit.setToolTip(
            "What the fact says (secrets are redacted before it is written)"
        )
        self.context_edit = QLineEdit()
        self.context_edit.setPlaceholderText("where the fact applies (optional)")
        self.context_edit.setToolTip("The fact's context, e.g. the project and folder")
        if fact is not None:
            self.type_combo.setCurrentText(fact.type)
            self.context_edit.setText(fact.context or "")
            if mode == "edit":
                self.content_edit.setPlainText(fact.content)
        self.redacted_label = QLabel(wordWrap=True)
        self.redacted_label.setStyleSheet(f"color: {WARNING}")
        self.redacted_label.hide()
        self.error_label = QLabel(wordWrap=True)
        self.error_label.setStyleSheet(f"color: {WARNING}")
        self.error_label.hide()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setText({"add": "Add…", "edit": "Save…", "supersede": "Supersede…"}[mode])
        ok.setToolTip("Show what will be appended, then write it (Ctrl+Enter)")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.buttons = buttons
        for key in ("Ctrl+Return", "Ctrl+Enter"):
            QShortcut(QKeySequence(key), self, self.accept)
        form = QFormLayout()
        form.addRow("&Type", self.type_combo)
        form.addRow("C&ontent", self.content_edit)
        form.addRow("Conte&xt", self.context_edit)
        if mode == "supersede" and fact is not None:
            was = QLabel(f"Replaces: {fact.content}", wordWrap=True)
            was.setEnabled(False)
            form.addRow("", was)
        layout = QVBoxLayout(self)
        layout.addWidget(head)
        layout.addLayout(form)
        layout.addWidget(self.redacted_label)
        layout.addWidget(self.error_label)
        layout.addWidget(buttons)
        self.content_edit.textChanged.connect(self._on_text_changed)
        self.context_edit.textChanged.connect(self._on_text_changed)
        self.content_edit.moveCursor(QTextCursor.MoveOperation.End)
        self.content_edit.setFocus()

    def values(self) -> FactValues:
        """The values as typed (content and context stripped)."""
        context = self.context_edit.text().strip()
        return FactValues(
            self.type_combo.currentText(),
            self.content_edit.toPlainText().strip(),
            context or None,
        )

    def set_values(self, type: str, content: str, context: str | None = None) -> None:
        """Fill the form (for scripts and tests)."""
        self.type_combo.setCurrentText(type)
        self.content_edit.setPlainText(content)
        self.context_edit.setText(context or "")

    def show_error(self, message: str) -> None:
        """Show *message* under the form."""
        self.error_label.setText(message)
        self.error_label.setVisible(bool(message))

    def _on_text_changed(self) -> None:
        v = self.values()
        changed = [
            name
            for name, text in (("content", v.content), ("context", v.context or ""))
            if maybe_redact(text, self._redaction) != text
        ]
        if changed:
            self.redacted_label.setText(
                f"The {' and '.join(changed)} hold{'s' if len(changed) == 1 else ''} what looks "
                "like a secret: it will be written as [REDACTED]."
            )
        self.redacted_label.setVisible(bool(changed))
        self.show_error("")

    @override
    def accept(self) -> None:
        v = self.values()
        if not v.content:
            self.show_error("A fact needs content.")
            return
        message = self._submit(v)
        if message:
            self.show_error(message)
            return
        super().accept()
