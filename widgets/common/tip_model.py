"""A record table model with tooltips: per row, per column header, and styled rows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QFont, QPalette
from PySide6.QtWidgets import QApplication
from typing_extensions import override

from widgets.common.record_model import RecordTableModel

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from PySide6.QtCore import QObject

    from widgets.common.record_model import Column, Index

T = TypeVar("T")


class TipTableModel(RecordTableModel[T]):
    """A :class:`RecordTableModel` with cell and header tooltips, bold and dimmed rows.

    Parameters
    ----------
    columns
        The columns.
    parent
        The model's parent.
    cell_tip
        The tooltip of every cell of a record's row.
    header_tips
        The tooltip of each column header, in column order.
    bold
        Whether a record's row is bold.
    dimmed
        Whether a record's row is greyed out (the palette's disabled text colour).
    """

    def __init__(
        self,
        columns: Sequence[Column[T]],
        parent: QObject | None = None,
        *,
        cell_tip: Callable[[T], str] | None = None,
        header_tips: Sequence[str] = (),
        bold: Callable[[T], bool] | None = None,
        dimmed: Callable[[T], bool] | None = None,
    ) -> None:
        super().__init__(columns, parent)
        self._cell_tip = cell_tip
        self._header_tips = list(header_tips)
        self._bold = bold
        self._dimmed = dimmed

    @override
    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        styled: dict[int, object] = {
            Qt.ItemDataRole.ToolTipRole: self._cell_tip,
            Qt.ItemDataRole.FontRole: self._bold,
            Qt.ItemDataRole.ForegroundRole: self._dimmed,
        }
        if styled.get(role) is None:
            return super().data(index, role)
        if not index.isValid() or not 0 <= index.row() < self.rowCount():
            return None
        record = self.record(index.row())
        if role == Qt.ItemDataRole.ToolTipRole and self._cell_tip is not None:
            return self._cell_tip(record)
        if role == Qt.ItemDataRole.FontRole and self._bold is not None and self._bold(record):
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.ForegroundRole and self._dimmed is not None:
            if self._dimmed(record):
                palette = QApplication.palette()
                return QBrush(palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text))
        return None

    @override
    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (
            role == Qt.ItemDataRole.ToolTipRole
            and orientation == Qt.Orientation.Horizontal
            and 0 <= section < len(self._header_tips)
        ):
            return self._header_tips[section]
        return super().headerData(section, orientation, role)
