"""Live mode on OpenClaw agent databases and ``sessions.json`` files.

The read half of each function runs where :meth:`core.live.follow.LiveFollower.read`
runs (a worker in the app): it queries the database or reads the file, decides
what changed from the loaded objects, which it only reads, builds new entries (with
their problems and announcements) and computes session summaries. What changes the loaded
objects is queued as a step on the :class:`core.live.changes.LiveRead`, run later by
:meth:`core.live.follow.LiveFollower.apply` on the thread that owns the data set.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.context.budget import flush_record
from core.dataset.load import summarize
from core.io.problems import FormatError, Problem
from core.io.timefmt import utc_minute_ms
from core.live.announce import Announcement
from core.live.session import SessionCursor, attach_append, prepare_append, replace_session
from core.openclaw.agentdb import SEP, AgentDb, DbSession
from core.openclaw.sessions_store import SessionStore, load_sessions_store

if TYPE_CHECKING:
    from pathlib import Path

    from core.dataset.load import SessionSummary
    from core.live.changes import Follower, LiveChanges, LiveRead
    from core.transcript.model import Session


@dataclass(slots=True)
class DbFollowState:
    """An OpenClaw agent database followed by polling ``max(seq)`` per session."""

    agent: str
    db: AgentDb
    cursors: dict[str, SessionCursor] = field(default_factory=dict)
    ignored: dict[str, int] = field(default_factory=dict)
    """Session ids that could not be read, with their ``max(seq)`` then: tried again
    when they grow."""
    failing: str | None = None
    """The last error reported (reported once until it changes)."""


@dataclass(slots=True)
class StoreFileState:
    """A ``sessions.json`` followed by its stat signature."""

    agent: str
    path: Path
    signature: tuple[int, int, int, int] | None
    failed: tuple[int, int, int, int] | None = None


def file_signature(path: Path) -> tuple[int, int, int, int] | None:
    """``(dev, inode, size, mtime_ns)`` of *path*, or None when it cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def open_database(agent: str, path: Path) -> DbFollowState | Problem:
    """Open an agent database to follow, or the problem that prevents it."""
    try:
        db = AgentDb(path, agent)
    except FormatError as exc:
        return Problem(exc.file, exc.line, f"live mode cannot follow it: {exc.detail}", "warning")
    return DbFollowState(agent, db)


def _problem_step(problem: Problem, out: LiveRead) -> None:
    out.then(lambda c: c.problems.append(problem))


def read_database(f: Follower, state: DbFollowState, out: LiveRead) -> None:
    """Query one database for growth; queue what to apply."""
    db = state.db
    try:
        db.refresh()  # a writer appeared (immutable -> ro) or left, or the file changed
        growth = db.growth()
    except FormatError as exc:
        if state.failing != exc.detail:
            state.failing = exc.detail
            _problem_step(Problem(exc.file, 0, exc.detail, "warning"), out)
        return
    state.failing = None
    mine = {s.id: s for s in list(f.data.sessions) if s.db == db.path}
    prefix = db.path + SEP
    pending = {s.id for s in list(f.data.pending.values()) if s.path.startswith(prefix)}
    changed: dict[str, Session] = {}  # id -> the session as the steps will leave it
    for sid, (top, rows, generation) in growth.items():
        session = mine.get(sid)
        if session is None:
            if sid not in pending and state.ignored.get(sid, -2) < top:
                _read_new(f, state, sid, top, out, changed)
            continue
        same_gen = generation == session.db_generation
        if same_gen and top == session.db_seq and rows == session.db_rows:
            continue  # nothing new
        # OpenClaw changes the generation on a destructive rewrite (and creates it,
        # None -> value, on an append too): the last row read tells which it was
        rewritten = (
            top < session.db_seq
            or (session.db_generation is not None and not same_gen)
            or not _same_last_row(state, session)
            or (top == session.db_seq and rows != session.db_rows)
        )
        if rewritten:
            _read_reload(f, state, session, out, changed)
        elif top > session.db_seq:
            _read_extend(f, state, session, top, rows, out, changed)
        _generation_step(session, generation, out)
    if changed:
        _read_listing(f, state, out, changed)


def _generation_step(session: Session, generation: str | None, out: LiveRead) -> None:
    def step(_c: LiveChanges) -> None:
        session.db_generation = generation

    out.then(step)


def _read_listing(
    f: Follower, state: DbFollowState, out: LiveRead, changed: dict[str, Session]
) -> None:
    db = state.db
    try:
        listed = db.sessions()
    except FormatError:
        return
    key = f"{state.agent} (sqlite)"
    store = db.store(listed)
    by_id = {r.session_id: r for r in listed}
    ready = {sid: _db_summary(state, s, by_id.get(sid)) for sid, s in changed.items()}

    def step(c: LiveChanges) -> None:
        f.data.stores[key] = store
        c.stores_changed.append(key)
        for session in f.data.sessions:
            summary = ready.get(session.id) if session.db == db.path else None
            if summary is not None and session.id in c.sessions_changed:
                f.put_summary(summary, c)

    out.then(step)


def _same_last_row(state: DbFollowState, session: Session) -> bool:
    """The row memlens read last is still there, unchanged (same id and size)."""
    try:
        found = state.db.row_identity(session.id, session.db_seq)
    except FormatError:
        return True  # a busy moment: the next poll looks again
    if found is None:
        return False
    event_id, size = found
    mine = next((e for e in reversed(session.entries) if e.line == session.db_seq), None)
    if event_id is not None and mine is not None and not mine.synthetic_id:
        if event_id != mine.id:
            return False
    known = session.db_bytes.get(session.db_seq)
    return size is None or known is None or size == known


def _read_extend(
    f: Follower,
    state: DbFollowState,
    session: Session,
    top: int,
    rows: int,
    out: LiveRead,
    changed: dict[str, Session],
) -> None:
    try:
        read = state.db.read_events(session.id, after_seq=session.db_seq)
    except FormatError as exc:
        _problem_step(Problem(exc.file, exc.line, exc.detail, "warning"), out)
        return
    # rows OpenClaw committed after the count are read too: compare up to the count
    counted = sum(1 for seq in read.seqs if seq <= top)
    if session.db_rows + counted != rows:  # rows before the old end changed too
        _read_reload(f, state, session, out, changed)
        return
    cursor = state.cursors.get(session.id)
    if cursor is None or cursor.session is not session:
        # the next index counts every object read, skipped ones too (as the loader)
        cursor = state.cursors[session.id] = SessionCursor(
            session, session.db_objects, session.db_seq
        )
    draft = f.draft(cursor)
    added = prepare_append(cursor, draft, read.objects, read.problems, flush_prompt=f.flush_prompt)
    db_seq = max(session.db_seq, read.max_seq)
    cursor.known_end = db_seq
    draft.fields.update(
        db_seq=db_seq,
        db_bytes={**session.db_bytes, **read.sizes},
        db_rows=session.db_rows + len(read.seqs),
        db_objects=session.db_objects + len(read.objects),
        size=session.size + read.size,
    )
    changed[session.id] = draft.shadow()

    def step(c: LiveChanges) -> None:
        attach_append(session, added)
        session.db_seq = max(session.db_seq, read.max_seq)
        session.db_bytes.update(read.sizes)
        session.db_rows += len(read.seqs)
        session.db_objects += len(read.objects)
        session.size += read.size
        c.lines += len(read.objects)
        c.problems.extend(added.problems)
        c._changed(session.id)
        if added.entries:
            c.entries.setdefault(session.id, []).extend(added.entries)
            f.announce(added.announcements, c, source="transcript")

    out.then(step)


def _read_reload(
    f: Follower, state: DbFollowState, session: Session, out: LiveRead, changed: dict[str, Session]
) -> None:
    try:
        fresh = state.db.load_session(session.id)
    except FormatError as exc:
        _problem_step(Problem(exc.file, exc.line, exc.detail, "warning"), out)
        return
    changed[session.id] = fresh

    def step(c: LiveChanges) -> None:
        f.forget_problems(session.path, c)
        replace_session(session, fresh)
        state.cursors.pop(session.id, None)
        c.resets.append(session.path)
        c.problems.extend(fresh.problems)
        c._changed(session.id)

    out.then(step)


def _read_new(
    f: Follower,
    state: DbFollowState,
    sid: str,
    top: int,
    out: LiveRead,
    changed: dict[str, Session],
) -> None:
    try:
        session = state.db.load_session(sid)
    except FormatError:
        state.ignored[sid] = top  # perhaps being written: tried again when it grows
        return
    state.ignored.pop(sid, None)
    changed[sid] = session

    def step(c: LiveChanges) -> None:
        f.data.sessions.append(session)
        c.sessions_added.append(session.id)
        c.problems.extend(session.problems)
        c._changed(session.id)

    out.then(step)


def _db_summary(state: DbFollowState, session: Session, row: DbSession | None) -> SessionSummary:
    # as a load: the window's update time (now when the row says nothing)
    updated = row.updated_ms if row is not None else None
    modified = updated / 1000 if updated is not None else time.time()
    key = row.key if row is not None else None
    return summarize(session, state.agent, modified, storage="sqlite", key=key)


# -- sessions.json ------------------------------------------------------------------------
def read_store_file(f: Follower, watch: StoreFileState, out: LiveRead) -> None:
    """Load a ``sessions.json`` that changed; queue its replacement in the data set."""
    signature = file_signature(watch.path)
    if signature is None or signature == watch.signature or signature == watch.failed:
        return
    try:
        store = load_sessions_store(watch.path)
    except FormatError as exc:
        # Perhaps written in place and not finished: try again when it changes.
        watch.failed = signature
        _problem_step(Problem(exc.file, exc.line, exc.detail, "warning"), out)
        return
    watch.signature = signature
    watch.failed = None

    def step(c: LiveChanges) -> None:
        old = f.data.stores.get(watch.agent)
        f.data.stores[watch.agent] = store
        c.stores_changed.append(watch.agent)
        _store_flushes(f, old, store, c)

    out.then(step)


def _store_flushes(
    f: Follower, old: SessionStore | None, new: SessionStore, c: LiveChanges
) -> None:
    if old is None:
        return  # a store seen for the first time: its flushes are history
    before = old.entries
    for key, entry in new.entries.items():
        # 2026.9's memoryFlush{kind, compactionCount, failureCount} or the older fields
        record = flush_record(entry.raw)
        prev = before.get(key)
        if record is None or (prev is not None and flush_record(prev.raw) == record):
            continue
        sid = entry.session_id or key
        when = f" at {utc_minute_ms(record.at)} UTC" if record.at is not None else ""
        count = record.compaction_count
        cycle = f" (compaction cycle {count})" if count is not None else ""
        what = "Memory flush" if record.kind == "succeeded" else "Failed memory flush"
        message = f"{what} recorded in sessions.json for session {sid[:8]}{when}{cycle}"
        f.announce(
            [Announcement("memory_flush", sid, message, new.path, "", entry.line)],
            c,
            source="store",
        )
