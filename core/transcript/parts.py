"""Display parts of a message and rows of a replayed context, for the message views.

Pure helpers: a message becomes a list of :class:`Part` (one per content block, with
pi's token estimate for the block), a tool call finds its paired results, and a
replayed context (:func:`core.transcript.replay.context_at`) becomes
:class:`ContextRow` records labelled by where each message came from.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.io import jsonio
from core.io.jsstr import js_json_len, js_len
from core.transcript.provider import provider_view
from core.transcript.recalled_block import MARKER
from core.transcript.recalled_block import injection_index as default_injection_index
from core.transcript.tokens import IMAGE_CHARS

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from core.transcript.message import Block, Message
    from core.transcript.model import Session, ToolPair
    from core.transcript.replay import ContextItem

ORIGIN_SUMMARY = "summary"
ORIGIN_KEPT = "kept"
ORIGIN_AFTER = "after compaction"
ORIGIN_HISTORY = "history"
"""A message of a context no compaction has touched yet."""
ORIGIN_RECALLED = "recalled"
ORIGIN_SYNTHETIC = "synthetic"
"""A tool call's missing result, inserted as pi does before a request (never in the file)."""
ORIGIN_NOT_SENT = "not sent"
"""In the agent's context but never sent: an aborted or failed turn, a ``!!`` bash run."""

_WS = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Part:
    """One content block as the views show it."""

    kind: str
    """``text``, ``thinking``, ``tool_call``, ``tool_result``, ``image`` or ``other``."""
    title: str
    body: str
    """Plain text to show (never markup): the text, the pretty-printed arguments, ..."""
    tokens: int
    """pi's estimate for the block (``ceil(chars / 4)``; 0 where pi counts nothing)."""
    tool_id: str = ""
    is_error: bool = False
    mime: str = ""
    size: int = 0
    """Bytes of an image."""
    images: int = 0
    """Images inside a tool result."""
    arguments: Any = None
    """A tool call's arguments as parsed."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """One result of a tool call, from the entry that holds it."""

    entry_id: str
    text: str
    is_error: bool
    images: int
    tokens: int


@dataclass(frozen=True, slots=True)
class ContextRow:
    """One message of the context the model saw, as a table row."""

    position: int
    """1-based place in the context."""
    entry_id: str
    """The entry the message came from; empty for an injected recalled block."""
    entry_index: int
    """The entry's object index (``#N``); -1 for an injected recalled block."""
    role: str
    origin: str
    tokens: int
    preview: str


def format_bytes(n: int) -> str:
    """``812 B``, ``14.2 KB``, ``3.1 MB``."""
    size = float(n)
    for unit in ("B", "KB", "MB"):
        if size < 1024:
            return f"{n:,} B" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{size:,.1f} GB"


def arguments_text(arguments: Any) -> str:
    """Tool-call arguments for display: a string as is, anything else as indented JSON."""
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    try:
        return jsonio.dumps(arguments, pretty=True).decode("utf-8")
    except TypeError:
        return repr(arguments)


def collapse_line(text: str, limit: int = 160) -> str:
    """*text* with whitespace collapsed, cut to *limit* characters with an ellipsis."""
    flat = _WS.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def clip_lines(text: str, max_lines: int) -> tuple[str, int]:
    """The first *max_lines* lines of *text* and how many lines were left out."""
    lines = text.split("\n")
    if len(lines) <= max_lines:
        return text, 0
    return "\n".join(lines[:max_lines]), len(lines) - max_lines


def block_chars(block: Block, role: str) -> int:
    """Characters pi counts for *block* in a message of *role* (see ``core.transcript.tokens``)."""
    if role == "assistant":
        if block.kind in ("text", "thinking"):
            return js_len(block.text)
        if block.kind == "tool_call":
            return js_len(block.name) + js_json_len(block.arguments)
        return 0
    images = role in ("toolResult", "custom")
    if block.kind in ("text", "tool_result"):
        return js_len(block.text) + (IMAGE_CHARS * block.images if images else 0)
    if block.kind == "image" and images:
        return IMAGE_CHARS
    return 0


def block_tokens(block: Block, role: str) -> int:
    """Pi's estimate (``ceil(chars / 4)``) for one block."""
    return math.ceil(block_chars(block, role) / 4)


def _bash_parts(message: Message) -> list[Part]:
    titles = ("Command", "Output")
    parts = []
    for i, b in enumerate(message.blocks):
        title = titles[i] if i < len(titles) else "Text"
        parts.append(Part("text", title, b.text, block_tokens(b, message.role)))
    exit_code = message.raw.get("exitCode")
    if exit_code not in (None, 0) and parts:
        last = parts[-1]
        parts[-1] = Part(
            last.kind, f"{last.title} (exit {exit_code})", last.body, last.tokens, is_error=True
        )
    return parts


def message_parts(message: Message) -> list[Part]:
    """One :class:`Part` per content block of *message*, in order."""
    if message.role == "bashExecution":
        return _bash_parts(message)
    parts: list[Part] = []
    for b in message.blocks:
        tokens = block_tokens(b, message.role)
        if b.kind == "text" and message.role == "toolResult":
            title = "Error result" if message.is_error else "Result"
            parts.append(
                Part("text", title, b.text, tokens, message.tool_call_id, message.is_error)
            )
        elif b.kind == "text":
            parts.append(Part("text", "Text", b.text, tokens))
        elif b.kind == "thinking":
            title = "Thinking (redacted)" if not b.text and b.raw is not None else "Thinking"
            parts.append(Part("thinking", title, b.text, tokens))
        elif b.kind == "tool_call":
            body = arguments_text(b.arguments)
            name = b.name or "tool call"
            parts.append(Part("tool_call", name, body, tokens, b.tool_id, arguments=b.arguments))
        elif b.kind == "tool_result":
            parts.append(
                Part(
                    "tool_result", "Result", b.text, tokens, b.tool_id, b.is_error, images=b.images
                )
            )
        elif b.kind == "image":
            parts.append(Part("image", "Image", "", tokens, mime=b.mime, size=b.size))
        else:
            parts.append(Part("other", "Block", arguments_text(b.raw), tokens))
    return parts


def tool_results(session: Session, pair: ToolPair) -> list[ToolResult]:
    """The results of a tool call, one per result entry, in file order."""
    out: list[ToolResult] = []
    for entry_id in pair.result_entries:
        entry = session.by_id.get(entry_id)
        msg = entry.message if entry is not None else None
        if msg is None:
            continue
        if msg.role == "toolResult" and msg.tool_call_id == pair.call_id:
            text = msg.text()
            images = sum(1 for b in msg.blocks if b.kind == "image") + sum(
                b.images for b in msg.blocks
            )
            chars = sum(block_chars(b, msg.role) for b in msg.blocks)
            out.append(ToolResult(entry_id, text, msg.is_error, images, math.ceil(chars / 4)))
            continue
        for b in msg.blocks:
            if b.kind == "tool_result" and b.tool_id == pair.call_id:
                out.append(
                    ToolResult(entry_id, b.text, b.is_error, b.images, block_tokens(b, msg.role))
                )
    return out


def tool_call(session: Session, pair: ToolPair) -> Block | None:
    """The call block of a tool pair (None when the call is missing)."""
    entry = session.by_id.get(pair.call_entry or "")
    msg = entry.message if entry is not None else None
    if msg is None:
        return None
    for b in msg.blocks:
        if b.kind == "tool_call" and b.tool_id == pair.call_id:
            return b
    return None


def message_preview(message: Message, limit: int = 160) -> str:
    """A one-line preview of *message* for tables."""
    if message.role == "bashExecution":
        return collapse_line("$ " + (message.blocks[0].text if message.blocks else ""), limit)
    pieces: list[str] = []
    for b in message.blocks:
        if b.kind in ("text", "tool_result") and b.text.strip():
            pieces.append(b.text[: limit * 4])  # collapse whitespace of the head only
        elif b.kind == "tool_call":
            args = b.arguments
            if isinstance(args, dict):
                shown = ", ".join(
                    f"{k}={collapse_line(str(v), 60)}" for k, v in list(args.items())[:3]
                )
            else:
                shown = collapse_line(arguments_text(args), 60)
            pieces.append(f"→ {b.name}({shown})")
        elif b.kind == "image":
            pieces.append(f"[image {b.mime or '?'} {format_bytes(b.size)}]")
        if len(" ".join(pieces)) > limit:
            break
    text = " ".join(pieces)
    if not text and any(b.kind == "thinking" for b in message.blocks):
        text = "(thinking only)"
    if message.role == "toolResult" and message.tool_name:
        text = f"{message.tool_name}: {text}"
    return collapse_line(text, limit)


def is_recalled_block(message: Message) -> bool:
    """True for a user message holding a memory-context recalled block."""
    return message.role == "user" and any(
        b.kind == "text" and MARKER in b.text for b in message.blocks
    )


def context_rows(
    items: Sequence[ContextItem],
    recalled_block: str | None = None,
    injection_index: int | None = None,
) -> list[ContextRow]:
    """Rows of the context the model saw, labelled by origin.

    Parameters
    ----------
    items
        A replayed context (:func:`core.transcript.replay.context_at`).
    recalled_block
        A recalled-context block to inject. Recalled blocks already in the context are
        removed first, as memory-context does.
    injection_index
        Where the block goes among the remaining messages; by default right after the
        system prompt and a compaction summary
        (:func:`core.transcript.recalled_block.injection_index`).

    Returns
    -------
    list[ContextRow]
        Numbered from 1, in the order the model saw them; with the results pi
        makes for calls without one (:data:`ORIGIN_SYNTHETIC`) and what it never
        sends (:data:`ORIGIN_NOT_SENT`) marked (:func:`core.transcript.provider.provider_view`).
    """
    comp_index = -1
    if items and items[0].entry.type == "compaction":
        comp_index = items[0].entry.index
    pending: list[tuple[str, int, str, str, int, str]] = []
    for pos, item in enumerate(provider_view(items)):
        msg = item.message
        if item.synthetic:
            origin = ORIGIN_SYNTHETIC
        elif not item.sent:
            origin = ORIGIN_NOT_SENT
        elif comp_index >= 0 and pos == 0:
            origin = ORIGIN_SUMMARY
        elif is_recalled_block(msg):
            if recalled_block is not None:
                continue
            origin = ORIGIN_RECALLED
        elif comp_index < 0:
            origin = ORIGIN_HISTORY
        elif item.entry.index < comp_index:
            origin = ORIGIN_KEPT
        else:
            origin = ORIGIN_AFTER
        pending.append(
            (item.entry.id, item.entry.index, msg.role, origin, item.tokens, message_preview(msg))
        )
    if recalled_block:
        where = injection_index
        if where is None:
            where = default_injection_index([p[2] for p in pending])
        where = max(0, min(where, len(pending)))
        tokens = math.ceil(js_len(recalled_block) / 4)
        pending.insert(
            where, ("", -1, "user", ORIGIN_RECALLED, tokens, collapse_line(recalled_block, 160))
        )
    return [ContextRow(i + 1, *p) for i, p in enumerate(pending)]


def usage_line(usage: Mapping[str, Any] | None) -> str:
    """``input 2,775 · output 141 · cache read 0 · total 2,916`` from an assistant usage."""
    if not usage:
        return ""
    names = (
        ("input", "input"),
        ("output", "output"),
        ("cacheRead", "cache read"),
        ("cacheWrite", "cache write"),
        ("totalTokens", "total"),
    )
    shown = []
    for key, label in names:
        value = usage.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            shown.append(f"{label} {int(value):,}")
    return " · ".join(shown)
