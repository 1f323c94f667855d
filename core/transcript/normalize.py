"""Normalise messages of every shape into :class:`Message`.

Shapes: pi (``toolCall`` blocks, role ``toolResult``), Anthropic (``tool_use`` /
``tool_result`` blocks), OpenAI (``functionCall`` blocks or a ``tool_calls``
array, role ``tool``), Bedrock-style ``toolUse``. The raw dict is kept as is.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from core.io import jsonio
from core.io.timefmt import MAX_DATE_MS
from core.transcript.message import Block, Message

ROLE_ALIASES = {
    "hookMessage": "custom",  # v2 name, renamed in v3
    "tool": "toolResult",
    "function": "toolResult",
    "developer": "system",
}
CALL_TYPES = frozenset({"toolCall", "tool_use", "toolUse", "functionCall", "function_call"})
RESULT_TYPES = frozenset({"tool_result", "toolResult", "function_call_output"})
TEXT_TYPES = frozenset({"text", "input_text", "output_text"})


def _parse_arguments(value: Any) -> Any:
    # OpenAI sends arguments as a JSON string; pi and Anthropic as an object.
    if isinstance(value, str):
        try:
            return jsonio.loads(value)
        except jsonio.JSONDecodeError:
            return value
    return value


def _image_block(block: Mapping[str, Any]) -> Block:
    data = block.get("data")
    mime = block.get("mimeType") or block.get("media_type") or ""
    source = block.get("source")
    if isinstance(source, Mapping):
        data = source.get("data", data)
        mime = source.get("media_type") or mime
    size = (len(data) * 3) // 4 if isinstance(data, str) else 0
    return Block("image", mime=str(mime), size=size, raw=block)


def _result_content(content: Any) -> tuple[str, int]:
    if isinstance(content, str):
        return content, 0
    texts: list[str] = []
    images = 0
    if isinstance(content, list):
        for part in content:
            if isinstance(part, Mapping):
                if part.get("type") in TEXT_TYPES and isinstance(part.get("text"), str):
                    texts.append(part["text"])
                elif part.get("type") == "image":
                    images += 1
            elif isinstance(part, str):
                texts.append(part)
    return "\n".join(texts), images


def normalize_block(block: Any) -> Block:
    """Normalise one content block."""
    if type(block) is not dict:  # orjson gives plain dicts; anything else is rare
        if isinstance(block, str):
            return Block("text", text=block)
        if not isinstance(block, Mapping):
            return Block("other", raw=block)
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return Block("text", text=text if type(text) is str else str(text or ""))
    if kind == "toolCall":
        return Block(
            "tool_call",
            tool_id=str(block.get("id") or ""),
            name=str(block.get("name") or ""),
            arguments=block.get("arguments"),
        )
    if type(kind) is not str:  # a damaged block: {"type": {...}} is no block type
        return Block("other", raw=block)
    if kind in TEXT_TYPES:
        return Block("text", text=str(block.get("text") or ""))
    if kind == "thinking":
        return Block("thinking", text=str(block.get("thinking") or ""))
    if kind == "redacted_thinking":
        return Block("thinking", text="", raw=block)
    if kind == "image":
        return _image_block(block)
    if kind in CALL_TYPES:
        args = block.get("arguments", block.get("input"))
        tool_id = block.get("id") or block.get("toolUseId") or block.get("call_id") or ""
        return Block(
            "tool_call",
            tool_id=str(tool_id),
            name=str(block.get("name") or ""),
            arguments=_parse_arguments(args),
        )
    if kind in RESULT_TYPES:
        tool_id = block.get("tool_use_id") or block.get("toolUseId") or block.get("call_id") or ""
        text, images = _result_content(block.get("content", block.get("output")))
        is_error = bool(block.get("is_error") or block.get("status") == "error")
        return Block(
            "tool_result", text=text, tool_id=str(tool_id), is_error=is_error, images=images
        )
    return Block("other", raw=block)


def _blocks(content: Any) -> tuple[Block, ...]:
    if type(content) is list:
        return tuple([normalize_block(b) for b in content])
    if content is None:
        return ()
    if isinstance(content, str):
        return (Block("text", text=content),)
    return (Block("other", raw=content),)


def _int_or_none(value: Any) -> int | None:
    """Epoch ms of a JSON number; None outside JavaScript's Date range (+-8.64e15)."""
    kind = type(value)
    if kind is int:
        return value if -MAX_DATE_MS <= value <= MAX_DATE_MS else None
    if kind is float:
        return int(value) if -MAX_DATE_MS <= value <= MAX_DATE_MS else None
    return None


def iso_to_ms(value: Any) -> int | None:
    """Epoch milliseconds of an ISO-8601 timestamp (None if unreadable)."""
    if not isinstance(value, str):
        return _int_or_none(value)
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


USAGE_FIELDS = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
MAX_TOKENS = 10**9
"""More tokens than any context holds: a usage figure above it is damage, not data."""


def bad_token_count(value: Any) -> bool:
    """True for a usage figure that is not a whole count from 0 to :data:`MAX_TOKENS`."""
    if value is None:
        return False
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return True
    return not 0 <= value <= MAX_TOKENS


def clean_usage(usage: Mapping[str, Any]) -> dict[str, Any]:
    """*usage* without the token figures :func:`bad_token_count` rejects (reported at load)."""
    out = dict(usage)
    for key in USAGE_FIELDS:
        if key in out and bad_token_count(out[key]):
            del out[key]
    return out


def normalize_message(raw: Mapping[str, Any]) -> Message:
    """Normalise one agent message (the ``message`` field of an entry)."""
    source_role = str(raw.get("role") or "")
    role = ROLE_ALIASES.get(source_role, source_role)
    blocks = _blocks(raw.get("content"))
    calls = raw.get("tool_calls")
    if isinstance(calls, list):  # OpenAI chat: assistant.tool_calls[].function
        extra = []
        for call in calls:
            if not isinstance(call, Mapping):
                continue
            fn_raw = call.get("function")
            fn: Mapping[str, Any] = fn_raw if isinstance(fn_raw, Mapping) else {}
            extra.append(
                Block(
                    "tool_call",
                    tool_id=str(call.get("id") or ""),
                    name=str(fn.get("name") or call.get("name") or ""),
                    arguments=_parse_arguments(fn.get("arguments", call.get("arguments"))),
                )
            )
        blocks = blocks + tuple(extra)
    if role == "user" and blocks and all(b.kind == "tool_result" for b in blocks):
        role = "toolResult"  # Anthropic: results travel in a user message
    if role == "bashExecution":
        blocks = (
            Block("text", text=str(raw.get("command") or "")),
            Block("text", text=str(raw.get("output") or "")),
        )
    tool_call_id = raw.get("toolCallId") or raw.get("tool_call_id") or raw.get("toolUseId") or ""
    usage = raw.get("usage")
    return Message(
        role=role,
        blocks=blocks,
        raw=raw if isinstance(raw, dict) else dict(raw),
        timestamp=_int_or_none(raw.get("timestamp")),
        tool_call_id=str(tool_call_id),
        tool_name=str(raw.get("toolName") or raw.get("name") or ""),
        is_error=bool(raw.get("isError") or raw.get("is_error")),
        usage=clean_usage(usage) if isinstance(usage, Mapping) else None,
        stop_reason=str(raw.get("stopReason") or raw.get("stop_reason") or ""),
        model=str(raw.get("model") or ""),
        provider=str(raw.get("provider") or ""),
        source_role=source_role if source_role != role else "",
    )


def summary_message(role: str, summary: str, timestamp: Any, raw: Mapping[str, Any]) -> Message:
    """The message a compaction or branch summary puts in context."""
    return Message(
        role=role,
        blocks=(Block("text", text=summary),),
        raw=dict(raw),
        timestamp=iso_to_ms(timestamp),
    )


def custom_message(entry: Mapping[str, Any]) -> Message:
    """The user-side message a ``custom_message`` entry puts in context."""
    return Message(
        role="custom",
        blocks=_blocks(entry.get("content")),
        raw=dict(entry),
        timestamp=iso_to_ms(entry.get("timestamp")),
    )


def entry_message(kind: str, obj: dict[str, Any]) -> Message | None:
    """The message an entry of type *kind* puts in context, if any."""
    if kind == "message":
        msg = obj.get("message")
        return normalize_message(msg) if isinstance(msg, dict) else None
    if kind == "compaction":
        return summary_message(
            "compactionSummary", str(obj.get("summary") or ""), obj.get("timestamp"), obj
        )
    if kind == "branch_summary" and obj.get("summary"):
        return summary_message(
            "branchSummary", str(obj.get("summary") or ""), obj.get("timestamp"), obj
        )
    if kind == "custom_message":
        return custom_message(obj)
    return None
