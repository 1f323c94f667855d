"""The arrays of a session timeline: one bar per message and the context curve.

:func:`build_timeline` walks the entry tree once, parents before children, and
carries pi's context state along each path (the prefix sum of estimates, the
last compaction, the last usable assistant ``usage`` and the estimate of the
messages after it). That gives, for every message, exactly what
:func:`core.transcript.replay.context_size` of :func:`~core.transcript.replay.context_at`
gives, in O(n) instead of O(n^2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from core.context.terms import THRESHOLD_TERMS
from core.timeline.summary import FlushMarker, flush_markers, message_summary
from core.transcript.replay import context_at, context_size
from core.transcript.tokens import estimate_message, message_chars, usage_total

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from core.context.budget import Budget, FlushRecord
    from core.transcript.model import Entry, Message, Session

__all__ = [
    "BranchMarker",
    "BreakMarker",
    "Category",
    "CompactionMarker",
    "FlushMarker",
    "ThresholdLine",
    "Timeline",
    "bar_outline",
    "build_timeline",
    "message_summary",
    "threshold_lines",
]


class Category(IntEnum):
    """The colour group of a message bar."""

    USER = 0
    ASSISTANT = 1
    TOOL_RESULT = 2
    BASH = 3
    CUSTOM = 4
    SUMMARY = 5
    OTHER = 6

    @property
    def label(self) -> str:
        """The name a legend shows."""
        return _LABELS[self]


_LABELS = {
    Category.USER: "user",
    Category.ASSISTANT: "assistant",
    Category.TOOL_RESULT: "tool result",
    Category.BASH: "bash",
    Category.CUSTOM: "custom",
    Category.SUMMARY: "summary",
    Category.OTHER: "other",
}
_ROLE_CATEGORY = {
    "user": Category.USER,
    "assistant": Category.ASSISTANT,
    "toolResult": Category.TOOL_RESULT,
    "bashExecution": Category.BASH,
    "custom": Category.CUSTOM,
    "branchSummary": Category.SUMMARY,
    "compactionSummary": Category.SUMMARY,
}


@dataclass(frozen=True, slots=True)
class CompactionMarker:
    """A compaction on the timeline, between two message bars."""

    entry_id: str
    x: float
    """Half-way between the last message before it and the next one."""
    tokens_before: int
    """``tokensBefore`` as recorded, else the context just before it."""
    tokens_after: int
    """``tokensAfter`` as recorded, else the estimated context right after it."""
    before_recorded: bool
    after_recorded: bool
    context_before: float
    """The curve's value just before the compaction (measured or estimated)."""
    context_after: float
    """The curve's value right after it: summary plus kept messages (estimated)."""
    on_path: bool

    @property
    def label(self) -> str:
        """``tokensBefore -> tokensAfter`` with thousands separators."""
        return f"{self.tokens_before:,} -> {self.tokens_after:,}"


@dataclass(frozen=True, slots=True)
class BranchMarker:
    """An entry with more than one child: the session forks there."""

    entry_id: str
    x: float
    """The x of the fork's message (or of its nearest message ancestor)."""
    children: int
    context: float


@dataclass(frozen=True, slots=True)
class BreakMarker:
    """An entry whose ``parentId`` is missing from the file, in a cycle or not a string.

    The context there starts without what came before it: the timeline marks the
    spot and says why (:attr:`message` names the file's line).
    """

    entry_id: str
    x: float
    """The x of the entry's message (or of its nearest message ancestor; -0.5 for none)."""
    context: float
    kind: str
    """``missing``, ``cycle`` or ``invalid`` (see :class:`core.transcript.model.ParentBreak`)."""
    line: int
    message: str

    @property
    def label(self) -> str:
        """A few words for the plot."""
        return {"missing": "parent missing", "cycle": "parent cycle"}.get(self.kind, "bad parentId")


@dataclass(frozen=True, slots=True)
class ThresholdLine:
    """A horizontal line on the context plot."""

    key: str
    label: str
    tokens: int


@dataclass(frozen=True, slots=True)
class Timeline:
    """Per-message arrays of one session, in file order (position ``i`` = x ``i``).

    Every array has one element per message-bearing entry (compaction entries
    excepted: they are :attr:`compactions`). The context arrays hold, for each
    message, the context the model had at that entry along the entry's own path,
    so off-path messages (abandoned branches) have theirs too.
    """

    session_id: str
    leaf_id: str | None
    entry_ids: tuple[str, ...]
    entry_index: NDArray[np.int64]
    """The ``#N`` of each entry (object index in the file)."""
    x: NDArray[np.float64]
    tokens: NDArray[np.int64]
    """pi's estimate of each message."""
    category: NDArray[np.int8]
    """:class:`Category` codes."""
    thinking_share: NDArray[np.float64]
    """Share of an assistant message's characters that are thinking (0 elsewhere)."""
    on_path: NDArray[np.bool_]
    """True for messages on the path from the root to the current leaf."""
    unseen: NDArray[np.bool_]
    """True for messages on a line the agent cannot parse: shown, never in its context."""
    parent_pos: NDArray[np.int64]
    """Position of the nearest message ancestor, -1 for none."""
    context: NDArray[np.float64]
    """Measured context where an assistant ``usage`` is available, else estimated."""
    context_estimated: NDArray[np.float64]
    context_measured: NDArray[np.float64]
    """NaN where no usage is available (start of session, right after a compaction)."""
    path_x: NDArray[np.float64]
    """The leaf path's context curve, with two points at each compaction (drop)."""
    path_context: NDArray[np.float64]
    path_estimated: NDArray[np.float64]
    compactions: tuple[CompactionMarker, ...]
    branches: tuple[BranchMarker, ...]
    thresholds: tuple[ThresholdLine, ...] = ()
    breaks: tuple[BreakMarker, ...] = ()
    """Where a ``parentId`` cuts the context (also among the session's problems)."""
    flushes: tuple[FlushMarker, ...] = ()
    """The memory flush ``sessions.json`` records (the agent keeps only the last)."""
    _entries: tuple[Entry, ...] = field(default=(), repr=False, compare=False)
    _positions: dict[str, int] = field(default_factory=dict, repr=False, compare=False)
    _summaries: dict[int, str] = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.entry_ids)

    @property
    def thinking_tokens(self) -> NDArray[np.float64]:
        """The thinking part of each bar, in tokens."""
        return self.tokens * self.thinking_share

    @property
    def measured(self) -> NDArray[np.bool_]:
        """True where :attr:`context` is a measured figure."""
        return ~np.isnan(self.context_measured)

    def summary(self, pos: int) -> str:
        """A one-line summary of message *pos* for a hover (made on first use)."""
        text = self._summaries.get(pos)
        if text is None:
            entry = self._entries[pos]
            message = entry.message
            assert message is not None
            share = float(self.thinking_share[pos])
            text = message_summary(entry, message, int(self.tokens[pos]), share)
            self._summaries[pos] = text
        return text

    @property
    def summaries(self) -> tuple[str, ...]:
        """:meth:`summary` of every message."""
        return tuple(self.summary(i) for i in range(len(self._entries)))

    def position(self, entry_id: str) -> int | None:
        """The x of *entry_id*, None when it is not a message bar."""
        return self._positions.get(entry_id)

    def curve_span(self, x0: float, x1: float) -> tuple[float, float]:
        """Lowest and highest value of the leaf path's curves over ``[x0, x1]``.

        Both drawn curves count (the context and the chars/4 estimate); a label
        whose token span lies outside the result clears them. ``(inf, -inf)``
        when no curve reaches that far.
        """
        lo, hi = math.inf, -math.inf
        for ys in (self.path_context, self.path_estimated):
            keep = ~np.isnan(ys)
            xs, vs = self.path_x[keep], ys[keep]
            if not len(xs) or x1 < xs[0] or x0 > xs[-1]:
                continue
            inside = vs[(xs >= x0) & (xs <= x1)]
            ends = np.interp([max(x0, xs[0]), min(x1, xs[-1])], xs, vs)
            both = np.concatenate([inside, ends])
            lo, hi = min(lo, float(both.min())), max(hi, float(both.max()))
        return lo, hi

    def nearest(self, x: float) -> int | None:
        """The message nearest to *x*, None when there is none."""
        n = len(self.entry_ids)
        if n == 0 or not math.isfinite(x):
            return None
        return int(min(max(round(x), 0), n - 1))


def threshold_lines(budget: Budget) -> tuple[ThresholdLine, ...]:
    """The window, pi's compaction trigger, the memory-flush threshold and safeLimit."""
    name = {k: t.name for k, t in THRESHOLD_TERMS.items()}
    flush = ThresholdLine("flush", name["flush"], budget.flush_threshold)
    return (
        ThresholdLine("window", name["window"], budget.window),
        ThresholdLine("compaction", name["compaction"], budget.compaction_trigger),
        *((flush,) if budget.flush_threshold > 0 else ()),  # none where it never flushes
        ThresholdLine("safe_limit", name["safe_limit"], budget.safe_limit),
    )


def bar_outline(
    x: NDArray[np.float64],
    top: NDArray[np.float64],
    width: float = 0.8,
    bottom: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Outline of bars as one polyline: four points a bar, x never decreasing.

    Filled down to 0, the line draws the bars, and a plot can clip it to the view
    and peak-downsample it like any curve. With *bottom*, the outline starts and
    ends each bar there (for a bar stacked on another).
    """
    n = len(x)
    half = width / 2
    xs = np.empty((n, 4))
    xs[:, 0] = xs[:, 1] = x - half
    xs[:, 2] = xs[:, 3] = x + half
    ys = np.zeros((n, 4))
    if bottom is not None:
        ys[:, 0] = ys[:, 3] = bottom
    ys[:, 1] = ys[:, 2] = top
    return xs.reshape(-1), ys.reshape(-1)


def _measure(message: Message) -> tuple[int, float]:
    """The pi estimate of *message* and the thinking share of its characters."""
    chars = message_chars(message)
    tokens = math.ceil(chars / 4)
    if message.role != "assistant" or not chars:
        return tokens, 0.0
    thinking = sum(len(b.text) for b in message.blocks if b.kind == "thinking")
    return tokens, min(1.0, thinking / chars)


class _State(NamedTuple):
    """pi's context state after one entry, carried from parent to child."""

    cum: int
    """Estimate summed along the whole path (compaction entries count 0)."""
    est: int
    """Estimate of the replayed context."""
    usage: int | None
    """Total of the last usable assistant usage since the last compaction."""
    after: int
    """Estimate of the context items after that assistant."""
    comp_index: int
    """File index of the last compaction on the path."""
    msg_pos: int
    """Position of the nearest message at or above this entry."""

    @property
    def best(self) -> int:
        return self.usage + self.after if self.usage is not None else self.est


_ROOT = _State(0, 0, None, 0, -1, -1)


def _usable_usage(entry: Entry, message: Message, comp_index: int) -> int | None:
    if (
        message.role != "assistant"
        or entry.type != "message"
        or message.stop_reason in ("aborted", "error")
        or entry.index <= comp_index
    ):
        return None
    return usage_total(message.usage) or None


def _kept_tokens(
    session: Session, parent: Entry | None, first_kept: Any, states: dict[str, _State]
) -> int:
    """Estimate of the path entries from *first_kept* up to *parent* (0 when not on it)."""
    if parent is None or not isinstance(first_kept, str):
        return 0
    seen: set[str] = set()
    current: Entry | None = parent
    while current is not None and current.id not in seen:
        if current.id == first_kept:
            grand = session.by_id.get(current.parent_id) if current.parent_id else None
            below = states[grand.id].cum if grand is not None and grand.id in states else 0
            return states[parent.id].cum - below
        seen.add(current.id)
        current = session.by_id.get(current.parent_id) if current.parent_id else None
    return 0


@dataclass(slots=True)
class _Columns:
    """Per-message values, filled in any order, turned into arrays at the end."""

    n: int
    tokens: list[int] = field(init=False)
    category: list[int] = field(init=False)
    share: list[float] = field(init=False)
    parent_pos: list[int] = field(init=False)
    ctx: list[float] = field(init=False)
    ctx_est: list[float] = field(init=False)
    ctx_meas: list[float] = field(init=False)

    def __post_init__(self) -> None:
        n = self.n
        self.tokens, self.category, self.share = [0] * n, [int(Category.OTHER)] * n, [0.0] * n
        self.parent_pos, self.ctx, self.ctx_est = [-1] * n, [0.0] * n, [0.0] * n
        self.ctx_meas = [math.nan] * n

    def put(self, pos: int, msg: Message, tokens: int, share: float, st: _State) -> None:
        self.tokens[pos] = tokens
        self.category[pos] = _ROLE_CATEGORY.get(msg.role, Category.OTHER)
        self.share[pos] = share
        self.ctx_est[pos] = st.est
        self.ctx[pos] = st.best
        if st.usage is not None:
            self.ctx_meas[pos] = st.best


def _walk(
    session: Session, positions: dict[str, int], cols: _Columns
) -> tuple[dict[str, _State], list[tuple[Entry, _State, _State]]]:
    """Every entry's state, parents before children, from the roots down."""
    states: dict[str, _State] = {}
    comps: list[tuple[Entry, _State, _State]] = []
    children = session.children
    by_id = session.by_id
    stack = [(eid, _ROOT) for eid in reversed(children.get(None, []))]
    while stack:
        eid, up = stack.pop()
        if eid in states:
            continue  # a damaged tree can name an entry twice
        entry = by_id[eid]
        msg = entry.message
        if msg is not None and entry.recovered and eid in positions:
            # shown where it sits, but the agent never loaded it: the context is unchanged
            pos = positions[eid]
            cols.parent_pos[pos] = up.msg_pos
            cols.put(pos, msg, *_measure(msg), up)
            st = up
        elif msg is None or entry.recovered:  # a recovered compaction: no marker, no drop
            st = up
        elif entry.type == "compaction":
            parent = by_id.get(entry.parent_id) if entry.parent_id else None
            kept = _kept_tokens(session, parent, entry.raw.get("firstKeptEntryId"), states)
            st = _State(up.cum, estimate_message(msg) + kept, None, 0, entry.index, up.msg_pos)
            comps.append((entry, up, st))
        else:
            t, share = _measure(msg)
            usage = _usable_usage(entry, msg, up.comp_index)
            pos = positions[eid]
            if usage is not None:
                st = _State(up.cum + t, up.est + t, usage, 0, up.comp_index, pos)
            else:
                st = _State(up.cum + t, up.est + t, up.usage, up.after + t, up.comp_index, pos)
            cols.parent_pos[pos] = up.msg_pos
            cols.put(pos, msg, t, share, st)
        states[eid] = st
        kids = children.get(eid)
        if kids:
            stack.extend((c, st) for c in reversed(kids))
    return states, comps


def build_timeline(
    session: Session, budget: Budget | None = None, *, flush: FlushRecord | None = None
) -> Timeline:
    """The timeline arrays of *session*.

    *budget* adds its threshold lines and the memory flush its ``sessions.json``
    entry records (:attr:`~core.context.budget.Budget.flush`); *flush* overrides that record.
    """
    msg_entries = session.messages()
    positions = {e.id: i for i, e in enumerate(msg_entries)}
    n = len(msg_entries)
    cols = _Columns(n)
    states, comp_states = _walk(session, positions, cols)
    for e in msg_entries:
        if e.id not in states:  # unreachable from a root (a parentId cycle): replay it
            size = context_size(context_at(session, e.id))
            assert e.message is not None
            t, share = _measure(e.message)
            measured = size.measured
            best = measured if measured is not None else size.estimated
            st = _State(0, size.estimated, measured, best - (measured or 0), -1, -1)
            cols.put(positions[e.id], e.message, t, share, st)

    leaf = session.leaf
    path = session.path_to(leaf.id) if leaf is not None else []
    path_ids = {e.id for e in path}
    markers = tuple(
        _compaction_marker(comp, before, after, comp.id in path_ids)
        for comp, before, after in comp_states
    )
    px, py, pe = _path_curve(path, positions, cols, states, markers)
    branches = tuple(
        BranchMarker(
            fork.id,
            float(states[fork.id].msg_pos) if fork.id in states else -0.5,
            len(session.children.get(fork.id, [])),
            float(states[fork.id].best) if fork.id in states else math.nan,
        )
        for fork in sorted(session.branch_points(), key=lambda e: e.index)
    )
    return Timeline(
        session_id=session.id,
        leaf_id=leaf.id if leaf is not None else None,
        entry_ids=tuple(e.id for e in msg_entries),
        entry_index=np.fromiter((e.index for e in msg_entries), np.int64, n),
        x=np.arange(n, dtype=np.float64),
        tokens=np.asarray(cols.tokens, dtype=np.int64),
        category=np.asarray(cols.category, dtype=np.int8),
        thinking_share=np.asarray(cols.share, dtype=np.float64),
        on_path=np.fromiter((e.id in path_ids for e in msg_entries), bool, n),
        unseen=np.fromiter((e.recovered for e in msg_entries), bool, n),
        parent_pos=np.asarray(cols.parent_pos, dtype=np.int64),
        context=np.asarray(cols.ctx, dtype=np.float64),
        context_estimated=np.asarray(cols.ctx_est, dtype=np.float64),
        context_measured=np.asarray(cols.ctx_meas, dtype=np.float64),
        path_x=np.asarray(px, dtype=np.float64),
        path_context=np.asarray(py, dtype=np.float64),
        path_estimated=np.asarray(pe, dtype=np.float64),
        compactions=markers,
        branches=branches,
        thresholds=threshold_lines(budget) if budget is not None else (),
        breaks=_break_markers(session, positions, cols, states),
        flushes=flush_markers(
            flush or (budget.flush if budget is not None else None),
            path,
            positions,
            cols.ctx,
            [m.x for m in markers if m.entry_id in path_ids],
        ),
        _entries=tuple(msg_entries),
        _positions=positions,
    )


def _break_markers(
    session: Session, positions: dict[str, int], cols: _Columns, states: dict[str, _State]
) -> tuple[BreakMarker, ...]:
    out: list[BreakMarker] = []
    for b in session.parent_breaks():
        pos = positions.get(b.entry_id)
        st = states.get(b.entry_id)
        if pos is None and st is not None:
            pos = st.msg_pos if st.msg_pos >= 0 else None
        x = float(pos) if pos is not None else -0.5
        context = float(cols.ctx[pos]) if pos is not None else 0.0
        out.append(BreakMarker(b.entry_id, x, context, b.kind, b.line, b.message))
    return tuple(out)


def _path_curve(
    path: list[Entry],
    positions: dict[str, int],
    cols: _Columns,
    states: dict[str, _State],
    markers: tuple[CompactionMarker, ...],
) -> tuple[list[float], list[float], list[float]]:
    """x, context and estimate along *path*, with a vertical drop at each compaction."""
    by_id = {m.entry_id: m for m in markers}
    px: list[float] = []
    py: list[float] = []
    pe: list[float] = []
    for e in path:
        pos = positions.get(e.id)
        if pos is not None:
            px.append(float(pos))
            py.append(cols.ctx[pos])
            pe.append(cols.ctx_est[pos])
        elif e.id in by_id:
            m = by_id[e.id]
            up = states.get(e.parent_id) if e.parent_id else None
            px += [m.x, m.x]
            py += [m.context_before, m.context_after]
            pe += [float(up.est) if up is not None else math.nan, m.context_after]
    return px, py, pe


def _recorded(value: Any) -> int | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return int(value)
    return None


def _compaction_marker(
    entry: Entry, before: _State, after: _State, on_path: bool
) -> CompactionMarker:
    tb, ta = _recorded(entry.raw.get("tokensBefore")), _recorded(entry.raw.get("tokensAfter"))
    return CompactionMarker(
        entry_id=entry.id,
        x=before.msg_pos + 0.5,
        tokens_before=tb if tb is not None else before.best,
        tokens_after=ta if ta is not None else after.est,
        before_recorded=tb is not None,
        after_recorded=ta is not None,
        context_before=float(before.best),
        context_after=float(after.est),
        on_path=on_path,
    )
