"""The facts table: one row per fact of a replayed knowledge log, and its filter.

:class:`FactTableModel` keeps one row per fact id in the order the log first
saw them. :meth:`FactTableModel.refresh` compares the log with the rows and
emits ``dataChanged`` for the facts that changed and ``rowsInserted`` for new
ones, so views keep their selection and scroll position while the agent and
memlens append. :class:`FactFilterProxy` filters by type, status and text and
sorts by :meth:`FactTableModel.sort_key`: the column's
:data:`~widgets.common.record_model.SortRole` value, ties broken by log line and id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication
from typing_extensions import override

from core.io.timefmt import utc_minute_ms
from widgets.common.record_model import RecordRole, SortRole
from widgets.common.text import esc

if TYPE_CHECKING:
    from collections.abc import Callable

    from core.store.knowledge import Fact, KnowledgeLog

Index = QModelIndex | QPersistentModelIndex
FactRole = RecordRole
"""The :class:`~core.store.knowledge.Fact` of a row."""
STATUSES = ("active", "superseded", "deleted")
STATUS_COLORS = {"active": "#2e9d5b", "superseded": "#c08a1e", "deleted": "#d0453a"}
STATUS_TIPS = {
    "active": "Active: the agent recalls it",
    "superseded": "Superseded: a newer fact replaced it (supersededBy)",
    "deleted": "Deleted: its last line has _deleted",
}


@dataclass(frozen=True, slots=True)
class FactRow:
    """What a row shows: the fact and how many lines it has."""

    fact: Fact
    versions: int


@dataclass(frozen=True, slots=True)
class FactColumn:
    """A column: header, shown value, sort value, tooltip of the header."""

    header: str
    value: Callable[[FactRow], str]
    sort: Callable[[FactRow], Any]
    tip: str
    width: int
    align_right: bool = False


def _oneline(text: str | None) -> str:
    return " ".join((text or "").split())


COLUMNS: tuple[FactColumn, ...] = (
    FactColumn("Type", lambda r: r.fact.type, lambda r: r.fact.type, "The fact's type", 100),
    FactColumn(
        "Content",
        lambda r: _oneline(r.fact.content),
        lambda r: r.fact.content.lower(),
        "What the fact says (its last line)",
        420,
    ),
    FactColumn(
        "Context",
        lambda r: _oneline(r.fact.context),
        lambda r: (r.fact.context or "").lower(),
        "Where the fact applies",
        220,
    ),
    FactColumn(
        "Time (UTC)",
        lambda r: utc_minute_ms(r.fact.timestamp),
        lambda r: r.fact.timestamp,
        "The timestamp of the fact's last line",
        124,
    ),
    FactColumn(
        "Status",
        lambda r: r.fact.status,
        lambda r: STATUSES.index(r.fact.status),
        "active, superseded (a newer fact replaced it) or deleted",
        84,
    ),
    FactColumn(
        "Lines",
        lambda r: str(r.versions),
        lambda r: r.versions,
        "How many log lines the fact has (its versions)",
        48,
        align_right=True,
    ),
    FactColumn("Id", lambda r: r.fact.id[:8], lambda r: r.fact.id, "The fact's id (first 8)", 80),
)
TYPE_COL, CONTENT_COL, CONTEXT_COL, TIME_COL, STATUS_COL, LINES_COL, ID_COL = range(len(COLUMNS))


class FactTableModel(QAbstractTableModel):
    """One row per fact of a :class:`~core.store.knowledge.KnowledgeLog`."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._log: KnowledgeLog | None = None
        self._rows: list[FactRow] = []
        self._row_of: dict[str, int] = {}

    # -- public --------------------------------------------------------------------------------
    def set_log(self, log: KnowledgeLog | None) -> None:
        """Show *log* (every row is replaced)."""
        self.beginResetModel()
        self._log = log
        self._rows = self._snapshot()
        self._row_of = {r.fact.id: i for i, r in enumerate(self._rows)}
        self.endResetModel()

    def log(self) -> KnowledgeLog | None:
        """The log shown."""
        return self._log

    def refresh(self) -> list[str]:
        """Bring the rows up to date with the log; returns the ids that changed or are new.

        Facts never leave a log (a deleted fact keeps its row), so rows are
        updated in place and new facts appended, whatever order the log now
        keeps its facts in; a log that lost facts (reloaded after a truncation)
        resets the model.
        """
        log = self._log
        if log is None:
            return []
        facts, history = log.facts, log.history
        if any(r.fact.id not in facts for r in self._rows):
            self.set_log(log)
            return [r.fact.id for r in self._rows]
        changed: list[str] = []
        last = self.columnCount() - 1
        for i, old in enumerate(self._rows):
            fid = old.fact.id
            new = FactRow(facts[fid], len(history.get(fid, ())))
            if new != old:
                self._rows[i] = new
                changed.append(fid)
                self.dataChanged.emit(self.index(i, 0), self.index(i, last))
        added = [fid for fid in facts if fid not in self._row_of]
        if added:
            first = len(self._rows)
            self.beginInsertRows(QModelIndex(), first, first + len(added) - 1)
            for fid in added:
                self._row_of[fid] = len(self._rows)
                self._rows.append(FactRow(facts[fid], len(history.get(fid, ()))))
            self.endInsertRows()
            changed.extend(added)
        return changed

    def fact(self, row: int) -> Fact:
        """The fact of *row*."""
        return self._rows[row].fact

    def row_of(self, fact_id: str) -> int:
        """The row of *fact_id*, or -1."""
        return self._row_of.get(fact_id, -1)

    def sort_key(self, row: int, column: int) -> tuple[Any, int, str]:
        """The total order of *row* by *column*: its sort value, then log line, then id.

        Rows that tie on the column (facts deleted in the same millisecond) still
        have one order, the same after live updates as after a fresh open: the proxy
        re-sorts a changed row by itself, so a tie left to it depends on history.
        """
        r = self._rows[row]
        return COLUMNS[column].sort(r), r.fact.line, r.fact.id

    def _snapshot(self) -> list[FactRow]:
        log = self._log
        if log is None:
            return []
        return [FactRow(f, len(log.history.get(fid, ()))) for fid, f in log.facts.items()]

    # -- Qt ------------------------------------------------------------------------------------
    @override
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    @override
    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    @override
    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not (0 <= index.row() < len(self._rows)):
            return None
        row = self._rows[index.row()]
        col = COLUMNS[index.column()]
        status = row.fact.status
        if role == Qt.ItemDataRole.DisplayRole:
            return col.value(row)
        if role == SortRole:
            return col.sort(row)
        if role == FactRole:
            return row.fact
        if role == Qt.ItemDataRole.ToolTipRole:
            return _tooltip(row)
        if role == Qt.ItemDataRole.ForegroundRole:
            if index.column() == STATUS_COL:
                return QColor(STATUS_COLORS[status])
            if status != "active":
                return QApplication.palette().color(QPalette.ColorRole.PlaceholderText)
            return None
        if role == Qt.ItemDataRole.FontRole and status != "active":
            font = QFont()
            if status == "deleted" and index.column() == CONTENT_COL:
                font.setStrikeOut(True)
            if status == "superseded":
                font.setItalic(True)
            return font
        if role == Qt.ItemDataRole.TextAlignmentRole and col.align_right:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    @override
    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not (0 <= section < len(COLUMNS)):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section].header
        if role == Qt.ItemDataRole.ToolTipRole:
            return COLUMNS[section].tip
        return None


def _tooltip(row: FactRow) -> str:
    f = row.fact
    lines = [
        f"<b>{esc(f.type)}</b> · {STATUS_TIPS[f.status]}",
        f"<p>{esc(f.content)}</p>",
    ]
    if f.context:
        lines.append(f"<i>{esc(f.context)}</i><br>")
    if f.superseded_by:
        lines.append(f"superseded by {esc(f.superseded_by)}<br>")
    lines.append(f"<small>{esc(f.id)} · line {f.line} · {row.versions} line(s)</small>")
    return "".join(lines)


class FactFilterProxy(QSortFilterProxyModel):
    """Facts of one type and status whose content, context or id hold a text."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._type: str | None = None
        self._status: str | None = None
        self._text = ""
        self.setSortRole(SortRole)
        self.setDynamicSortFilter(True)

    def set_type(self, fact_type: str | None) -> None:
        """Only facts of *fact_type* (None: every type)."""
        self._change("_type", fact_type or None)

    def set_status(self, status: str | None) -> None:
        """Only facts with *status* (None: every status)."""
        self._change("_status", status or None)

    def set_text(self, text: str) -> None:
        """Only facts whose content, context or id hold every word of *text* (any case)."""
        self._change("_text", text.strip().lower())

    def _change(self, name: str, value: str | None) -> None:
        if getattr(self, name) == value:
            return
        if hasattr(self, "beginFilterChange"):  # Qt >= 6.10; invalidateRowsFilter is deprecated
            self.beginFilterChange()
            setattr(self, name, value)
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:  # pragma: no cover - older Qt
            setattr(self, name, value)
            self.invalidateRowsFilter()

    def filters(self) -> tuple[str | None, str | None, str]:
        """(type, status, text) as set."""
        return self._type, self._status, self._text

    @override
    def lessThan(self, source_left: Index, source_right: Index) -> bool:
        model = self.sourceModel()
        if not isinstance(model, FactTableModel):  # pragma: no cover - always ours
            return super().lessThan(source_left, source_right)
        column = source_left.column()
        return model.sort_key(source_left.row(), column) < model.sort_key(
            source_right.row(), column
        )

    @override
    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        model = self.sourceModel()
        if not isinstance(model, FactTableModel):
            return True
        fact = model.fact(source_row)
        if self._type is not None and fact.type != self._type:
            return False
        if self._status is not None and fact.status != self._status:
            return False
        if self._text:
            hay = f"{fact.content}\n{fact.context or ''}\n{fact.id}".lower()
            return all(word in hay for word in self._text.split())
        return True
