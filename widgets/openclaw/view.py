"""The OpenClaw tab: the session's row, OpenClaw's transcript search, its memory index.

* **Session row**: what OpenClaw keeps per session key (``session_nodes`` and
  ``session_windows`` of its 2026.9 agent database, or ``sessions.json`` before),
  read-only: key, channel and conversation, model, token counters, compaction count,
  lifecycle times, and which store it came from.
* **Transcript search**: the database's own full-text index, ``session_transcript_fts``,
  queried as OpenClaw's session search does (:meth:`AgentDb.search_transcripts`):
  what OpenClaw would find, beside memlens's recall. Activating a hit shows its entry.
* **Memory index**: OpenClaw's memory index (a view set by the window).
* **Agents**: each agent's sessions, messages and compactions, and its largest and
  latest session's context (:func:`core.openclaw.agentdb_stats.agent_figures`):
  never a sum of unrelated sessions' context sizes, which would measure nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.io.problems import FormatError
from core.io.timefmt import is_date_ms, utc_minute_ms
from core.openclaw.agentdb import AgentDb, session_path
from core.openclaw.agentdb_stats import AgentFigures, agent_figures
from core.openclaw.session_rows import RowField, find_row, row_fields
from widgets.common.jobs import default_runner
from widgets.common.record_model import Column, RecordRole, RecordTableModel
from widgets.common.view_jobs import view_key

if TYPE_CHECKING:
    from pathlib import Path

    from core.dataset.load import DataSet
    from core.openclaw.agentdb_search import TranscriptHit
    from core.transcript.model import Session
    from widgets.common.jobs import JobRunner
    from widgets.openclaw.memory_index_view import MemoryIndexView

ROW_COLUMNS: tuple[Column[RowField], ...] = (
    Column("Group", lambda f: f.group),
    Column("Field", lambda f: f.label),
    Column("Value", lambda f: f.value),
    Column("Key", lambda f: f.key),
)


@dataclass(frozen=True, slots=True)
class _Hit:
    agent: str
    db: str
    hit: TranscriptHit


def _when(ms: int | None) -> str:
    return utc_minute_ms(ms) if ms is not None and is_date_ms(ms) else ""


HIT_COLUMNS: tuple[Column[_Hit], ...] = (
    Column("Score", lambda h: f"{h.hit.score:.4g}", lambda h: h.hit.score, align_right=True),
    Column("Agent", lambda h: h.agent),
    Column("Session", lambda h: h.hit.session_id),
    Column("Role", lambda h: h.hit.role or ""),
    Column("When (UTC)", lambda h: _when(h.hit.timestamp), lambda h: h.hit.timestamp or 0),
    Column("Snippet", lambda h: " ".join(h.hit.snippet.split())),
)


def _tokens(n: int | None) -> str:
    return "…" if n is None else f"{n:,}"


def _in_session(n: int | None, session: str) -> str:
    return f"{_tokens(n)}  ({session})" if session else _tokens(n)


def _last(seconds: float) -> str:
    return utc_minute_ms(int(seconds * 1000)) if seconds > 0 else ""


AGENT_COLUMNS: tuple[Column[AgentFigures], ...] = (
    Column("Agent", lambda a: a.agent),
    Column("Sessions", lambda a: a.sessions, align_right=True),
    Column("Messages", lambda a: a.messages, align_right=True),
    Column("Compactions", lambda a: a.compactions, align_right=True),
    Column(
        "Largest context (est.)",
        lambda a: _in_session(a.largest_context, a.largest_session),
        lambda a: a.largest_context or -1,
    ),
    Column(
        "Latest session's context (est.)",
        lambda a: _in_session(a.latest_context, a.latest_session),
        lambda a: a.latest_context or -1,
    ),
    Column("Last active (UTC)", lambda a: _last(a.last_active), lambda a: a.last_active),
)
AGENTS_NOTE = (
    "Counts add up over an agent's sessions; a context size is one session's snapshot "
    "(pi's estimate, chars / 4), so each agent shows its largest and latest, never a sum."
)


def _table(model: RecordTableModel[object], name: str) -> QTableView:
    view = QTableView()
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.verticalHeader().hide()
    view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 6)
    view.horizontalHeader().setStretchLastSection(True)
    view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    view.setWordWrap(False)
    view.setAccessibleName(name)
    return view


def search_databases(
    dbs: list[tuple[str, Path]], text: str, session_id: str | None
) -> tuple[str, list[_Hit], list[str]]:
    """Search each agent database's transcript index (a worker's job); best first."""
    hits: list[_Hit] = []
    errors: list[str] = []
    for agent, path in dbs:
        try:
            with AgentDb(path, agent) as db:
                if not db.has_transcript_fts():
                    errors.append(f"{agent}: no transcript index in this database")
                    continue
                found = db.search_transcripts(text, limit=100, session_id=session_id)
        except FormatError as exc:
            errors.append(str(exc))
            continue
        hits += [_Hit(agent, str(path), h) for h in found]
    hits.sort(key=lambda h: -h.hit.score)
    return text, hits, errors


class OpenClawView(QWidget):
    """Session row, transcript search and memory index of current OpenClaw."""

    hit_activated = Signal(str, str)
    """A transcript hit was activated: ``(session path, message id)``."""
    searched = Signal()
    """A transcript search's results (or its failure) are shown."""

    def __init__(self, parent: QWidget | None = None, runner: JobRunner | None = None) -> None:
        super().__init__(parent)
        self._data: DataSet | None = None
        self._session: Session | None = None
        self.memory_view: MemoryIndexView | None = None
        self._runner = runner if runner is not None else default_runner()
        # Transcript searches run off the GUI thread; a newer one drops an older one's hits.
        self._search_key = view_key(self, self._runner, "openclaw-search")
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self._build_row()
        self._build_search()
        self.memory_placeholder = QLabel(
            "Open an OpenClaw home to see its memory index.", alignment=Qt.AlignmentFlag.AlignCenter
        )
        self.tabs.addTab(self.row_page, "Session &row")
        self.tabs.addTab(self.search_page, "&Transcript search")
        self.tabs.addTab(self.memory_placeholder, "&Memory index")
        self._build_agents()
        self.tabs.addTab(self.agents_page, "&Agents")
        self.tabs.currentChanged.connect(self._on_tabs_current_changed)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.tabs)

    # -- building -----------------------------------------------------------------------------
    def _build_row(self) -> None:
        self.row_page = QWidget()
        self.row_source = QLabel(wordWrap=True)
        self.row_source.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.row_model: RecordTableModel[RowField] = RecordTableModel(ROW_COLUMNS, self)
        self.row_table = _table(self.row_model, "Session row")  # type: ignore[arg-type]
        lay = QVBoxLayout(self.row_page)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(4)
        lay.addWidget(self.row_source)
        lay.addWidget(self.row_table, 1)

    def _build_agents(self) -> None:
        self.agents_page = QWidget()
        self.agents_note = QLabel(AGENTS_NOTE, wordWrap=True)
        self.agent_model: RecordTableModel[AgentFigures] = RecordTableModel(AGENT_COLUMNS, self)
        self.agent_table = _table(self.agent_model, "Agents")  # type: ignore[arg-type]
        self.agent_table.setToolTip(AGENTS_NOTE)
        lay = QVBoxLayout(self.agents_page)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(4)
        lay.addWidget(self.agent_table, 1)
        lay.addWidget(self.agents_note)

    def _build_search(self) -> None:
        self.search_page = QWidget()
        self.query = QLineEdit(placeholderText="Words OpenClaw's session search looks for…")
        self.query.setAccessibleName("Transcript search query")
        self.query.returnPressed.connect(self.search)
        self.this_session = QCheckBox("This session only")
        self.this_session.setToolTip("Search the selected session's transcript only")
        self.search_button = QPushButton("&Search")
        self.search_button.clicked.connect(self.search)
        row = QHBoxLayout()
        row.addWidget(self.query, 1)
        row.addWidget(self.this_session)
        row.addWidget(self.search_button)
        self.search_note = QLabel(wordWrap=True)
        self.search_note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.hit_model: RecordTableModel[_Hit] = RecordTableModel(HIT_COLUMNS, self)
        self.hit_table = _table(self.hit_model, "Transcript search results")  # type: ignore[arg-type]
        self.hit_table.activated.connect(self._on_hit_activated)
        self.hit_table.doubleClicked.connect(self._on_hit_activated)
        lay = QVBoxLayout(self.search_page)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(4)
        lay.addLayout(row)
        lay.addWidget(self.search_note)
        lay.addWidget(self.hit_table, 1)
        self.search_note.setText(
            "OpenClaw's own full-text index of user and assistant messages "
            "(session_transcript_fts: every word must match; ranked by bm25)."
        )

    def set_memory_view(self, view: MemoryIndexView) -> None:
        """Put the memory index view in its tab."""
        index = self.tabs.indexOf(self.memory_placeholder)
        self.tabs.removeTab(index)
        self.tabs.insertTab(index, view, "&Memory index")
        self.memory_placeholder.deleteLater()
        self.memory_view = view

    # -- data ---------------------------------------------------------------------------------
    def set_data(self, data: DataSet | None) -> None:
        """A new data set: the search covers its agent databases."""
        self._data = data
        self._session = None
        self.hit_model.set_records([])
        if self.memory_view is not None:
            found = data.discovery if data is not None else None
            home = found.path if found is not None and found.kind == "openclaw-home" else None
            self.memory_view.set_home(
                home,
                list(found.memory_indexes) if found is not None else [],
                found.config if found is not None else None,
                None,  # each agent's own workspace, resolved by the view from the config
            )
        self.refresh_agents()
        self.agent_table.resizeColumnsToContents()
        dbs = data.discovery.databases if data is not None else []
        self.query.setEnabled(bool(dbs))
        self.search_button.setEnabled(bool(dbs))
        if not dbs:
            self.search_note.setText(
                "No OpenClaw agent database here: transcript search needs OpenClaw 2026.9 or "
                "later (its sessions live in agents/<id>/agent/openclaw-agent.sqlite)."
            )
        self.show_session(None)

    def refresh_agents(self) -> None:
        """Figure each agent again (sessions read since, or grown in live mode)."""
        data = self._data
        figures = agent_figures(data.summaries) if data is not None else []
        shown = [self.agent_model.record(r) for r in range(self.agent_model.rowCount())]
        if figures != shown:
            self.agent_model.set_records(figures)

    @Slot(int)
    def _on_tabs_current_changed(self, _index: int) -> None:
        if self.tabs.currentWidget() is self.agents_page:
            self.refresh_agents()

    def show_session(self, session: Session | None) -> None:
        """Show *session*'s row (or say there is none); the agents' figures, if shown, again.

        A hidden Agents page is figured when it is brought forward.
        """
        self._session = session
        if session is not None and self.tabs.currentWidget() is self.agents_page:
            self.refresh_agents()
        if session is None or self._data is None:
            self.row_model.set_records([])
            self.row_source.setText("No session selected.")
            return
        found = find_row(self._data.stores, session)
        if found is None:
            self.row_model.set_records([])
            self.row_source.setText(
                f"No session row names {session.id}: neither an agent database nor a "
                "sessions.json lists it (a pi session, or one OpenClaw forgot)."
            )
            return
        name, entry = found
        store = self._data.stores[name]
        era = "OpenClaw agent database" if name.endswith("(sqlite)") else "sessions.json"
        self.row_source.setText(f"From {era}: {store.path} (read-only)")
        self.row_model.set_records(row_fields(entry))
        self.row_table.resizeColumnsToContents()

    # -- search -------------------------------------------------------------------------------
    @Slot()
    def search(self) -> None:
        """Run the query on every agent database (or the selected session's), in a worker."""
        data = self._data
        text = self.query.text().strip()
        if data is None or not text:
            return
        only = self._session if self.this_session.isChecked() else None
        dbs = [
            (a.name, a.database)
            for a in data.discovery.agents
            if a.database is not None and (only is None or only.db == str(a.database))
        ]
        sid = only.id if only is not None else None
        self.search_note.setText(f"Searching OpenClaw's transcript index for {text!r}…")
        self._runner.submit(
            "transcript search",
            lambda **_job: search_databases(dbs, text, sid),
            key=self._search_key,
            done=self._on_searched,
            failed=self._on_search_failed,
        )

    def _on_searched(self, result: tuple[str, list[_Hit], list[str]]) -> None:
        text, hits, errors = result
        self.hit_model.set_records(hits)
        self.hit_table.resizeColumnsToContents()
        note = f"{len(hits)} hit(s) for {text!r} in OpenClaw's transcript index"
        self.search_note.setText("; ".join([note, *errors]))
        self.searched.emit()

    def _on_search_failed(self, message: str) -> None:
        self.search_note.setText(f"Transcript search failed: {message}")
        self.searched.emit()

    @Slot(QModelIndex)
    def _on_hit_activated(self, index: QModelIndex) -> None:
        hit = index.siblingAtColumn(0).data(RecordRole)
        if isinstance(hit, _Hit):
            path = session_path(hit.db, hit.hit.session_id)
            self.hit_activated.emit(path, hit.hit.message_id or "")
