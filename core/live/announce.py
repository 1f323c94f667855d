"""Compactions and memory flushes among a session's new entries, for the app to announce.

Found in live mode's read phase (:mod:`core.live.follow`), from entries not yet attached
to their session: the session's label is read from those entries and the session's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from collections.abc import Iterable

    from core.transcript.model import Entry

FLUSH_PROMPT_START = "Pre-compaction memory flush"
"""How OpenClaw's default memory-flush prompt starts."""

AnnouncementKind = Literal["compaction", "memory_flush"]


@dataclass(frozen=True, slots=True)
class Announcement:
    """A compaction or a memory flush the agent just did."""

    kind: AnnouncementKind
    session_id: str
    message: str
    """One sentence for a person (status bar, notification)."""
    path: str = ""
    entry_id: str = ""
    line: int = 0


def session_label(session_id: str, newest_first: Iterable[Entry]) -> str:
    """The session's name (its last ``session_info``) and short id, for a person."""
    name = ""
    for e in newest_first:
        if e.type == "session_info" and isinstance(e.raw.get("name"), str):
            name = e.raw["name"]
            break
    short = session_id[:8]
    return f"{name} ({short})" if name else short


def is_flush_entry(entry: Entry, flush_prompt: str | None = None) -> bool:
    """Whether *entry* marks a memory flush.

    That is a user message starting with OpenClaw's default flush prompt or with
    the configured one, or a custom entry whose ``customType`` names a flush.
    """
    if entry.type in ("custom", "custom_message"):
        ctype = entry.raw.get("customType")
        return isinstance(ctype, str) and "flush" in ctype.lower()
    if entry.type != "message":
        return False
    msg = entry.message
    if msg is None or msg.role != "user":
        return False
    text = msg.text().lstrip()
    if text.startswith(FLUSH_PROMPT_START):
        return True
    prompt = (flush_prompt or "").strip()
    return bool(prompt) and text.startswith(prompt[:80])


def announcements(
    session_id: str,
    path: str,
    label: str,
    entries: list[Entry],
    *,
    flush_prompt: str | None = None,
) -> list[Announcement]:
    """Compactions and memory flushes among *entries* (new entries of a session)."""
    out: list[Announcement] = []
    for e in entries:
        if e.type == "compaction":
            before = e.raw.get("tokensBefore")
            summary = e.raw.get("summary")
            parts = [f"Compaction in session {label}"]
            if isinstance(before, int) and not isinstance(before, bool):
                parts.append(f"{before:,} tokens before")
            if isinstance(summary, str):
                parts.append(f"summary of {len(summary):,} characters")
            kept = e.raw.get("firstKeptEntryId")
            if isinstance(kept, str):
                parts.append(f"kept from entry {kept}")
            message = ", ".join(parts) + f" (line {e.line})"
            out.append(Announcement("compaction", session_id, message, path, e.id, e.line))
        elif is_flush_entry(e, flush_prompt):
            message = (
                f"Memory flush in session {label}: the agent was asked to store durable "
                f"memories before a compaction (line {e.line})"
            )
            out.append(Announcement("memory_flush", session_id, message, path, e.id, e.line))
    return out
