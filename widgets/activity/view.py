"""Every write memlens made: time, file, action, byte offset, line, length and summary.

:class:`ActivityView` is handed :class:`core.io.fsutil.WriteRecord` objects: all at once
(:meth:`ActivityView.set_records`, from :meth:`core.safety.activity.ActivityLog.load`) and
then one by one as writes happen (:meth:`ActivityView.add`, or :meth:`ActivityView.post`
from any thread: an :class:`core.safety.activity.ActivityLog` subscriber). The
:class:`core.safety.activity.ActivityEvent` rows around them (``compaction started``,
then ``finished``, ``failed`` or ``cancelled``, with the session and the tokens
before and after) are shown in the same table, action ``compaction``.

Writes to the agent's data and writes to memlens's own files (the demo data it
generates, its vector cache: :mod:`core.safety.activity_owner`) are two lists: the
view shows the agent's by default, memlens's own on request ("Whose files"), and
its count counts the list shown.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QSortFilterProxyModel,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QSizePolicy,
    QTableView,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from core.io.fsutil import WriteRecord
from core.safety.activity import ACTIONS as WRITE_ACTIONS
from core.safety.activity import EVENT_KINDS, ActivityEvent, ActivityItem, owner_of
from core.safety.activity_owner import AGENT, MEMLENS
from widgets.common.record_model import Column, RecordRole, RecordTableModel, SortRole

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

Index = QModelIndex | QPersistentModelIndex
ACTIONS = (*WRITE_ACTIONS, *EVENT_KINDS)
TIME, FILE, ACTION, OFFSET, LINE, LENGTH, SUMMARY = range(7)
Item = ActivityItem
WHOSE = ((AGENT, "The agent's data"), (MEMLENS, "memlens's own files"), ("", "Both"))
"""The choices of the view's "whose files" box: (owner, label); "" shows both lists."""
WHOSE_TIP = {
    AGENT: "the agent's data",
    MEMLENS: "memlens's own file (demo data, cache, settings, logs): not the agent's data",
}


def local_time(seconds: float) -> str:
    """``YYYY-MM-DD HH:MM:SS`` in local time (``?`` for an impossible time)."""
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))
    except (OverflowError, ValueError, OSError):
        return "????-??-?? ??:??:??"


def location(record: Item) -> str:
    """``path:line`` (editors open it there), with the byte range (an event: its file)."""
    if isinstance(record, ActivityEvent):
        return record.path
    where = f"{record.path}:{record.first_line}" if record.first_line else record.path
    return f"{where} (bytes {record.offset}-{record.offset + record.length})"


def _write(r: Item, value: Any) -> Any:
    """*value* for a write's row, nothing for an event's."""
    return value if isinstance(r, WriteRecord) else ""


def _tokens(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


def event_tooltip(event: ActivityEvent) -> str:
    """Session, tokens before and after, who ran it, and the summary."""
    lines = [f"{event.label}: {event.path}", f"session {event.session or '?'}"]
    tokens = f"tokens before {_tokens(event.tokens_before)}"
    if event.phase == "finished":
        tokens += f", after ~{_tokens(event.tokens_after)}"
    lines.append(tokens)
    if event.source:
        lines.append(f"by {event.source}")
    if event.summary:
        lines.append(event.summary)
    return "\n".join(lines)


class ActivityModel(RecordTableModel[Item]):
    """One row per write or event in the order they were made; :meth:`add` appends."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(
            [
                Column("Time", lambda r: local_time(r.time)),
                Column("File", lambda r: Path(r.path).name or r.path),
                Column("Action", lambda r: r.label if isinstance(r, ActivityEvent) else r.action),
                Column(
                    "Offset",
                    lambda r: _write(r, getattr(r, "offset", "")),
                    lambda r: getattr(r, "offset", -1),
                    align_right=True,
                    thousands=False,
                ),
                Column(
                    "Line",
                    lambda r: _write(r, getattr(r, "first_line", 0) or ""),
                    lambda r: getattr(r, "first_line", -1),
                    True,
                    False,
                ),
                Column(
                    "Length",
                    lambda r: _write(r, getattr(r, "length", "")),
                    lambda r: getattr(r, "length", -1),
                    align_right=True,
                ),
                Column("Summary", lambda r: r.summary),
            ],
            parent,
        )
        self.owner: Callable[[Item], str] = owner_of
        """Whose file a row touched (the app's log also decides for older lines)."""
        self.counts: dict[tuple[str, bool], int] = {}
        """Rows by (owner, is an event), kept as rows come, not recounted per insert."""

    def count(self, owner: str, *, events: bool = False) -> int:
        """How many writes (or events) touched *owner*'s files ("" for both)."""
        return sum(n for (o, e), n in self.counts.items() if e == events and owner in ("", o))

    def _counted(self, record: Item) -> None:
        key = (self.owner(record), isinstance(record, ActivityEvent))
        self.counts[key] = self.counts.get(key, 0) + 1

    def set_owner_rule(self, owner: Callable[[Item], str]) -> None:
        """Decide whose file each row touched with *owner* (rows recounted)."""
        self.owner = owner
        self.counts = {}
        for record in self._rows:
            self._counted(record)
        if self._rows:
            last = self.index(len(self._rows) - 1, self.columnCount() - 1)
            self.dataChanged.emit(self.index(0, 0), last)

    @override
    def set_records(self, rows: Sequence[Item]) -> None:
        self.counts = {}
        for record in rows:
            self._counted(record)
        super().set_records(rows)

    def add(self, record: Item) -> None:
        """Append one row."""
        row = self.rowCount()
        self._counted(record)
        self.beginInsertRows(QModelIndex(), row, row)
        self._rows.append(record)
        self.endInsertRows()

    @override
    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == SortRole and index.column() == TIME and index.isValid():
            # The log is in the order of the writes: the row breaks ties of equal times.
            return index.row()
        if role == Qt.ItemDataRole.ToolTipRole and index.isValid():
            rec = self.record(index.row())
            whose = WHOSE_TIP.get(self.owner(rec), "")
            if isinstance(rec, ActivityEvent):
                return f"{event_tooltip(rec)}\n{whose}"
            tip = location(rec)
            if rec.backup:
                tip += f"\nbackup: {rec.backup}"
            if rec.sha256:
                tip += f"\nSHA-256 of the verified copy: {rec.sha256}"
            tip += f"\n{whose}"
            return f"{tip}\n{rec.summary}" if rec.summary else tip
        return super().data(index, role)


class ActivityFilter(QSortFilterProxyModel):
    """Rows of the chosen owner and action whose file, action or summary holds the text."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._text = ""
        self._action = ""
        self._owner = AGENT
        self.setSortRole(SortRole)

    def set_text(self, text: str) -> None:
        """Keep rows containing *text* (any case) in the path, action or summary."""
        self._change(text.strip().casefold(), self._action, self._owner)

    def set_action(self, action: str) -> None:
        """Keep rows of *action* only ("" for all)."""
        self._change(self._text, action, self._owner)

    def set_owner(self, owner: str) -> None:
        """Keep rows that touched *owner*'s files (``agent``, ``memlens``; "" for both)."""
        self._change(self._text, self._action, owner)

    def refilter(self) -> None:
        """Filter again (whose file a row touched was decided anew)."""
        self._change(self._text, self._action, self._owner, force=True)

    def _change(self, text: str, action: str, owner: str, *, force: bool = False) -> None:
        if (text, action, owner) == (self._text, self._action, self._owner) and not force:
            return
        if hasattr(self, "beginFilterChange"):  # Qt >= 6.10; invalidateRowsFilter is deprecated
            self.beginFilterChange()
            self._text, self._action, self._owner = text, action, owner
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:  # pragma: no cover - older Qt
            self._text, self._action, self._owner = text, action, owner
            self.invalidateRowsFilter()

    @override
    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.ForegroundRole and not self._owner and index.isValid():
            # Both lists shown: memlens's own rows are set apart (dimmed).
            model = self.sourceModel()
            rec = index.data(RecordRole)
            if isinstance(model, ActivityModel) and rec is not None and model.owner(rec) == MEMLENS:
                return QGuiApplication.palette().color(QPalette.ColorRole.PlaceholderText)
        return super().data(index, role)

    @override
    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        model = self.sourceModel()
        rec = model.index(source_row, 0, source_parent).data(RecordRole)
        if not isinstance(rec, WriteRecord | ActivityEvent):
            return False
        if self._action and rec.action != self._action:
            return False
        if self._owner and isinstance(model, ActivityModel) and model.owner(rec) != self._owner:
            return False
        if not self._text:
            return True
        if isinstance(rec, ActivityEvent):
            hay = f"{rec.path}\n{rec.label}\n{rec.session}\n{rec.summary}".casefold()
        else:
            hay = f"{rec.path}\n{rec.action}\n{rec.summary}\n{rec.backup or ''}".casefold()
        return self._text in hay


class ActivityView(QWidget):
    """The activity log as a filterable, sortable table (newest first).

    Signals
    -------
    record_activated(WriteRecord)
        Enter or double click on a write's row (the app can open the file at the
        line); an event's row emits ``event_activated(ActivityEvent)`` instead.
    """

    record_activated = Signal(object)
    event_activated = Signal(object)
    _posted = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ActivityModel(self)
        self.proxy = ActivityFilter(self)
        self.proxy.setSourceModel(self.model)

        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Filter by file, action or summary")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setToolTip("Show only writes whose file, action or summary contains this")
        self.action_box = QComboBox()
        self.action_box.addItem("All actions", "")
        for action in ACTIONS:
            self.action_box.addItem(action, action)
        self.action_box.setToolTip("Show only one kind of write")
        self.owner_box = QComboBox()
        for owner, label in WHOSE:
            self.owner_box.addItem(label, owner)
        self.owner_box.setAccessibleName("Whose files")
        self.owner_box.setToolTip(
            "Whose files: the agent's data (what memlens wrote to the agent's transcripts, "
            "facts and stores), or memlens's own files (the demo data it generates, its "
            "vector cache, settings and logs)"
        )
        self.count_label = QLabel()

        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(TIME, Qt.SortOrder.DescendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        for col, chars in ((TIME, 20), (FILE, 22), (ACTION, 8), (OFFSET, 11), (LINE, 7)):
            header.resizeSection(col, self.fontMetrics().averageCharWidth() * chars + 16)
        header.resizeSection(LENGTH, self.fontMetrics().averageCharWidth() * 9 + 16)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)

        self.copy_action = QAction("&Copy location", self)
        self.copy_action.setShortcut(QKeySequence.StandardKey.Copy)
        self.copy_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.copy_action.setToolTip("Copy file:line and byte range of the selected writes")
        self.table.addAction(self.copy_action)

        top = QHBoxLayout()
        top.setContentsMargins(2, 2, 6, 0)
        top.addWidget(self.owner_box)
        top.addWidget(self.filter_edit, 1)
        top.addWidget(self.action_box)
        # The count shrinks (cut, the whole of it in its tooltip) rather than holding the
        # dock wider than a laptop's left column.
        self.count_label.setMinimumWidth(0)
        self.count_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        top.addWidget(self.count_label, 1)
        for box in (self.owner_box, self.action_box):
            box.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            box.setMinimumContentsLength(8)
        self.filter_edit.setMinimumWidth(60)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(top)
        lay.addWidget(self.table, 1)

        self.filter_edit.textChanged.connect(self._on_filter_edit_text_changed)
        self.action_box.currentIndexChanged.connect(self._on_action_box_current_index_changed)
        self.owner_box.currentIndexChanged.connect(self._on_owner_box_current_index_changed)
        self.table.activated.connect(self._on_table_activated)
        self.table.customContextMenuRequested.connect(self._on_table_context_menu_requested)
        self.copy_action.triggered.connect(self._on_copy_action_triggered)
        # Rows the proxy hides (the other owner's) change the counts too.
        self.model.rowsInserted.connect(self._update_count)
        self.model.modelReset.connect(self._update_count)
        self.proxy.rowsInserted.connect(self._update_count)
        self.proxy.rowsRemoved.connect(self._update_count)
        self.proxy.modelReset.connect(self._update_count)
        self.proxy.layoutChanged.connect(self._update_count)
        self._posted.connect(self.add, Qt.ConnectionType.QueuedConnection)
        self._update_count()

    # --- feeding -----------------------------------------------------------------

    def set_records(self, records: Sequence[Item]) -> None:
        """Show *records*, writes and events (oldest first, as the activity file holds them)."""
        self.model.set_records(records)

    @Slot(object)
    def add(self, record: Item) -> None:
        """Add one write or event (GUI thread)."""
        self.model.add(record)

    def set_owner_rule(self, owner: Callable[[Item], str]) -> None:
        """Decide whose file each row touched with *owner* (the app's log: older lines too)."""
        self.model.set_owner_rule(owner)
        self.proxy.refilter()
        self._update_count()

    def post(self, record: Item) -> None:
        """Add one write or event from any thread (queued to the GUI thread)."""
        self._posted.emit(record)

    def selected_records(self) -> list[Item]:
        """The selected records, in display order."""
        rows = sorted(i.row() for i in self.table.selectionModel().selectedRows())
        return [self.proxy.index(r, 0).data(RecordRole) for r in rows]

    # --- handlers ----------------------------------------------------------------

    @Slot()
    def _update_count(self) -> None:
        """Count the list chosen: the agent's data's writes, memlens's own, or both."""
        owner = str(self.owner_box.currentData() or "")
        model = self.model
        writes, events = model.count(owner), model.count(owner, events=True)
        total, shown = writes + events, self.proxy.rowCount()
        own = model.count(MEMLENS) + model.count(MEMLENS, events=True)
        # Which list is counted is said once there are two lists to tell apart.
        place = {AGENT: " to the agent's data", MEMLENS: " to memlens's own files"}.get(owner, "")
        place = place if own or owner == MEMLENS else ""
        if total == 0:
            text = f"No writes{place or ' yet'}"
        elif shown == total:
            text = f"{writes:,} write" + ("" if writes == 1 else "s") + place
            if events:
                text += f", {events:,} event" + ("" if events == 1 else "s")
        else:
            noun = "writes" if not events else "rows"
            text = f"{shown:,} of {total:,} {noun}{place}"
        other = model.count(MEMLENS) if owner == AGENT else 0
        if other:
            text += f" · {other:,} to memlens's own files"
        self.count_label.setText(text)
        self.count_label.setToolTip(text)

    @Slot(str)
    def _on_filter_edit_text_changed(self, text: str) -> None:
        self.proxy.set_text(text)

    @Slot(int)
    def _on_action_box_current_index_changed(self, _index: int) -> None:
        self.proxy.set_action(str(self.action_box.currentData() or ""))

    @Slot(int)
    def _on_owner_box_current_index_changed(self, _index: int) -> None:
        self.proxy.set_owner(str(self.owner_box.currentData() or ""))
        self._update_count()

    @Slot(QModelIndex)
    def _on_table_activated(self, index: QModelIndex) -> None:
        rec = index.data(RecordRole)
        if isinstance(rec, WriteRecord):
            self.record_activated.emit(rec)
        elif isinstance(rec, ActivityEvent):
            self.event_activated.emit(rec)

    @Slot()
    def _on_copy_action_triggered(self) -> None:
        records = self.selected_records()
        if records:
            QGuiApplication.clipboard().setText("\n".join(location(r) for r in records))

    @Slot(QPoint)
    def _on_table_context_menu_requested(self, pos: QPoint) -> None:
        menu = QMenu(self)
        menu.addAction(self.copy_action)
        self.copy_action.setEnabled(bool(self.selected_records()))
        menu.exec(self.table.viewport().mapToGlobal(pos))
        self.copy_action.setEnabled(True)
