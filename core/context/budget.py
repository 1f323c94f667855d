"""The budget model: every threshold of a session's context, in one place.

algorithms.md section 2. One call, :func:`budget_for`, returns the window, the
guard, pi's compaction trigger (with OpenClaw's reserve floor), the seeds' 80%
rule, the memory-flush gate, the recall hard cap and safeLimit, and the
context tokens (:data:`core.context.terms.CONTEXT_TOKENS`: reported usage plus a
chars/4 estimate of what follows, else the chars/4 estimate), so a UI can draw them
all as lines. Names and explanations come from :mod:`core.context.terms`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from core.context.terms import THRESHOLD_TERMS
from core.io.jsstr import js_round, js_trim
from core.openclaw.config import CompactionConfig, MemoryContextConfig, context_window_for
from core.recall.block import hard_cap as recall_hard_cap
from core.transcript.replay import context_at, context_size

if TYPE_CHECKING:
    from collections.abc import Mapping

    from core.openclaw.config import MemoryFlushConfig, OpenClawConfig
    from core.openclaw.sessions_store import SessionEntry
    from core.transcript.model import Session

GUARD_BLOCK = 16_000
GUARD_WARN = 32_000
FLUSH_TRANSCRIPT_BYTES = DEFAULT_FORCE_FLUSH_BYTES = 2 * 1024 * 1024
"""``DEFAULT_MEMORY_FLUSH_FORCE_TRANSCRIPT_BYTES`` (memory-core)."""
DEFAULT_RESERVE_TOKENS_FLOOR = 20_000
"""``DEFAULT_AGENT_COMPACTION_RESERVE_TOKENS_FLOOR``."""
MAX_COMPACTION_RESERVE_RATIO = 0.25
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
    """The context tokens (reported usage + chars/4 after it, else chars/4), with
    :attr:`extra_tokens` added."""
    context_source: Literal["measured", "estimated"]
    """The machine key of the source (:func:`core.context.terms.source_label` words it)."""
    estimated_tokens: int
    reserve_tokens: int
    """``max(reserveTokens, reserveTokensFloor)``."""
    compaction_trigger: int
    """pi: compact when the context passes ``window - reserveTokens``."""
    seed_trigger: int
    seed_target: int
    seed_emergency: int
    flush_threshold: int
    """``window - reserveTokensFloor - softThresholdTokens`` as the agent caps them
    (see :func:`flush_plan`); the flush never fires at 0."""
    hard_cap: int
    safe_limit: int
    keep_recent_tokens: int
    should_compact: bool
    should_compact_seed: bool
    should_flush: bool
    flush_reason: str
    thresholds: tuple[Threshold, ...] = field(default=())
    flush: FlushRecord | None = None
    """The last memory flush the session's ``sessions.json`` entry records."""
    flush_terms: tuple[int, int] | None = None
    """``(reserveTokensFloor, softThresholdTokens)`` of :attr:`flush_threshold`, as the
    agent capped them (None: memoryFlush disabled)."""
    extra_tokens: int = 0
    """Tokens added to the context (a recalled block that would be injected)."""

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


# -- the memory-flush gate ------------------------------------------------------------
# OpenClaw 2026.9.6: dist/agent-runner-memory-*.mjs (src/auto-reply/reply/memory-flush.ts
# and agent-runner-memory.ts, runMemoryFlushIfNeeded) and the memory-core plugin's
# buildMemoryFlushPlan (dist/extensions/memory-core/index.js). Checked against the
# agent's own code in tests/oracle/test_openclaw_flush.py.


@dataclass(frozen=True, slots=True)
class FlushRecord:
    """What a ``sessions.json`` entry says about the last memory flush.

    2026.9 writes ``memoryFlush: {kind, compactionCount, failureCount}`` (no time);
    older versions wrote ``memoryFlushAt`` and ``memoryFlushCompactionCount``, which
    the agent still reads (``projectCanonicalSessionEntryShape``).
    """

    kind: Literal["succeeded", "failed"]
    compaction_count: int | None
    """The compactionCount of the cycle the flush ran in (the gate compares it)."""
    failure_count: int = 0
    at: int | None = None
    """``memoryFlushAt`` (epoch ms) where an older agent recorded it."""
    entry_compaction_count: int = field(default=0, compare=False)
    """The entry's own ``compactionCount`` (absent: 0), to place the cycle."""

    @property
    def cycles_ago(self) -> int | None:
        """How many compactions ago the flush's cycle began (0: the current cycle)."""
        if self.compaction_count is None:
            return None
        return max(0, self.entry_compaction_count - self.compaction_count)


def _count(value: object) -> int | None:
    # normalizeCount: a finite number >= 0, floored
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return math.floor(value) if math.isfinite(value) and value >= 0 else None


def flush_record(raw: Mapping[str, Any]) -> FlushRecord | None:
    """The entry's flush record as the agent normalises it (None: never flushed)."""
    record = _flush_record(raw)
    if record is None:
        return None
    return replace(record, entry_compaction_count=_count(raw.get("compactionCount")) or 0)


def _flush_record(raw: Mapping[str, Any]) -> FlushRecord | None:
    at = _count(raw.get("memoryFlushAt"))
    current = raw.get("memoryFlush")
    if isinstance(current, dict):  # normalizeMemoryFlush
        count = _count(current.get("compactionCount"))
        if current.get("kind") == "succeeded" and count is not None:
            return FlushRecord("succeeded", count, at=at)
        failures = _count(current.get("failureCount"))
        if current.get("kind") == "failed" and failures:
            return FlushRecord("failed", count, failures, at)
    count = _count(raw.get("memoryFlushCompactionCount"))
    failures = _count(raw.get("memoryFlushFailureCount"))
    if failures:
        return FlushRecord("failed", count, failures, at)
    if count is not None:
        return FlushRecord("succeeded", count, at=at)
    return None


_BYTE_UNITS = {"b": 1, "kb": 1024, "k": 1024, "mb": 1024**2, "m": 1024**2}
_BYTE_UNITS |= {"gb": 1024**3, "g": 1024**3, "tb": 1024**4, "t": 1024**4}
_BYTE_SIZE = re.compile(r"^(\d+(?:\.\d+)?)([a-z]+)?$", re.ASCII)


def parse_byte_size(value: object) -> int | None:
    """``parseNonNegativeByteSize``: bytes from ``2097152`` or ``"2mb"`` (None: invalid)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        if not math.isfinite(value):
            return None
        n = math.floor(value)
        return n if 0 <= n <= 2**53 - 1 else None
    if not isinstance(value, str) or not js_trim(value):
        return None
    m = _BYTE_SIZE.match(js_trim(value).lower())
    unit = _BYTE_UNITS.get(m.group(2) or "b") if m else None
    if m is None or unit is None:
        return None
    n = js_round(float(m.group(1)) * unit)
    return n if n <= 2**53 - 1 else None


_INCOGNITO_KEY = re.compile(
    r"^agent:[^:]+:(?:dashboard|subagent|internal-session-effects):incognito-[^:]+$"
)


def is_incognito_key(key: str) -> bool:
    """``isIncognitoSessionKey``: the agent never flushes such a session."""
    return bool(_INCOGNITO_KEY.match(js_trim(key).lower()))


def flush_plan(window: int, flush: MemoryFlushConfig) -> tuple[int, int, int] | None:
    """``buildMemoryFlushPlan``: ``(reserveTokensFloor, softThresholdTokens, forceBytes)``.

    None when ``memoryFlush.enabled`` is false. The floor is the agent's constant
    20,000 (2026.9.6 has no ``reserveTokensFloor`` key), at most a quarter of the
    window; the soft threshold at most half of what the floor leaves.
    """
    if not flush.enabled:
        return None
    soft = max(0, math.floor(flush.soft_threshold_tokens))
    force = parse_byte_size(flush.force_flush_transcript_bytes)
    force_bytes = DEFAULT_FORCE_FLUSH_BYTES if force is None else force
    floor = DEFAULT_RESERVE_TOKENS_FLOOR
    if window > 0:
        floor = min(floor, math.floor(max(1, window) * MAX_COMPACTION_RESERVE_RATIO))
        soft = min(soft, math.floor((window - floor) / 2))
    return floor, soft, force_bytes


def flush_threshold(window: int, floor: int, soft: int) -> int:
    """``max(0, resolveCompactionThreshold(window, floor) - max(0, soft))``."""
    compaction = max(0, max(1, math.floor(window)) - max(0, math.floor(floor)))
    return max(0, compaction - max(0, math.floor(soft)))


def flush_gate(
    total_tokens: int,
    window: int,
    compaction: CompactionConfig,
    *,
    transcript_bytes: int | None = 0,
    compaction_count: int = 0,
    flush_compaction_count: int | None = None,
    has_entry: bool = True,
    incognito: bool = False,
    heartbeat: bool = False,
    cli: bool = False,
) -> tuple[bool, int, str]:
    """The memory-flush gate of ``runMemoryFlushIfNeeded``: ``(fires, threshold, reason)``.

    Parameters
    ----------
    total_tokens
        The context's tokens (the agent: the fresh ``totalTokens`` or the
        transcript's usage, plus the last output and the next prompt).
    transcript_bytes
        Size of the transcript (None: unknown); at ``forceFlushTranscriptBytes``
        (2 MiB) or more it forces a flush, whatever the tokens.
    compaction_count, flush_compaction_count
        ``compactionCount`` of the entry (absent: 0) and the ``compactionCount``
        recorded with the last flush: equal means this cycle already flushed.
    has_entry
        False when the session has no ``sessions.json`` entry: the agent never
        flushes then.
    incognito, heartbeat, cli
        An incognito session, a heartbeat run, a CLI runtime (or one that owns its
        compaction): the agent skips the flush.
    """
    plan = flush_plan(window, compaction.memory_flush)
    if plan is None:
        return False, 0, "memoryFlush is disabled"
    floor, soft, force = plan
    threshold = flush_threshold(window, floor, soft)
    skip = (
        "the session is incognito"
        if incognito
        else "a heartbeat run never flushes"
        if heartbeat
        else "a CLI runtime never flushes"
        if cli
        else "the session has no sessions.json entry"
        if not has_entry
        else None
    )
    if skip:
        return False, threshold, skip
    if flush_compaction_count is not None and flush_compaction_count == compaction_count:
        return (
            False,
            threshold,
            (
                f"already flushed in this compaction cycle (memoryFlush.compactionCount "
                f"{flush_compaction_count} == compactionCount {compaction_count})"
            ),
        )
    if total_tokens > 0 and threshold > 0 and total_tokens >= threshold:
        return True, threshold, f"{total_tokens:,} tokens >= flush threshold {threshold:,}"
    if force > 0 and transcript_bytes is not None and transcript_bytes >= force:
        return (
            True,
            threshold,
            f"transcript is {transcript_bytes:,} bytes (>= forceFlushTranscriptBytes {force:,})",
        )
    if threshold <= 0:
        return False, threshold, f"the flush threshold is {threshold:,}: the window is too small"
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
    incognito = False
    record = None
    if store_entry is not None:
        # the agent: entry.compactionCount ?? 0
        count = store_entry.compaction_count or 0
        record = flush_record(store_entry.raw)
        flush_count = record.compaction_count if record else None
        incognito = store_entry.raw.get("incognito") is True or is_incognito_key(store_entry.key)
    fires, flush_at, reason = flush_gate(
        tokens, window, compaction, transcript_bytes=_bytes_at(session, at),
        compaction_count=count, flush_compaction_count=flush_count, incognito=incognito,
    )  # fmt: skip
    seed_trigger = math.floor(window * SEED_TRIGGER)
    # no flush line where the agent never flushes (disabled: threshold 0)
    name = {k: t.name for k, t in THRESHOLD_TERMS.items()}
    flush_line = (Threshold("flush", name["flush"], flush_at, tokens >= flush_at),)
    lines = (
        Threshold("window", name["window"], window, tokens >= window),
        Threshold("compaction", name["compaction"], trigger, tokens > trigger),
        Threshold("seed", name["seed"], seed_trigger, tokens >= seed_trigger),
        *(flush_line if flush_at > 0 else ()),
        Threshold("safe_limit", name["safe_limit"], safe, tokens > safe),
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
        flush=record,
        flush_terms=plan[:2] if (plan := flush_plan(window, compaction.memory_flush)) else None,
        extra_tokens=extra_tokens,
    )
