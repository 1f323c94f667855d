"""What OpenClaw's embedded run actually reads of a long session (2026.9+).

Before each model call OpenClaw does not load a session's whole branch: it reads
the newest rows of the active branch while they fit a byte budget
(``readSessionTranscriptBoundedActiveContextCore``, OpenClaw 2026.9.6;
docs/notes/openclaw-context.md §4 and §7 rule 8):

* the budget is ``min(64 MiB, max(1024, 8 x contextTokens))`` bytes and 10,000 rows
  (``resolveEmbeddedSessionContextLimits``; ``contextTokens`` 128,000 when unknown);
* the header row counts first, then each active row newest first at
  ``event_utf8_bytes + 1``, messages marked ``excludeFromContext`` left out; the walk
  stops at the first row that does not fit;
* the latest ``compaction`` or ``reset`` on the branch is added when it was not read
  and still fits, *before* the rows read (so those are all "after" it);
* the context is then built from what was read: older entries are dropped silently,
  with no summary.

memlens applies the same bound to a database session's replay, with the context
budget of its session row (``contextTokens``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.transcript.model import Entry, Session

MAX_BYTES_CAP = 64 * 1024 * 1024
MAX_EVENTS = 10_000
DEFAULT_CONTEXT_TOKENS = 128_000


@dataclass(frozen=True, slots=True)
class RunBound:
    """The rows of a path OpenClaw's run reads, and the budget they were read against."""

    context_tokens: int
    max_bytes: int
    max_events: int
    used_bytes: int
    read: list[Entry]
    """The entries read, in path order."""
    dropped: int
    """Entries of the path left out by the budget."""
    kept_from: str | None = None
    """The first entry read that the boundary keeps (its ``firstKeptEntryId`` or, when
    that was not read, the next one read): OpenClaw keeps what it read of the range."""

    @property
    def truncated(self) -> bool:
        """True when the budget cut the path."""
        return self.dropped > 0

    def describe(self) -> str:
        """One line for a person."""
        if not self.truncated:
            return (
                f"OpenClaw's run reads the whole branch ({self.used_bytes:,} of "
                f"{self.max_bytes:,} bytes)"
            )
        return (
            f"OpenClaw's run reads only the newest {len(self.read):,} entries "
            f"({self.used_bytes:,} of {self.max_bytes:,} bytes, 8 x {self.context_tokens:,} "
            f"context tokens); {self.dropped:,} older entries are not in what the model saw"
        )


def limits(context_tokens: int | None) -> tuple[int, int]:
    """``(max bytes, max rows)`` for a context budget, as OpenClaw computes them."""
    tokens = DEFAULT_CONTEXT_TOKENS if context_tokens is None else context_tokens
    return min(MAX_BYTES_CAP, max(1024, tokens * 8)), MAX_EVENTS


def _excluded(e: Entry) -> bool:
    msg = e.raw.get("message") if e.type == "message" else None
    return isinstance(msg, dict) and msg.get("excludeFromContext") is True


def run_bound(session: Session, path: list[Entry], context_tokens: int | None) -> RunBound:
    """The part of *path* (a database session's branch) OpenClaw's run reads."""
    max_bytes, max_events = limits(context_tokens)
    sizes = session.db_bytes

    def cost(e: Entry) -> int:
        return sizes.get(e.line, 0) + 1

    used = sizes.get(0, 0) + 1  # the header
    chosen: list[Entry] = []
    eligible = [e for e in path if e.type != "leaf" and not _excluded(e)]
    for e in reversed(eligible):
        if len(chosen) >= max_events or used + cost(e) > max_bytes:
            break
        chosen.append(e)
        used += cost(e)
    boundary = next((e for e in reversed(path) if e.type in ("compaction", "reset")), None)
    picked = {e.id for e in chosen}
    read = [e for e in path if e.id in picked]
    kept_from = _kept_from(path, read, boundary) if boundary is not None else None
    if boundary is not None and boundary.id not in picked and used + cost(boundary) <= max_bytes:
        # OpenClaw puts the boundary it adds first: every row read then follows it
        # (``contextSequences.unshift``), so rows from before it are not "retained"
        picked.add(boundary.id)
        used += cost(boundary)
        read.insert(0, boundary)
    return RunBound(
        context_tokens=DEFAULT_CONTEXT_TOKENS if context_tokens is None else context_tokens,
        max_bytes=max_bytes,
        max_events=max_events,
        used_bytes=used,
        read=read,
        dropped=len(eligible) - len([e for e in eligible if e.id in picked]),
        kept_from=kept_from,
    )


def _kept_from(path: list[Entry], read: list[Entry], boundary: Entry) -> str | None:
    """The first entry of *read* in the boundary's kept range (``readBoundedRetentionRanges``).

    The range runs from ``firstKeptEntryId`` to the boundary along the whole path.
    """
    order = {e.id: i for i, e in enumerate(path)}
    first = order.get(str(boundary.raw.get("firstKeptEntryId")))
    end = order.get(boundary.id)
    if first is None or end is None or first >= end:
        return None
    for e in read:
        if first <= order[e.id] < end:
            return e.id
    return None
