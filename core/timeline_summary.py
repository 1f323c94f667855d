"""One-line summaries of messages, for a timeline's hover."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.transcript.model import Entry, Message

__all__ = ["message_summary"]


def _snippet(text: str, limit: int = 90) -> str:
    flat = " ".join(text[: limit * 3].split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "\u2026"


def _first_text(message: Message) -> str:
    for b in message.blocks:
        if b.kind in ("text", "tool_result") and b.text.strip():
            return b.text
    return ""


def message_summary(entry: Entry, message: Message, tokens: int, thinking: float) -> str:
    """One line for a hover: role, tokens, tools, and the start of the text."""
    role = message.role
    parts: list[str] = []
    if role == "assistant":
        head = f"assistant \u00b7 {tokens:,} tok"
        if thinking > 0:
            head += f" (thinking {thinking:.0%})"
        parts.append(head)
        names: dict[str, int] = {}
        for call in message.tool_calls():
            names[call.name or "?"] = names.get(call.name or "?", 0) + 1
        if names:
            parts.append(
                "calls " + ", ".join(n if c == 1 else f"{n} \u00d7{c}" for n, c in names.items())
            )
        if message.stop_reason in ("aborted", "error"):
            parts.append(message.stop_reason)
    elif role == "toolResult":
        name = message.tool_name or "tool"
        parts.append(f"tool result {name} \u00b7 {tokens:,} tok")
        if message.is_error:
            parts.append("error")
    elif role == "bashExecution":
        parts.append(f"bash \u00b7 {tokens:,} tok")
        command = str(message.raw.get("command") or "")
        code = message.raw.get("exitCode")
        parts.append(f"$ {_snippet(command, 60)}" + (f" (exit {code})" if code else ""))
        return " \u00b7 ".join(parts)
    elif role == "custom":
        kind = entry.raw.get("customType") or message.raw.get("customType") or ""
        parts.append(f"custom {kind}".rstrip() + f" \u00b7 {tokens:,} tok")
    elif role == "branchSummary":
        parts.append(f"branch summary \u00b7 {tokens:,} tok")
    else:
        parts.append(f"{role} \u00b7 {tokens:,} tok")
    text = _first_text(message)
    if text:
        parts.append(f"\u201c{_snippet(text)}\u201d")
    return " \u00b7 ".join(parts)
