"""``knowledge.jsonl``: the append-only fact log of memory-context.

Replay: a line needs ``id``, ``type`` and ``content``; later lines for an id
replace earlier ones; ``_deleted: true`` removes the id (memlens still shows it,
as *deleted*). Every edit memlens makes is one appended line (two for a
supersession), so the agent and memlens never overwrite each other.

Provenance: a line memlens writes may carry :data:`SOURCE_KEY` (``memlensSource``),
an object saying where the fact came from (``by``: ``extraction`` or ``user``;
``sessionId``, ``entryIds``, ``segmentIds``, ``run``, ``compaction``,
``supersedes``; ids only, never message text; see
:mod:`core.knowledge.provenance_record`). The key is memlens's own (the agent
writes no key of that name); every key of a line is kept in its history and
carried by edits, so an agent's line without it and a memlens line with it read
the same way. A ``memlensSource`` that is not an object is noted (``info``) and
ignored, the line still read.
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from core.io import jsonio
from core.io.fsutil import AppendResult, append_lines
from core.io.jsstr import js_trim, js_utf8
from core.io.problems import Problem
from core.io.text import cut
from core.io.timefmt import is_date_ms
from core.safety.redact import maybe_redact

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

FACT_TYPES = ("decision", "implementation", "config", "issue", "task_state", "architecture")
Status = Literal["active", "superseded", "deleted"]
SOURCE_KEY = "memlensSource"
"""The key of a fact line's provenance record (memlens's own; the agent never writes it)."""
EVIDENCE_KEYS = ("sessionId", "entryIds", "segmentIds", "run", "compaction", "extractor")
"""Provenance fields naming the conversation a fact came from (a supersession keeps them)."""


def content_hash(content: str) -> str:
    """The agent's content dedup hash: 16 hex of sha256(trim(lower(content))).

    ``trim`` is JavaScript's (it strips U+FEFF, not U+0085 or U+001C-U+001F as
    Python's ``strip`` does) and the bytes hashed are Node's UTF-8.
    """
    return hashlib.sha256(js_utf8(js_trim(content).lower())).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class LogLine:
    """One line of the log, as written."""

    line: int
    offset: int
    record: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Fact:
    """A fact after replay (the state its last line gives it)."""

    id: str
    type: str
    content: str
    timestamp: int
    status: Status
    line: int
    context: str | None = None
    superseded_by: str | None = None
    source: dict[str, Any] | None = field(default=None, hash=False)
    """The line's :data:`SOURCE_KEY` record, if memlens wrote one."""

    def to_json(self) -> dict[str, Any]:
        """The fact as a knowledge.jsonl object (without ``_deleted``)."""
        out: dict[str, Any] = {"id": self.id, "type": self.type, "content": self.content}
        if self.context:  # an empty context is no context
            out["context"] = self.context
        out["timestamp"] = self.timestamp
        if self.superseded_by is not None:
            out["supersededBy"] = self.superseded_by
        if self.source is not None:
            out[SOURCE_KEY] = self.source
        return out


@dataclass(slots=True)
class KnowledgeLog:
    """The replayed log, with every line kept as history.

    Use :func:`load_knowledge` to read one and the ``add``/``update``/
    ``supersede``/``delete``/``restore`` methods to append to it.
    """

    path: str
    facts: dict[str, Fact] = field(default_factory=dict)
    history: dict[str, list[LogLine]] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    size: int = 0
    lines: int = 0
    redaction: bool = True
    clock: Callable[[], int] = field(default=lambda: int(time.time() * 1000))
    new_id: Callable[[], str] = field(default=lambda: str(uuid.uuid4()))
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Provenance for the facts written inside :meth:`sourced`, by content hash."""

    # -- reading ---------------------------------------------------------
    def replay(self, data: bytes, *, first_line: int = 1, base_offset: int = 0) -> None:
        """Apply log lines (the whole file, or an appended tail) in order."""
        with jsonio.gc_paused():
            read = jsonio.read_jsonl(
                data, self.path, first_line=first_line, base_offset=base_offset
            )
            self.apply_read(read, first_line=first_line, base_offset=base_offset)

    def apply_read(
        self, read: jsonio.JsonlRead, *, first_line: int = 1, base_offset: int = 0
    ) -> None:
        """Apply what :func:`core.io.jsonio.read_jsonl` (or ``read_jsonl_file``) read."""
        self.problems.extend(read.problems)
        for rec in read.objects:
            self._apply(rec.value, rec.line, rec.offset)
        self.size = base_offset + read.size
        self.lines = first_line - 1 + read.newlines

    def _apply(self, obj: Any, line: int, offset: int) -> None:
        if not isinstance(obj, dict):
            self.problems.append(Problem(self.path, line, "fact skipped: not a JSON object"))
            return
        fid, ftype, content = obj.get("id"), obj.get("type"), obj.get("content")
        if not fid or not ftype or not content:
            self.problems.append(
                Problem(self.path, line, "fact skipped: it needs id, type and content")
            )
            return
        fid, ftype, content = str(fid), str(ftype), str(content)
        if ftype not in FACT_TYPES:
            self.problems.append(
                Problem(self.path, line, f"unknown fact type {ftype!r} kept", "info")
            )
        self.history.setdefault(fid, []).append(LogLine(line, offset, obj))
        ts = obj.get("timestamp")
        if ts is not None and not is_date_ms(ts):
            self.problems.append(
                Problem(
                    self.path,
                    line,
                    f"fact {fid[:36]!r}: timestamp {_short(ts)} is not a time in "
                    "epoch milliseconds; read as now",
                    "warning",
                )
            )
            ts = None
        context = obj.get("context")
        source = obj.get(SOURCE_KEY)
        if source is not None and not isinstance(source, dict):
            self.problems.append(
                Problem(
                    self.path,
                    line,
                    f"fact {fid[:36]!r}: {SOURCE_KEY} is not an object; ignored (the line is kept)",
                    "info",
                )
            )
            source = None
        superseded = obj.get("supersededBy")
        deleted = bool(obj.get("_deleted"))
        status: Status = "deleted" if deleted else "superseded" if superseded else "active"
        self.facts[fid] = Fact(
            id=fid,
            type=ftype,
            content=content,
            timestamp=int(ts)
            if isinstance(ts, (int, float)) and not isinstance(ts, bool)
            else self.clock(),
            status=status,
            line=line,
            context=str(context) if context is not None else None,
            superseded_by=str(superseded) if superseded else None,
            source=source,
        )

    def by_status(self, status: Status) -> list[Fact]:
        """Facts with *status*, newest first."""
        found = [f for f in self.facts.values() if f.status == status]
        return sorted(found, key=lambda f: f.timestamp, reverse=True)

    def counts(self) -> dict[str, int]:
        """How many facts are active, superseded and deleted."""
        out = {"active": 0, "superseded": 0, "deleted": 0}
        for f in self.facts.values():
            out[f.status] += 1
        return out

    def find_by_content(self, content: str) -> Fact | None:
        """The live fact whose content hash equals *content*'s, if any."""
        h = content_hash(content)
        for f in self.facts.values():
            if f.status == "active" and content_hash(f.content) == h:
                return f
        return None

    def chain(self, fact_id: str) -> list[str]:
        """The supersession chain through *fact_id*, oldest first."""
        back = {f.superseded_by: f.id for f in self.facts.values() if f.superseded_by}
        start = fact_id
        seen = {start}
        while start in back and back[start] not in seen:
            start = back[start]
            seen.add(start)
        chain = [start]
        while True:
            nxt = self.facts.get(chain[-1])
            if nxt is None or not nxt.superseded_by or nxt.superseded_by in chain:
                return chain
            chain.append(nxt.superseded_by)

    def chain_around(self, fact_id: str) -> tuple[list[str], list[str]]:
        """The supersession chain split at *fact_id*: (older, newer), each oldest first.

        ``older`` are the facts *fact_id* (directly or not) superseded; ``newer``
        the ones that superseded it. Both are empty for a fact outside any chain.
        """
        chain = self.chain(fact_id)
        if fact_id not in chain:
            return [], []
        at = chain.index(fact_id)
        return chain[:at], chain[at + 1 :]

    def resolve(self, ref: str) -> str:
        """The id of the fact *ref* names: a whole id or a unique prefix of one.

        Raises
        ------
        KeyError
            When no fact id starts with *ref*, or several do.
        """
        if ref in self.facts:
            return ref
        found = [fid for fid in self.facts if ref and fid.startswith(ref)]
        if len(found) == 1:
            return found[0]
        if not found:
            raise KeyError(f"{self.path}: no fact with id {ref!r}")
        shown = ", ".join(sorted(found)[:3]) + (", ..." if len(found) > 3 else "")
        raise KeyError(f"{self.path}: {len(found)} facts have ids starting with {ref!r} ({shown})")

    # -- writing (append only) --------------------------------------------
    def _get(self, fact_id: str) -> Fact:
        fact = self.facts.get(fact_id)
        if fact is None:
            raise KeyError(f"no fact with id {fact_id!r} in {self.path}")
        return fact

    def _live(self, fact_id: str, action: str) -> Fact:
        fact = self._get(fact_id)
        if fact.status == "deleted":
            raise FactDeletedError(
                f"fact {fact_id!r} is deleted: restore it before you {action} it ({self.path})"
            )
        return fact

    def last_record(self, fact_id: str) -> dict[str, Any]:
        """A copy of the fact's last log line, every field the writer put there.

        Edits start from it, so fields memlens does not know (the agent's
        ``sessionKey``, ``source``, ``confidence``...) survive them.
        """
        fact = self._get(fact_id)
        lines = self.history.get(fact_id)
        return dict(lines[-1].record) if lines else fact.to_json()

    def _append(self, records: list[dict[str, Any]]) -> AppendResult:
        payload = b"".join(jsonio.dumps_line(r) for r in records)
        result = append_lines(self.path, payload)
        # Lines the agent appended since the log was read come first, so the log
        # stays whole (every byte before ``size`` replayed) and in file order.
        self._catch_up_to(result.offset)
        # The payload may have been preceded by a newline that ends a partial line.
        start = result.offset + (result.length - len(payload))
        first_line = self.lines + 1 + (1 if result.length != len(payload) else 0)
        self.replay(payload, first_line=first_line, base_offset=start)
        return result

    def _catch_up_to(self, end: int) -> None:
        """Replay the lines between what was read (``size``) and byte *end*."""
        start = self.size
        if end <= start:
            return
        try:
            with open(self.path, "rb") as fh:
                if start > 0:
                    fh.seek(start - 1)
                    if fh.read(1) != b"\n":  # the last read ended inside a line
                        back = max(0, start - 65536)
                        fh.seek(back)
                        start = back + fh.read(start - back).rfind(b"\n") + 1
                fh.seek(start)
                data = fh.read(end - start)
        except OSError:
            return
        first_line = self.lines + 1
        if start < self.size and any(
            ln.offset == start for lines in self.history.values() for ln in lines
        ):
            # That line was whole JSON when read, and replayed then.
            nl = data.find(b"\n")
            if nl < 0:
                return
            data, start, first_line = data[nl + 1 :], start + nl + 1, first_line + 1
        if data:
            self.replay(data, first_line=first_line, base_offset=start)

    def _clean(self, text: str | None) -> str | None:
        return None if text is None else maybe_redact(text, self.redaction)

    def seal(self, record: dict[str, Any]) -> dict[str, Any]:
        """A copy of *record* as memlens writes it: ``content`` and ``context`` redacted.

        Every line memlens appends goes through here, including fields copied
        from the agent's own last line (an edit of the type alone must not write
        a secret the agent left in the content). Redaction is idempotent, so
        sealing a sealed record changes nothing.
        """
        out = dict(record)
        for key in ("content", "context"):
            value = out.get(key)
            if isinstance(value, str):
                out[key] = maybe_redact(value, self.redaction)
        return out

    def append_records(self, records: list[dict[str, Any]]) -> tuple[AppendResult, list[LogLine]]:
        """Append whole records (sealed, see :meth:`seal`) in one write.

        The lower-level door for writers that planned their exact lines
        (:mod:`core.knowledge.ops`); the records need ``id``, ``type`` and ``content``.

        Returns
        -------
        tuple of AppendResult and list of LogLine
            Where the write landed, and the lines written as replayed (line
            number, byte offset, record), in file order.

        Raises
        ------
        ValueError
            When a record lacks ``id``, ``type`` or ``content``.
        OSError
            When the file cannot be written (nothing was appended then).
        """
        if not records:
            raise ValueError("nothing to append")
        for rec in records:
            if not rec.get("id") or not rec.get("type") or not rec.get("content"):
                raise ValueError(f"a fact line needs id, type and content ({self.path})")
        sealed = [self.seal(r) for r in records]
        result = self._append(sealed)
        ids = {str(r["id"]) for r in sealed}
        lines = sorted(
            (ln for fid in ids for ln in self.history.get(fid, ()) if ln.offset >= result.offset),
            key=lambda ln: ln.offset,
        )
        return result, lines

    @contextmanager
    def sourced(self, by_content: Mapping[str, dict[str, Any]]) -> Iterator[None]:
        """Give the facts written inside the block their provenance, found by content.

        *by_content* maps :func:`content_hash` of a fact's (redacted) content to
        its :data:`SOURCE_KEY` record (as
        :func:`core.knowledge.provenance_record.extraction_sources` makes them):
        a writer that only knows type, content and context (the updater's
        ``apply_operations``) then writes the provenance along. A method given
        ``source=`` explicitly uses that instead.
        """
        saved = self.sources
        self.sources = {**saved, **by_content}
        try:
            yield
        finally:
            self.sources = saved

    def _source(self, content: str, given: dict[str, Any] | None) -> dict[str, Any] | None:
        if given is not None:
            return dict(given)
        found = self.sources.get(content_hash(content)) if self.sources else None
        return dict(found) if found is not None else None

    def add(
        self,
        type: str,
        content: str,
        context: str | None = None,
        *,
        source: dict[str, Any] | None = None,
    ) -> Fact:
        """Append a new fact (redacted) and return it; *source* is its provenance record."""
        _check_type(type)
        if not content.strip():
            raise ValueError("a fact needs content")
        clean = self._clean(content) or ""
        record = Fact(
            id=self.new_id(),
            type=type,
            content=clean,
            timestamp=self.clock(),
            status="active",
            line=0,
            context=self._clean(context),
            source=self._source(clean, source),
        ).to_json()
        self._append([record])
        return self.facts[record["id"]]

    def update(
        self,
        fact_id: str,
        *,
        content: str | None = None,
        context: str | None = None,
        type: str | None = None,
        source: dict[str, Any] | None = None,
    ) -> Fact:
        """Append a new version of a fact (same id), keeping its other fields.

        Its provenance (:data:`SOURCE_KEY`) is kept too, unless *source* (or a
        :meth:`sourced` record for the new content) replaces it: an extraction's
        ``UPDATE`` says the new content came from the new conversation.

        Raises
        ------
        KeyError
            When there is no such fact.
        FactDeletedError
            When the fact is deleted (an edit must not undelete it: see :meth:`restore`).
        """
        self._live(fact_id, "update")
        if type is not None:
            _check_type(type)
        record = self.last_record(fact_id)
        if content is not None:
            record["content"] = self._clean(content)
        if context is not None:
            record["context"] = self._clean(context)
        if type is not None:
            record["type"] = type
        new_source = self._source(str(record["content"]), source) if content is not None else source
        if new_source is not None:
            record[SOURCE_KEY] = new_source
        record["timestamp"] = self.clock()
        self._append([self.seal(record)])
        return self.facts[fact_id]

    def supersede(
        self,
        old_id: str,
        content: str,
        *,
        type: str | None = None,
        context: str | None = None,
        source: dict[str, Any] | None = None,
    ) -> Fact:
        """Append a new fact and mark *old_id* as superseded by it (one write).

        With a provenance record (*source*, or a :meth:`sourced` one for the
        content) the new fact's says ``supersedes: old_id`` and keeps the old
        fact's evidence (:data:`EVIDENCE_KEYS`) that the record does not give
        itself; without one, a record is still made when the old fact has one
        (its evidence and ``supersedes``), and none otherwise (an agent-style line).

        Raises
        ------
        KeyError
            When there is no such fact.
        FactDeletedError
            When *old_id* is deleted.
        """
        old = self._live(old_id, "supersede")
        new_type = type or old.type
        _check_type(new_type)
        clean = self._clean(content) or ""
        new_source = self._source(clean, source)
        if new_source is None and old.source is not None:
            new_source = {}  # the old fact's provenance is carried to its successor
        if new_source is not None:
            for key in EVIDENCE_KEYS:
                if key not in new_source and old.source is not None and key in old.source:
                    new_source[key] = old.source[key]
            new_source["supersedes"] = old_id
        new = Fact(
            id=self.new_id(),
            type=new_type,
            content=clean,
            timestamp=self.clock(),
            status="active",
            line=0,
            context=self._clean(context) if context is not None else old.context,
            source=new_source,
        ).to_json()
        marked = self.last_record(old_id)
        marked["supersededBy"] = new["id"]
        self._append([new, self.seal(marked)])
        return self.facts[new["id"]]

    def delete(self, fact_id: str) -> Fact:
        """Append a ``_deleted`` line for a fact (its last line, marked)."""
        record = self.last_record(fact_id)
        record["_deleted"] = True
        self._append([self.seal(record)])
        return self.facts[fact_id]

    def restore(self, fact_id: str) -> Fact:
        """Make a fact active again: its last line without ``_deleted`` and ``supersededBy``."""
        record = self.last_record(fact_id)
        record.pop("_deleted", None)
        record.pop("supersededBy", None)
        self._append([self.seal(record)])
        return self.facts[fact_id]


class FactDeletedError(ValueError):
    """An edit of a deleted fact (restore it first)."""


def _short(value: Any, width: int = 30) -> str:
    return cut(repr(value), width)


def _check_type(fact_type: str) -> None:
    if fact_type not in FACT_TYPES:
        raise ValueError(f"fact type must be one of {', '.join(FACT_TYPES)}, not {fact_type!r}")


def load_knowledge(path: str | os.PathLike[str], *, redaction: bool = True) -> KnowledgeLog:
    """Read and replay knowledge.jsonl (a missing file is an empty log).

    Raises
    ------
    FormatError
        When the file exists but cannot be read.
    """
    name = os.fspath(path)
    log = KnowledgeLog(name, redaction=redaction)
    with jsonio.gc_paused():
        try:
            read = jsonio.read_jsonl_file(name)
        except FileNotFoundError:
            return log
        log.apply_read(read)
    return log
