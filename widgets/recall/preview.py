"""Recall preview: what memory-context would recall at the selected point, and why.

A query box (prefilled with the agent's query, debounced), the knowledge and detail hits
with every score component, the ranking and knobs bound to :class:`SearchConfig`, the
block exactly as :func:`core.recall.block.build_block` returns it, what the hard cap
cut, "why not?" for any segment or message, and the golden queries' badge.

Recall (query embedding and search) runs through the job runner after the debounce, off
the GUI thread (a model embedder takes tens of milliseconds per query, a search over a
large store more); a newer query drops an older one's result; the status says how long.

Live mode asks for a recall after every batch that adds segments or facts
(:meth:`RecallPreview.refresh`). Those requests coalesce: while a recall of the same
query runs, more requests make one more recall after it, and while the view is hidden
in a shown window (another tab) they wait until it is shown. The tables fit their
columns once, on their first rows, from a sample of rows: a live refresh never
measures every cell again.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QFontDatabase, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QTableView,
    QTabWidget,
    QToolButton,
    QWidget,
)
from typing_extensions import override

from core.recall.block import BLOCK_ESTIMATOR, hard_cap, search_limit
from core.recall.engine import MIN_QUERY_CHARS, RecallSettings, explain_recall
from core.recall.short_ids import short_ids
from core.safety.redact import maybe_redact
from widgets.common.jobs import default_runner
from widgets.common.record_model import RecordRole
from widgets.common.view_jobs import view_key
from widgets.recall.golden import GoldenBar
from widgets.recall.knobs import SearchKnobs
from widgets.recall.preview_layout import (
    CUT_TAB,
    KNOWLEDGE_TAB,
    hbox,
    lay_out,
    make_models,
)
from widgets.recall.preview_models import (
    DetailRow,
    block_note,
    build_rows,
    explanation_html,
    fit_columns,
    group_box,
    make_table,
    recall_job,
)
from widgets.recall.why_not import WhyNotPanel

if TYPE_CHECKING:
    from core.recall.engine import RecallOutcome
    from core.recall.hybrid import SearchConfig, SegmentExplanation
    from core.recall.knowledge_search import KnowledgeIndex
    from core.recall.warm_store import WarmStore
    from widgets.common.jobs import JobRunner


class RecallPreview(QWidget):
    """The recall preview view: query, hits, knobs, block, cuts and "why not?".

    Signals
    -------
    query_changed(str)
        The query recall ran with, after the debounce, when it changed.
    block_changed(int)
        The block's token count, whenever the block's text changed (0 when empty).
    preview_changed(object)
        The :class:`core.recall.engine.RecallOutcome` of each recall (None on detach).
    """

    query_changed = Signal(str)
    block_changed = Signal(int)
    preview_changed = Signal(object)

    DEBOUNCE_MS = 150

    def __init__(self, parent: QWidget | None = None, runner: JobRunner | None = None) -> None:
        super().__init__(parent)
        self._runner = runner if runner is not None else default_runner()
        # One recall at a time: a newer query drops whatever an older one still delivers.
        self._key = view_key(self, self._runner, "recall")
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
        self._running: tuple[Any, ...] | None = None  # what the current recall job recalls
        self._dirty = False  # refreshed while that job ran: recall once more after it
        self._stale = False  # refreshed while hidden: recall when shown
        self._fitted: set[QTableView] = set()  # tables whose columns fit their first rows
        self._short: dict[str, str] = {}  # session id -> its short unique form
        self._short_of = -1  # the store size _short was made for
        self.side_tabs: QTabWidget
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
        self.knobs = SearchKnobs(columns=1)
        self.knobs.setVisible(False)  # the hits get the room; one click shows them
        self.knobs.config_changed.connect(self._on_knobs_config_changed)
        self.knobs.defaults_requested.connect(self._on_knobs_defaults_requested)
        self.knobs_button = QToolButton()
        self.knobs_button.setText("Search settings")
        self.knobs_button.setToolTip("Show or hide the search knobs (minScore, weights, decay…)")
        self.knobs_button.setCheckable(True)
        self.knobs_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.knobs_button.setArrowType(Qt.ArrowType.RightArrow)
        self.knobs_button.toggled.connect(self._on_knobs_button_toggled)
        self.min_score, self.vector_weight = self.knobs.min_score, self.knobs.vector_weight
        self.text_weight, self.decay = self.knobs.text_weight, self.knobs.decay
        self.cross_session = self.knobs.cross_session
        self.defaults_button = self.knobs.defaults_button
        self.scope_label = QLabel()
        self.scope_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status_label = QLabel()
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.show_rejected = QCheckBox("Show rejected candidates")
        self.show_rejected.setToolTip(
            "Also list the candidates that minScore or the limit rejected (greyed out)"
        )
        self.show_rejected.toggled.connect(self._on_show_rejected_toggled)

        self.knowledge_model, self.detail_model, self.cut_model = make_models(self)
        self.knowledge_view = make_table(self.knowledge_model)
        self.detail_view = make_table(self.detail_model)
        self.cut_view = make_table(self.cut_model)
        self.detail_view.selectionModel().currentRowChanged.connect(
            self._on_detail_current_row_changed
        )
        self.knowledge_box = group_box("Knowledge hits", self.knowledge_view)
        self.detail_box = group_box("Detail hits", self.detail_view)
        self.cut_box = group_box("Cut by the hard cap", self.cut_view)

        self.block_text_view = QPlainTextEdit()
        self.block_text_view.setReadOnly(True)
        self.block_text_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.block_text_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.tokens_label = QLabel()
        self.tokens_label.setToolTip(
            f"Tokens of the block ({BLOCK_ESTIMATOR}) against the hard cap: "
            "min(hardCapTokens, 10% of the window). The gauge, the Context view and "
            "memlens recall show the same figure."
        )
        self.estimator_label = QLabel(f"({BLOCK_ESTIMATOR})")
        self.estimator_label.setToolTip(self.tokens_label.toolTip())
        self.tokens_bar = QProgressBar()
        self.tokens_bar.setTextVisible(False)
        self.tokens_bar.setMaximumHeight(10)
        self.block_box = group_box(
            "Recalled context (as injected)",
            self.block_text_view,
            header=hbox(self.tokens_label, self.estimator_label, self.tokens_bar),
        )
        self.why_box = WhyNotPanel(runner=self._runner)
        self.why_box.segment_picked.connect(self._on_why_box_segment_picked)
        self.why_box_edit, self.why_label = self.why_box.edit, self.why_box.label
        self.segment_completer = self.why_box.completer
        self.golden = GoldenBar(self, self._runner, self)  # "should be found", and its badge
        self.splitter = lay_out(self)

    # -- public API ---------------------------------------------------------------------------
    def session_label(self, session_id: str) -> str:
        """The short form of *session_id* the view shows (unique among the store's sessions)."""
        return self._short.get(session_id) or short_ids([session_id])[session_id]

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
        self._fitted.clear()  # another store: the columns fit its first rows
        self._short_of = -1
        self._update_short()
        self._show_settings(settings.search)
        self.golden.attach(store)
        self.why_box.set_segments(store.live() if store is not None else [])
        self._update_scope()
        self._timer.stop()
        self._recompute()

    def detach(self) -> None:
        """Forget the store and knowledge; the views go empty."""
        self._timer.stop()
        self._runner.cancel(self._key)
        self._running = None
        self._dirty = self._stale = False
        self._fitted.clear()
        self._store = self._knowledge = None
        self.golden.attach(None)
        self.why_box.set_segments([])
        self._last = None
        self._last_query = None
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

    def ask(self, query: str, session_id: str | None, segment_id: str) -> None:
        """Recall *query* as if typed, in *session_id* (None: all), and explain *segment_id*."""
        self._session_id = session_id
        self.query_box.setText(query)
        self._on_query_box_text_edited(query)
        self._update_scope()
        self.explain_segment(segment_id)

    def default_query(self) -> str:
        """The agent's query last given to :meth:`set_default_query`."""
        return self._default_query

    def query(self) -> str:
        """The query in the box."""
        return self.query_box.text()

    def settings(self) -> RecallSettings:
        """The attached settings with the knobs' search values and ranking."""
        search = self.knobs.config(self._base.search)
        return replace(self._base, search=search, ranking=self.knobs.ranking())

    def set_search_config(self, config: SearchConfig, ranking: str | None = None) -> None:
        """Set the knobs to *config* (and *ranking*, if given) and recall again."""
        self._show_settings(config, ranking)
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
        """Recall again (skipping the debounce): the store or the knowledge changed.

        :attr:`preview_changed` says when the result is shown. Coalesced: while a
        recall of the same query and settings runs, this recalls once more after it
        (however often it is called); while the view is hidden in a shown window
        (another tab), it recalls when the view is shown.
        """
        self._timer.stop()
        if self._hidden_in_window():
            self._stale = True
            return
        self._recompute(coalesce=True)

    @override
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self._stale = False
            self._recompute(coalesce=True)

    def _hidden_in_window(self) -> bool:
        """Hidden while its window shows (a tab not selected); a window of its own: never."""
        window = self.window()
        return window is not self and window.isVisible() and not self.isVisible()

    def is_busy(self) -> bool:
        """True while a recall runs in the background."""
        return self._runner.busy(self._key)

    def explain_segment(self, segment_id: str) -> SegmentExplanation | None:
        """Show and return why *segment_id* is or is not a detail hit of the current query."""
        self._explain_id = segment_id.strip()
        self.why_box.set_segment_id(self._explain_id)
        return self._show_explanation()

    def explain_message(self, session_id: str, role: str, text: str) -> SegmentExplanation | None:
        """Show and return "why not?" for a transcript message, through its archived segment.

        The agent archives user and assistant text as segments (redacted); the
        segment with the same session, role and text is explained.
        """
        store = self._store
        if store is None:
            self._show_plain("No warm store is attached.")
            return None
        wanted = {text, maybe_redact(text, True), text.strip()}
        for seg in store.live():
            if seg.session_id == session_id and seg.role == role and seg.content in wanted:
                return self.explain_segment(seg.id)
        self._explain_id = None
        self._show_plain(
            "This message is not in the warm store: no segment of its session has the same "
            "role and text (only user and assistant text is archived, and old or surplus "
            "segments are evicted)."
        )
        return None

    # -- recall -----------------------------------------------------------------------------
    def _schedule(self, delay_ms: int) -> None:
        if self._timer.isActive() and self._timer.remainingTime() <= delay_ms:
            return
        self._timer.start(delay_ms)

    @Slot()
    def _on_timer_timeout(self) -> None:
        self._recompute()

    def _recompute(self, *, coalesce: bool = False) -> None:
        if self._store is None and self._knowledge is None:
            return
        query = self.query_box.text()
        store, knowledge, settings = self._store, self._knowledge, self.settings()
        session_id, now_ms = self._session_id, self._now_ms
        request = (query, settings, session_id, now_ms)  # attach never coalesces
        if coalesce and request == self._running and self._runner.busy(self._key):
            self._dirty = True  # the running job recalls this already, from older data
            return
        # Anything else (another query, knobs, point) replaces the running job.
        self._running, self._dirty = request, False
        job = recall_job(query, store, knowledge, settings, session_id, now_ms)
        self._runner.submit(
            "recall", job, key=self._key, done=self._on_recalled, failed=self._on_recall_failed
        )

    def _on_recall_failed(self, message: str) -> None:
        self.status_label.setText(f"Recall failed: {message}")
        self._recall_again_if_dirty()

    def _recall_again_if_dirty(self) -> None:
        self._running = None
        if self._dirty:
            self._dirty = False
            if self._hidden_in_window():
                self._stale = True
            else:
                self._recompute()

    def _on_recalled(self, result: tuple[str, RecallOutcome, float]) -> None:
        self._recall_again_if_dirty()  # first: the next job runs while this one is shown
        query, out, seconds = result
        self.last_seconds = seconds
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

    def _update_short(self) -> None:
        """The short form of every session of the store (again when the store grew)."""
        store = self._store
        n = len(store) if store is not None else 0
        if n != self._short_of:
            self._short_of = n
            ids = {s.session_id for s in store.live()} if store is not None else set()
            self._short = short_ids(ids | ({self._session_id} if self._session_id else set()))

    def _fill(self, out: RecallOutcome) -> None:
        self._update_short()
        k_rows, d_rows, cuts = build_rows(
            out, show_rejected=self.show_rejected.isChecked(), short=self._short
        )
        self.knowledge_model.set_records(k_rows)
        self.detail_model.set_records(d_rows)
        self.cut_model.set_records(cuts)
        search = out.search
        for view in (self.knowledge_view, self.detail_view, self.cut_view):
            # Once, on a table's first rows: refits would undo the user's widths and
            # measure every row of every refresh on the GUI thread.
            if view not in self._fitted and view.model().rowCount():
                self._fitted.add(view)
                fit_columns(view)
        n_hits = len(search.hits) if search else 0
        self.knowledge_box.setTitle(f"Knowledge hits ({len(k_rows)})")
        self.detail_box.setTitle(
            f"Detail hits ({n_hits} of {len(search.candidates)} candidates)"
            if search
            else "Detail hits"
        )
        self.cut_box.setTitle(f"Cut by the hard cap ({len(cuts)})")
        self.side_tabs.setTabText(KNOWLEDGE_TAB, f"Knowledge ({len(k_rows)})")
        self.side_tabs.setTabText(CUT_TAB, f"Cut ({len(cuts)})")
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
        self.tokens_label.setText(tokens_text(tokens, cap))
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
        self.tokens_label.setText(tokens_text(0, cap))
        self.tokens_bar.setRange(0, max(cap, 1))
        self.tokens_bar.setValue(0)
        self.status_label.setText("")
        self.why_box.clear()
        self._update_scope()
        if self._last_block:
            self._last_block = ""
            self.block_changed.emit(0)

    # -- "why not?" ---------------------------------------------------------------------------
    def _show_plain(self, text: str) -> None:
        """Say *text* in the "why not?" pane (there is no explanation to return)."""
        self.why_box.show_plain(text)

    def _show_explanation(self) -> SegmentExplanation | None:
        store, out, sid = self._store, self._last, self._explain_id
        if not sid:
            return None
        if store is None:
            self._show_plain("No warm store is attached.")
            return None
        if out is None or out.search is None:
            reason = out.skipped if out and out.skipped else "no recall has run yet"
            self._show_plain(f"Nothing is searched: {reason}.")
            return None
        expl = explain_recall(store, out, sid, self.knobs.ranking())
        note = block_note(expl, out.block)
        seg = store.get(sid)
        label = self.session_label(seg.session_id) if seg is not None else ""
        self.why_box.show_html(explanation_html(expl, out.search, seg, note, label))
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
    def _on_knobs_config_changed(self) -> None:
        self._update_scope()
        self._schedule(0)

    @Slot()
    def _on_knobs_defaults_requested(self) -> None:
        self.set_search_config(self._base.search, self._base.ranking)

    @Slot(bool)
    def _on_knobs_button_toggled(self, checked: bool) -> None:
        self.knobs.setVisible(checked)
        arrow = Qt.ArrowType.DownArrow if checked else Qt.ArrowType.RightArrow
        self.knobs_button.setArrowType(arrow)

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
    def _on_why_box_segment_picked(self, segment_id: str) -> None:
        self.explain_segment(segment_id)

    # -- small views --------------------------------------------------------------------------
    def _show_settings(self, cfg: SearchConfig, ranking: str | None = None) -> None:
        base = self._base
        cap = hard_cap(base.hard_cap_tokens, base.window)
        limit = search_limit(cap) if base.limit_from_cap else cfg.limit
        self.knobs.show_config(cfg, limit, ranking or base.ranking)

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
            scope = f"session {self.session_label(self._session_id)}"
        self.scope_label.setText(
            f"Searching {scope} of {n:,} segments · min {MIN_QUERY_CHARS} characters"
        )
        self.scope_label.setToolTip(f"session {self._session_id}" if self._session_id else "")


def tokens_text(tokens: int, cap: int) -> str:
    """The block's tokens against the hard cap (the estimator is said beside it)."""
    return f"<b>{tokens:,} / {cap:,} tokens</b>"
