"""Messages and content blocks, normalised across agents' shapes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Block:
    """One content block, normalised across pi, Anthropic and OpenAI shapes.

    ``kind`` is one of ``text``, ``thinking``, ``image``, ``tool_call``,
    ``tool_result`` or ``other`` (kept raw).
    """

    kind: str
    text: str = ""
    tool_id: str = ""
    name: str = ""
    arguments: Any = None
    is_error: bool = False
    mime: str = ""
    size: int = 0
    """Decoded bytes of an image (estimated from its base64 length)."""
    images: int = 0
    """Images inside a ``tool_result`` block."""
    raw: Any = None


@dataclass(frozen=True, slots=True)
class Message:
    """A message as the agent keeps it, with normalised role and blocks.

    ``role`` is one of ``user``, ``assistant``, ``toolResult``,
    ``bashExecution``, ``custom``, ``branchSummary``, ``compactionSummary``,
    ``system``, or the file's own role when unknown. ``raw`` is the message
    exactly as in the file.
    """

    role: str
    blocks: tuple[Block, ...]
    raw: dict[str, Any]
    timestamp: int | None = None
    tool_call_id: str = ""
    tool_name: str = ""
    is_error: bool = False
    usage: dict[str, Any] | None = None
    stop_reason: str = ""
    model: str = ""
    provider: str = ""
    source_role: str = ""
    """The role as written in the file, when normalisation changed it."""

    def text(self) -> str:
        """Plain text of the message (text and tool-result blocks)."""
        parts = [b.text for b in self.blocks if b.kind in ("text", "tool_result") and b.text]
        return "\n".join(parts)

    def tool_calls(self) -> tuple[Block, ...]:
        """The tool-call blocks of the message."""
        return tuple(b for b in self.blocks if b.kind == "tool_call")

    def result_ids(self) -> tuple[str, ...]:
        """Ids of the tool calls this message answers."""
        ids = [b.tool_id for b in self.blocks if b.kind == "tool_result" and b.tool_id]
        if self.role == "toolResult" and self.tool_call_id and self.tool_call_id not in ids:
            ids.insert(0, self.tool_call_id)
        return tuple(ids)
