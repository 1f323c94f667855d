"""OpenClaw's token estimate for compaction planning, and its planning worker's view.

``dist/compaction-planning-*.mjs`` and ``dist/compaction-*.mjs`` of OpenClaw 2026.9.6.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from typing import TYPE_CHECKING, Any

from core.io.jsonio import dumps
from core.io.jsstr import MEMO_MIN_CHARS, js_json_len, js_len, js_slice

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.compaction.plan_items import PlanItem
    from core.transcript.message import Message

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


@functools.cache
def _cjk_extra() -> dict[int, int]:
    """Extra chars per code point (~120,000 entries: built on the first non-ASCII text)."""
    table: dict[int, int] = {}
    for extra, ranges in reversed(_CJK_WEIGHTS):  # the first range listed wins, as fill() does
        for lo, hi in ranges:
            table.update(dict.fromkeys(range(lo, hi + 1), extra))
    return table


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")

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
    return _estimate_long(text) if len(text) >= MEMO_MIN_CHARS else _estimate_of(text)


@functools.lru_cache(maxsize=1024)
def _estimate_long(text: str) -> int:
    """:func:`_estimate_of`, remembered: planning measures the same long texts often."""
    return _estimate_of(text)


def _estimate_of(text: str) -> int:
    n = js_len(text)
    if text.isascii():
        return n
    # Only non-ASCII code points weigh extra: look those up, all in C (a mostly
    # ASCII text of 60,000 chars costs a regex scan, not 60,000 Python steps).
    wide = "".join(_NON_ASCII.findall(text))
    return n + sum(map(_cjk_extra().get, map(ord, wide), itertools.repeat(0, len(wide))))


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


def is_runtime_context(message: Message) -> bool:
    """``isOpenClawRuntimeContextCustomMessage``."""
    return message.role == "custom" and message.raw.get("customType") == "openclaw.runtime-context"


def openclaw_estimate(message: Message) -> int:
    """OpenClaw's planning estimate of one message (``estimateTokens``, agent-core).

    Unlike pi's: CJK characters weigh more, an image is 8,000 characters (also in
    user messages), blocks are joined by a line break, non-text blocks add an
    omission note, and an OpenClaw runtime-context message counts 0.
    """
    return 0 if is_runtime_context(message) else _estimate_raw(message.role, message.raw)


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
    safe = [k for k, i in enumerate(items) if not is_runtime_context(i.message)]
    if len(safe) < WORKER_MIN_MESSAGES:
        return list(range(len(items))), [openclaw_estimate(i.message) for i in items]
    budget = [_PLANNING_MAX]
    return safe, [_projected_estimate(items[k].message, budget) for k in safe]


def call_ids(message: Message) -> list[tuple[str, str | None]]:
    """``extractToolCallsFromAssistant``: ``(id, name)`` of each tool call block."""
    content = message.raw.get("content")
    out: list[tuple[str, str | None]] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") in _TOOL_CALL_TYPES:
            cid, name = block.get("id"), block.get("name")
            if isinstance(cid, str) and cid:
                out.append((cid, name if isinstance(name, str) else None))
    return out


def result_id(message: Message) -> str | None:
    """``extractToolResultId``: the first non-blank id field, trimmed."""
    for key in _RESULT_ID_KEYS:
        value = message.raw.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None
