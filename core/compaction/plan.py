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
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.jsonio import dumps
from core.jsstr import js_json_len, js_len, js_slice
from core.tokens import estimate_message
from core.transcript.normalize import normalize_message, summary_message
from core.transcript.replay import context_at, pi_context_tokens

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


# -- OpenClaw's planning estimate and chunking (dist/compaction-planning-*.mjs) ----------
# estimateStringChars (dist/cjk-chars-*.mjs): UTF-16 length plus a weight per CJK
# code point; (first, last, extra chars) in the order of WEIGHTED_CJK_RANGES.
_CJK_WEIGHTS: tuple[tuple[int, tuple[tuple[int, int], ...]], ...] = (
    (3, ((183, 183), (12288, 12703), (19968, 40869), (44032, 55215), (65281, 65376))),
    (
        11,
        (
            (4352, 4607),
            (11904, 12287),
            (12704, 19967),
            (40870, 40959),
            (40960, 42239),
            (42752, 42759),
            (43360, 43391),
            (55216, 55295),
            (63744, 64255),
        ),
    ),
    (
        7,
        (
            (711, 711),
            (713, 715),
            (729, 729),
            (746, 747),
            (773, 773),
            (803, 803),
            (65040, 65103),
            (65377, 65500),
            (65504, 65510),
        ),
    ),
    (10, ((119648, 119665),)),
    (
        14,
        (
            (94176, 94207),
            (110576, 110591),
            (110592, 110959),
            (127488, 127743),
            (131072, 195103),
            (196608, 210047),
        ),
    ),
)
_CJK_EXTRA: dict[int, int] = {}
for _extra, _ranges in reversed(_CJK_WEIGHTS):  # the first range listed wins, as fill() does
    for _lo, _hi in _ranges:
        _CJK_EXTRA.update(dict.fromkeys(range(_lo, _hi + 1), _extra))
IMAGE_BLOCK_CHARS = 8000
"""OpenClaw counts an image in user, tool-result and custom content as 2,000 tokens."""
_OMIT_IMAGE = "[image data omitted from summary input]"
_OMIT_OTHER = "[non-text data omitted from summary input]"
MISSING_TOOL_RESULT_TEXT = (
    "[openclaw] missing tool result in session history; "
    "inserted synthetic error result for transcript repair."
)
_TOOL_CALL_TYPES = frozenset({"toolCall", "toolUse", "functionCall"})
_RESULT_ID_KEYS = ("toolCallId", "toolUseId", "tool_call_id", "tool_use_id", "callId", "call_id")


def estimate_string_chars(text: str) -> int:
    """OpenClaw's ``estimateStringChars``: JS length, CJK code points weighted."""
    n = js_len(text)
    if text.isascii():
        return n
    return n + sum(_CJK_EXTRA.get(ord(c), 0) for c in text if ord(c) > 127)


def _content_chars(content: Any) -> int:
    """``countContentChars``: joined block texts, 8,000 per image, omission notes."""
    if isinstance(content, str):
        return estimate_string_chars(content)
    if not isinstance(content, list):
        return 0
    texts: list[str] = []
    omissions: dict[str, None] = {}
    images = 0
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        images += kind == "image"
        text = block.get("text")
        if kind in ("text", "toolResult", "tool_result") and isinstance(text, str) and text:
            texts.append(text)
        elif kind in ("toolResult", "tool_result") and isinstance(block.get("content"), str):
            texts.append(block["content"])
        elif kind != "text":
            omissions[_OMIT_IMAGE if kind == "image" else _OMIT_OTHER] = None
    omission = "\n".join(omissions)
    chars = estimate_string_chars("\n".join(t for t in texts if t)) + images * IMAGE_BLOCK_CHARS
    return chars + (js_len(omission) + 17 if omission else 0)


def _sender_suffix(raw: dict[str, Any]) -> str:
    meta = raw.get("__openclaw")
    if not isinstance(meta, dict):
        return ""

    def norm(value: Any) -> str | None:
        return (value.replace("\0", "").strip() or None) if isinstance(value, str) else None

    sender = {
        k: v
        for k, v in (
            ("id", norm(meta.get("senderId"))),
            ("name", norm(meta.get("senderName"))),
            ("username", norm(meta.get("senderUsername"))),
        )
        if v is not None
    }
    if "id" not in sender:
        return ""
    return " sender=" + dumps(sender).decode()


def _runtime_context(message: Message) -> bool:
    """``isOpenClawRuntimeContextCustomMessage``."""
    return message.role == "custom" and message.raw.get("customType") == "openclaw.runtime-context"


def openclaw_estimate(message: Message) -> int:
    """OpenClaw's planning estimate of one message (``estimateTokens``, agent-core).

    Unlike pi's: CJK characters weigh more, an image is 8,000 characters (also in
    user messages), blocks are joined by a line break, non-text blocks add an
    omission note, and an OpenClaw runtime-context message counts 0.
    """
    return 0 if _runtime_context(message) else _estimate_raw(message.role, message.raw)


def _estimate_raw(role: str, raw: dict[str, Any]) -> int:
    if raw.get("excludeFromContext") is True:
        return 0
    if role == "assistant":
        chars = 0
        content = raw.get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                chars += estimate_string_chars(str(block.get("text") or ""))
            elif kind == "thinking":
                chars += estimate_string_chars(str(block.get("thinking") or ""))
            elif kind == "toolCall":
                chars += estimate_string_chars(str(block.get("name") or ""))
                if "arguments" not in block:
                    chars += 9  # JSON.stringify(undefined) ?? "undefined"
                    continue
                args = block["arguments"]
                text = dumps(args).decode()
                chars += js_json_len(args) + estimate_string_chars(text) - js_len(text)
        return math.ceil(chars / 4)
    if role in ("user", "custom", "toolResult"):
        chars = _content_chars(raw.get("content"))
        if role == "user":
            chars += estimate_string_chars(_sender_suffix(raw))
        return math.ceil(chars / 4)
    if role == "bashExecution":
        text = str(raw.get("command") or "") + str(raw.get("output") or "")
        return math.ceil(estimate_string_chars(text) / 4)
    if role in ("branchSummary", "compactionSummary"):
        return math.ceil(estimate_string_chars(str(raw.get("summary") or "")) / 4)
    return 0


# -- the planning worker's view (dist/compaction-planning-*.mjs, projection region) ---------
# From 64 messages OpenClaw plans in a worker thread, on a bounded projection: past
# 32,768 chars (or the 262,144 of the whole list) a text is sampled and the rest is
# counted apart, rounded up on its own.
WORKER_MIN_MESSAGES = 64
_TEXT_LIMIT = 32_768
_TEXT_SAMPLE = 8_192
_PLANNING_MAX = 262_144
_MAX_ARGUMENT_CHARS = 1_000_000
_UNMEASURABLE = 2**53 - 1


def _project_text(text: str, budget: list[int]) -> tuple[str, int] | None:
    """``projectText``: None when *text* fits, else ``(sample, omitted chars)``."""
    n = js_len(text)
    if n <= _TEXT_LIMIT and n <= budget[0]:
        budget[0] -= n
        return None
    sample = js_slice(text, min(_TEXT_SAMPLE, budget[0]))
    budget[0] -= js_len(sample)
    return sample, estimate_string_chars(text[len(sample) :])


def _project_block(block: Any, budget: list[int]) -> tuple[Any, int]:
    """``projectContentBlock``: the block as projected and its omitted chars."""
    if not isinstance(block, dict):
        return block, 0
    kind = block.get("type") if isinstance(block.get("type"), str) else ""
    if kind == "image" and isinstance(block.get("data"), str) and block["data"]:
        return {**block, "data": ""}, 0
    has_text = isinstance(block.get("text"), str) and bool(block["text"])
    result = kind in ("toolResult", "tool_result")
    visible = {
        "text": kind == "text" or (result and has_text),
        "content": result and not has_text and isinstance(block.get("content"), str),
        "thinking": True,
    }
    out = block
    omitted = 0
    for name in ("text", "content", "thinking"):
        if name == "thinking" and kind != "thinking":
            continue
        value = block.get(name)
        projected = _project_text(value, budget) if isinstance(value, str) else None
        if projected is None:
            continue
        out = {**out, name: projected[0]}
        omitted += projected[1] if visible[name] else 0
    if kind == "toolCall":
        args = block.get("arguments")
        # jsonLengthWithin: undefined (no arguments) cannot be measured; null is 4
        length = js_json_len(args) if "arguments" in block else None
        if length is not None and length > _MAX_ARGUMENT_CHARS:
            length = None
        if length is not None and length <= budget[0]:
            budget[0] -= length
        else:
            budget[0] = 0
            out = {**out, "arguments": {}}
            if length is None:
                omitted += _UNMEASURABLE
            else:
                text = dumps(args).decode()
                omitted += length + estimate_string_chars(text) - js_len(text) - 2
    return out, omitted


def _projected_estimate(message: Message, budget: list[int]) -> int:
    """``projectMessage`` then ``estimateCompactionPlanningTokens``."""
    raw = message.raw
    role = message.role
    content = raw.get("content")
    omitted = 0
    if isinstance(content, str) or not isinstance(content, list):
        names = {
            "bashExecution": ("command", "output"),
            "branchSummary": ("summary",),
            "compactionSummary": ("summary",),
        }.get(role, ())
        names = ("content",) if isinstance(content, str) else names
        for name in names:
            value = raw.get(name)
            projected = _project_text(value, budget) if isinstance(value, str) else None
            if projected is not None:
                raw = {**raw, name: projected[0]}
                omitted += projected[1]
    else:
        blocks = []
        for block in content:
            new, lost = _project_block(block, budget)
            blocks.append(new)
            omitted += lost
        raw = {**raw, "content": blocks}
    return _estimate_raw(role, raw) + math.ceil(omitted / 4)


def planning_tokens(items: Sequence[PlanItem]) -> tuple[list[int], list[int]]:
    """What OpenClaw's planning of *items* sees: ``(indexes, estimates)``.

    ``runCompactionPlan``: under 64 messages the helpers run on all of them; from
    64 the worker gets them without runtime-context messages, projected.
    """
    safe = [k for k, i in enumerate(items) if not _runtime_context(i.message)]
    if len(safe) < WORKER_MIN_MESSAGES:
        return list(range(len(items))), [openclaw_estimate(i.message) for i in items]
    budget = [_PLANNING_MAX]
    return safe, [_projected_estimate(items[k].message, budget) for k in safe]


def _call_ids(message: Message) -> list[tuple[str, str | None]]:
    """``extractToolCallsFromAssistant``: ``(id, name)`` of each tool call block."""
    content = message.raw.get("content")
    out: list[tuple[str, str | None]] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") in _TOOL_CALL_TYPES:
            cid, name = block.get("id"), block.get("name")
            if isinstance(cid, str) and cid:
                out.append((cid, name if isinstance(name, str) else None))
    return out


def _result_id(message: Message) -> str | None:
    """``extractToolResultId``: the first non-blank id field, trimmed."""
    for key in _RESULT_ID_KEYS:
        value = message.raw.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


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
            pending = Counter() if failed else Counter(cid for cid, _ in _call_ids(m))
        elif m.role == "toolResult" and pending.total():
            rid = _result_id(m)
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
    safe = [k for k, i in enumerate(items) if not _runtime_context(i.message)]
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
    starts = [k for k, m in enumerate(msgs) if m.role == "assistant" and _call_ids(m)]
    dropped: list[int] = []
    frames: list[tuple[int, int, list[_Call], list[int], list[int]]] = []
    for f, start in enumerate(starts):
        end = starts[f + 1] if f + 1 < len(starts) else len(msgs)
        calls = [_Call(cid, name) for cid, name in _call_ids(msgs[start])]
        remainder: list[int] = []
        unclaimed: list[int] = []
        for k in range(start + 1, end):
            m = msgs[k]
            if m.role != "toolResult":
                remainder.append(k)
                continue
            rid = _result_id(m)
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
            rid = _result_id(msgs[k])
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
        plan.turn_prefix = [x for e in path[turn_start:cut] if (x := _item(e))]
    summarize = [x for e in path[start:history_end] if (x := _item(e))]
    plan.kept = [x for e in path[cut:] if (x := _item(e))]
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
