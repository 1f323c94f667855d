"""Loss audit of a compaction: what its summary kept of the messages it replaced.

:func:`audit_compaction` audits a compaction the agent wrote: the messages it
summarised are those that were in context just before it and not after it (the
previous summary included: pi and OpenClaw fold it into the new one), as
:func:`core.transcript.replay.compactions` finds them; the messages the model
still sees after the cut are the kept ones and every later message on the
session's current branch. :func:`audit_dry_run` audits memlens's own offline
summary, either of the next cut memlens plans (``memlens compact``'s dry run) or
of the very cut a compaction made (:func:`same_cut_plan`), so that two
summarisers are compared on the same messages.

Extraction is :mod:`core.compaction.audit_extract`, matching
:mod:`core.compaction.audit_match`. Item texts are redacted before they leave
this module: an audit quotes the user's words.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.compaction.audit_extract import CATEGORIES, extract, group_of
from core.compaction.audit_match import STATUSES, Haystack, status_of
from core.safety.redact import redact
from core.transcript.replay import compactions
from core.transcript.tokens import estimate_message

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from core.compaction.plan import CompactionPlan
    from core.transcript.message import Message
    from core.transcript.model import Entry, Session
    from core.transcript.replay import CompactionInfo

GROUPS = ("identifier", "file", "decision", "todo", "request")


class AuditError(ValueError):
    """The compaction asked for cannot be audited (none, or no such one); says why."""


@dataclass(frozen=True, slots=True)
class AuditItem:
    """One item of the summarised messages and what the summary made of it."""

    text: str
    category: str
    status: str
    source: tuple[str, ...]
    """Ids of the entries it came from, in order."""
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        """The ``items`` element of ``memlens audit --json``."""
        out: dict[str, Any] = {
            "text": self.text,
            "category": self.category,
            "group": group_of(self.category),
            "status": self.status,
            "source": list(self.source),
        }
        if self.detail:
            out["detail"] = self.detail
        return out


@dataclass(frozen=True, slots=True)
class Score:
    """Counts by status for one category (or group), and the loss they make."""

    items: int
    kept: int
    normalised: int
    missing: int
    lost: int

    @property
    def loss(self) -> float:
        """Missing or lost, over every item (0 when there is none)."""
        return (self.missing + self.lost) / self.items if self.items else 0.0

    def to_json(self) -> dict[str, Any]:
        """Counts, ``loss`` and ``lost_for_good`` (lost over every item)."""
        return {
            "items": self.items,
            "kept": self.kept,
            "normalised": self.normalised,
            "missing": self.missing,
            "lost": self.lost,
            "loss": round(self.loss, 4),
            "lost_for_good": round(self.lost / self.items, 4) if self.items else 0.0,
        }


def score(items: Iterable[AuditItem]) -> Score:
    """The :class:`Score` of *items*."""
    counts = dict.fromkeys(STATUSES, 0)
    n = 0
    for item in items:
        counts[item.status] += 1
        n += 1
    return Score(n, counts["kept"], counts["normalised"], counts["missing"], counts["lost"])


@dataclass(slots=True)
class LossAudit:
    """The audit of one summary of one cut."""

    session_id: str
    path: str
    summariser: str
    """``agent`` for a compaction in the file; ``memlens offline`` for a dry run."""
    summary: str
    entry_id: str | None
    """The compaction audited, or whose cut memlens's summary was made of (None: the
    next cut memlens plans)."""
    first_kept_entry_id: str
    tokens_before: int | None
    summarised_messages: int
    summarised_tokens: int
    kept_messages: int
    items: list[AuditItem] = field(default_factory=list)
    index: int | None = None
    line: int | None = None
    number: int | None = None
    """1-based place of the compaction among the file's compactions."""
    notes: list[str] = field(default_factory=list)

    def scores(self) -> dict[str, Score]:
        """A score for every category that has items, in :data:`CATEGORIES` order."""
        out = {c: score(i for i in self.items if i.category == c) for c in CATEGORIES}
        return {c: s for c, s in out.items() if s.items}

    def group_scores(self) -> dict[str, Score]:
        """A score for every group (identifier, file, decision, todo, request)."""
        return {g: score(i for i in self.items if group_of(i.category) == g) for g in GROUPS}

    def lost(self) -> list[AuditItem]:
        """The items lost for good."""
        return [i for i in self.items if i.status == "lost"]

    def to_json(self) -> dict[str, Any]:
        """The JSON of ``memlens audit --json``."""
        return {
            "session": self.session_id,
            "path": self.path,
            "compaction": {
                "entry_id": self.entry_id,
                "number": self.number,
                "index": self.index,
                "line": self.line,
                "first_kept_entry_id": self.first_kept_entry_id,
                "tokens_before": self.tokens_before,
                "summariser": self.summariser,
                "dry_run": self.summariser != "agent",
                "summary_chars": len(self.summary),
                "summarised_messages": self.summarised_messages,
                "summarised_tokens": self.summarised_tokens,
                "kept_messages": self.kept_messages,
            },
            "scores": {c: s.to_json() for c, s in self.scores().items()},
            "groups": {g: s.to_json() for g, s in self.group_scores().items()},
            "total": score(self.items).to_json(),
            "notes": list(self.notes),
            "items": [i.to_json() for i in self.items],
        }


def message_texts(messages: Iterable[Message]) -> list[str]:
    """What the model reads of each message: text, tool results and tool-call arguments."""
    out: list[str] = []
    for m in messages:
        parts: list[str] = []
        for b in m.blocks:
            if b.text and b.kind in ("text", "tool_result"):
                parts.append(b.text)
            elif b.kind == "tool_call" and isinstance(b.arguments, dict):
                parts.extend(str(v) for v in b.arguments.values() if isinstance(v, str))
        out.append("\n".join(parts))
    return out


def audit_messages(
    summarised: Sequence[tuple[str, Message]], summary: str, after: Iterable[Message]
) -> list[AuditItem]:
    """Every item of *summarised* with its status against *summary* and *after*."""
    found = extract(summarised)
    hay = Haystack(summary)
    parts = message_texts(after)
    later = Haystack("\n".join(parts), parts)
    return [
        AuditItem(redact(f.text), f.category, status_of(f, hay, later), tuple(f.source), f.detail)
        for f in found
    ]


def pick_compaction(session: Session, at: str | None = None) -> tuple[int, CompactionInfo]:
    """The compaction *at* names, with its 1-based number among the file's.

    *at*: a compaction's entry id or ``#N``; another entry (the last compaction on
    its path); a plain number N (the file's N-th compaction); None (the last
    compaction on the current branch, else the file's last).

    Raises
    ------
    AuditError
        When the session has no compaction, or *at* names none.
    """
    infos = compactions(session)
    if not infos:
        raise AuditError(
            f"{session.path} has no compaction (use --dry-run-summary to audit the cut "
            "memlens would make)"
        )
    numbers = {info.entry.id: n for n, info in enumerate(infos, 1)}
    if at is not None and at not in session.by_id and at.isdigit():
        n = int(at)
        if not 1 <= n <= len(infos):
            raise AuditError(f"{session.path} has {len(infos)} compaction(s); no number {n}")
        return n, infos[n - 1]
    if at is None:
        leaf = session.leaf
        path = session.path_to(leaf.id) if leaf is not None else []
    else:
        try:
            path = session.path_to(session.entry(at).id)
        except KeyError as exc:
            raise AuditError(str(exc.args[0])) from None
    on_path = [e.id for e in path if e.id in numbers]
    if not on_path:
        if at is not None:
            raise AuditError(f"no compaction at or before {at} in {session.path}")
        on_path = [infos[-1].entry.id]
    n = numbers[on_path[-1]]
    return n, infos[n - 1]


def _later(session: Session, comp: Entry) -> list[Message]:
    """Messages after *comp* on the current branch (none when it is off that branch)."""
    leaf = session.leaf
    if leaf is None:
        return []
    path = session.path_to(leaf.id)
    ids = [e.id for e in path]
    if comp.id not in ids:
        return []
    return [e.message for e in path[ids.index(comp.id) + 1 :] if e.message is not None]


def audit_compaction(session: Session, at: str | None = None) -> LossAudit:
    """The loss audit of a compaction the agent wrote (:func:`pick_compaction` picks it).

    Raises
    ------
    AuditError
        When there is no such compaction.
    """
    number, info = pick_compaction(session, at)
    summarised = [(i.entry.id, i.message) for i in info.replaced]
    after = [*(i.message for i in info.kept), *_later(session, info.entry)]
    audit = LossAudit(
        session.id,
        session.path,
        "agent",
        info.summary,
        info.entry.id,
        info.first_kept_entry_id,
        info.tokens_before,
        len(info.replaced),
        sum(i.tokens for i in info.replaced),
        len(info.kept),
        audit_messages(summarised, info.summary, after),
        index=info.entry.index,
        line=info.entry.line,
        number=number,
    )
    if not info.summary.strip():
        audit.notes.append("the compaction's summary is empty: everything it replaced is missing")
    return audit


def same_cut_plan(session: Session, info: CompactionInfo, **settings: Any) -> CompactionPlan:
    """Memlens's plan of the cut *info* made: planned at its parent, keeping what it kept.

    pi's cut walks back from the newest message until ``keepRecentTokens``: with
    that set to pi's estimate of the messages from the compaction's first kept
    entry on, the walk stops there. *settings* are :func:`plan_compaction`'s
    (``keep_recent_tokens`` is replaced). The plan's first kept entry is the
    compaction's unless history-share pruning or a damaged chain moved it.
    """
    from core.compaction.plan import plan_compaction

    parent = info.entry.parent_id
    if not parent or parent not in session.by_id:
        raise AuditError(f"compaction {info.entry.id} has no parent entry to plan from")
    path = session.path_to(parent)
    ids = [e.id for e in path]
    first = info.first_kept_entry_id
    start = ids.index(first) if first in ids else len(path)
    keep = sum(
        estimate_message(e.message)
        for e in path[start:]
        if e.type == "message" and e.message is not None
    )
    settings["keep_recent_tokens"] = max(1, keep)
    return plan_compaction(session, at=parent, **settings)


def audit_dry_run(
    session: Session,
    *,
    at: str | None = None,
    same_cut: bool = False,
    **settings: Any,
) -> LossAudit:
    """The loss audit of memlens's offline summary (a dry run: nothing is written).

    Without *same_cut*: of the next cut memlens plans at *at* (the leaf by
    default), as ``memlens compact`` would make it. With *same_cut*: of the cut
    the compaction *at* names made (:func:`pick_compaction`), so that its
    summary and memlens's are audited on the same messages. *settings* go to
    :func:`~core.compaction.plan.plan_compaction`.

    Raises
    ------
    AuditError
        When there is nothing to summarise or no such compaction.
    """
    from core.compaction.plan import plan_compaction
    from core.compaction.run import compact
    from core.compaction.summarizers import OfflineSummarizer

    notes: list[str] = []
    number = None
    comp: Entry | None = None
    if same_cut:
        number, info = pick_compaction(session, at)
        plan = same_cut_plan(session, info, **settings)
        comp = info.entry
        if plan.ok and plan.first_kept_entry_id != info.first_kept_entry_id:
            notes.append(
                f"memlens's planner cut at {plan.first_kept_entry_id}, not at the "
                f"compaction's {info.first_kept_entry_id}: the two summaries do not cover "
                "the same messages"
            )
    else:
        plan = plan_compaction(session, at=at, **settings)
    if not plan.ok:
        raise AuditError(f"{session.path}: {plan.reason}")
    run = compact(session, summarizer=OfflineSummarizer(), plan=plan)
    summary = run.summary.summary if run.summary is not None else ""
    items = [*plan.history_dropped, *plan.summarize, *plan.turn_prefix]
    summarised = [(i.entry.id, i.message) for i in items]
    if plan.previous_summary:
        prev = _previous_compaction(session, plan.leaf_id)
        if prev is not None and prev.message is not None:
            summarised.insert(0, (prev.id, prev.message))
    after = [i.message for i in plan.kept]
    if comp is not None:
        after += _later(session, comp)
    return LossAudit(
        session.id,
        session.path,
        "memlens offline",
        summary,
        comp.id if comp is not None else None,
        plan.first_kept_entry_id,
        plan.tokens_before,
        len(summarised),
        plan.tokens_summarized,
        len(plan.kept),
        audit_messages(summarised, summary, after),
        index=comp.index if comp is not None else None,
        line=comp.line if comp is not None else None,
        number=number,
        notes=notes,
    )


def _previous_compaction(session: Session, leaf_id: str) -> Entry | None:
    path = session.path_to(leaf_id)
    return next((e for e in reversed(path) if e.type == "compaction"), None)
