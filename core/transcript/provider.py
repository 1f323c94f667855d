"""What the provider receives: pi's message transform over a replayed context.

pi's ``buildSessionContext`` (:func:`core.transcript.replay.context_at`) is the
agent's context; before each request pi-ai's ``transformMessages``
(``@mariozechner/pi-ai`` 0.73.1, ``dist/providers/transform-messages.js``, second
pass) makes it valid for the provider's API:

- an assistant turn that ended in ``error`` or ``aborted`` is not sent (its
  partial content could be rejected);
- a tool call whose result was never written (the agent was interrupted) gets a
  synthetic error result, ``No result provided``, inserted before the next
  assistant or user message, or at the end. Anthropic's API rejects a call
  without a result, so every context memlens trims, compacts or shows as sent
  carries these, marked.

Checked against pi-ai's own ``transformMessages`` in ``tests/oracle``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from core.transcript.normalize import normalize_message
from core.transcript.tokens import estimate_message

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.transcript.message import Block, Message
    from core.transcript.replay import ContextItem

SYNTHETIC_RESULT_TEXT = "No result provided"
"""pi-ai's text for a tool call without a result."""
SYNTHETIC_KEY = "__memlens"
"""Key in a synthetic message's ``raw`` saying why memlens made it (never written)."""
SKIPPED_STOPS = frozenset({"error", "aborted"})


def _synthetic_result(call: Block, timestamp: int | None = None) -> Message:
    """The error result pi-ai inserts for *call*, marked as memlens-made in ``raw``."""
    raw: dict[str, Any] = {
        "role": "toolResult",
        "toolCallId": call.tool_id,
        "toolName": call.name,
        "content": [{"type": "text", "text": SYNTHETIC_RESULT_TEXT}],
        "isError": True,
        "timestamp": timestamp,
        SYNTHETIC_KEY: {"synthetic": "missing tool result", "call": call.tool_id},
    }
    msg = normalize_message(raw)
    assert msg is not None
    return msg


def as_sent(message: Message) -> dict[str, Any]:
    """The message's JSON as pi sends it: a synthetic one without memlens's marker."""
    raw = message.raw
    return {k: v for k, v in raw.items() if k != SYNTHETIC_KEY} if SYNTHETIC_KEY in raw else raw


def is_synthetic(message: Message) -> bool:
    """True for a message memlens made (a synthetic tool result), never in the file."""
    return isinstance(message.raw.get(SYNTHETIC_KEY), dict)


USER_LIKE = frozenset({"user", "bashExecution", "custom", "branchSummary", "compactionSummary"})
"""Roles pi's ``convertToLlm`` sends as user messages (which end a tool-call turn)."""


def _sent(message: Message) -> bool:
    """False for what pi never sends: error/aborted turns, ``!!`` bash runs, unknown roles."""
    if message.role == "assistant":
        return message.stop_reason not in SKIPPED_STOPS
    if message.role == "bashExecution":
        return not message.raw.get("excludeFromContext")
    return message.role in USER_LIKE or message.role == "toolResult"


def _transform(messages: Sequence[Message]) -> list[tuple[int, Message | None]]:
    """``(source index, synthetic message or None for the source itself)``, in send order."""
    out: list[tuple[int, Message | None]] = []
    pending: list[Block] = []
    answered: set[str] = set()
    source = -1

    def flush() -> None:
        nonlocal pending, answered
        stamp = messages[source].timestamp if source >= 0 else None
        for call in pending:
            if call.tool_id not in answered:
                out.append((source, _synthetic_result(call, stamp)))
        pending, answered = [], set()

    for i, msg in enumerate(messages):
        if not _sent(msg):
            if msg.role == "assistant":
                flush()  # pi flushes before it skips the turn
            continue
        if msg.role == "assistant":
            flush()
            calls = [c for c in msg.tool_calls() if c.tool_id]
            if calls:
                pending, answered, source = calls, set(), i
        elif msg.role == "toolResult":
            answered.update(msg.result_ids())
        else:
            flush()
        out.append((i, None))
    flush()
    return out


def provider_view(items: Sequence[ContextItem]) -> list[ContextItem]:
    """*items* with pi's synthetic results inserted and what pi skips marked ``sent=False``.

    A synthetic item keeps the entry of the call it answers, carries
    ``synthetic=True`` and pi's estimate of the inserted message.
    """
    out: list[ContextItem] = []
    done = 0
    for i, made in _transform([item.message for item in items]):
        if made is None:
            out.extend(replace(x, sent=False) for x in items[done:i])
            out.append(items[i])
            done = i + 1
        else:
            item = items[i]
            out.append(replace(item, message=made, tokens=estimate_message(made), synthetic=True))
    out.extend(replace(x, sent=False) for x in items[done:])
    return out


def provider_context(items: Sequence[ContextItem]) -> list[ContextItem]:
    """*items* as pi sends them: synthetic results added, what pi skips left out."""
    return [item for item in provider_view(items) if item.sent]


def provider_messages(messages: Sequence[Message]) -> list[Message]:
    """:func:`provider_context` over bare messages (trim, compaction input)."""
    return [messages[i] if made is None else made for i, made in _transform(messages)]


def missing_results(messages: Sequence[Message]) -> dict[int, list[Message]]:
    """Synthetic results pi would send, keyed by the index of the call's message.

    For text that replays a conversation (a summary's input), where the results go
    right after the call.
    """
    out: dict[int, list[Message]] = {}
    for source, made in _transform(messages):
        if made is not None:
            out.setdefault(source, []).append(made)
    return out
