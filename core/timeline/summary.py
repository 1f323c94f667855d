"""What a session timeline says on hover: message summaries, the memory-flush marker."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.context.budget import FlushRecord
    from core.transcript.model import Entry, Message

__all__ = ["FlushMarker", "flush_markers", "message_summary"]


def _snippet(text: str, limit: int = 90) -> str:
    flat = " ".join(text[: limit * 3].split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "\u2026"


def _first_text(message: Message) -> str:
    for b in message.blocks:
        if b.kind in ("text", "tool_result") and b.text.strip():
            return b.text
    return ""


def _unseen(entry: Entry) -> str:
    return f"never seen by the agent (a line it cannot parse: {entry.line} or the header)"


def message_summary(entry: Entry, message: Message, tokens: int, thinking: float) -> str:
    """One line for a hover: role, tokens, tools, and the start of the text."""
    role = message.role
    parts: list[str] = []
    if role == "assistant":
        head = f"assistant \u00b7 {tokens:,} tok"
        if thinking > 0:
            head += f" (thinking {thinking:.0%})"
        parts.append(head)
        names: dict[str, int] = {}
        for call in message.tool_calls():
            names[call.name or "?"] = names.get(call.name or "?", 0) + 1
        if names:
            parts.append(
                "calls " + ", ".join(n if c == 1 else f"{n} \u00d7{c}" for n, c in names.items())
            )
        if message.stop_reason in ("aborted", "error"):
            parts.append(message.stop_reason)
    elif role == "toolResult":
        name = message.tool_name or "tool"
        parts.append(f"tool result {name} \u00b7 {tokens:,} tok")
        if message.is_error:
            parts.append("error")
    elif role == "bashExecution":
        parts.append(f"bash \u00b7 {tokens:,} tok")
        command = str(message.raw.get("command") or "")
        code = message.raw.get("exitCode")
        parts.append(f"$ {_snippet(command, 60)}" + (f" (exit {code})" if code else ""))
        if entry.recovered:
            parts.insert(0, _unseen(entry))
        return " \u00b7 ".join(parts)
    elif role == "custom":
        kind = entry.raw.get("customType") or message.raw.get("customType") or ""
        parts.append(f"custom {kind}".rstrip() + f" \u00b7 {tokens:,} tok")
    elif role == "branchSummary":
        parts.append(f"branch summary \u00b7 {tokens:,} tok")
    else:
        parts.append(f"{role} \u00b7 {tokens:,} tok")
    text = _first_text(message)
    if text:
        parts.append(f"\u201c{_snippet(text)}\u201d")
    if entry.recovered:
        parts.insert(0, _unseen(entry))
    return " \u00b7 ".join(parts)


@dataclass(frozen=True, slots=True)
class FlushMarker:
    """A memory flush the agent recorded in ``sessions.json``, on the leaf path.

    The agent keeps only its last flush. Older versions wrote its time
    (``memoryFlushAt``): the marker sits after the last message before it.
    2026.9 writes only the compaction cycle it ran in (``memoryFlush.compactionCount``):
    the marker sits at the end of that cycle, where the agent flushes (just
    before the compaction that ends it, or after the last message of the
    current cycle), and :attr:`timed` is False.
    """

    x: float
    context: float
    """The context curve at the marker."""
    succeeded: bool
    """False for ``memoryFlush.kind == "failed"`` (``failure_count`` attempts failed)."""
    compaction_count: int | None
    """The ``compactionCount`` of the flush's cycle, as recorded."""
    at: int | None
    """Epoch ms (``memoryFlushAt``), when recorded."""
    failure_count: int = 0

    @property
    def timed(self) -> bool:
        """True when the agent recorded when the flush ran."""
        return self.at is not None

    @property
    def label(self) -> str:
        """A few words for the plot."""
        return "memory flush" if self.succeeded else "memory flush failed"

    @property
    def tooltip(self) -> str:
        """Where the marker comes from and how sure its place is."""
        from core.io.timefmt import utc_minute_ms

        lines = [
            "memory flush (the agent wrote durable notes to memory/YYYY-MM-DD.md)"
            if self.succeeded
            else f"memory flush failed {self.failure_count} time(s) in a row"
        ]
        if self.compaction_count is not None:
            lines.append(f"in compaction cycle {self.compaction_count} (sessions.json)")
        if self.at is not None:
            lines.append(f"at {utc_minute_ms(self.at)} UTC (memoryFlushAt)")
        else:
            lines.append("time not recorded: drawn at the end of its cycle")
        return "\n".join(lines)


def _message_ms(entry: Entry) -> int | None:
    msg = entry.message
    if msg is not None and isinstance(msg.timestamp, int) and not isinstance(msg.timestamp, bool):
        return msg.timestamp
    from core.transcript.normalize import iso_to_ms

    return iso_to_ms(entry.timestamp)


def flush_markers(
    record: FlushRecord | None,
    path: Sequence[Entry],
    positions: dict[str, int],
    ctx: Sequence[float],
    compactions: Sequence[float],
) -> tuple[FlushMarker, ...]:
    """The flush *record* placed on the leaf *path* (nothing when it cannot be placed).

    *positions* gives each message's x, *ctx* the context curve at each, and
    *compactions* the x of each compaction on the path, in order.
    """
    if record is None:
        return ()
    on_path = [positions[e.id] for e in path if e.id in positions]
    if not on_path:
        return ()
    pos: int | None = None
    if record.at is not None:
        at = record.at
        before = [
            positions[e.id] for e in path if e.id in positions and (_message_ms(e) or 0) <= at
        ]
        pos = before[-1] if before else None
        x = pos + 0.3 if pos is not None else -0.5
    else:
        ago = record.cycles_ago
        comps = list(compactions)
        if ago is None or ago == 0 or ago > len(comps):
            x = on_path[-1] + 0.3  # the current cycle (or one the transcript does not hold)
            pos = on_path[-1]
        else:
            end = comps[len(comps) - ago]  # the compaction that ended the flush's cycle
            x = end - 0.2
            pos = math.floor(end)
    context = float(ctx[pos]) if pos is not None and pos >= 0 else 0.0
    return (
        FlushMarker(
            x=x,
            context=context,
            succeeded=record.kind == "succeeded",
            compaction_count=record.compaction_count,
            at=record.at,
            failure_count=record.failure_count,
        ),
    )
