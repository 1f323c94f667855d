"""What live mode changed: :class:`LiveChanges`, and the two-phase :class:`LiveRead`.

A poll runs in two phases (see :mod:`core.live.follow`): a worker reads and parses the
new bytes into a :class:`LiveRead`, a list of steps; the GUI thread runs the steps,
which change the loaded objects and fill one :class:`LiveChanges`, the exact list of
events the views turn into row inserts and updates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from core.io.jsonio import too_long_problem
from core.io.limits import max_line_bytes

if TYPE_CHECKING:
    from collections.abc import Iterable

    from core.dataset.load import DataSet, SessionSummary
    from core.dataset.open_recall import RecallData
    from core.io.problems import Problem
    from core.io.tail import TailEvent
    from core.live.announce import Announcement
    from core.live.draft import SessionDraft
    from core.live.session import SessionCursor
    from core.transcript.model import Entry


@dataclass(slots=True)
class LiveChanges:
    """Everything one poll applied, in the order the views need it."""

    sessions_changed: list[str] = field(default_factory=list)
    """Ids of sessions that got new entries or were reloaded."""
    sessions_added: list[str] = field(default_factory=list)
    """Ids of sessions whose transcript appeared (new rows of the navigator)."""
    summaries_changed: list[str] = field(default_factory=list)
    """Ids of sessions whose :class:`core.dataset.load.SessionSummary` was replaced in
    ``data.summaries``, or added to it (the navigator's rows)."""
    entries: dict[str, list[Entry]] = field(default_factory=dict)
    """New entries by session id (not for reloaded or added sessions)."""
    segments_added: int = 0
    """Segments that joined the warm set."""
    segment_ids: list[str] = field(default_factory=list)
    """Their ids (appends only; a reload lists none)."""
    segments_indexed: int = 0
    """Segments the warm store indexed (they have no vector yet)."""
    segments_evicted: int = 0
    """Segments the warm set dropped for ``maxSegments``."""
    facts_changed: list[str] = field(default_factory=list)
    """Ids of facts whose state changed (a fact line was applied)."""
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
    """Problems met in this batch, appended to ``data.problems`` (in this order)."""
    problems_dropped: bool = False
    """Problems of a reloaded file were removed from ``data.problems`` (not an append)."""
    lines: int = 0
    """Complete lines read in all."""

    def __bool__(self) -> bool:
        return bool(
            self.sessions_changed
            or self.sessions_added
            or self.summaries_changed
            or self.segments_added
            or self.segments_indexed
            or self.segments_evicted
            or self.facts_changed
            or self.stores_changed
            or self.resets
            or self.missing
            or self.announcements
            or self.problems
            or self.problems_dropped
            or self.lines
        )

    def _changed(self, session_id: str) -> None:
        if session_id not in self.sessions_changed:
            self.sessions_changed.append(session_id)


Step = Callable[[LiveChanges], None]
"""One change to apply on the thread that owns the data set."""


@dataclass(slots=True)
class LiveRead:
    """What the read phase of a poll found: steps to run, in order, on the owner's thread."""

    steps: list[Step] = field(default_factory=list)

    def then(self, step: Step) -> None:
        """Add a step."""
        self.steps.append(step)


def note_event(event: TailEvent, out: LiveRead) -> None:
    """Count the lines read; lines over the line limit become problems with their line."""
    limit = max_line_bytes()
    problems = [
        too_long_problem(event.path, line, length, limit, True) for line, _, length in event.skipped
    ]
    lines = event.lines

    def note(c: LiveChanges) -> None:
        c.lines += lines
        c.problems.extend(problems)

    out.then(note)


class Follower(Protocol):
    """What :mod:`core.live.follow_db` and :mod:`core.live.store` use of the follower.

    That is :class:`core.live.follow.LiveFollower`, named here so that those modules
    do not import it (no import cycle in ``core.live``).
    """

    data: DataSet
    recall: RecallData | None
    flush_prompt: str | None

    def announce(self, found: Iterable[Announcement], changes: LiveChanges, *, source: str) -> None:
        """Add announcements to *changes* (apply phase)."""

    def forget_problems(self, path: str, changes: LiveChanges) -> None:
        """Drop a reloaded file's old problems (apply phase)."""

    def put_summary(self, summary: SessionSummary, changes: LiveChanges) -> None:
        """Replace a session's summary (apply phase)."""

    def draft(self, cursor: SessionCursor) -> SessionDraft:
        """The draft, in this read, of of the cursor's session (read phase)."""
        ...
