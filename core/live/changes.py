"""What one poll of live mode applied: :class:`LiveChanges`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.io.problems import Problem
    from core.live.session import Announcement
    from core.transcript.model import Entry


@dataclass(slots=True)
class LiveChanges:
    """Everything one :meth:`LiveFollower.poll` applied."""

    sessions_changed: list[str] = field(default_factory=list)
    """Ids of sessions that got new entries or were reloaded."""
    sessions_added: list[str] = field(default_factory=list)
    """Ids of sessions whose transcript appeared."""
    summaries_changed: list[str] = field(default_factory=list)
    """Ids of sessions whose :class:`core.dataset.load.SessionSummary` was replaced in
    ``data.summaries`` (the navigator's rows)."""
    entries: dict[str, list[Entry]] = field(default_factory=dict)
    """New entries by session id (not for reloaded or added sessions)."""
    segments_added: int = 0
    """Segments that joined the warm set."""
    segment_ids: list[str] = field(default_factory=list)
    """Their ids (appends only; a reload lists none)."""
    segments_indexed: int = 0
    """Segments the warm store indexed (they have no vector yet)."""
    facts_changed: list[str] = field(default_factory=list)
    stores_changed: list[str] = field(default_factory=list)
    """Agents whose ``sessions.json`` changed."""
    resets: list[str] = field(default_factory=list)
    """Files reloaded whole (truncated, replaced, rewritten)."""
    missing: list[str] = field(default_factory=list)
    """Files that disappeared (what was loaded from them is kept)."""
    store_reopen_needed: bool = False
    """segments.jsonl was reloaded: the warm store must be opened again
    (then :meth:`LiveFollower.set_recall`)."""
    announcements: list[Announcement] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    lines: int = 0
    """Complete lines read in all."""

    def __bool__(self) -> bool:
        return bool(
            self.sessions_changed
            or self.sessions_added
            or self.summaries_changed
            or self.segments_added
            or self.segments_indexed
            or self.facts_changed
            or self.stores_changed
            or self.resets
            or self.missing
            or self.announcements
            or self.problems
            or self.lines
        )

    def _changed(self, session_id: str) -> None:
        if session_id not in self.sessions_changed:
            self.sessions_changed.append(session_id)
