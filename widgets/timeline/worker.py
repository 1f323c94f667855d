"""Build a session timeline off the GUI thread: a job for :class:`widgets.common.jobs.JobRunner`.

A session of thousands of messages takes tens of milliseconds or more (its messages
are normalised on first use): more than a GUI-thread budget.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.timeline.arrays import build_timeline

if TYPE_CHECKING:
    from collections.abc import Callable

    from core.context.budget import Budget
    from core.timeline.arrays import Timeline
    from core.transcript.model import Session


def timeline_job(session: Session, budget: Budget | None = None) -> Callable[..., Timeline]:
    """A job (``fn(*, progress, cancelled)``) building *session*'s timeline."""

    def job(**_: object) -> Timeline:
        return build_timeline(session, budget)

    return job
