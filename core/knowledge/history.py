"""A fact's story for people: every log line with what it changed, and its chain.

:func:`fact_history` lists the lines of one fact oldest first, each with a short
description of what it changed against the line before (``added``, ``content``,
``type decision → config``, ``deleted``, ``restored``, ``superseded by …``).
:func:`fact_chain` lists the supersession chain through a fact in both
directions, each link with its distance from the fact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.store.knowledge import Fact, KnowledgeLog, LogLine


def _short(fact_id: str) -> str:
    return fact_id if len(fact_id) <= 8 else fact_id[:8] + "…"


@dataclass(frozen=True, slots=True)
class HistoryRow:
    """One log line of a fact, with what it changed."""

    version: int
    """1 for the first line of the fact."""
    line: int
    offset: int
    change: str
    record: dict[str, Any]

    @property
    def type(self) -> str:
        """The type this line gives."""
        return str(self.record.get("type", ""))

    @property
    def content(self) -> str:
        """The content this line gives."""
        return str(self.record.get("content", ""))

    @property
    def context(self) -> str:
        """The context this line gives ("" when none)."""
        value = self.record.get("context")
        return "" if value is None else str(value)

    @property
    def timestamp(self) -> int | None:
        """The line's timestamp (epoch ms), if it has a number there."""
        ts = self.record.get("timestamp")
        if isinstance(ts, (int, float)) and not isinstance(ts, bool):
            return int(ts)
        return None


def describe_change(before: dict[str, Any] | None, after: dict[str, Any]) -> str:
    """What *after* changed against *before* (None: the first line)."""
    if before is None:
        return "deleted when added" if after.get("_deleted") else "added"
    was_deleted, deleted = bool(before.get("_deleted")), bool(after.get("_deleted"))
    was_by, by = before.get("supersededBy"), after.get("supersededBy")
    if deleted and not was_deleted:
        return "deleted"
    parts: list[str] = []
    if was_deleted and not deleted:
        parts.append("restored")
    if by and by != was_by:
        parts.append(f"superseded by {_short(str(by))}")
    elif was_by and not by and not parts:
        parts.append("no longer superseded")
    if before.get("type") != after.get("type"):
        parts.append(f"type {before.get('type')} → {after.get('type')}")
    if before.get("content") != after.get("content"):
        parts.append("content")
    if before.get("context") != after.get("context"):
        parts.append("context")
    ignore = {"type", "content", "context", "timestamp", "_deleted", "supersededBy"}
    other = sorted(
        k for k in set(before) | set(after) if k not in ignore and before.get(k) != after.get(k)
    )
    if other:
        parts.append(", ".join(other))
    if not parts:
        return "same again" if before.get("timestamp") == after.get("timestamp") else "re-dated"
    return "; ".join(parts)


def fact_history(log: KnowledgeLog, fact_id: str) -> list[HistoryRow]:
    """Every line of *fact_id*, oldest first, with what each changed."""
    rows: list[HistoryRow] = []
    prev: dict[str, Any] | None = None
    lines: list[LogLine] = log.history.get(fact_id, [])
    for n, ln in enumerate(lines, 1):
        rows.append(HistoryRow(n, ln.line, ln.offset, describe_change(prev, ln.record), ln.record))
        prev = ln.record
    return rows


@dataclass(frozen=True, slots=True)
class ChainLink:
    """One fact of a supersession chain, seen from the fact asked about."""

    fact_id: str
    distance: int
    """Negative: an older fact it replaced; 0: the fact itself; positive: a newer one."""
    fact: Fact | None
    """None when the chain names an id the log does not hold."""

    @property
    def relation(self) -> str:
        """How the link relates to the fact asked about, e.g. ``superseded by (2 steps)``."""
        if self.distance == 0:
            return "this fact"
        word = "supersedes" if self.distance < 0 else "superseded by"
        steps = abs(self.distance)
        return word if steps == 1 else f"{word} ({steps} steps)"


def fact_chain(log: KnowledgeLog, fact_id: str) -> list[ChainLink]:
    """The chain through *fact_id*, oldest first; just the fact when it is in none."""
    older, newer = log.chain_around(fact_id)
    ids = [*older, fact_id, *newer]
    at = len(older)
    return [ChainLink(fid, i - at, log.facts.get(fid)) for i, fid in enumerate(ids)]
