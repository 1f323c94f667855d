"""The loss audit tab of the compaction panel: what a compaction's summary lost.

:class:`AuditView` is handed a session. Its picker lists the session's compactions,
newest first, and "the next cut memlens would plan"; the audit
(:func:`core.compaction.audit.audit_compaction`, or
:func:`~core.compaction.audit.audit_dry_run` for the next cut) runs in the job runner,
a newer request replacing an older one. With "Compare with memlens" ticked,
memlens's offline summary of the very same cut is audited too and the score table
shows both summarisers side by side. The items table lists every item with its
status (coloured; the ones lost for good tinted), filtered by status and text;
activating an item emits :attr:`AuditView.entry_activated` with the first entry it
came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QColor, QFont, QKeyEvent, QPalette, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from core.compaction.audit import AuditError, audit_compaction, audit_dry_run, score
from core.compaction.audit_extract import CATEGORIES
from core.io.jobs import Cancelled
from core.io.problems import FormatError
from core.io.text import one_line
from widgets.common.jobs import default_runner
from widgets.common.record_model import Column, RecordRole, RecordTableModel, SortRole
from widgets.common.view_jobs import view_key

if TYPE_CHECKING:
    from collections.abc import Callable

    from core.compaction.audit import AuditItem, LossAudit, Score
    from core.transcript.model import Session
    from widgets.common.jobs import JobRunner

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
LOST_TINT = QColor(220, 40, 40, 38)


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


def run_audit(session: Session, request: AuditRequest) -> AuditOutcome:
    """The audits *request* asks for (errors of bad input become the outcome's text)."""
    try:
        if request.at == NEXT_CUT:
            primary = audit_dry_run(session)
        else:
            primary = audit_compaction(session, request.at)
    except (AuditError, FormatError, KeyError) as exc:
        return AuditOutcome(request, error=str(exc) or type(exc).__name__)
    if not request.compare or request.at == NEXT_CUT:
        return AuditOutcome(request, primary)
    try:
        other = audit_dry_run(session, at=request.at, same_cut=True)
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
ITEM_WIDTHS = (84, 84, 84, 420, 60, 110)
STATUS_COLUMNS = (0, 1)


def _dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


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
            return LOST_TINT
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

    def __init__(self, parent: QWidget | None = None) -> None:
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


class _ItemTable(QTableView):
    """Enter or Return on the current row emits :attr:`entered` (a double click is the other way).

    Not :attr:`activated`: on some platforms a single click activates, and a click
    that only selects must not leave the tab.
    """

    entered = Signal(QModelIndex)

    @override
    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.currentIndex().isValid():
            self.entered.emit(self.currentIndex())
            return
        super().keyPressEvent(event)


def _table(table: QTableView, model: Any, widths: tuple[int, ...]) -> QTableView:
    table.setModel(model)
    table.setAlternatingRowColors(True)
    table.setWordWrap(False)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.verticalHeader().hide()
    table.verticalHeader().setDefaultSectionSize(22)
    header = table.horizontalHeader()
    header.setStretchLastSection(True)
    for col, width in enumerate(widths):
        header.resizeSection(col, width)
    return table


class AuditView(QWidget):
    """Picker, scores and items of the loss audit of a session's compactions.

    Signals
    -------
    entry_activated(str)
        An item was double-clicked or entered: the id of the first entry it came from.
    audited(object)
        An :class:`AuditOutcome` was shown (the audit finished, or said why it cannot run).
    """

    entry_activated = Signal(str)
    audited = Signal(object)

    def __init__(self, parent: QWidget | None = None, runner: JobRunner | None = None) -> None:
        super().__init__(parent)
        self._session: Session | None = None
        self._runner = runner if runner is not None else default_runner()
        self._key = view_key(self, self._runner, "loss-audit")
        self.outcome: AuditOutcome | None = None
        self._stale = False  # a request waits for the view to show
        self._build()
        self.compaction_combo.currentIndexChanged.connect(self._on_request_changed)
        self.compare_check.toggled.connect(self._on_request_changed)
        self.status_combo.currentIndexChanged.connect(self._on_status_filter)
        self.text_edit.textChanged.connect(self.proxy.set_text)
        self.items_table.doubleClicked.connect(self._on_activated)
        self.items_table.entered.connect(self._on_activated)
        self.set_session(None)

    # -- building -----------------------------------------------------------------------------

    def _build(self) -> None:
        self.compaction_combo = QComboBox()
        self.compaction_combo.setToolTip(
            "The compaction to audit (newest first), or the next cut memlens would plan"
        )
        self.compaction_combo.setMinimumContentsLength(28)
        self.compaction_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        pick_label = QLabel("&Compaction:")
        pick_label.setBuddy(self.compaction_combo)
        self.compare_check = QCheckBox("Compare with &memlens's offline summary of the same cut")
        self.compare_check.setToolTip(
            "Also summarise the very messages this compaction summarised with memlens's "
            "offline summariser, and audit both: the scores show side by side"
        )
        self.progress = QProgressBar(textVisible=False)
        self.progress.setRange(0, 0)
        self.progress.setMaximumWidth(90)
        self.progress.setMaximumHeight(14)
        self.progress.hide()
        self.state_label = QLabel()
        self.state_label.setEnabled(False)  # the muted colour of the palette
        top = QHBoxLayout()
        top.addWidget(pick_label)
        top.addWidget(self.compaction_combo, 1)
        top.addWidget(self.compare_check)
        top.addWidget(self.progress)
        top.addWidget(self.state_label)
        self.headline = QLabel(wordWrap=True)
        self.headline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message_label = QLabel(wordWrap=True)
        self.message_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message_label.hide()

        self.score_model = ScoreModel(SCORE_COLUMNS, self)
        self.score_table = _table(QTableView(), self.score_model, (92, *([58] * 12)))
        self.score_table.setToolTip(
            "Items per category and what the summary made of them; loss = (missing + lost) "
            "/ items. The memlens columns are memlens's offline summary of the same cut."
        )
        self.score_table.setAccessibleName("Loss per category")
        self.score_table.horizontalHeader().setStretchLastSection(False)

        self.status_combo = QComboBox()
        for label, statuses in STATUS_FILTERS:
            self.status_combo.addItem(label, statuses)
        self.status_combo.setToolTip("Which items the table shows")
        status_label = QLabel("S&tatus:")
        status_label.setBuddy(self.status_combo)
        self.text_edit = QLineEdit()
        self.text_edit.setPlaceholderText("Filter items by text, category or entry id")
        self.text_edit.setClearButtonEnabled(True)
        text_label = QLabel("Te&xt:")
        text_label.setBuddy(self.text_edit)
        self.count_label = QLabel()
        self.count_label.setEnabled(False)
        filters = QHBoxLayout()
        filters.addWidget(status_label)
        filters.addWidget(self.status_combo)
        filters.addWidget(text_label)
        filters.addWidget(self.text_edit, 1)
        filters.addWidget(self.count_label)

        self.items_model = ItemModel(ITEM_COLUMNS, self)
        self.proxy = ItemFilter(self)
        self.proxy.setSourceModel(self.items_model)
        self.items_table = _ItemTable()
        _table(self.items_table, self.proxy, ITEM_WIDTHS)
        self.items_table.setSortingEnabled(True)
        self.items_table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.items_table.setToolTip(
            "Every item of the summarised messages; double-click or Enter shows the entry "
            "it came from"
        )
        self.items_table.setAccessibleName("Audit items")
        items_box = QWidget()
        lay = QVBoxLayout(items_box)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(3)
        lay.addLayout(filters)
        lay.addWidget(self.items_table, 1)
        self.splitter = QSplitter(Qt.Orientation.Vertical, childrenCollapsible=False)
        self.splitter.addWidget(self.score_table)
        self.splitter.addWidget(items_box)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 3)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(3)
        layout.addLayout(top)
        layout.addWidget(self.headline)
        layout.addWidget(self.message_label)
        layout.addWidget(self.splitter, 1)
        QWidget.setTabOrder(self.compaction_combo, self.compare_check)
        QWidget.setTabOrder(self.compare_check, self.status_combo)
        QWidget.setTabOrder(self.status_combo, self.text_edit)
        QWidget.setTabOrder(self.text_edit, self.items_table)
        QWidget.setTabOrder(self.items_table, self.score_table)

    # -- the session --------------------------------------------------------------------------

    def set_session(self, session: Session | None) -> None:
        """Audit *session* (None: nothing); its newest compaction is picked."""
        self._session = session
        with _Blocked(self.compaction_combo):
            self.compaction_combo.clear()
            if session is not None:
                comps = session.compaction_entries()
                for n, entry in reversed(list(enumerate(comps, 1))):
                    tokens = entry.raw.get("tokensBefore")
                    size = f"{int(tokens):,} tokens" if isinstance(tokens, int | float) else "?"
                    self.compaction_combo.addItem(f"#{n} · {entry.id} · {size} before", entry.id)
                self.compaction_combo.addItem(
                    "The next cut memlens would plan (memlens's offline summary)", NEXT_CUT
                )
        self.compaction_combo.setEnabled(session is not None)
        self._show(None)
        if session is None:
            self._runner.cancel(self._key)
            self._busy(False)
            self._say("No session selected.")
            return
        if not session.compaction_entries():
            self._say(
                "This session has no compaction: the audit below is of memlens's offline "
                "summary of the next cut it would plan (a dry run, nothing is written)."
            )
        self.run()

    def current_request(self) -> AuditRequest | None:
        """What the picker and the checkbox ask for (None without a session)."""
        if self._session is None or self.compaction_combo.count() == 0:
            return None
        at = self.compaction_combo.currentData()
        return AuditRequest(str(at or NEXT_CUT), self.compare_check.isChecked())

    def run(self) -> None:
        """Audit what the picker names, in the job runner (a newer run replaces this one).

        A hidden view audits when it shows: selecting sessions never queues audits
        nobody looks at.
        """
        request, session = self.current_request(), self._session
        if request is None or session is None:
            return
        self.compare_check.setEnabled(request.at != NEXT_CUT)
        if not self.isVisible():
            self._stale = True
            self._runner.cancel(self._key)
            self._busy(False)
            return
        self._stale = False

        def job(*, progress: Callable[[int, int, str], None], cancelled: Callable[[], bool]) -> Any:
            progress(0, 1, "auditing")
            outcome = run_audit(session, request)
            if cancelled():
                raise Cancelled
            return outcome

        self._busy(True)
        self._runner.submit(
            "Loss audit",
            job,
            key=self._key,
            done=self._on_done,
            failed=self._on_failed,
            cancelled=lambda: self._busy(False),
        )

    def busy(self) -> bool:
        """Whether an audit is running."""
        return self._runner.busy(self._key)

    # -- results ------------------------------------------------------------------------------

    def _on_request_changed(self, *_: object) -> None:
        self.run()

    def _on_done(self, outcome: AuditOutcome) -> None:
        self._busy(False)
        self._show(outcome)
        self.audited.emit(outcome)

    def _on_failed(self, message: str) -> None:
        self._busy(False)
        self._show(None)
        self._say(f"The audit failed: {message}")

    def _busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.state_label.setText("Auditing…" if busy else "")

    def _say(self, text: str) -> None:
        self.message_label.setText(text)
        self.message_label.setVisible(bool(text))

    def _show(self, outcome: AuditOutcome | None) -> None:
        self.outcome = outcome
        primary = outcome.primary if outcome is not None else None
        other = outcome.other if outcome is not None else None
        self.items_model.dark = _dark(self.palette())
        if outcome is not None and outcome.error:
            self._say(f"Cannot audit: {outcome.error}")
        elif outcome is not None and outcome.other_error:
            self._say(f"memlens's summary of the same cut cannot be audited: {outcome.other_error}")
        elif outcome is not None and primary is not None and primary.notes:
            self._say("\n".join(primary.notes + (other.notes if other else [])))
        elif outcome is not None and other is not None and other.notes:
            self._say("\n".join(other.notes))
        elif outcome is not None and self._session and self._session.compaction_entries():
            self._say("")
        self.headline.setText(_headline(primary, other))
        first = "agent" if primary is None or primary.summariser == "agent" else "memlens"
        self.score_model.names = (first, "memlens")
        self.score_model.set_records(_score_rows(primary, other))
        header = self.score_table.horizontalHeader()
        for col in range(7, len(SCORE_COLUMNS)):
            header.setSectionHidden(col, other is None)
        self.items_table.setColumnHidden(1, other is None)
        self.items_model.set_records(_item_rows(primary, other))
        self._update_count()
        self._fit_scores()

    def _fit_scores(self) -> None:
        rows = self.score_model.rowCount()
        height = 22 * max(rows, 1) + self.score_table.horizontalHeader().sizeHint().height() + 4
        self.score_table.setMaximumHeight(height)

    def _on_status_filter(self, _index: int) -> None:
        statuses = self.status_combo.currentData()
        self.proxy.set_statuses(tuple(statuses or ()))
        self._update_count()

    def _update_count(self) -> None:
        shown, total = self.proxy.rowCount(), self.items_model.rowCount()
        self.count_label.setText(f"{shown:,} of {total:,}" if shown != total else f"{total:,}")

    def _on_activated(self, index: QModelIndex) -> None:
        row = index.data(RecordRole)
        if isinstance(row, ItemRow) and row.item.source:
            self.entry_activated.emit(row.item.source[0])

    @override
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self.run()

    @override
    def changeEvent(self, event: Any) -> None:
        super().changeEvent(event)
        if event.type() == event.Type.PaletteChange:
            self.items_model.dark = _dark(self.palette())


class _Blocked:
    """Signals of a widget blocked for a ``with`` block."""

    def __init__(self, widget: QWidget) -> None:
        self._widget = widget

    def __enter__(self) -> None:
        self._widget.blockSignals(True)

    def __exit__(self, *_: object) -> None:
        self._widget.blockSignals(False)


def _describe(audit: LossAudit) -> str:
    if audit.summariser == "agent":
        return f"Compaction #{audit.number} ({audit.entry_id})"
    if audit.entry_id is not None:
        return f"memlens's offline summary of the cut of {audit.entry_id}"
    return "memlens's offline summary of the next cut (dry run)"


def _headline(primary: LossAudit | None, other: LossAudit | None) -> str:
    if primary is None:
        return ""
    total = score(primary.items)
    lost = len(primary.lost())
    text = (
        f"<b>{_describe(primary)}</b>: summarised {primary.summarised_messages:,} message(s) "
        f"(~{primary.summarised_tokens:,} tokens) into {len(primary.summary):,} chars; kept "
        f"{primary.kept_messages:,} from {primary.first_kept_entry_id or '?'}. "
        f"{total.items:,} items, loss {100 * total.loss:.0f}%"
    )
    color = STATUS_COLORS["lost"][0]
    text += (
        f", <b style='color:{color}'>{lost:,} lost for good</b>" if lost else ", none lost for good"
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


def _score_rows(primary: LossAudit | None, other: LossAudit | None) -> list[ScoreRow]:
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


def _item_rows(primary: LossAudit | None, other: LossAudit | None) -> list[ItemRow]:
    if primary is None:
        return []
    if other is None:
        return [ItemRow(i) for i in primary.items]
    theirs = {(i.category, i.text): i.status for i in other.items}
    return [ItemRow(i, theirs.get((i.category, i.text), "—")) for i in primary.items]
