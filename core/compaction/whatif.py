"""What-if replay: where the agent would have compacted a session under other settings.

:func:`replay_whatif` walks the messages of a session's leaf path in order and
carries the context the model would have seen under :class:`WhatIfSettings`,
deciding each step with the agent's own rules, as memlens already models them:

- **compaction trigger** (pi 0.73.1 ``agent-session.js`` ``_checkCompaction`` at
  ``agent_end`` and before a prompt; OpenClaw 2026.9.6's preemptive check before a
  prompt): compact when the context passes ``window - reserveTokens`` (the line of
  :func:`core.context.budget.budget_for`), checked before each user prompt and at
  the end of the session, and only when an assistant answered since the last
  compaction (pi skips a usage older than the latest compaction);
- **the compaction** is :func:`~core.compaction.plan.plan_compaction` on the
  simulated transcript (pi's cut point and ``keepRecentTokens``, OpenClaw's history
  share); its summary is taken at its output budget, ``0.8 x reserveTokens``, so the
  tokens after are :meth:`~core.compaction.plan.CompactionPlan.expected_tokens_after`
  (kept messages plus that budget), as memlens's compaction planning states them
  (:attr:`WhatIfSettings.summary_size` replaces the budget);
- **memory flush** (:func:`core.context.budget.flush_gate`, OpenClaw's
  ``runMemoryFlushIfNeeded``): checked before each user prompt, once a compaction cycle;
- **overflow** (:func:`core.compaction.overflow.simulate_overflow`, OpenClaw's
  recovery loop): when the context before a model call is over the window, the
  recovery's compactions and tool-result truncation are applied to the simulation.

Measured usage carries over: an assistant's reported usage measures the *real*
context, so the simulated context is measured as that usage scaled by the ratio of
pi's estimates of the two contexts (simulated / real). Measured tokens run about a
third above pi's chars/4 estimate on code-heavy sessions: subtracting estimates
alone would leave the simulated context too large after each compaction. Before the
first difference the ratio is 1 and the replay sees exactly the agent's figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from core.compaction.overflow import simulate_overflow, truncate_tool_results
from core.compaction.plan import plan_compaction
from core.compaction.settings import CompactionSettings, compaction_settings
from core.context.budget import flush_gate
from core.io.jobs import check
from core.openclaw.config import CompactionConfig, MemoryFlushConfig
from core.transcript.model import Entry, Session
from core.transcript.replay import compactions, context_at, context_size
from core.transcript.tokens import estimate_message, usage_total

if TYPE_CHECKING:
    from core.compaction.overflow import OverflowStep
    from core.compaction.plan import CompactionPlan
    from core.io.jobs import CancelCheck, Progress
    from core.transcript.message import Message

Kind = Literal["real", "simulated"]
SUMMARY_SHARE = 0.8
"""pi's ``generateSummary``: ``maxTokens = floor(0.8 x reserveTokens)``."""


@dataclass(frozen=True, slots=True)
class WhatIfSettings:
    """The settings a session is replayed under.

    Attributes
    ----------
    compaction
        Window, reserve (already raised to ``reserveTokensFloor`` where the agent
        does), ``keepRecentTokens`` and ``maxHistoryShare``.
    memory_flush
        ``compaction.memoryFlush`` of the agent (None: the agent never flushes, as pi).
    label
        Where the window came from (``gpt-4o preset``, ``--window``, ``registry``...).
    """

    compaction: CompactionSettings = field(default_factory=CompactionSettings)
    memory_flush: MemoryFlushConfig | None = None
    label: str = ""
    summary_size: int | None = None
    """A simulated summary's tokens; None: its output budget (0.8 x reserveTokens)."""

    @property
    def trigger(self) -> int:
        """The compaction trigger (pi's ``shouldCompact``): above ``window - reserveTokens``."""
        return self.compaction.window - self.compaction.reserve_tokens

    @property
    def summary_tokens(self) -> int:
        """The size a simulated summary is taken at (default: its output budget)."""
        if self.summary_size is not None:
            return self.summary_size
        return math.floor(SUMMARY_SHARE * self.compaction.reserve_tokens)


@dataclass(frozen=True, slots=True)
class WhatIfCompaction:
    """A compaction on the leaf path, real (from the transcript) or simulated."""

    kind: Kind
    entry_id: str
    """The entry after which it happens (the last one before it on the path)."""
    index: int
    """The ``#N`` of :attr:`entry_id`."""
    position: int
    """Messages on the path before it (its x on a timeline of the path's messages)."""
    tokens_before: int
    """The agent's ``tokensBefore`` (recorded, else pi's ``estimateContextTokens``)."""
    tokens_after: int
    """Recorded ``tokensAfter``, else pi's estimate of the summary and kept messages
    (a simulated summary at :attr:`WhatIfSettings.summary_tokens`)."""
    reason: str
    """``threshold``, ``overflow``; a real one below its trigger: ``manual``; ``hook``."""
    first_kept_entry_id: str
    summarized: int
    """Messages it replaced."""
    kept: int
    """Messages it kept verbatim."""
    summary_tokens: int
    detail: str = ""
    compaction_id: str | None = None
    """The compaction entry's id (real ones)."""
    plan: CompactionPlan | None = field(default=None, compare=False, repr=False)
    """A simulated one's plan (what it summarises and keeps), for its loss audit."""


@dataclass(frozen=True, slots=True)
class WhatIfFlush:
    """A memory flush the agent would run before a prompt."""

    entry_id: str
    """The user message it runs before."""
    index: int
    position: int
    tokens: int
    threshold: int
    reason: str


@dataclass(frozen=True, slots=True)
class WhatIfOverflow:
    """A model call whose context is over the window, and OpenClaw's recovery."""

    entry_id: str
    """The assistant message whose call overflowed."""
    index: int
    position: int
    tokens: int
    steps: tuple[OverflowStep, ...]

    @property
    def recovered(self) -> bool:
        """True when the retried prompt fits; False: the run fails with the error."""
        return bool(self.steps) and self.steps[-1].kind in ("recovered", "fits")


@dataclass(frozen=True, slots=True)
class WhatIfResult:
    """The replay of one session: real and simulated compactions side by side.

    ``entry_ids``, ``real_context`` and ``simulated_context`` have one element per
    message on the leaf path (x = position): the context after that message, as
    :func:`core.transcript.replay.context_size` counts it (measured usage plus pi's
    estimate after it, else pi's estimate), in the transcript and in the replay.
    """

    session_id: str
    settings: WhatIfSettings
    own: CompactionSettings
    """The settings the session ran with (to classify the real compactions)."""
    real: tuple[WhatIfCompaction, ...]
    simulated: tuple[WhatIfCompaction, ...]
    flushes: tuple[WhatIfFlush, ...]
    overflows: tuple[WhatIfOverflow, ...]
    failed: tuple[tuple[str, str], ...]
    """``(entry id, reason)`` where the trigger fired but nothing could be summarised."""
    entry_ids: tuple[str, ...]
    real_context: tuple[int, ...]
    simulated_context: tuple[int, ...]
    flush_threshold: int
    """0 when the agent never flushes."""


@dataclass(slots=True)
class _Context:
    """pi's size of a context, carried message by message (``context_size``'s rule)."""

    est: int = 0
    usage: int | None = None
    after: int = 0

    @property
    def tokens(self) -> int:
        return self.usage + self.after if self.usage is not None else self.est

    def add(self, tokens: int, usage: int | None) -> None:
        self.est += tokens
        if usage is not None:
            self.usage, self.after = usage, 0
        else:
            self.after += tokens

    def reset(self, est: int) -> None:
        self.est, self.usage, self.after = est, None, 0


def _usable_usage(entry: Entry, message: Message) -> int | None:
    """The usage pi counts: an assistant turn neither aborted nor failed."""
    if (
        entry.type != "message"
        or message.role != "assistant"
        or message.stop_reason in ("aborted", "error")
    ):
        return None
    return usage_total(message.usage) or None


@dataclass(slots=True)
class _Sim:
    """The simulated transcript: the path without its compactions, plus ours."""

    session: Session
    settings: WhatIfSettings
    entries: list[Entry] = field(default_factory=list)
    start: int = 0
    """First entry the agent's algorithms need (the last compaction's first kept one)."""
    ctx: _Context = field(default_factory=_Context)
    answered: bool = False
    """An assistant answered since the last simulated compaction."""
    cycle: int = 0
    count: int = 0

    def view(self) -> Session:
        s = self.session
        return Session(s.path, s.header, s.version, self.entries[self.start :])

    def append(self, e: Entry, real_est: int) -> None:
        """Add *e*; its usage scaled to this context (*real_est*: the real one's estimate)."""
        parent = self.entries[-1].id if self.entries else None
        msg = e.message
        new = e if e.parent_id == parent else replace(e, parent_id=parent)
        if msg is not None:
            tokens = estimate_message(msg)
            usage = _usable_usage(e, msg)
            est = self.ctx.est + tokens
            if usage is not None and est != real_est and real_est > 0:
                usage = max(1, round(usage * est / real_est))
                new = replace(new, _message=replace(msg, usage={"totalTokens": usage}))
            self.ctx.add(tokens, usage)
            self.answered = self.answered or msg.role == "assistant"
        self.entries.append(new)

    def refresh(self) -> None:
        """Recount the context after a change (a compaction, a truncation)."""
        size = context_size(context_at(self.view()))
        self.ctx.reset(size.estimated)
        if size.measured is not None:
            self.ctx.usage, self.ctx.after = size.measured, 0

    def compact(self, plan: CompactionPlan, reason: str, position: int) -> WhatIfCompaction:
        leaf = self.entries[-1]
        why = f"{self.ctx.tokens:,} tokens > {self._limit(reason):,} ({reason}): {plan.reason}"
        self.count += 1
        cid = f"whatif-{self.count}"
        tokens = self.settings.summary_tokens
        raw = {
            "type": "compaction",
            "id": cid,
            "parentId": leaf.id,
            "timestamp": leaf.timestamp,
            "summary": "s" * (4 * tokens),  # pi's estimate of it: *tokens*
            "firstKeptEntryId": plan.first_kept_entry_id,
            "tokensBefore": plan.tokens_before,
        }
        # the index of its leaf: usage of the kept messages (index <= it) stays out
        self.entries.append(
            Entry(leaf.index, 0, 0, "compaction", cid, leaf.id, leaf.timestamp, raw)
        )
        kept_at = next(
            k for k in range(len(self.entries) - 1, -1, -1)
            if self.entries[k].id == plan.first_kept_entry_id
        )  # fmt: skip
        self.start = kept_at
        self.refresh()
        self.answered = False
        self.cycle += 1
        return WhatIfCompaction(
            "simulated",
            leaf.id,
            leaf.index,
            position,
            plan.tokens_before,
            plan.tokens_kept + tokens,  # plan.expected_tokens_after() at the summary's size
            reason,
            plan.first_kept_entry_id,
            len(plan.summarize) + len(plan.turn_prefix) + len(plan.history_dropped),
            len(plan.kept),
            tokens,
            why,
            plan=plan,
        )

    def _limit(self, reason: str) -> int:
        return self.settings.compaction.window if reason == "overflow" else self.settings.trigger

    def plan(self, *, compaction_leaf: bool = False) -> CompactionPlan:
        return plan_compaction(
            self.view(), **self.settings.compaction.kwargs(), compaction_leaf=compaction_leaf
        )

    def truncate(self) -> None:
        """OpenClaw's recovery truncation of the tool results in context."""
        items = [i for i in context_at(self.view()) if not i.synthetic]
        new = truncate_tool_results([i.message.raw for i in items], self.settings.compaction.window)
        changed = {items[k].entry.id: raw for k, raw in enumerate(new) if raw is not None}
        for k in range(self.start, len(self.entries)):
            e = self.entries[k]
            if e.id in changed:
                raw = {**e.raw, "message": changed[e.id]}
                self.entries[k] = Entry(
                    e.index, e.line, e.offset, e.type, e.id, e.parent_id, e.timestamp, raw
                )
        self.refresh()


def _classify(tokens_before: int, own: CompactionSettings, hook: bool) -> str:
    if hook:
        return "hook"
    if tokens_before > own.window:
        return "overflow"
    if tokens_before > own.window - own.reserve_tokens:
        return "threshold"
    return "manual"


def replay_whatif(
    session: Session,
    settings: WhatIfSettings,
    *,
    at: str | None = None,
    own: CompactionSettings | None = None,
    progress: Progress | None = None,
    cancelled: CancelCheck | None = None,
) -> WhatIfResult:
    """Replay *session*'s leaf path (to entry *at*) under *settings*.

    Parameters
    ----------
    own
        The settings the session ran with (default: pi's, for the session's model),
        against which each real compaction is classified (threshold, overflow, manual).
    progress, cancelled
        As every long core job (:mod:`core.io.jobs`).
    """
    own = own or compaction_settings(session)
    leaf = session.entry(at) if at else session.leaf
    path = session.path_to(leaf.id) if leaf is not None else []
    infos = {c.entry.id: c for c in compactions(session)}
    sim = _Sim(session, settings)
    real = _Context()
    flush_cfg = CompactionConfig(memory_flush=settings.memory_flush or MemoryFlushConfig(False))
    last_flush: int | None = None
    flush_at = 0
    out_real: list[WhatIfCompaction] = []
    out_sim: list[WhatIfCompaction] = []
    flushes: list[WhatIfFlush] = []
    overflows: list[WhatIfOverflow] = []
    failed: list[tuple[str, str]] = []
    ids: list[str] = []
    real_curve: list[int] = []
    sim_curve: list[int] = []
    last: Entry | None = None
    failed_run = False
    window = settings.compaction.window

    def checkpoint() -> None:
        if last is None or not sim.answered or sim.ctx.tokens <= settings.trigger:
            return
        plan = sim.plan()
        if plan.ok:
            out_sim.append(sim.compact(plan, "threshold", len(ids)))
        else:
            failed.append((last.id, plan.reason))
            sim.answered = False  # pi tries again only after a new answer

    for n, e in enumerate(path):
        if progress is not None and n % 256 == 0:
            check(cancelled, "what-if replay")
            progress(n, len(path), "replaying")
        if e.type == "compaction":
            info = infos.get(e.id)
            if info is not None and last is not None:
                summary = estimate_message(info.entry.message) if info.entry.message else 0
                before = info.tokens_before if info.tokens_before is not None else real.tokens
                real.reset(summary + sum(i.tokens for i in info.kept))
                out_real.append(
                    WhatIfCompaction(
                        "real", last.id, last.index, len(ids), before, info.tokens_after or 0,
                        _classify(before, own, e.raw.get("fromHook") is True),
                        info.first_kept_entry_id, len(info.replaced), len(info.kept),
                        summary, compaction_id=e.id,
                    )
                )  # fmt: skip
            continue
        msg = e.message
        if msg is not None and e.type == "message" and msg.role == "user" and ids:
            failed_run = False
            if settings.memory_flush is not None:
                tokens = sim.ctx.tokens + estimate_message(msg)
                fires, flush_at, why = flush_gate(
                    tokens, window, flush_cfg,
                    transcript_bytes=e.offset if session.db is None else None,
                    compaction_count=sim.cycle, flush_compaction_count=last_flush,
                )  # fmt: skip
                if fires:
                    last_flush = sim.cycle
                    flushes.append(WhatIfFlush(e.id, e.index, len(ids), tokens, flush_at, why))
            checkpoint()
        if (
            msg is not None and msg.role == "assistant" and sim.ctx.tokens > window and ids
            and not failed_run
        ):  # fmt: skip
            overflows.append(_overflow(sim, e, len(ids), out_sim))
            # a recovery that gives up fails the run: the rest of it never happened
            failed_run = not overflows[-1].recovered
        if e.type in ("reset", "leaf"):
            continue  # OpenClaw's navigation rows: the replay follows pi's transcript rules
        if msg is not None:
            real.add(estimate_message(msg), _usable_usage(e, msg))
        sim.append(e, real.est)
        last = e
        if msg is not None:
            ids.append(e.id)
            real_curve.append(real.tokens)
            sim_curve.append(sim.ctx.tokens)
    checkpoint()  # agent_end of the last run
    if settings.memory_flush is not None and not flush_at:
        _, flush_at, _ = flush_gate(0, window, flush_cfg)
    return WhatIfResult(
        session.id, settings, own, tuple(out_real), tuple(out_sim), tuple(flushes),
        tuple(overflows), tuple(failed), tuple(ids), tuple(real_curve), tuple(sim_curve),
        flush_at,
    )  # fmt: skip


def _overflow(
    sim: _Sim, entry: Entry, position: int, out: list[WhatIfCompaction]
) -> WhatIfOverflow:
    """OpenClaw's recovery before *entry*'s call, applied to the simulation."""
    c = sim.settings.compaction
    tokens = sim.ctx.tokens
    steps = simulate_overflow(
        sim.view(), c.window, reserve_tokens=c.reserve_tokens,
        keep_recent_tokens=c.keep_recent_tokens, max_history_share=c.max_history_share,
    )  # fmt: skip
    for step in steps:
        if step.kind == "compact":
            plan = sim.plan(compaction_leaf=True)
            if plan.ok:
                out.append(sim.compact(plan, "overflow", position))
        elif step.kind == "truncate":
            sim.truncate()
    sim.answered = False
    return WhatIfOverflow(entry.id, entry.index, position, tokens, tuple(steps))
