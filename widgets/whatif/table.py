"""The what-if panel's tables: the compactions of both replays, and what one of them lost.

:class:`CompactionTableModel` lists the real and simulated compactions in path order
(one :class:`CompactionRow` each); their loss columns fill in when the loss audit's
job delivers (:meth:`CompactionTableModel.set_losses`: ``dataChanged`` for those
columns, the selection stays). :class:`LostItemsPane` lists the items a compaction
lost for good; activating one emits the entry it came from.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from widgets.common.record_model import Column, RecordRole, RecordTableModel
from widgets.common.tables import table_view
from widgets.whatif.lane import KIND_NAMES, loss_text

if TYPE_CHECKING:
    from collections.abc import Sequence

    from PySide6.QtGui import QResizeEvent

    from core.compaction.audit import AuditItem
    from core.compaction.whatif import WhatIfCompaction, WhatIfResult
    from core.compaction.whatif_audit import CompactionLoss, WhatIfAudit
    from core.transcript.model import Session
    from widgets.common.record_model import Index


@dataclass(frozen=True, slots=True)
class CompactionRow:
    """A compaction of the table, its place among those of its kind, its loss once audited."""

    compaction: WhatIfCompaction
    number: int
    loss: CompactionLoss | None = None


def _share(row: CompactionRow) -> str:
    return f"{row.loss.total.loss:.0%}" if row.loss is not None else ""


COLUMNS: list[Column[CompactionRow]] = [
    Column("Kind", lambda r: KIND_NAMES[r.compaction.kind]),
    Column("After entry", lambda r: f"#{r.compaction.index}", lambda r: r.compaction.position),
    # what it lost, next to where it happened: a narrow table still shows it
    Column("Loss", _share, lambda r: r.loss.total.loss if r.loss else -1.0, align_right=True),
    Column(
        "Lost for good",
        lambda r: r.loss.total.lost if r.loss is not None else None,
        lambda r: r.loss.total.lost if r.loss is not None else -1,
        align_right=True,
    ),
    Column("Tokens before", lambda r: r.compaction.tokens_before, align_right=True),
    Column("Tokens after", lambda r: r.compaction.tokens_after, align_right=True),
    Column("Summarised", lambda r: r.compaction.summarized, align_right=True),
    Column("Kept", lambda r: r.compaction.kept, align_right=True),
    Column("Reason", lambda r: r.compaction.reason),
]
COLUMN_WIDTHS = (72, 80, 56, 96, 96, 90, 84, 50, 76)
NARROW = 900
"""Below this width the lost items go under the compactions' table, not beside it."""
LOSS_COLUMNS = (len(COLUMNS) - 2, len(COLUMNS) - 1)
"""The first and last columns the loss audit fills in."""


def compaction_rows(result: WhatIfResult) -> list[CompactionRow]:
    """Both replays' compactions in path order (the real one first at one place)."""
    rows = [
        *(CompactionRow(c, n) for n, c in enumerate(result.real)),
        *(CompactionRow(c, n) for n, c in enumerate(result.simulated)),
    ]
    return sorted(rows, key=lambda r: (r.compaction.position, r.compaction.kind))


class CompactionTableModel(RecordTableModel[CompactionRow]):
    """The compactions, with their loss once the audit is in (tooltip: what they lost)."""

    def set_losses(self, audit: WhatIfAudit) -> None:
        """Fill in the loss of every row *audit* has (its loss columns change, nothing else)."""
        rows = [self.record(k) for k in range(self.rowCount())]
        for k, row in enumerate(rows):
            loss = audit.of(row.compaction.kind, row.number)
            if loss is not None and loss.entry_id == row.compaction.entry_id:
                self._rows[k] = replace(row, loss=loss)
        if rows:
            first, last = LOSS_COLUMNS
            self.dataChanged.emit(self.index(0, first), self.index(len(rows) - 1, last))

    @override
    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.ToolTipRole and index.isValid():
            row = self.record(index.row())
            if row.loss is None:
                return "Loss: being audited, or not audited"
            return loss_text(row.loss) + "\nEnter: show the entry; the lost items are listed"
        return super().data(index, role)


@dataclass(frozen=True, slots=True)
class LostRow:
    """One item a compaction lost for good, and the entry to show for it."""

    item: AuditItem
    entry_id: str | None
    where: str = ""
    """``#N`` of the entry."""


LOST_COLUMNS: list[Column[LostRow]] = [
    Column("Category", lambda r: r.item.category),
    Column("Lost for good", lambda r: r.item.text),
    Column("From", lambda r: r.where or r.entry_id or ""),
]


class LostItemsPane(QWidget):
    """The items one compaction lost for good; activating one shows its entry.

    Signals
    -------
    entry_activated(str)
        The id of the entry a lost item came from.
    """

    entry_activated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.model: RecordTableModel[LostRow] = RecordTableModel(LOST_COLUMNS, self)
        self.table = table_view(self.model)
        self.table.setAccessibleName("Items lost for good")
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        header.resizeSection(0, 80)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.resizeSection(2, 70)
        self._session: Session | None = None
        self.table.activated.connect(self._on_activated)
        self.table.doubleClicked.connect(self._on_activated)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.table, 1)
        self.show_loss(None)

    def set_session(self, session: Session | None) -> None:
        """The session whose entries the items came from (to name them ``#N``)."""
        self._session = session

    def show_loss(self, row: CompactionRow | None, *, auditing: bool = False) -> None:
        """List what *row*'s compaction lost for good (None: no row selected)."""
        rows: Sequence[LostRow] = ()
        if row is None:
            text = "Select a compaction to list what it lost for good."
        elif row.loss is None:
            text = "Auditing what it lost…" if auditing else "Its loss was not audited."
        else:
            c, loss = row.compaction, row.loss
            rows = [self._row(i, loss.entry_of(i)) for i in loss.lost_items(None)]
            who = "the agent's summary" if c.kind == "real" else "memlens's offline summary"
            text = (
                f"{KIND_NAMES[c.kind].capitalize()} compaction after #{c.index}: {len(rows)} "
                f"of {loss.total.items} items lost for good ({who}; requests and decisions "
                f"first; Enter shows the entry)"
            )
        self.title.setText(text)
        self.model.set_records(rows)

    def _row(self, item: AuditItem, entry_id: str | None) -> LostRow:
        entry = self._session.by_id.get(entry_id) if self._session and entry_id else None
        return LostRow(item, entry_id, f"#{entry.index}" if entry is not None else "")

    @Slot(QModelIndex)
    def _on_activated(self, index: QModelIndex) -> None:
        row = index.data(RecordRole) if index.isValid() else None
        if isinstance(row, LostRow) and row.entry_id:
            self.entry_activated.emit(row.entry_id)


class TableAndLoss(QSplitter):
    """The compactions' table beside the pane of lost items; above it when narrow."""

    def __init__(self, table: QTableView, pane: LostItemsPane) -> None:
        super().__init__(Qt.Orientation.Horizontal, childrenCollapsible=False)
        self.addWidget(table)
        self.addWidget(pane)
        self.setStretchFactor(0, 3)
        self.setStretchFactor(1, 2)

    @override
    def resizeEvent(self, event: QResizeEvent) -> None:
        narrow = event.size().width() < NARROW
        wanted = Qt.Orientation.Vertical if narrow else Qt.Orientation.Horizontal
        if self.orientation() != wanted:
            self.setOrientation(wanted)
        super().resizeEvent(event)
