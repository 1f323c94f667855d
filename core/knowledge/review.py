"""The review queue: proposed fact operations the user accepts, edits or rejects.

Knowledge extraction and the updater (:func:`core.recall.updater.propose`) only
*propose*. Each proposal becomes a :class:`ReviewItem` showing what it would do
(``ADD``, ``UPDATE``, ``SUPERSEDE``, ``DELETE`` or ``NONE``), the facts it was
compared against, the similarity and the reason. The user accepts, edits or
rejects each; :func:`plan_review` lists the exact lines accepting would append, and
:func:`apply_review` appends only the accepted operations through the
:class:`~core.store.knowledge.KnowledgeLog` methods (one append per operation,
redacted). ``NONE`` is shown but never writes.

The agent may be writing the log meanwhile. :func:`apply_review` first reads what was
appended since the log was loaded (:func:`catch_up`), then checks every accepted
item just before writing it: a target that was deleted, superseded or edited by
someone else, or content that the log now already holds, is reported
(``stale``), not written. An item that acts on the fact of an earlier proposal of
its batch (``target_index``) is written only after that proposal (``blocked``
otherwise).

New fact ids are chosen when the item is made and every write of a batch carries
the timestamp *at*, so :func:`plan_review` and :func:`apply_review` with the same *at* give the
same bytes when nothing changed in between.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from core.io import jsonio
from core.io.writes import PlannedWrite
from core.knowledge.review_log import DryRunLog, KnowledgeFileChanged, catch_up, pinned
from core.recall.updater import Candidate, token_jaccard, words
from core.safety.redact import maybe_redact
from core.store.knowledge import FACT_TYPES, content_hash

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from core.recall.updater import OpKind, ProposedOperation
    from core.store.knowledge import Fact, KnowledgeLog

ReviewState = Literal["pending", "accepted", "rejected", "edited"]
"""``edited`` is accepted with the user's changes; rejecting keeps the changes."""
Outcome = Literal["written", "stale", "blocked", "failed"]
WRITING_OPS: frozenset[str] = frozenset({"ADD", "UPDATE", "SUPERSEDE", "DELETE"})
_BATCHES = itertools.count(1)

__all__ = [
    "Compared",
    "KnowledgeFileChanged",
    "ReviewItem",
    "ReviewPlan",
    "ReviewResult",
    "apply_review",
    "catch_up",
    "counts",
    "plan_review",
    "preview_review",
    "review_items",
]


@dataclass(frozen=True, slots=True)
class Compared:
    """A fact a proposal was compared against.

    Parameters
    ----------
    content, type
        What the fact says (for a pending fact: what the earlier proposal would write).
    similarity
        Word Jaccard with the proposed content.
    fact
        The log fact, or None for a fact an earlier proposal of the batch would add.
    proposal
        The batch index of that earlier proposal, if the fact is pending.
    is_target
        True for the fact the operation acts on (or that made it ``NONE``).
    """

    content: str
    type: str
    similarity: float
    fact: Fact | None = None
    proposal: int | None = None
    is_target: bool = False


@dataclass(frozen=True, slots=True)
class ReviewItem:
    """One proposed operation and the user's decision on it."""

    operation: ProposedOperation
    batch: int
    """The :func:`~core.recall.updater.propose` call it came from (see :attr:`key`)."""
    new_id: str | None = None
    """The id a written ``ADD``/``SUPERSEDE`` gives its new fact."""
    state: ReviewState = "pending"
    edit: Candidate | None = None
    """The user's version of the candidate, if edited."""
    compared: tuple[Compared, ...] = ()
    """The target first (if any), then the closest same-type facts of the log."""
    source: str = ""
    """Where the proposal came from, e.g. ``"extraction (offline)"``."""
    provenance: dict[str, Any] | None = field(default=None, hash=False)
    """The provenance record written with the fact (``memlensSource``), if known;
    an edited proposal's says ``"edited": true``."""
    note: str = ""
    """Why the last :func:`apply_review` did not write it."""

    @property
    def key(self) -> str:
        """Unique in a queue: ``"<batch>:<index>"``."""
        return f"{self.batch}:{self.operation.index}"

    @property
    def label(self) -> str:
        """How the user sees the key: ``"<batch>.<position from 1>"``."""
        return key_label(self.key)

    @property
    def op(self) -> OpKind:
        """The operation kind."""
        return self.operation.op

    @property
    def candidate(self) -> Candidate:
        """What would be written: the user's edit, else the proposal (redacted)."""
        return self.edit if self.edit is not None else self.operation.candidate

    @property
    def target(self) -> Fact | None:
        """The log fact acted on, as it was when proposed."""
        return self.operation.target

    @property
    def similarity(self) -> float:
        """Similarity with the matched fact (best found, for ``ADD``)."""
        return self.operation.similarity

    @property
    def reason(self) -> str:
        """Why the updater chose this operation."""
        return self.operation.reason

    @property
    def depends_on(self) -> str | None:
        """Key of the earlier proposal whose pending fact this one acts on."""
        ti = self.operation.target_index
        return None if ti is None or self.op == "NONE" else f"{self.batch}:{ti}"

    @property
    def editable(self) -> bool:
        """Whether content and type can be edited (not for ``NONE`` or ``DELETE``)."""
        return self.op in ("ADD", "UPDATE", "SUPERSEDE")

    @property
    def is_accepted(self) -> bool:
        """Accepted, with or without edits."""
        return self.state in ("accepted", "edited")

    @property
    def will_write(self) -> bool:
        """Accepted and an operation that writes."""
        return self.is_accepted and self.op in WRITING_OPS

    def accepted(self) -> ReviewItem:
        """A copy accepted (``edited`` when it carries an edit)."""
        return replace(self, state="edited" if self.edit is not None else "accepted", note="")

    def rejected(self) -> ReviewItem:
        """A copy rejected (an edit is kept, should it be accepted again)."""
        return replace(self, state="rejected", note="")

    def reset(self) -> ReviewItem:
        """A copy pending again, without its edit."""
        return replace(self, state="pending", edit=None, note="")

    def reopened(self, note: str) -> ReviewItem:
        """A copy pending again with *note* saying why it was not written (edit kept)."""
        return replace(self, state="pending", note=note)

    def edited(
        self, content: str, type: str | None = None, *, redaction: bool = True
    ) -> ReviewItem:
        """A copy accepted with new *content* and *type* (redacted when *redaction*).

        Raises
        ------
        ValueError
            When the operation cannot be edited, the type is unknown or the
            content is empty.
        """
        if not self.editable:
            raise ValueError(f"a {self.op} proposal has nothing to edit")
        new_type = type or self.candidate.type
        if new_type not in FACT_TYPES:
            raise ValueError(f"fact type must be one of {', '.join(FACT_TYPES)}")
        if not content.strip():
            raise ValueError("a fact needs content")
        cand = Candidate(new_type, maybe_redact(content.strip(), redaction), self.candidate.context)
        edit = None if cand == self.operation.candidate else cand
        return replace(self, state="edited" if edit else "accepted", edit=edit, note="")


@dataclass(frozen=True, slots=True)
class ReviewResult:
    """What :func:`apply_review` (or :func:`preview_review`) did with one accepted item."""

    item: ReviewItem
    outcome: Outcome
    message: str
    facts: tuple[Fact, ...] = ()
    """The facts whose lines were appended, as they are now (new fact first)."""
    lines: tuple[str, ...] = ()
    """The lines appended, without newlines."""
    positions: tuple[tuple[int, int], ...] = ()
    """``(line number, byte offset)`` of each line appended."""


def key_label(key: str) -> str:
    """``"3:0"`` -> ``"3.1"``: a queue key as shown to the user."""
    batch, _, index = key.partition(":")
    return f"{batch}.{int(index) + 1}" if index.isdigit() else key


def review_items(
    operations: Iterable[ProposedOperation],
    log: KnowledgeLog,
    *,
    batch: int | None = None,
    source: str = "",
    neighbours: int = 3,
    provenance: Mapping[str, dict[str, Any]] | None = None,
) -> list[ReviewItem]:
    """Make one pending :class:`ReviewItem` per operation of one ``propose`` call.

    Parameters
    ----------
    operations
        The proposals, as :func:`~core.recall.updater.propose` returned them.
    log
        The log they were proposed against; its ``new_id`` names the new facts.
    batch
        A number unique in the queue; None takes the next of a process-wide count.
    source
        Where the proposals came from, shown to the user.
    neighbours
        How many other close same-type active facts to list besides the target.
    provenance
        Provenance records by :func:`~core.store.knowledge.content_hash` of a
        candidate's content (:attr:`core.compaction.run.CompactionRun.fact_sources`).
    """
    ops = list(operations)
    by_index = {o.index: o for o in ops}
    number = next(_BATCHES) if batch is None else batch
    active = [f for f in log.facts.values() if f.status == "active"]
    out = []
    for op in ops:
        new_id = log.new_id() if op.op in ("ADD", "SUPERSEDE") else None
        compared = _compared(op, by_index, active, neighbours)
        found = provenance.get(content_hash(op.candidate.content)) if provenance else None
        out.append(
            ReviewItem(
                op,
                number,
                new_id,
                compared=compared,
                source=source,
                provenance=dict(found) if found is not None else None,
            )
        )
    return out


def _compared(
    op: ProposedOperation,
    by_index: dict[int, ProposedOperation],
    active: list[Fact],
    k: int,
) -> tuple[Compared, ...]:
    found: list[Compared] = []
    cand = op.candidate
    if op.target_index is not None and op.target_index in by_index:
        earlier = by_index[op.target_index]
        fact = earlier.target if earlier.op == "UPDATE" else None
        found.append(
            Compared(
                earlier.candidate.content,
                earlier.candidate.type,
                op.similarity,
                fact,
                earlier.index,
                True,
            )
        )
    elif op.target is not None:
        found.append(
            Compared(op.target.content, op.target.type, op.similarity, op.target, None, True)
        )
    if k <= 0 or cand.type not in FACT_TYPES:
        return tuple(found)
    mine = words(cand.content)
    taken_facts = {c.fact.id for c in found if c.fact is not None}
    taken_ops = {c.proposal for c in found if c.proposal is not None}
    # The updater compared with the log's active facts and the batch's earlier proposals.
    pool: list[tuple[float, int, Compared]] = [
        (sim, -f.timestamp, Compared(f.content, f.type, sim, f))
        for f in active
        if f.type == cand.type
        and f.id not in taken_facts
        and (sim := token_jaccard(mine, words(f.content))) > 0
    ]
    pool += [
        (
            sim,
            -(10**18) - e.index,
            Compared(e.candidate.content, e.candidate.type, sim, None, e.index),
        )
        for e in by_index.values()
        if e.index < op.index
        and e.op in ("ADD", "UPDATE", "SUPERSEDE")
        and e.index not in taken_ops
        and e.candidate.type == cand.type
        and (sim := token_jaccard(mine, words(e.candidate.content))) > 0
    ]
    pool.sort(key=lambda t: (-t[0], t[1]))
    found.extend(c for _, _, c in pool[:k])
    return tuple(found)


def counts(items: Iterable[ReviewItem]) -> dict[ReviewState, int]:
    """How many items are pending, accepted, edited and rejected."""
    c = Counter(i.state for i in items)
    return {s: c.get(s, 0) for s in ("pending", "accepted", "edited", "rejected")}


# -- writing ---------------------------------------------------------------------------------
def _staleness(
    item: ReviewItem, log: KnowledgeLog, target_id: str | None, touched: dict[str, str]
) -> str | None:
    """Why *item* must not be written now, or None."""
    was = item.target
    if item.depends_on is None and was is not None and target_id is not None:
        now = log.facts.get(target_id)
        short = target_id[:8]
        if target_id in touched:
            return f"fact {short}… was already changed by proposal {key_label(touched[target_id])}"
        if now is None:
            return f"fact {short}… is no longer in the log"
        if now.status == "deleted":
            return f"fact {short}… was deleted meanwhile"
        if now.status == "superseded":
            return f"fact {short}… was superseded by {(now.superseded_by or '')[:8]}… meanwhile"
        if (now.type, now.content, now.context) != (was.type, was.content, was.context):
            return f"fact {short}… was edited meanwhile; it now says {now.content!r}"
    if item.op in ("ADD", "SUPERSEDE"):
        h = content_hash(item.candidate.content)
        for f in log.facts.values():
            if f.status == "active" and content_hash(f.content) == h:
                return f"the log already holds this content (fact {f.id[:8]}…)"
    return None


def _write(item: ReviewItem, log: KnowledgeLog, target_id: str | None, at: int) -> tuple[Fact, ...]:
    cand = item.candidate
    tid = target_id or ""
    src = item.provenance
    if src is not None and item.edit is not None:
        src = {**src, "edited": True}
    with pinned(log, at, item.new_id):  # the record given as is (content may be redacted)
        if item.op == "ADD":
            return (log.add(cand.type, cand.content, cand.context, source=src),)
        if item.op == "UPDATE":
            old_type = log.facts[tid].type
            new_type = cand.type if cand.type != old_type else None
            fact = log.update(
                tid, content=cand.content, context=cand.context, type=new_type, source=src
            )
            return (fact,)
        if item.op == "SUPERSEDE":
            new = log.supersede(tid, cand.content, type=cand.type, context=cand.context, source=src)
            return new, log.facts[tid]
        return (log.delete(tid),)


def _run(items: Sequence[ReviewItem], log: KnowledgeLog, at: int) -> list[ReviewResult]:
    results: list[ReviewResult] = []
    left_live: dict[str, str] = {}  # item key -> id of the fact it wrote or updated
    touched: dict[str, str] = {}  # fact id -> key of the item of this run that wrote it
    by_key = {i.key: i for i in items}
    for item in items:
        if not item.will_write:
            continue
        dep = item.depends_on
        if dep is not None and dep not in left_live:
            parent = by_key.get(dep)
            why = "is not in the queue" if parent is None else f"is {parent.state}"
            if parent is not None and parent.is_accepted:
                why = "was not written"
            results.append(
                ReviewResult(
                    item, "blocked", f"acts on the fact of proposal {key_label(dep)}, which {why}"
                )
            )
            continue
        if dep is not None:
            target_id: str | None = left_live[dep]
        else:
            target_id = item.target.id if item.target is not None else None
        why_not = _staleness(item, log, target_id, touched)
        if why_not is not None:
            results.append(ReviewResult(item, "stale", why_not))
            continue
        size_before = log.size
        try:
            facts = _write(item, log, target_id, at)
        except (OSError, ValueError, KeyError) as exc:
            results.append(ReviewResult(item, "failed", f"{log.path}: {exc}"))
            continue
        left_live[item.key] = facts[0].id
        touched.update((f.id, item.key) for f in facts)
        new_lines = sorted(
            (ln for f in facts for ln in log.history[f.id] if ln.offset >= size_before),
            key=lambda ln: ln.offset,
        )
        results.append(
            ReviewResult(
                item,
                "written",
                f"{item.op} of fact {facts[0].id[:8]}…",
                facts,
                tuple(_text(ln.record) for ln in new_lines),
                tuple((ln.line, ln.offset) for ln in new_lines),
            )
        )
    return results


def _text(record: dict[str, Any]) -> str:
    return jsonio.dumps_line(record).decode("utf-8").rstrip("\n")


def preview_review(
    items: Sequence[ReviewItem], log: KnowledgeLog, *, at: int | None = None
) -> list[ReviewResult]:
    """What :func:`apply_review` would do now, item by item, without writing anything.

    Parameters
    ----------
    items
        The queue, in order; only accepted items that write are considered.
    log
        The log; only read (call :func:`catch_up` first to see the agent's latest lines).
    at
        The timestamp of the new lines; None asks the log's clock.
    """
    dry = DryRunLog.of(log)
    return _run(items, dry, log.clock() if at is None else at)


@dataclass(frozen=True, slots=True)
class ReviewPlan:
    """:func:`preview_review`'s results and the one append they add up to."""

    results: tuple[ReviewResult, ...] = ()
    writes: tuple[PlannedWrite, ...] = field(default=())

    @property
    def skipped(self) -> tuple[ReviewResult, ...]:
        """Accepted items that would not be written, with the reason."""
        return tuple(r for r in self.results if r.outcome != "written")


def plan_review(
    items: Sequence[ReviewItem], log: KnowledgeLog, *, at: int | None = None
) -> ReviewPlan:
    """:func:`preview_review` plus the :class:`~core.io.writes.PlannedWrite` to confirm."""
    results = preview_review(items, log, at=at)
    done = [r for r in results if r.outcome == "written"]
    if not done:
        return ReviewPlan(tuple(results))
    lines = tuple(line for r in done for line in r.lines)
    kinds = Counter(r.item.op for r in done)
    what = ", ".join(f"{n} {op}" for op, n in sorted(kinds.items()))
    summary = f"append {len(lines)} fact line(s) for {len(done)} accepted operation(s): {what}"
    skipped = len(results) - len(done)
    if skipped:
        summary += f"; {skipped} accepted not written ({_first_problem(results)})"
    write = PlannedWrite(log.path, "append", summary, lines)
    return ReviewPlan(tuple(results), (write,))


def _first_problem(results: Sequence[ReviewResult]) -> str:
    return next(r.message for r in results if r.outcome != "written")


def apply_review(
    items: Sequence[ReviewItem], log: KnowledgeLog, *, at: int | None = None
) -> list[ReviewResult]:
    """Write the accepted items, in queue order, each as one append.

    Reads the agent's latest lines first (:func:`catch_up`) and checks each item
    just before writing it; stale and blocked items are reported, not written.

    Parameters
    ----------
    items
        The queue; pending, rejected and ``NONE`` items write nothing.
    log
        The log to append to.
    at
        The timestamp of the new lines (use the one given to :func:`plan_review`); None
        asks the log's clock.

    Returns
    -------
    list of ReviewResult
        One per accepted item that writes: ``written``, ``stale``, ``blocked`` or
        ``failed`` (an OS error while appending; the file is left whole).

    Raises
    ------
    KnowledgeFileChanged
        Before anything is written, when the file shrank or vanished.
    """
    catch_up(log)
    return _run(items, log, log.clock() if at is None else at)
