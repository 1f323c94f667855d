"""Recall preview: what memory-context would recall at the selected point, and why.

A query box (prefilled with the agent's query, debounced), the knowledge and detail
hits with every score component, knobs bound to :class:`SearchConfig`, the
recalled-context block exactly as :func:`core.recall.block.build_block` returns
it, what the hard cap cut, and "why not?" for any segment or message.

Recall takes a few milliseconds at 20,000 segments (hash embedder), so it runs on
the GUI thread after the debounce; the status line shows how long it took.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QSortFilterProxyModel, QStringListModel, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QCompleter,
    QDoubleSpinBox,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSlider,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.recall.block import hard_cap, search_limit
from core.recall.engine import MIN_QUERY_CHARS, RecallSettings, recall
from core.recall.hybrid import Explanation, SearchConfig, explain
from core.redact import maybe_redact
from widgets.recall_preview_models import (
    CUT_COLUMNS,
    DETAIL_COLUMNS,
    IN_BLOCK,
    KNOWLEDGE_COLUMNS,
    CutRow,
    DetailRow,
    KnowledgeRow,
    TipTableModel,
    cut_tip,
    detail_tip,
    explanation_html,
    knowledge_tip,
    one_line,
)
from widgets.record_model import RecordRole, SortRole

if TYPE_CHECKING:
    from core.recall.engine import RecallPreview as RecallOutcome
    from core.recall.knowledge_search import KnowledgeIndex
    from core.recall.warm_store import WarmStore


class Knob(QWidget):
    """A labelled slider and spin box over one float, kept in step."""

    value_changed = Signal(float)

    def __init__(
        self, label: str, lo: float, hi: float, step: float, decimals: int, tip: str
    ) -> None:
        super().__init__()
        self._lo, self._step = lo, step
        self.label = QLabel(label)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, round((hi - lo) / step))
        self.slider.setMinimumWidth(90)
        self.spin = QDoubleSpinBox()
        self.spin.setRange(lo, hi)
        self.spin.setSingleStep(step)
        self.spin.setDecimals(decimals)
        self.spin.setKeyboardTracking(False)
        for w in (self.label, self.slider, self.spin):
            w.setToolTip(tip)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        lay.addWidget(self.label)
        lay.addWidget(self.slider, 1)
        lay.addWidget(self.spin)
        self.slider.valueChanged.connect(self._on_slider_value_changed)
        self.spin.valueChanged.connect(self._on_spin_value_changed)

    def value(self) -> float:
        """The current value."""
        return float(self.spin.value())

    def set_value(self, value: float) -> None:
        """Show *value* without emitting :attr:`value_changed`."""
        for w in (self.slider, self.spin):
            w.blockSignals(True)
        self.spin.setValue(value)
        self.slider.setValue(round((value - self._lo) / self._step))
        for w in (self.slider, self.spin):
            w.blockSignals(False)

    @Slot(int)
    def _on_slider_value_changed(self, pos: int) -> None:
        self.spin.blockSignals(True)
        self.spin.setValue(self._lo + pos * self._step)
        self.spin.blockSignals(False)
        self.value_changed.emit(self.value())

    @Slot(float)
    def _on_spin_value_changed(self, value: float) -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(round((value - self._lo) / self._step))
        self.slider.blockSignals(False)
        self.value_changed.emit(value)


def _table(model: TipTableModel[object], stretch_last: bool = True) -> QTableView:
    proxy = QSortFilterProxyModel(model)
    proxy.setSourceModel(model)
    proxy.setSortRole(SortRole)
    view = QTableView()
    view.setModel(proxy)
    view.setSortingEnabled(True)
    view.sortByColumn(0, Qt.SortOrder.AscendingOrder)
    view.setAlternatingRowColors(True)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setWordWrap(False)
    view.verticalHeader().setVisible(False)
    view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 8)
    header = view.horizontalHeader()
    header.setStretchLastSection(stretch_last)
    header.setHighlightSections(False)
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    return view


def _group(title: str, *widgets: QWidget, header: QWidget | None = None) -> QGroupBox:
    box = QGroupBox(title)
    lay = QVBoxLayout(box)
    lay.setContentsMargins(6, 6, 6, 6)
    lay.setSpacing(4)
    if header is not None:
        lay.addWidget(header)
    for w in widgets:
        lay.addWidget(w)
    return box


class RecallPreview(QWidget):
    """The recall preview view: query, hits, knobs, block, cuts and "why not?".

    Signals
    -------
    query_changed(str)
        The query recall ran with, after the debounce, when it changed.
    block_changed(int)
        The block's token count, whenever the block's text changed (0 when empty).
    preview_changed(object)
        The :class:`core.recall.engine.RecallPreview` of each recall (None on detach).
    """

    query_changed = Signal(str)
    block_changed = Signal(int)
    preview_changed = Signal(object)

    DEBOUNCE_MS = 150

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._store: WarmStore | None = None
        self._knowledge: KnowledgeIndex | None = None
        self._base = RecallSettings()
        self._now_ms: int | None = None
        self._session_id: str | None = None
        self._default_query = ""
        self._user_typed = False
        self._last: RecallOutcome | None = None
        self._last_query: str | None = None
        self._last_block: str | None = None
        self._explain_id: str | None = None
        self._explain_note = ""
        self.last_seconds = 0.0
        """Wall time of the last recall (search, knowledge and block)."""
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._build()
        self._show_settings(self._base.search)
        self._clear_views("Open a data directory with a memory-context store.")

    # -- building ---------------------------------------------------------------------------
    def _build(self) -> None:
        self.query_box = QLineEdit()
        self.query_box.setPlaceholderText(
            "Recall query — by default the agent's last user messages at the selected point"
        )
        self.query_box.setClearButtonEnabled(True)
        self.query_box.textEdited.connect(self._on_query_box_text_edited)
        self.reset_button = QPushButton("Reset to agent's query")
        self.reset_button.setToolTip("Put back the query the agent would use at this point")
        self.reset_button.setEnabled(False)
        self.reset_button.clicked.connect(self._on_reset_button_clicked)
        self.scope_label = QLabel()
        self.scope_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        query_row = QHBoxLayout()
        query_row.addWidget(QLabel("<b>Query</b>"))
        query_row.addWidget(self.query_box, 1)
        query_row.addWidget(self.reset_button)

        self.min_score = Knob(
            "minScore", 0.0, 1.0, 0.01, 2, "Hits need an effective score of at least this."
        )
        self.vector_weight = Knob(
            "Vector weight", 0.0, 1.0, 0.01, 2, "Weight of the cosine similarity in the score."
        )
        self.text_weight = Knob(
            "Text weight", 0.0, 1.0, 0.01, 2, "Weight of the normalised BM25 score in the score."
        )
        self.decay = Knob(
            "Decay",
            0.9,
            1.0,
            0.0005,
            4,
            "Per-day factor: a segment d days old is multiplied by decay ** d (1 = no decay).",
        )
        for knob in (self.min_score, self.vector_weight, self.text_weight, self.decay):
            knob.value_changed.connect(self._on_knob_value_changed)
        self.cross_session = QCheckBox("Cross-session")
        self.cross_session.setToolTip("Search every session's segments, not only this session's")
        self.cross_session.toggled.connect(self._on_knob_value_changed)
        self.defaults_button = QPushButton("Defaults")
        self.defaults_button.setToolTip("Back to the agent's configured values")
        self.defaults_button.clicked.connect(self._on_defaults_button_clicked)
        self.limit_label = QLabel()
        self.limit_label.setToolTip("The agent's search limit: max(8, ceil(hard cap / 500))")
        knobs = QGroupBox("Search settings")
        grid = QHBoxLayout(knobs)
        grid.setContentsMargins(8, 4, 8, 4)
        for knob in (self.min_score, self.vector_weight, self.text_weight, self.decay):
            grid.addWidget(knob, 1)
            grid.addSpacing(8)
        grid.addWidget(self.cross_session)
        grid.addWidget(self.limit_label)
        grid.addWidget(self.defaults_button)

        self.knowledge_model: TipTableModel[KnowledgeRow] = TipTableModel(
            [c for c, _ in KNOWLEDGE_COLUMNS],
            [t for _, t in KNOWLEDGE_COLUMNS],
            cell_tip=knowledge_tip,
            parent=self,
        )
        self.detail_model: TipTableModel[DetailRow] = TipTableModel(
            [c for c, _ in DETAIL_COLUMNS],
            [t for _, t in DETAIL_COLUMNS],
            cell_tip=detail_tip,
            dimmed=lambda r: r.rejected,
            parent=self,
        )
        self.cut_model: TipTableModel[CutRow] = TipTableModel(
            [c for c, _ in CUT_COLUMNS], [t for _, t in CUT_COLUMNS], cell_tip=cut_tip, parent=self
        )
        self.knowledge_view = _table(self.knowledge_model)  # type: ignore[arg-type]
        self.detail_view = _table(self.detail_model)  # type: ignore[arg-type]
        self.cut_view = _table(self.cut_model)  # type: ignore[arg-type]
        self.detail_view.selectionModel().currentRowChanged.connect(
            self._on_detail_current_row_changed
        )
        self.show_rejected = QCheckBox("Show rejected candidates")
        self.show_rejected.setToolTip(
            "Also list the candidates that minScore or the limit rejected (greyed out)"
        )
        self.show_rejected.toggled.connect(self._on_show_rejected_toggled)
        self.knowledge_box = _group("Knowledge hits", self.knowledge_view)
        self.detail_box = _group("Detail hits", self.detail_view, header=self.show_rejected)

        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.block_text_view = QPlainTextEdit()
        self.block_text_view.setReadOnly(True)
        self.block_text_view.setFont(mono)
        self.block_text_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.tokens_label = QLabel()
        self.tokens_label.setToolTip(
            "Estimated tokens of the block against the hard cap: "
            "min(hardCapTokens, 10% of the window)"
        )
        self.tokens_bar = QProgressBar()
        self.tokens_bar.setTextVisible(False)
        self.tokens_bar.setMaximumHeight(10)
        tokens_row = QWidget()
        tr = QHBoxLayout(tokens_row)
        tr.setContentsMargins(0, 0, 0, 0)
        tr.addWidget(self.tokens_label)
        tr.addWidget(self.tokens_bar, 1)
        self.block_box = _group(
            "Recalled context (as injected)", self.block_text_view, header=tokens_row
        )
        self.cut_box = _group("Cut by the hard cap", self.cut_view)

        self.why_box_edit = QLineEdit()
        self.why_box_edit.setPlaceholderText("Segment id, or words of its text…")
        self.why_box_edit.setClearButtonEnabled(True)
        self.why_box_edit.returnPressed.connect(self._on_why_box_edit_return_pressed)
        self.why_box_edit.textEdited.connect(self._on_why_box_edit_text_edited)
        self._segment_list = QStringListModel(self)
        self.segment_completer = QCompleter(self._segment_list, self)
        self.segment_completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.segment_completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.segment_completer.setMaxVisibleItems(12)
        self.segment_completer.setWidget(self.why_box_edit)
        self.segment_completer.activated[str].connect(self._on_segment_completer_activated)
        explain_button = QPushButton("Explain")
        explain_button.clicked.connect(self._on_why_box_edit_return_pressed)
        pick_row = QWidget()
        pr = QHBoxLayout(pick_row)
        pr.setContentsMargins(0, 0, 0, 0)
        pr.addWidget(self.why_box_edit, 1)
        pr.addWidget(explain_button)
        self.why_label = QLabel()
        self.why_label.setWordWrap(True)
        self.why_label.setTextFormat(Qt.TextFormat.RichText)
        self.why_label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.why_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.why_label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Expanding)
        self.why_box = _group("Why not?", self.why_label, header=pick_row)

        left = QSplitter(Qt.Orientation.Vertical)
        left.addWidget(self.knowledge_box)
        left.addWidget(self.detail_box)
        left.setStretchFactor(0, 2)
        left.setStretchFactor(1, 3)
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.block_box)
        right.addWidget(self.cut_box)
        right.addWidget(self.why_box)
        right.setStretchFactor(0, 5)
        right.setStretchFactor(1, 2)
        right.setStretchFactor(2, 3)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("recall-preview-splitter")
        self.splitter.addWidget(left)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([620, 380])
        for s in (left, right, self.splitter):
            s.setChildrenCollapsible(False)

        self.status_label = QLabel()
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        status_row = QHBoxLayout()
        status_row.addWidget(self.scope_label)
        status_row.addStretch(1)
        status_row.addWidget(self.status_label)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addLayout(query_row)
        lay.addLayout(status_row)
        lay.addWidget(knobs)
        lay.addWidget(self.splitter, 1)

    # -- public API ---------------------------------------------------------------------------
    def attach(
        self,
        store: WarmStore | None,
        knowledge: KnowledgeIndex | None,
        settings: RecallSettings,
        *,
        now_ms: int | None = None,
    ) -> None:
        """Recall from *store* and *knowledge* with the agent's *settings*.

        Parameters
        ----------
        store, knowledge
            The warm store and the knowledge index (either may be None).
        settings
            The agent's recall settings; the knobs start from its ``search``.
        now_ms
            The clock for time decay (None: the wall clock at each recall).
        """
        self._store, self._knowledge, self._base = store, knowledge, settings
        self._now_ms = now_ms
        self._show_settings(settings.search)
        rows = []
        if store is not None:
            for seg in store.live():
                rows.append(f"{seg.id}  {seg.role}: {one_line(seg.content, 100)}")
        self._segment_list.setStringList(rows)
        self._update_scope()
        self.refresh()

    def detach(self) -> None:
        """Forget the store and knowledge; the views go empty."""
        self._timer.stop()
        self._store = self._knowledge = None
        self._segment_list.setStringList([])
        self._last = None
        self._explain_id = None
        self._clear_views("No memory-context store.")
        self.preview_changed.emit(None)

    def set_default_query(
        self, text: str, session_id: str | None = None, *, now_ms: int | None = None
    ) -> None:
        """The agent's query at the selected point, and the session it searches.

        The query box shows *text* unless the user typed a query of their own (the
        "Reset to agent's query" button puts *text* back). *now_ms* is the time of
        the selected point, for decay (None keeps the current clock).
        """
        self._default_query = text
        self._session_id = session_id
        if now_ms is not None:
            self._now_ms = now_ms
        if not self._user_typed:
            self.query_box.setText(text)
            self.query_box.setCursorPosition(0)
        self._update_reset()
        self._update_scope()
        self._schedule(0)

    def default_query(self) -> str:
        """The agent's query last given to :meth:`set_default_query`."""
        return self._default_query

    def query(self) -> str:
        """The query in the box."""
        return self.query_box.text()

    def settings(self) -> RecallSettings:
        """The attached settings with the knobs' search values."""
        cfg = self._base.search.with_(
            min_score=round(self.min_score.value(), 6),
            vector_weight=round(self.vector_weight.value(), 6),
            bm25_weight=round(self.text_weight.value(), 6),
            decay=round(self.decay.value(), 6),
            cross_session=self.cross_session.isChecked(),
        )
        return replace(self._base, search=cfg)

    def set_search_config(self, config: SearchConfig) -> None:
        """Set the knobs to *config* and recall again."""
        self._show_settings(config)
        self._schedule(0)

    def preview(self) -> RecallOutcome | None:
        """What the last recall computed (None before the first)."""
        return self._last

    def block_text(self) -> str:
        """The block exactly as it would be injected ("" when nothing would be)."""
        block = self._last.block if self._last else None
        return block.text if block else ""

    def block_tokens(self) -> int:
        """The block's estimated tokens."""
        block = self._last.block if self._last else None
        return block.tokens if block else 0

    def refresh(self) -> None:
        """Recall now (skipping the debounce)."""
        self._timer.stop()
        self._recompute()

    def explain_segment(self, segment_id: str) -> Explanation | None:
        """Show and return why *segment_id* is or is not a detail hit of the current query."""
        self._explain_id = segment_id.strip()
        self._explain_note = ""
        if self.why_box_edit.text() != self._explain_id:
            self.why_box_edit.setText(self._explain_id)
        return self._show_explanation()

    def explain_message(self, session_id: str, role: str, text: str) -> Explanation | None:
        """Show and return "why not?" for a transcript message, through its archived segment.

        The agent archives user and assistant text as segments (redacted); the
        segment with the same session, role and text is explained.
        """
        store = self._store
        if store is None:
            return self._show_plain("No warm store is attached.")
        wanted = {text, maybe_redact(text, True), text.strip()}
        for seg in store.live():
            if seg.session_id == session_id and seg.role == role and seg.content in wanted:
                return self.explain_segment(seg.id)
        self._explain_id = None
        return self._show_plain(
            "This message is not in the warm store: no segment of its session has the same "
            "role and text (only user and assistant text is archived, and old or surplus "
            "segments are evicted)."
        )

    # -- recall -----------------------------------------------------------------------------
    def _schedule(self, delay_ms: int) -> None:
        if self._timer.isActive() and self._timer.remainingTime() <= delay_ms:
            return
        self._timer.start(delay_ms)

    @Slot()
    def _on_timer_timeout(self) -> None:
        self._recompute()

    def _recompute(self) -> None:
        if self._store is None and self._knowledge is None:
            return
        query = self.query_box.text()
        settings = self.settings()
        started = time.perf_counter()
        out = recall(
            query,
            store=self._store,
            knowledge=self._knowledge,
            settings=settings,
            session_id=self._session_id,
            now_ms=self._now_ms,
        )
        self.last_seconds = time.perf_counter() - started
        self._last = out
        self._fill(out)
        if self._explain_id:
            self._show_explanation()
        if query != self._last_query:
            self._last_query = query
            self.query_changed.emit(query)
        text = self.block_text()
        if text != self._last_block:
            self._last_block = text
            self.block_changed.emit(self.block_tokens())
        self.preview_changed.emit(out)

    def _fill(self, out: RecallOutcome) -> None:
        block = out.block
        # The block holds the facts it was given (core Fact records, which have an id).
        in_block_k = {getattr(f, "id", "") for f in block.knowledge} if block else set()
        cut_k = {getattr(f, "id", ""): why for f, why in block.cut_knowledge} if block else {}
        k_rows = [
            KnowledgeRow(
                h,
                IN_BLOCK if h.fact.id in in_block_k else "cut by cap",
                cut_k.get(h.fact.id, ""),
            )
            for h in out.knowledge
        ]
        self.knowledge_model.set_records(k_rows)
        in_block_d = {d.segment.id for d in block.details} if block else set()
        cut_d = {d.segment.id: why for d, why in block.cut_details} if block else {}
        d_rows: list[DetailRow] = []
        search = out.search
        if search is not None:
            hit_slots = {h.slot for h in search.hits}
            shown = search.candidates if self.show_rejected.isChecked() else search.hits
            for h in shown:
                sid = h.segment.id
                if h.slot in hit_slots:
                    status = IN_BLOCK if sid in in_block_d else "cut by cap"
                    d_rows.append(DetailRow(h, status, cut_d.get(sid, "")))
                else:
                    status = "below minScore" if not h.passed_min_score else "over limit"
                    d_rows.append(DetailRow(h, status))
        self.detail_model.set_records(d_rows)
        cuts = [
            CutRow("knowledge", one_line(f.content, 90), why, getattr(f, "id", ""))
            for f, why in (block.cut_knowledge if block else [])
        ] + [
            CutRow(
                "detail", f"{d.segment.id[:8]} {one_line(d.segment.content, 80)}", why, d.segment.id
            )
            for d, why in (block.cut_details if block else [])
        ]
        self.cut_model.set_records(cuts)
        for view in (self.knowledge_view, self.detail_view, self.cut_view):
            _fit_columns(view)
        n_hits = len(search.hits) if search else 0
        self.knowledge_box.setTitle(f"Knowledge hits ({len(k_rows)})")
        self.detail_box.setTitle(
            f"Detail hits ({n_hits} of {len(search.candidates)} candidates)"
            if search
            else "Detail hits"
        )
        self.cut_box.setTitle(f"Cut by the hard cap ({len(cuts)})")
        self._show_block(out)
        took = f"{self.last_seconds * 1000:.1f} ms"
        if out.skipped:
            self.status_label.setText(f"<i>{out.skipped}</i>")
        else:
            self.status_label.setText(
                f"{len(k_rows)} facts · {n_hits} detail hits · recall took {took}"
            )

    def _show_block(self, out: RecallOutcome) -> None:
        cap = out.hard_cap
        block = out.block
        tokens = block.tokens if block else 0
        self.tokens_label.setText(f"<b>{tokens:,} / {cap:,} tokens</b>")
        self.tokens_bar.setRange(0, max(cap, 1))
        self.tokens_bar.setValue(min(tokens, cap))
        text = block.text if block else ""
        if self.block_text_view.toPlainText() != text:
            self.block_text_view.setPlainText(text)
        self.block_text_view.setPlaceholderText(
            out.skipped or "Nothing would be injected: no knowledge or detail hits."
        )

    def _clear_views(self, note: str) -> None:
        for model in (self.knowledge_model, self.detail_model, self.cut_model):
            model.set_records([])
        self.block_text_view.setPlainText("")
        self.block_text_view.setPlaceholderText(note)
        cap = hard_cap(self._base.hard_cap_tokens, self._base.window)
        self.tokens_label.setText(f"<b>0 / {cap:,} tokens</b>")
        self.tokens_bar.setRange(0, max(cap, 1))
        self.tokens_bar.setValue(0)
        self.status_label.setText("")
        self.why_label.setText(
            "<span style='color:gray'>Pick a segment (or click a detail hit) to see why it "
            "is or is not recalled.</span>"
        )
        self._update_scope()
        if self._last_block:
            self._last_block = ""
            self.block_changed.emit(0)

    # -- "why not?" ---------------------------------------------------------------------------
    def _show_plain(self, text: str) -> None:
        self.why_label.setText(f"<p>{text}</p>")
        return None

    def _show_explanation(self) -> Explanation | None:
        store, out, sid = self._store, self._last, self._explain_id
        if not sid:
            return None
        if store is None:
            return self._show_plain("No warm store is attached.")
        if out is None or out.search is None:
            reason = out.skipped if out and out.skipped else "no recall has run yet"
            return self._show_plain(f"Nothing is searched: {reason}.")
        expl = explain(store, out.search, sid)
        note = ""
        block = out.block
        if expl.reason == "hit" and block is not None:
            cut = {d.segment.id: why for d, why in block.cut_details}
            note = (
                f"A hit, but the hard cap left it out of the block: {cut[sid]}."
                if sid in cut
                else "It is in the injected block."
            )
        self.why_label.setText(explanation_html(expl, out.search, store.get(sid), note))
        return expl

    # -- handlers -----------------------------------------------------------------------------
    @Slot(str)
    def _on_query_box_text_edited(self, text: str) -> None:
        self._user_typed = text != self._default_query
        self._update_reset()
        self._schedule(self.DEBOUNCE_MS)

    @Slot()
    def _on_reset_button_clicked(self) -> None:
        self._user_typed = False
        self.query_box.setText(self._default_query)
        self._update_reset()
        self.refresh()

    @Slot()
    def _on_knob_value_changed(self) -> None:
        self._update_limit()
        self._update_scope()
        self._schedule(0)

    @Slot()
    def _on_defaults_button_clicked(self) -> None:
        self.set_search_config(self._base.search)

    @Slot(bool)
    def _on_show_rejected_toggled(self, _checked: bool) -> None:
        if self._last is not None:
            self._fill(self._last)

    @Slot()
    def _on_detail_current_row_changed(self) -> None:
        index = self.detail_view.currentIndex()
        if index.isValid():
            row = index.data(RecordRole)
            if isinstance(row, DetailRow):
                self.explain_segment(row.hit.segment.id)

    @Slot(str)
    def _on_why_box_edit_text_edited(self, text: str) -> None:
        if len(text.strip()) >= 2:
            self.segment_completer.setCompletionPrefix(text.strip())
            self.segment_completer.complete()

    @Slot(str)
    def _on_segment_completer_activated(self, text: str) -> None:
        self.explain_segment(text.split()[0] if text.split() else "")

    @Slot()
    def _on_why_box_edit_return_pressed(self) -> None:
        text = self.why_box_edit.text().strip()
        if text:
            self.explain_segment(text.split()[0])

    # -- small views --------------------------------------------------------------------------
    def _show_settings(self, cfg: SearchConfig) -> None:
        self.min_score.set_value(cfg.min_score)
        self.vector_weight.set_value(cfg.vector_weight)
        self.text_weight.set_value(cfg.bm25_weight)
        self.decay.set_value(cfg.decay)
        self.cross_session.blockSignals(True)
        self.cross_session.setChecked(cfg.cross_session)
        self.cross_session.blockSignals(False)
        self._update_limit()

    def _update_limit(self) -> None:
        cap = hard_cap(self._base.hard_cap_tokens, self._base.window)
        limit = search_limit(cap) if self._base.limit_from_cap else self._base.search.limit
        d = self.decay.value()
        half = "no decay" if d >= 1 else f"half-life {math.log(0.5) / math.log(d):,.0f} d"
        self.limit_label.setText(f"limit {limit} · {half}")

    def _update_reset(self) -> None:
        self.reset_button.setEnabled(self._user_typed)

    def _update_scope(self) -> None:
        if self._store is None and self._knowledge is None:
            self.scope_label.setText("<span style='color:gray'>No store attached</span>")
            return
        n = len(self._store) if self._store is not None else 0
        if self.cross_session.isChecked() or self._session_id is None:
            scope = "every session"
        else:
            scope = f"session {self._session_id[:8]}"
        self.scope_label.setText(
            f"Searching {scope} of {n:,} segments · min {MIN_QUERY_CHARS} characters"
        )


def _fit_columns(view: QTableView) -> None:
    header = view.horizontalHeader()
    last = header.count() - 1
    for col in range(last):
        view.resizeColumnToContents(col)
        header.resizeSection(col, min(header.sectionSize(col), 220))
