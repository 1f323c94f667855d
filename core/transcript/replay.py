"""Context replay: the messages the model saw at any entry of a session.

Follows pi's ``buildSessionContext``: walk from the entry to the root, take the
last compaction on that path, then emit its summary, the entries from its
``firstKeptEntryId`` up to the compaction, and everything after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.transcript.run_bound import run_bound
from core.transcript.tokens import estimate_message, usage_total

if TYPE_CHECKING:
    from core.transcript.model import Entry, Message, Session


@dataclass(frozen=True, slots=True)
class ContextItem:
    """One message of a replayed context, with the entry it came from."""

    entry: Entry
    message: Message
    tokens: int
    """pi's estimate for the message."""
    synthetic: bool = False
    """A message memlens made as pi does before a request (a tool call's missing
    result, :mod:`core.transcript.provider`); never in the file."""
    sent: bool = True
    """False for what pi keeps in context but never sends (an aborted or failed
    turn, a ``!!`` bash run): :func:`core.transcript.provider.provider_view`."""


@dataclass(frozen=True, slots=True)
class CompactionInfo:
    """A compaction and what it replaced."""

    entry: Entry
    summary: str
    first_kept_entry_id: str
    tokens_before: int | None
    tokens_after: int | None
    """As recorded by the agent, else pi's estimate of the context right after."""
    tokens_after_estimated: bool
    replaced: tuple[ContextItem, ...]
    """Messages in context just before the compaction that it took out."""
    kept: tuple[ContextItem, ...]
    """Messages kept verbatim after the summary."""


def _excluded(e: Entry) -> bool:
    """OpenClaw leaves out a message marked ``excludeFromContext``."""
    msg = e.raw.get("message") if e.type == "message" else None
    return isinstance(msg, dict) and msg.get("excludeFromContext") is True


def _reset_context(
    path: list[Entry], boundary: int, kept_from: str | None = None
) -> list[ContextItem]:
    """The context after OpenClaw's ``reset`` at ``path[boundary]``.

    No summary; of the range it keeps, only user and assistant messages and the tool
    results whose call is in that range (``selectResetKeptEntries``,
    docs/notes/openclaw-context.md §7 rule 6).
    """
    reset = path[boundary]
    first_kept = kept_from if kept_from is not None else reset.raw.get("firstKeptEntryId")
    start = next((i for i, e in enumerate(path[:boundary]) if e.id == first_kept), boundary)
    kept = [e for e in path[start:boundary] if e.type == "message" and e.message is not None]
    calls = {b.tool_id for e in kept if e.message is not None for b in e.message.tool_calls()}
    items = [
        ContextItem(e, e.message, estimate_message(e.message))
        for e in kept
        if e.message is not None
        and (
            e.message.role in ("user", "assistant")
            or (e.message.role == "toolResult" and any(r in calls for r in e.message.result_ids()))
        )
    ]
    for e in path[boundary + 1 :]:
        if e.message is not None and e.type != "compaction" and not _excluded(e):
            items.append(ContextItem(e, e.message, estimate_message(e.message)))
    return items


def _context_from_path(
    path: list[Entry], *, openclaw: bool = False, kept_from: str | None = None
) -> list[ContextItem]:
    """The messages of *path* as pi's ``buildSessionContext`` gives them.

    With *openclaw*, as OpenClaw's: a ``reset`` is a boundary too, and messages
    marked ``excludeFromContext`` stay out. *kept_from* replaces the boundary's
    ``firstKeptEntryId`` (a bounded read that did not read that entry).
    """
    compaction_idx = -1
    for i, e in enumerate(path):
        if e.type == "compaction" or (openclaw and e.type == "reset"):
            compaction_idx = i
    if compaction_idx >= 0 and path[compaction_idx].type == "reset":
        return _reset_context(path, compaction_idx, kept_from)
    items: list[ContextItem] = []

    def emit(e: Entry) -> None:
        if e.message is not None and e.type != "compaction" and not (openclaw and _excluded(e)):
            items.append(ContextItem(e, e.message, estimate_message(e.message)))

    if compaction_idx < 0:
        for e in path:
            emit(e)
        return items
    comp = path[compaction_idx]
    assert comp.message is not None
    items.append(ContextItem(comp, comp.message, estimate_message(comp.message)))
    first_kept = kept_from if kept_from is not None else comp.raw.get("firstKeptEntryId")
    found = False
    for e in path[:compaction_idx]:
        if e.id == first_kept:
            found = True
        if found:
            emit(e)
    for e in path[compaction_idx + 1 :]:
        emit(e)
    return items


def context_at(session: Session, entry_ref: str | None = None) -> list[ContextItem]:
    """The messages the model saw at *entry_ref* (id or ``#N``; the leaf if None)."""
    if entry_ref is None:
        leaf = session.leaf
        if leaf is None:
            return []
        target = leaf
    else:
        target = session.entry(entry_ref)
    path = session.path_to(target.id)
    if session.db is not None and session.run_context_tokens is not None:
        bound = run_bound(session, path, session.run_context_tokens)
        return _context_from_path(bound.read, openclaw=True, kept_from=bound.kept_from)
    return _context_from_path(path, openclaw=session.tree is not None)


def compactions(session: Session) -> list[CompactionInfo]:
    """Every compaction of the session with what it replaced and kept."""
    out: list[CompactionInfo] = []
    for comp in session.compaction_entries():
        path = session.path_to(comp.id)
        openclaw = session.tree is not None
        before = _context_from_path(path[:-1], openclaw=openclaw)
        after = _context_from_path(path, openclaw=openclaw)
        kept_ids = {item.entry.id for item in after[1:]}
        replaced = tuple(item for item in before if item.entry.id not in kept_ids)
        kept = tuple(after[1:])
        raw = comp.raw
        tb = raw.get("tokensBefore")
        ta = raw.get("tokensAfter")
        estimated = not isinstance(ta, (int, float))
        tokens_after = int(ta) if isinstance(ta, (int, float)) else sum(i.tokens for i in after)
        out.append(
            CompactionInfo(
                entry=comp,
                summary=str(raw.get("summary") or ""),
                first_kept_entry_id=str(raw.get("firstKeptEntryId") or ""),
                tokens_before=int(tb) if isinstance(tb, (int, float)) else None,
                tokens_after=tokens_after,
                tokens_after_estimated=estimated,
                replaced=replaced,
                kept=kept,
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class ContextSize:
    """The size of a replayed context, estimated and (where possible) measured."""

    estimated: int
    """pi's estimate summed over every message."""
    measured: int | None
    """Last assistant ``usage`` after the latest compaction (aborted and error turns
    ignored) plus the estimate of the messages after it; None without usage."""
    measured_from: str | None = None
    """Id of the assistant entry whose usage was used."""


def context_size(items: list[ContextItem]) -> ContextSize:
    """Estimate and measure the tokens of a replayed context."""
    estimated = sum(i.tokens for i in items)
    start = 1 if items and items[0].message.role == "compactionSummary" else 0
    after = 0
    for pos in range(len(items) - 1, start - 1, -1):
        item = items[pos]
        msg = item.message
        if (
            msg.role == "assistant"
            and msg.stop_reason not in ("aborted", "error")
            and item.entry.type == "message"
        ):
            total = usage_total(msg.usage)
            # Kept messages from before a compaction carry pre-compaction usage.
            if total and (start == 0 or item.entry.index > items[0].entry.index):
                return ContextSize(estimated, total + after, item.entry.id)
        after += item.tokens
    return ContextSize(estimated, None)


def pi_context_tokens(items: list[ContextItem]) -> tuple[int, bool]:
    """The context tokens of pi's ``estimateContextTokens`` (``prepareCompaction``'s tokensBefore).

    The last usable assistant ``usage`` in the context (not aborted, not an error),
    wherever it is, plus pi's estimate of every message after it; pi's estimate of
    the whole context without one. Unlike :func:`context_size`, a kept assistant
    from before a compaction counts (pi 0.73.1 ``compaction.js``). Returns the
    tokens and whether a usage was used.
    """
    trailing = 0
    for item in reversed(items):
        msg = item.message
        if msg.role == "assistant" and msg.stop_reason not in ("aborted", "error") and msg.usage:
            return (usage_total(msg.usage) or 0) + trailing, True
        trailing += item.tokens
    return trailing, False
