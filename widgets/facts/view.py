"""Knowledge facts: a filterable table of every fact, its detail, and edits that only append.

:class:`FactsView` is attached to a :class:`~core.store.knowledge.KnowledgeLog`
(:meth:`FactsView.attach`) with the app's :data:`~core.io.writes.Confirm` and,
optionally, a ``sources(content)`` callable that searches the warm store and the
transcripts (:func:`core.knowledge.sources.fact_sources`). It shows one row per fact
(type, content, context, time, status) with type, status and text filters, and
for the current fact its history, its supersession chain and its likely sources
(searched in a worker, and only while the view is shown: a hidden tab searches
when it is shown again), and its provenance when the app gave
:meth:`FactsView.set_provenance_source` (traced in a worker too; its messages and
compactions are emitted as :attr:`FactsView.message_requested` and
:attr:`FactsView.compaction_requested` for the app to go to).

Edits (:mod:`widgets.facts.editing`) plan the exact lines, ask *confirm*, append,
and refresh the table from the log keeping the selection and scroll position.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import (
    QEvent,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from core.store.knowledge import FACT_TYPES
from widgets.common.jobs import default_runner
from widgets.common.view_jobs import view_key, wait_idle
from widgets.facts.detail import SOURCES_TAB, FactDetail
from widgets.facts.editing import FactEditing
from widgets.facts.host import FactsHost
from widgets.facts.model import (
    COLUMNS,
    CONTEXT_COL,
    STATUSES,
    TIME_COL,
    FactFilterProxy,
    FactTableModel,
)
from widgets.facts.split import TableFirstSplitter, button_bar

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from PySide6.QtGui import QShowEvent

    from core.io.writes import Confirm
    from core.knowledge.provenance import Provenance
    from core.knowledge.sources import SourceHit
    from core.store.knowledge import Fact, KnowledgeLog
    from widgets.common.jobs import JobRunner

SOURCES_DELAY_MS = 150
PLAIN = (Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.KeypadModifier)


class FactsView(FactsHost):
    """Every fact of a knowledge log, filterable, with its detail and append-only edits.

    Signals
    -------
    written(list)
        After every write (an edit, a bulk action, an undo or redo): the
        :class:`core.knowledge.ops.Applied` records written (path, line numbers,
        byte offsets, records), for the activity log.
    failed(str)
        A write was refused or failed (the message is also shown in the view).
    current_fact_changed(str)
        The id of the fact now current ("" when none).
    sources_ready(list)
        The likely sources of the current fact were found (list of SourceHit).
    provenance_ready(object)
        The current fact's :class:`~core.knowledge.provenance.Provenance` was traced.
    message_requested(str, str)
        A source message was activated in the Provenance tab: session id, entry id.
    compaction_requested(str, str, int)
        A compaction (and a summary line, 0: none) was activated there.
    """

    current_fact_changed = Signal(str)
    sources_ready = Signal(list)
    provenance_ready = Signal(object)
    message_requested = Signal(str, str)
    compaction_requested = Signal(str, str, int)

    def __init__(self, parent: QWidget | None = None, runner: JobRunner | None = None) -> None:
        super().__init__(parent)
        self._log: KnowledgeLog | None = None
        self._sources: Callable[[str], list[SourceHit]] | None = None
        self._runner = runner if runner is not None else default_runner()
        # One search at a time: a newer one drops whatever an older one still delivers.
        self._sources_key = view_key(self, self._runner, "facts-sources")
        self._provenance_key = view_key(self, self._runner, "facts-provenance")
        self._provenance: Callable[[Fact], Callable[[], Provenance]] | None = None
        self._sources_pending = False  # a search waits for the view to be shown
        self._sources_timer = QTimer(self, singleShot=True, interval=SOURCES_DELAY_MS)
        self._sources_timer.timeout.connect(self._on_sources_timer_timeout)
        self._build()
        self.editing = FactEditing(self)
        self.undo_stack = self.editing.undo_stack
        self._build_bar()
        self._update_counts()

    # -- building -----------------------------------------------------------------------------
    def _build(self) -> None:
        self.model = FactTableModel(self)
        self.proxy = FactFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for col, column in enumerate(COLUMNS):
            header.resizeSection(col, column.width)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self._context_width = COLUMNS[CONTEXT_COL].width
        self.table.sortByColumn(TIME_COL, Qt.SortOrder.DescendingOrder)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.table.installEventFilter(self)
        self.table.doubleClicked.connect(self._on_table_double_clicked)
        selection = self.table.selectionModel()
        selection.currentRowChanged.connect(self._on_current_row_changed)
        selection.selectionChanged.connect(self._on_selection_changed)
        self.proxy.rowsInserted.connect(self._update_counts)
        self.proxy.rowsRemoved.connect(self._update_counts)
        self.proxy.modelReset.connect(self._update_counts)
        self.proxy.layoutChanged.connect(self._update_counts)

        self.type_combo = QComboBox()
        self.type_combo.setToolTip("Show facts of one type")
        self.type_combo.addItem("All types", None)
        for t in FACT_TYPES:
            self.type_combo.addItem(t, t)
        self.type_combo.currentIndexChanged.connect(self._on_type_combo_changed)
        self.status_combo = QComboBox()
        self.status_combo.setToolTip("Show facts with one status")
        self.status_combo.addItem("All statuses", None)
        for s in STATUSES:
            self.status_combo.addItem(s, s)
        self.status_combo.currentIndexChanged.connect(self._on_status_combo_changed)
        self.filter_edit = QLineEdit()
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setPlaceholderText("Filter: words in content, context or id")
        self.filter_edit.setToolTip("Show facts whose content, context or id hold every word")
        self.filter_edit.textChanged.connect(self.proxy.set_text)
        self.filter_edit.textChanged.connect(self._update_counts)

        self.detail = FactDetail()
        self.detail.fact_activated.connect(self.select_fact)
        self.detail.provenance.message_activated.connect(self.message_requested)
        self.detail.provenance.compaction_activated.connect(self.compaction_requested)
        # The table first (eight rows on a laptop's short tab page), the detail below.
        self.splitter = TableFirstSplitter(self.table, self.detail)
        self.counts_label = QLabel()
        self.status_label = QLabel(wordWrap=True)
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

    def _build_bar(self) -> None:
        """Filters and edit buttons in one row; the counts beside the status line below."""
        bar = QHBoxLayout()
        bar.setSpacing(4)
        for label, widget in (("&Type", self.type_combo), ("St&atus", self.status_combo)):
            lab = QLabel(label)
            lab.setBuddy(widget)
            bar.addWidget(lab)
            bar.addWidget(widget)
        self.filter_edit.setMinimumWidth(120)
        bar.addWidget(self.filter_edit, 1)
        bar.addSpacing(8)
        ed = self.editing
        self.edit_bar = button_bar("Fact edits")
        for act in (
            ed.new_action,
            ed.edit_action,
            ed.supersede_action,
            ed.delete_action,
            ed.restore_action,
            None,
            ed.undo_action,
            ed.redo_action,
        ):
            if act is None:
                self.edit_bar.addSeparator()
            else:
                self.edit_bar.addAction(act)
        bar.addWidget(self.edit_bar)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status_label, 1)
        bottom.addWidget(
            self.counts_label, 0, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 2)
        layout.setSpacing(4)
        layout.addLayout(bar)
        layout.addWidget(self.splitter, 1)
        layout.addLayout(bottom)

    # -- public API ---------------------------------------------------------------------------
    def attach(
        self,
        log: KnowledgeLog | None,
        confirm: Confirm | None,
        sources: Callable[[str], list[SourceHit]] | None = None,
    ) -> None:
        """Show *log*; *confirm* is asked before every write; *sources* finds likely sources.

        A new log clears the undo stack (its commands belong to the old one) and
        the selection: fact ids of another log are never looked up in this one.
        """
        if log is not self._log:
            self.undo_stack.clear()
        # The old selection goes first, then the rows, and only then the log the
        # actions look the selected ids up in: no id of the old log reaches the new.
        self.table.selectionModel().clear()
        self.model.set_log(log)
        self._log = log
        self._sources = sources
        self.editing.set_target(log, confirm)
        self._add_unknown_types()
        self.status_label.clear()
        if self.proxy.rowCount():
            self._select_proxy_rows([0])
        else:
            self._show_current()
        self._update_counts()

    def detach(self) -> None:
        """Show nothing and write nothing."""
        self.attach(None, None)

    def log(self) -> KnowledgeLog | None:
        """The log shown."""
        return self._log

    @override
    def refresh(self) -> list[str]:
        """Update the table from the log (after live appends); returns the ids that changed.

        The selection, the current fact and the scroll position are kept.
        """
        selected, current = self.selected_ids(), self.current_id()
        bar = self.table.verticalScrollBar()
        scroll = bar.value()
        reset = [False]

        def on_reset() -> None:
            reset[0] = True

        self.model.modelReset.connect(on_reset)
        try:
            self._add_unknown_types()
            changed = self.model.refresh()
        finally:
            self.model.modelReset.disconnect(on_reset)
        if reset[0]:
            self.select_ids(selected, current)
            bar.setValue(scroll)
        if current and (current in changed or reset[0]):
            self._show_current()
        self._update_counts()
        self.editing.update_actions()
        return changed

    def current_id(self) -> str:
        """The id of the current fact ("" when none)."""
        fact = self.current_fact()
        return fact.id if fact is not None else ""

    @override
    def current_fact(self) -> Fact | None:
        """The current fact (as the log has it now), if any."""
        index = self.table.currentIndex()
        if not index.isValid():
            return None
        return self.model.fact(self.proxy.mapToSource(index).row())

    def selected_ids(self) -> list[str]:
        """Ids of the selected facts, in table order."""
        rows = sorted(r.row() for r in self.table.selectionModel().selectedRows())
        return [self._fact_at(r).id for r in rows]

    def _fact_at(self, proxy_row: int) -> Fact:
        return self.model.fact(self.proxy.mapToSource(self.proxy.index(proxy_row, 0)).row())

    @override
    def selected_facts(self) -> list[Fact]:
        """The selected facts (as the log has them now), in table order."""
        log = self._log
        if log is None:
            return []
        facts = log.facts
        return [facts[i] for i in self.selected_ids() if i in facts]

    @override
    def select_fact(self, fact_id: str) -> bool:
        """Make *fact_id* current and selected, clearing filters that hide it."""
        row = self.model.row_of(fact_id)
        if row < 0:
            return False
        if not self.proxy.mapFromSource(self.model.index(row, 0)).isValid():
            self.clear_filters()
        return self.select_ids([fact_id], fact_id)

    def select_ids(self, ids: Iterable[str], current: str | None = None) -> bool:
        """Select the facts *ids* that are shown; *current* (or the first) becomes current."""
        rows = []
        for fid in ids:
            src = self.model.row_of(fid)
            if src >= 0:
                idx = self.proxy.mapFromSource(self.model.index(src, 0))
                if idx.isValid():
                    rows.append(idx.row())
        cur = -1
        if current:
            src = self.model.row_of(current)
            idx = self.proxy.mapFromSource(self.model.index(src, 0)) if src >= 0 else QModelIndex()
            cur = idx.row() if idx.isValid() else -1
        return self._select_proxy_rows(rows, cur)

    def clear_filters(self) -> None:
        """Show every fact."""
        self.type_combo.setCurrentIndex(0)
        self.status_combo.setCurrentIndex(0)
        self.filter_edit.clear()

    def focus_filter(self) -> None:
        """Put the keyboard focus in the text filter (for the app's Find)."""
        self.filter_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.filter_edit.selectAll()

    @override
    def show_message(self, text: str) -> None:
        """Show *text* under the table."""
        self.status_label.setText(text)

    def wait_for_sources(self, msecs: int = 5000) -> bool:
        """Wait for a running sources search and provenance trace to report (tests, shutdown)."""
        return wait_idle(self._runner, self._sources_key, msecs) and wait_idle(
            self._runner, self._provenance_key, msecs
        )

    def set_provenance_source(
        self, trace: Callable[[Fact], Callable[[], Provenance]] | None
    ) -> None:
        """How to trace a fact's provenance (None: the Provenance tab stays empty).

        *trace(fact)* is called on the GUI thread and returns the work to run in a job.
        """
        self._provenance = trace
        self._request_sources()

    # -- selection -------------------------------------------------------------------------
    def _select_proxy_rows(self, rows: list[int], current: int = -1) -> bool:
        sel = self.table.selectionModel()
        if not rows and current < 0:
            sel.clearSelection()
            return False
        flag = QItemSelectionModel.SelectionFlag
        rows_flag = flag.Rows
        selection = QItemSelection()
        for r in rows:
            selection.select(self.proxy.index(r, 0), self.proxy.index(r, 0))
        cur = current if current >= 0 else rows[0]
        sel.setCurrentIndex(self.proxy.index(cur, 0), flag.NoUpdate)
        sel.select(selection, flag.ClearAndSelect | rows_flag)
        if current >= 0 and current not in rows:
            sel.select(self.proxy.index(current, 0), flag.Select | rows_flag)
        self.table.scrollTo(self.proxy.index(cur, 0))
        return True

    def _on_current_row_changed(self, _current: QModelIndex, _previous: QModelIndex) -> None:
        self._show_current()

    def _on_selection_changed(self, *_args: object) -> None:
        self.editing.update_actions()

    def _show_current(self) -> None:
        fact = self.current_fact()
        self.detail.show_fact(self._log, fact.id if fact else None)
        self.editing.update_actions()
        self._request_sources()
        self.current_fact_changed.emit(fact.id if fact else "")

    def _on_table_double_clicked(self, _index: QModelIndex) -> None:
        self.editing.edit_current()

    @override
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._sources_pending:
            self._sources_pending = False
            self._sources_timer.start()

    @override
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.table and event.type() == QEvent.Type.Resize:
            self._fit_context_column()
        if watched is self.table and event.type() == QEvent.Type.KeyPress:
            key = event if isinstance(event, QKeyEvent) else None
            if (
                key is not None
                and key.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
                and key.modifiers()
                in (Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.KeypadModifier)
            ):
                self.editing.edit_current()
                return True
        return super().eventFilter(watched, event)

    def _fit_context_column(self) -> None:
        """A narrow table narrows the Context column, so Content keeps room to read.

        Only while the column has the width memlens gave it: one the user set is kept.
        """
        header = self.table.horizontalHeader()
        if header.sectionSize(CONTEXT_COL) != self._context_width:
            return
        width = self.table.viewport().width() // 5
        self._context_width = max(90, min(COLUMNS[CONTEXT_COL].width, width))
        header.resizeSection(CONTEXT_COL, self._context_width)

    # -- filters and counts -------------------------------------------------------------------
    def _on_type_combo_changed(self, _index: int) -> None:
        self.proxy.set_type(self.type_combo.currentData())
        self._update_counts()

    def _on_status_combo_changed(self, _index: int) -> None:
        self.proxy.set_status(self.status_combo.currentData())
        self._update_counts()

    def _add_unknown_types(self) -> None:
        """Types the agent wrote that memlens does not know still get a filter entry."""
        if self._log is None:
            return
        for t in sorted({f.type for f in self._log.facts.values()} - set(FACT_TYPES)):
            if self.type_combo.findData(t) < 0:
                self.type_combo.addItem(t, t)

    def _update_counts(self, *_args: object) -> None:
        log = self._log
        if log is None:
            self.counts_label.setText("no knowledge log")
            return
        c = log.counts()
        self.counts_label.setText(
            f"{c['active']} active · {c['superseded']} superseded · {c['deleted']} deleted"
            f" · showing {self.proxy.rowCount()}"
        )

    # -- sources ------------------------------------------------------------------------------
    def _request_sources(self) -> None:
        self._runner.cancel(self._sources_key)  # an answer for another fact is dropped
        self._sources_timer.stop()
        self._sources_pending = False
        self._runner.cancel(self._provenance_key)
        fact = self.current_fact()
        if fact is not None and self._provenance is not None:
            self.detail.set_provenance(None, "Tracing where the fact came from…")
        else:
            self.detail.set_provenance(None)
        if fact is None or (self._sources is None and self._provenance is None):
            self.detail.set_sources(None)
            return
        if self._sources is None:
            self.detail.set_sources(None)
        else:
            self.detail.set_sources([], "Searching segments and messages…")
        if self.isVisible():
            self._sources_timer.start()
        else:
            self._sources_pending = True  # searched when the view is shown

    def _on_sources_timer_timeout(self) -> None:
        fact = self.current_fact()
        if fact is None or (self._sources is None and self._provenance is None):
            return
        if not self.isVisible():  # hidden (another tab) since the request: wait for a show
            self._sources_pending = True
            return
        if self._provenance is not None:
            self._runner.submit(
                "fact provenance",
                _as_job(self._provenance(fact)),
                key=self._provenance_key,
                done=self._on_provenance_found,
                failed=lambda message: self.detail.set_provenance(None, f"Failed: {message}"),
            )
        if self._sources is None:
            return
        sources, content = self._sources, fact.content

        # The first search may build an index of every transcript message (hundreds
        # of milliseconds); later ones take milliseconds.
        def search(**_job: object) -> list[SourceHit]:
            return list(sources(content))

        self._runner.submit(
            "fact sources",
            search,
            key=self._sources_key,
            done=self._on_sources_found,
            failed=self._on_sources_failed,
        )

    def _on_sources_found(self, hits: list[SourceHit]) -> None:
        self.detail.set_sources(hits, "" if hits else "No segment or message says much of it.")
        self.sources_ready.emit(hits)

    def _on_provenance_found(self, prov: Provenance) -> None:
        self.detail.set_provenance(prov)
        self.provenance_ready.emit(prov)

    def _on_sources_failed(self, message: str) -> None:
        self.detail.set_sources([], f"Search failed: {message}")

    def show_sources_tab(self) -> None:
        """Bring the likely sources to the front."""
        self.detail.tabs.setCurrentIndex(SOURCES_TAB)


def _as_job(work: Callable[[], Provenance]) -> Callable[..., Provenance]:
    """*work* as a job function (the runner passes progress and cancelled)."""

    def job(**_job: object) -> Provenance:
        return work()

    return job
