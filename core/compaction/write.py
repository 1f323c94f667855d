"""Writing a compaction: the planned writes, the job in its lane, and the write itself.

:func:`planned_writes` lists what a write will change (for the preview);
:func:`compaction_job` brackets a job with the session's lane and a pair of activity
events; :func:`write_compaction` backs the transcript up, archives segments and facts
and appends the compaction entry.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.compaction.checks import (
    agent_run_fence,
    check_agent_owned,
    check_before_write,
    check_unchanged,
    refuse_agent_lock,
    take_lane,
)
from core.compaction.refusals import CompactionRefused
from core.compaction.store_update import plan_store_update, update_store_after
from core.io import jsonio
from core.io.fsutil import append_lines, make_backup, next_backup_path
from core.io.jobs import Cancelled
from core.io.writes import PlannedWrite
from core.store.segments import Segment, append_segments, dedup_key, load_segments

if TYPE_CHECKING:
    from collections.abc import Iterator

    from core.compaction.run import CompactionRun
    from core.safety.activity import ActivityLog
    from core.safety.session_lock import (
        SessionLock,
    )
    from core.transcript.model import Session


def fresh_segments(result: CompactionRun, stored: list[Segment]) -> list[Segment]:
    """The segments of *result* not yet in *stored* (the agent's dedup key; first wins)."""
    known = {dedup_key(s.session_id, s.role, s.content) for s in stored}
    fresh = []
    for seg in result.segments:
        key = dedup_key(seg.session_id, seg.role, seg.content)
        if key not in known:  # first of each key wins, within the batch too
            known.add(key)
            fresh.append(seg)
    return fresh


def planned_writes(
    result: CompactionRun,
    session: Session,
    *,
    store_dir: Path | None = None,
    update_store: bool = False,
) -> list[PlannedWrite]:
    """What :func:`write_compaction` (with ``accept_facts=False``) will write, and where.

    The transcript's backup is named here (its append carries the name, see
    :func:`core.io.writes.planned_backup`): pass it to :func:`write_compaction`
    as *backup_to* so the file written is the one the preview showed.
    Reads segments.jsonl to leave out the segments already archived; fact
    operations are not listed (they go to the review queue, not to the log).
    With *update_store*, the rewrite of the sibling ``sessions.json`` is listed
    last when there is one to update (see :func:`plan_store_update`).
    """
    if result.entry is None:
        return []
    src = Path(session.path)
    backup = str(next_backup_path(src))  # named once: the write makes this very file
    writes = [
        PlannedWrite(
            backup,
            "backup",
            f"copy {src.name} ({session.size:,} bytes) before appending to it",
        ),
        PlannedWrite(
            str(src),
            "append",
            f"append 1 compaction entry {result.entry['id']} as the new leaf "
            f"(parent {result.entry['parentId']}, first kept entry "
            f"{result.entry['firstKeptEntryId']})"
            + (
                "; its summary is the FALLBACK (the summariser failed), and its first line says so"
                if result.summary is not None and result.summary.degraded
                else ""
            ),
            (jsonio.dumps_line(result.entry).decode("utf-8").rstrip("\n"),),
            backup=backup,
        ),
    ]
    if store_dir is not None and result.segments:
        seg_path = store_dir / "segments.jsonl"
        stored = load_segments(seg_path, max_segments=-1, eviction_days=0).segments
        fresh = fresh_segments(result, stored)
        if fresh:
            skipped = len(result.segments) - len(fresh)
            writes.append(
                PlannedWrite(
                    str(seg_path),
                    "append" if seg_path.exists() else "create",
                    f"archive {len(fresh)} summarised message(s) as segments"
                    + (f" ({skipped} already archived)" if skipped else ""),
                    tuple(
                        jsonio.dumps_line(s.to_json()).decode("utf-8").rstrip("\n") for s in fresh
                    ),
                )
            )
    if update_store:
        planned = plan_store_update(result, session)
        if planned is not None and planned.keys:
            writes.append(
                PlannedWrite(
                    planned.path,
                    "rewrite",
                    f"{planned.note} (atomic rewrite, with a backup; every other field and "
                    "session unchanged)",
                )
            )
    return writes


# -- the job: lane and activity events -------------------------------------------------------


@dataclass(slots=True)
class CompactionJob:
    """One compaction job in its lane; :func:`compaction_job` makes it.

    Set :attr:`run` to the run before the ``with`` block ends: the closing
    event takes its tokens and outcome from it.
    """

    session: Session
    lane: SessionLock
    tool: str
    activity: ActivityLog | None
    tokens_before: int | None
    run: CompactionRun | None = None
    outcome: str = ""
    """``finished``, ``failed`` or ``cancelled`` once the block has ended."""


def _tokens_after(run: CompactionRun | None) -> int | None:
    if run is None or run.entry is None or not run.written:
        return None
    value = run.entry.get("tokensAfter")
    return value if isinstance(value, int) else None


def _finished_summary(job: CompactionJob) -> str:
    run = job.run
    assert run is not None
    entry = run.entry or {}
    text = (
        f"compaction finished: entry {entry.get('id', '')} appended to session "
        f"{job.session.id}, {job.tokens_before or 0:,} -> ~{_tokens_after(run) or 0:,} tokens"
    )
    if run.summary_failed:
        text += " (fallback summary)"
    if run.store_update is not None:
        text += f"; {run.store_update.note}"
    return text


@contextlib.contextmanager
def compaction_job(
    session: Session,
    *,
    tool: str,
    activity: ActivityLog | None = None,
    tokens_before: int | None = None,
) -> Iterator[CompactionJob]:
    """Hold the session's lane for a compaction job, with its two activity events.

    Takes the lane (or raises :class:`LaneBusy` naming the holder: no event, no
    write), records ``compaction started``, runs the block, then records
    ``finished`` (the block ended with :attr:`CompactionJob.run` written),
    ``cancelled`` (:class:`~core.io.jobs.Cancelled` or ``KeyboardInterrupt``) or
    ``failed`` (any other exception, or a run that was not written), and frees
    the lane in every case. Exceptions propagate.
    """
    from core.safety.activity import ActivityEvent

    check_agent_owned(session)  # before any lock file or event
    lane = take_lane(session, tool)
    job = CompactionJob(session, lane, tool, activity, tokens_before)

    def event(phase: str, summary: str) -> None:
        if activity is None:
            return
        activity.event(
            ActivityEvent(
                time=activity.now(),
                path=session.path,
                phase=phase,
                session=session.id,
                tokens_before=job.tokens_before,
                tokens_after=_tokens_after(job.run) if phase == "finished" else None,
                summary=summary,
                source=tool,
            )
        )

    with lane:
        started = f"compaction started by {tool}: session {session.id}" + (
            f", {tokens_before:,} tokens before" if tokens_before is not None else ""
        )
        if lane.stale_taken:
            started += f" ({lane.stale_taken})"
        event("started", started)
        try:
            yield job
        except (Cancelled, KeyboardInterrupt):
            job.outcome = "cancelled"
            written = job.run is not None and job.run.written
            event(
                "cancelled",
                f"compaction cancelled: session {session.id}; "
                + ("its entry was written" if written else "the compaction entry was not written"),
            )
            raise
        except BaseException as exc:
            job.outcome = "failed"
            # the event names the transcript already: keep the reason short
            reason = (str(exc) or type(exc).__name__).replace(session.path, Path(session.path).name)
            event("failed", f"compaction failed: session {session.id}: {reason}")
            raise
        if job.run is not None and job.run.written:
            job.outcome = "finished"
            event("finished", _finished_summary(job))
        else:
            job.outcome = "failed"
            event("failed", f"compaction failed: session {session.id}: nothing was written")


def write_compaction(
    result: CompactionRun,
    session: Session,
    *,
    store_dir: Path | None = None,
    accept_facts: bool = True,
    force: bool = False,
    allow_recent: bool = False,
    allow_fallback: bool = False,
    update_store: bool = False,
    lane: SessionLock | None = None,
    tool: str = "memlens",
    backup_to: str | None = None,
) -> CompactionRun:
    """Apply a dry run: backup, archive segments, write facts, then append the entry.

    Parameters
    ----------
    accept_facts
        Apply the proposed fact operations to knowledge.jsonl; False leaves them
        to the caller (the app's review queue).
    force, allow_recent, allow_fallback
        See :func:`check_before_write`.
    update_store
        After the append, update the transcript's entry in the sibling
        ``sessions.json`` (:func:`update_store_after`; its outcome is
        :attr:`CompactionRun.store_update`).
    lane
        The session's lane, already held by the caller (:func:`compaction_job`);
        None takes it for the write and frees it after.
    tool
        Who writes, for a refused second compaction's message.
    backup_to
        The backup's name as :func:`planned_writes` named it for the preview
        (None: named now). :attr:`CompactionRun.backup` is the file made.

    Raises
    ------
    SummaryFailed
        Before anything is written, when a summariser call failed and
        *allow_fallback* is False.
    LaneBusy
        Before anything is written, while another compaction of the session
        runs or the agent holds its write lock.
    CompactionRefused
        Before anything is written when the write is unsafe (see the module
        docstring); after the archive when the transcript changed meanwhile.
    """
    check_before_write(
        result, session, force=force, allow_recent=allow_recent, allow_fallback=allow_fallback
    )
    if lane is not None:
        if not lane.held or os.path.realpath(lane.transcript) != os.path.realpath(session.path):
            raise CompactionRefused(f"{session.path}: this write does not hold the session's lane")
        return _write_in_lane(
            result, session, store_dir, accept_facts, force, update_store, backup_to
        )
    own = take_lane(session, tool)
    with own:
        return _write_in_lane(
            result, session, store_dir, accept_facts, force, update_store, backup_to
        )


def _write_in_lane(
    result: CompactionRun,
    session: Session,
    store_dir: Path | None,
    accept_facts: bool,
    force: bool,
    update_store: bool,
    backup_to: str | None,
) -> CompactionRun:
    src = Path(session.path)
    backup = make_backup(src, name=Path(backup_to) if backup_to else None)
    try:
        if store_dir is not None:
            _archive(result, store_dir, accept_facts=accept_facts)
        check_unchanged(src, session, force)
        refuse_agent_lock(session.path)  # the agent may have started a turn meanwhile
        fence = agent_run_fence(session, force=force)
    except CompactionRefused as exc:
        backup.unlink(missing_ok=True)  # the transcript was not touched
        raise CompactionRefused(
            f"{exc} (the archive and facts were written; the compaction was not)"
        ) from None
    except BaseException:
        backup.unlink(missing_ok=True)
        raise
    result.backup = backup
    result.appended = append_lines(src, jsonio.dumps_line(result.entry))
    result.written = True
    if update_store:
        result.store_update = update_store_after(result, session, fence=fence)
    return result


def _archive(result: CompactionRun, store_dir: Path, *, accept_facts: bool) -> None:
    """Append the new segments and apply the accepted fact operations."""
    seg_path = store_dir / "segments.jsonl"
    stored = load_segments(seg_path, max_segments=-1, eviction_days=0).segments
    fresh = fresh_segments(result, stored)
    if fresh:
        append_segments(seg_path, fresh)
    result.segments_appended = len(fresh)
    accepted = [o for o in result.facts if o.op != "NONE" and o.op != "DELETE"]
    if accept_facts and accepted:
        from core.recall.updater import apply_operations
        from core.store.knowledge import load_knowledge

        log = load_knowledge(store_dir / "knowledge.jsonl")
        with log.sourced(result.fact_sources):  # each fact says where it came from
            applied = apply_operations(log, accepted)
        result.facts_written = [i for a in applied for i in a.written_ids]
