"""Where the tokens of a context go: a breakdown by section for the budget gauge.

The sections are the parts a developer asks about (system, compaction summary,
user, assistant text, thinking, tool calls, tool results, recalled memory). Each
message's tokens are pi's estimate (:func:`core.transcript.tokens.estimate_message`, the
``tokens`` of a :class:`~core.transcript.replay.ContextItem`), split over the
sections of its blocks in proportion to the characters pi counts for them, with
largest-remainder rounding, so the sections add up exactly to the estimated
context. When the provider reported a larger context (the ``usage`` of the last
assistant turn plus the estimate after it: the context tokens of
:mod:`core.context.terms`), the rest is a section of its own, "reported, not in
messages": mostly the system prompt and tool definitions, which pi transcripts do
not store.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

from core.io.jsstr import js_json_len, js_len
from core.transcript.recalled_block import MARKER
from core.transcript.replay import context_at, context_size
from core.transcript.tokens import IMAGE_CHARS

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.transcript.message import Message
    from core.transcript.model import Session
    from core.transcript.replay import ContextItem

SectionKey = Literal[
    "system",
    "summary",
    "user",
    "assistant_text",
    "thinking",
    "tool_calls",
    "tool_results",
    "recalled",
    "unattributed",
]

SECTION_KEYS: tuple[SectionKey, ...] = get_args(SectionKey)
"""Every section, in the order the gauge stacks them."""

SECTION_LABELS: dict[SectionKey, str] = {
    "system": "system",
    "summary": "compaction summary",
    "user": "user",
    "assistant_text": "assistant text",
    "thinking": "thinking",
    "tool_calls": "tool calls",
    "tool_results": "tool results",
    "recalled": "recalled memory",
    "unattributed": "reported, not in messages",
}

SECTION_HELP: dict[SectionKey, str] = {
    "system": "system-role messages in the transcript",
    "summary": "compaction and branch summaries",
    "user": "user messages and extension (custom) messages",
    "assistant_text": "the text blocks of assistant messages",
    "thinking": "the thinking blocks of assistant messages",
    "tool_calls": "tool names and JSON arguments of assistant tool calls",
    "tool_results": "tool results (images count 4,800 chars) and user-run bash",
    "recalled": "recalled-context blocks of memory-context",
    "unattributed": (
        "the context tokens as reported minus the chars/4 estimate of the messages: "
        "the system prompt, tool definitions and the estimator's error"
    ),
}

_RECALLED = re.compile(r"<recalled-context\b.*?(?:</recalled-context>|\Z)", re.S)
_USER_SIDE = frozenset({"user", "custom"})


@dataclass(frozen=True, slots=True)
class Section:
    """Tokens of one section of a context."""

    key: SectionKey
    label: str
    tokens: int
    messages: int
    """Messages that put at least one token in this section."""
    largest_entry: str | None = None
    """Id of the entry that put the most tokens here."""
    largest_tokens: int = 0


@dataclass(frozen=True, slots=True)
class ContextBreakdown:
    """The tokens of a context by section.

    ``sum(s.tokens for s in sections) == total_tokens``; without the
    ``unattributed`` section they add up to ``estimated_tokens``.
    """

    sections: tuple[Section, ...]
    """One per key of :data:`SECTION_KEYS`, in that order (zero sections included)."""
    estimated_tokens: int
    """pi's estimate of the context plus the recalled block."""
    measured_tokens: int | None
    """The agent's measured context plus the recalled block; None without usage."""
    total_tokens: int
    """``max(estimated, measured)``: the length of the stacked bar."""
    messages: int
    system_note: str
    """What the system section holds, or why it is empty."""
    notes: tuple[str, ...] = ()

    @property
    def source(self) -> Literal["measured", "estimated"]:
        """Where the context size comes from (as :class:`core.context.budget.Budget`)."""
        return "estimated" if self.measured_tokens is None else "measured"

    @property
    def overestimate(self) -> int:
        """Tokens by which the estimate exceeds the measured context (0 if not)."""
        if self.measured_tokens is None:
            return 0
        return max(0, self.estimated_tokens - self.measured_tokens)

    def section(self, key: SectionKey) -> Section:
        """The section named *key*."""
        return self.sections[SECTION_KEYS.index(key)]

    def tokens(self, key: SectionKey) -> int:
        """Tokens of the section named *key*."""
        return self.section(key).tokens


def _recalled_chars(text: str) -> int:
    if MARKER not in text and "<recalled-context" not in text:
        return 0
    return sum(js_len(m.group(0)) for m in _RECALLED.finditer(text))


def message_section_chars(message: Message) -> dict[SectionKey, int]:
    """Characters pi counts for *message*, by section.

    The values add up to :func:`core.transcript.tokens.message_chars` of the message.
    """
    role = message.role
    if role == "assistant":
        text = thinking = calls = 0
        for b in message.blocks:
            if b.kind == "text":
                text += js_len(b.text)
            elif b.kind == "thinking":
                thinking += js_len(b.text)
            elif b.kind == "tool_call":
                calls += js_len(b.name) + js_json_len(b.arguments)
        return {"assistant_text": text, "thinking": thinking, "tool_calls": calls}
    images = role in ("toolResult", "custom")
    chars = recalled = 0
    for b in message.blocks:
        if b.kind in ("text", "tool_result"):
            chars += js_len(b.text)
            if images:
                chars += IMAGE_CHARS * b.images
            if role in _USER_SIDE:
                recalled += _recalled_chars(b.text)
        elif images and b.kind == "image":
            chars += IMAGE_CHARS
    if role == "system":
        return {"system": chars}
    if role in ("compactionSummary", "branchSummary"):
        return {"summary": chars}
    if role in ("toolResult", "bashExecution"):
        return {"tool_results": chars}
    return {"user": chars - recalled, "recalled": recalled}


def split_tokens(tokens: int, chars: dict[SectionKey, int]) -> dict[SectionKey, int]:
    """Split *tokens* over sections in proportion to *chars* (largest remainder).

    The result adds up to *tokens* exactly; all of it goes to the first key when
    every count is zero.
    """
    total = sum(chars.values())
    if tokens <= 0 or not chars:
        return dict.fromkeys(chars, 0)
    if total <= 0:
        first = next(iter(chars))
        return {k: (tokens if k == first else 0) for k in chars}
    shares = {k: tokens * c / total for k, c in chars.items()}
    out = {k: math.floor(v) for k, v in shares.items()}
    left = tokens - sum(out.values())
    for k in sorted(chars, key=lambda k: shares[k] - out[k], reverse=True)[:left]:
        out[k] += 1
    return out


def context_breakdown(
    items: Sequence[ContextItem], *, recalled_tokens: int = 0
) -> ContextBreakdown:
    """Tokens of the context *items* by section.

    Parameters
    ----------
    items
        The replayed context (:func:`core.transcript.replay.context_at`).
    recalled_tokens
        Tokens of a recalled block that would be injected on top of *items*
        (as ``extra_tokens`` of :func:`core.context.budget.budget_for`); added to the
        ``recalled`` section and to both the estimate and the measured figure.
    """
    tokens: dict[SectionKey, int] = dict.fromkeys(SECTION_KEYS, 0)
    counts: dict[SectionKey, int] = dict.fromkeys(SECTION_KEYS, 0)
    largest: dict[SectionKey, tuple[int, str | None]] = dict.fromkeys(SECTION_KEYS, (0, None))
    unknown_roles: set[str] = set()
    known = {"assistant", "system", "compactionSummary", "branchSummary", "toolResult"}
    known |= {"bashExecution", *_USER_SIDE}
    for item in items:
        msg = item.message
        if msg.role not in known:
            unknown_roles.add(msg.role)
        for key, n in split_tokens(item.tokens, message_section_chars(msg)).items():
            if n <= 0:
                continue
            tokens[key] += n
            counts[key] += 1
            if n > largest[key][0]:
                largest[key] = (n, item.entry.id)
    size = context_size(list(items))
    extra = max(0, recalled_tokens)
    tokens["recalled"] += extra
    estimated = size.estimated + extra
    measured = None if size.measured is None else size.measured + extra
    tokens["unattributed"] = 0 if measured is None else max(0, measured - estimated)

    notes: list[str] = []
    if tokens["system"]:
        system_note = f"{counts['system']} system message(s) stored in the transcript"
    elif measured is not None:
        system_note = (
            "the transcript does not store the system prompt; it is part of what was "
            "reported but is not in the messages"
        )
    else:
        system_note = "the transcript does not store the system prompt: not counted"
    if extra:
        notes.append(f"includes a recalled block of {extra:,} tokens that would be injected")
    if unknown_roles:
        roles = ", ".join(sorted(unknown_roles))
        notes.append(f"messages of unknown role ({roles}) count as user")
    if measured is not None and estimated > measured:
        over = estimated - measured
        notes.append(f"the chars/4 estimate exceeds the reported context by {over:,} tokens")
    sections = tuple(
        Section(
            key=k,
            label=SECTION_LABELS[k],
            tokens=tokens[k],
            messages=counts[k],
            largest_entry=largest[k][1],
            largest_tokens=largest[k][0],
        )
        for k in SECTION_KEYS
    )
    return ContextBreakdown(
        sections=sections,
        estimated_tokens=estimated,
        measured_tokens=measured,
        total_tokens=sum(tokens.values()),
        messages=len(items),
        system_note=system_note,
        notes=tuple(notes),
    )


def breakdown_at(
    session: Session, entry_ref: str | None = None, *, recalled_tokens: int = 0
) -> ContextBreakdown:
    """:func:`context_breakdown` of the context at *entry_ref* (the leaf if None)."""
    return context_breakdown(context_at(session, entry_ref), recalled_tokens=recalled_tokens)
