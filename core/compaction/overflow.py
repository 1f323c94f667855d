"""Overflow recovery, simulated: OpenClaw's decision tree when the prompt is too big.

On a provider "context overflow" error OpenClaw compacts and retries (up to 3
attempts), then truncates oversized tool results (each to 30% of the window,
at least 2,000 and at most 400,000 characters; ``tool-result-truncation.ts``),
then gives up with the overflow error. This replays that tree on a session
without calling any model: a compaction's result is estimated as the kept
messages plus a summary at its output budget (0.8 x reserveTokens).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.compaction.plan import plan_compaction
from core.jsstr import js_len
from core.transcript.replay import context_at, context_size

if TYPE_CHECKING:
    from core.transcript.model import Session

MAX_ATTEMPTS = 3
TOOL_RESULT_SHARE = 0.3
MIN_KEEP_CHARS = 2_000
HARD_MAX_TOOL_RESULT_CHARS = 400_000


@dataclass(frozen=True, slots=True)
class OverflowStep:
    """One step of the recovery."""

    kind: str
    """``fits``, ``overflow``, ``compact``, ``truncate``, ``recovered`` or ``give_up``."""
    tokens_before: int
    tokens_after: int
    detail: str


def max_tool_result_chars(window: int) -> int:
    """Largest tool result kept whole: 30% of the window in chars, within bounds."""
    return min(HARD_MAX_TOOL_RESULT_CHARS, max(MIN_KEEP_CHARS, math.floor(window * 0.3 * 4)))


def simulate_overflow(
    session: Session,
    window: int,
    *,
    at: str | None = None,
    reserve_tokens: int = 20_000,
    keep_recent_tokens: int = 20_000,
) -> list[OverflowStep]:
    """Replay the recovery for the context at *at* on a model with *window* tokens."""
    size = context_size(context_at(session, at))
    tokens = size.measured if size.measured is not None else size.estimated
    if tokens <= window:
        return [
            OverflowStep("fits", tokens, tokens, f"{tokens:,} tokens fit the {window:,} window")
        ]
    overflow = f"{tokens:,} tokens > {window:,}: the provider answers 'context overflow'"
    steps = [OverflowStep("overflow", tokens, tokens, overflow)]
    plan = plan_compaction(
        session,
        at=at,
        window=window,
        reserve_tokens=reserve_tokens,
        keep_recent_tokens=keep_recent_tokens,
    )
    current = tokens
    summary_tokens = math.floor(0.8 * reserve_tokens)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        if not plan.ok:
            why = f"attempt {attempt}: cannot compact ({plan.reason})"
            steps.append(OverflowStep("compact", current, current, why))
            continue
        after = plan.tokens_kept + summary_tokens
        detail = (
            f"attempt {attempt}: summarise {len(plan.summarize) + len(plan.history_dropped)} "
            f"messages, keep {len(plan.kept)} from #{plan.first_kept_index}"
        )
        if after >= current:
            detail += " (no progress: the kept messages alone are this large)"
        steps.append(OverflowStep("compact", current, after, detail))
        current = min(current, after)
        if current <= window:
            steps.append(
                OverflowStep(
                    "recovered", current, current, f"fits after compaction attempt {attempt}"
                )
            )
            return steps
    limit = max_tool_result_chars(window)
    saved = 0
    count = 0
    for item in plan.kept if plan.ok else []:
        m = item.message
        if m.role == "toolResult":
            chars = js_len(m.text())
            if chars > limit:
                saved += math.ceil((chars - limit) / 4)
                count += 1
    after = current - saved
    steps.append(
        OverflowStep(
            "truncate", current, after, f"truncate {count} tool result(s) over {limit:,} chars"
        )
    )
    if after <= window:
        steps.append(OverflowStep("recovered", after, after, "fits after truncating tool results"))
        return steps
    fail = f"still {after:,} > {window:,}: the run fails with the overflow error"
    steps.append(OverflowStep("give_up", after, after, fail))
    return steps
