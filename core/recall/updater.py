r"""Mem0-style knowledge updates: propose first, write only what is accepted.

:func:`propose` reads a batch of candidate facts against a :class:`KnowledgeLog`
and returns one :class:`ProposedOperation` per candidate, writing nothing.
:func:`apply_operations` then appends the accepted ones through the log's append-only
methods. The rule is memory-context's ``knowledge-updater.ts``:

1. The content hash (trimmed, lower-cased) equals an active fact's -> ``NONE``.
2. Otherwise the best *same-type active* fact by word Jaccard (lower case, split on
   JavaScript's ``\s``; the first of equals, newest first) is a match when the
   similarity is > 0.2. No match -> ``ADD``.
3. A match with similarity > 0.5, or a *refinement* (the candidate is longer than
   1.2x the old fact and more than half of the old's words are in it):
   ``UPDATE`` when the candidate is longer than 1.2x the old, else ``NONE``.
4. Any other match (0.2 < similarity <= 0.5, no refinement) -> ``SUPERSEDE``: the
   candidate is appended and the old fact gets ``supersededBy``.

"Longer" compares ``content`` lengths in UTF-16 code units (JavaScript's
``.length``; it differs from ``len`` only for characters outside the BMP), as
``len(new) > len(old) * 1.2`` in floating point, exactly as the agent computes it.

Where memlens differs from the agent:

* Candidates are redacted (when the log redacts) before they are compared, so
  they are compared with what would be written, and proposals show no secrets.
* Each candidate is compared with the batch so far: an earlier candidate that
  would be added counts as an active fact, one that updates a fact replaces its
  content, one that supersedes or deletes a fact takes that fact out. (The agent
  compares with a snapshot taken before the batch, except for the exact hash.)
  An operation on such a pending fact names the earlier proposal in
  ``target_index``; :func:`apply_operations` needs that proposal accepted too.
* A candidate with an unknown type or no content is ``NONE`` (it could not be
  written), not an error.
* ``DELETE`` (off unless ``allow_delete``) is deliberately narrow: the candidate
  must be a *retraction* -- it says "no longer", "not ... anymore", "(has been|was)
  removed/deleted/dropped", "obsolete" or "retracted" -- and more than half of the
  words of a same-type active fact must be in it. The retraction itself is not
  stored; the old fact gets a ``_deleted`` line. Anything else is left to rules 2-4.
* When a ``SUPERSEDE`` candidate has no context, the new fact keeps the old one's
  (:meth:`KnowledgeLog.supersede`); the agent leaves it without context.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from core.safety.redact import maybe_redact
from core.store.knowledge import FACT_TYPES, content_hash

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from core.store.knowledge import Fact, KnowledgeLog

OpKind = Literal["ADD", "UPDATE", "SUPERSEDE", "NONE", "DELETE"]

MATCH_THRESHOLD = 0.2
SIMILAR_THRESHOLD = 0.5
LONGER_RATIO = 1.2
SUBSET_THRESHOLD = 0.5

_JS_SPACE = re.compile(
    "[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+"
)
_RETRACTION = re.compile(
    r"\bno\s+longer\b|\bnot\b.*\bany\s*more\b|\b(?:has|have|had)?\s*(?:been|was|were)\s+"
    r"(?:removed|deleted|dropped)\b|\bobsolete\b|\bretracted\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A fact an extractor (or a user) proposes to remember."""

    type: str
    content: str
    context: str | None = None


@dataclass(frozen=True, slots=True)
class ProposedOperation:
    """What :func:`propose` would do with one candidate, and why."""

    index: int
    """Position of the candidate in its batch."""
    op: OpKind
    candidate: Candidate
    """The candidate as it would be written (redacted)."""
    target: Fact | None
    """The log fact matched (acted on unless ``NONE``), as it was when proposed."""
    similarity: float
    """Word Jaccard with the matched fact; for ``ADD``, the best one found (<= 0.2)."""
    reason: str
    target_index: int | None = None
    """The earlier proposal of this batch whose pending fact was matched, if any."""


@dataclass(frozen=True, slots=True)
class AppliedOperation:
    """What :func:`apply_operations` wrote for one operation."""

    operation: ProposedOperation
    written: tuple[Fact, ...]
    """The facts whose lines were appended, as they are now (new fact first)."""

    @property
    def written_ids(self) -> tuple[str, ...]:
        """Ids of the written facts."""
        return tuple(f.id for f in self.written)


class StaleProposalError(ValueError):
    """The log changed since :func:`propose`, or a needed proposal was not accepted."""


def words(text: str) -> frozenset[str]:
    """The distinct lower-case words of *text* (split on whitespace)."""
    return frozenset(w for w in _JS_SPACE.split(text.lower()) if w)


def token_jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a & b| / |a | b|; 0.0 when either is empty."""
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def subset_ratio(shorter: frozenset[str], longer: frozenset[str]) -> float:
    """The share of *shorter*'s words found in *longer*."""
    return len(shorter & longer) / len(shorter) if shorter else 0.0


def js_length(text: str) -> int:
    """JavaScript's ``text.length``: UTF-16 code units."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def is_retraction(text: str) -> bool:
    """True when *text* says something stopped being true (the DELETE trigger)."""
    return _RETRACTION.search(text) is not None


@dataclass(slots=True)
class _Entry:
    """A fact the next candidate is compared with: in the log, or pending."""

    type: str
    content: str
    hash: str
    words: frozenset[str]
    fact: Fact | None
    op_index: int | None


def _entry(type: str, content: str, fact: Fact | None, op_index: int | None) -> _Entry:
    return _Entry(type, content, content_hash(content), words(content), fact, op_index)


def propose(
    log: KnowledgeLog, candidates: Iterable[Candidate], *, allow_delete: bool = False
) -> list[ProposedOperation]:
    """Decide ADD / UPDATE / SUPERSEDE / NONE (/ DELETE) for each candidate.

    Parameters
    ----------
    log
        The replayed knowledge log; it is only read.
    candidates
        The batch, in order; later candidates see the earlier ones' outcome.
    allow_delete
        Allow ``DELETE`` for retractions (see the module docstring).

    Returns
    -------
    list of ProposedOperation
        One per candidate, in order.
    """
    active = sorted(
        (f for f in log.facts.values() if f.status == "active"),
        key=lambda f: f.timestamp,
        reverse=True,
    )
    # Newest first, as the agent's getActive(): the first of equal matches wins.
    pool = [_entry(f.type, f.content, f, None) for f in active]
    out: list[ProposedOperation] = []
    for i, raw in enumerate(candidates):
        cand = Candidate(
            raw.type,
            maybe_redact(raw.content, log.redaction),
            None if raw.context is None else maybe_redact(raw.context, log.redaction),
        )
        op = _decide(i, cand, pool, allow_delete)
        out.append(op)
        _advance(pool, op)
    return out


def _decide(i: int, cand: Candidate, pool: list[_Entry], allow_delete: bool) -> ProposedOperation:
    if cand.type not in FACT_TYPES:
        return ProposedOperation(i, "NONE", cand, None, 0.0, f"unknown fact type {cand.type!r}")
    if not cand.content.strip():
        return ProposedOperation(i, "NONE", cand, None, 0.0, "no content")
    new_words = words(cand.content)
    h = content_hash(cand.content)
    for e in pool:
        if e.hash == h:
            where = "earlier in this batch" if e.op_index is not None else "in the log"
            return _op(
                i, "NONE", cand, e, token_jaccard(new_words, e.words), f"exact duplicate {where}"
            )
    if allow_delete and is_retraction(cand.content):
        best_cover, victim = 0.0, None
        for e in pool:
            cover = subset_ratio(e.words, new_words) if e.type == cand.type else 0.0
            if cover > best_cover:
                best_cover, victim = cover, e
        if victim is not None and best_cover > SUBSET_THRESHOLD:
            return _op(
                i,
                "DELETE",
                cand,
                victim,
                token_jaccard(new_words, victim.words),
                f"retraction naming {best_cover:.0%} of the fact's words",
            )
    best_sim, best = 0.0, None
    for e in pool:
        if e.type != cand.type:
            continue
        sim = token_jaccard(new_words, e.words)
        if sim > best_sim:
            best_sim, best = sim, e
    if best is None or best_sim <= MATCH_THRESHOLD:
        return ProposedOperation(
            i, "ADD", cand, None, best_sim, f"no same-type fact above {MATCH_THRESHOLD} similarity"
        )
    new_len, old_len = js_length(cand.content), js_length(best.content)
    longer = new_len > old_len * LONGER_RATIO
    cover = subset_ratio(best.words, new_words)
    refinement = longer and cover > SUBSET_THRESHOLD
    if best_sim > SIMILAR_THRESHOLD or refinement:
        why = (
            f"similarity {best_sim:.3f} > {SIMILAR_THRESHOLD}"
            if best_sim > SIMILAR_THRESHOLD
            else f"refinement ({cover:.0%} of the old words kept)"
        )
        if longer:
            return _op(
                i, "UPDATE", cand, best, best_sim, f"{why}, {new_len} > 1.2 x {old_len} chars"
            )
        return _op(i, "NONE", cand, best, best_sim, f"{why}, not more detailed")
    return _op(
        i,
        "SUPERSEDE",
        cand,
        best,
        best_sim,
        f"similarity {best_sim:.3f} in ({MATCH_THRESHOLD}, {SIMILAR_THRESHOLD}], not a refinement",
    )


def _op(
    i: int, kind: OpKind, cand: Candidate, e: _Entry, sim: float, reason: str
) -> ProposedOperation:
    return ProposedOperation(i, kind, cand, e.fact, sim, reason, e.op_index)


def _advance(pool: list[_Entry], op: ProposedOperation) -> None:
    """Make *pool* look as if *op* had been written."""
    cand = op.candidate
    if op.op == "NONE":
        return
    if op.op in ("UPDATE", "SUPERSEDE", "DELETE"):
        at = next(
            k for k, e in enumerate(pool) if e.fact is op.target and e.op_index == op.target_index
        )
        old = pool.pop(at)
        if op.op == "UPDATE":
            pool.insert(0, _entry(old.type, cand.content, old.fact, op.index))
            return
        if op.op == "DELETE":
            return
    pool.insert(0, _entry(cand.type, cand.content, None, op.index))


def apply_operations(
    log: KnowledgeLog, operations: Sequence[ProposedOperation]
) -> list[AppliedOperation]:
    """Write the accepted *operations* (from one :func:`propose` call) to *log*.

    ``ADD`` -> :meth:`~KnowledgeLog.add`, ``UPDATE`` -> :meth:`~KnowledgeLog.update`
    (content, and context when the candidate has one), ``SUPERSEDE`` ->
    :meth:`~KnowledgeLog.supersede`, ``DELETE`` -> :meth:`~KnowledgeLog.delete`,
    ``NONE`` -> nothing. Every write is an append.

    Returns
    -------
    list of AppliedOperation
        One per operation that wrote, in batch order.

    Raises
    ------
    StaleProposalError
        Before anything is written, when a target fact changed since the proposal,
        a candidate to add is now in the log, or an operation depends on a
        proposal that is not among *operations*.
    """
    ops = sorted(operations, key=lambda o: o.index)
    _check(log, ops)
    written_by: dict[int, Fact] = {}
    out: list[AppliedOperation] = []
    for op in ops:
        if op.op == "NONE":
            continue
        cand = op.candidate
        target_id = _target_id(op, written_by)
        facts: tuple[Fact, ...]
        if op.op == "ADD":
            facts = (log.add(cand.type, cand.content, cand.context),)
        elif op.op == "UPDATE":
            facts = (log.update(target_id, content=cand.content, context=cand.context),)
        elif op.op == "SUPERSEDE":
            new = log.supersede(target_id, cand.content, type=cand.type, context=cand.context)
            facts = (new, log.facts[target_id])
        else:
            facts = (log.delete(target_id),)
        written_by[op.index] = facts[0]
        out.append(AppliedOperation(op, facts))
    return out


def _target_id(op: ProposedOperation, written_by: dict[int, Fact]) -> str:
    if op.target_index is not None:
        return written_by[op.target_index].id
    return op.target.id if op.target is not None else ""


def _check(log: KnowledgeLog, ops: list[ProposedOperation]) -> None:
    indices = [o.index for o in ops]
    if len(set(indices)) != len(indices):
        raise StaleProposalError("operations repeat a batch index: use one propose() call")
    writes = {o.index for o in ops if o.op != "NONE"}
    live = {content_hash(f.content) for f in log.facts.values() if f.status == "active"}
    for o in ops:
        if o.op == "NONE":
            continue
        if o.target_index is not None:
            if o.target_index not in writes:
                raise StaleProposalError(
                    f"operation {o.index} ({o.op}) needs proposal {o.target_index} accepted"
                )
        elif o.target is not None and not _unchanged(log, o.target):
            raise StaleProposalError(
                f"fact {o.target.id} changed since operation {o.index} was proposed"
            )
        if o.op in ("ADD", "SUPERSEDE") and content_hash(o.candidate.content) in live:
            raise StaleProposalError(
                f"operation {o.index} ({o.op}): the log now holds this content"
            )


def _unchanged(log: KnowledgeLog, was: Fact) -> bool:
    now = log.facts.get(was.id)
    return (
        now is not None
        and now.status == "active"
        and (now.type, now.content, now.context) == (was.type, was.content, was.context)
    )
