"""Compaction planning: what would be summarised, kept and dropped, before any call.

pi's cut point (``compaction.ts``): walk back from the newest message summing
pi's estimates until ``keepRecentTokens``; cut at the nearest valid point at or
after it (never a tool result); pull in the non-message entries just before it;
a cut that is not at a user message splits a turn, whose prefix is summarised on
its own. The range starts at the previous compaction's first kept entry.

OpenClaw's staged summarisation (``dist/compaction-planning-*.mjs`` of
OpenClaw 2026.9.6), with OpenClaw's own estimate (:func:`openclaw_estimate`): an
adaptive chunk ratio, a split into 2 parts by token share, chunks of at most
``maxChunkTokens / 1.2``, never parting a tool call from its results. History
share (the compaction safeguard's ``buildHistoryPrunePlan``): when what stays
after the cut (``tokensBefore`` less what is summarised) exceeds
``window x maxHistoryShare x 1.2``, the older part of a split of what is
summarised is dropped, tool pairing repaired, until it fits
``window x maxHistoryShare``; the dropped part is summarised first, on its own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.compaction.openclaw_chunking import (
    chunk_ratio,
    prune_history,
    repair_pairing,
    stage_split,
    staged_calls,
    summary_chunks,
)
from core.compaction.openclaw_estimate import (
    estimate_string_chars,
    openclaw_estimate,
    planning_tokens,
)
from core.compaction.plan_items import (
    BASE_CHUNK_RATIO,
    CUT_ROLES,
    OVERHEAD_TOKENS,
    SAFETY_MARGIN,
    PlanItem,
    adaptive_chunk_ratio,
    chunk_by_max_tokens,
    plan_item,
)
from core.transcript.replay import context_at, pi_context_tokens
from core.transcript.tokens import estimate_message

__all__ = [
    "SAFETY_MARGIN",
    "CompactionPlan",
    "PlanItem",
    "adaptive_chunk_ratio",
    "chunk_by_max_tokens",
    "estimate_string_chars",
    "openclaw_estimate",
    "plan_compaction",
    "planning_tokens",
    "repair_pairing",
    "stage_split",
    "summary_chunks",
]
"""Also the pieces from :mod:`plan_items`, :mod:`openclaw_estimate` and
:mod:`openclaw_chunking` that callers import from here."""

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.transcript.model import Entry, Session


@dataclass(slots=True)
class CompactionPlan:
    """Everything a compaction would do, computed before any model call."""

    session_id: str
    leaf_id: str
    ok: bool
    reason: str
    first_kept_entry_id: str = ""
    first_kept_index: int = 0
    is_split_turn: bool = False
    turn_start_entry_id: str | None = None
    summarize: list[PlanItem] = field(default_factory=list)
    turn_prefix: list[PlanItem] = field(default_factory=list)
    kept: list[PlanItem] = field(default_factory=list)
    history_dropped: list[PlanItem] = field(default_factory=list)
    previous_summary: str | None = None
    tokens_before: int = 0
    tokens_before_measured: bool = False
    window: int = 200_000
    reserve_tokens: int = 20_000
    keep_recent_tokens: int = 20_000
    chunk_ratio: float = BASE_CHUNK_RATIO
    max_chunk_tokens: int = 0
    parts: list[list[int]] = field(default_factory=list)
    """Indexes into :attr:`summarize` for each part."""
    chunks: list[list[int]] = field(default_factory=list)
    """Indexes into :attr:`summarize` for each summarisation call."""
    history_chunks: list[list[int]] = field(default_factory=list)
    """Indexes into :attr:`history_dropped` for each call summarising dropped history."""
    history_parts: list[list[int]] = field(default_factory=list)
    """Indexes into :attr:`history_dropped` for each part (merged when more than one)."""
    prefix_parts: list[list[int]] = field(default_factory=list)
    """Indexes into :attr:`turn_prefix` for each part of the split-turn summary."""
    prefix_chunks: list[list[int]] = field(default_factory=list)
    """Indexes into :attr:`turn_prefix` for each call summarising it."""
    main_calls: int = 0
    """Calls of the main summary: its chunks (a previous summary re-distilled
    first, as OpenClaw does, can need one of its own) and the merge of its parts."""
    history_calls: int = 0
    prefix_calls: int = 0
    max_history_share: float = 0.5
    summarizable_tokens: int = 0
    """OpenClaw's estimate of what is summarised and the turn prefix, before pruning."""
    new_content_tokens: int = 0
    """``tokens_before`` less :attr:`summarizable_tokens`: what stays after the cut."""
    max_history_tokens: int = 0
    """Pruning runs when :attr:`new_content_tokens` exceeds this (window x share x 1.2)."""
    history_dropped_chunks: int = 0
    """Rounds of pruning (each drops the older part of a split)."""
    history_chunk_ratio: float = BASE_CHUNK_RATIO
    history_max_chunk_tokens: int = 0
    read_files: list[str] = field(default_factory=list)
    modified_files: list[str] = field(default_factory=list)

    @property
    def calls(self) -> int:
        """Model calls the summary needs (chunks and merges: history, main, turn prefix)."""
        return self.history_calls + self.main_calls + self.prefix_calls

    @property
    def tokens_summarized(self) -> int:
        """Pi's estimate of what the summary replaces."""
        return sum(i.tokens for i in (*self.summarize, *self.turn_prefix, *self.history_dropped))

    @property
    def tokens_kept(self) -> int:
        """Pi's estimate of the messages kept verbatim."""
        return sum(i.tokens for i in self.kept)

    def expected_tokens_after(self) -> int:
        """Kept messages plus a summary at its output budget (0.8 x reserveTokens)."""
        return self.tokens_kept + math.floor(0.8 * self.reserve_tokens)


def _file_ops(items: Sequence[PlanItem], read: set[str], modified: set[str]) -> None:
    for item in items:
        if item.message.role != "assistant":
            continue
        for call in item.message.tool_calls():
            args = call.arguments
            path = args.get("path") if isinstance(args, dict) else None
            if not isinstance(path, str) or not path:
                continue
            if call.name == "read":
                read.add(path)
            elif call.name in ("write", "edit"):
                modified.add(path)


def _turn_start(path: Sequence[Entry], index: int, start: int) -> int:
    for i in range(index, start - 1, -1):
        e = path[i]
        if e.type in ("branch_summary", "custom_message"):
            return i
        if e.type == "message" and e.message and e.message.role in ("user", "bashExecution"):
            return i
    return -1


def _is_cut_point(entry: Entry) -> bool:
    if entry.type in ("branch_summary", "custom_message"):
        return True
    m = entry.message
    return entry.type == "message" and m is not None and m.role in CUT_ROLES


def find_cut(path: Sequence[Entry], start: int, end: int, keep_recent: int) -> tuple[int, int]:
    """Pi's cut point: ``(first_kept_index, turn_start_index or -1)`` in *path*."""
    cuts = [i for i in range(start, end) if _is_cut_point(path[i])]
    if not cuts:
        return start, -1
    cut = cuts[0]
    acc = 0
    for i in range(end - 1, start - 1, -1):
        e = path[i]
        if e.type != "message" or e.message is None:
            continue
        acc += estimate_message(e.message)
        if acc >= keep_recent:
            cut = next((c for c in cuts if c >= i), cut)
            break
    while cut > start and path[cut - 1].type not in ("compaction", "message"):
        cut -= 1
    entry = path[cut]
    is_user = entry.type == "message" and entry.message is not None and entry.message.role == "user"
    return cut, -1 if is_user else _turn_start(path, cut, start)


def plan_compaction(
    session: Session,
    *,
    at: str | None = None,
    window: int = 200_000,
    reserve_tokens: int = 20_000,
    keep_recent_tokens: int = 20_000,
    max_history_share: float = 0.5,
    compaction_leaf: bool = False,
) -> CompactionPlan:
    """Plan a compaction of *session* at entry *at* (its leaf by default).

    At a compaction pi plans nothing; with *compaction_leaf* memlens plans as
    OpenClaw's ``prepareCompaction`` does (overflow recovery compacts again right
    after a compaction), unless that compaction came from a hook.
    """
    leaf = session.entry(at) if at else session.leaf
    if leaf is None:
        return CompactionPlan(session.id, "", False, "the session has no entries")
    path = session.path_to(leaf.id)
    plan = CompactionPlan(
        session.id,
        leaf.id,
        True,
        "",
        window=window,
        reserve_tokens=reserve_tokens,
        keep_recent_tokens=keep_recent_tokens,
    )
    if path[-1].type == "compaction" and (not compaction_leaf or path[-1].raw.get("fromHook")):
        plan.ok, plan.reason = False, "the last entry is already a compaction"
        return plan
    prev = max((i for i, e in enumerate(path) if e.type == "compaction"), default=-1)
    start = prev + 1
    read: set[str] = set()
    modified: set[str] = set()
    if prev >= 0:
        prev_entry = path[prev]
        plan.previous_summary = str(prev_entry.raw.get("summary") or "")
        kept_id = prev_entry.raw.get("firstKeptEntryId")
        start = next((i for i, e in enumerate(path[:prev]) if e.id == kept_id), prev + 1)
        details = prev_entry.raw.get("details")
        if isinstance(details, dict) and not prev_entry.raw.get("fromHook"):
            read.update(f for f in details.get("readFiles") or [] if isinstance(f, str))
            modified.update(f for f in details.get("modifiedFiles") or [] if isinstance(f, str))
    cut, turn_start = find_cut(path, start, len(path), keep_recent_tokens)
    first_kept = path[cut]
    plan.first_kept_entry_id, plan.first_kept_index = first_kept.id, first_kept.index
    plan.is_split_turn = turn_start != -1
    history_end = turn_start if plan.is_split_turn else cut
    if plan.is_split_turn:
        plan.turn_start_entry_id = path[turn_start].id
        plan.turn_prefix = [x for e in path[turn_start:cut] if (x := plan_item(e))]
    summarize = [x for e in path[start:history_end] if (x := plan_item(e))]
    plan.kept = [x for e in path[cut:] if (x := plan_item(e))]
    # As pi's prepareCompaction (estimateContextTokens): the last usage in context,
    # a kept one from before a compaction included, plus pi's estimate after it.
    plan.tokens_before, plan.tokens_before_measured = pi_context_tokens(
        context_at(session, leaf.id)
    )
    if not summarize and not plan.turn_prefix:
        plan.ok = False
        plan.reason = (
            f"nothing to summarise: the {keep_recent_tokens:,} most recent tokens "
            "hold every message since the last compaction"
        )
        return plan
    # History share, as OpenClaw's compaction safeguard (buildHistoryPrunePlan):
    # prune only when what stays after the cut exceeds window x share x 1.2.
    plan.max_history_share = max_history_share
    plan.summarizable_tokens = sum(
        openclaw_estimate(i.message) for i in (*summarize, *plan.turn_prefix)
    )
    plan.new_content_tokens = max(0, math.floor(plan.tokens_before - plan.summarizable_tokens))
    plan.max_history_tokens = math.floor(window * max_history_share * SAFETY_MARGIN)
    if plan.new_content_tokens > plan.max_history_tokens:
        pruned = prune_history(summarize, window, max_history_share)
        if pruned.dropped_chunks:
            plan.history_dropped_chunks = pruned.dropped_chunks
            plan.history_dropped = pruned.dropped
            summarize = pruned.kept
    plan.summarize = summarize
    _file_ops([*plan.history_dropped, *summarize, *plan.turn_prefix], read, modified)
    plan.modified_files = sorted(modified)
    plan.read_files = sorted(read - modified)
    # The summaries, as the safeguard asks for them (summarizeViaLLM): the dropped
    # history first, with the previous summary re-distilled; then what is summarised,
    # with the dropped history's summary (else the previous one); then the turn prefix.
    previous = plan.previous_summary
    if plan.history_dropped:
        dropped = plan.history_dropped
        plan.history_chunk_ratio = chunk_ratio(dropped, window)
        plan.history_max_chunk_tokens = max(
            1, math.floor(window * plan.history_chunk_ratio) - OVERHEAD_TOKENS
        )
        plan.history_parts, plan.history_chunks, plan.history_calls = staged_calls(
            dropped, plan.history_max_chunk_tokens, previous
        )
        # its text is not known before the call: taken at its output budget
        previous = "s" * (4 * math.floor(0.8 * reserve_tokens))
    plan.chunk_ratio = chunk_ratio([*summarize, *plan.turn_prefix], window)
    plan.max_chunk_tokens = max(1, math.floor(window * plan.chunk_ratio) - OVERHEAD_TOKENS)
    plan.parts, plan.chunks, plan.main_calls = staged_calls(
        summarize, plan.max_chunk_tokens, previous
    )
    if plan.is_split_turn:
        plan.prefix_parts, plan.prefix_chunks, plan.prefix_calls = staged_calls(
            plan.turn_prefix, plan.max_chunk_tokens
        )
    plan.reason = (
        f"summarise {len(summarize) + len(plan.history_dropped)} messages "
        f"(~{plan.tokens_summarized:,} tokens) in {plan.calls} call(s); keep "
        f"{len(plan.kept)} from #{first_kept.index}"
        + (" (split turn)" if plan.is_split_turn else "")
    )
    return plan
