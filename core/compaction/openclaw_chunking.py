"""OpenClaw's message groups, stage split, tool-pairing repair and history pruning.

``dist/compaction-planning-*.mjs`` and ``dist/session-transcript-repair-*.mjs`` of
OpenClaw 2026.9.6.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.compaction.openclaw_estimate import (
    MISSING_TOOL_RESULT_TEXT,
    call_ids,
    is_runtime_context,
    openclaw_estimate,
    planning_tokens,
    result_id,
)
from core.compaction.plan_items import (
    BASE_CHUNK_RATIO,
    DEFAULT_PARTS,
    MIN_MESSAGES_FOR_SPLIT,
    SAFETY_MARGIN,
    PlanItem,
    adaptive_chunk_ratio,
)
from core.transcript.normalize import normalize_message
from core.transcript.tokens import estimate_message

if TYPE_CHECKING:
    from collections.abc import Sequence


def message_groups(items: Sequence[PlanItem], tokens: Sequence[int]) -> list[tuple[int, int, int]]:
    """``forEachCompactionMessageGroup``: ``(start, end, tokens)`` of each group.

    A group ends where no tool call of the latest assistant message waits for its
    result, so a call and its results are never apart; an aborted or failed
    assistant message waits for nothing.
    """
    groups: list[tuple[int, int, int]] = []
    start = acc = 0
    pending: Counter[str] = Counter()
    for index, item in enumerate(items):
        acc += tokens[index]
        m = item.message
        if m.role == "assistant":
            failed = str(m.raw.get("stopReason")) in ("aborted", "error")
            pending = Counter() if failed else Counter(cid for cid, _ in call_ids(m))
        elif m.role == "toolResult" and pending.total():
            rid = result_id(m)
            if rid is None:
                pending.clear()
            elif pending[rid] > 0:
                pending[rid] -= 1
        if not pending.total():
            groups.append((start, index + 1, acc))
            start, acc = index + 1, 0
    if start < len(items):
        groups.append((start, len(items), acc))
    return groups


def chunk_message_groups(
    items: Sequence[PlanItem],
    max_tokens: float,
    tokens: Sequence[int],
    max_chunks: float = math.inf,
) -> list[list[int]]:
    """``chunkCompactionMessageGroups``: indexes in chunks of whole groups."""
    chunks: list[list[int]] = []
    chunk_start = acc = 0
    for start, _end, t in message_groups(items, tokens):
        if start > chunk_start and len(chunks) < max_chunks - 1 and acc + t > max_tokens:
            chunks.append(list(range(chunk_start, start)))
            chunk_start, acc = start, 0
        acc += t
    if chunk_start < len(items):
        chunks.append(list(range(chunk_start, len(items))))
    return chunks


def _parts(parts: float, count: int) -> int:
    """``normalizeCompactionParts``."""
    if not math.isfinite(parts) or parts <= 1:
        return 1
    return min(max(1, math.floor(parts)), max(1, count))


def stage_split(
    items: Sequence[PlanItem],
    max_chunk_tokens: float,
    *,
    parts: int = DEFAULT_PARTS,
    min_messages: int = MIN_MESSAGES_FOR_SPLIT,
    worker: bool = False,
) -> list[list[int]] | None:
    """``buildStageSplitPlan``: parts of about equal tokens, or None for one stage.

    With *worker*, as ``buildStageSplitPlanWithWorker`` (summarisation) runs it:
    from 64 messages on the worker's view (:func:`planning_tokens`).
    """
    if worker:
        where, tokens = planning_tokens(items)
    else:
        where, tokens = list(range(len(items))), [openclaw_estimate(i.message) for i in items]
    view = [items[k] for k in where]
    n = _parts(parts, len(view))
    if n <= 1 or len(view) < max(2, min_messages):
        return None
    total = sum(tokens)
    if total <= max_chunk_tokens:
        return None
    chunks = chunk_message_groups(view, total / n, tokens, n)
    return [[where[j] for j in c] for c in chunks] if len(chunks) > 1 else None


def summary_chunks(items: Sequence[PlanItem], max_chunk_tokens: int) -> list[list[int]]:
    """``buildSummaryChunksWithWorker``: one summarisation call per chunk.

    OpenClaw's runtime-context messages are left out (``sanitizeCompactionMessages``);
    from 64 messages the worker's view is used (:func:`planning_tokens`).
    """
    safe = [k for k, i in enumerate(items) if not is_runtime_context(i.message)]
    where, tokens = planning_tokens([items[k] for k in safe])
    view = [items[safe[j]] for j in where]
    effective = max(1, math.floor(max_chunk_tokens / SAFETY_MARGIN))
    chunks = chunk_message_groups(view, effective, tokens)
    return [[safe[where[j]] for j in chunk] for chunk in chunks]


def chunk_ratio(items: Sequence[PlanItem], window: int) -> float:
    """``computeAdaptiveChunkRatioWithWorker``: :func:`adaptive_chunk_ratio` of *items*."""
    _where, tokens = planning_tokens(items)
    if not tokens:
        return BASE_CHUNK_RATIO
    return adaptive_chunk_ratio(tokens, window)


def _is_synthetic_missing(raw: dict[str, Any]) -> bool:
    """``isSyntheticMissingToolResult``."""
    if not raw.get("isError"):
        return False
    details = raw.get("details")
    if isinstance(details, dict) and details.get("openclawSyntheticMissingToolResult") is True:
        return True
    content = raw.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict)
        and b.get("type") == "text"
        and b.get("text") == MISSING_TOOL_RESULT_TEXT
        for b in content
    )


def _name(value: Any) -> str | None:
    """``normalizeOptionalString``."""
    return (value.strip() or None) if isinstance(value, str) else None


def _named(raw: dict[str, Any], fallback: str | None) -> dict[str, Any]:
    """``normalizeToolResultName``: *raw*, or a copy with its tool name set."""
    own = _name(raw.get("toolName"))
    if own:
        return raw if raw.get("toolName") == own else {**raw, "toolName": own}
    if _name(fallback):
        return {**raw, "toolName": _name(fallback)}
    return {**raw, "toolName": "unknown"} if isinstance(raw.get("toolName"), str) else raw


def _rewritten(item: PlanItem, raw: dict[str, Any]) -> PlanItem:
    """*item* as the new object OpenClaw's repair makes of it (same entry)."""
    if raw is item.message.raw:
        return item
    m = normalize_message(raw)
    return PlanItem(item.entry, m, estimate_message(m))


def _missing_result(assistant: PlanItem, call_id: str, name: str | None) -> PlanItem:
    """``makeMissingToolResult``: the error result repair inserts for a lost one."""
    raw: dict[str, Any] = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name or "unknown",
        "content": [{"type": "text", "text": MISSING_TOOL_RESULT_TEXT}],
        "details": {"openclawSyntheticMissingToolResult": True, "reason": "missing_tool_result"},
        "isError": True,
    }
    m = normalize_message(raw)
    return PlanItem(assistant.entry, m, estimate_message(m))


@dataclass(slots=True)
class _Call:
    id: str
    name: str | None
    result: int | None = None
    """Index of the result that answers it."""
    synthetic: bool = False


def repair_pairing(items: Sequence[PlanItem]) -> tuple[list[PlanItem], list[PlanItem]]:
    """OpenClaw's ``repairToolUseResultPairing`` (default options): ``(messages, discarded)``.

    Each assistant message with tool calls is followed by its results, in call
    order (a result found later in its frame or the next ones moves up); a result
    no call claims, and a second result for a call, are discarded; a call whose
    result is missing gets a synthetic error result unless the assistant message
    was aborted or failed.
    """
    msgs = [i.message for i in items]
    raws: dict[int, dict[str, Any]] = {}
    """Results given the id of their frame's only call (a new object in OpenClaw)."""
    starts = [k for k, m in enumerate(msgs) if m.role == "assistant" and call_ids(m)]
    dropped: list[int] = []
    frames: list[tuple[int, int, list[_Call], list[int], list[int]]] = []
    for f, start in enumerate(starts):
        end = starts[f + 1] if f + 1 < len(starts) else len(msgs)
        calls = [_Call(cid, name) for cid, name in call_ids(msgs[start])]
        remainder: list[int] = []
        unclaimed: list[int] = []
        for k in range(start + 1, end):
            m = msgs[k]
            if m.role != "toolResult":
                remainder.append(k)
                continue
            rid = result_id(m)
            if rid is None and len(calls) == 1:
                own, want = _name(m.raw.get("toolName")), _name(calls[0].name)
                if not (own and want and own != want):  # normalizeLegacyToolResultId
                    rid = calls[0].id
                    raws[k] = {**m.raw, "toolCallId": rid, "isError": True}
            synthetic = _is_synthetic_missing(raws.get(k, m.raw))
            call = next((c for c in calls if c.id == rid and c.result is None), None)
            if call is not None:
                call.result, call.synthetic = k, synthetic
            elif rid is None or all(c.id != rid for c in calls):
                unclaimed.append(k)
            elif not synthetic:
                swap = next((c for c in calls if c.id == rid and c.synthetic), None)
                if swap is not None and swap.result is not None:
                    dropped.append(swap.result)
                    swap.result, swap.synthetic = k, False
                else:
                    dropped.append(k)
            else:
                dropped.append(k)
        frames.append((start, end, calls, remainder, unclaimed))
    unresolved: dict[str, list[_Call]] = {}
    for _start, _end, calls, _remainder, unclaimed in frames:
        for c in calls:
            if c.result is None or c.synthetic:
                unresolved.setdefault(c.id, []).append(c)
        for k in unclaimed:
            rid = result_id(msgs[k])
            synthetic = _is_synthetic_missing(msgs[k].raw)
            found = [
                c
                for c in unresolved.get(rid or "", [])
                if rid
                if c.result is None or (c.synthetic and not synthetic)
            ]
            if len(found) != 1:
                dropped.append(k)
                continue
            if found[0].result is not None:
                dropped.append(found[0].result)
            found[0].result, found[0].synthetic = k, synthetic
    out: list[PlanItem] = []
    cursor = 0
    for start, end, calls, remainder, _unclaimed in [*frames, (len(msgs), len(msgs), [], [], [])]:
        for k in range(cursor, start):  # outside any frame: a result here is an orphan
            if msgs[k].role == "toolResult":
                dropped.append(k)
            else:
                out.append(items[k])
        cursor = end
        if start == len(msgs):
            break
        out.append(items[start])
        failed = str(msgs[start].raw.get("stopReason")) in ("error", "aborted")
        for c in calls:
            if c.result is not None:
                k = c.result
                out.append(_rewritten(items[k], _named(raws.get(k, msgs[k].raw), c.name)))
            elif not failed:
                out.append(_missing_result(items[start], c.id, c.name))
        out.extend(items[k] for k in remainder)
    return out, [items[k] for k in sorted(dropped)]


@dataclass(frozen=True, slots=True)
class HistoryPrune:
    """What ``pruneHistoryForContextShare`` keeps and drops."""

    kept: list[PlanItem]
    dropped: list[PlanItem]
    """Oldest first, repair's discards included."""
    dropped_chunks: int
    budget_tokens: int


def prune_history(
    items: Sequence[PlanItem], window: int, share: float, parts: int = DEFAULT_PARTS
) -> HistoryPrune:
    """Drop the older part of a 2-way split, repair tool pairing, until *items* fit.

    OpenClaw's ``pruneHistoryForContextShare``: the budget is
    ``floor(window * share)``; a list that is one group or at most the budget
    is not split.
    """
    budget = max(1, math.floor(window * share))
    kept = list(items)
    dropped: list[PlanItem] = []
    rounds = 0
    n = _parts(parts, len(kept))
    while kept:
        split = stage_split(kept, budget, parts=n, min_messages=2)
        if split is None:
            break
        retained, discarded = repair_pairing([kept[i] for c in split[1:] for i in c])
        dropped += [kept[i] for i in split[0]] + discarded
        kept = retained
        rounds += 1
    order = {id(item): k for k, item in enumerate(items)}
    dropped.sort(key=lambda i: order.get(id(i), len(items)))
    return HistoryPrune(kept, dropped, rounds, budget)


REDISTILL_PREFIX = (
    "Previous compaction summary to re-distill with the current conversation. Prune stale, "
    "duplicate, or superseded details instead of preserving it verbatim."
)


def _redistill_item(previous: str, like: PlanItem) -> PlanItem:
    """``prependPreviousSummaryForRedistill``: the previous summary as a first message."""
    tag = "previous-compaction-summary"
    text = f"<{tag}>\n{REDISTILL_PREFIX}\n\n{previous}\n</{tag}>"
    m = normalize_message(
        {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0}
    )
    return PlanItem(like.entry, m, estimate_message(m))


def staged_calls(
    items: Sequence[PlanItem], max_chunk_tokens: int, previous: str | None = None
) -> tuple[list[list[int]], list[list[int]], int]:
    """``summarizeViaLLM`` -> ``summarizeInStages`` on *items*: ``(parts, chunks, calls)``.

    A previous summary goes first, as a message (``prependPreviousSummaryForRedistill``);
    the parts and chunks are indexes into *items* (a chunk or part holding only the
    previous summary is left out, but its call is counted).
    """
    if not items:
        return [], [], 0
    prev = (previous or "").strip()
    seq = [_redistill_item(prev, items[0]), *items] if prev else list(items)
    parts = stage_split(seq, max_chunk_tokens, worker=True) or [list(range(len(seq)))]
    chunks: list[list[int]] = []
    for part in parts:
        own = summary_chunks([seq[i] for i in part], max_chunk_tokens)
        chunks += [[part[j] for j in chunk] for chunk in own]
    calls = len(chunks) + (1 if len(parts) > 1 else 0)
    off = 1 if prev else 0

    def strip(lists: list[list[int]]) -> list[list[int]]:
        return [[i - off for i in x if i >= off] for x in lists if any(i >= off for i in x)]

    return strip(parts), strip(chunks), calls
