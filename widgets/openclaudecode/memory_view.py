"""Search an OpenClaudeCode memory (``memory_fts``) as the agent does, read-only.

A query box, a channel filter and a table of hits with the agent's score, FTS5's raw
bm25 rank, the session key, the chunk's time and its text. The search runs as a job
(:func:`widgets.common.jobs.default_runner`); a newer search replaces an older one.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.openclaudecode.memory_fts import DEFAULT_MAX_RESULTS, MemoryFtsHit, search_memory
from widgets.common.jobs import JobRunner, default_runner
from widgets.common.record_model import Column, RecordTableModel

if TYPE_CHECKING:
    from pathlib import Path

    from core.dataset.load import DataSet
    from core.openclaudecode.memory_fts import MemoryFtsResult
    from widgets.common.state import AppState

ALL_CHANNELS = "All channels"
NOTE = (
    "OpenClaudeCode's memory (memory_fts): every word must match (quoted, AND-joined); "
    "ranked by FTS5's bm25; score as the agent's bm25RankToScore. Read-only."
)


def _when(ms: int | None) -> str:
    if ms is None:
        return ""
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):
        return str(ms)


HIT_COLUMNS: tuple[Column[MemoryFtsHit], ...] = (
    Column("Score", lambda h: f"{h.score:.4f}", lambda h: h.score, align_right=True),
    Column("bm25 rank", lambda h: f"{h.rank:.4f}", lambda h: h.rank, align_right=True),
    Column("Session key", lambda h: h.session_key),
    Column("Source", lambda h: h.source),
    Column("When (UTC)", lambda h: _when(h.timestamp), lambda h: h.timestamp or 0),
    Column("Text", lambda h: " ".join(h.snippet.split())),
)


class OccMemoryView(QWidget):
    """The memory search page of an OpenClaudeCode data directory."""

    def __init__(self, parent: QWidget | None = None, *, runner: JobRunner | None = None) -> None:
        super().__init__(parent)
        self._runner = runner if runner is not None else default_runner()
        self._database: Path | None = None
        self.query = QLineEdit(placeholderText="Words OpenClaudeCode's memory search looks for…")
        self.query.setAccessibleName("OpenClaudeCode memory query")
        self.query.returnPressed.connect(self.search)
        self.channel = QComboBox()
        self.channel.setAccessibleName("Channel")
        self.channel.addItem(ALL_CHANNELS)
        self.max_results = QSpinBox(minimum=1, maximum=1000, value=DEFAULT_MAX_RESULTS)
        self.max_results.setPrefix("max ")
        self.max_results.setAccessibleName("Maximum results")
        self.search_button = QPushButton("&Search")
        self.search_button.clicked.connect(self.search)
        row = QHBoxLayout()
        row.addWidget(self.query, 1)
        row.addWidget(self.channel)
        row.addWidget(self.max_results)
        row.addWidget(self.search_button)
        self.note = QLabel(NOTE, wordWrap=True)
        self.note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.model: RecordTableModel[MemoryFtsHit] = RecordTableModel(HIT_COLUMNS, self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setAccessibleName("OpenClaudeCode memory results")
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.setWordWrap(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(4)
        lay.addLayout(row)
        lay.addWidget(self.note)
        lay.addWidget(self.table, 1)
        self.set_data(None)

    def attach(self, state: AppState) -> None:
        """Follow the app's data set."""
        state.data_changed.connect(self.set_data)

    def set_data(self, data: DataSet | None) -> None:
        """A new data set: its OpenClaudeCode memory, if it has one."""
        home = data.discovery.openclaudecode if data is not None else None
        self._database = home.database if home is not None and home.has_memory else None
        self.model.set_records([])
        self.channel.clear()
        self.channel.addItem(ALL_CHANNELS)
        if data is not None and home is not None:
            keys = {s.key for s in data.summaries if s.key}
            self.channel.addItems(sorted({k.split(":", 1)[0] for k in keys}))
        enabled = self._database is not None
        for w in (self.query, self.channel, self.max_results, self.search_button):
            w.setEnabled(enabled)
        self.note.setText(
            f"{NOTE}\n{self._database}"
            if enabled
            else "Open an OpenClaudeCode data directory (a database with memory_fts) to "
            "search its memory."
        )

    def search(self) -> None:
        """Search for the query box's words (a job; the newest search wins)."""
        database = self._database
        if database is None:
            return
        query = self.query.text()
        channel = self.channel.currentText()
        chan = None if channel in ("", ALL_CHANNELS) else channel
        limit = self.max_results.value()
        self.note.setText("Searching…")
        self._runner.submit(
            "OpenClaudeCode memory search",
            lambda **_: search_memory(database, query, max_results=limit, channel=chan),
            key=f"occ-memory:{id(self)}",
            done=self._on_search_done,
            failed=self._on_search_failed,
        )

    def _on_search_done(self, result: MemoryFtsResult) -> None:
        self.model.set_records(list(result.hits))
        self.table.resizeColumnsToContents()
        if result.reason is not None:
            self.note.setText(f"No search: {result.reason}.")
            return
        self.note.setText(
            f"{len(result.hits)} hit(s) for MATCH {result.match} in {result.database}"
        )

    def _on_search_failed(self, message: str) -> None:
        self.model.set_records([])
        self.note.setText(f"Search failed: {message}")
