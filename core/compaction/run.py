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

import math
import secrets
import time
import uuid
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from core.compaction.call_log import CallRecord, failed_call
from core.compaction.plan import CompactionPlan, plan_compaction
from core.compaction.refusals import CompactionRefused
from core.compaction.summarize import SummaryRun, summarize_plan
from core.compaction.summarizers import OfflineSummarizer
from core.io.jobs import Cancelled
from core.io.jsstr import js_len
from core.knowledge.provenance_record import extraction_sources, segment_text
from core.openclaw.sessions_store import (
    REMOVE,
)
from core.safety.redact import redact
from core.store.segments import Segment, dedup_key, make_segment

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from core.compaction.sections import SummaryInstructions
    from core.compaction.summarizers import Summarizer
    from core.io.fsutil import AppendResult
    from core.io.jobs import CancelCheck, Progress
    from core.llm import ChatMessage, Completion, LLMClient
    from core.transcript.model import Session


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
    run_id: str = ""
    """The knowledge-extraction run's id (in the facts' provenance)."""
    fact_sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Provenance record of each proposed fact, by content hash: write the facts inside
    :meth:`core.store.knowledge.KnowledgeLog.sourced` (or hand it to
    :func:`core.knowledge.review.review_items`) so they carry it."""

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
    return [seg for _, seg in _archived(plan, session, redaction=redaction, timestamp=timestamp)]


def _archived(
    plan: CompactionPlan, session: Session, *, redaction: bool = True, timestamp: int | None = None
) -> list[tuple[str, Segment]]:
    """``(entry id, segment)`` of every summarised message a segment archives."""
    out = []
    for item in [*plan.history_dropped, *plan.summarize, *plan.turn_prefix]:
        m = item.message
        text = segment_text(m)
        if text is None:
            continue
        ts = m.timestamp or timestamp or int(time.time() * 1000)
        seg = make_segment(session.id, m.role, text, timestamp=ts, redaction=redaction)
        out.append((item.entry.id, seg))
    return out


def _segment_ids(archived: Sequence[tuple[str, Segment]], store_dir: Path) -> dict[str, str]:
    """Entry id -> the id its segment has (or will have) in segments.jsonl (first wins)."""
    from core.store.segments import ids_by_dedup_key, load_segments

    seg_path = store_dir / "segments.jsonl"
    stored = (
        load_segments(seg_path, max_segments=-1, eviction_days=0).segments
        if seg_path.is_file()
        else []
    )
    known = ids_by_dedup_key(stored)
    out = {}
    for entry_id, seg in archived:
        out[entry_id] = known.setdefault(dedup_key(seg.session_id, seg.role, seg.content), seg.id)
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
    archived = _archived(plan, session)
    result = CompactionRun(plan, run, entry, [seg for _, seg in archived])
    if store_dir is not None and run.failure is not None:
        # the endpoint just failed: do not send it the conversation again
        result.fact_notes.append("knowledge extraction skipped: the summary failed")
    elif store_dir is not None:
        if progress is not None:
            progress(run.calls, run.calls + 1, "extracting knowledge")
        from core.compaction.extract import extract_knowledge
        from core.store.knowledge import load_knowledge

        log = load_knowledge(store_dir / "knowledge.jsonl")
        read = (*plan.history_dropped, *plan.summarize)  # what the extraction reads
        messages = [i.message for i in read]
        client = (
            None
            if extract_client is None
            else _LoggedClient(extract_client, result.extract_log, run.calls + 1, run.calls + 1)
        )
        extraction = extract_knowledge(messages, log, client=client, cancelled=cancelled)
        result.facts = list(extraction.operations)
        result.run_id = str(uuid.uuid4())
        result.fact_sources = extraction_sources(
            [o.candidate.content for o in extraction.operations],
            session,
            [i.entry.id for i in read],
            run=result.run_id,
            extractor=extraction.source,
            compaction=str(entry["id"]),
            segment_ids=_segment_ids(archived, store_dir),
        )
        result.fact_notes = list(extraction.notes)
        if extraction.skipped:
            result.fact_notes.append(str(extraction.skipped))
        if extraction.unreadable and result.extract_log and result.extract_log[-1].ok:
            # an answer read only in part is a failed extraction: writing the run would
            # lose the facts it did not read without a word (CompactionRun.failure)
            call = result.extract_log[-1]
            result.extract_log[-1] = replace(
                call, ok=False, kind="unreadable", message=extraction.unreadable
            )
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
