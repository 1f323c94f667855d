"""A compaction run on a session file: dry run by default, ``write=True`` to apply.

A dry run writes nothing and returns the plan, the summary, the compaction entry
it would append, the segments it would archive and the fact operations it
would propose. A write backs the transcript up, appends the archived segments to
segments.jsonl, applies the accepted fact operations to knowledge.jsonl and only
then appends the compaction entry as a new leaf (one line, v3 shape, fresh 8-hex
id, parentId = current leaf): a failure midway never leaves a compaction whose
archive is missing. It refuses a transcript modified in the last few seconds
(the agent may be mid-turn) unless forced, a v1 transcript (pi rewrites those
with new ids on open, which would orphan the entry), and a leaf or first kept
entry whose id the agent cannot resolve (no id in the file, or a line of objects
run together, which pi skips).

One compaction at a time per session: a write holds the session's lane
(:mod:`core.safety.session_lock`, shared by the app and the CLI) and is refused
(:class:`LaneBusy`, naming the holder) while another one runs or while OpenClaw
holds its own write lock on the transcript (``<transcript>.lock``, taken only by
OpenClaw releases before 2026.9.6); a newer OpenClaw's run is seen in the
session's ``sessions.json`` entry (``status: "running"``) and refused too
(:class:`AgentRunning`, see :func:`agent_run_fence`). With ``update_store=True`` a written
compaction is then counted in the sibling ``sessions.json`` the way OpenClaw's
gateway counts its own (:func:`core.openclaw.sessions_store.compaction_changes`).
The transcript is written first: if ``sessions.json`` cannot be read or
rewritten, the compaction stays written (it is what the agent replays; the
store only holds counters, which the agent recomputes on its next turn) and
:attr:`CompactionRun.store_update` says why the store was not updated.
:func:`compaction_job` brackets a job with the lane and a pair of
:class:`~core.safety.activity.ActivityEvent` (started, then finished, failed or
cancelled).
"""

from __future__ import annotations

import contextlib
import math
import os
import secrets
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.compaction.call_log import CallRecord, failed_call
from core.compaction.plan import CompactionPlan, plan_compaction
from core.compaction.summarize import SummaryRun, summarize_plan
from core.compaction.summarizers import OfflineSummarizer
from core.dataset.discovery import is_archive_name
from core.io import jsonio
from core.io.fsutil import AppendResult, append_lines, backup_path, make_backup
from core.io.jobs import Cancelled
from core.io.jsstr import js_len
from core.io.problems import FormatError
from core.io.writes import PlannedWrite
from core.openclaw.sessions_store import (
    REMOVE,
    compaction_changes,
    entries_for_transcript,
    load_sessions_store,
    update_sessions_store,
)
from core.safety.redact import redact
from core.safety.session_lock import (
    LockHolder,
    SessionBusy,
    SessionLock,
    acquire,
    agent_lock_holder,
    check_agent_lock,
)
from core.store.segments import Segment, append_segments, dedup_key, load_segments, make_segment

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    from core.compaction.sections import SummaryInstructions
    from core.compaction.summarizers import Summarizer
    from core.io.jobs import CancelCheck, Progress
    from core.llm import ChatMessage, Completion, LLMClient
    from core.safety.activity import ActivityLog
    from core.transcript.model import Session

RECENT_WRITE_SECONDS = 5.0


class CompactionRefused(Exception):
    """A write that memlens will not do, with the reason."""


class SummaryFailed(CompactionRefused):
    """A summariser call failed: the summary is a fallback, and memlens will not write it.

    Raised before anything is written (no backup either) unless the caller
    explicitly allows the fallback. The message names the call, the endpoint and
    the reason; :attr:`run` has the whole attempt log.
    """

    def __init__(self, run: CompactionRun, failure: CallRecord) -> None:
        self.run = run
        self.failure = failure
        super().__init__(f"{failure_headline(failure)}, nothing was written: {failure.describe()}")


EXTRACTION_STEP = "extracting knowledge"


def failure_headline(failure: CallRecord) -> str:
    """``summary failed`` or ``knowledge extraction failed``: which part of the run failed."""
    return "knowledge extraction failed" if failure.step == EXTRACTION_STEP else "summary failed"


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


@dataclass(slots=True)
class CompactionRun:
    """What a compaction did (or, in a dry run, would do)."""

    plan: CompactionPlan
    summary: SummaryRun | None
    entry: dict[str, Any] | None
    segments: list[Segment] = field(default_factory=list)
    facts: list[Any] = field(default_factory=list)
    """Proposed fact operations (core.recall.updater.ProposedOperation)."""
    fact_notes: list[str] = field(default_factory=list)
    written: bool = False
    backup: Path | None = None
    appended: AppendResult | None = None
    segments_appended: int = 0
    facts_written: list[str] = field(default_factory=list)
    extract_log: list[CallRecord] = field(default_factory=list)
    """The knowledge-extraction call, when a model was asked."""
    store_update: StoreUpdate | None = None
    """What became of ``sessions.json`` after the write (None: not asked, or no store)."""

    @property
    def call_log(self) -> list[CallRecord]:
        """Every model call of the run: the summary's, then the extraction's."""
        return [*(self.summary.call_log if self.summary else []), *self.extract_log]

    @property
    def summary_failed(self) -> bool:
        """True when a summary call failed (the summary is the fallback), not only the facts."""
        return self.summary is not None and self.summary.failure is not None

    @property
    def failure(self) -> CallRecord | None:
        """Why this run must not be written as it is (None: it may be).

        The first failed summary call; else a failed knowledge-extraction call
        (written anyway, the facts would be lost without a word).
        """
        if self.summary is not None and self.summary.failure is not None:
            return self.summary.failure
        return next((c for c in self.extract_log if not c.ok), None)

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of ``memlens compact --json``."""
        p = self.plan
        failure = self.failure
        return {
            "plan": plan_json(p),
            "summary": self.summary.summary if self.summary else None,
            "provider": self.summary.provider if self.summary else None,
            "calls": self.summary.calls if self.summary else 0,
            "fallback": self.summary.fallback if self.summary else None,
            "degraded": failure is not None,
            "failure": failure.describe() if failure is not None else None,
            "attempts": [c.to_json() for c in self.call_log],
            "notes": (self.summary.notes if self.summary else []) + self.fact_notes,
            "entry": self.entry,
            "segments": [s.to_json() for s in self.segments],
            "facts": [
                {
                    "op": o.op,
                    "type": o.candidate.type,
                    "content": o.candidate.content,
                    "context": o.candidate.context,
                    "target": o.target.id if o.target else None,
                    "similarity": o.similarity,
                    "reason": o.reason,
                }
                for o in self.facts
            ],
            "written": self.written,
            "backup": str(self.backup) if self.backup else None,
            "appended": {
                "path": self.appended.path,
                "offset": self.appended.offset,
                "length": self.appended.length,
            }
            if self.appended
            else None,
            "segments_appended": self.segments_appended,
            "facts_written": self.facts_written,
            "sessions_store": self.store_update.to_json() if self.store_update else None,
        }


@dataclass(slots=True)
class StoreUpdate:
    """``sessions.json`` after a written compaction: updated, or why not."""

    path: str
    keys: list[str]
    """The session keys changed (or that would have been)."""
    updated: bool
    note: str
    """One line for the user: what changed, or why nothing did."""
    backup: Path | None = None
    changes: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The ``sessions_store`` of ``memlens compact --json``."""
        return {
            "path": self.path,
            "keys": self.keys,
            "updated": self.updated,
            "note": self.note,
            "backup": str(self.backup) if self.backup else None,
            "set": {
                k: {f: v for f, v in c.items() if v is not REMOVE} for k, c in self.changes.items()
            },
            "removed": {
                k: [f for f, v in c.items() if v is REMOVE] for k, c in self.changes.items()
            },
        }


def plan_json(p: CompactionPlan) -> dict[str, Any]:
    """The JSON shape of a plan (``memlens plan`` and ``compact``)."""
    return {
        "ok": p.ok,
        "reason": p.reason,
        "first_kept_entry_id": p.first_kept_entry_id,
        "first_kept_index": p.first_kept_index,
        "is_split_turn": p.is_split_turn,
        "turn_start_entry_id": p.turn_start_entry_id,
        "messages_to_summarize": len(p.summarize) + len(p.history_dropped),
        "turn_prefix_messages": len(p.turn_prefix),
        "history_dropped": len(p.history_dropped),
        "kept_messages": len(p.kept),
        "chunks": len(p.chunks),
        "parts": len(p.parts),
        "calls": p.calls,
        "chunk_ratio": p.chunk_ratio,
        "max_chunk_tokens": p.max_chunk_tokens,
        "tokens_before": p.tokens_before,
        "tokens_before_measured": p.tokens_before_measured,
        "tokens_summarized": p.tokens_summarized,
        "tokens_kept": p.tokens_kept,
        "expected_tokens_after": p.expected_tokens_after(),
        "read_files": p.read_files,
        "modified_files": p.modified_files,
    }


def compaction_entry(
    plan: CompactionPlan, run: SummaryRun, *, taken: set[str], now: datetime | None = None
) -> dict[str, Any]:
    """The compaction entry to append (v3 shape, new leaf)."""
    entry_id = secrets.token_hex(4)
    while entry_id in taken:
        entry_id = secrets.token_hex(4)
    stamp = (now or datetime.now(UTC)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    # pi's estimate of the summary message (JavaScript length) plus the kept messages
    tokens_after = math.ceil(js_len(run.summary) / 4) + plan.tokens_kept
    return {
        "type": "compaction",
        "id": entry_id,
        "parentId": plan.leaf_id,
        "timestamp": stamp,
        "summary": run.summary,
        "firstKeptEntryId": plan.first_kept_entry_id,
        "tokensBefore": plan.tokens_before,
        "tokensAfter": tokens_after,
        "details": {
            "readFiles": [redact(f) for f in plan.read_files],
            "modifiedFiles": [redact(f) for f in plan.modified_files],
            "toolFailures": run.tool_failures,
        },
    }


def archive_segments(
    plan: CompactionPlan, session: Session, *, redaction: bool = True, timestamp: int | None = None
) -> list[Segment]:
    """The summarised user/assistant messages as segments (redacted, tagged)."""
    out = []
    for item in [*plan.history_dropped, *plan.summarize, *plan.turn_prefix]:
        m = item.message
        if m.role not in ("user", "assistant"):
            continue
        text = (
            m.text().strip()
            if m.role == "user"
            else "\n".join(b.text for b in m.blocks if b.kind == "text" and b.text).strip()
        )
        if not text or "<recalled-context" in text:
            continue
        ts = m.timestamp or timestamp or int(time.time() * 1000)
        out.append(make_segment(session.id, m.role, text, timestamp=ts, redaction=redaction))
    return out


def compact(
    session: Session,
    *,
    summarizer: Summarizer | None = None,
    at: str | None = None,
    window: int = 200_000,
    reserve_tokens: int = 20_000,
    keep_recent_tokens: int = 20_000,
    max_history_share: float = 0.5,
    store_dir: Path | None = None,
    extract_client: LLMClient | None = None,
    progress: Progress | None = None,
    cancelled: CancelCheck | None = None,
    instructions: SummaryInstructions | None = None,
    plan: CompactionPlan | None = None,
) -> CompactionRun:
    """Plan and summarise (writes nothing; see :func:`write_compaction`).

    *plan*, when given, is this session's plan already made with the same settings.

    *instructions* (the config's ``customInstructions`` and ``identifierPolicy``,
    :func:`core.compaction.settings.summary_instructions`) reach an LLM summariser's
    prompts as OpenClaw's do.

    A summariser call that fails does not raise: the run is returned with the
    fallback summary, its :attr:`CompactionRun.failure` and the attempt log, and
    :func:`write_compaction` refuses it unless the fallback is allowed.

    Raises
    ------
    core.io.jobs.Cancelled
        When *cancelled* says so (nothing is returned, nothing was written).
    """
    if plan is None:
        plan = plan_compaction(
            session,
            at=at,
            window=window,
            reserve_tokens=reserve_tokens,
            keep_recent_tokens=keep_recent_tokens,
            max_history_share=max_history_share,
        )
    if not plan.ok:
        return CompactionRun(plan, None, None)
    summ = summarizer or OfflineSummarizer()
    run = summarize_plan(
        plan, summ, progress=progress, cancelled=cancelled, instructions=instructions
    )
    entry = compaction_entry(plan, run, taken=set(session.by_id))
    result = CompactionRun(plan, run, entry, archive_segments(plan, session))
    if store_dir is not None and run.failure is not None:
        # the endpoint just failed: do not send it the conversation again
        result.fact_notes.append("knowledge extraction skipped: the summary failed")
    elif store_dir is not None:
        if progress is not None:
            progress(run.calls, run.calls + 1, "extracting knowledge")
        from core.compaction.extract import extract_knowledge
        from core.store.knowledge import load_knowledge

        log = load_knowledge(store_dir / "knowledge.jsonl")
        messages = [i.message for i in (*plan.history_dropped, *plan.summarize)]
        client = (
            None
            if extract_client is None
            else _LoggedClient(extract_client, result.extract_log, run.calls + 1, run.calls + 1)
        )
        extraction = extract_knowledge(messages, log, client=client, cancelled=cancelled)
        result.facts = list(extraction.operations)
        result.fact_notes = list(extraction.notes)
        if extraction.skipped:
            result.fact_notes.append(str(extraction.skipped))
    return result


class _LoggedClient:
    """A client whose calls are logged as :class:`CallRecord` (the extraction's)."""

    def __init__(self, inner: LLMClient, log: list[CallRecord], index: int, total: int) -> None:
        self._inner = inner
        self._log = log
        self._index = index
        self._total = total

    @property
    def name(self) -> str:
        return self._inner.name

    def complete(self, messages: Sequence[ChatMessage], **kwargs: Any) -> Completion:
        start = time.monotonic()
        endpoint = str(getattr(self._inner, "display_url", ""))
        step = EXTRACTION_STEP
        try:
            done = self._inner.complete(messages, **kwargs)
        except Cancelled:
            raise
        except Exception as exc:
            self._log.append(
                failed_call(
                    exc,
                    index=self._index,
                    total=self._total,
                    step=step,
                    client=self.name,
                    endpoint=endpoint,
                    start=start,
                )
            )
            raise
        self._log.append(
            CallRecord(
                self._index,
                self._total,
                step,
                done.client or self.name,
                endpoint,
                True,
                attempts=done.attempts,
                seconds=time.monotonic() - start,
            )
        )
        return done

    def close(self) -> None:
        self._inner.close()


class InDatabase(CompactionRefused):
    """The session lives in OpenClaw's SQLite database, where memlens never writes."""


class Archived(CompactionRefused):
    """The session is an archived transcript (reset, deleted, backup): no agent reads it."""


def check_agent_owned(session: Session) -> None:
    """Refuse a session memlens must not append to, forced or not.

    Raises
    ------
    InDatabase
        For a session read from an OpenClaw agent database.
    Archived
        For an archived transcript (``<id>.jsonl.reset.<time>[.zst]``...): OpenClaw
        never reads it again, and a ``.zst`` one would be corrupted by an append.
    """
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

    The entry names the leaf (``parentId``) and the first kept entry
    (``firstKeptEntryId``). An id memlens made up for an entry without one, or
    the id of an entry recovered from a line of objects run together (pi drops
    such lines), names nothing the agent knows: appending it would break the tree.
    """
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


def _check_unchanged(src: Path, session: Session, force: bool) -> None:
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
    _check_unchanged(Path(session.path), session, force)
    _check_agent_lock(session.path)
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


def _check_agent_lock(path: str) -> None:
    """Refuse while OpenClaw holds its write lock on the transcript (never overridden).

    Only OpenClaw releases before 2026.9.6 take that ``<transcript>.lock``; a
    newer one is seen running by its session entry (:func:`agent_run_fence`).
    """
    try:
        check_agent_lock(path)
    except SessionBusy as exc:
        raise LaneBusy(exc) from None


class AgentRunning(CompactionRefused):
    """The session's ``sessions.json`` entry says a run of the agent is in progress."""


FENCE_FIELDS = ("sessionId", "lifecycleRevision", "activeWriterRunId")
"""The fields of a session entry OpenClaw's gateway fences its post-compaction patch with."""


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

    Reads segments.jsonl to leave out the segments already archived; fact
    operations are not listed (they go to the review queue, not to the log).
    With *update_store*, the rewrite of the sibling ``sessions.json`` is listed
    last when there is one to update (see :func:`plan_store_update`).
    """
    if result.entry is None:
        return []
    src = Path(session.path)
    writes = [
        PlannedWrite(
            str(backup_path(src)),
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


def sessions_store_of(session: Session) -> Path | None:
    """The ``sessions.json`` beside an OpenClaw transcript, if there is one."""
    path = Path(session.path).parent / "sessions.json"
    return path if path.is_file() else None


def _describe_changes(key: str, entry: dict[str, Any], changes: dict[str, Any]) -> str:
    bits = []
    for name, value in changes.items():
        if value is REMOVE:
            if name in entry:
                bits.append(f"{name} cleared")
        elif name == "updatedAt":
            bits.append("updatedAt now")
        elif entry.get(name) != value:
            bits.append(f"{name} {entry.get(name, '(none)')} -> {value}")
    return f"session {key}: " + ", ".join(bits)


def plan_store_update(
    result: CompactionRun, session: Session, *, now_ms: int | None = None
) -> StoreUpdate | None:
    """How ``sessions.json`` would change if *result* were written now.

    None when there is no sibling ``sessions.json`` (a pi transcript, or an
    OpenClaw home that keeps its sessions in SQLite). Otherwise a
    :class:`StoreUpdate` (not yet ``updated``) whose *keys* are empty, with the
    reason in *note*, when the store cannot be read or names no entry, or
    several, for the transcript. Never raises.
    """
    path = sessions_store_of(session)
    if path is None or result.entry is None:
        return None
    name = str(path)
    try:
        store = load_sessions_store(path)
    except FormatError as exc:
        return StoreUpdate(name, [], False, f"sessions.json not updated: cannot read it: {exc}")
    except OSError as exc:
        return StoreUpdate(
            name, [], False, f"sessions.json not updated: cannot read it: {exc.strerror or exc}"
        )
    try:
        found = entries_for_transcript(store, session.path, session.id)
    except ValueError as exc:  # a name the OS refuses (a NUL in it)
        return StoreUpdate(name, [], False, f"sessions.json not updated: {exc}")
    if not found:
        return StoreUpdate(
            name, [], False, f"sessions.json not updated: no session in it names {session.id}"
        )
    if len(found) > 1:
        keys = ", ".join(e.key for e in found)
        return StoreUpdate(
            name,
            [],
            False,
            f"sessions.json not updated: several sessions name this transcript ({keys})",
        )
    entry = found[0]
    stamp = now_ms if now_ms is not None else int(time.time() * 1000)
    changes = compaction_changes(
        entry.raw, tokens_after=result.entry.get("tokensAfter"), now_ms=stamp
    )
    note = "update " + _describe_changes(entry.key, entry.raw, changes)
    return StoreUpdate(name, [entry.key], False, note, changes={entry.key: changes})


class _EntryChanged(Exception):
    """The session's entry now names another session: the gateway's patch would not apply."""


STORE_LOCK_WAIT_SECONDS = 2.0


def _wait_for_store_lock(path: str) -> LockHolder | None:
    """OpenClaw's live ``sessions.json.lock`` after a short wait, or None once it is free."""
    deadline = time.monotonic() + STORE_LOCK_WAIT_SECONDS
    while True:
        holder = agent_lock_holder(path)
        if holder is None or time.monotonic() >= deadline:
            return holder
        time.sleep(0.05)


def update_store_after(
    result: CompactionRun, session: Session, *, fence: Mapping[str, Any] | None = None
) -> StoreUpdate | None:
    """Count the written compaction in ``sessions.json`` as OpenClaw's gateway would.

    Re-reads the store (the gateway writes it all the time) and changes only
    the fields of :func:`~core.openclaw.sessions_store.compaction_changes`,
    computed from the entry as it is then, in the one entry of the transcript;
    atomic rewrite with a backup. Like the gateway, it leaves an entry that
    names another ``sessionId`` by then (the session was reset) alone, and it
    waits for a ``sessions.json.lock`` of OpenClaw's file lock to go. With
    *fence* (:func:`agent_run_fence`, taken before the append) the entry must
    still have the same ``sessionId``, ``lifecycleRevision`` and
    ``activeWriterRunId`` (the gateway's guard: a run that started meanwhile
    owns the entry). Never raises: a store that cannot be read, matched,
    locked or written is left as it was and the returned :class:`StoreUpdate`
    says why.
    """
    try:
        return _update_store_after(result, session, fence)
    except Exception as exc:  # the compaction is written: never fail it for the counters
        path = sessions_store_of(session)
        return StoreUpdate(
            str(path) if path is not None else "",
            [],
            False,
            f"sessions.json not updated: {exc or type(exc).__name__}",
        )


def _update_store_after(
    result: CompactionRun, session: Session, fence: Mapping[str, Any] | None
) -> StoreUpdate | None:
    planned = plan_store_update(result, session)
    if planned is None or not planned.keys or result.entry is None:
        return planned
    key = planned.keys[0]
    if fence is not None:
        expected: Mapping[str, Any] = fence
    else:
        try:
            now = load_sessions_store(planned.path).entries[key].raw
            expected = {name: now[name] for name in FENCE_FIELDS if name in now}
        except (FormatError, OSError, KeyError):
            expected = {"sessionId": None}  # the update below says why
    tokens_after = result.entry.get("tokensAfter")
    stamp = int(time.time() * 1000)
    applied: dict[str, dict[str, Any]] = {}

    def changes(entry: Mapping[str, Any]) -> Mapping[str, Any]:
        # like the gateway's projection: only while the entry names the same session,
        # in the same lifecycle, with the same writer
        if entry.get("sessionId") != expected.get("sessionId"):
            raise _EntryChanged(f"session {key} now names {entry.get('sessionId')!r}")
        for name in FENCE_FIELDS[1:]:
            if entry.get(name) != expected.get(name):
                raise _EntryChanged(
                    f"session {key}: {name} {expected.get(name)!r} -> {entry.get(name)!r}"
                )
        applied[key] = compaction_changes(entry, tokens_after=tokens_after, now_ms=stamp)
        return applied[key]

    def not_updated(why: str) -> StoreUpdate:
        planned.note = f"sessions.json not updated: {why}"
        planned.keys = []
        return planned

    holder = _wait_for_store_lock(planned.path)
    if holder is not None:
        return not_updated(f"OpenClaw holds its lock ({holder.describe()})")
    try:
        done = update_sessions_store(planned.path, {key: changes})
    except FormatError as exc:
        return not_updated(f"cannot read it: {exc}")
    except _EntryChanged as exc:
        return not_updated(f"the session changed meanwhile ({exc})")
    except (KeyError, TypeError) as exc:
        return not_updated(f"it changed meanwhile ({exc})")
    except OSError as exc:
        return not_updated(f"cannot write it: {exc.strerror or exc}")
    planned.updated = True
    planned.backup = done.backup
    planned.changes = applied
    after = done.store.entries.get(key)
    planned.note = f"sessions.json updated: session {key}" + (
        f" compactionCount {after.compaction_count}, totalTokens {after.total_tokens}"
        if after is not None
        else ""
    )
    return planned


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
        return _write_in_lane(result, session, store_dir, accept_facts, force, update_store)
    own = take_lane(session, tool)
    with own:
        return _write_in_lane(result, session, store_dir, accept_facts, force, update_store)


def _write_in_lane(
    result: CompactionRun,
    session: Session,
    store_dir: Path | None,
    accept_facts: bool,
    force: bool,
    update_store: bool,
) -> CompactionRun:
    src = Path(session.path)
    backup = make_backup(src)
    try:
        if store_dir is not None:
            _archive(result, store_dir, accept_facts=accept_facts)
        _check_unchanged(src, session, force)
        _check_agent_lock(session.path)  # the agent may have started a turn meanwhile
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
        from core.recall.updater import apply
        from core.store.knowledge import load_knowledge

        log = load_knowledge(store_dir / "knowledge.jsonl")
        applied = apply(log, accepted)
        result.facts_written = [i for a in applied for i in a.written_ids]
