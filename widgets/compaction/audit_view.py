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
came from. "Probe with model…" (Ctrl+Shift+P; :class:`~widgets.compaction.probe_view.ProbePane`)
asks the compaction panel's model questions about the audited summary and grades them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QScrollArea,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from core.io.jobs import Cancelled
from widgets.common.jobs import default_runner
from widgets.common.palette import is_dark
from widgets.common.record_model import RecordRole
from widgets.common.tables import table_view
from widgets.common.view_jobs import view_key
from widgets.compaction.actions import add_action
from widgets.compaction.audit_models import (
    ITEM_COLUMNS,
    NEXT_CUT,
    SCORE_COLUMNS,
    STATUS_COLORS,
    STATUS_FILTERS,
    STATUS_TIPS,
    AuditOutcome,
    AuditRequest,
    ItemFilter,
    ItemModel,
    ItemRow,
    ScoreModel,
    headline,
    item_rows,
    run_audit,
    score_rows,
)
from widgets.compaction.elided import ElidedLabel
from widgets.compaction.probe_view import ProbePane
from widgets.compaction.provider import ProviderPicker

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from PySide6.QtGui import QKeyEvent, QShowEvent

    from core.compaction.provider import ProviderChoice
    from core.compaction.settings import CompactionSettings
    from core.transcript.model import Session
    from widgets.common.jobs import JobRunner

ITEM_WIDTHS = (84, 84, 84, 420, 60, 110)


class _ItemTable(QTableView):
    """Enter or Return on the current row emits :attr:`enter_pressed`, as a double click acts.

    Not :attr:`activated`: on some platforms a single click activates, and a click
    that only selects must not leave the tab.
    """

    enter_pressed = Signal(QModelIndex)

    @override
    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.currentIndex().isValid():
            self.enter_pressed.emit(self.currentIndex())
            return
        super().keyPressEvent(event)


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
        self._settings: CompactionSettings | None = None
        self._runner = runner if runner is not None else default_runner()
        self._key = view_key(self, self._runner, "loss-audit")
        self.outcome: AuditOutcome | None = None
        self._stale = False  # a request waits for the view to show
        self._picker: ProviderPicker | None = None
        self._build()
        self.probe_action = add_action(self, "&Probe with Model…", ["Ctrl+Shift+P"], self._on_probe)
        self.probe_pane.probe_button.clicked.connect(self.probe_action.trigger)
        self.compaction_combo.currentIndexChanged.connect(self._on_request_changed)
        self.compare_check.toggled.connect(self._on_request_changed)
        self.status_combo.currentIndexChanged.connect(self._on_status_filter)
        self.text_edit.textChanged.connect(self.proxy.set_text)
        self.items_table.doubleClicked.connect(self._on_activated)
        self.items_table.enter_pressed.connect(self._on_activated)
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
        self.compare_check = QCheckBox("Compare with &memlens's summary of the same cut")
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
        self.lost_label = QLabel()  # how many items are lost for good, at a glance
        self.lost_label.setToolTip(STATUS_TIPS["lost"])
        font = self.lost_label.font()
        font.setBold(True)
        self.lost_label.setFont(font)
        top = QHBoxLayout()
        top.addWidget(pick_label)
        top.addWidget(self.compaction_combo, 1)
        top.addWidget(self.compare_check)
        self.probe_pane = ProbePane(self, self._runner)
        top.addWidget(self.probe_pane.probe_button)
        top.addWidget(self.progress)
        top.addWidget(self.state_label)
        top.addWidget(self.lost_label)
        self.headline = ElidedLabel()  # one line; all of it on hover
        self.message_label = QLabel(wordWrap=True)
        self.message_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message_label.hide()

        self.score_model = ScoreModel(SCORE_COLUMNS, self)
        self.score_table = table_view(self.score_model, (92, *([58] * 12)))
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
        table_view(self.proxy, ITEM_WIDTHS, self.items_table)
        header = self.items_table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)  # the item's text
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
        self.splitter.addWidget(self.probe_pane)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setStretchFactor(2, 3)

        # a short tab (the plan above takes most of a laptop's height) scrolls here,
        # inside the tab, rather than squashing the tables to nothing
        self.score_table.setMinimumHeight(36 + 22 * 2 + 4)  # the header and two rows
        self.items_table.setMinimumHeight(24 + 22 * 3 + 4)  # the header and three rows
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(3)
        layout.addLayout(top)
        layout.addWidget(self.headline)
        layout.addWidget(self.message_label)
        layout.addWidget(self.splitter, 1)
        self.scroller = QScrollArea(widgetResizable=True)
        self.scroller.setFrameShape(QFrame.Shape.NoFrame)
        self.scroller.setWidget(body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.scroller)
        QWidget.setTabOrder(self.compaction_combo, self.compare_check)
        QWidget.setTabOrder(self.compare_check, self.status_combo)
        QWidget.setTabOrder(self.status_combo, self.text_edit)
        QWidget.setTabOrder(self.text_edit, self.items_table)
        QWidget.setTabOrder(self.items_table, self.score_table)
        QWidget.setTabOrder(self.score_table, self.probe_pane.probe_button)
        QWidget.setTabOrder(self.probe_pane.probe_button, self.probe_pane.questions_table)

    # -- the session --------------------------------------------------------------------------

    def set_session(
        self, session: Session | None, settings: CompactionSettings | None = None
    ) -> None:
        """Audit *session* (None: nothing); its newest compaction is picked.

        *settings*: the agent's compaction settings for memlens's dry runs.
        """
        self._session = session
        self._settings = settings
        with QSignalBlocker(self.compaction_combo):
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
        request, session, settings = self.current_request(), self._session, self._settings
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
            outcome = run_audit(snapshot, request, settings)
            if cancelled():
                raise Cancelled
            return outcome

        snapshot = session.snapshot()  # live mode extends the session meanwhile
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

    # -- the model probes ask ---------------------------------------------------------------------

    def set_providers(
        self, choices: Sequence[ProviderChoice], current: ProviderChoice | None = None
    ) -> None:
        """The models on offer for probes, and the chosen one (the compaction panel's)."""
        self.probe_pane.set_providers(choices, current)

    def follow_picker(self, picker: ProviderPicker) -> None:
        """Take the probes' model from *picker*, the compaction panel's, as it changes."""
        if self._picker is not None:
            self._picker.provider_changed.disconnect(self._on_provider_changed)
        self._picker = picker
        picker.provider_changed.connect(self._on_provider_changed)
        self._on_provider_changed()

    def _on_probe(self) -> None:
        """Probe the audit shown; the pane's first showing takes a good part of the height."""
        shown = self.probe_pane.isVisible()
        self.probe_pane.probe()
        if not shown and self.probe_pane.isVisible():
            sizes = self.splitter.sizes()
            total = sum(sizes)
            self.splitter.setSizes([sizes[0], total * 3 // 10, total - sizes[0] - total * 3 // 10])

    def _on_provider_changed(self, *_: object) -> None:
        if self._picker is not None:
            self.set_providers(self._picker.providers(), self._picker.provider())

    def _find_picker(self) -> ProviderPicker | None:
        """The nearest provider picker among the widgets holding this view (the panel's)."""
        holder = self.parentWidget()
        while holder is not None:
            found = holder.findChild(ProviderPicker)
            if isinstance(found, ProviderPicker):
                return found
            holder = holder.parentWidget()
        return None

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
        self._recolor()
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
        self.headline.setText(headline(primary, other))
        lost = len(primary.lost()) if primary is not None else 0
        self.lost_label.setText(f"{lost:,} lost for good" if lost else "")
        first = "agent" if primary is None or primary.summariser == "agent" else "memlens"
        self.score_model.names = (first, "memlens")
        self.score_model.set_records(score_rows(primary, other))
        header = self.score_table.horizontalHeader()
        for col in range(7, len(SCORE_COLUMNS)):
            header.setSectionHidden(col, other is None)
        self.items_table.setColumnHidden(1, other is None)
        self.items_model.set_records(item_rows(primary, other))
        self.probe_pane.set_target(self._session, primary)
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
        if self._picker is None:
            picker = self._find_picker()
            if picker is not None:
                self.follow_picker(picker)
        if self._stale:
            self.run()

    @override
    def changeEvent(self, event: Any) -> None:
        super().changeEvent(event)
        if event.type() == event.Type.PaletteChange:
            self._recolor()

    def _recolor(self) -> None:
        """Status colours that read on the palette's base (light or dark theme)."""
        dark = is_dark(self.palette())
        self.items_model.dark = dark
        self.probe_pane.questions_model.dark = dark
        color = STATUS_COLORS["lost"][1 if dark else 0]
        self.lost_label.setStyleSheet(f"color: {color}")
        self.items_table.viewport().update()
