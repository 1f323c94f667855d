"""A fact's provenance as a table, and the facts that came from a compaction's messages.

:class:`ProvenancePane` (the facts detail's Provenance tab) shows a
:class:`core.knowledge.provenance.Provenance`: one row per source message (recorded
by memlens, or inferred with its score), and under it a row for the compaction that
summarised it and one per summary line keeping the fact. Activating a message row
(Enter or double-click) emits :attr:`ProvenancePane.message_activated`; a compaction
or summary-line row emits :attr:`ProvenancePane.compaction_activated`.

:class:`FactsFromCompaction` is the list the message view's "Facts From These
Messages" opens: the :class:`core.knowledge.provenance.FactLink` records, best
first; activating one emits :attr:`FactsFromCompaction.fact_chosen`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from widgets.common.record_model import Column, RecordRole
from widgets.common.tables import table_view
from widgets.common.text import esc
from widgets.common.tip_model import TipTableModel

if TYPE_CHECKING:
    from core.knowledge.provenance import FactLink, Provenance, SourceMessage, SummaryLine

KIND_NOTES = {
    "recorded": "Recorded by memlens when it wrote the fact",
    "inferred": "Inferred: no record; the messages that say most of it, scored 0 to 1",
    "none": "No record, and no message says enough of it",
}


@dataclass(frozen=True, slots=True)
class ProvenanceRow:
    """One row of the pane: a source message, its compaction, or a summary line."""

    message: SourceMessage
    what: str
    """``message``, ``compaction`` or ``line``."""
    line: SummaryLine | None = None

    @property
    def target(self) -> tuple[str, str, int]:
        """``(session id, entry id, summary line or 0)`` to go to."""
        m, comp = self.message, self.message.compaction
        if self.what == "message" or comp is None:
            return m.session_id, m.entry_id, 0
        return comp.session_id, comp.entry_id, self.line.number if self.line else 0


def _oneline(text: str) -> str:
    return " ".join(text.split())


def _label(row: ProvenanceRow) -> str:
    comp = row.message.compaction
    if row.what == "message" or comp is None:
        return f"message {row.message.entry_id}"
    if row.line is None:
        return f"  ↳ summarised by compaction {comp.entry_id} (#{comp.index})"
    return f"      ↳ summary line {row.line.number} ({row.line.status})"


def _text(row: ProvenanceRow) -> str:
    if row.what == "line" and row.line is not None:
        return _oneline(row.line.text)
    if row.what == "compaction":
        return (
            "no summary line keeps it"
            if not row.message.compaction or not (row.message.compaction.lines)
            else ""
        )
    return _oneline(row.message.text)[:400]


def _score(row: ProvenanceRow) -> str:
    if row.what != "message":
        return ""
    return "recorded" if row.message.recorded else f"{row.message.score:.2f}"


PROVENANCE_COLUMNS: tuple[Column[ProvenanceRow], ...] = (
    Column("Source", _label),
    Column("Score", _score, align_right=True),
    Column("Role", lambda r: r.message.role if r.what == "message" else ""),
    Column("Session", lambda r: r.message.session_id[:8] if r.what == "message" else ""),
    Column("Segment", lambda r: (r.message.segment_id or "")[:8] if r.what == "message" else ""),
    Column("Text", _text),
)


def provenance_rows(prov: Provenance | None) -> list[ProvenanceRow]:
    """The pane's rows for *prov*: each message, then its compaction and summary lines."""
    rows: list[ProvenanceRow] = []
    for m in prov.messages if prov is not None else ():
        rows.append(ProvenanceRow(m, "message"))
        if m.compaction is not None:
            rows.append(ProvenanceRow(m, "compaction"))
            rows += [ProvenanceRow(m, "line", s) for s in m.compaction.lines]
    return rows


def _row_tip(row: ProvenanceRow) -> str:
    m = row.message
    if row.what == "message":
        how = "recorded by memlens" if m.recorded else f"inferred, score {m.score:.3f}"
        body = esc(m.text[:1500]) + ("…" if len(m.text) > 1500 else "")
        return (
            f"<b>{esc(m.role)} {esc(m.entry_id)}</b> · {how}<br><small>{esc(m.path)}:{m.line}"
            f"</small><p style='white-space:pre-wrap'>{body}</p>Enter: go to the message"
        )
    if row.line is not None:
        return (
            f"<b>line {row.line.number}</b> ({row.line.status}): {esc(row.line.text)}"
            "<br>Enter: show the compaction with this line marked"
        )
    return "Enter: show the compaction that summarised this message"


class ProvenancePane(QWidget):
    """A fact's source messages, the compactions that summarised them, their lines.

    Signals
    -------
    message_activated(str, str)
        Session id and entry id of a source message to show.
    compaction_activated(str, str, int)
        Session id, compaction entry id and summary line (0: none) to show.
    """

    message_activated = Signal(str, str)
    compaction_activated = Signal(str, str, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.note = QLabel(wordWrap=True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.model = TipTableModel(
            PROVENANCE_COLUMNS,
            self,
            cell_tip=_row_tip,
            bold=lambda r: r.what == "message" and r.message.recorded,
            dimmed=lambda r: (
                r.what == "compaction" and not (r.message.compaction and r.message.compaction.lines)
            ),
        )
        self.table = table_view(self.model, (340, 70, 80, 76, 76))
        self.table.setToolTip(
            "Where the fact came from: Enter or double-click goes to the message, "
            "or to the compaction that summarised it (a summary line marked)"
        )
        self.table.activated.connect(self._on_table_activated)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)
        self.set_provenance(None)

    def set_provenance(self, prov: Provenance | None, note: str = "") -> None:
        """Show *prov* (None: nothing, with *note* saying why)."""
        self.model.set_records(provenance_rows(prov))
        if prov is None:
            self.note.setText(note or "No transcripts to trace facts in.")
            return
        text = KIND_NOTES[prov.kind]
        record = prov.record or {}
        if prov.kind == "recorded":
            bits = [f"by {record.get('by', '?')}"]
            bits += [f"run {str(record['run'])[:8]}"] if record.get("run") else []
            bits += ["narrowed to the messages that say it"] if record.get("narrowed") else []
            text += " (" + ", ".join(bits) + ")"
        if prov.segments:
            text += f"; segment(s) {', '.join(s[:8] for s in prov.segments)}"
        if prov.missing:
            text += f"; not in the loaded sessions: {', '.join(prov.missing)}"
        self.note.setText(note or text + ".")

    def rows(self) -> list[ProvenanceRow]:
        """The rows shown, in order."""
        return [self.model.record(r) for r in range(self.model.rowCount())]

    def _on_table_activated(self, index: QModelIndex) -> None:
        row = index.data(RecordRole)
        if not isinstance(row, ProvenanceRow):
            return
        session, entry, line = row.target
        if row.what == "message":
            self.message_activated.emit(session, entry)
        else:
            self.compaction_activated.emit(session, entry, line)


FACT_LINK_COLUMNS: tuple[Column[FactLink], ...] = (
    Column("Line", lambda k: k.line_status or ""),
    Column("Source", lambda k: k.kind),
    Column("Score", lambda k: f"{k.score:.2f}", sort=lambda k: k.score, align_right=True),
    Column("Type", lambda k: k.fact.type),
    Column("Status", lambda k: k.fact.status),
    Column("Content", lambda k: _oneline(k.fact.content)),
)


class FactsFromCompaction(QDialog):
    """The facts that came from the messages a compaction summarised; pick one to see it.

    Signals
    -------
    fact_chosen(str)
        The id of the fact activated (Enter or double-click); the dialog closes.
    """

    fact_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Facts From These Messages")
        self.note = QLabel(wordWrap=True)
        self.model = TipTableModel(
            FACT_LINK_COLUMNS,
            self,
            cell_tip=lambda k: (
                f"<b>{esc(k.fact.id)}</b><p>{esc(k.fact.content)}</p>Enter: show it in Facts"
            ),
            bold=lambda k: k.line_status is not None,
        )
        self.table = table_view(self.model, (92, 70, 50, 96, 80))
        self.table.activated.connect(self._on_table_activated)
        layout = QVBoxLayout(self)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)
        self.resize(820, 360)

    def set_links(self, links: list[FactLink], title: str) -> None:
        """Show *links* (best first) under *title*; the first is current."""
        self.model.set_records(links)
        self.note.setText(
            f"{title}: {len(links)} fact(s), those the line keeps first, then recorded, then "
            "inferred by score. Enter or double-click shows one in Facts."
            if links
            else f"{title}: no fact came from these messages."
        )
        if links:
            self.table.setCurrentIndex(self.model.index(0, 0))
        self.table.setFocus()

    def links(self) -> list[FactLink]:
        """The facts listed, in order."""
        return [self.model.record(r) for r in range(self.model.rowCount())]

    def _on_table_activated(self, index: QModelIndex) -> None:
        link = index.data(RecordRole)
        if link is not None:
            self.fact_chosen.emit(link.fact.id)
            self.accept()
