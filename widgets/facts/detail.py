"""The facts view's detail pane: one fact, its history, chain, sources and provenance."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableView,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core.io import jsonio
from core.io.timefmt import utc_minute_ms
from core.knowledge.history import ChainLink, HistoryRow, fact_chain, fact_history
from widgets.common.record_model import Column, RecordRole, SortRole
from widgets.common.tables import table_view
from widgets.common.text import esc
from widgets.common.tip_model import TipTableModel
from widgets.facts.model import STATUS_COLORS, STATUS_TIPS
from widgets.facts.provenance_pane import ProvenancePane

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.knowledge.provenance import Provenance
    from core.knowledge.sources import SourceHit
    from core.store.knowledge import Fact, KnowledgeLog

HISTORY_TAB, CHAIN_TAB, SOURCES_TAB, PROVENANCE_TAB = range(4)
T = TypeVar("T")
Index = QModelIndex | QPersistentModelIndex


def _oneline(text: str) -> str:
    return " ".join(text.split())


def _when(ms: int | None) -> str:
    return "" if ms is None else utc_minute_ms(ms)


HISTORY_COLUMNS: tuple[Column[HistoryRow], ...] = (
    Column("#", lambda r: r.version, align_right=True),
    Column("Line", lambda r: r.line, align_right=True, thousands=False),
    Column("Byte", lambda r: r.offset, align_right=True),
    Column("Time (UTC)", lambda r: _when(r.timestamp), sort=lambda r: r.timestamp or 0),
    Column("Change", lambda r: r.change),
    Column("Type", lambda r: r.type),
    Column("Content", lambda r: _oneline(r.content)),
    Column("Context", lambda r: _oneline(r.context)),
)
CHAIN_COLUMNS: tuple[Column[ChainLink], ...] = (
    Column("Relation", lambda c: c.relation, sort=lambda c: c.distance),
    Column("Status", lambda c: c.fact.status if c.fact else "not in the log"),
    Column("Type", lambda c: c.fact.type if c.fact else ""),
    Column("Content", lambda c: _oneline(c.fact.content) if c.fact else ""),
    Column("Time (UTC)", lambda c: _when(c.fact.timestamp) if c.fact else ""),
    Column("Id", lambda c: c.fact_id[:8], sort=lambda c: c.fact_id),
)
SOURCE_COLUMNS: tuple[Column[SourceHit], ...] = (
    Column("Score", lambda h: f"{h.score:.2f}", sort=lambda h: h.score, align_right=True),
    Column("Kind", lambda h: h.kind),
    Column("Role", lambda h: h.role),
    Column("Session", lambda h: h.session_id[:8], sort=lambda h: h.session_id),
    Column("Time (UTC)", lambda h: _when(h.timestamp), sort=lambda h: h.timestamp or 0),
    Column("Text", lambda h: _oneline(h.text)[:400]),
    Column("Where", lambda h: f"{h.path.rsplit('/', 1)[-1]}:{h.line}" if h.path else ""),
)


def _history_tip(row: HistoryRow) -> str:
    text = jsonio.dumps(row.record).decode("utf-8", "replace")
    return f"<b>line {row.line}</b>, byte {row.offset:,}: {esc(row.change)}<br><tt>{esc(text)}</tt>"


def _source_tip(hit: SourceHit) -> str:
    body = esc(hit.text[:1500]) + ("…" if len(hit.text) > 1500 else "")
    return (
        f"<b>{hit.kind} {esc(hit.id[:12])}</b> · {esc(hit.role)} · score {hit.score:.3f} "
        f"({esc(hit.detail)})<br><small>{esc(hit.path)}:{hit.line}</small>"
        f"<p style='white-space:pre-wrap'>{body}</p>"
    )


def _chain_tip(link: ChainLink) -> str:
    if link.fact is None:
        return f"{esc(link.fact_id)} is named by supersededBy but is not in the log"
    f = link.fact
    return f"<b>{esc(link.relation)}</b> · {f.status} · {esc(f.id)}<p>{esc(f.content)}</p>"


def _table(model: TipTableModel[Any], widths: Sequence[int]) -> QTableView:
    """The panels' record table over a sortable proxy of *model* (rows multi-selectable)."""
    proxy = QSortFilterProxyModel(model)
    proxy.setSourceModel(model)
    proxy.setSortRole(SortRole)
    view = table_view(proxy, tuple(widths))
    view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
    view.setSortingEnabled(True)
    view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    return view


class FactDetail(QWidget):
    """One fact: its text, every log line, its supersession chain and likely sources.

    Signals
    -------
    fact_activated(str)
        A fact of the chain was activated (Enter or double-click): its id.

    The Provenance tab (:attr:`provenance`, a
    :class:`~widgets.facts.provenance_pane.ProvenancePane`) emits the messages and
    compactions to go to.
    """

    fact_activated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._fact: Fact | None = None
        self.header = QLabel(wordWrap=True)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text = QTextBrowser(openLinks=False)
        self.text.setMaximumHeight(64)
        self.text.setToolTip("The fact as its last line says it")

        self.history_model = TipTableModel(HISTORY_COLUMNS, self, cell_tip=_history_tip)
        self.history_view = _table(self.history_model, (34, 52, 70, 118, 170, 96, 320))
        self.history_view.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.history_view.setToolTip("Every log line of the fact, oldest first")
        self.chain_model = TipTableModel(
            CHAIN_COLUMNS, self, cell_tip=_chain_tip, bold=lambda c: c.distance == 0
        )
        self.chain_view = _table(self.chain_model, (170, 90, 96, 560, 118))
        self.chain_view.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.chain_view.setToolTip(
            "The facts it replaced (supersedes) and that replaced it (superseded by); "
            "Enter or double-click to go there"
        )
        self.chain_view.activated.connect(self._on_chain_activated)
        self.sources_model = TipTableModel(SOURCE_COLUMNS, self, cell_tip=_source_tip)
        self.sources_view = _table(self.sources_model, (52, 70, 80, 76, 118, 620))
        self.sources_view.sortByColumn(0, Qt.SortOrder.DescendingOrder)
        self.sources_view.setToolTip(
            "Segments and transcript messages the fact most likely came from "
            "(search by its content)"
        )
        self.sources_note = QLabel()
        self.sources_note.setEnabled(False)
        sources = QWidget()
        box = QVBoxLayout(sources)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.sources_note)
        box.addWidget(self.sources_view, 1)

        self.provenance = ProvenancePane()

        self.tabs = QTabWidget()
        self.tabs.addTab(self.history_view, "&History")
        self.tabs.addTab(self.chain_view, "C&hain")
        self.tabs.addTab(sources, "&Sources")
        self.tabs.addTab(self.provenance, "&Provenance")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.header)
        layout.addWidget(self.text)
        layout.addWidget(self.tabs, 1)
        self.show_fact(None, None)

    def fact(self) -> Fact | None:
        """The fact shown."""
        return self._fact

    def show_fact(self, log: KnowledgeLog | None, fact_id: str | None) -> None:
        """Show *fact_id* of *log* (None: nothing selected)."""
        fact = log.facts.get(fact_id) if log is not None and fact_id else None
        self._fact = fact
        if log is None or fact is None:
            self.header.setText("<b>No fact selected</b>")
            self.text.setPlainText("Select a fact to see its history, chain and likely sources.")
            self.history_model.set_records([])
            self.chain_model.set_records([])
            self.tabs.setTabText(HISTORY_TAB, "&History")
            self.tabs.setTabText(CHAIN_TAB, "C&hain")
            self.set_sources(None)
            self.set_provenance(None)
            return
        rows = fact_history(log, fact.id)
        chain = fact_chain(log, fact.id)
        color = STATUS_COLORS[fact.status]
        sup = f" → {esc(fact.superseded_by[:8])}" if fact.superseded_by else ""
        context = f" · <i>{esc(fact.context)}</i>" if fact.context else ""
        self.header.setText(
            f"<b>{esc(fact.type)}</b> · "
            f'<span style="color:{color}" title="{STATUS_TIPS[fact.status]}">'
            f"<b>{fact.status}</b></span>{sup} · {_when(fact.timestamp)} UTC{context}<br>"
            f"<small>{esc(fact.id)} · {esc(log.path)}, line {fact.line}</small>"
        )
        self.text.setPlainText(fact.content)
        self.history_model.set_records(rows)
        self.chain_model.set_records(chain)
        self.tabs.setTabText(HISTORY_TAB, f"&History ({len(rows)})")
        self.tabs.setTabText(CHAIN_TAB, f"C&hain ({len(chain)})" if len(chain) > 1 else "C&hain")
        self.history_view.scrollToBottom()

    def set_sources(self, hits: Sequence[SourceHit] | None, note: str = "") -> None:
        """Show the likely sources (None: no search available)."""
        if hits is None:
            self.sources_model.set_records([])
            self.sources_note.setText(note or "No segments or transcripts to search.")
            self.tabs.setTabText(SOURCES_TAB, "&Sources")
            return
        self.sources_model.set_records(list(hits))
        self.sources_note.setText(
            note or f"{len(hits)} likely source(s), best first; score 0 to 1 (hover a row for how)."
        )
        self.tabs.setTabText(SOURCES_TAB, f"&Sources ({len(hits)})")

    def set_provenance(self, prov: Provenance | None, note: str = "") -> None:
        """Show where the fact came from (None: not known, *note* says why)."""
        self.provenance.set_provenance(prov, note)
        label = "&Provenance"
        if prov is not None:
            label += f" ({prov.kind}, {len(prov.messages)})" if prov.messages else f" ({prov.kind})"
        self.tabs.setTabText(PROVENANCE_TAB, label)

    def sources(self) -> list[SourceHit]:
        """The sources shown, in model order."""
        return [self.sources_model.record(r) for r in range(self.sources_model.rowCount())]

    def _on_chain_activated(self, index: QModelIndex) -> None:
        link = index.data(RecordRole)
        if isinstance(link, ChainLink) and link.fact is not None and link.distance != 0:
            self.fact_activated.emit(link.fact_id)
