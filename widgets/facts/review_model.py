"""The review queue's table model and the side-by-side detail text (view in review_queue)."""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont
from typing_extensions import override

from core.knowledge.review import ReviewItem
from core.recall.updater import words
from widgets.common.record_model import Column, RecordTableModel

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.knowledge.review import Compared

Index = QModelIndex | QPersistentModelIndex
OP_COLORS: dict[str, str] = {  # Okabe-Ito: readable on light and dark, colour-blind safe
    "ADD": "#009E73",
    "UPDATE": "#0072B2",
    "SUPERSEDE": "#E69F00",
    "DELETE": "#D55E00",
    "NONE": "#8a8a8a",
}
OP_TIPS: dict[str, str] = {
    "ADD": "Append a new fact",
    "UPDATE": "Append a new version of the matched fact (same id)",
    "SUPERSEDE": "Append a new fact and mark the matched one superseded by it",
    "DELETE": "Append a deletion of the matched fact",
    "NONE": "Nothing to write (already known); shown for reference",
}
STATE_LABELS: dict[str, str] = {
    "pending": "pending",
    "accepted": "✓ accepted",
    "edited": "✎ edited",
    "rejected": "✗ rejected",
}
STATE_COLORS: dict[str, str] = {"accepted": "#009E73", "edited": "#0072B2", "rejected": "#D55E00"}
WARNING_COLOR = "#D55E00"
_SPLIT = re.compile(r"(\s+)")


def compared_text(item: ReviewItem) -> str:
    """The fact the proposal was matched with, one line (``—`` when none)."""
    if not item.compared:
        return "—"
    first = item.compared[0]
    if first.proposal is not None:
        return f"(proposal {item.batch}.{first.proposal + 1}) {first.content}"
    return first.content


def state_text(item: ReviewItem) -> str:
    """The state as the table shows it; a note (not written last time) adds a warning."""
    label = STATE_LABELS[item.state]
    return f"⚠ {label}" if item.note else label


def similarity_text(item: ReviewItem) -> str:
    """Similarity with three decimals, ``—`` when nothing was compared."""
    return f"{item.similarity:.3f}" if item.compared or item.similarity else "—"


def _one_line(text: str) -> str:
    return " ".join(text.split())


COLUMNS: tuple[Column[ReviewItem], ...] = (
    Column("#", lambda r: r.label, lambda r: (r.batch, r.operation.index)),
    Column("Op", lambda r: r.op),
    Column("Proposed", lambda r: _one_line(r.candidate.content)),
    Column("Type", lambda r: r.candidate.type),
    Column("Compared against", lambda r: _one_line(compared_text(r))),
    Column("Similarity", similarity_text, lambda r: r.similarity, align_right=True),
    Column("Reason", lambda r: r.reason),
    Column("State", state_text),
)
OP_COL, PROPOSED_COL, COMPARED_COL, REASON_COL, STATE_COL = 1, 2, 4, 6, 7


class ReviewTableModel(RecordTableModel[ReviewItem]):
    """One row per proposal: op, content, type, compared fact, similarity, reason, state."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(COLUMNS, parent)

    def records(self) -> list[ReviewItem]:
        """Every row's item, in queue order."""
        return [self.record(r) for r in range(self.rowCount())]

    def set_record(self, row: int, item: ReviewItem) -> None:
        """Replace the item of *row* (its cells repaint; rows and selection stay)."""
        self._rows[row] = item
        self.dataChanged.emit(self.index(row, 0), self.index(row, self.columnCount() - 1))

    def append_records(self, items: Sequence[ReviewItem]) -> None:
        """Add rows at the end."""
        if not items:
            return
        first = len(self._rows)
        self.beginInsertRows(QModelIndex(), first, first + len(items) - 1)
        self._rows.extend(items)
        self.endInsertRows()

    def row_of(self, key: str) -> int:
        """The row of the item with *key*, or -1."""
        return next((r for r, it in enumerate(self._rows) if it.key == key), -1)

    @override
    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not (0 <= index.row() < self.rowCount()):
            return None
        item = self.record(index.row())
        col = index.column()
        if role == Qt.ItemDataRole.ForegroundRole:
            if col == OP_COL:
                return QColor(OP_COLORS[item.op])
            if col == STATE_COL:
                if item.note:
                    return QColor(WARNING_COLOR)
                color = STATE_COLORS.get(item.state)
                return QColor(color) if color else None
            return None
        if role == Qt.ItemDataRole.FontRole:
            if col == OP_COL or (col == STATE_COL and item.state != "pending"):
                font = QFont()
                font.setBold(True)
                return font
            if col == PROPOSED_COL and item.state == "rejected":
                font = QFont()
                font.setStrikeOut(True)
                return font
            return None
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(item, col)
        return super().data(index, role)

    @staticmethod
    def _tooltip(item: ReviewItem, col: int) -> str | None:
        if col == OP_COL:
            return OP_TIPS[item.op]
        if col == PROPOSED_COL:
            return item.candidate.content
        if col == COMPARED_COL:
            return compared_text(item)
        if col == REASON_COL:
            return item.reason
        if col == STATE_COL:
            return item.note or _state_tip(item)
        return None


def _state_tip(item: ReviewItem) -> str:
    if item.state == "edited":
        return "Accepted with your changes"
    if item.state == "accepted" and item.op == "NONE":
        return "Acknowledged: a NONE proposal writes nothing"
    return {
        "pending": "Not decided yet",
        "accepted": "Will be written by Write accepted",
        "rejected": "Will not be written",
    }.get(item.state, "")


# -- the detail pane ---------------------------------------------------------------------------


def marked_words(text: str, other: frozenset[str], mark: str) -> str:
    """*text* as HTML, words that *other* lacks wrapped in a span styled *mark*."""
    out = []
    for part in _SPLIT.split(text):
        esc = html.escape(part)
        if part and not part.isspace() and part.lower() not in other:
            out.append(f'<span style="{mark}">{esc}</span>')
        else:
            out.append(esc)
    return "".join(out).replace("\n", "<br>")


def _fact_id(item: ReviewItem, c: Compared) -> str:
    if c.fact is None:
        return f"proposal {item.batch}.{c.proposal + 1}" if c.proposal is not None else ""
    return f"fact <code>{html.escape(c.fact.id)}</code>"


def proposed_html(item: ReviewItem, added_mark: str, muted: str) -> str:
    """The left pane: the proposal, its words that the target lacks highlighted."""
    cand = item.candidate
    target = item.compared[0] if item.compared and item.compared[0].is_target else None
    other = words(target.content) if target else frozenset()
    body = marked_words(cand.content, other, added_mark) if target else html.escape(cand.content)
    color = OP_COLORS[item.op]
    parts = [
        f'<p><b style="color:{color}">{item.op}</b> &nbsp;<b>{html.escape(cand.type)}</b>'
        + (" &nbsp;<i>(edited)</i>" if item.edit is not None else "")
        + "</p>",
        f"<p>{body.replace(chr(10), '<br>')}</p>",
    ]
    if cand.context:
        parts.append(f'<p style="color:{muted}">Context: {html.escape(cand.context)}</p>')
    if item.new_id and item.op in ("ADD", "SUPERSEDE"):
        parts.append(f'<p style="color:{muted}">New id <code>{html.escape(item.new_id)}</code></p>')
    parts.append(f"<p><b>Why:</b> {html.escape(item.reason)}</p>")
    if item.source:
        parts.append(f'<p style="color:{muted}">From {html.escape(item.source)}</p>')
    if item.note:
        parts.insert(
            0, f'<p style="color:{WARNING_COLOR}"><b>Not written:</b> {html.escape(item.note)}</p>'
        )
    return "".join(parts)


def compared_html(item: ReviewItem, removed_mark: str, muted: str) -> str:
    """The right pane: the facts the proposal was compared against, the target first."""
    if not item.compared:
        return f'<p style="color:{muted}">No same-type fact shares a word with this proposal.</p>'
    mine = words(item.candidate.content)
    parts = []
    for n, c in enumerate(item.compared):
        if c.is_target:
            head = "Matched" if item.op not in ("NONE",) else "Already known as"
        else:
            head = "Closest" if n == 0 else "Also close"
        status = f" · {c.fact.status}" if c.fact is not None and c.fact.status != "active" else ""
        parts.append(
            f"<p><b>{head}</b> · similarity <b>{c.similarity:.3f}</b> · "
            f"{html.escape(c.type)} · {_fact_id(item, c)}{status}</p>"
        )
        text = (
            marked_words(c.content, mine, removed_mark) if c.is_target else html.escape(c.content)
        )
        parts.append(f"<p>{text}</p>")
        if c.fact is not None and c.fact.context:
            parts.append(f'<p style="color:{muted}">Context: {html.escape(c.fact.context)}</p>')
        if c.is_target and len(item.compared) > 1:
            parts.append("<hr>")
    return "".join(parts)
