"""The checks made before a compaction is written, and the session's lane.

:func:`check_before_write` runs every refusal (agent-owned session, recent
modification, ids the agent cannot resolve, a file changed since it was read, the
agent's own lock, a run of the agent in progress: :func:`agent_run_fence`);
:func:`take_lane` holds the session's lane for the write.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.compaction.refusals import (
    AgentRunning,
    Archived,
    CompactionRefused,
    InDatabase,
    LaneBusy,
    RecentlyModified,
)
from core.compaction.run import CompactionRun, SummaryFailed
from core.compaction.store_update import FENCE_FIELDS, sessions_store_of
from core.dataset.discovery import is_archive_name
from core.dataset.store_sessions import is_store_session_path
from core.io.problems import FormatError
from core.openclaudecode import FORMAT, FORMAT_KEY, READ_ONLY
from core.openclaw.sessions_store import (
    entries_for_transcript,
    load_sessions_store,
)
from core.safety.session_lock import (
    SessionBusy,
    SessionLock,
    acquire,
    check_agent_lock,
)

if TYPE_CHECKING:
    from core.compaction.plan import CompactionPlan
    from core.transcript.model import Session


RECENT_WRITE_SECONDS = 5.0


def check_agent_owned(session: Session) -> None:
    """Refuse a session memlens must not append to, forced or not.

    Raises
    ------
    InDatabase
        For a session read from an OpenClaw agent database.
    Archived
        For an OpenClaudeCode transcript (read-only to memlens), a session rebuilt from a
        memory-context store's segments, or an archived
        transcript (``<id>.jsonl.reset.<time>[.zst]``...): OpenClaw
        never reads it again, and a ``.zst`` one would be corrupted by an append.
    """
    if session.header.get(FORMAT_KEY) == FORMAT:
        raise Archived(f"{session.path} {READ_ONLY}")
    if is_store_session_path(session.path):
        raise Archived(
            f"{session.path} is rebuilt from memory-context's archived segments: there is "
            "no transcript to write to. Open the agent's home or its sessions folder to "
            "compact the live session, or keep this dry run."
        )
    if session.db is None and is_archive_name(os.path.basename(session.path)):
        raise Archived(
            f"{session.path} is an archived transcript: no agent reads it again (and a "
            "compressed one cannot take an appended line); memlens leaves it as it is. "
            "Compact the live session instead, or keep this dry run."
        )
    if session.db is not None:
        raise InDatabase(
            f"{session.path} lives in OpenClaw's agent database, where memlens never "
            "writes. Ask OpenClaw to compact it (memlens compact SESSION --via-openclaw, "
            "or 'Compact with OpenClaw' in the app: its gateway writes the compaction), "
            "or keep this dry run."
        )


def check_writable(session: Session, *, force: bool = False) -> None:
    """Raise :class:`CompactionRefused` when appending to *session* is unsafe.

    *force* overrides only the recent-modification refusal
    (:class:`RecentlyModified`).
    """
    check_agent_owned(session)
    if session.version < 2:
        raise CompactionRefused(
            f"{session.path} is a v1 transcript: pi gives every entry a new id when it opens "
            "such a file, which would orphan the compaction's firstKeptEntryId. Let the agent "
            "open (and migrate) it first."
        )
    age = time.time() - os.stat(session.path).st_mtime
    if age < RECENT_WRITE_SECONDS and not force:
        raise RecentlyModified(
            f"{session.path} was modified {age:.1f} s ago: the agent may be mid-turn. "
            "Try again in a few seconds, or force it."
        )


def check_ids(plan: CompactionPlan, session: Session) -> None:
    """Raise :class:`CompactionRefused` unless the agent can resolve the entry's ids.

    The plan's leaf must still be the session's (live mode may have grown it).

    The entry names the leaf (``parentId``) and the first kept entry
    (``firstKeptEntryId``). An id memlens made up for an entry without one, or
    the id of an entry recovered from a line of objects run together (pi drops
    such lines), names nothing the agent knows: appending it would break the tree.
    """
    leaf = session.leaf
    if leaf is not None and leaf.id != plan.leaf_id:
        # the entry would hang under an old leaf: a branch, not a compaction of the session
        raise CompactionRefused(
            f"{session.path}: the session grew since this compaction was planned (its leaf is "
            f"now {leaf.id}, not {plan.leaf_id}); plan and summarise again. Nothing was written."
        )
    for what, entry_id in (
        ("leaf", plan.leaf_id),
        ("first kept entry", plan.first_kept_entry_id),
    ):
        e = session.by_id.get(entry_id)
        if e is None:
            raise CompactionRefused(f"{session.path}: the {what} {entry_id!r} is not in the file")
        if e.synthetic_id:
            raise CompactionRefused(
                f"{session.path}: the {what} (#{e.index}, line {e.line}) has no id in the file "
                f"(memlens calls it {e.id}); the agent could not resolve a compaction that "
                "names it. Nothing was written."
            )
        if e.recovered:
            raise CompactionRefused(
                f"{session.path}: the {what} (#{e.index}, line {e.line}) was recovered from a "
                "line of JSON objects run together, which the agent skips; it could not "
                "resolve a compaction that names it. Nothing was written."
            )


def check_unchanged(src: Path, session: Session, force: bool) -> None:
    """Refuse a transcript whose size changed since it was read (unless *force*)."""
    if os.stat(src).st_size != session.size and not force:
        raise CompactionRefused(
            f"{src} changed since it was read (the agent appended to it); plan again"
        )


def check_before_write(
    result: CompactionRun,
    session: Session,
    *,
    force: bool = False,
    allow_recent: bool = False,
    allow_fallback: bool = False,
) -> None:
    """Every refusal :func:`write_compaction` makes before it writes anything.

    Parameters
    ----------
    force
        Skip the recent-modification and changed-since-read checks (the CLI's ``--force``).
    allow_recent
        Skip only the recent-modification check (:class:`RecentlyModified`).
    allow_fallback
        Write a run whose summariser failed (:attr:`CompactionRun.failure`): its
        summary is the fallback, whose first line says so. Never implied by *force*.

    Raises
    ------
    SummaryFailed
        A summariser call failed and *allow_fallback* is False.
    CompactionRefused
        With the reason; :class:`RecentlyModified` for the one a user may override.
    """
    check_agent_owned(session)  # never forced
    if result.entry is None:
        raise CompactionRefused(f"nothing to write: {result.plan.reason}")
    if result.written:
        raise CompactionRefused(f"{session.path}: this compaction was already written")
    failure = result.failure
    if failure is not None and not allow_fallback:
        raise SummaryFailed(result, failure)
    check_writable(session, force=force or allow_recent)
    check_ids(result.plan, session)
    check_unchanged(Path(session.path), session, force)
    refuse_agent_lock(session.path)
    agent_run_fence(session, force=force)


def take_lane(session: Session, tool: str) -> SessionLock:
    """The session's lane (:func:`core.safety.session_lock.acquire`) for a compaction by *tool*.

    Raises
    ------
    LaneBusy
        Another compaction of the session runs, or the agent holds its write lock.
    CompactionRefused
        The lock cannot be made (memlens's data folder is not writable).
    """
    try:
        return acquire(session.path, tool=tool)
    except SessionBusy as exc:
        raise LaneBusy(exc) from None
    except OSError as exc:
        raise CompactionRefused(
            f"cannot lock {session.path} for the compaction "
            f"({exc.filename or ''}: {exc.strerror or exc}); nothing was written"
        ) from None


def refuse_agent_lock(path: str) -> None:
    """Refuse while OpenClaw holds its write lock on the transcript (never overridden).

    Only OpenClaw releases before 2026.9.6 take that ``<transcript>.lock``; a
    newer one is seen running by its session entry (:func:`agent_run_fence`).
    """
    try:
        check_agent_lock(path)
    except SessionBusy as exc:
        raise LaneBusy(exc) from None


def agent_run_fence(session: Session, *, force: bool = False) -> dict[str, Any] | None:
    """Refuse while the agent runs in the session; else the entry's fence fields.

    OpenClaw 2026.9.6 takes no transcript lock any more (``acquireSessionWriteLock``
    is a no-op): a run claims the session in its entry instead, which says
    ``status: "running"`` until the run ends (``done``, ``failed``...; the
    gateway's own admission and ``doctor`` treat a running entry as busy). A
    compaction appended then would race the run's own appends, so it is
    refused (:class:`AgentRunning`, naming the run's ``activeWriterRunId``);
    *force* overrides it, for a status left behind by a crash. The
    ``activeWriterRunId`` alone does not mean busy: it stays set after the run
    ended (the next run supersedes it).

    Returns the entry's :data:`FENCE_FIELDS` (those present) as they were
    before the append: :func:`update_store_after` updates the entry only if
    they are unchanged, as the gateway's ``sessions.compact`` does. None when
    there is no ``sessions.json``, or no single entry names the transcript, or
    it cannot be read (the store update then says why).
    """
    path = sessions_store_of(session)
    if path is None:
        return None
    try:
        found = entries_for_transcript(load_sessions_store(path), session.path, session.id)
    except (FormatError, OSError, ValueError):
        return None
    if len(found) != 1:
        return None
    entry = found[0].raw
    if entry.get("status") == "running" and not force:
        writer = entry.get("activeWriterRunId")
        raise AgentRunning(
            f"{session.path}: the agent is running in session {found[0].key} "
            f"(sessions.json: status running"
            + (f", activeWriterRunId {writer}" if isinstance(writer, str) and writer else "")
            + "). Nothing was written; try again when the agent is idle."
        )
    return {name: entry[name] for name in FENCE_FIELDS if name in entry}
