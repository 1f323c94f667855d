"""Models of the loss audit tab: what to audit, the audit job, the score and item tables.

:func:`run_audit` runs in the job runner (:class:`~widgets.compaction.audit_view.AuditView`
submits it): the audit of a compaction the agent wrote, or of memlens's offline
summary of the next cut, and with the comparison memlens's summary of the same cut.
Bad input (no such compaction, nothing to summarise, a damaged file) becomes the
outcome's message, never an exception. :class:`ScoreModel` has a row per category
for both summarisers; :class:`ItemModel` a row per item, its status coloured;
:class:`ItemFilter` filters them by status and text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QColor, QFont
from typing_extensions import override

from core.compaction.audit import AuditError, audit_compaction, audit_dry_run, score
from core.compaction.audit_extract import CATEGORIES
from core.io.problems import FormatError
from core.io.text import one_line
from widgets.common.record_model import Column, RecordTableModel, SortRole

if TYPE_CHECKING:
    from collections.abc import Callable

    from PySide6.QtCore import QObject

    from core.compaction.audit import AuditItem, LossAudit, Score
    from core.compaction.settings import CompactionSettings
    from core.transcript.model import Session

NEXT_CUT = ""
"""The picker's data for "the next cut memlens would plan" (a dry run)."""
STATUS_FILTERS = (
    ("All items", ()),
    ("Missing or lost", ("missing", "lost")),
    ("Lost for good only", ("lost",)),
)
STATUS_TIPS = {
    "kept": "The summary keeps it word for word",
    "normalised": "The summary keeps it, written differently (case, quotes, separators)",
    "missing": "Not in the summary, but the kept messages mention it again",
    "lost": "Not in the summary and never mentioned again: lost for good",
}
STATUS_ORDER = {"lost": 0, "missing": 1, "normalised": 2, "kept": 3}
# readable on the light and on the dark palette
STATUS_COLORS = {
    "kept": ("#2e7d32", "#81c784"),
    "normalised": ("#1565c0", "#64b5f6"),
    "missing": ("#b26a00", "#ffb74d"),
    "lost": ("#c62828", "#ef7070"),
}
LOST_TINTS = (QColor(220, 40, 40, 38), QColor(255, 90, 90, 26))


@dataclass(frozen=True, slots=True)
class AuditRequest:
    """What to audit: a compaction's entry id (or :data:`NEXT_CUT`), and the comparison."""

    at: str
    compare: bool


@dataclass(frozen=True, slots=True)
class AuditOutcome:
    """A finished audit: the primary one, memlens's of the same cut, or why there is none."""

    request: AuditRequest
    primary: LossAudit | None = None
    other: LossAudit | None = None
    error: str = ""
    other_error: str = ""


@dataclass(frozen=True, slots=True)
class ItemRow:
    """One row of the items table: an item, and memlens's status of it when compared."""

    item: AuditItem
    other: str = ""


@dataclass(frozen=True, slots=True)
class ScoreRow:
    """One row of the score table: a category (or the total) for both summarisers."""

    name: str
    primary: Score | None
    other: Score | None


def run_audit(
    session: Session, request: AuditRequest, settings: CompactionSettings | None = None
) -> AuditOutcome:
    """The audits *request* asks for (errors of bad input become the outcome's text).

    *settings*: the agent's compaction settings, which memlens's planner uses for its
    dry runs (its defaults without them).
    """
    plan = settings.kwargs() if settings is not None else {}
    try:
        if request.at == NEXT_CUT:
            primary = audit_dry_run(session, **plan)
        else:
            primary = audit_compaction(session, request.at)
    except (AuditError, FormatError, KeyError) as exc:
        return AuditOutcome(request, error=str(exc) or type(exc).__name__)
    if not request.compare or request.at == NEXT_CUT:
        return AuditOutcome(request, primary)
    try:
        other = audit_dry_run(session, at=request.at, same_cut=True, **plan)
    except (AuditError, FormatError, KeyError) as exc:
        return AuditOutcome(request, primary, other_error=str(exc) or type(exc).__name__)
    return AuditOutcome(request, primary, other)


def _side(row: ScoreRow, pick: str) -> Score | None:
    return row.primary if pick == "primary" else row.other


def _count_of(pick: str, fn: Callable[[Score], int]) -> Callable[[ScoreRow], int | None]:
    def value(row: ScoreRow) -> int | None:
        s = _side(row, pick)
        return None if s is None else fn(s)

    return value


def _loss_of(pick: str) -> Callable[[ScoreRow], str]:
    def value(row: ScoreRow) -> str:
        s = _side(row, pick)
        return "" if s is None else f"{100 * s.loss:.0f}%"

    return value


def _loss_sort(pick: str) -> Callable[[ScoreRow], float]:
    def value(row: ScoreRow) -> float:
        s = _side(row, pick)
        return -1.0 if s is None else s.loss

    return value


def _score_columns() -> list[Column[ScoreRow]]:
    cols: list[Column[ScoreRow]] = [Column("Category", lambda r: r.name)]
    fields: tuple[tuple[str, Callable[[Score], int]], ...] = (
        ("items", lambda s: s.items),
        ("kept", lambda s: s.kept),
        ("norm.", lambda s: s.normalised),
        ("missing", lambda s: s.missing),
        ("lost", lambda s: s.lost),
    )
    for pick in ("primary", "other"):
        cols += [Column(name, _count_of(pick, fn), align_right=True) for name, fn in fields]
        cols.append(Column("loss", _loss_of(pick), sort=_loss_sort(pick), align_right=True))
    return cols


SCORE_COLUMNS = _score_columns()
ITEM_COLUMNS: list[Column[ItemRow]] = [
    Column("Status", lambda r: r.item.status, sort=lambda r: STATUS_ORDER.get(r.item.status, 9)),
    Column("memlens", lambda r: r.other, sort=lambda r: STATUS_ORDER.get(r.other, 9)),
    Column("Category", lambda r: r.item.category),
    Column("Item", lambda r: one_line(r.item.text, 200), sort=lambda r: r.item.text.lower()),
    Column("Sources", lambda r: len(r.item.source), align_right=True),
    Column("First source", lambda r: r.item.source[0] if r.item.source else "", thousands=False),
]
STATUS_COLUMNS = (0, 1)


class ItemModel(RecordTableModel[ItemRow]):
    """Audit items, the status coloured and the rows lost for good tinted."""

    dark = False

    @override
    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            return super().data(index, role)
        if not index.isValid() or not 0 <= index.row() < self.rowCount():
            return None
        row = self.record(index.row())
        status = row.item.status if index.column() == 0 else row.other
        if role == Qt.ItemDataRole.ForegroundRole and index.column() in STATUS_COLUMNS:
            colors = STATUS_COLORS.get(status)
            return QColor(colors[1 if self.dark else 0]) if colors else None
        if role == Qt.ItemDataRole.FontRole and index.column() in STATUS_COLUMNS:
            if status == "lost":
                font = QFont()
                font.setBold(True)
                return font
            return None
        if role == Qt.ItemDataRole.BackgroundRole and row.item.status == "lost":
            return LOST_TINTS[1 if self.dark else 0]
        if role == Qt.ItemDataRole.ToolTipRole:
            if index.column() in STATUS_COLUMNS:
                return STATUS_TIPS.get(status)
            if index.column() == 3:
                return row.item.text + (f"\n{row.item.detail}" if row.item.detail else "")
            if index.column() in (4, 5):
                return "From entries: " + ", ".join(row.item.source[:12])
        return super().data(index, role)


class ScoreModel(RecordTableModel[ScoreRow]):
    """Scores per category; the headers name the summariser of each group of columns."""

    names = ("agent", "memlens")

    @override
    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        text = super().headerData(section, orientation, role)
        if text is None or section == 0 or role != Qt.ItemDataRole.DisplayRole:
            return text
        return f"{self.names[0 if section < 7 else 1]}\n{text}"


class ItemFilter(QSortFilterProxyModel):
    """Rows whose status is among the chosen ones and whose text holds the filter text."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._statuses: tuple[str, ...] = ()
        self._text = ""
        self.setSortRole(SortRole)

    def set_statuses(self, statuses: tuple[str, ...]) -> None:
        """Show only these statuses (all when empty)."""
        self.beginFilterChange()
        self._statuses = statuses
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def set_text(self, text: str) -> None:
        """Show only items whose text, category or source holds *text* (any case)."""
        self.beginFilterChange()
        self._text = text.strip().lower()
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    @override
    def filterAcceptsRow(
        self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex
    ) -> bool:
        model = self.sourceModel()
        if not isinstance(model, ItemModel):
            return True
        item = model.record(source_row).item
        if self._statuses and item.status not in self._statuses:
            return False
        if not self._text:
            return True
        hay = " ".join((item.text, item.category, *item.source)).lower()
        return self._text in hay


def audit_title(audit: LossAudit) -> str:
    """What *audit* is of: the agent's compaction, or memlens's summary of which cut."""
    if audit.summariser == "agent":
        return f"Compaction #{audit.number} ({audit.entry_id})"
    if audit.entry_id is not None:
        return f"memlens's offline summary of the cut of {audit.entry_id}"
    return "memlens's offline summary of the next cut (dry run)"


def headline(primary: LossAudit | None, other: LossAudit | None) -> str:
    """One line: what was audited, how much it summarised, and its loss (and memlens's)."""
    if primary is None:
        return ""
    total = score(primary.items)
    text = (
        f"{audit_title(primary)}: summarised {primary.summarised_messages:,} message(s) "
        f"(~{primary.summarised_tokens:,} tokens) into {len(primary.summary):,} chars, kept "
        f"{primary.kept_messages:,} from {primary.first_kept_entry_id or '?'}; "
        f"{total.items:,} items, loss {100 * total.loss:.0f}%, "
        f"{len(primary.lost()):,} lost for good"
    )
    if other is not None:
        ot = score(other.items)
        text += (
            f". memlens on the same cut: loss {100 * ot.loss:.0f}%, "
            f"{len(other.lost()):,} lost for good"
        )
    if not primary.items:
        text += ". Nothing to audit: the summarised messages hold no identifier, file or ask"
    return text + "."


def score_rows(primary: LossAudit | None, other: LossAudit | None) -> list[ScoreRow]:
    """A row per category either audit has, then the total."""
    if primary is None:
        return []
    mine, theirs = primary.scores(), other.scores() if other is not None else {}
    rows = [
        ScoreRow(c, mine.get(c), theirs.get(c) if other is not None else None)
        for c in CATEGORIES
        if c in mine or c in theirs
    ]
    rows.append(
        ScoreRow("total", score(primary.items), score(other.items) if other is not None else None)
    )
    return rows


def item_rows(primary: LossAudit | None, other: LossAudit | None) -> list[ItemRow]:
    """The primary audit's items, each with memlens's status of it when compared."""
    if primary is None:
        return []
    if other is None:
        return [ItemRow(i) for i in primary.items]
    theirs = {(i.category, i.text): i.status for i in other.items}
    return [ItemRow(i, theirs.get((i.category, i.text), "—")) for i in primary.items]
