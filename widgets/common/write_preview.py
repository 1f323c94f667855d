"""The preview shown before memlens writes: every file, how it changes, the exact lines.

Views never write straight from a button: they build :class:`core.io.writes.PlannedWrite`
objects and ask a :data:`core.io.writes.Confirm`. :func:`confirm_with_dialog` is the
confirm the app hands them; it shows a :class:`WritePreviewDialog` and answers True
only when the user chose *Write*.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QItemSelection, QModelIndex, QPersistentModelIndex, Qt, Slot
from PySide6.QtGui import QFontDatabase, QShowEvent, QTextOption
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from widgets.common.record_model import Column, RecordTableModel
from widgets.common.text import esc

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from core.io.writes import Confirm, PlannedWrite

MAX_ROWS_SHOWN = 6
ACTION_TEXT = {
    "append": "append",
    "rewrite": "rewrite",
    "create": "create",
    "backup": "backup",
}
WHERE_TEXT = {
    "append": "lines added at the end of the file; nothing already in it changes",
    "rewrite": "the whole file is replaced atomically (temporary file, then rename); "
    "the old file is kept as a backup beside it",
    "create": "a new file",
    "backup": "a copy of the file is kept beside it",
}
NO_LINES = {
    "append": "(no lines)",
    "rewrite": "(the new content replaces the file as a whole)",
    "create": "(the new file's content)",
    "backup": "(a byte-for-byte copy of the current file)",
}


def payload_bytes(write: PlannedWrite) -> int:
    """Bytes the lines of *write* take on disk (UTF-8, one newline each)."""
    return sum(len(line.encode("utf-8", "surrogatepass")) + 1 for line in write.lines)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


class PlannedWriteModel(RecordTableModel["PlannedWrite"]):
    """One row per planned write; the full path is the file's tooltip."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(
            [
                Column("Action", lambda w: ACTION_TEXT.get(w.action, w.action)),
                Column("File", lambda w: Path(w.path).name or w.path),
                Column("Lines", lambda w: len(w.lines) or "", align_right=True),
                Column("Summary", lambda w: w.summary),
            ],
            parent,
        )

    @override
    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if role == Qt.ItemDataRole.ToolTipRole and index.isValid():
            write = self.record(index.row())
            return write.path if index.column() == 1 else write.summary
        return super().data(index, role)


class WritePreviewDialog(QDialog):
    """Shows *writes* (file, action, summary, exact lines) with *Write* and *Cancel*.

    Enter writes (the default button), Esc cancels. The lines are shown exactly as
    they will be written, one per line, in a fixed-width font without wrapping.
    """

    def __init__(self, writes: Sequence[PlannedWrite], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.writes = tuple(writes)
        self.setWindowTitle("Confirm write")
        self.setModal(True)
        self.resize(860, 520)

        files = len({w.path for w in self.writes})
        self.heading = QLabel(
            f"<b>memlens will change {_count(files, 'file')}</b> "
            f"({_count(len(self.writes), 'write')}). Check what is written and where."
        )
        self.model = PlannedWriteModel(self)
        self.model.set_records(self.writes)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        vheader = self.table.verticalHeader()
        vheader.setDefaultSectionSize(self.fontMetrics().height() + 8)
        vheader.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.setToolTip("The files memlens will change; select one to see its lines")

        self.where = QLabel()
        self.where.setWordWrap(True)
        self.where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.lines_view = QPlainTextEdit()
        self.lines_view.setReadOnly(True)
        self.lines_view.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.lines_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.lines_view.setToolTip("Exactly the lines that will be written (already redacted)")
        self.wrap_box = QCheckBox("Wra&p long lines")
        self.wrap_box.setChecked(True)
        self.wrap_box.setToolTip("Wrapping only changes the display, not what is written (Alt+P)")
        self.wrap_box.toggled.connect(self._on_wrap_box_toggled)
        detail = QWidget()
        dl = QVBoxLayout(detail)
        dl.setContentsMargins(0, 0, 0, 0)
        dl.addWidget(self.where)
        dl.addWidget(self.lines_view, 1)
        dl.addWidget(self.wrap_box)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(detail)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 3)
        splitter.setChildrenCollapsible(False)
        shown = max(1, min(len(self.writes), MAX_ROWS_SHOWN))
        table_height = self.table.horizontalHeader().sizeHint().height() + 4
        table_height += shown * vheader.defaultSectionSize()
        self.table.setMinimumHeight(table_height)
        splitter.setSizes([table_height, 4 * table_height])

        self.buttons = QDialogButtonBox()
        self.write_button = self.buttons.addButton("&Write", QDialogButtonBox.ButtonRole.AcceptRole)
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.write_button.setDefault(True)
        self.write_button.setToolTip("Write these changes (Enter)")
        self.cancel_button.setToolTip("Write nothing (Esc)")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        lay = QVBoxLayout(self)
        lay.addWidget(self.heading)
        lay.addWidget(splitter, 1)
        lay.addWidget(self.buttons)

        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        if self.writes:
            self.table.selectRow(0)
        else:
            self.where.setText("Nothing to write.")
        self.setFocusProxy(self.table)  # keys start on the list: Enter writes, Esc cancels

    @override
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.table.setFocus(Qt.FocusReason.ActiveWindowFocusReason)

    def selected_write(self) -> PlannedWrite | None:
        """The write whose lines are shown."""
        rows = self.table.selectionModel().selectedRows()
        return self.model.record(rows[0].row()) if rows else None

    @Slot(bool)
    def _on_wrap_box_toggled(self, wrap: bool) -> None:
        mode = QPlainTextEdit.LineWrapMode
        self.lines_view.setLineWrapMode(mode.WidgetWidth if wrap else mode.NoWrap)

    @Slot(QItemSelection, QItemSelection)
    def _on_selection_changed(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        write = self.selected_write()
        if write is None:
            self.where.clear()
            self.lines_view.clear()
            return
        size = ""
        if write.lines:
            size = f" · {_count(len(write.lines), 'line')}, {_count(payload_bytes(write), 'byte')}"
        backup = f"<br>backed up first, as <code>{esc(write.backup)}</code>" if write.backup else ""
        self.where.setText(
            f"<b>{ACTION_TEXT.get(write.action, write.action)}</b> "
            f"<code>{esc(write.path)}</code>{size}<br>"
            f"<span>{WHERE_TEXT.get(write.action, '')}</span>{backup}"
        )
        self.where.setToolTip(write.path)
        if write.lines:
            self.lines_view.setPlainText("\n".join(write.lines))
        else:
            self.lines_view.setPlainText(NO_LINES.get(write.action, ""))


def confirm_with_dialog(
    parent: QWidget | None,
    *,
    on_confirmed: Callable[[Sequence[PlannedWrite]], object] | None = None,
) -> Confirm:
    """A :data:`core.io.writes.Confirm` that asks the user with a :class:`WritePreviewDialog`.

    Parameters
    ----------
    parent
        The dialog's parent window.
    on_confirmed
        Called with the writes when the user chose *Write*, before the answer is
        returned (the app passes :meth:`core.safety.activity.ActivityLog.expect`).

    Notes
    -----
    Call the confirm on the GUI thread. Nothing to write needs no question: an
    empty list is confirmed without a dialog.
    """

    def confirm(writes: Sequence[PlannedWrite]) -> bool:
        if not writes:
            return True
        dialog = WritePreviewDialog(writes, parent)
        try:
            ok = dialog.exec() == QDialog.DialogCode.Accepted
        finally:
            dialog.deleteLater()
        if ok and on_confirmed is not None:
            on_confirmed(writes)
        return ok

    return confirm
