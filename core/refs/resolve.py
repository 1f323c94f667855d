"""What a :class:`~core.refs.reference.Reference` names in a loaded data set.

:func:`resolve` finds the session, entry, fact or segment (reading a database session
not read yet) and raises :class:`MissingTarget`, naming what is missing and where,
when it is not there; :func:`reference_to` builds the reference of a place.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.io.text import one_line
from core.refs.reference import Reference

if TYPE_CHECKING:
    from core.dataset.load import DataSet
    from core.transcript.model import Session

PREVIEW_CHARS = 200


class MissingTarget(LookupError):
    """The reference is well formed but its session, entry, fact or segment is not there."""


@dataclass(frozen=True, slots=True)
class Place:
    """A resolved reference: where it is and what it shows."""

    reference: Reference
    session_path: str | None = None
    session_id: str | None = None
    entry_id: str | None = None
    entry_index: int | None = None
    fact_id: str | None = None
    segment_id: str | None = None
    title: str = ""
    """One line: what kind of thing, its id, where."""
    preview: str = ""
    """The start of its text ("" for a session or the place alone)."""

    def to_json(self) -> dict[str, Any]:
        """The place as ``memlens open --json`` prints it."""
        return {
            "reference": str(self.reference),
            "kind": self.reference.kind,
            "path": self.reference.path,
            "session": self.session_id,
            "session_path": self.session_path,
            "entry": self.entry_id,
            "entry_index": self.entry_index,
            "fact": self.fact_id,
            "segment": self.segment_id,
            "title": self.title,
            "preview": self.preview,
        }


def same_path(a: str, b: str) -> bool:
    """Whether two spellings of a path name the same place (``~``, ``..``, a trailing ``/``)."""
    return _norm(a) == _norm(b)


def _norm(path: str) -> str:
    return os.path.normcase(os.path.realpath(os.path.expanduser(path)))


def _preview(text: str) -> str:
    return one_line(text, PREVIEW_CHARS)


def resolve(data: DataSet, ref: Reference) -> Place:
    """Check that *ref*'s targets exist in *data* (loaded from ``ref.path``).

    Raises
    ------
    MissingTarget
        Naming the session, entry, fact or segment that is not there, and the path.
    """
    where = str(data.discovery.path)
    session = _session(data, ref.session, where) if ref.session else None
    if ref.entry:
        assert session is not None  # a reference's entry always has a session
        try:
            entry = session.entry(ref.entry)
        except KeyError as exc:
            raise MissingTarget(f"entry {ref.entry!r} is not in session {session.id}: "
                                f"{exc.args[0]}") from None  # fmt: skip
        message = entry.message
        role = message.role if message is not None else entry.type
        return Place(
            ref,
            session.path,
            session.id,
            entry.id,
            entry.index,
            title=f"entry #{entry.index} ({role}) {entry.id} of session {session.id}",
            preview=_preview(message.text() if message is not None else ""),
        )
    if ref.fact:
        return _fact(data, ref, session, where)
    if ref.segment:
        return _segment(data, ref, session, where)
    if session is not None:
        return Place(ref, session.path, session.id,
                     title=f"session {session.id} ({session.path})")  # fmt: skip
    return Place(ref, title=f"{data.discovery.kind} {where}")


def _session(data: DataSet, key: str, where: str) -> Session:
    try:
        return data.session(key)
    except KeyError as exc:
        raise MissingTarget(f"session {key!r} is not in {where}: {exc.args[0]}") from None


def _fact(data: DataSet, ref: Reference, session: Session | None, where: str) -> Place:
    log = data.knowledge
    if log is None:
        raise MissingTarget(f"fact {ref.fact!r} is not in {where} (no knowledge log)")
    try:
        fact = log.facts[log.resolve(ref.fact or "")]  # a whole id or a unique prefix
    except KeyError as exc:
        raise MissingTarget(f"fact {ref.fact!r} is not in {where}: {exc.args[0]}") from None
    return Place(
        ref,
        session.path if session else None,
        session.id if session else None,
        fact_id=fact.id,
        title=f"fact {fact.id} ({fact.type}, {fact.status})",
        preview=_preview(fact.content),
    )


def _segment(data: DataSet, ref: Reference, session: Session | None, where: str) -> Place:
    load = data.segments
    wanted = ref.segment or ""
    found = None
    if load is not None:
        exact = [s for s in load.segments if s.id == wanted]
        hits = exact or [s for s in load.segments if s.id.startswith(wanted)]
        found = hits[0] if len(hits) == 1 else None  # a whole id or a unique prefix
    if found is None:
        held = f"the warm set of {load.path}" if load is not None else "no memory-context store"
        raise MissingTarget(f"segment {ref.segment!r} is not in {where} ({held})")
    return Place(
        ref,
        session.path if session else None,
        session.id if session else found.session_id,
        segment_id=found.id,
        title=f"segment {found.id} ({found.role}) of session {found.session_id}",
        preview=_preview(found.content),
    )


def session_key(data: DataSet, session_path: str) -> str:
    """How a reference names the session at *session_path*: its id when unique, else its path."""
    ids = [s.id for s in data.summaries if s.path == session_path]
    sid = ids[0] if ids else ""
    if sid and sum(1 for s in data.summaries if s.id == sid) == 1:
        return sid
    return session_path


def reference_to(
    path: str,
    data: DataSet | None = None,
    session_path: str | None = None,
    **target: str | None,
) -> Reference:
    """The reference of a place in *data* opened from *path* (``entry=``, ``fact=``...)."""
    session = None
    if session_path is not None:
        session = session_key(data, session_path) if data is not None else session_path
    return Reference(os.path.abspath(path), session, **target)
