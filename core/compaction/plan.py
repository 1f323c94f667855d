"""Compaction planning: what would be summarised, kept and dropped, before any call.

pi's cut point (``compaction.ts``): walk back from the newest message summing
pi's estimates until ``keepRecentTokens``; cut at the nearest valid point at or
after it (never a tool result); pull in the non-message entries just before it;
a cut that is not at a user message splits a turn, whose prefix is summarised on
its own. The range starts at the previous compaction's first kept entry.

OpenClaw's staged summarisation (``compaction.ts`` of the agent runner): an
adaptive chunk ratio, a split into 2 parts by token share, chunks of at most
``maxChunkTokens / 1.2`` (an oversized message alone), and history-share pruning
when what is summarised exceeds ``maxHistoryShare`` of the window.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.tokens import estimate_message
from core.transcript.replay import context_at, context_size

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.transcript.message import Message
    from core.transcript.model import Entry, Session

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


def _item(entry: Entry) -> PlanItem | None:
    m = entry.message
    if m is None or entry.type == "compaction":
        return None
    return PlanItem(entry, m, estimate_message(m))


def adaptive_chunk_ratio(tokens: Sequence[int], window: int) -> float:
    """0.4, reduced when the average message is large against the window."""
    if not tokens:
        return BASE_CHUNK_RATIO
    avg_ratio = (sum(tokens) / len(tokens)) * SAFETY_MARGIN / window
    if avg_ratio > 0.1:
        reduction = min(avg_ratio * 2, BASE_CHUNK_RATIO - MIN_CHUNK_RATIO)
        return max(MIN_CHUNK_RATIO, BASE_CHUNK_RATIO - reduction)
    return BASE_CHUNK_RATIO


def split_by_token_share(tokens: Sequence[int], parts: int = DEFAULT_PARTS) -> list[list[int]]:
    """Indexes split into *parts* runs of about equal tokens (OpenClaw's rule)."""
    if not tokens:
        return []
    parts = min(max(1, parts), len(tokens))
    if parts <= 1:
        return [list(range(len(tokens)))]
    target = sum(tokens) / parts
    chunks: list[list[int]] = []
    current: list[int] = []
    acc = 0
    for i, t in enumerate(tokens):
        if len(chunks) < parts - 1 and current and acc + t > target:
            chunks.append(current)
            current, acc = [], 0
        current.append(i)
        acc += t
    if current:
        chunks.append(current)
    return chunks


def chunk_by_max_tokens(tokens: Sequence[int], max_tokens: int) -> list[list[int]]:
    """Indexes in chunks of at most ``max_tokens / 1.2``; an oversized one alone."""
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


def repair_pairing(items: Sequence[PlanItem]) -> tuple[list[PlanItem], list[PlanItem]]:
    """Drop tool results whose call is not among *items*: ``(kept, orphans)``."""
    calls = {b.tool_id for i in items for b in i.message.tool_calls() if b.tool_id}
    kept: list[PlanItem] = []
    orphans: list[PlanItem] = []
    for i in items:
        ids = i.message.result_ids()
        if i.message.role == "toolResult" and ids and not any(x in calls for x in ids):
            orphans.append(i)
        else:
            kept.append(i)
    return kept, orphans


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
    read_files: list[str] = field(default_factory=list)
    modified_files: list[str] = field(default_factory=list)

    @property
    def calls(self) -> int:
        """Model calls the summary needs (chunks, merge, turn prefix, history)."""
        n = len(self.chunks) + (1 if len(self.parts) > 1 else 0)
        n += len(self.history_chunks) + (1 if self.turn_prefix else 0)
        return n

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
) -> CompactionPlan:
    """Plan a compaction of *session* at entry *at* (its leaf by default)."""
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
    if path[-1].type == "compaction":
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
        plan.turn_prefix = [x for e in path[turn_start:cut] if (x := _item(e))]
    summarize = [x for e in path[start:history_end] if (x := _item(e))]
    plan.kept = [x for e in path[cut:] if (x := _item(e))]
    # As the agent: the last usage since the latest compaction plus pi's estimate
    # of what follows it; pi's estimate of the whole context without such usage.
    size = context_size(context_at(session, leaf.id))
    plan.tokens_before = size.measured if size.measured is not None else size.estimated
    plan.tokens_before_measured = size.measured is not None
    if not summarize and not plan.turn_prefix:
        plan.ok = False
        plan.reason = (
            f"nothing to summarise: the {keep_recent_tokens:,} most recent tokens "
            "hold every message since the last compaction"
        )
        return plan
    # History share: what is summarised must fit maxHistoryShare of the window.
    budget = max(1, math.floor(window * max_history_share))
    while summarize and sum(i.tokens for i in summarize) > budget:
        halves = split_by_token_share([i.tokens for i in summarize])
        if len(halves) <= 1:
            break
        dropped = [summarize[i] for i in halves[0]]
        rest, orphans = repair_pairing([summarize[i] for h in halves[1:] for i in h])
        plan.history_dropped.extend(dropped + orphans)
        summarize = rest
    plan.summarize = summarize
    _file_ops([*plan.history_dropped, *summarize, *plan.turn_prefix], read, modified)
    plan.modified_files = sorted(modified)
    plan.read_files = sorted(read - modified)
    plan.chunk_ratio = adaptive_chunk_ratio([i.tokens for i in summarize], window)
    plan.max_chunk_tokens = max(1, math.floor(window * plan.chunk_ratio) - OVERHEAD_TOKENS)
    tokens = [i.tokens for i in summarize]
    if len(summarize) >= MIN_MESSAGES_FOR_SPLIT and sum(tokens) > plan.max_chunk_tokens:
        plan.parts = split_by_token_share(tokens)
    else:
        plan.parts = [list(range(len(summarize)))] if summarize else []
    for part in plan.parts:
        for chunk in chunk_by_max_tokens([tokens[i] for i in part], plan.max_chunk_tokens):
            plan.chunks.append([part[j] for j in chunk])
    dropped_tokens = [i.tokens for i in plan.history_dropped]
    plan.history_chunks = chunk_by_max_tokens(dropped_tokens, plan.max_chunk_tokens)
    plan.reason = (
        f"summarise {len(summarize) + len(plan.history_dropped)} messages "
        f"(~{plan.tokens_summarized:,} tokens) in {plan.calls} call(s); keep "
        f"{len(plan.kept)} from #{first_kept.index}"
        + (" (split turn)" if plan.is_split_turn else "")
    )
    return plan
