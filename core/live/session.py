"""Extend a loaded :class:`Session` with lines appended to its transcript.

:func:`prepare_append` takes only the new lines' objects and applies the rules of
:mod:`core.transcript.loader` to each object (ids given to v1 and damaged
entries, duplicate ids, parent references, message checks, unknown types, a v1
compaction's ``firstKeptEntryIndex``), so a session loaded in pieces equals the
session loaded whole. It also says which new entries are compactions and which are
memory flushes, for the app to announce. It only reads the session (live mode runs
it in a worker); :func:`attach_append` adds the prepared entries, problems and tree
nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, cast

from core.io.jsonio import JsonlObject, read_jsonl
from core.io.problems import Problem
from core.live.announce import Announcement, announcements
from core.live.draft import SessionDraft, TreeDelta, fork_tree, tree_delta
from core.transcript.loader import KNOWN_TYPES, OPENCLAW_TYPES, _stable_id, message_problems
from core.transcript.model import Entry

if TYPE_CHECKING:
    from collections.abc import Iterable

    from core.transcript.model import Session
    from core.transcript.openclaw_tree import OpenClawTree

__all__ = ["Announcement", "SessionAppend", "SessionCursor", "SessionDraft"]


@dataclass(slots=True)
class SessionCursor:
    """Where a session's parse stopped: what the next appended object needs."""

    session: Session
    next_index: int
    """Object index of the next object (the header is 0)."""
    known_end: int = -1
    """Lines starting at or before this offset are already in the session."""
    _positions: dict[int, str] | None = field(default=None, repr=False)
    _recovered: int = field(default=0, repr=False)

    def _build(self, pending: Iterable[Entry]) -> dict[int, str]:
        # pi's position: its parse drops the lines of objects run together
        out: dict[int, str] = {}
        dropped = 0
        for e in chain(self.session.entries, pending):
            if e.recovered:
                dropped += 1
            else:
                out[e.index - dropped] = e.id
        self._positions, self._recovered = out, dropped
        return out

    def position_id(self, index: int, pending: Iterable[Entry] = ()) -> str | None:
        """The id of the entry at pi's position *index* (v1 ``firstKeptEntryIndex``).

        *pending* are the entries prepared after the session's and not attached yet.
        """
        positions = self._positions if self._positions is not None else self._build(pending)
        return positions.get(index)

    def note(self, entry: Entry) -> None:
        """Record an appended entry's position (after :meth:`position_id` lookups)."""
        if self._positions is None:
            return  # built from the session's entries when first asked
        if entry.recovered:
            self._recovered += 1
        else:
            self._positions[entry.index - self._recovered] = entry.id


@dataclass(slots=True)
class SessionAppend:
    """What :func:`prepare_append` built for a session (attached by :func:`attach_append`)."""

    session_id: str
    path: str
    entries: list[Entry] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    announcements: list[Announcement] = field(default_factory=list)
    tree: TreeDelta | None = None
    """The nodes and state OpenClaw's tree (version 4) gained."""


def session_cursor(session: Session, *, trailing_objects: int = 0) -> SessionCursor:
    """A cursor after *session*'s last entry.

    Parameters
    ----------
    trailing_objects
        Objects the loader read after the last entry and skipped (not objects,
        or without a type): they took object indexes too.
    """
    last = session.last_entry
    next_index = (last.index + 1 if last is not None else 1) + trailing_objects
    known_end = last.offset if last is not None else -1
    return SessionCursor(session, next_index, known_end)


def objects_after_first_line(data: bytes, name: str) -> int:
    """How many JSON objects the complete lines of *data* after its first line hold."""
    cut = data.find(b"\n") + 1
    rest = data[cut : data.rfind(b"\n") + 1] if cut else b""
    return len(read_jsonl(rest, name).objects) if rest else 0


def cursor_from_file(session: Session, stop: int) -> SessionCursor:
    """A cursor for a session loaded from its file, whose first *stop* bytes were read.

    The skipped objects after the last entry are counted from the file (only
    the lines from that entry on are read).
    """
    last = session.last_entry
    start = last.offset if last is not None else 0
    try:
        with open(session.path, "rb") as fh:
            fh.seek(start)
            data = fh.read(max(stop - start, 0))
    except OSError:
        return session_cursor(session)
    return session_cursor(session, trailing_objects=objects_after_first_line(data, session.path))


def cursor_from_bytes(session: Session, data: bytes) -> SessionCursor:
    """A cursor for a session just parsed from *data* (complete lines from offset 0)."""
    last = session.last_entry
    start = last.offset if last is not None else 0
    trailing = objects_after_first_line(data[start:], session.path)
    return session_cursor(session, trailing_objects=trailing)


def prepare_append(
    cursor: SessionCursor,
    draft: SessionDraft,
    objects: list[JsonlObject],
    problems: list[Problem],
    *,
    flush_prompt: str | None = None,
) -> SessionAppend:
    """Build the entries of objects already read (JSONL lines, or database rows).

    The read phase of live mode (see :mod:`core.live.follow`): the session is only
    read; *draft* (of ``cursor.session``) takes the new entries, so that a later batch
    of the same read sees them; the cursor advances. :func:`attach_append` adds the
    result to the session. Objects at or before the cursor's ``known_end`` offset are
    skipped, and so are *problems* on their lines.

    Parameters
    ----------
    cursor
        From :func:`session_cursor` or :func:`cursor_from_file`; advanced here.
    draft
        What earlier batches of this read prepared for the session.
    flush_prompt
        The configured ``memoryFlush.prompt``, if any: a user message starting
        with it (or with OpenClaw's default prompt) is a memory flush.
    """
    session = cursor.session
    out = SessionAppend(session.id, session.path)
    base = draft.current_tree()
    fork = fork_tree(base) if base is not None else None
    if fork is not None:
        draft.tree = fork
    skipped_through = 0
    first = len(draft.entries)
    for rec in objects:
        if rec.offset <= cursor.known_end:
            skipped_through = rec.line  # parsed when the session was loaded
            continue
        index = cursor.next_index
        cursor.next_index += 1
        recovered = rec.recovered or not session.agent_readable
        entry = _entry(cursor, draft, fork, rec.value, rec.line, rec.offset, recovered, index, out)
        if entry is not None:
            draft.add(entry)
            cursor.note(entry)
    out.entries = draft.entries[first:]
    out.problems[:0] = [p for p in problems if p.line > skipped_through]
    out.tree = tree_delta(fork) if fork is not None else None
    out.announcements = announcements(
        session.id, session.path, draft.label(), out.entries, flush_prompt=flush_prompt
    )
    return out


def attach_append(session: Session, added: SessionAppend) -> None:
    """Add what :func:`prepare_append` built to *session* (the apply phase: no checks)."""
    for entry in added.entries:
        _add(session, entry)
    session.problems.extend(added.problems)
    if added.tree is not None and session.tree is not None:
        added.tree.attach(session.tree)


def _entry(
    cursor: SessionCursor,
    draft: SessionDraft,
    tree: OpenClawTree | None,
    obj: object,
    line: int,
    offset: int,
    recovered: bool,
    index: int,
    out: SessionAppend,
) -> Entry | None:
    """The loader's rules for one object (see ``core.transcript.loader._parse``)."""
    session = cursor.session
    name = session.path
    problems = out.problems
    if not isinstance(obj, dict):
        problems.append(Problem(name, line, "not a JSON object; skipped"))
        return None
    kind = obj.get("type")
    if not isinstance(kind, str):
        problems.append(Problem(name, line, "object without a 'type'; skipped"))
        return None
    if kind == "session":
        problems.append(Problem(name, line, "second session header ignored", "warning"))
        return None
    version = session.version
    synthetic = False
    prev = draft.leaf()
    if version >= 2 and isinstance(obj.get("id"), str) and obj["id"]:
        entry_id: str = obj["id"]
        parent = obj.get("parentId")
        parent_id = parent if isinstance(parent, str) else None
        if entry_id in draft:
            problems.append(Problem(name, line, f"duplicate entry id {entry_id!r}", "warning"))
        up = draft.get(parent_id) if parent_id else None
        if up is not None and up.recovered and not recovered:
            problems.append(
                Problem(
                    name,
                    line,
                    f"entry {entry_id} (line {line}): parentId {parent_id!r:.42} is on line "
                    f"{up.line}, which the agent cannot parse; its context restarts here",
                    "warning",
                )
            )
        elif parent_id and up is None:
            problems.append(
                Problem(
                    name,
                    line,
                    f"entry {entry_id} (line {line}): parentId {parent_id[:40]!r} is not in "
                    "the file; the context before it is unknown",
                    "warning",
                )
            )
    else:
        # The ids taken: the session's and the new ones (only membership is asked).
        entry_id = _stable_id(session.id, index, cast("set[str]", draft))
        parent_id = prev.id if prev is not None else None
        synthetic = True
        if version >= 2:
            problems.append(
                Problem(
                    name,
                    line,
                    f"{kind} entry without an id; given {entry_id} chained to the previous",
                    "warning",
                )
            )
    if tree is not None and not synthetic:
        in_tree, tree_parent = tree.feed(obj)
        parent_id = tree_parent if in_tree else None
    if kind not in KNOWN_TYPES and not (tree is not None and kind in OPENCLAW_TYPES):
        problems.append(Problem(name, line, f"unknown entry type {kind!r} kept raw", "info"))
    if kind == "compaction" and version < 2:
        pos = obj.get("firstKeptEntryIndex")
        if isinstance(pos, int):
            target = cursor.position_id(pos, draft.entries)
            if target is None:
                problems.append(
                    Problem(
                        name,
                        line,
                        f"compaction firstKeptEntryIndex {pos} names no entry",
                        "warning",
                    )
                )
            else:
                obj = {**obj, "firstKeptEntryId": target}
    if kind == "message":
        problems.extend(message_problems(obj, entry_id, line, name))
    ts = obj.get("timestamp")
    return Entry(
        index=index,
        line=line,
        offset=offset,
        type=kind,
        id=entry_id,
        parent_id=parent_id,
        timestamp=ts if isinstance(ts, str) else "",
        raw=obj,
        synthetic_id=synthetic,
        recovered=recovered,
    )


def _add(session: Session, entry: Entry) -> None:
    session.entries.append(entry)
    session.by_id[entry.id] = entry
    up = session.by_id.get(entry.parent_id) if entry.parent_id is not None else None
    parent = up.id if up is not None and (entry.recovered or not up.recovered) else None
    session.children.setdefault(parent, []).append(entry.id)


def replace_session(session: Session, fresh: Session) -> None:
    """Make *session* hold what *fresh* holds (a reload), keeping the object.

    Views and the inspector keep a reference to the session object: after a
    reset of its file they see the reloaded content without being told of a new object.
    """
    session.path = fresh.path
    session.header = fresh.header
    session.version = fresh.version
    session.entries = fresh.entries
    session.problems = fresh.problems
    session.size = fresh.size
    session.by_id = fresh.by_id
    session.children = fresh.children
    session.agent_readable = fresh.agent_readable
    session.db = fresh.db
    session.db_seq = fresh.db_seq
    session.tree = fresh.tree
    session.db_bytes = fresh.db_bytes
    session.db_rows = fresh.db_rows
    session.db_objects = fresh.db_objects
    session.db_generation = fresh.db_generation
    session.run_context_tokens = fresh.run_context_tokens
