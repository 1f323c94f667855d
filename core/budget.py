"""The budget model: every threshold of a session's context, in one place.

algorithms.md section 2. One call, :func:`budget_for`, returns the window, the
guard, pi's compaction trigger (with OpenClaw's reserve floor), the seeds' 80%
rule, the memory-flush gate, the recall hard cap and safeLimit, and the
context size (measured where the agent recorded usage, estimated elsewhere), so
a UI can draw them all as lines.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from core.openclaw.config import CompactionConfig, MemoryContextConfig, context_window_for
from core.recall.block import hard_cap as recall_hard_cap
from core.transcript.replay import context_at, context_size

if TYPE_CHECKING:
    from core.openclaw.config import OpenClawConfig
    from core.openclaw.sessions_store import SessionEntry
    from core.transcript.model import Session

GUARD_BLOCK = 16_000
GUARD_WARN = 32_000
FLUSH_TRANSCRIPT_BYTES = 2 * 1024 * 1024
RECALL_RESERVE = 4000
SEED_TRIGGER, SEED_TARGET, SEED_EMERGENCY = 0.8, 0.3, 0.2

Guard = Literal["ok", "warn", "block"]


@dataclass(frozen=True, slots=True)
class Threshold:
    """A line on the budget gauge."""

    key: str
    label: str
    tokens: int
    crossed: bool
    """True when the current context is at or past it."""


@dataclass(frozen=True, slots=True)
class Budget:
    """Every threshold of one point of one session."""

    window: int
    window_source: str
    guard: Guard
    context_tokens: int
    """Measured when the agent recorded usage, else estimated."""
    context_source: Literal["measured", "estimated"]
    estimated_tokens: int
    reserve_tokens: int
    """``max(reserveTokens, reserveTokensFloor)``."""
    compaction_trigger: int
    """pi: compact when the context passes ``window - reserveTokens``."""
    seed_trigger: int
    seed_target: int
    seed_emergency: int
    flush_threshold: int
    """``window - reserveTokensFloor - softThresholdTokens``."""
    hard_cap: int
    safe_limit: int
    keep_recent_tokens: int
    should_compact: bool
    should_compact_seed: bool
    should_flush: bool
    flush_reason: str
    thresholds: tuple[Threshold, ...] = field(default=())

    @property
    def headroom(self) -> int:
        """Tokens left before pi's compaction trigger."""
        return self.compaction_trigger - self.context_tokens


def guard_for(window: int) -> Guard:
    """Block below 16,000 tokens of window, warn below 32,000."""
    if window < GUARD_BLOCK:
        return "block"
    if window < GUARD_WARN:
        return "warn"
    return "ok"


def flush_gate(
    total_tokens: int,
    window: int,
    compaction: CompactionConfig,
    *,
    transcript_bytes: int = 0,
    compaction_count: int = 0,
    flush_compaction_count: int | None = None,
) -> tuple[bool, int, str]:
    """The memory-flush gate: ``(fires, threshold, reason)``."""
    flush = compaction.memory_flush
    threshold = window - compaction.reserve_tokens_floor - flush.soft_threshold_tokens
    if not flush.enabled:
        return False, threshold, "memoryFlush is disabled"
    if flush_compaction_count is not None and flush_compaction_count == compaction_count:
        return (
            False,
            threshold,
            (
                f"already flushed in this compaction cycle (memoryFlushCompactionCount "
                f"{flush_compaction_count} == compactionCount {compaction_count})"
            ),
        )
    if total_tokens >= threshold:
        return True, threshold, f"{total_tokens:,} tokens >= flush threshold {threshold:,}"
    if transcript_bytes > FLUSH_TRANSCRIPT_BYTES:
        return True, threshold, f"transcript is {transcript_bytes:,} bytes (> 2 MiB)"
    return False, threshold, f"{total_tokens:,} tokens < flush threshold {threshold:,}"


def _bytes_at(session: Session, at: str | None) -> int:
    """Size of the transcript up to and including entry *at*."""
    if at is None:
        return session.size
    target = session.entry(at)
    later = [e.offset for e in session.entries if e.offset > target.offset]
    return min(later) if later else session.size


def budget_for(
    session: Session,
    *,
    at: str | None = None,
    config: OpenClawConfig | None = None,
    model_id: str | None = None,
    window: int | None = None,
    store_entry: SessionEntry | None = None,
    extra_tokens: int = 0,
) -> Budget:
    """Every threshold for *session* at entry *at* (the leaf if None).

    Parameters
    ----------
    window
        Overrides the resolved window ("what if this ran on a 128k model").
    store_entry
        The session's ``sessions.json`` entry (compaction and flush counters).
    extra_tokens
        Tokens to add to the context (e.g. a recalled block that would be injected).
    """
    compaction = config.compaction if config else CompactionConfig()
    memory = config.memory_context if config else MemoryContextConfig()
    source: str = "override"
    if window is None:
        window, source = context_window_for(config, model_id)
    items = context_at(session, at)
    size = context_size(items)
    measured = size.measured is not None
    tokens = (size.measured if size.measured is not None else size.estimated) + extra_tokens
    reserve = compaction.effective_reserve_tokens
    trigger = window - reserve
    cap = recall_hard_cap(memory.hard_cap_tokens, window)
    safe = window - RECALL_RESERVE - cap
    count = len(session.compaction_entries())
    flush_count = None
    if store_entry is not None:
        count = store_entry.compaction_count if store_entry.compaction_count is not None else count
        flush_count = store_entry.memory_flush_compaction_count
    fires, flush_at, reason = flush_gate(
        tokens, window, compaction, transcript_bytes=_bytes_at(session, at),
        compaction_count=count, flush_compaction_count=flush_count,
    )  # fmt: skip
    seed_trigger = math.floor(window * SEED_TRIGGER)
    lines = (
        Threshold("window", "context window", window, tokens >= window),
        Threshold("compaction", "compaction trigger (pi)", trigger, tokens > trigger),
        Threshold("seed", "80% rule", seed_trigger, tokens >= seed_trigger),
        Threshold("flush", "memory flush", flush_at, tokens >= flush_at),
        Threshold("safe_limit", "safeLimit (smart trim)", safe, tokens > safe),
    )
    return Budget(
        window=window,
        window_source=source,
        guard=guard_for(window),
        context_tokens=tokens,
        context_source="measured" if measured else "estimated",
        estimated_tokens=size.estimated + extra_tokens,
        reserve_tokens=reserve,
        compaction_trigger=trigger,
        seed_trigger=seed_trigger,
        seed_target=math.floor(window * SEED_TARGET),
        seed_emergency=math.floor(window * SEED_EMERGENCY),
        flush_threshold=flush_at,
        hard_cap=cap,
        safe_limit=safe,
        keep_recent_tokens=compaction.keep_recent_tokens,
        should_compact=tokens > trigger,
        should_compact_seed=tokens >= seed_trigger,
        should_flush=fires,
        flush_reason=reason,
        thresholds=lines,
    )
