"""Why memlens refuses to write a compaction: :class:`CompactionRefused` and its kinds.

Each refusal says why in its message; :class:`RecentlyModified` is the one a user may
override.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.safety.session_lock import (
        SessionBusy,
    )


class CompactionRefused(Exception):
    """A write that memlens will not do, with the reason."""


class LaneBusy(CompactionRefused):
    """Another compaction of the session runs, or the agent holds its write lock.

    :attr:`busy` has the holder (:class:`core.safety.session_lock.SessionBusy`).
    """

    def __init__(self, busy: SessionBusy) -> None:
        self.busy = busy
        super().__init__(f"{busy}; nothing was written")


class RecentlyModified(CompactionRefused):
    """The transcript was modified in the last few seconds: the agent may be mid-turn.

    The one refusal a user may override (``allow_recent`` / ``force``).
    """


class InDatabase(CompactionRefused):
    """The session lives in OpenClaw's SQLite database, where memlens never writes."""


class Archived(CompactionRefused):
    """The session is an archived transcript (reset, deleted, backup): no agent reads it."""


class AgentRunning(CompactionRefused):
    """The session's ``sessions.json`` entry says a run of the agent is in progress."""
