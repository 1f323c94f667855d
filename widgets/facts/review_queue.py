"""Review queue: accept, edit or reject the fact operations that extraction proposed.

:class:`ReviewQueue` is handed :class:`core.knowledge.review.ReviewItem` objects (or the
:class:`~core.recall.updater.ProposedOperation` list of an extraction) with the
:class:`~core.store.knowledge.KnowledgeLog` they were proposed against and the
app's :data:`~core.io.writes.Confirm`. It shows one row per proposal (op, proposed
content, type, the fact it was compared against, similarity, reason, state) and,
for the current row, the proposal and the facts it was compared against side by
side. "Write accepted" plans the exact lines, asks *confirm*, and only then appends
the accepted operations; targets that changed meanwhile are reported, not written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QAction, QKeySequence, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableView,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from core.knowledge.review import (
    KnowledgeFileChanged,
    ReviewItem,
    apply_review,
    catch_up,
    counts,
    plan_review,
    review_items,
)
from widgets.common.record_model import SortRole
from widgets.facts.review_edit import ReviewEditDialog
from widgets.facts.review_model import (
    OP_COLORS,
    PROPOSED_COL,
    ReviewTableModel,
    compared_html,
    proposed_html,
)
from widgets.facts.split import TableFirstSplitter, button_bar

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from core.io.writes import Confirm
    from core.knowledge.review import ReviewResult
    from core.recall.updater import ProposedOperation
    from core.store.knowledge import KnowledgeLog

COLUMN_WIDTHS = (48, 96, 340, 104, 260, 74, 300)


class ReviewQueue(QWidget):
    """The proposals of knowledge extraction and the updater, to accept, edit or reject.

    Signals
    -------
    written(list)
        After a write: the :class:`~core.knowledge.review.ReviewResult` of every operation
        written (the app refreshes its fact views and records the activity).
    queue_changed(int)
        The number of pending proposals, whenever a decision or the items change.
    """

    written = Signal(list)
    queue_changed = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._log: KnowledgeLog | None = None
        self._confirm: Confirm | None = None
        self.edit_dialog: ReviewEditDialog | None = None
        self._build()
        self._make_actions()
        self.set_items([], None, None)

    # -- building -----------------------------------------------------------------------------

    def _build(self) -> None:
        self.model = ReviewTableModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SortRole)
        self.table = QTableView()
        self.table.setSortingEnabled(True)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setModel(self.proxy)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(PROPOSED_COL, QHeaderView.ResizeMode.Interactive)
        for col, width in enumerate(COLUMN_WIDTHS):
            header.resizeSection(col, width)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.table.selectionModel().currentRowChanged.connect(self._on_current_row_changed)
        self.table.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self.table.doubleClicked.connect(self._on_double_clicked)

        self.proposed_view = QTextBrowser(openLinks=False)
        self.compared_view = QTextBrowser(openLinks=False)
        self.proposed_title = QLabel("<b>Proposed</b>")
        self.compared_title = QLabel("<b>Compared against</b>")
        detail = QSplitter(Qt.Orientation.Horizontal)
        for title, view in (
            (self.proposed_title, self.proposed_view),
            (self.compared_title, self.compared_view),
        ):
            pane = QWidget()
            box = QVBoxLayout(pane)
            box.setContentsMargins(0, 2, 0, 0)
            box.setSpacing(2)
            box.addWidget(title)
            box.addWidget(view)
            detail.addWidget(pane)
        detail.setSizes([500, 500])

        self.buttons: dict[str, QToolButton] = {}
        bar = QHBoxLayout()
        # The decision buttons never widen the page: what does not fit is behind "»".
        self.decide_bar = button_bar("Review decisions")
        for name in ("accept", "reject", "edit", "reset", "|", "accept_all", "reject_all"):
            if name == "|":
                self.decide_bar.addSeparator()
                continue
            self.buttons[name] = QToolButton(autoRaise=False)
            self.decide_bar.addWidget(self.buttons[name])
        bar.addWidget(self.decide_bar)
        bar.addStretch(1)
        self.counts_label = QLabel()
        bar.addWidget(self.counts_label)
        bar.addSpacing(12)
        self.buttons["write"] = QToolButton()
        bar.addWidget(self.buttons["write"])

        self.status_label = QLabel(wordWrap=True)
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # The table first (eight rows on a laptop's short tab page), the comparison below.
        self.splitter = TableFirstSplitter(self.table, detail)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 2)
        layout.setSpacing(4)
        layout.addLayout(bar)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.status_label)

    def _make_actions(self) -> None:
        def action(
            name: str,
            text: str,
            keys: Sequence[QKeySequence | str],
            tip: str,
            slot: Callable[[], object],
        ) -> QAction:
            act = QAction(text, self)
            act.setShortcuts([QKeySequence(k) for k in keys])
            act.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shown = ", ".join(
                QKeySequence(k).toString(QKeySequence.SequenceFormat.NativeText) for k in keys
            )
            act.setToolTip(f"{tip} ({shown})")
            act.triggered.connect(slot)
            self.addAction(act)
            self.buttons[name].setDefaultAction(act)
            return act

        self.accept_action = action(
            "accept",
            "&Accept",
            ["A", "Ctrl+Return", "Ctrl+Enter"],
            "Accept the selected proposals",
            self.accept_selected,
        )
        self.reject_action = action(
            "reject",
            "&Reject",
            ["R", QKeySequence(QKeySequence.StandardKey.Delete)],
            "Reject the selected proposals",
            self.reject_selected,
        )
        self.edit_action = action(
            "edit",
            "&Edit…",
            ["E", "F2"],
            "Edit the content and type of the proposed fact, then accept it",
            self.edit_current,
        )
        self.reset_action = action(
            "reset",
            "&Undecide",
            ["U"],
            "Make the selected proposals pending again (drops edits)",
            self.reset_selected,
        )
        self.accept_all_action = action(
            "accept_all",
            "Accept A&ll",
            ["Ctrl+Shift+A"],
            "Accept every pending proposal",
            self.accept_all,
        )
        self.reject_all_action = action(
            "reject_all",
            "Reject All",
            ["Ctrl+Shift+R"],
            "Reject every pending proposal",
            self.reject_all,
        )
        self.write_action = action(
            "write",
            "&Write Accepted…",
            [QKeySequence(QKeySequence.StandardKey.Save)],
            "Show what will be appended to knowledge.jsonl, then write the accepted operations",
            self.write_accepted,
        )
        for act in self.actions():
            self.table.addAction(act)
        self.buttons["write"].setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        font = self.buttons["write"].font()
        font.setBold(True)
        self.buttons["write"].setFont(font)

    # -- public API ---------------------------------------------------------------------------

    def set_items(
        self, items: Iterable[ReviewItem], log: KnowledgeLog | None, confirm: Confirm | None
    ) -> None:
        """Show *items* (proposed against *log*); *confirm* is asked before any write.

        With no *log* or no *confirm* nothing can be written.
        """
        self._log = log
        self._confirm = confirm
        self.model.set_records(list(items))
        self.status_label.clear()
        self._after_change()
        if self.model.rowCount():
            self._select_proxy_row(0)
        else:
            self._show_detail(None)

    def set_confirm(self, confirm: Confirm | None) -> None:
        """The callback asked before any write (None: writes are refused)."""
        self._confirm = confirm

    def add_items(self, items: Iterable[ReviewItem]) -> None:
        """Append more proposals (their keys must be new to the queue)."""
        new = [i for i in items if self.model.row_of(i.key) < 0]
        if not new:
            return
        self.model.append_records(new)
        if self._current_row() < 0:
            self._select_proxy_row(0)
        self._after_change()

    def add_proposals(
        self,
        operations: Sequence[ProposedOperation],
        *,
        source: str = "",
        provenance: Mapping[str, dict[str, Any]] | None = None,
    ) -> None:
        """Queue the operations of one ``propose`` call (e.g. an extraction's).

        *provenance* (a compaction run's ``fact_sources``) is written with the facts
        accepted (see :func:`core.knowledge.review.review_items`).
        """
        if self._log is None:
            raise ValueError("set_items() with the knowledge log first")
        self.add_items(review_items(operations, self._log, source=source, provenance=provenance))

    def items(self) -> list[ReviewItem]:
        """Every item, in queue order."""
        return self.model.records()

    def log(self) -> KnowledgeLog | None:
        """The knowledge log written to."""
        return self._log

    def pending_count(self) -> int:
        """How many proposals are still undecided."""
        return counts(self.items())["pending"]

    def selected_rows(self) -> list[int]:
        """Model rows of the selected proposals, in queue order."""
        rows = {self.proxy.mapToSource(i).row() for i in self.table.selectionModel().selectedRows()}
        return sorted(rows)

    def accept_selected(self) -> None:
        """Accept the selected proposals and move to the next pending one."""
        self._decide(self.selected_rows(), ReviewItem.accepted)

    def reject_selected(self) -> None:
        """Reject the selected proposals and move to the next pending one."""
        self._decide(self.selected_rows(), ReviewItem.rejected)

    def reset_selected(self) -> None:
        """Make the selected proposals pending again (without their edits)."""
        self._decide(self.selected_rows(), ReviewItem.reset, advance=False)

    def accept_all(self) -> None:
        """Accept every pending proposal."""
        rows = [r for r, it in enumerate(self.items()) if it.state == "pending"]
        self._decide(rows, ReviewItem.accepted, advance=False)

    def reject_all(self) -> None:
        """Reject every pending proposal."""
        rows = [r for r, it in enumerate(self.items()) if it.state == "pending"]
        self._decide(rows, ReviewItem.rejected, advance=False)

    def edit_current(self) -> ReviewEditDialog | None:
        """Open the editor for the current proposal (not modal to the app; returns it)."""
        row = self._current_row()
        if row < 0:
            return None
        item = self.model.record(row)
        if not item.editable:
            self.status_label.setText(f"A {item.op} proposal has nothing to edit.")
            return None
        dialog = ReviewEditDialog(
            item, redaction=self._log.redaction if self._log else True, parent=self
        )
        dialog.accepted.connect(lambda: self._on_edit_accepted(dialog))
        dialog.finished.connect(dialog.deleteLater)
        self.edit_dialog = dialog
        dialog.open()
        return dialog

    def write_accepted(self) -> list[ReviewResult]:
        """Plan, confirm and append the accepted operations; returns what was written."""
        log = self._log
        if log is None or self._confirm is None:
            self.status_label.setText(
                "Nothing can be written here: no knowledge log or no confirm."
            )
            return []
        try:
            catch_up(log)  # the plan must see what the agent wrote meanwhile
            at = log.clock()
            planned = plan_review(self.items(), log, at=at)
        except (KnowledgeFileChanged, OSError) as exc:
            self.status_label.setText(f"Not written: {exc}")
            return []
        if not planned.writes:
            self._settle(planned.results, written=[])
            if not planned.results:
                self.status_label.setText("Nothing to write: no accepted proposal writes a line.")
            return []
        if not self._confirm(list(planned.writes)):
            self.status_label.setText("Write cancelled: nothing was written.")
            return []
        try:
            results = apply_review(self.items(), log, at=at)
        except KnowledgeFileChanged as exc:
            self.status_label.setText(f"Not written: {exc}")
            return []
        done = [r for r in results if r.outcome == "written"]
        self._settle(results, written=done)
        if done:
            self.written.emit(done)
        return done

    # -- decisions ----------------------------------------------------------------------------

    def _decide(
        self, rows: Sequence[int], change: Callable[[ReviewItem], ReviewItem], advance: bool = True
    ) -> None:
        if not rows:
            return
        for row in rows:
            self.model.set_record(row, change(self.model.record(row)))
        if advance and len(rows) == 1:
            self._advance_from(rows[0])
        self._after_change()

    def _advance_from(self, row: int) -> None:
        """Select the next pending proposal below *row* in the view (if any)."""
        start = self.proxy.mapFromSource(self.model.index(row, 0)).row()
        for r in range(start + 1, self.proxy.rowCount()):
            item = self.model.record(self.proxy.mapToSource(self.proxy.index(r, 0)).row())
            if item.state == "pending":
                self._select_proxy_row(r)
                return

    def _settle(self, results: Sequence[ReviewResult], written: Sequence[ReviewResult]) -> None:
        """After a write: written and decided items leave, the ones not written say why."""
        notes = {r.item.key: r.message for r in results if r.outcome != "written"}
        gone = {r.item.key for r in written}
        keep = []
        dismissed = 0
        for item in self.items():
            if item.key in notes:
                keep.append(item.reopened(notes[item.key]))
            elif item.key in gone:
                continue
            elif item.state == "rejected" or (item.is_accepted and not item.will_write):
                dismissed += 1
            else:
                keep.append(item)
        self.model.set_records(keep)
        lines = sum(len(r.lines) for r in written)
        bits = []
        if written:
            bits.append(
                f"Appended {lines} line(s) for {len(written)} operation(s) to "
                f"{self._log.path if self._log else 'knowledge.jsonl'}."
            )
        if dismissed:
            bits.append(f"{dismissed} decided proposal(s) without a write cleared.")
        if notes:
            bits.append(
                f"{len(notes)} accepted proposal(s) not written — see ⚠ in the State column."
            )
        self.status_label.setText(" ".join(bits))
        self._after_change()
        if self.model.rowCount():
            self._select_proxy_row(0)
        else:
            self._show_detail(None)

    def _after_change(self) -> None:
        c = counts(self.items())
        writes = sum(1 for it in self.items() if it.will_write)
        self.counts_label.setText(
            f"{c['pending']} pending · {c['accepted'] + c['edited']} accepted"
            f" ({writes} to write) · {c['rejected']} rejected"
        )
        can_write = self._log is not None and self._confirm is not None and writes > 0
        self.write_action.setEnabled(can_write or bool(c["rejected"]))
        has_pending = c["pending"] > 0
        self.accept_all_action.setEnabled(has_pending)
        self.reject_all_action.setEnabled(has_pending)
        self._on_selection_changed()
        row = self._current_row()
        self._show_detail(self.model.record(row) if row >= 0 else None)
        self.queue_changed.emit(c["pending"])

    @override
    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            row = self._current_row()
            self._show_detail(self.model.record(row) if row >= 0 else None)

    # -- selection and detail -----------------------------------------------------------------

    def _current_row(self) -> int:
        cur = self.table.currentIndex()
        return self.proxy.mapToSource(cur).row() if cur.isValid() else -1

    def _select_proxy_row(self, row: int) -> None:
        index = self.proxy.index(row, 0)
        flags = (
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows
        )
        self.table.selectionModel().setCurrentIndex(index, flags)
        self.table.scrollTo(index)

    def _on_current_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        row = self.proxy.mapToSource(current).row() if current.isValid() else -1
        self._show_detail(self.model.record(row) if row >= 0 else None)

    def _on_selection_changed(self, *_args: object) -> None:
        selected = bool(self.table.selectionModel().selectedRows())
        for act in (self.accept_action, self.reject_action, self.reset_action):
            act.setEnabled(selected)
        row = self._current_row()
        self.edit_action.setEnabled(row >= 0 and self.model.record(row).editable)

    def _on_double_clicked(self, _index: QModelIndex) -> None:
        self.edit_current()

    def _on_edit_accepted(self, dialog: ReviewEditDialog) -> None:
        if dialog.result_item is None:
            return
        row = self.model.row_of(dialog.item.key)
        if row >= 0:
            self._decide([row], lambda _old: dialog.result_item or _old, advance=False)
        self.edit_dialog = None

    def _show_detail(self, item: ReviewItem | None) -> None:
        if item is None:
            self.proposed_title.setText("<b>Proposed</b>")
            self.compared_title.setText("<b>Compared against</b>")
            self.proposed_view.setHtml(
                "<p>Select a proposal to see it beside the facts it was compared with.</p>"
            )
            self.compared_view.clear()
            return
        pal = self.palette()
        dark = pal.color(QPalette.ColorRole.Base).lightness() < 128
        # Words only the proposal has / only the matched fact has, readable in both schemes.
        added = "background-color:#1f4d3a; color:#e6f6ee" if dark else "background-color:#c8f0dc"
        removed = "background-color:#5c2a1f; color:#fbe9e3" if dark else "background-color:#fbd9cc"
        muted = pal.color(QPalette.ColorRole.PlaceholderText).name()
        self.proposed_title.setText(
            f'<b>Proposed</b> <span style="color:{OP_COLORS[item.op]}">{item.op}</span>'
            f" · {item.label}"
        )
        n = len(item.compared)
        self.compared_title.setText(f"<b>Compared against</b> · {n} fact(s)")
        self.proposed_view.setHtml(proposed_html(item, added, muted))
        self.compared_view.setHtml(compared_html(item, removed, muted))
