"""OpenClaw's memory index: files, chunks, embedding cache, meta, and its search explained.

Pick an agent's index; the tabs show what it holds (files compared with the
workspace, chunks with their line ranges, cached embeddings, the index's meta)
and a search that answers what ``openclaw memory search`` would, with every
component of every score. Loading and searching run in the view's thread pool;
a search that could not embed its query says so, and why, above the results.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QDateTime,
    QModelIndex,
    QRegularExpression,
    QSortFilterProxyModel,
    Qt,
    QTimeZone,
    Signal,
    Slot,
)
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDateTimeEdit,
    QDoubleSpinBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.openclaw.memory_home import MemoryHome, agent_workspace, load_settings, run_search
from core.openclaw.memsearch_chunks import builds_apart
from widgets.common.jobs import default_runner
from widgets.common.record_model import RecordRole, RecordTableModel, SortRole
from widgets.common.view_jobs import view_key
from widgets.facts.split import TableFirstSplitter, button_bar
from widgets.openclaw.memory_index_models import (
    WARN_STYLE,
    CandidateModel,
    FileModel,
    Snapshot,
    agent_of,
    cache_model,
    chunk_model,
    load_snapshot,
    meta_model,
    utc_text,
)

if TYPE_CHECKING:
    from core.openclaw.memindex_records import IndexChunk
    from core.openclaw.memsearch_records import MemoryCandidate, MemorySearchResult
    from widgets.common.jobs import JobRunner


# -- the view -------------------------------------------------------------------------


class MemoryIndexView(QWidget):
    """Browse an OpenClaw memory index and run its search, explained.

    Call :meth:`set_home`; the first index loads at once. ``loaded`` and
    ``search_finished`` are emitted when a load or a search lands (for tests and
    the status bar); ``failed`` with a message naming the file otherwise.
    """

    loaded = Signal(object)
    search_finished = Signal(object)
    failed = Signal(str)

    def __init__(self, parent: QWidget | None = None, runner: JobRunner | None = None) -> None:
        super().__init__(parent)
        self._runner = runner if runner is not None else default_runner()
        # A newer load (or search) drops whatever an older one still delivers.
        self._load_key = view_key(self, self._runner, "memory-index-load")
        self._search_key = view_key(self, self._runner, "memory-index-search")
        self._config: Path | None = None
        self._workspace: Path | None = None
        self.snapshot: Snapshot | None = None
        self.result: MemorySearchResult | None = None
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

        self.index_combo = QComboBox()
        self.index_combo.setToolTip("The agent whose memory index is shown")
        self.index_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.index_combo.setMinimumContentsLength(16)
        self.index_combo.currentIndexChanged.connect(self._on_index_chosen)
        self.status_label = QLabel()
        self.status_label.setTextFormat(Qt.TextFormat.RichText)
        # Beside the tabs it takes the room left and never widens the page.
        self.status_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        # The picker and the index's figures sit beside the tabs: the table gets the height.
        corner = QWidget()
        top = QHBoxLayout(corner)
        top.setContentsMargins(8, 0, 2, 0)
        pick = QLabel("&Agent index:")
        pick.setBuddy(self.index_combo)
        top.addWidget(pick)
        top.addWidget(self.index_combo)
        top.addWidget(self.status_label, 1)

        self.tabs = QTabWidget()
        self.candidates = CandidateModel(self)
        self.files = FileModel(self)
        self.chunks = chunk_model(self)
        self.cache = cache_model(self)
        self.meta = meta_model(self)
        self.chunk_proxy = self._proxy(self.chunks)
        self.candidate_proxy = self._proxy(self.candidates)
        self.tabs.addTab(self._search_tab(mono), "&Search")
        self.files_table = self._table(self._proxy(self.files))
        self.tabs.addTab(self.files_table, "&Files")
        self.tabs.addTab(self._chunks_tab(mono), "&Chunks")
        self.cache_table = self._table(self._proxy(self.cache))
        self.tabs.addTab(self.cache_table, "&Embedding cache")
        self.meta_table = self._table(self.meta, sortable=False)
        self.tabs.addTab(self.meta_table, "&Meta")

        self.tabs.setCornerWidget(corner, Qt.Corner.TopRightCorner)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 0)
        layout.addWidget(self.tabs, 1)
        self.set_home(None, [], None, None)

    # -- building -----------------------------------------------------------------

    def _proxy(self, model: RecordTableModel[Any]) -> QSortFilterProxyModel:
        proxy = QSortFilterProxyModel(self)
        proxy.setSourceModel(model)
        proxy.setSortRole(SortRole)
        return proxy

    def _table(self, model: Any, sortable: bool = True) -> QTableView:
        table = QTableView()
        table.setModel(model)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSortingEnabled(sortable)
        if sortable:
            table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        table.setWordWrap(False)
        table.verticalHeader().hide()
        table.verticalHeader().setDefaultSectionSize(22)
        header = table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        return table

    def _search_tab(self, mono: QFont) -> QWidget:
        self.query_edit = QLineEdit(placeholderText="what memory search should find…")
        self.query_edit.returnPressed.connect(self.run_search)
        self.max_spin = QSpinBox(minimum=1, maximum=200, value=6)
        self.max_spin.setToolTip("maxResults")
        self.min_spin = QDoubleSpinBox(minimum=0.0, maximum=1.0, singleStep=0.05, decimals=2)
        self.min_spin.setValue(0.35)
        self.min_spin.setToolTip("minScore")
        self.now_edit = QDateTimeEdit(calendarPopup=True, displayFormat="yyyy-MM-dd HH:mm:ss 'UTC'")
        self.now_edit.setTimeZone(QTimeZone.utc())
        self.now_edit.setToolTip("The search's clock: dated notes decay against it")
        self.now_button = QPushButton("N&ow")
        self.now_button.setToolTip("Set the clock to the current time")
        self.now_button.clicked.connect(self._on_now_clicked)
        self.search_button = QPushButton("Sea&rch", default=True)
        self.search_button.clicked.connect(self.run_search)
        self.only_results = QCheckBox("Only &returned results")
        self.only_results.toggled.connect(self._on_only_results_toggled)
        # The query and its knobs in one row, the results below; how the search ran
        # (mode, clock, limits) is said under them, beside the selected snippet.
        row = QHBoxLayout()
        row.setSpacing(4)
        q = QLabel("&Query:")
        q.setBuddy(self.query_edit)
        row.addWidget(q)
        self.query_edit.setMinimumWidth(140)
        row.addWidget(self.query_edit, 1)
        row.addWidget(self.search_button)
        row.addSpacing(8)
        knobs = button_bar("Search settings")  # what does not fit is behind "»"
        for text, widget in (
            ("Ma&x ", self.max_spin),
            (" Mi&n score ", self.min_spin),
            (" &Time ", self.now_edit),
        ):
            label = QLabel(text)
            label.setBuddy(widget)
            knob = QWidget()  # a label overflows with its box, never alone
            pair = QHBoxLayout(knob)
            pair.setContentsMargins(0, 0, 0, 0)
            pair.setSpacing(2)
            pair.addWidget(label)
            pair.addWidget(widget)
            knobs.addWidget(knob)
        knobs.addWidget(self.now_button)
        knobs.addWidget(self.only_results)
        row.addWidget(knobs, 1)
        self.mode_label = QLabel(
            wordWrap=True, textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse
        )
        self.results_table = self._table(self.candidate_proxy)
        self.results_table.selectionModel().currentRowChanged.connect(self._on_candidate_changed)
        self.snippet_view = QPlainTextEdit(readOnly=True)
        self.snippet_view.setFont(mono)
        detail = QWidget()
        below = QVBoxLayout(detail)
        below.setContentsMargins(0, 2, 0, 0)
        below.setSpacing(2)
        below.addWidget(self.mode_label)
        below.addWidget(self.snippet_view, 1)
        tab = QWidget()
        box = QVBoxLayout(tab)
        box.setContentsMargins(2, 2, 2, 2)
        box.setSpacing(2)
        box.addLayout(row)
        box.addWidget(TableFirstSplitter(self.results_table, detail), 1)
        return tab

    def _chunks_tab(self, mono: QFont) -> QWidget:
        self.file_filter = QComboBox()
        self.file_filter.setToolTip("Show the chunks of one file")
        self.file_filter.currentIndexChanged.connect(self._on_file_filter_changed)
        self.chunks_table = self._table(self.chunk_proxy)
        self.chunks_table.selectionModel().currentRowChanged.connect(self._on_chunk_changed)
        self.chunk_text = QPlainTextEdit(readOnly=True)
        self.chunk_text.setFont(mono)
        split = TableFirstSplitter(self.chunks_table, self.chunk_text)
        tab = QWidget()
        box = QVBoxLayout(tab)
        box.setContentsMargins(4, 4, 4, 4)
        box.setSpacing(4)
        row = QHBoxLayout()
        label = QLabel("F&ile:")
        label.setBuddy(self.file_filter)
        row.addWidget(label)
        row.addWidget(self.file_filter, 1)
        box.addLayout(row)
        box.addWidget(split, 1)
        return tab

    # -- public -------------------------------------------------------------------

    def set_home(
        self,
        state_dir: Path | None,
        index_paths: list[Path],
        config_path: Path | None,
        workspace: Path | None,
    ) -> None:
        """Show the memory indexes of one OpenClaw home (the first loads at once).

        Parameters
        ----------
        state_dir
            The OpenClaw state folder (only shown).
        index_paths
            Agent databases / legacy ``memory/<id>.sqlite`` files holding an index.
        config_path
            ``openclaw.json``: the search's provider, endpoint, maxResults, minScore.
        workspace
            The agent's workspace: file staleness, and the decay of undated notes.
            None: each agent's own, resolved from the config as OpenClaw does.
        """
        self._config, self._workspace = config_path, workspace
        self._state_dir = state_dir
        for key in (self._load_key, self._search_key):
            self._runner.cancel(key)  # anything in flight is stale
        self.snapshot, self.result = None, None
        for model in (self.files, self.chunks, self.cache, self.meta, self.candidates):
            model.set_records([])
        self.snippet_view.clear()
        self.chunk_text.clear()
        self.mode_label.clear()
        self._on_now_clicked()
        self.index_combo.blockSignals(True)
        self.index_combo.clear()
        for path in index_paths:
            self.index_combo.addItem(f"{agent_of(Path(path))}  —  {path}", Path(path))
        self.index_combo.blockSignals(False)
        has = bool(index_paths)
        for w in (self.query_edit, self.search_button, self.index_combo):
            w.setEnabled(has)
        self._set_status("" if has else "No OpenClaw memory index in this place.")
        if has:
            self.index_combo.setCurrentIndex(0)
            self._load(Path(index_paths[0]))

    def current_index(self) -> Path | None:
        """The index shown."""
        data = self.index_combo.currentData()
        return data if isinstance(data, Path) else None

    def now_ms(self) -> int:
        """The search clock (epoch milliseconds, UTC)."""
        return int(self.now_edit.dateTime().toMSecsSinceEpoch())

    def set_now_ms(self, ms: int) -> None:
        """Set the search clock."""
        self.now_edit.setDateTime(QDateTime.fromMSecsSinceEpoch(ms, QTimeZone.utc()))

    @Slot()
    def run_search(self) -> None:
        """Search the index shown with the form's query and knobs, off the GUI thread."""
        path = self.current_index()
        query = self.query_edit.text().strip()
        if path is None or not query:
            return
        home = MemoryHome(agent_of(path), path, self._config, self._workspace_of(path), ())
        settings = load_settings(home)
        max_results, min_score, now = self.max_spin.value(), self.min_spin.value(), self.now_ms()
        self.mode_label.setText("Searching…")

        def work(**_job: object) -> MemorySearchResult:
            with builds_apart():  # no search waits seconds for the index's tables
                return run_search(
                    home,
                    query,
                    now_ms=now,
                    max_results=max_results,
                    min_score=min_score,
                    settings=settings,
                    check=True,  # as OpenClaw: an index built for another config is paused
                )

        self._runner.submit(
            "memory index search",
            work,
            key=self._search_key,
            done=self._on_search_done,
            failed=self._on_search_failed,
        )

    def _workspace_of(self, path: Path) -> Path | None:
        """The workspace given to :meth:`set_home`, else the agent's from the config."""
        if self._workspace is not None:
            return self._workspace
        state = self._state_dir
        if state is None and path.name == "openclaw-agent.sqlite" and len(path.parents) > 3:
            state = path.parents[3]
        return agent_workspace(self._config, agent_of(path), state)

    def _load(self, path: Path) -> None:
        self._set_status(f"Reading {path.name}…")
        workspace = self._workspace_of(path)
        self._runner.submit(
            "memory index load",
            lambda **_job: load_snapshot(path, workspace),
            key=self._load_key,
            done=self._on_loaded,
            failed=self._on_load_failed,
        )

    def _on_loaded(self, snap: Snapshot) -> None:
        self.snapshot = snap
        self.files.set_records(snap.files)
        self.chunks.set_records(snap.chunks)
        self.cache.set_records(snap.cache)
        self.meta.set_records(snap.meta)
        for table in (self.files_table, self.chunks_table, self.cache_table, self.meta_table):
            table.resizeColumnsToContents()
        self.file_filter.blockSignals(True)
        self.file_filter.clear()
        self.file_filter.addItem(f"All files ({len(snap.chunks):,} chunks)", None)
        for path in sorted({c.path for c in snap.chunks}):
            self.file_filter.addItem(path, path)
        self.file_filter.blockSignals(False)
        self._on_file_filter_changed()
        stale = sum(1 for f in snap.files if f.state in ("stale", "missing", "new-unindexed"))
        text = f"{len(snap.files):,} files, {len(snap.chunks):,} chunks"
        if stale:
            text += f"; <span style='{WARN_STYLE}'>{stale} file(s) changed since indexing</span>"
        if snap.problems:
            text += f"; <span style='{WARN_STYLE}'>{snap.problems[0].message}</span>"
        self._set_status(text)
        self.loaded.emit(snap)

    def _on_search_done(self, result: MemorySearchResult) -> None:
        self.result = result
        self._show_candidates()
        returned = len(result.results)
        if result.mode == "hybrid":
            text = (
                f"<b>Hybrid</b> search (0.7 vector + 0.3 keyword) with model"
                f" <code>{result.model}</code>: {returned} result(s) of"
                f" {len(result.candidates)} candidates."
            )
        else:
            text = (
                f"<b style='{WARN_STYLE}'>{result.mode.upper()}</b> search: {returned} result(s)."
                f" <span style='{WARN_STYLE}'>{result.reason or ''}</span>"
            )
        text += (
            f"<br>Clock {utc_text(result.now_ms)} UTC, minScore {result.min_score:g},"
            f" maxResults {result.max_results}."
        )
        known = set(self.snapshot.problems) if self.snapshot is not None else set()
        news = [p for p in result.problems if p not in known]
        if news:
            text += f"<br><span style='{WARN_STYLE}'>{news[0].message}</span>"
        self.mode_label.setText(text)
        self.search_finished.emit(result)

    def _on_load_failed(self, message: str) -> None:
        self._show_failure(self.status_label, message)

    def _on_search_failed(self, message: str) -> None:
        self._show_failure(self.mode_label, message)

    def _set_status(self, text: str) -> None:
        """The index's figures beside the tabs (the whole text on hover when cut)."""
        self.status_label.setText(text)
        self.status_label.setToolTip(text)

    def _show_failure(self, label: QLabel, message: str) -> None:
        label.setText(f"<span style='color:#c62828;'>{html.escape(message)}</span>")
        label.setToolTip(message)
        self.failed.emit(message)

    # -- handlers -----------------------------------------------------------------

    def _show_candidates(self) -> None:
        result = self.result
        if result is None:
            self.candidates.set_records([])
            return
        rows = result.results if self.only_results.isChecked() else result.candidates
        self.candidates.set_records(rows)
        self.results_table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.results_table.resizeColumnsToContents()
        if rows:
            self.results_table.selectRow(0)

    @Slot(int)
    def _on_index_chosen(self, _row: int) -> None:
        path = self.current_index()
        if path is not None:
            self.result = None
            self.candidates.set_records([])
            self._load(path)

    @Slot()
    def _on_now_clicked(self) -> None:
        self.now_edit.setDateTime(QDateTime.currentDateTimeUtc())

    @Slot(bool)
    def _on_only_results_toggled(self, _checked: bool) -> None:
        self._show_candidates()

    @Slot()
    def _on_file_filter_changed(self) -> None:
        path = self.file_filter.currentData()
        pattern = "" if path is None else "^" + QRegularExpression.escape(str(path)) + "$"
        self.chunk_proxy.setFilterKeyColumn(0)
        self.chunk_proxy.setFilterRegularExpression(QRegularExpression(pattern))

    @Slot(QModelIndex, QModelIndex)
    def _on_candidate_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        c: MemoryCandidate | None = current.data(RecordRole) if current.isValid() else None
        self.snippet_view.setPlainText("" if c is None else c.hit.snippet)

    @Slot(QModelIndex, QModelIndex)
    def _on_chunk_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        chunk: IndexChunk | None = current.data(RecordRole) if current.isValid() else None
        self.chunk_text.setPlainText("" if chunk is None else chunk.text)
