"""Context at this point: the exact message list the model saw at an entry.

Rows come from :func:`core.transcript.replay.context_at` through
:func:`core.transcript.parts.context_rows`: the compaction summary first, the kept
entries, what followed, and a recalled-context block where memory-context would
inject it. A footer sums the tokens by origin.

Each message's tokens are pi's chars/4 estimate (:data:`core.context.terms.CHARS4_ESTIMATE`);
the injected block is counted as every view counts it,
:func:`core.recall.block.block_token_count` (memory-context's characters / 3), so the
Recall view, the gauge, this view and ``memlens recall`` show one figure for it.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QEvent,
    QItemSelection,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtGui import QBrush, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from core.context.terms import CHARS4_ESTIMATE, CONTEXT_TOKENS, source_label
from core.recall.block import BLOCK_ESTIMATOR, block_token_count
from core.transcript.parts import (
    ORIGIN_AFTER,
    ORIGIN_HISTORY,
    ORIGIN_KEPT,
    ORIGIN_NOT_SENT,
    ORIGIN_RECALLED,
    ORIGIN_SUMMARY,
    ORIGIN_SYNTHETIC,
    ContextRow,
    context_rows,
)
from core.transcript.replay import context_at, context_size
from core.transcript.run_bound import run_bound
from widgets.common.jobs import default_runner
from widgets.common.palette import is_dark
from widgets.common.record_model import Column, RecordRole, RecordTableModel, SortRole
from widgets.common.view_jobs import view_key
from widgets.session.message_html import mix, role_colour

if TYPE_CHECKING:
    from collections.abc import Callable

    from core.transcript.model import Session
    from widgets.common.jobs import JobRunner

Index = QModelIndex | QPersistentModelIndex

COLUMNS: tuple[Column[ContextRow], ...] = (
    Column("#", lambda r: str(r.position), lambda r: r.position, align_right=True, thousands=False),
    Column("Role", lambda r: r.role),
    Column("Origin", lambda r: r.origin),
    Column("Tokens", lambda r: r.tokens, align_right=True),
    Column("Preview", lambda r: r.preview),
)
ROLE_COLUMN = 1
SYNC_LIMIT = 2000
"""Sessions with more entries are replayed in a worker thread (about 50 ms at 2,000)."""
_STYLE_ROLES = frozenset(
    {
        Qt.ItemDataRole.ForegroundRole,
        Qt.ItemDataRole.BackgroundRole,
        Qt.ItemDataRole.FontRole,
        Qt.ItemDataRole.ToolTipRole,
    }
)
ORIGIN_ORDER = (
    ORIGIN_SUMMARY,
    ORIGIN_KEPT,
    ORIGIN_AFTER,
    ORIGIN_HISTORY,
    ORIGIN_RECALLED,
    ORIGIN_SYNTHETIC,
    ORIGIN_NOT_SENT,
)
_NOTES = {
    ORIGIN_SYNTHETIC: "synthetic: the call's result was never written; pi sends this "
    "error result in its place (not in the transcript, not in pi's token estimate)",
    ORIGIN_NOT_SENT: "not sent: pi keeps it in context but leaves it out of the request "
    "(an aborted or failed turn, or a !! bash run)",
}


class ContextTableModel(RecordTableModel[ContextRow]):
    """:class:`ContextRow` records; roles coloured, injected and summary rows tinted."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(COLUMNS, parent)
        self._dark = False
        self._base = role_colour("other", False)
        self.target_entry = ""
        """The entry the context was replayed at; its row is bold."""

    def set_palette_colours(self, dark: bool, base: Any) -> None:
        """Colour roles for a light or dark palette whose base colour is *base*."""
        self._dark = dark
        self._base = base
        if self.rowCount():
            last = self.index(self.rowCount() - 1, self.columnCount() - 1)
            self.dataChanged.emit(self.index(0, 0), last)

    @override
    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role not in _STYLE_ROLES:
            return super().data(index, role)
        if not index.isValid() or not (0 <= index.row() < self.rowCount()):
            return None
        rec = self.record(index.row())
        if role == Qt.ItemDataRole.ForegroundRole and index.column() == ROLE_COLUMN:
            return QBrush(role_colour(rec.role, self._dark))
        if role == Qt.ItemDataRole.BackgroundRole and rec.origin in (
            ORIGIN_RECALLED,
            ORIGIN_SUMMARY,
        ):
            key = "recalled" if rec.origin == ORIGIN_RECALLED else "compactionSummary"
            return QBrush(
                mix(self._base, role_colour(key, self._dark), 0.25 if self._dark else 0.14)
            )
        if role == Qt.ItemDataRole.FontRole and rec.origin in _NOTES:
            font = QFont()
            font.setItalic(True)
            font.setStrikeOut(rec.origin == ORIGIN_NOT_SENT)
            return font
        if role == Qt.ItemDataRole.FontRole and rec.entry_id and rec.entry_id == self.target_entry:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.ToolTipRole:
            if not rec.entry_id:
                return (
                    "recalled-context block, injected by memory-context (not in the transcript)"
                    f"\n{rec.tokens:,} tokens: {BLOCK_ESTIMATOR}, as the Recall view counts it"
                )
            note = f"\n{_NOTES[rec.origin]}" if rec.origin in _NOTES else ""
            return f"entry {rec.entry_id} (#{rec.entry_index}) · {rec.origin}{note}\n{rec.preview}"
        return super().data(index, role)


@dataclass(frozen=True, slots=True)
class ReplayedContext:
    """The rows of a replayed context and the entry it was replayed at."""

    rows: list[ContextRow]
    measured: int | None
    target_id: str
    target_index: int
    note: str = ""
    """Said under the figures: OpenClaw's run read only part of the branch."""


def replay_rows(
    session: Session,
    entry_id: str,
    recalled_block: str | None = None,
    injection_index: int | None = None,
) -> ReplayedContext:
    """Replay the context at *entry_id* and turn it into table rows.

    Raises
    ------
    KeyError
        When *entry_id* is not in *session*.
    """
    target = session.entry(entry_id)
    items = context_at(session, target.id)
    rows = context_rows(items, recalled_block, injection_index)
    if recalled_block:  # the injected block: counted as the Recall view counts it
        rows = [
            replace(r, tokens=block_token_count(recalled_block))
            if r.origin == ORIGIN_RECALLED and not r.entry_id
            else r
            for r in rows
        ]
    note = ""
    if session.db is not None and session.run_context_tokens is not None:
        bound = run_bound(session, session.path_to(target.id), session.run_context_tokens)
        note = bound.describe() if bound.truncated else ""
    return ReplayedContext(rows, context_size(items).measured, target.id, target.index, note)


class ReplayFailed(LookupError):
    """The context could not be replayed; the text says why, for people."""


def replay_job(
    session: Session,
    entry_id: str,
    recalled_block: str | None = None,
    injection_index: int | None = None,
) -> Callable[..., ReplayedContext]:
    """A job for the runner: :func:`replay_rows`, its failures worded for the view."""

    def job(**_job: object) -> ReplayedContext:
        try:
            return replay_rows(session, entry_id, recalled_block, injection_index)
        except KeyError as exc:
            raise ReplayFailed(str(exc.args[0]) if exc.args else str(exc)) from exc
        except Exception as exc:
            raise ReplayFailed(f"context replay failed: {exc}") from exc

    return job


class ContextView(QWidget):
    """The messages the model saw at an entry, in order, with origin and tokens.

    Selecting a row (or double-clicking it) emits :attr:`entry_activated` with the
    entry id; the injected recalled block has no entry and emits nothing. Sessions
    over :attr:`sync_limit` entries are replayed in a worker thread: the rows arrive
    later, and :attr:`context_shown` says when (it is emitted on both paths).
    """

    entry_activated = Signal(str)
    """A message of the context was picked: its entry id."""
    context_shown = Signal()
    """The rows of the last :meth:`show_context` are in the table (or it failed)."""

    def __init__(self, parent: QWidget | None = None, runner: JobRunner | None = None) -> None:
        super().__init__(parent)
        self._rows: list[ContextRow] = []
        self._measured: int | None = None
        self._note = ""
        self._runner = runner if runner is not None else default_runner()
        # One replay at a time: a newer request drops whatever an older one delivers.
        self._key = view_key(self, self._runner, "context-rows")
        self.sync_limit = SYNC_LIMIT
        """Sessions with at most this many entries are replayed on the GUI thread."""
        self.title = QLabel()
        bold = self.title.font()
        bold.setBold(True)
        self.title.setFont(bold)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Filter by role, origin or text…")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self._on_filter_text_changed)

        self.model = ContextTableModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SortRole)
        self.proxy.setFilterKeyColumn(-1)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        # Context order until the user sorts: no sorting pass on every new context.
        self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        char = self.fontMetrics().horizontalAdvance("0")
        for col, chars in enumerate((6, 17, 16, 9)):
            header.resizeSection(col, char * chars)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self.table.doubleClicked.connect(self._on_double_clicked)

        self.footer = QLabel()
        self.footer.setTextFormat(Qt.TextFormat.RichText)
        self.footer.setWordWrap(True)
        self.footer.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(4)
        layout.addWidget(self.title)
        layout.addWidget(self.filter_edit)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.footer)
        self._apply_palette()
        self.clear()

    def show_context(
        self,
        session: Session,
        entry_id: str,
        recalled_block: str | None = None,
        injection_index: int | None = None,
    ) -> None:
        """Show the context the model saw at *entry_id* (an id or ``#N``) of *session*.

        Parameters
        ----------
        session
            The session.
        entry_id
            The selected entry.
        recalled_block
            A recalled-context block to show where memory-context injects it (older
            recalled blocks in the context are removed first, as memory-context does).
        injection_index
            Where the block goes (:func:`core.recall.block.injection_index`); by
            default after the system prompt and compaction summary.
        """
        self._runner.cancel(self._key)
        self.title.setText(f"Context at {entry_id} …")
        if len(session.entries) <= self.sync_limit:
            try:
                result = replay_rows(session, entry_id, recalled_block, injection_index)
            except KeyError as exc:  # no such entry; any other failure is a bug and raises
                self._on_failed(str(exc.args[0]) if exc.args else str(exc))
            else:
                self._on_finished(result)
            return
        job = replay_job(session.snapshot(), entry_id, recalled_block, injection_index)
        self.footer.setText("Replaying the context…")
        self._runner.submit(
            "context replay", job, key=self._key, done=self._on_finished, failed=self._on_failed
        )

    def is_busy(self) -> bool:
        """True while a context is being replayed in the background."""
        return self._runner.busy(self._key)

    def clear(self) -> None:
        """Show no context (a replay still running is ignored when it ends)."""
        self._runner.cancel(self._key)
        self._rows = []
        self._measured = None
        self._note = ""
        self.model.target_entry = ""
        self.model.set_records([])
        self.title.setText("Context at this point")
        self.footer.setText("No entry selected.")

    def rows(self) -> list[ContextRow]:
        """Every row of the context shown, in context order (the filter aside)."""
        return list(self._rows)

    @property
    def total_tokens(self) -> int:
        """Tokens of the context (pi's estimate), recalled block included.

        Synthetic results are left out, as pi's estimate leaves them out.
        """
        return sum(r.tokens for r in self._rows if r.origin != ORIGIN_SYNTHETIC)

    def _update_footer(self) -> None:
        by_origin: dict[str, tuple[int, int]] = {}
        for r in self._rows:
            n, tok = by_origin.get(r.origin, (0, 0))
            by_origin[r.origin] = (n + 1, tok + r.tokens)
        made = sum(r.origin == ORIGIN_SYNTHETIC for r in self._rows)
        count = len(self._rows) - made
        total = f"{count:,} messages · ≈ {self.total_tokens:,} tokens ({CHARS4_ESTIMATE.name})"
        injected = sum(
            r.tokens for r in self._rows if r.origin == ORIGIN_RECALLED and not r.entry_id
        )
        if injected:
            total += f", recalled block {injected:,} ({BLOCK_ESTIMATOR})"
        if made:
            total += f" · {made:,} synthetic result{'s' if made != 1 else ''} added as pi sends"
        if self._measured is not None:
            total += f" · {CONTEXT_TOKENS.name} {self._measured:,} ({source_label('measured')})"
        shown = self.proxy.rowCount()
        if shown != len(self._rows):
            total += f" · showing {shown:,}"
        split = "  ·  ".join(
            f"{origin}: {by_origin[origin][0]:,} msg, {by_origin[origin][1]:,} tok"
            for origin in ORIGIN_ORDER
            if origin in by_origin
        )
        muted = mix(
            self.palette().color(self.palette().ColorRole.WindowText),
            self.palette().color(self.palette().ColorRole.Window),
            0.4,
        ).name()
        note = f"<br><b>{html.escape(self._note)}</b>" if self._note else ""
        self.footer.setText(
            f"<b>{html.escape(total)}</b><br>"
            f'<span style="color:{muted}">{html.escape(split)}</span>{note}'
        )

    def _on_finished(self, result: ReplayedContext) -> None:
        self._rows = result.rows
        self._measured = result.measured
        self._note = result.note
        self.model.target_entry = result.target_id
        self.model.set_records(self._rows)
        self.title.setText(f"Context at #{result.target_index} · {result.target_id}")
        self._update_footer()
        for row, rec in enumerate(self._rows):
            if rec.entry_id == result.target_id:
                proxy_index = self.proxy.mapFromSource(self.model.index(row, 0))
                self.table.scrollTo(proxy_index, QAbstractItemView.ScrollHint.PositionAtBottom)
        self.context_shown.emit()

    def _on_failed(self, message: str) -> None:
        self.clear()
        self.footer.setText(html.escape(message, quote=False))
        self.context_shown.emit()

    def _apply_palette(self) -> None:
        palette = self.palette()
        self.model.set_palette_colours(is_dark(palette), palette.color(palette.ColorRole.Base))

    def _entry_at(self, proxy_index: QModelIndex) -> str:
        rec = self.proxy.data(proxy_index, RecordRole)
        return rec.entry_id if isinstance(rec, ContextRow) else ""

    @Slot(QItemSelection, QItemSelection)
    def _on_selection_changed(self, selected: QItemSelection, _deselected: QItemSelection) -> None:
        indexes = selected.indexes()
        if indexes:
            entry_id = self._entry_at(indexes[0])
            if entry_id:
                self.entry_activated.emit(entry_id)

    @Slot(QModelIndex)
    def _on_double_clicked(self, index: QModelIndex) -> None:
        entry_id = self._entry_at(index)
        if entry_id:
            self.entry_activated.emit(entry_id)

    @Slot(str)
    def _on_filter_text_changed(self, text: str) -> None:
        self.proxy.setFilterFixedString(text)
        self._update_footer()

    @override
    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_palette()
