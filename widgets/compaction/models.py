"""Table columns of the compaction view: plan groups, summary sections, segments, facts."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from core.io.text import one_line
from widgets.common.record_model import Column, RecordTableModel
from widgets.compaction.markup import is_required

if TYPE_CHECKING:
    from PySide6.QtCore import QObject

    from core.compaction.breakdown import PlanGroup
    from core.compaction.call_log import CallRecord
    from core.compaction.sections import SummarySection
    from core.recall.updater import ProposedOperation
    from core.store.segments import Segment

FATE_LABELS = {
    "dropped": "Pruned (history share)",
    "summarised": "Summarised",
    "turn prefix": "Split-turn prefix",
    "kept": "Kept verbatim",
}
PREVIEW_CHARS = 160


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """*text* on one line, cut to *limit* characters."""
    return one_line(text, limit)


def _time(ms: int) -> str:
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):
        return "?"


PLAN_COLUMNS: tuple[Column[PlanGroup], ...] = (
    Column("What", lambda g: FATE_LABELS[g.fate]),
    Column("Messages", lambda g: g.messages, align_right=True),
    Column("Tokens (est.)", lambda g: g.tokens, align_right=True),
    Column("Calls", lambda g: g.calls, align_right=True),
    Column("Entries", lambda g: g.range_text, lambda g: g.first_index or -1),
)

SECTION_COLUMNS: tuple[Column[SummarySection], ...] = (
    Column(
        "Section",
        lambda s: (
            ("    " if s.part else "")
            + (s.title or "(preamble)")
            + (" *" if is_required(s.title) else "")
            + (" (split turn)" if s.part else "")
        ),
    ),
    Column("Items", lambda s: s.items, align_right=True),
)

SEGMENT_COLUMNS: tuple[Column[Segment], ...] = (
    Column("Role", lambda s: s.role),
    Column("Time (UTC)", lambda s: _time(s.timestamp), lambda s: s.timestamp),
    Column("Tokens", lambda s: s.tokens, align_right=True),
    Column("Topics", lambda s: ", ".join(s.topics[:4])),
    Column("Content", lambda s: preview(s.content)),
)


def _target(op: ProposedOperation) -> str:
    if op.target is None:
        return "" if op.target_index is None else f"proposal {op.target_index + 1}"
    return f"{op.target.id}: {preview(op.target.content, 60)}"


FACT_COLUMNS: tuple[Column[ProposedOperation], ...] = (
    Column("Op", lambda o: o.op),
    Column("Type", lambda o: o.candidate.type),
    Column("Content", lambda o: preview(o.candidate.content, 120)),
    Column("Compared with", _target),
    Column("Similarity", lambda o: f"{o.similarity:.2f}", lambda o: o.similarity, True),
    Column("Reason", lambda o: o.reason),
)


def _outcome(c: CallRecord) -> str:
    if c.ok:
        return "answered"
    return "failed: " + c.kind.replace("_", " ") + (f" (HTTP {c.status})" if c.status else "")


CALL_COLUMNS: tuple[Column[CallRecord], ...] = (
    Column("Call", lambda c: c.index, align_right=True),
    Column("Step", lambda c: c.step),
    Column("Result", _outcome),
    Column("Attempts", lambda c: c.attempts, align_right=True),
    Column("Seconds", lambda c: f"{c.seconds:.1f}", lambda c: c.seconds, True),
    Column("Endpoint", lambda c: c.target),
    Column("Why", lambda c: c.message),
)
"""The attempt log of a run: every call, how it went and why it failed."""


def make_model(columns: tuple[Column[Any], ...], parent: QObject | None) -> RecordTableModel[Any]:
    """A record model over *columns*."""
    return RecordTableModel(columns, parent)
