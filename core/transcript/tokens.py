"""The two token estimators of the agents (algorithms.md section 1).

``estimate_text`` is memory-context's (3 chars a token, at least 1);
``estimate_message`` is pi's (4 chars a token, per message role), the one that
drives compaction. Lengths are JavaScript string lengths (UTF-16 code units).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from core.io.jsstr import js_json_len, js_len

if TYPE_CHECKING:
    from core.transcript.model import Message

IMAGE_CHARS = 4800
"""pi counts an image in a tool result or custom message as 4,800 characters."""


def estimate_text(text: str) -> int:
    """memory-context estimate: ``max(1, ceil(len / 3))``."""
    return max(1, math.ceil(js_len(text) / 3))


def message_chars(message: Message) -> int:
    """Characters pi counts for one message.

    user: text blocks; assistant: text, thinking, and for each tool call its
    name plus ``JSON.stringify(arguments)``; tool result and custom: text, and
    4,800 per image; bash: command and output; summaries: the summary.
    """
    role = message.role
    chars = 0
    if role == "assistant":
        for b in message.blocks:
            if b.kind in ("text", "thinking"):
                chars += js_len(b.text)
            elif b.kind == "tool_call":
                chars += js_len(b.name) + js_json_len(b.arguments)
        return chars
    images = role in ("toolResult", "custom")
    for b in message.blocks:
        if b.kind in ("text", "tool_result"):
            chars += js_len(b.text)
            if images:
                chars += IMAGE_CHARS * b.images
        elif images and b.kind == "image":
            chars += IMAGE_CHARS
    return chars


def estimate_message(message: Message) -> int:
    """Pi's estimate for one message: ``ceil(chars / 4)``."""
    return math.ceil(message_chars(message) / 4)


def usage_total(usage: Mapping[str, Any] | None) -> int | None:
    """Tokens an assistant turn reports: ``totalTokens`` or the sum of its parts."""
    if not isinstance(usage, Mapping):
        return None
    total = usage.get("totalTokens")
    if isinstance(total, (int, float)) and not isinstance(total, bool) and total > 0:
        return int(total)
    parts = [usage.get(k) for k in ("input", "output", "cacheRead", "cacheWrite")]
    nums = [int(p) for p in parts if isinstance(p, (int, float)) and not isinstance(p, bool)]
    return sum(nums) if nums else None
