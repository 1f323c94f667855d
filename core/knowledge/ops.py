"""Fact edits as planned appends: plan the exact lines, confirm, append, undo by appending.

An operation (:class:`FactOp`: add, edit, supersede, delete, restore) or a batch
of them is first *planned* (:func:`plan_fact_ops`) against the log in memory: the
:class:`Plan` holds the exact, redacted records the write will append, the
:class:`~core.io.writes.PlannedWrite` to show the user, the last record of every
touched fact as it must be when the write happens (``expect``) and as it will be
after (``result``). :func:`apply_fact_plan` reads what the agent appended meanwhile,
refuses a plan whose facts changed (:class:`StaleError`), and appends the planned
records in one write.

Undo and redo never truncate: :func:`inverse` plans the lines that put every
touched fact back in its state before the plan, as new lines. A fact that
existed gets its previous last record again (undo of an UPDATE appends the
previous version, undo of a DELETE appends it without ``_deleted``, undo of a
SUPERSEDE appends the old fact without ``supersededBy``); a fact the plan created
gets a ``_deleted`` line. The inverse of an undo is the redo.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

from typing_extensions import override

from core.io import jsonio
from core.io.writes import PlannedWrite
from core.knowledge.review_log import DryRunLog, KnowledgeFileChanged, catch_up
from core.store.knowledge import FACT_TYPES, FactDeletedError, content_hash

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from core.io.fsutil import AppendResult
    from core.store.knowledge import KnowledgeLog, LogLine

OpKind = Literal["add", "edit", "supersede", "delete", "restore"]
VERBS: dict[str, str] = {
    "add": "ADD",
    "edit": "UPDATE",
    "supersede": "SUPERSEDE",
    "delete": "DELETE",
    "restore": "RESTORE",
}
Record = dict[str, Any]

__all__ = [
    "Applied",
    "FactOp",
    "FactOpError",
    "Plan",
    "StaleError",
    "apply_fact_plan",
    "inverse",
    "plan_fact_ops",
    "short",
]


class FactOpError(ValueError):
    """An operation that cannot be planned; the message is one line for the user."""


class StaleError(FactOpError):
    """The log changed since the plan was made: plan (and confirm) again."""


def short(fact_id: str) -> str:
    """The first 8 characters of an id, as the views show it."""
    return fact_id if len(fact_id) <= 8 else fact_id[:8] + "…"


@dataclass(frozen=True, slots=True)
class FactOp:
    """One requested change of the knowledge log.

    Use the constructors (:meth:`add`, :meth:`edit`, :meth:`supersede`,
    :meth:`delete`, :meth:`restore`). For ``edit`` a field left None keeps its
    value; for ``supersede`` a None type or context is the old fact's.

    *source* is the provenance record written with the fact
    (:data:`core.store.knowledge.SOURCE_KEY`): an ``add`` without one writes the
    agent's line shape; an ``edit`` without one keeps the fact's; a
    ``supersede`` without one gives the new fact ``{"by": "user", "supersedes":
    ...}`` plus the old fact's evidence when the old fact has a record (else the
    old line's ``supersededBy`` alone says what replaced what).
    """

    kind: OpKind
    fact_id: str | None = None
    type: str | None = None
    content: str | None = None
    context: str | None = None
    source: dict[str, Any] | None = field(default=None, hash=False)

    @classmethod
    def add(
        cls,
        type: str,
        content: str,
        context: str | None = None,
        *,
        source: dict[str, Any] | None = None,
    ) -> FactOp:
        """A new fact (*source*: where it came from, e.g. ``{"by": "user", "sessionId": ...}``)."""
        return cls("add", None, type, content, context, source)

    @classmethod
    def edit(
        cls,
        fact_id: str,
        *,
        content: str | None = None,
        context: str | None = None,
        type: str | None = None,
    ) -> FactOp:
        """A new version of a fact (an ``UPDATE``: same id)."""
        return cls("edit", fact_id, type, content, context)

    @classmethod
    def supersede(
        cls, fact_id: str, content: str, *, type: str | None = None, context: str | None = None
    ) -> FactOp:
        """A new fact replacing *fact_id*, which gets ``supersededBy``."""
        return cls("supersede", fact_id, type, content, context)

    @classmethod
    def delete(cls, fact_id: str) -> FactOp:
        """A ``_deleted`` line for the fact."""
        return cls("delete", fact_id)

    @classmethod
    def restore(cls, fact_id: str) -> FactOp:
        """The fact active again (without ``_deleted`` and ``supersededBy``)."""
        return cls("restore", fact_id)

    @property
    def verb(self) -> str:
        """``ADD``, ``UPDATE``, ``SUPERSEDE``, ``DELETE`` or ``RESTORE``."""
        return VERBS[self.kind]


@dataclass(frozen=True, slots=True)
class Plan:
    """The exact lines a write will append, and what it expects and leaves.

    Attributes
    ----------
    path
        The knowledge.jsonl written.
    label
        What the write does, for people: ``"UPDATE of d594f563…"``.
    records
        The records appended, in order, already redacted.
    expect
        ``(id, last record)`` of every fact touched, as it must be when the write
        happens (None: the id must not exist yet).
    result
        ``(id, last record)`` of every fact touched after the write.
    ids
        The ids written: the new facts' first (``ADD``, ``SUPERSEDE``), then the
        facts acted on.
    new_ids
        The ids this write creates.
    """

    path: str
    label: str
    records: tuple[Record, ...]
    expect: tuple[tuple[str, Record | None], ...]
    result: tuple[tuple[str, Record], ...]
    ids: tuple[str, ...]
    new_ids: tuple[str, ...] = ()
    ops: tuple[FactOp, ...] = field(default=())

    @property
    def lines(self) -> tuple[str, ...]:
        """The lines appended, without newlines (what the user confirms)."""
        return tuple(jsonio.dumps_line(r).decode("utf-8").rstrip("\n") for r in self.records)

    @property
    def payload(self) -> bytes:
        """The bytes appended (when the file ends with a newline)."""
        return b"".join(jsonio.dumps_line(r) for r in self.records)

    @property
    def summary(self) -> str:
        """One line: how many lines, where, what for."""
        n = len(self.records)
        return f"append {n} fact line{'s' if n != 1 else ''} to {self.path}: {self.label}"

    @property
    def write(self) -> PlannedWrite:
        """The write to show the user before it happens."""
        return PlannedWrite(self.path, "append", self.summary, self.lines)

    @property
    def id(self) -> str:
        """The id written (the new fact's for ``ADD`` and ``SUPERSEDE``)."""
        return self.ids[0]


@dataclass(frozen=True, slots=True)
class Applied:
    """A plan that was appended, and where its lines landed."""

    plan: Plan
    offset: int
    """Byte offset of the first byte written (a newline ending a partial line included)."""
    length: int
    lines: tuple[LogLine, ...]
    """The lines written: line number, byte offset and record."""

    def to_json(self) -> dict[str, Any]:
        """For ``--json`` output and the activity log."""
        return {
            "path": self.plan.path,
            "operation": self.plan.label,
            "id": self.plan.id,
            "ids": list(self.plan.ids),
            "new_ids": list(self.plan.new_ids),
            "offset": self.offset,
            "length": self.length,
            "lines": [
                {
                    "line": ln.line,
                    "offset": ln.offset,
                    "id": str(ln.record.get("id")),
                    "record": ln.record,
                }
                for ln in self.lines
            ],
        }


class _Recorder(DryRunLog):
    """A dry-run copy of a log that keeps the records its writes would append."""

    written: list[Record]

    @override
    def _append(self, records: list[Record]) -> AppendResult:
        self.written.extend(records)
        return super()._append(records)


def _ids(log: KnowledgeLog) -> Iterator[str]:
    while True:
        yield log.new_id()


def plan_fact_ops(
    log: KnowledgeLog,
    ops: FactOp | Sequence[FactOp],
    *,
    at: int | None = None,
    label: str | None = None,
) -> Plan:
    """Plan *ops* (one append for all of them) against *log*, writing nothing.

    Parameters
    ----------
    log
        The log as memlens holds it (only read).
    ops
        One operation, or a batch (a bulk action: one write, one undo).
    at
        The timestamp of the new lines; None asks the log's clock.
    label
        What the write does, for people; None describes *ops*.

    Raises
    ------
    FactOpError
        When an operation cannot be made: an unknown id, a deleted fact to edit
        or supersede, a fact already deleted or already active, an unknown type,
        empty content, an edit that changes nothing.
    """
    batch = [ops] if isinstance(ops, FactOp) else list(ops)
    if not batch:
        raise FactOpError("no operation to plan")
    dry = cast("_Recorder", _Recorder.of(log))
    dry.written = []
    stamp = log.clock() if at is None else at
    dry.clock = lambda: stamp
    fresh = _ids(log)
    dry.new_id = lambda: next(fresh)
    made: list[str] = []
    acted: list[str] = []
    for op in batch:
        new = _run(dry, op)
        if new is not None:
            made.append(new)
        if op.fact_id is not None:
            acted.append(op.fact_id)
    records = tuple(dry.written)
    touched = list(dict.fromkeys(str(r["id"]) for r in records))
    expect = tuple((fid, log.last_record(fid) if fid in log.facts else None) for fid in touched)
    result = tuple((fid, dry.last_record(fid)) for fid in touched)
    ids = tuple(dict.fromkeys([*made, *acted]))
    return Plan(
        log.path,
        label or describe_fact_ops(batch, made),
        records,
        expect,
        result,
        ids,
        tuple(made),
        tuple(batch),
    )


def describe_fact_ops(ops: Sequence[FactOp], made: Sequence[str] = ()) -> str:
    """``"UPDATE of d594f563…"``, ``"DELETE of 3 facts"``, ``"SUPERSEDE of a… by b…"``."""
    verbs = list(dict.fromkeys(op.verb for op in ops))
    verb = verbs[0] if len(verbs) == 1 else "+".join(verbs)
    if len(ops) > 1:
        return f"{verb} of {len(ops)} facts"
    op = ops[0]
    if op.kind == "add":
        return f"ADD of {short(made[0])}" if made else "ADD"
    target = short(op.fact_id or "")
    if op.kind == "supersede" and made:
        return f"SUPERSEDE of {target} by {short(made[0])}"
    return f"{verb} of {target}"


def _run(dry: KnowledgeLog, op: FactOp) -> str | None:
    """Apply *op* to the dry-run log; the id of a new fact, if it made one."""
    if op.type is not None and op.type not in FACT_TYPES:
        raise FactOpError(f"unknown fact type {op.type!r}: use one of {', '.join(FACT_TYPES)}")
    if op.kind == "add":
        if op.type is None:
            raise FactOpError(f"a new fact needs a type: one of {', '.join(FACT_TYPES)}")
        content = (op.content or "").strip()
        if not content:
            raise FactOpError("a fact needs content")
        _no_duplicate(dry, content, None)
        return dry.add(op.type, content, _context(op.context), source=op.source).id
    fid = op.fact_id or ""
    fact = dry.facts.get(fid)
    if fact is None:
        raise FactOpError(f"no fact with id {fid!r} in {dry.path}")
    try:
        if op.kind == "edit":
            text = None if op.content is None else op.content.strip()
            if text == "":
                raise FactOpError("a fact needs content: use delete to remove a fact")
            before = dry.last_record(fid)
            dry.update(
                fid, content=text, context=_context(op.context), type=op.type, source=op.source
            )
            after = dry.last_record(fid)
            if _same(before, after):
                raise FactOpError(f"nothing to change in fact {short(fid)} ({dry.path})")
            return None
        if op.kind == "supersede":
            content = (op.content or "").strip()
            if not content:
                raise FactOpError("the new fact needs content")
            _no_duplicate(dry, content, None)
            source = op.source
            if source is None and fact.source is not None:
                source = {"by": "user"}  # the user's edit, with the old fact's evidence kept
            return dry.supersede(
                fid, content, type=op.type, context=_context(op.context), source=source
            ).id
        if op.kind == "delete":
            if fact.status == "deleted":
                raise FactOpError(f"fact {short(fid)} is already deleted ({dry.path})")
            dry.delete(fid)
            return None
        if fact.status == "active":
            raise FactOpError(f"fact {short(fid)} is active: nothing to restore ({dry.path})")
        dry.restore(fid)
        return None
    except FactDeletedError as exc:
        raise FactOpError(str(exc)) from None


def _context(context: str | None) -> str | None:
    return None if context is None else context.strip()


def _same(a: Record, b: Record) -> bool:
    ignore = ("timestamp",)
    return {k: v for k, v in a.items() if k not in ignore} == {
        k: v for k, v in b.items() if k not in ignore
    }


def _no_duplicate(log: KnowledgeLog, content: str, except_id: str | None) -> None:
    sealed = log.seal({"content": content})["content"]
    h = content_hash(sealed)
    for f in log.facts.values():
        if f.status == "active" and f.id != except_id and content_hash(f.content) == h:
            raise FactOpError(f"fact {short(f.id)} already says this ({log.path}, line {f.line})")


def inverse(log: KnowledgeLog, done: Plan, *, label: str | None = None) -> Plan:
    """The plan that undoes *done* (or, for an undo plan, redoes what it undid).

    Every fact *done* touched gets back the last record it had before *done*; a
    fact *done* created gets its record with ``_deleted``.

    Raises
    ------
    StaleError
        When a fact *done* touched has changed since (the agent or another
        memlens edited it): undoing would overwrite that change.
    """
    _check(log, done.result, "was changed after this edit; undoing it would overwrite that")
    after = dict(done.result)
    records: list[Record] = []
    # Last touched, first put back (and the inverse of the inverse is in the first order).
    for fid, before in reversed(done.expect):
        if before is None:
            records.append({**after[fid], "_deleted": True})
        else:
            records.append(dict(before))
    sealed = tuple(log.seal(r) for r in records)
    result = tuple((str(r["id"]), r) for r in sealed)
    return Plan(
        log.path,
        label or _undo_label(done.label),
        sealed,
        tuple(reversed(done.result)),
        result,
        done.ids,
        (),
        done.ops,
    )


def _undo_label(label: str) -> str:
    """``undo X`` for X; the inverse of ``undo X`` is ``redo X`` (and back)."""
    for a, b in (("undo ", "redo "), ("redo ", "undo ")):
        if label.startswith(a):
            return b + label[len(a) :]
    return "undo " + label


def _check(log: KnowledgeLog, expect: Sequence[tuple[str, Record | None]], why: str) -> None:
    for fid, want in expect:
        have = log.last_record(fid) if fid in log.facts else None
        if have != want:
            where = f", line {log.facts[fid].line}" if fid in log.facts else ""
            raise StaleError(f"fact {short(fid)} {why} ({log.path}{where})")


def apply_fact_plan(log: KnowledgeLog, planned: Plan) -> Applied:
    """Append the planned records in one write, if the facts are as planned.

    Reads what was appended since the log was read first, so the check sees the
    agent's latest lines.

    Raises
    ------
    StaleError
        When a touched fact changed since the plan, or the file shrank or
        vanished (nothing is written then).
    OSError
        When the file cannot be written (nothing was appended then).
    """
    try:
        catch_up(log)
    except KnowledgeFileChanged as exc:
        raise StaleError(str(exc)) from None
    _check(log, planned.expect, "changed since the edit was planned; look again and retry")
    result, lines = log.append_records(list(planned.records))
    return Applied(planned, result.offset, result.length, tuple(lines))
