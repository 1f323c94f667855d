"""The fields of a session's row, for people: key, channel, model, tokens, lifecycle.

A session row is what OpenClaw keeps per session key: ``sessions.json``'s entry
(before 2026.9) or ``session_nodes.entry_json`` with its window's columns
(2026.9+, :meth:`core.openclaw.agentdb.AgentDb.store`). Both read alike here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.io.jsonio import as_int
from core.io.timefmt import is_date_ms, utc_minute_ms

if TYPE_CHECKING:
    from core.openclaw.sessions_store import SessionEntry, SessionStore
    from core.transcript.model import Session


@dataclass(frozen=True, slots=True)
class RowField:
    """One field of a session row."""

    group: str
    label: str
    key: str
    """The field's name in the row (``inputTokens``)."""
    value: str
    """As shown: numbers with separators, times in UTC."""


_FIELDS: tuple[tuple[str, str, str, str], ...] = (
    # group, label, key, kind
    ("Identity", "Session key", "__key", "text"),
    ("Identity", "Session id", "sessionId", "text"),
    ("Identity", "Display name", "displayName", "text"),
    ("Identity", "Status", "status", "text"),
    ("Conversation", "Channel", "channel", "text"),
    ("Conversation", "Chat type", "chatType", "text"),
    ("Conversation", "Conversation", "conversationId", "text"),
    ("Conversation", "Account", "accountId", "text"),
    ("Model", "Model", "model", "text"),
    ("Model", "Provider", "modelProvider", "text"),
    ("Model", "Model override", "modelOverride", "text"),
    ("Model", "Thinking level", "thinkingLevel", "text"),
    ("Tokens", "Context window", "contextTokens", "int"),
    ("Tokens", "Total (last turn)", "totalTokens", "int"),
    ("Tokens", "Input", "inputTokens", "int"),
    ("Tokens", "Output", "outputTokens", "int"),
    ("Tokens", "Cache read", "cacheRead", "int"),
    ("Tokens", "Cache write", "cacheWrite", "int"),
    ("Tokens", "Estimated cost (USD)", "estimatedCostUsd", "float"),
    ("Compaction", "Compactions", "compactionCount", "int"),
    ("Compaction", "Memory flush at", "memoryFlushAt", "time"),
    ("Compaction", "Flush in compaction cycle", "memoryFlushCompactionCount", "int"),
    ("Lifecycle", "Created", "createdAt", "time"),
    ("Lifecycle", "Started", "sessionStartedAt", "time"),
    ("Lifecycle", "Window started", "startedAt", "time"),
    ("Lifecycle", "Updated", "updatedAt", "time"),
    ("Lifecycle", "Last interaction", "lastInteractionAt", "time"),
    ("Lifecycle", "Last activity", "lastActivityAt", "time"),
    ("Lifecycle", "Ended", "endedAt", "time"),
    ("Lifecycle", "Aborted last run", "abortedLastRun", "bool"),
)


def _show(value: Any, kind: str) -> str | None:
    if value is None:
        return None
    if kind == "int":
        n = as_int(value)
        return f"{n:,}" if n is not None else repr(value)
    if kind == "float":
        return f"{value:.4f}" if isinstance(value, (int, float)) else repr(value)
    if kind == "time":
        n = as_int(value)
        return utc_minute_ms(n) + " UTC" if n is not None and is_date_ms(n) else str(value)
    if kind == "bool":
        return "yes" if value is True else "no" if value is False else repr(value)
    return value if isinstance(value, str) else str(value)


def row_fields(entry: SessionEntry) -> list[RowField]:
    """The known fields present in *entry*, in a stable order, grouped."""
    out = []
    for group, label, key, kind in _FIELDS:
        raw = entry.key if key == "__key" else entry.raw.get(key)
        shown = _show(raw, kind)
        if shown is not None and shown != "":
            out.append(RowField(group, label, "key" if key == "__key" else key, shown))
    return out


def find_row(stores: dict[str, SessionStore], session: Session) -> tuple[str, SessionEntry] | None:
    """``(store name, entry)`` of *session*'s row, if any store has one.

    The store beside the session wins: its own database, or the ``sessions.json`` in
    its transcript's folder (two agents may both have a session ``s1``); then any
    database, then any ``sessions.json`` naming its id.
    """
    here = session.db or os.path.join(os.path.dirname(session.path), "sessions.json")
    ranked: list[tuple[int, str, SessionEntry]] = []
    for name, store in stores.items():
        rank = (
            0
            if os.path.normpath(store.path) == os.path.normpath(here)
            else (1 if name.endswith("(sqlite)") else 2)
        )
        for entry in store.entries.values():
            if entry.session_id == session.id:
                ranked.append((rank, name, entry))
    if not ranked:
        return None
    best = min(ranked, key=lambda r: r[0])
    return best[1], best[2]
