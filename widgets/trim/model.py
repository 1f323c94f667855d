"""The trim simulation's records, job and item models (the view is in :mod:`.view`).

:func:`compute_run` runs :func:`core.context.trim.smart_trim` and prepares what the view
shows (rows, bar outlines, the decision strip) so that all of it happens in a job of
the runner (:func:`trim_job`) off the GUI thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import (
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QColor, QIcon, QPainter, QPen, QPixmap
from typing_extensions import override

from core.context.trim import smart_trim
from core.io import jsonio
from core.io.jobs import Cancelled
from core.recall.block import safe_limit
from core.transcript.provider import is_synthetic
from widgets.common.record_model import Column, RecordTableModel, SortRole

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from core.context.trim import Decision, TrimDecision, TrimResult
    from core.transcript.message import Message

Index = QModelIndex | QPersistentModelIndex
DecisionRole = Qt.ItemDataRole.UserRole + 10
DECISIONS: tuple[Decision, ...] = (
    "protected",
    "kept",
    "trimmed_bm25",
    "trimmed_age",
    "removed_pairing",
)
DECISION_LABELS: dict[str, str] = {
    "protected": "Protected",
    "kept": "Kept",
    "trimmed_bm25": "Trimmed (BM25)",
    "trimmed_age": "Trimmed (age)",
    "removed_pairing": "Removed (pairing)",
}
DECISION_COLORS: dict[str, str] = {  # Okabe-Ito: tell apart with colour-blindness, light or dark
    "protected": "#0072B2",
    "kept": "#009E73",
    "trimmed_bm25": "#E69F00",
    "trimmed_age": "#D55E00",
    "removed_pairing": "#CC79A7",
}
DECISION_TIPS: dict[str, str] = {
    "protected": "Never trimmed (layer 1): system messages, recalled blocks, a compaction "
    "summary at the top, the last user/assistant messages, the last tool call and partners",
    "kept": "Left in context: the total reached the safe limit before it",
    "trimmed_bm25": "Removed by layer 2: least relevant to the query by BM25",
    "trimmed_age": "Removed by layer 3: still over the limit, oldest unprotected first",
    "removed_pairing": "Removed with its tool partner, or an orphaned tool result",
}
PREVIEW_CHARS = 160


@dataclass(frozen=True, slots=True)
class TrimParameters:
    """What one trim run was asked: the budget figures and the query."""

    window: int
    reserve: int
    hard_cap: int
    protected_recent: int
    query: str

    @property
    def safe_limit(self) -> int:
        """``window - reserve - hard_cap``: what the trim brings the context down to."""
        return safe_limit(self.window, self.reserve, self.hard_cap)


@dataclass(frozen=True, slots=True)
class TrimRow:
    """One table row: a message's decision, its role as shown, and a text preview."""

    decision: TrimDecision
    role: str
    preview: str


@dataclass(frozen=True, slots=True)
class TrimRun:
    """A finished trim with everything the view shows, built off the GUI thread."""

    params: TrimParameters
    result: TrimResult
    rows: tuple[TrimRow, ...]
    bars: dict[str, Outline]
    """Per decision, the outline (x, y) of its messages' bars."""
    strip: dict[str, Outline]
    """Per decision, the outline of its cells in the decision strip (height 1, no gap)."""


def _preview(m: Message) -> str:
    text = m.text()[: PREVIEW_CHARS * 2]
    if not text.strip():
        calls = [f"→ {b.name}({jsonio.dumps(b.arguments).decode()[:80]})" for b in m.tool_calls()]
        text = "  ".join(calls) or " ".join(sorted({f"[{b.kind}]" for b in m.blocks}))
    return " ".join(text.split())[:PREVIEW_CHARS]


def _role(m: Message) -> str:
    role = f"{m.role} · {m.tool_name}" if m.role == "toolResult" and m.tool_name else m.role
    # a result pi sends for a call whose result was never written
    return f"{role} (synthetic)" if is_synthetic(m) else role


Outline = tuple[np.ndarray, np.ndarray]


def bar_outlines(tokens: np.ndarray, decisions: Sequence[str], gap: float) -> dict[str, Outline]:
    """Per decision, x and y of its bars as one outline to fill down to 0.

    Bar *i* spans ``[i + gap, i + 1 - gap]``; other decisions' bars are not in it, so
    every item draws only its own bars and a plot data item can downsample them.
    """
    kinds = np.array(decisions, dtype=object)
    out: dict[str, Outline] = {}
    for d in DECISIONS:
        idx = np.flatnonzero(kinds == d).astype(np.float64)
        h = tokens[kinds == d].astype(np.float64)
        x = np.column_stack([idx + gap, idx + gap, idx + 1 - gap, idx + 1 - gap]).ravel()
        y = np.column_stack([np.zeros_like(h), h, h, np.zeros_like(h)]).ravel()
        out[d] = (x, y)
    return out


def compute_run(messages: Sequence[Message], params: TrimParameters) -> TrimRun:
    """Trim *messages* with *params* and prepare the rows and chart arrays."""
    result = smart_trim(
        messages,
        params.query,
        window=params.window,
        reserve_tokens=params.reserve,
        hard_cap=params.hard_cap,
        protected_recent=params.protected_recent,
    )
    rows = tuple(
        TrimRow(d, _role(m), _preview(m))
        for m, d in zip(result.messages, result.decisions, strict=True)
    )
    kinds = [d.decision for d in result.decisions]
    tokens = np.array([d.tokens for d in result.decisions], dtype=np.int64)
    gap = 0.12 if len(tokens) <= 400 else 0.0  # bars a pixel wide need no gap
    bars = bar_outlines(tokens, kinds, gap)
    strip = bar_outlines(np.ones_like(tokens), kinds, 0.0)
    return TrimRun(params, result, rows, bars, strip)


class TrimFailed(RuntimeError):
    """The trim raised; the text names the exception and says what."""


def trim_job(messages: Sequence[Message], params: TrimParameters) -> Callable[..., TrimRun]:
    """A job for the runner: :func:`compute_run`, skipped if superseded before it starts."""

    def job(*, cancelled: Callable[[], bool], **_job: object) -> TrimRun:
        if cancelled():  # superseded before it started
            raise Cancelled
        try:
            return compute_run(messages, params)
        except Exception as exc:  # the view names the exception's type
            raise TrimFailed(f"{type(exc).__name__}: {exc}") from exc

    return job


def _score(d: TrimDecision) -> str:
    return "" if d.bm25_score is None else f"{d.bm25_score:.3f}"


COLUMNS: tuple[Column[TrimRow], ...] = (
    Column("#", lambda r: str(r.decision.index), lambda r: r.decision.index, align_right=True),
    Column("Role", lambda r: r.role),
    Column("Tokens", lambda r: r.decision.tokens, align_right=True),
    Column(
        "Decision",
        lambda r: DECISION_LABELS[r.decision.decision],
        lambda r: DECISIONS.index(r.decision.decision),
    ),
    Column("Layer", lambda r: r.decision.layer, lambda r: str(r.decision.layer or "")),
    Column(
        "BM25",
        lambda r: _score(r.decision),
        lambda r: -1.0 if r.decision.bm25_score is None else r.decision.bm25_score,
        align_right=True,
    ),
    Column("Reason", lambda r: r.decision.reason),
    Column("Message", lambda r: r.preview),
)
DECISION_COLUMN = 3
REASON_COLUMN = 6


class TrimTableModel(RecordTableModel[TrimRow]):
    """One row per message; the decision column carries its colour as a swatch."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(COLUMNS, parent)

    @override
    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not (0 <= index.row() < self.rowCount()):
            return None
        if role == DecisionRole:
            return self.record(index.row()).decision.decision
        if role == Qt.ItemDataRole.DecorationRole and index.column() == DECISION_COLUMN:
            return QColor(DECISION_COLORS[self.record(index.row()).decision.decision])
        if role == Qt.ItemDataRole.ToolTipRole and index.column() >= REASON_COLUMN:
            return super().data(index, Qt.ItemDataRole.DisplayRole)
        return super().data(index, role)


class DecisionFilterProxy(QSortFilterProxyModel):
    """Shows the rows whose decision is among the chosen ones; sorts by :data:`SortRole`."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._shown: frozenset[str] = frozenset(DECISIONS)
        self.setSortRole(SortRole)

    def set_decisions(self, decisions: Iterable[str]) -> None:
        """Show only rows with one of *decisions*."""
        shown = frozenset(decisions)
        if shown == self._shown:
            return
        if hasattr(self, "beginFilterChange"):  # Qt >= 6.10; invalidateRowsFilter is deprecated
            self.beginFilterChange()
            self._shown = shown
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:  # pragma: no cover - older Qt
            self._shown = shown
            self.invalidateRowsFilter()

    def decisions(self) -> frozenset[str]:
        """The decisions shown."""
        return self._shown

    @override
    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        model = self.sourceModel()
        return model.index(source_row, 0, source_parent).data(DecisionRole) in self._shown


def swatch(color: str, size: int = 12) -> QIcon:
    """A square of *color*: filled when the icon is "on" (checked), outlined when "off"."""
    on = QPixmap(size, size)
    on.fill(QColor(color))
    off = QPixmap(size, size)
    off.fill(Qt.GlobalColor.transparent)
    painter = QPainter(off)
    painter.setPen(QPen(QColor(color), 2))
    painter.drawRect(1, 1, size - 2, size - 2)
    painter.end()
    icon = QIcon()
    icon.addPixmap(on, QIcon.Mode.Normal, QIcon.State.On)
    icon.addPixmap(off, QIcon.Mode.Normal, QIcon.State.Off)
    return icon


MINUS = "\u2212"


def summary_text(result: TrimResult) -> str:
    """``before -> after tokens (-N%)`` of *result*, with a real arrow and minus sign."""
    before, after = result.tokens_before, result.tokens_after
    pct = 100 * (before - after) / before if before else 0.0
    return f"{before:,} \u2192 {after:,} tokens ({MINUS}{pct:.1f}%)"


def detail_text(params: TrimParameters, result: TrimResult) -> str:
    """How many messages went, against which limit, and why nothing went if so."""
    removed = sum(1 for d in result.decisions if d.removed)
    text = (
        f"{len(result.decisions):,} messages, {removed:,} removed. Safe limit "
        f"{result.safe_limit:,} = window {params.window:,} {MINUS} reserve {params.reserve:,} "
        f"{MINUS} hard cap {result.hard_cap:,}."
    )
    if not result.ran:
        return f"{text} Not trimmed: {result.skipped_reason}."
    if result.tokens_after > result.safe_limit:
        text += " Still over the limit: the protected messages alone exceed it."
    return text
