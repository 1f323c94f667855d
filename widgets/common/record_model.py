"""A table model over a list of core records, one column per accessor."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from typing_extensions import override

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

T = TypeVar("T")
RecordRole = Qt.ItemDataRole.UserRole + 1
SortRole = Qt.ItemDataRole.UserRole + 2
Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True, slots=True)
class Column(Generic[T]):
    """A column: header, the value to show, and optionally the value to sort by."""

    header: str
    value: Callable[[T], Any]
    sort: Callable[[T], Any] | None = None
    align_right: bool = False
    thousands: bool = True
    """Show ints with thousands separators (not for line numbers or ids)."""


class RecordTableModel(QAbstractTableModel, Generic[T]):
    """Rows are records; the record itself is under :data:`RecordRole`."""

    def __init__(self, columns: Sequence[Column[T]], parent: Any = None) -> None:
        super().__init__(parent)
        self._columns = list(columns)
        self._rows: list[T] = []

    def set_records(self, rows: Sequence[T]) -> None:
        """Replace every row (a model reset: views lose their selection)."""
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def append_rows(self, rows: Sequence[T]) -> None:
        """Add *rows* at the end (row inserts: selection and scroll are kept)."""
        if not rows:
            return
        first = len(self._rows)
        self.beginInsertRows(QModelIndex(), first, first + len(rows) - 1)
        self._rows.extend(rows)
        self.endInsertRows()

    def record(self, row: int) -> T:
        """The record of *row*."""
        return self._rows[row]

    @override
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    @override
    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._columns)

    @override
    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not (0 <= index.row() < len(self._rows)):
            return None
        rec = self._rows[index.row()]
        col = self._columns[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            value = col.value(rec)
            if isinstance(value, int) and not isinstance(value, bool):
                return f"{value:,}" if col.thousands else str(value)
            return "" if value is None else str(value)
        if role == SortRole:
            return (col.sort or col.value)(rec)
        if role == RecordRole:
            return rec
        if role == Qt.ItemDataRole.TextAlignmentRole and col.align_right:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    @override
    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (
            role == Qt.ItemDataRole.DisplayRole
            and orientation == Qt.Orientation.Horizontal
            and 0 <= section < len(self._columns)
        ):
            return self._columns[section].header
        return None
