"""Plan items and the chunking both agents share: what a compaction plan is made of."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.transcript.normalize import summary_message
from core.transcript.tokens import estimate_message

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.transcript.message import Message
    from core.transcript.model import Entry

BASE_CHUNK_RATIO = 0.4
MIN_CHUNK_RATIO = 0.15
SAFETY_MARGIN = 1.2
DEFAULT_PARTS = 2
OVERHEAD_TOKENS = 4096
MIN_MESSAGES_FOR_SPLIT = 4
CUT_ROLES = frozenset(
    {"user", "assistant", "custom", "bashExecution", "branchSummary", "compactionSummary"}
)


@dataclass(frozen=True, slots=True)
class PlanItem:
    """A message in the plan, with the entry it comes from and pi's estimate."""

    entry: Entry
    message: Message
    tokens: int


def plan_item(entry: Entry) -> PlanItem | None:
    """The message *entry* brings to a compaction plan, with pi's estimate (None: none)."""
    m = entry.message
    if m is None and entry.type == "branch_summary":
        # pi's prepareCompaction (getMessageFromEntry) summarises an empty branch
        # summary too, which its buildSessionContext leaves out of the context
        m = summary_message("branchSummary", "", entry.raw.get("timestamp"), entry.raw)
    if m is None or entry.type == "compaction":
        return None
    return PlanItem(entry, m, estimate_message(m))


def adaptive_chunk_ratio(tokens: Sequence[int], window: int) -> float:
    """0.4, reduced when the average message is large against the window.

    ``computeAdaptiveChunkRatio``; *tokens* are OpenClaw's estimates
    (:func:`openclaw_estimate`).
    """
    if not tokens:
        return BASE_CHUNK_RATIO
    avg_ratio = sum(tokens) / len(tokens) * SAFETY_MARGIN / window
    if avg_ratio > 0.1:
        reduction = min(avg_ratio * 2, 0.25)  # the literal: 0.4 - 0.15 is 0.25000000000000006
        return max(MIN_CHUNK_RATIO, BASE_CHUNK_RATIO - reduction)
    return BASE_CHUNK_RATIO


def chunk_by_max_tokens(tokens: Sequence[int], max_tokens: int) -> list[list[int]]:
    """Indexes in chunks of at most ``max_tokens / 1.2``; an oversized one alone.

    Blind to tool-call groups; OpenClaw's rule is :func:`summary_chunks`.
    """
    effective = max(1, math.floor(max_tokens / SAFETY_MARGIN))
    chunks: list[list[int]] = []
    current: list[int] = []
    acc = 0
    for i, t in enumerate(tokens):
        if current and acc + t > effective:
            chunks.append(current)
            current, acc = [], 0
        current.append(i)
        acc += t
        if t > effective:
            chunks.append(current)
            current, acc = [], 0
    if current:
        chunks.append(current)
    return chunks
