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


def timeline_job(
    session: Session, make_budget: Callable[[Session], Budget] | None = None
) -> Callable[..., tuple[Timeline, Budget | None]]:
    """A job (``fn(*, progress, cancelled)``) building *session*'s budget and timeline.

    The budget replays the context (``budget_for``), tens of milliseconds on a long
    session: it is computed in the job too, by *make_budget*, and returned with the
    timeline.
    """

    def job(**_: object) -> tuple[Timeline, Budget | None]:
        budget = make_budget(session) if make_budget is not None else None
        return build_timeline(session, budget), budget

    return job
