"""The compaction view's jobs for the runner: plan, summarise, prepare and write.

Each function returns ``fn(*, progress, cancelled)`` for
:meth:`widgets.common.jobs.JobRunner.submit`. Refusals (a write the checks refuse,
a gateway that does not compact) are results, not failures: the view says why.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from core.compaction.checks import check_before_write
from core.compaction.plan import plan_compaction
from core.compaction.provider import open_provider
from core.compaction.refusals import CompactionRefused
from core.compaction.run import compact
from core.compaction.write import compaction_job, planned_writes, write_compaction
from core.io.jobs import check
from core.openclaw.gateway import GatewayError, compact_session

if TYPE_CHECKING:
    from core.compaction.plan import CompactionPlan
    from core.compaction.provider import ProviderChoice, Timeouts
    from core.compaction.run import CompactionRun
    from core.compaction.target import CompactionTarget
    from core.io.jobs import CancelCheck, Progress
    from core.safety.activity import ActivityLog
    from core.transcript.model import Session

LANE_TOOL = "memlens app"
"""Who holds a session's lane during the app's compaction write."""

Job = Callable[..., Any]


def plan_job(target: CompactionTarget) -> Job:
    """Plan a compaction of *target*."""
    target = target.snapshot()  # live mode may extend the session while the job reads it

    def job(**_job: object) -> CompactionPlan:
        return plan_compaction(target.session, **target.settings.kwargs())

    return job


def run_job(target: CompactionTarget, choice: ProviderChoice, timeouts: Timeouts) -> Job:
    """Summarise *target* with *choice*; the cancel reaches the model calls."""
    target = target.snapshot()

    def job(*, progress: Progress, cancelled: CancelCheck) -> CompactionRun:
        opened = open_provider(choice, timeouts)
        try:
            return compact(
                target.session,
                summarizer=opened.summarizer,
                store_dir=target.store_dir,
                extract_client=opened.client,
                progress=progress,
                cancelled=cancelled,
                instructions=target.settings.instructions,
                **target.settings.kwargs(),
            )
        finally:
            opened.close()

    return job


def prepare_job(
    result: CompactionRun, target: CompactionTarget, *, force: bool, allow_fallback: bool
) -> Job:
    """Check a write and list what it writes (the refusals read files: off the GUI thread)."""
    target = target.snapshot()

    def job(**_job: object) -> Any:
        try:
            check_before_write(
                result, target.session, allow_recent=force, allow_fallback=allow_fallback
            )
        except CompactionRefused as exc:
            return exc
        return planned_writes(result, target.session, store_dir=target.store_dir, update_store=True)

    return job


def write_job(
    result: CompactionRun,
    target: CompactionTarget,
    activity: ActivityLog | None,
    *,
    force: bool,
    allow_fallback: bool,
    backup_to: str | None = None,
) -> Job:
    """Write the compaction, holding the session's lane (shared with the CLI).

    *backup_to* is the backup's name the preview showed (the write makes that file).
    """
    target = target.snapshot()

    def job(*, cancelled: CancelCheck, **_job: object) -> object:
        # The lane and the activity events bracket the write; a second compaction of
        # the session is refused.
        try:
            with compaction_job(
                target.session,
                tool=LANE_TOOL,
                activity=activity,
                tokens_before=result.plan.tokens_before,
            ) as lane_job:
                lane_job.run = result
                check(cancelled, "before writing the compaction")
                return write_compaction(
                    result,
                    target.session,
                    store_dir=target.store_dir,
                    accept_facts=False,
                    allow_recent=force,
                    allow_fallback=allow_fallback,
                    update_store=True,
                    lane=lane_job.lane,
                    tool=LANE_TOOL,
                    backup_to=backup_to,
                )
        except CompactionRefused as exc:  # LaneBusy too: it names the holder
            return exc

    return job


def openclaw_job(session: Session, command: str | None) -> Job:
    """Have OpenClaw's gateway compact *session*."""
    session = session.snapshot()

    def job(**_job: object) -> Any:
        try:
            return compact_session(session, openclaw=command)
        except GatewayError as exc:
            return exc

    return job


def written_message(run: CompactionRun) -> str:
    """What the view says once *run* is written."""
    entry = run.entry or {}
    where = run.appended
    return (
        ("Fallback compaction" if run.summary_failed else "Compaction")
        + f" {entry.get('id', '')} appended as the new leaf"
        + (f" at byte {where.offset:,} of {where.path}" if where else "")
        + (f"; backup {run.backup}" if run.backup else "")
        + f"; {run.segments_appended} segment(s) archived; "
        f"{len(run.facts)} fact operation(s) sent for review"
        + (f"; {run.store_update.note}" if run.store_update is not None else "")
        + ". Reload the session to compact it again."
    )
