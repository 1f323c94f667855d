"""Summarisation of a compaction plan: staged, with the fallback ladder and safeguard.

OpenClaw's ``summarizeInStages``: parts are summarised chunk by chunk (each
chunk with the summary so far), then merged. Each run has the fallback ladder:
the full summary; else a summary of the small messages plus a note per
oversized one (estimate x 1.2 > half the window); else a plain note. The
safeguard then guarantees the required headings and appends the split-turn
context, the last turns verbatim, the tool failures and the file lists, all
within 16,000 characters.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from core.compaction.call_log import CallRecord, failed_call, fallback_notice
from core.compaction.plan import SAFETY_MARGIN, PlanItem
from core.compaction.safeguard import safeguard, tool_failures
from core.compaction.summarizers import LLMSummarizer, Summarizer
from core.io.jobs import Cancelled, check
from core.io.jsstr import js_round

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from core.compaction.plan import CompactionPlan
    from core.compaction.sections import SummaryInstructions
    from core.io.jobs import CancelCheck, Progress


# -- the staged run ------------------------------------------------------------------
@dataclass(slots=True)
class SummaryRun:
    """The summary and how it was made.

    A run in which any call failed is *degraded*: its summary is what OpenClaw's
    fallback ladder makes of the failure (a partial summary or a plain note),
    and its first line is a :func:`fallback_notice`. memlens writes such a run
    only when the user explicitly allows it.
    """

    summary: str
    provider: str
    calls: int = 0
    fallback: int = 0
    """0: full summary; 1: small messages only, notes for oversized; 2: a plain note."""
    notes: list[str] = field(default_factory=list)
    tool_failures: list[dict[str, str]] = field(default_factory=list)
    truncated: bool = False
    call_log: list[CallRecord] = field(default_factory=list)
    """Every call made, in order, with how it went (the attempt log)."""

    @property
    def failure(self) -> CallRecord | None:
        """The first call that failed (None: every call answered)."""
        return next((c for c in self.call_log if not c.ok), None)

    @property
    def degraded(self) -> bool:
        """True when a call failed: the summary is a fallback, not a real summary."""
        return self.failure is not None


class _Runner:
    def __init__(
        self,
        plan: CompactionPlan,
        summarizer: Summarizer,
        progress: Progress | None,
        cancelled: CancelCheck | None,
    ) -> None:
        self.plan = plan
        self.s = summarizer
        self.progress = progress
        self.cancelled = cancelled
        self.max_tokens = max(256, math.floor(0.8 * plan.reserve_tokens))
        self.run = SummaryRun("", summarizer.name)
        self.total = max(plan.calls, 1)

    def _step(self, label: str) -> None:
        check(self.cancelled, label)
        if self.progress is not None:
            self.progress(self.run.calls, self.total, label)
        self.run.calls += 1

    def call(self, label: str, fn: Callable[..., str], *args: Any, **kwargs: Any) -> str:
        """One call to the summariser, logged in :attr:`SummaryRun.call_log`."""
        self._step(label)
        index, start = self.run.calls, time.monotonic()
        client, endpoint = self.s.name, str(getattr(self.s, "endpoint", ""))
        try:
            text = fn(*args, **kwargs)
        except Cancelled:
            raise
        except Exception as exc:
            self.run.call_log.append(
                failed_call(
                    exc,
                    index=index,
                    total=self.total,
                    step=label,
                    client=client,
                    endpoint=endpoint,
                    start=start,
                )
            )
            raise
        last = getattr(self.s, "last", None)
        self.run.call_log.append(
            CallRecord(
                index,
                self.total,
                label,
                str(getattr(last, "client", "") or client),
                endpoint,
                True,
                attempts=int(getattr(last, "attempts", 1)),
                seconds=time.monotonic() - start,
            )
        )
        return text

    def chunks(
        self,
        items: Sequence[PlanItem],
        groups: Sequence[Sequence[int]],
        previous: str | None,
        what: str = "",
    ) -> str:
        summary = previous
        for n, group in enumerate(groups, 1):
            summary = self.call(
                f"summarising chunk {n} of {len(groups)}{what}",
                self.s.summarize,
                [items[i].message for i in group],
                previous=summary,
                instructions=None,
                max_tokens=self.max_tokens,
                cancelled=self.cancelled,
            )
        return summary or previous or "No prior history."

    def with_fallback(
        self, items: Sequence[PlanItem], groups: Sequence[Sequence[int]], previous: str | None
    ) -> str:
        if not items:
            return previous or "No prior history."
        try:
            return self.chunks(items, groups, previous)
        except Cancelled:
            raise
        except Exception as exc:  # a provider failure: step down the ladder
            self.run.notes.append(f"full summary failed ({exc}); summarising small messages")
        limit = self.plan.window * 0.5
        small = [i for i in items if i.tokens * SAFETY_MARGIN <= limit]
        notes = [
            f"[Large {i.message.role} (~{js_round(i.tokens / 1000)}K tokens) omitted]"
            for i in items
            if i.tokens * SAFETY_MARGIN > limit
        ]
        if small:
            try:
                from core.compaction.plan import chunk_by_max_tokens

                regroup = chunk_by_max_tokens([i.tokens for i in small], self.plan.max_chunk_tokens)
                self.run.fallback = max(self.run.fallback, 1)
                text = self.chunks(small, regroup, previous, " (fallback: small messages)")
                return text + ("\n\n" + "\n".join(notes) if notes else "")
            except Cancelled:
                raise
            except Exception as exc:  # the partial summary failed too
                self.run.notes.append(f"partial summary failed ({exc}); writing a note")
        self.run.fallback = 2
        return (
            f"Context contained {len(items)} messages ({len(notes)} oversized). "
            "Summary unavailable due to size limits."
        )

    def staged(
        self,
        items: Sequence[PlanItem],
        parts: Sequence[Sequence[int]],
        chunks: Sequence[Sequence[int]],
        previous: str | None,
    ) -> str:
        if len(parts) <= 1:
            return self.with_fallback(items, chunks, previous)
        partials = []
        for part in parts:
            members = set(part)
            own = [[i for i in c if i in members] for c in chunks if set(c) <= members]
            sub = [items[i] for i in part]
            index = {g: n for n, g in enumerate(part)}
            partials.append(self.with_fallback(sub, [[index[i] for i in c] for c in own], None))
        try:
            return self.call(
                "merging partial summaries",
                self.s.merge,
                partials,
                previous=previous,
                max_tokens=self.max_tokens,
                cancelled=self.cancelled,
            )
        except Cancelled:
            raise
        except Exception as exc:  # keep the partials rather than lose them
            self.run.notes.append(f"merge failed ({exc}); partial summaries kept in order")
            return "\n\n".join(partials)


def summarize_plan(
    plan: CompactionPlan,
    summarizer: Summarizer,
    *,
    progress: Progress | None = None,
    cancelled: CancelCheck | None = None,
    instructions: SummaryInstructions | None = None,
) -> SummaryRun:
    """Summarise what *plan* replaces; the result fits the safeguard rules.

    *instructions* (``customInstructions``, ``identifierPolicy``: see
    :attr:`~core.compaction.settings.CompactionSettings.instructions`) replace
    those of an :class:`LLMSummarizer`; the offline summariser has no prompt.

    Every call is logged (:attr:`SummaryRun.call_log`). A failed call walks
    OpenClaw's fallback ladder as the agent would; the run is then
    :attr:`~SummaryRun.degraded` and its summary starts with a
    :func:`fallback_notice`, which the safeguard never cuts.
    """
    if instructions is not None and isinstance(summarizer, LLMSummarizer):
        summarizer = replace(summarizer, instructions=instructions)
    r = _Runner(plan, summarizer, progress, cancelled)
    previous = plan.previous_summary or None
    if plan.history_dropped:
        previous = r.with_fallback(plan.history_dropped, plan.history_chunks, previous)
    body = r.staged(plan.summarize, plan.parts, plan.chunks, previous)
    prefix = None
    if plan.turn_prefix:
        try:
            prefix = r.call(
                "summarising the split turn",
                summarizer.summarize_turn_prefix,
                [i.message for i in plan.turn_prefix],
                max_tokens=max(128, math.floor(0.5 * plan.reserve_tokens)),
                cancelled=cancelled,
            )
        except Cancelled:
            raise
        except Exception as exc:  # keep the compaction; say what is missing
            r.run.notes.append(f"split-turn summary failed ({exc})")
            prefix = (
                f"The start of this turn ({len(plan.turn_prefix)} messages) could not be "
                "summarised."
            )
    run = r.run
    run.tool_failures = tool_failures([*plan.history_dropped, *plan.summarize, *plan.turn_prefix])
    failure = run.failure
    notice = fallback_notice(failure) if failure is not None else None
    run.summary, run.truncated = safeguard(body, plan, prefix, run.tool_failures, notice=notice)
    if progress is not None:
        progress(run.calls, run.calls, "done")
    return run
