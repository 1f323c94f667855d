"""Where a fact came from, and which facts came from a compaction's messages.

:class:`ProvenanceIndex` answers both directions over the loaded sessions:

* :meth:`ProvenanceIndex.of_fact`: a fact's :class:`Provenance`. ``recorded``
  when its line carries memlens's provenance record with entry ids
  (:mod:`core.knowledge.provenance_record`); ``inferred`` otherwise (an agent's
  fact): the messages :class:`~core.knowledge.sources.MessageIndex` scores best
  for its content, with their scores; ``none`` when nothing says enough of it.
  For every source message: the segment archived from it (the agent's dedup key),
  the compaction that summarised it (the first on its branch whose summary
  replaced it, :func:`core.transcript.replay.compactions`) and the lines of that
  summary that keep the fact (*keeps*, the loss audit's ``kept`` and
  ``normalised``; kept lines first).
* :meth:`ProvenanceIndex.from_compaction`: the facts whose source messages are
  among the messages a compaction summarised, ranked: facts a given summary line
  keeps first, then recorded provenance (score 1), then inferred (score at least
  *min_score*), best score first.

Matching a fact against a summary is the compaction package's business (a layer
above this one): the caller passes *keeps*, usually
:func:`core.compaction.extract.summary_lines_keeping`.

JSON (``memlens fact source --json`` prints :meth:`Provenance.to_json`)::

    {"fact": id, "kind": "recorded"|"inferred"|"none", "record": {...}|null,
     "messages": [{"session": id, "entry": id, "role": str, "score": float,
                   "recorded": bool, "path": str, "line": int, "segment": id|null,
                   "compaction": {"session": id, "entry": id, "index": int,
                                  "lines": [{"line": n, "text": str, "status": str}]}|null}],
     "segments": [id, ...], "missing": [entry id, ...]}

and ``memlens fact from --json`` ``{"session", "compaction", "line", "facts"}`` with
``facts`` a list of :meth:`FactLink.to_json`::

    {"fact": id, "type": str, "status": str, "content": str, "kind": str,
     "score": float, "entries": [entry id, ...], "line_status": str|null}
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from core.knowledge.provenance_record import segment_text
from core.knowledge.sources import MessageIndex
from core.safety.redact import maybe_redact
from core.store.segments import dedup_key, ids_by_dedup_key
from core.transcript.replay import CompactionInfo, compactions

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from core.store.knowledge import Fact
    from core.store.segments import Segment
    from core.transcript.model import Session

Kind = Literal["recorded", "inferred", "none"]
MIN_SCORE = 0.35
"""Inferred sources below this message score are not named (see :class:`MessageIndex`)."""


@dataclass(frozen=True, slots=True)
class SummaryLine:
    """A line of a compaction's summary that keeps a fact."""

    number: int
    """From 1, as ``str.splitlines`` counts."""
    text: str
    status: str
    """``kept`` or ``normalised``."""


@dataclass(frozen=True, slots=True)
class CompactionLink:
    """The compaction that summarised a source message."""

    session_id: str
    entry_id: str
    index: int
    """The entry's position (``#N``)."""
    lines: tuple[SummaryLine, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """See the module docstring."""
        return {
            "session": self.session_id,
            "entry": self.entry_id,
            "index": self.index,
            "lines": [{"line": s.number, "text": s.text, "status": s.status} for s in self.lines],
        }


@dataclass(frozen=True, slots=True)
class SourceMessage:
    """A message a fact came from (recorded) or most likely came from (inferred)."""

    session_id: str
    entry_id: str
    role: str
    score: float
    """1.0 for a recorded source; the message score for an inferred one."""
    recorded: bool
    path: str = ""
    line: int = 0
    text: str = ""
    """What the message says (shown to people; not in the JSON)."""
    segment_id: str | None = None
    compaction: CompactionLink | None = None

    def to_json(self) -> dict[str, Any]:
        """See the module docstring."""
        return {
            "session": self.session_id,
            "entry": self.entry_id,
            "role": self.role,
            "score": self.score,
            "recorded": self.recorded,
            "path": self.path,
            "line": self.line,
            "segment": self.segment_id,
            "compaction": self.compaction.to_json() if self.compaction else None,
        }


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where one fact came from."""

    fact_id: str
    kind: Kind
    record: dict[str, Any] | None = field(default=None, hash=False)
    """The fact's ``memlensSource`` record, as its last line has it."""
    messages: tuple[SourceMessage, ...] = ()
    segments: tuple[str, ...] = ()
    """Recorded segment ids, then those archived from the source messages."""
    missing: tuple[str, ...] = ()
    """Recorded entry ids not found in the loaded sessions."""

    def to_json(self) -> dict[str, Any]:
        """See the module docstring."""
        return {
            "fact": self.fact_id,
            "kind": self.kind,
            "record": self.record,
            "messages": [m.to_json() for m in self.messages],
            "segments": list(self.segments),
            "missing": list(self.missing),
        }


@dataclass(frozen=True, slots=True)
class FactLink:
    """A fact that came from the messages a compaction summarised."""

    fact: Fact
    kind: Kind
    score: float
    entries: tuple[str, ...]
    """The summarised entries it came from."""
    line_status: str | None = None
    """How the summary line asked about keeps it (``kept``, ``normalised``), if it does."""

    def to_json(self) -> dict[str, Any]:
        """See the module docstring."""
        return {
            "fact": self.fact.id,
            "type": self.fact.type,
            "status": self.fact.status,
            "content": self.fact.content,
            "kind": self.kind,
            "score": self.score,
            "entries": list(self.entries),
            "line_status": self.line_status,
        }


def _entry_ids(record: dict[str, Any] | None) -> list[str]:
    ids = record.get("entryIds") if record else None
    return [str(i) for i in ids] if isinstance(ids, list) else []


class ProvenanceIndex:
    """Provenance over *sessions* (indexes built on first use, thread-safe).

    Parameters
    ----------
    sessions
        The loaded transcripts (give copies of live ones: a job reads them).
    segments
        The archived segments (segments.jsonl), to name the segment of a message.
    keeps
        ``keeps(fact, summary)`` -> the summary lines keeping the fact; None: no lines.
    messages
        A message index over *sessions* to reuse (else one is built).
    """

    def __init__(
        self,
        sessions: Iterable[Session],
        *,
        segments: Iterable[Segment] = (),
        keeps: Callable[[str, str], list[tuple[int, str, str]]] | None = None,
        messages: MessageIndex | None = None,
    ) -> None:
        self.sessions = list(sessions)
        self._by_id: dict[str, Session] = {}
        for s in self.sessions:
            self._by_id.setdefault(s.id, s)
        self._segments = list(segments)
        self._segment_ids: dict[str, str] | None = None
        self.keeps = keeps
        self.messages = messages if messages is not None else MessageIndex(self.sessions)
        self._compactions: dict[str, list[CompactionInfo]] = {}
        self._summarised_by: dict[str, dict[str, CompactionInfo]] = {}
        self._lock = threading.Lock()

    # -- lookups ---------------------------------------------------------------------------
    def session(self, session_id: str) -> Session | None:
        """The session with this id (the first loaded, if several share it)."""
        return self._by_id.get(session_id)

    def compactions_of(self, session_id: str) -> list[CompactionInfo]:
        """The session's compactions and what each summarised (computed once)."""
        with self._lock:
            found = self._compactions.get(session_id)
            if found is None:
                s = self._by_id.get(session_id)
                found = compactions(s) if s is not None else []
                self._compactions[session_id] = found
                by: dict[str, CompactionInfo] = {}
                for info in found:
                    for item in info.replaced:
                        if item.entry.type != "compaction":
                            by.setdefault(item.entry.id, info)
                self._summarised_by[session_id] = by
            return found

    def summarised_by(self, session_id: str, entry_id: str) -> CompactionInfo | None:
        """The compaction whose summary replaced *entry_id* (the first, in file order)."""
        self.compactions_of(session_id)
        return self._summarised_by.get(session_id, {}).get(entry_id)

    def compaction(self, session_id: str, entry_id: str) -> CompactionInfo | None:
        """The compaction entry *entry_id* of the session, with what it summarised."""
        return next((c for c in self.compactions_of(session_id) if c.entry.id == entry_id), None)

    def segment_of(self, session_id: str, role: str, text: str) -> str | None:
        """The id of the segment archived from a message (by the agent's dedup key)."""
        with self._lock:
            if self._segment_ids is None:
                self._segment_ids = ids_by_dedup_key(self._segments)
        return self._segment_ids.get(dedup_key(session_id, role, maybe_redact(text, True)))

    def _link(self, info: CompactionInfo, session_id: str, content: str) -> CompactionLink:
        lines = self.keeps(content, info.summary) if self.keeps is not None else []
        lines.sort(key=lambda t: (t[2] != "kept", t[0]))  # kept ones first
        return CompactionLink(
            session_id,
            info.entry.id,
            info.entry.index,
            tuple(SummaryLine(n, text, status) for n, text, status in lines),
        )

    def _message(
        self, session_id: str, entry_id: str, content: str, score: float, recorded: bool
    ) -> SourceMessage | None:
        s = self._by_id.get(session_id)
        entry = s.by_id.get(entry_id) if s is not None else None
        if s is None or entry is None:
            return None
        msg = entry.message
        role = msg.role if msg is not None else entry.type
        text = (msg.text() or "") if msg is not None else ""
        archived = segment_text(msg) if msg is not None else None
        segment = self.segment_of(session_id, role, archived) if archived else None
        info = self.summarised_by(session_id, entry_id)
        link = self._link(info, session_id, content) if info is not None else None
        return SourceMessage(
            session_id, entry_id, role, score, recorded, s.path, entry.line, text, segment, link
        )

    # -- a fact's provenance -----------------------------------------------------------------
    def of_fact(self, fact: Fact, *, limit: int = 8) -> Provenance:
        """Where *fact* came from (see the module docstring); *limit* inferred messages."""
        record = fact.source
        ids = _entry_ids(record)
        session_id = str(record.get("sessionId") or "") if record else ""
        if ids and session_id:
            found = [self._message(session_id, e, fact.content, 1.0, True) for e in ids]
            messages = tuple(m for m in found if m is not None)
            missing = tuple(e for e, m in zip(ids, found, strict=True) if m is None)
            recorded_segments = record.get("segmentIds") if record else None
            segs = (
                [str(x) for x in recorded_segments] if isinstance(recorded_segments, list) else []
            )
            segs += [m.segment_id for m in messages if m.segment_id and m.segment_id not in segs]
            return Provenance(fact.id, "recorded", record, messages, tuple(segs), missing)
        hits = self.messages.search(fact.content, limit=limit, min_score=MIN_SCORE)
        inferred = [self._message(h.session_id, h.id, fact.content, h.score, False) for h in hits]
        messages = tuple(m for m in inferred if m is not None)
        archived = tuple(dict.fromkeys(m.segment_id for m in messages if m.segment_id))
        return Provenance(fact.id, "inferred" if messages else "none", record, messages, archived)

    # -- the facts of a compaction ---------------------------------------------------------
    def from_compaction(
        self,
        facts: Iterable[Fact],
        session_id: str,
        compaction_id: str,
        *,
        line: int | None = None,
        min_score: float = MIN_SCORE,
        limit: int = 50,
    ) -> list[FactLink]:
        """The facts whose sources are among the messages *compaction_id* summarised.

        Parameters
        ----------
        facts
            The knowledge log's facts (``log.facts.values()``; deleted ones are left out).
        session_id, compaction_id
            The session and its compaction entry.
        line
            A line of the summary (from 1): facts it keeps rank first, with their status.
        min_score
            Inferred facts below this message score are left out.
        limit
            At most this many facts.

        Raises
        ------
        KeyError
            When the session has no such compaction entry.
        """
        info = self.compaction(session_id, compaction_id)
        if info is None:
            raise KeyError(f"session {session_id} has no compaction {compaction_id!r}")
        summarised = [i.entry.id for i in info.replaced if i.entry.type != "compaction"]
        within = set(summarised)
        s = self._by_id[session_id]
        index = MessageIndex([s], only={(session_id, e) for e in summarised})
        lines = info.summary.splitlines()
        text = lines[line - 1] if line is not None and 0 < line <= len(lines) else None
        out: list[FactLink] = []
        for fact in facts:
            if fact.status == "deleted":
                continue
            record = fact.source
            ids = _entry_ids(record)
            same = record is not None and str(record.get("sessionId") or "") == session_id
            hit = [e for e in ids if e in within] if same else []
            if (
                same
                and not hit
                and record is not None
                and record.get("compaction") == compaction_id
            ):
                hit = ids
            if hit:
                link = FactLink(fact, "recorded", 1.0, tuple(hit))
            elif ids and record is not None and record.get("sessionId"):
                continue  # recorded elsewhere: not this compaction's
            else:
                found = index.search(fact.content, limit=3, min_score=min_score)
                if not found:
                    continue
                link = FactLink(fact, "inferred", found[0].score, tuple(h.id for h in found))
            if text is not None and self.keeps is not None:
                kept = self.keeps(fact.content, text)
                if kept:
                    link = FactLink(link.fact, link.kind, link.score, link.entries, kept[0][2])
            out.append(link)
        rank = {"kept": 2, "normalised": 1}
        out.sort(
            key=lambda k: (
                -rank.get(k.line_status or "", 0),
                k.kind != "recorded",
                -k.score,
                k.fact.status != "active",
                k.fact.id,
            )
        )
        return out[:limit]
