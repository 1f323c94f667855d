"""The backups memlens made, with a way to put one back.

:class:`BackupsView` is handed :class:`core.safety.backups.Backup` records
(:meth:`BackupsView.set_backups`); it never reads the disk. Choosing *Restore…*
(button, context menu, Ctrl+Shift+R, or Enter on a row) emits
:attr:`BackupsView.restore_requested`: the app shows what will happen, asks,
and restores off the GUI thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QPoint, QSortFilterProxyModel, Qt, Signal, Slot
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from core.safety.backups import Backup
from widgets.activity.view import local_time
from widgets.common.record_model import Column, RecordRole, RecordTableModel, SortRole

if TYPE_CHECKING:
    from collections.abc import Sequence

    from widgets.common.record_model import Index

TIME, FILE, SIZE, FOLDER, NAME = range(5)


def _made_order(b: Backup) -> float:
    # Stamps are whole seconds; the .N of backups made in the same second orders them.
    return b.time + min(b.seq, 999) / 1000


class BackupsModel(RecordTableModel[Backup]):
    """One row per backup file."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(
            [
                Column("Made", lambda b: local_time(b.time), _made_order),
                Column("Of file", lambda b: Path(b.of).name, lambda b: b.of),
                Column("Size", lambda b: b.size, align_right=True),
                Column("Folder", lambda b: str(Path(b.of).parent)),
                Column("Backup", lambda b: b.name),
            ],
            parent,
        )

    @override
    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.ToolTipRole and index.isValid():
            b = self.record(index.row())
            return f"{b.path}\na copy of {b.of}\n{b.size:,} bytes, made {local_time(b.time)}"
        return super().data(index, role)


class BackupsFilter(QSortFilterProxyModel):
    """Rows whose original or backup path holds the text (any case)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._text = ""
        self.setSortRole(SortRole)

    def set_text(self, text: str) -> None:
        """Keep rows whose paths contain *text*."""
        text = text.strip().casefold()
        if text == self._text:
            return
        if hasattr(self, "beginFilterChange"):  # Qt >= 6.10
            self.beginFilterChange()
            self._text = text
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:  # pragma: no cover - older Qt
            self._text = text
            self.invalidateRowsFilter()

    @override
    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        rec = self.sourceModel().index(source_row, 0, source_parent).data(RecordRole)
        if not isinstance(rec, Backup):
            return False
        return not self._text or self._text in f"{rec.of}\n{rec.path}".casefold()


class BackupsView(QWidget):
    """The backups as a filterable, sortable table (newest first) with *Restore…*.

    Signals
    -------
    restore_requested(Backup)
        The user asked to put this backup back in place of its file.
    refresh_requested()
        The user asked to look for backups again.
    """

    restore_requested = Signal(object)
    refresh_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = BackupsModel(self)
        self.proxy = BackupsFilter(self)
        self.proxy.setSourceModel(self.model)
        self._busy = False

        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Filter by file")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setToolTip("Show only backups whose file or folder contains this")
        self.count_label = QLabel()
        self.status_label = QLabel()
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.refresh_button = QToolButton()
        self.refresh_button.setText("Refresh")
        self.refresh_button.setToolTip("Look for backups again")
        self.restore_button = QPushButton("&Restore…")

        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setAccessibleName("Backups")
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(TIME, Qt.SortOrder.DescendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        char = self.fontMetrics().averageCharWidth()
        for col, chars in ((TIME, 20), (FILE, 26), (SIZE, 12), (FOLDER, 40)):
            header.resizeSection(col, char * chars + 16)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)

        self.restore_action = QAction("&Restore…", self)
        self.restore_action.setShortcut(QKeySequence("Ctrl+Shift+R"))
        self.restore_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.restore_action.setToolTip(
            "Put the selected backup back in place of its file (the file is backed up first)"
        )
        self.addAction(self.restore_action)
        self.restore_button.setToolTip(self.restore_action.toolTip() + " (Ctrl+Shift+R)")
        self.copy_action = QAction("&Copy path", self)
        self.copy_action.setShortcut(QKeySequence.StandardKey.Copy)
        self.copy_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.table.addAction(self.copy_action)

        top = QHBoxLayout()
        top.setContentsMargins(2, 2, 6, 0)
        top.addWidget(self.filter_edit, 1)
        top.addWidget(self.count_label)
        top.addWidget(self.refresh_button)
        top.addWidget(self.restore_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(top)
        lay.addWidget(self.table, 1)
        lay.addWidget(self.status_label)

        self.filter_edit.textChanged.connect(self.proxy.set_text)
        self.refresh_button.clicked.connect(self.refresh_requested)
        self.restore_button.clicked.connect(self.restore_action.trigger)
        self.restore_action.triggered.connect(self._on_restore_action_triggered)
        self.copy_action.triggered.connect(self._on_copy_action_triggered)
        self.table.activated.connect(self._on_table_activated)
        self.table.customContextMenuRequested.connect(self._on_table_context_menu_requested)
        self.table.selectionModel().selectionChanged.connect(self._update_actions)
        for signal in (
            self.proxy.rowsInserted,
            self.proxy.rowsRemoved,
            self.proxy.modelReset,
            self.proxy.layoutChanged,
        ):
            signal.connect(self._update_count)
        self.set_message("")
        self._update_count()
        self._update_actions()

    # --- feeding -----------------------------------------------------------------

    def set_backups(self, backups: Sequence[Backup]) -> None:
        """Show *backups* (any order: the view sorts them), keeping the selected one."""
        chosen = self.selected_backup()
        self.model.set_records(backups)
        if chosen is not None:
            self.select(chosen.path)
        self._update_actions()

    def select(self, path: str) -> bool:
        """Select the row of the backup at *path*; False if it is not shown."""
        for row in range(self.proxy.rowCount()):
            index = self.proxy.index(row, 0)
            if index.data(RecordRole).path == path:
                self.table.setCurrentIndex(index)
                self.table.selectRow(row)
                return True
        return False

    def set_busy(self, busy: bool, message: str = "") -> None:
        """While a restore runs, no second one can be asked for."""
        self._busy = busy
        self.set_message(message)
        self._update_actions()

    def set_message(self, text: str) -> None:
        """One line under the table (what the last restore or prune did)."""
        self.status_label.setText(text)
        self.status_label.setVisible(bool(text))

    def selected_backup(self) -> Backup | None:
        """The selected backup, if any."""
        model = self.table.selectionModel()
        rows = model.selectedRows() if model is not None else []
        return rows[0].data(RecordRole) if rows else None

    # --- handlers ----------------------------------------------------------------

    @Slot()
    def _update_count(self) -> None:
        shown, total = self.proxy.rowCount(), self.model.rowCount()
        if total == 0:
            self.count_label.setText("No backups")
        elif shown == total:
            self.count_label.setText(f"{total:,} backup" + ("" if total == 1 else "s"))
        else:
            self.count_label.setText(f"{shown:,} of {total:,} backups")

    @Slot()
    def _update_actions(self, *_: object) -> None:
        ok = self.selected_backup() is not None and not self._busy
        self.restore_action.setEnabled(ok)
        self.restore_button.setEnabled(ok)
        self.copy_action.setEnabled(self.selected_backup() is not None)

    @Slot()
    def _on_restore_action_triggered(self) -> None:
        chosen = self.selected_backup()
        if chosen is not None and not self._busy:
            self.restore_requested.emit(chosen)

    @Slot(QModelIndex)
    def _on_table_activated(self, index: QModelIndex) -> None:
        if index.isValid():
            self.restore_action.trigger()

    @Slot()
    def _on_copy_action_triggered(self) -> None:
        chosen = self.selected_backup()
        if chosen is not None:
            QGuiApplication.clipboard().setText(chosen.path)

    @Slot(QPoint)
    def _on_table_context_menu_requested(self, pos: QPoint) -> None:
        menu = QMenu(self)
        menu.addAction(self.restore_action)
        menu.addAction(self.copy_action)
        menu.exec(self.table.viewport().mapToGlobal(pos))
