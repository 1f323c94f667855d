"""Lists of places for the first-run screen: agent homes and recent places, two lines each.

:class:`PlaceListModel` holds the entries (a title, the path, a line of figures);
:class:`PlaceList` draws each as a bold title and path over a dimmed line and is
as tall as its rows, up to a maximum.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QListView,
    QSizePolicy,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
)
from typing_extensions import override

if TYPE_CHECKING:
    from collections.abc import Sequence

    from PySide6.QtGui import QPainter

    from core.dataset.home_scan import HomeSummary

__all__ = [
    "DetailRole",
    "PathRole",
    "PlaceList",
    "PlaceListModel",
    "TitleRole",
    "newest_text",
    "tilde",
]

Index = QModelIndex | QPersistentModelIndex
DetailRole = Qt.ItemDataRole.UserRole + 1
"""The second line of an entry (figures, or why it cannot be opened)."""
PathRole = Qt.ItemDataRole.UserRole + 2
"""The path the entry opens, as a string."""
TitleRole = Qt.ItemDataRole.UserRole + 3
"""The bold first words of an entry ("OpenClaw"), before its path."""


def tilde(path: str | Path) -> str:
    """*path* with the user's home folder written ``~`` (display only)."""
    text = str(path)
    home = str(Path.home())
    if home not in ("", "/") and (text == home or text.startswith(home + "/")):
        return "~" + text[len(home) :]
    return text


def newest_text(seconds: float | None) -> str:
    """``latest session 8 Oct 2025`` (local date), or ``""`` when unknown."""
    if seconds is None:
        return ""
    try:
        when = datetime.fromtimestamp(seconds)
    except (OverflowError, OSError, ValueError):
        return ""
    return f"latest session {when.day} {when:%b %Y}"


@dataclass(frozen=True, slots=True)
class _Entry:
    """One row: what it shows and what it opens."""

    title: str
    path: str
    detail: str
    enabled: bool
    tip: str


def _home_entry(home: HomeSummary) -> _Entry:
    if home.problem is not None:
        detail = home.problem
        tip = f"{home.path}\n{home.problem}"
    else:
        detail = " · ".join(p for p in (home.describe(), newest_text(home.newest)) if p)
        tip = f"{home.path}\nEnter or double-click to open"
        if not home.complete:
            tip += "\nCounting took too long: + marks figures that are at least this"
    return _Entry(home.label, str(home.path), detail, home.openable, tip)


def _recent_entry(place: str) -> _Entry:
    path = Path(place)
    return _Entry("", place, tilde(path.parent) if path.name else "", True, place)


class PlaceListModel(QAbstractListModel):
    """Places to open: detected agent homes, or recent places (two lines each)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._entries: list[_Entry] = []

    def set_homes(self, homes: Sequence[HomeSummary]) -> None:
        """Show agent homes (those that cannot be opened are listed, disabled)."""
        self._reset([_home_entry(h) for h in homes])

    def set_places(self, places: Sequence[str]) -> None:
        """Show recent places, most recent first."""
        self._reset([_recent_entry(p) for p in places])

    def _reset(self, entries: list[_Entry]) -> None:
        self.beginResetModel()
        self._entries = entries
        self.endResetModel()

    def path(self, row: int) -> str:
        """The path of *row*."""
        return self._entries[row].path

    def openable_rows(self) -> list[int]:
        """Rows that can be opened."""
        return [i for i, e in enumerate(self._entries) if e.enabled]

    @override
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._entries)

    @override
    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not (0 <= index.row() < len(self._entries)):
            return None
        entry = self._entries[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            shown = Path(entry.path).name or entry.path if not entry.title else tilde(entry.path)
            return f"{entry.title}  {shown}".strip()
        if role == TitleRole:
            return entry.title
        if role == DetailRole:
            return entry.detail
        if role == PathRole:
            return entry.path
        if role == Qt.ItemDataRole.ToolTipRole:
            return entry.tip
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{self.data(index)}: {entry.detail}" if entry.detail else self.data(index)
        return None

    @override
    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        entry = self._entries[index.row()]
        if not entry.enabled:
            return Qt.ItemFlag.ItemNeverHasChildren
        return (
            Qt.ItemFlag.ItemIsEnabled
            | Qt.ItemFlag.ItemIsSelectable
            | Qt.ItemFlag.ItemNeverHasChildren
        )


class TwoLineDelegate(QStyledItemDelegate):
    """A bold title and path on the first line, the figures dimmed on the second."""

    PAD_X = 12
    PAD_Y = 7
    GAP = 3

    @override
    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        fm = option.fontMetrics
        return QSize(200, 2 * fm.height() + self.GAP + 2 * self.PAD_Y)

    @override
    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        widget = opt.widget
        style = widget.style() if widget is not None else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        state = opt.state
        enabled = bool(state & QStyle.StateFlag.State_Enabled)
        selected = bool(state & QStyle.StateFlag.State_Selected)
        palette: QPalette = opt.palette
        group = QPalette.ColorGroup.Normal if enabled else QPalette.ColorGroup.Disabled
        if selected:
            main = dim = palette.color(group, QPalette.ColorRole.HighlightedText)
        else:
            main = palette.color(group, QPalette.ColorRole.Text)
            dim = palette.color(group, QPalette.ColorRole.PlaceholderText)
        rect: QRect = opt.rect.adjusted(self.PAD_X, self.PAD_Y, -self.PAD_X, -self.PAD_Y)
        fm = opt.fontMetrics
        line = fm.height()
        title = str(index.data(TitleRole) or "")
        path = str(index.data(PathRole) or "")
        shown = tilde(path) if title else (Path(path).name or path)
        detail = str(index.data(DetailRole) or "")
        painter.save()
        x = rect.left()
        if title:
            bold = QFont(opt.font)
            bold.setBold(True)
            painter.setFont(bold)
            painter.setPen(main)
            painter.drawText(QRect(x, rect.top(), rect.width(), line), 0, title)
            x += painter.fontMetrics().horizontalAdvance(title) + fm.horizontalAdvance("  ")
        painter.setFont(opt.font)
        painter.setPen(main if not title else dim)
        if not title:  # a recent place: the folder or file name stands out
            bold = QFont(opt.font)
            bold.setBold(True)
            painter.setFont(bold)
        width = rect.right() - x
        elided = painter.fontMetrics().elidedText(shown, Qt.TextElideMode.ElideMiddle, width)
        painter.drawText(QRect(x, rect.top(), width, line), 0, elided)
        painter.setFont(opt.font)
        painter.setPen(dim)
        second = QRect(rect.left(), rect.top() + line + self.GAP, rect.width(), line)
        painter.drawText(
            second, 0, fm.elidedText(detail, Qt.TextElideMode.ElideRight, rect.width())
        )
        painter.restore()


class PlaceList(QListView):
    """A list that is as tall as its rows (up to a maximum), then scrolls."""

    def __init__(self, max_rows: int, name: str) -> None:
        super().__init__()
        self._max_rows = max_rows
        self.setAccessibleName(name)
        self.setItemDelegate(TwoLineDelegate(self))
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setUniformItemSizes(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def fit(self) -> None:
        """Resize to the rows shown (at least one, at most the maximum)."""
        model = self.model()
        rows = model.rowCount() if model is not None else 0
        row_h = self.sizeHintForRow(0) if rows else 0
        shown = max(1, min(rows, self._max_rows))
        self.setFixedHeight(shown * max(row_h, 1) + 2 * self.frameWidth())

    def select_first(self, rows: Sequence[int]) -> None:
        """Make the first of *rows* current (so Enter opens it)."""
        model = self.model()
        if rows and model is not None:
            self.setCurrentIndex(model.index(rows[0], 0))
