"""The navigator: agents, and under each its sessions, with their figures.

A two-level item model over :class:`core.dataset.load.SessionSummary` records, a filter
box and a sortable tree. Selecting a session emits :attr:`Navigator.session_selected`;
the rest of the window follows that selection.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QItemSelection,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtWidgets import QLineEdit, QStyle, QTreeView, QVBoxLayout, QWidget
from typing_extensions import override

from core.context.terms import CHARS4_ESTIMATE, CONTEXT_TOKENS, source_label, source_tip
from widgets.common.record_model import RecordRole, SortRole

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from core.dataset.load import SessionSummary

Index = QModelIndex | QPersistentModelIndex


def _when(seconds: float) -> str:
    try:
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):
        return "?"


def _size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover - the loop always returns


@dataclass(frozen=True, slots=True)
class NavColumn:
    """A column of the navigator: header, shown value, sort value, aggregate for agents."""

    header: str
    show: Callable[[SessionSummary], str]
    sort: Callable[[SessionSummary], Any]
    total: bool = False
    """Agents show the sum of their sessions' sort values in this column."""
    tip: str = ""


def _context(s: SessionSummary) -> int:
    """The context tokens at the leaf, as the timeline and the gauge show them."""
    return s.tokens_estimated if s.tokens_measured is None else s.tokens_measured


def _context_shown(s: SessionSummary) -> str:
    if not s.loaded:
        return "…"
    # "~": no turn reported usage, the figure is the chars/4 estimate
    return f"{_context(s):,}" if s.tokens_measured is not None else f"~{_context(s):,}"


def _context_tip(s: SessionSummary) -> str:
    source = "estimated" if s.tokens_measured is None else "measured"
    return f"{CONTEXT_TOKENS.name} at the leaf, {source_label(source)}: {source_tip(source)}"


def _estimated(s: SessionSummary) -> str:
    return f"{s.tokens_estimated:,}" if s.loaded else "…"


def _tip(s: SessionSummary) -> str:
    where = {
        "sqlite": "OpenClaw agent database (read-only)",
        "archive": "archived transcript",
        "segments": "rebuilt from memory-context's segments.jsonl (archived user and "
        "assistant text only; read-only)",
        "openclaudecode": "OpenClaudeCode transcript (read-only)",
    }.get(s.storage, "transcript file")
    lines = [s.path, f"{where}, format v{s.version}, model {s.model or 'unknown'}"]
    if s.key:
        lines.append(f"session key {s.key}")
    if not s.loaded:
        lines.append("listed from the database's counts; tokens once it is read")
    return "\n".join(lines)


COLUMNS: tuple[NavColumn, ...] = (
    NavColumn("Session", lambda s: s.name or s.id, lambda s: (s.name or s.id).lower()),
    NavColumn("Messages", lambda s: f"{s.messages:,}", lambda s: s.messages, True),
    NavColumn(
        "Context tokens",
        _context_shown,
        _context,
        False,
        f"{CONTEXT_TOKENS.name} at the current leaf: {CONTEXT_TOKENS.help} "
        "(~: no turn reported usage)",
    ),
    NavColumn(
        "chars/4 estimate",
        _estimated,
        lambda s: s.tokens_estimated,
        False,  # a context size is a session's snapshot: summing unrelated ones means nothing
        f"{CHARS4_ESTIMATE.name} of the context at the current leaf: {CHARS4_ESTIMATE.help}",
    ),
    NavColumn("Compactions", lambda s: f"{s.compactions:,}", lambda s: s.compactions, True),
    NavColumn("Modified", lambda s: _when(s.modified), lambda s: s.modified),
    NavColumn("Size", lambda s: _size(s.size), lambda s: s.size, True),
)


@dataclass(slots=True)
class _Agent:
    name: str
    sessions: list[SessionSummary] = field(default_factory=list)


_ROLES = frozenset(
    {
        Qt.ItemDataRole.DisplayRole,
        Qt.ItemDataRole.ToolTipRole,
        Qt.ItemDataRole.TextAlignmentRole,
        SortRole,
        RecordRole,
    }
)


class SessionTreeModel(QAbstractItemModel):
    """Agents at the top level, their sessions below; the record under ``RecordRole``."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._agents: list[_Agent] = []
        self._where: dict[str, tuple[int, int]] = {}
        """Session path -> (agent row, session row); rows are only ever appended."""

    def set_sessions(self, summaries: Sequence[SessionSummary]) -> None:
        """Replace every row with *summaries*, grouped by agent in first-seen order."""
        groups: dict[str, _Agent] = {}
        for s in summaries:
            groups.setdefault(s.agent, _Agent(s.agent)).sessions.append(s)
        self.beginResetModel()
        self._agents = list(groups.values())
        self._where = {
            s.path: (a, r)
            for a, agent in enumerate(self._agents)
            for r, s in enumerate(agent.sessions)
        }
        self.endResetModel()

    def upsert_sessions(self, summaries: Sequence[SessionSummary]) -> list[QModelIndex]:
        """Replace the rows of *summaries* in place, or insert them (live mode).

        A known session (same path) gets its new figures through ``dataChanged`` (and
        its agent's totals too); a new one is inserted under its agent, or with a new
        agent row at the end. Nothing is reset, so views keep their selection, scroll
        position and expanded rows. Returns the indexes of the agent rows inserted.
        """
        new_agents: list[QModelIndex] = []
        last = len(COLUMNS) - 1
        for s in summaries:
            where = self._where.get(s.path)
            if where is not None:
                a_row, row = where
                self._agents[a_row].sessions[row] = s
                self.dataChanged.emit(
                    self.createIndex(row, 0, a_row + 1), self.createIndex(row, last, a_row + 1)
                )
                self.dataChanged.emit(
                    self.createIndex(a_row, 0, 0), self.createIndex(a_row, last, 0)
                )
                continue
            a_row = next((i for i, a in enumerate(self._agents) if a.name == s.agent), -1)
            if a_row < 0:
                a_row = len(self._agents)
                self.beginInsertRows(QModelIndex(), a_row, a_row)
                self._agents.append(_Agent(s.agent, [s]))
                self._where[s.path] = (a_row, 0)
                self.endInsertRows()
                new_agents.append(self.createIndex(a_row, 0, 0))
                continue
            sessions = self._agents[a_row].sessions
            parent = self.createIndex(a_row, 0, 0)
            self.beginInsertRows(parent, len(sessions), len(sessions))
            sessions.append(s)
            self._where[s.path] = (a_row, len(sessions) - 1)
            self.endInsertRows()
            self.dataChanged.emit(parent, self.createIndex(a_row, last, 0))
        return new_agents

    def session_index(self, session_id: str) -> QModelIndex:
        """The index (column 0) of a session (by id or path), or an invalid index."""
        where = self._where.get(session_id)
        if where is not None:
            return self.createIndex(where[1], 0, where[0] + 1)
        for a_row, agent in enumerate(self._agents):
            for row, s in enumerate(agent.sessions):
                if s.id == session_id or s.path == session_id:
                    return self.createIndex(row, 0, a_row + 1)
        return QModelIndex()

    def sessions(self) -> list[SessionSummary]:
        """Every session, agent by agent."""
        return [s for a in self._agents for s in a.sessions]

    # Internal id: 0 for an agent row, agent row + 1 for a session row.
    @override
    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        # hasIndex() would call back into rowCount() and columnCount(): a view asks
        # for ~600 indexes a paint, so the bounds are checked here directly.
        if row < 0 or not 0 <= column < len(COLUMNS):
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, column, 0) if row < len(self._agents) else QModelIndex()
        if parent.internalId() == 0 and parent.column() == 0:
            agent = parent.row()
            if row < len(self._agents[agent].sessions):
                return self.createIndex(row, column, agent + 1)
        return QModelIndex()

    @override
    def parent(self, child: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not child.isValid() or child.internalId() == 0:
            return QModelIndex()
        return self.createIndex(child.internalId() - 1, 0, 0)

    @override
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if not parent.isValid():
            return len(self._agents)
        if parent.internalId() == 0 and parent.column() == 0:
            return len(self._agents[parent.row()].sessions)
        return 0

    @override
    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return len(COLUMNS)

    def _record(self, index: Index) -> SessionSummary | _Agent:
        if index.internalId() == 0:
            return self._agents[index.row()]
        return self._agents[index.internalId() - 1].sessions[index.row()]

    @override
    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role not in _ROLES or not index.isValid():
            return None  # a paint asks ~10 roles a cell; most are not ours
        rec = self._record(index)
        col = COLUMNS[index.column()]
        if isinstance(rec, _Agent):
            return self._agent_data(rec, index.column(), role)
        if role == Qt.ItemDataRole.DisplayRole:
            return col.show(rec)
        if role == SortRole:
            return col.sort(rec)
        if role == RecordRole:
            return rec
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == 0:
            return _tip(rec)
        if role == Qt.ItemDataRole.ToolTipRole and col.sort is _context:
            return _context_tip(rec)
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() > 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _agent_data(self, agent: _Agent, column: int, role: int) -> Any:
        col = COLUMNS[column]
        if column == 0:
            value: Any = agent.name
            shown = f"{agent.name} ({len(agent.sessions)})"
        elif col.total:
            value = sum(col.sort(s) for s in agent.sessions)
            shown = _size(value) if col.header == "Size" else f"{value:,}"
        elif col.header == "Modified":
            value = max((s.modified for s in agent.sessions), default=0.0)
            shown = _when(value)
        else:
            if role == Qt.ItemDataRole.ToolTipRole:
                return "each session's own context size; not added up across sessions"
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return shown
        if role == SortRole:
            return value
        if role == Qt.ItemDataRole.TextAlignmentRole and column > 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    @override
    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(COLUMNS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section].header
        if role == Qt.ItemDataRole.ToolTipRole and COLUMNS[section].tip:
            return COLUMNS[section].tip
        return None


class _Filter(QSortFilterProxyModel):
    """Matches sessions on any column; an agent stays while any session matches."""

    @override
    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        pattern = self.filterRegularExpression()
        if not pattern.pattern():
            return True
        model = self.sourceModel()
        if not source_parent.isValid():
            # Agent rows: kept by recursive filtering when a child matches, or by name.
            name = model.index(source_row, 0, source_parent).data(SortRole)
            return bool(pattern.match(str(name)).hasMatch())
        for column in range(model.columnCount()):
            text = model.index(source_row, column, source_parent).data()
            if text and pattern.match(str(text)).hasMatch():
                return True
        rec = model.index(source_row, 0, source_parent).data(RecordRole)
        return bool(rec is not None and pattern.match(rec.id).hasMatch())


class Navigator(QWidget):
    """Filter box over the agent → session tree."""

    session_selected = Signal(object)
    """The :class:`SessionSummary` the user selected (None when cleared)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = SessionTreeModel(self)
        self.proxy = _Filter(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SortRole)
        self.proxy.setRecursiveFilteringEnabled(True)
        self.proxy.setAutoAcceptChildRows(True)  # an agent matched by name shows its sessions
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.filter_box = QLineEdit(placeholderText="Filter sessions (Ctrl+F)")
        self.filter_box.setClearButtonEnabled(True)
        self.filter_box.textChanged.connect(self.proxy.setFilterFixedString)
        self.filter_box.textChanged.connect(self._on_filter_changed)
        self.tree = QTreeView()
        self.tree.setModel(self.proxy)
        self.tree.setSortingEnabled(True)
        self.tree.sortByColumn(5, Qt.SortOrder.DescendingOrder)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setAccessibleName("Sessions")
        self.tree.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self._shown_path: str | None = None  # the session session_selected last named
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.filter_box)
        layout.addWidget(self.tree)

    def set_sessions(self, summaries: Sequence[SessionSummary]) -> None:
        """Show *summaries*; every agent expanded, columns sized to fit."""
        self._shown_path = None  # refilled (a reload): the next selection is news again
        self.model.set_sessions(summaries)
        self.tree.expandAll()
        self._fit_columns()
        self.tree.setColumnWidth(0, max(self.tree.columnWidth(0), 220))

    def update_sessions(self, summaries: Sequence[SessionSummary]) -> None:
        """Show new figures for *summaries*, or add their rows (live mode).

        See :meth:`SessionTreeModel.upsert_sessions`: selection, scroll and expanded rows
        are kept; a new agent row is expanded; columns only ever widen.
        """
        if not summaries:
            return
        for index in self.model.upsert_sessions(summaries):
            self.tree.expand(self.proxy.mapFromSource(index))
        self._fit_columns(summaries, widen_only=True)

    def _fit_columns(
        self, sessions: Sequence[SessionSummary] | None = None, *, widen_only: bool = False
    ) -> None:
        """Size the number columns to their widest text, measured directly.

        ``resizeColumnToContents`` asks the model for every role of every cell, which
        cost ~25 ms for a dozen sessions on the GUI thread right after a load. With
        *sessions*, only their rows (and the agents' totals) are measured.
        """
        fm = self.tree.fontMetrics()
        header = self.tree.header().fontMetrics()
        pad = 2 * self.tree.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) + 14
        model = self.model
        rows = model.sessions() if sessions is None else sessions
        for column in range(1, len(COLUMNS)):
            col = COLUMNS[column]
            texts = [col.show(s) for s in rows]
            texts += [str(model.index(r, column).data() or "") for r in range(model.rowCount())]
            width = max((fm.horizontalAdvance(t) for t in texts), default=0) + pad
            title = header.horizontalAdvance(col.header) + pad + 16  # room for the sort arrow
            if widen_only:
                width = max(width, self.tree.columnWidth(column))
            self.tree.setColumnWidth(column, max(width, title))

    def current(self) -> SessionSummary | None:
        """The selected session, if any."""
        index = self.tree.currentIndex()
        rec = index.siblingAtColumn(0).data(RecordRole) if index.isValid() else None
        return rec

    def select_session(self, session_id: str) -> bool:
        """Select a session by id or path; False when it is not listed (or filtered out)."""
        source = self.model.session_index(session_id)
        index = self.proxy.mapFromSource(source)
        if not index.isValid():
            return False
        self.tree.setCurrentIndex(index)
        self.tree.scrollTo(index)
        return True

    def select_first(self) -> None:
        """Select the first session shown, if any."""
        for a in range(self.proxy.rowCount()):
            agent = self.proxy.index(a, 0)
            if self.proxy.rowCount(agent):
                self.tree.setCurrentIndex(self.proxy.index(0, 0, agent))
                return

    @Slot(str)
    def _on_filter_changed(self, _text: str) -> None:
        self.tree.expandAll()

    @Slot(QItemSelection, QItemSelection)
    def _on_selection_changed(self, _selected: QItemSelection, _old: QItemSelection) -> None:
        current = self.current()
        path = current.path if current is not None else None
        if path == self._shown_path and path is not None:
            return  # a live update re-sorted the rows: the same session stays selected
        self._shown_path = path
        self.session_selected.emit(current)
