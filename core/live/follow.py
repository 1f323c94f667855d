"""Live mode without Qt: follow a data directory's files and apply what changes.

:class:`LiveFollower` keeps a :class:`core.io.tail.Tail` on every transcript, on
``segments.jsonl`` and ``knowledge.jsonl``, and watches each ``sessions.json``.
:meth:`LiveFollower.poll` reads only the new bytes of the files named dirty (or
of all), applies them to the loaded objects *in place* (sessions grow, the
knowledge log replays, the warm set and the warm store index new segments), and
returns one :class:`LiveChanges` for the whole batch. A truncated or replaced
file is reloaded whole. New transcripts in the agents' session folders join the
data set. Compactions and memory flushes are announced.

The app's :class:`app.live.LiveController` calls :meth:`poll` from a timer;
tests call it directly.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from core.context.budget import flush_record
from core.dataset.discovery import AGENT_DB, AgentDir
from core.dataset.load import summarize
from core.io.jsonio import too_long_problem
from core.io.limits import max_line_bytes
from core.io.problems import FormatError, Problem
from core.io.tail import Tail, TailEvent
from core.io.timefmt import utc_minute_ms
from core.live.changes import LiveChanges
from core.live.session import (
    Announcement,
    SessionCursor,
    cursor_from_bytes,
    cursor_from_file,
    extend_session,
    extend_session_objects,
    replace_session,
)
from core.live.store import SegmentFollower, apply_knowledge, reload_knowledge
from core.openclaw.agentdb import SEP, AgentDb, DbSession
from core.openclaw.config import MemoryContextConfig
from core.openclaw.sessions_store import SessionStore, load_sessions_store
from core.store.knowledge import KnowledgeLog
from core.store.segments import SegmentLoad
from core.transcript.loader import parse_transcript

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from core.dataset.load import DataSet, SessionSummary
    from core.recall.opening import RecallData
    from core.transcript.model import Session

__all__ = ["LiveChanges", "LiveFollower"]

SUMMARY_BUDGET = 0.02
"""Seconds a session summary may take at every batch; a slower one (a huge session)
is refreshed at most every 20 times its cost."""
FLUSH_DEDUP_SECONDS = 600.0
"""A flush seen in a transcript and in sessions.json within this time is announced once."""


@dataclass(slots=True)
class _Transcript:
    agent: str
    session: Session
    tail: Tail
    cursor: SessionCursor
    reload: bool = False
    """The last reset could not be parsed: parse the whole file again next time."""
    summary_stale: bool = False
    summary_at: float = 0.0
    summary_cost: float = 0.0


@dataclass(slots=True)
class _Database:
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
class _Candidate:
    agent: str
    tail: Tail
    data: list[bytes] = field(default_factory=list)


@dataclass(slots=True)
class _StoreFile:
    agent: str
    path: Path
    signature: tuple[int, int, int, int] | None
    failed: tuple[int, int, int, int] | None = None


def _signature(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class LiveFollower:
    """Follow the files of a loaded data set (see the module docstring).

    Parameters
    ----------
    data
        The loaded data set; its sessions, summaries, segments, knowledge log,
        stores and problems are updated in place.
    recall
        The recall side, when open: its warm store indexes new segments and its
        knowledge index is kept in step with the log. See :meth:`set_recall`.
    clock
        Epoch milliseconds now (segment eviction by age).
    """

    def __init__(
        self,
        data: DataSet,
        recall: RecallData | None = None,
        *,
        clock: Callable[[], int] = lambda: int(time.time() * 1000),
    ) -> None:
        self.data = data
        self.recall = recall
        self.clock = clock
        config = data.config
        self.flush_prompt = config.compaction.memory_flush.prompt if config else None
        mc = config.memory_context if config else MemoryContextConfig()
        self._transcripts: dict[str, _Transcript] = {}
        self._candidates: dict[str, _Candidate] = {}
        self._ignored: set[str] = set()
        self._stores: dict[str, _StoreFile] = {}
        self._databases: dict[str, _Database] = {}
        self._flushes: dict[str, tuple[float, str]] = {}  # session id -> (time, source)
        self._dirty: set[str] = set()
        self._knowledge: Tail | None = None
        self._segments: Tail | None = None
        self.segments: SegmentFollower | None = None
        summaries = {s.path: s.agent for s in data.summaries}
        for agent in data.discovery.agents:
            if agent.sessions_json is not None:
                self._watch_store(agent.name, agent.sessions_json)
            if agent.database is not None:
                self._watch_database(agent.name, agent.database)
        # Transcripts that failed to load become candidates: perhaps only their
        # header was being written.
        for session in data.sessions:
            self._track(summaries.get(session.path, ""), session)
        folder = data.discovery.memory_context
        if folder is not None:
            seg_path = folder / "segments.jsonl"
            if data.segments is None:
                data.segments = SegmentLoad(str(seg_path), [])
            self._segments = Tail(seg_path, data.segments.size)
            self.segments = SegmentFollower(
                data.segments,
                recall.store if recall else None,
                max_segments=mc.max_segments,
                eviction_days=float(mc.eviction_days),
                clock=clock,
            )
            if data.knowledge is None:
                data.knowledge = KnowledgeLog(str(folder / "knowledge.jsonl"))
            log = data.knowledge
            self._knowledge = Tail(log.path, log.size, line=log.lines + 1)

    # -- what to watch ------------------------------------------------------------------
    def files(self) -> list[str]:
        """Every file followed (for a file-system watcher)."""
        out = list(self._transcripts)
        out += [str(s.path) for s in self._stores.values()]
        for path in self._databases:  # OpenClaw writes the WAL, then checkpoints
            out += [p for p in (path, path + "-wal") if os.path.exists(p)]
        if self._segments is not None:
            out.append(self._segments.path)
        if self._knowledge is not None:
            out.append(self._knowledge.path)
        return out

    def directories(self) -> list[str]:
        """Folders where new transcripts, a new sessions.json or a new store file may appear."""
        found = self.data.discovery
        dirs = [str(a.sessions_dir) for a in found.agents]
        dirs += [os.path.dirname(p) for p in self._databases]  # a -wal file appears
        if found.kind == "openclaw-home" and (found.path / "agents").is_dir():
            dirs.append(str(found.path / "agents"))
        elif found.kind == "pi-sessions":
            dirs.append(str(found.path))
        if found.memory_context is not None:
            dirs.append(str(found.memory_context))
        return list(dict.fromkeys(dirs))

    def mark_dirty(self, path: str) -> None:
        """Note that *path* (a file or a folder) changed; the next :meth:`poll` reads it."""
        self._dirty.add(os.fspath(path))

    def set_recall(self, recall: RecallData | None) -> int:
        """Follow into a newly opened recall side; returns segments indexed from the backlog."""
        self.recall = recall
        if recall is not None and recall.knowledge is not None:
            recall.knowledge.sync()
        if self.segments is None:
            return 0
        return self.segments.set_store(recall.store if recall else None)

    # -- polling ----------------------------------------------------------------------
    def poll(self, *, everything: bool = False) -> LiveChanges:
        """Apply what changed in the dirty files (every file when *everything*).

        Folders marked dirty, and *everything*, also look for new transcripts.
        """
        changes = LiveChanges()
        dirty, self._dirty = self._dirty, set()
        self._follow_replaced_sessions()
        for path, state in list(self._transcripts.items()):
            if everything or path in dirty:
                self._poll_transcript(state, changes)
                while state.tail.more:  # it stopped before a line over the limit
                    self._poll_transcript(state, changes)
        self._refresh_summaries(changes)
        for db in self._databases.values():
            # one indexed query a database: cheap enough for every poll
            self._poll_database(db, changes)
        if everything or dirty & set(self.directories()) or self._candidates:
            self._scan(changes)
        for store in self._stores.values():
            if everything or str(store.path) in dirty or store.signature is None:
                self._poll_store(store, changes)
        if self._segments is not None and (everything or self._segments.path in dirty):
            self._poll_segments(self._segments, changes)
            while self._segments.more:
                self._poll_segments(self._segments, changes)
        if self._knowledge is not None and (everything or self._knowledge.path in dirty):
            self._poll_knowledge(self._knowledge, changes)
            while self._knowledge.more:
                self._poll_knowledge(self._knowledge, changes)
        self.data.problems.extend(changes.problems)
        return changes

    # -- transcripts --------------------------------------------------------------------
    def _track(self, agent: str, session: Session) -> None:
        last = session.last_entry
        anchor = (last.line, last.offset) if last is not None else None
        tail = Tail(session.path, session.size, anchor=anchor)
        cursor = cursor_from_file(session, tail.offset)
        self._transcripts[session.path] = _Transcript(agent, session, tail, cursor)

    def _follow_replaced_sessions(self) -> None:
        """The app may reload a session (a new object): follow the new one from its size."""
        current = {s.path: s for s in self.data.sessions if s.db is None}
        for path, state in list(self._transcripts.items()):
            session = current.get(path)
            if session is None:
                del self._transcripts[path]
                self._ignored.add(path)
            elif session is not state.session:
                self._track(state.agent, session)
        for path, session in current.items():
            if path not in self._transcripts:
                self._ignored.discard(path)
                self._candidates.pop(path, None)
                self._track(self._agent_of(path), session)

    def _agent_of(self, path: str) -> str:
        for s in self.data.summaries:
            if s.path == path:
                return s.agent
        parent = Path(path).parent
        for a in self.data.discovery.agents:
            if a.sessions_dir == parent:
                return a.name
        return parent.name

    def _poll_transcript(self, state: _Transcript, changes: LiveChanges) -> None:
        if state.reload:
            state.tail = Tail(state.session.path)  # read it all again
        event = state.tail.poll()
        if event.kind == "none":
            return
        session = state.session
        if event.kind == "missing":
            changes.missing.append(session.path)
            changes.problems.append(
                Problem(session.path, 0, "transcript removed; what was loaded is kept", "warning")
            )
            return
        changes.lines += event.lines
        _report_skipped(event, changes)
        if event.kind == "reset" or state.reload:
            self._reload_transcript(state, event, changes)
            return
        added = extend_session(
            state.cursor,
            event.data,
            first_line=event.first_line,
            base_offset=event.offset,
            flush_prompt=self.flush_prompt,
        )
        changes.problems.extend(added.problems)
        if added.entries:
            changes._changed(session.id)
            changes.entries.setdefault(session.id, []).extend(added.entries)
            self._announce(added.announcements, changes, source="transcript")
            state.summary_stale = True

    def _reload_transcript(
        self, state: _Transcript, event: TailEvent, changes: LiveChanges
    ) -> None:
        path = state.session.path
        try:
            fresh = parse_transcript(event.data, path)
        except FormatError as exc:
            state.reload = True
            changes.problems.append(
                Problem(
                    path,
                    exc.line,
                    f"the transcript was {event.reason or 'replaced'} and cannot be read now "
                    f"({exc.detail}); what was loaded is kept",
                    "warning",
                )
            )
            return
        state.reload = False
        self._forget_problems(path)
        fresh.size = event.end
        replace_session(state.session, fresh)
        state.cursor = cursor_from_bytes(state.session, event.data)
        changes.resets.append(path)
        changes.problems.extend(fresh.problems)
        changes._changed(state.session.id)
        self._summarize(state, changes)

    def _forget_problems(self, path: str) -> None:
        """Drop a reloaded file's old problems (the reload reports them again)."""
        self.data.problems[:] = [p for p in self.data.problems if p.file != path]

    def _refresh_summaries(self, changes: LiveChanges) -> None:
        now = time.monotonic()
        for state in self._transcripts.values():
            if not state.summary_stale:
                continue
            wait = 0.0 if state.summary_cost < SUMMARY_BUDGET else state.summary_cost * 20
            if now - state.summary_at >= wait:
                self._summarize(state, changes)

    def _summarize(self, state: _Transcript, changes: LiveChanges) -> None:
        session = state.session
        started = time.monotonic()
        try:
            modified = os.stat(session.path).st_mtime
        except OSError:
            modified = 0.0
        summary = summarize(session, state.agent, modified)
        state.summary_stale = False
        state.summary_at = time.monotonic()
        state.summary_cost = state.summary_at - started
        self._put_summary(summary, changes)

    def _scan(self, changes: LiveChanges) -> None:
        """Look for transcripts that appeared in the agents' folders.

        A single opened transcript stays single: its folder's other files are not the
        user's choice, so they are never added.
        """
        if self.data.discovery.kind == "transcript":
            return
        self._scan_databases(changes)
        for agent in self._agent_dirs():
            try:
                names = sorted(os.listdir(agent.sessions_dir))
            except OSError:
                continue
            for name in names:
                path = str(agent.sessions_dir / name)
                if not name.endswith(".jsonl") or path in self._ignored:
                    continue
                if path in self._transcripts:
                    continue
                if path not in self._candidates:
                    self._candidates[path] = _Candidate(agent.name, Tail(path))
            store = agent.sessions_dir / "sessions.json"
            if str(store) not in {str(s.path) for s in self._stores.values()} and store.is_file():
                self._watch_store(agent.name, store)
        for path, cand in list(self._candidates.items()):
            self._poll_candidate(path, cand, changes)

    def _scan_databases(self, changes: LiveChanges) -> None:
        """An agent database that appeared (a new agent, or one upgraded to 2026.9) joins."""
        found = self.data.discovery
        if found.kind != "openclaw-home" or found.path.name == AGENT_DB:
            return
        for sub in _subdirs(found.path / "agents"):
            path = sub / "agent" / AGENT_DB
            if str(path) in self._databases or not path.is_file():
                continue
            self._watch_database(sub.name, path)
            if str(path) not in self._databases:
                continue  # not readable yet: tried again at the next scan
            for i, a in enumerate(found.agents):
                if a.name == sub.name:
                    found.agents[i] = replace(a, database=path)
                    break
            else:
                found.agents.append(AgentDir(sub.name, sub / "sessions", (), database=path))
            if path not in found.memory_indexes:
                found.memory_indexes.insert(0, path)
            self._poll_database(self._databases[str(path)], changes)

    def _agent_dirs(self) -> list[AgentDir]:
        found = self.data.discovery
        known = {a.sessions_dir for a in found.agents}
        fresh: list[AgentDir] = []
        if found.kind == "openclaw-home":
            root = found.path / "agents"
            subs = sorted(p / "sessions" for p in _subdirs(root))
            fresh = [AgentDir(p.parent.name, p, ()) for p in subs if p.is_dir() and p not in known]
        elif found.kind == "pi-sessions":
            for sub in _subdirs(found.path):
                if sub in known:
                    continue
                name = (
                    sub.name.strip("-").replace("-", "/") if sub.name.startswith("--") else sub.name
                )
                fresh.append(AgentDir(name or sub.name, sub, ()))
        found.agents.extend(fresh)
        return list(found.agents)

    def _poll_candidate(self, path: str, cand: _Candidate, changes: LiveChanges) -> None:
        event = cand.tail.poll()
        if event.kind == "missing":
            del self._candidates[path]
            return
        if event.kind == "reset":
            cand.data = []
        if event.data:
            cand.data.append(event.data)
        if not cand.data:
            return  # no complete line yet
        data = b"".join(cand.data)
        try:
            session = parse_transcript(data, path)
        except FormatError:
            del self._candidates[path]
            self._ignored.add(path)  # a .jsonl that is not a transcript
            return
        session.size = len(data)
        del self._candidates[path]
        self.data.sessions.append(session)
        cursor = cursor_from_bytes(session, data)
        state = _Transcript(cand.agent, session, cand.tail, cursor)
        self._transcripts[path] = state
        self._summarize(state, changes)
        self._add_to_discovery(cand.agent, Path(path))
        changes.sessions_added.append(session.id)
        changes.problems.extend(session.problems)

    def _add_to_discovery(self, agent: str, path: Path) -> None:
        agents = self.data.discovery.agents
        for i, a in enumerate(agents):
            if a.sessions_dir == path.parent:
                agents[i] = replace(a, transcripts=(*a.transcripts, path))
                return
        agents.append(AgentDir(agent, path.parent, (path,)))

    # -- OpenClaw agent databases ---------------------------------------------------------
    def _watch_database(self, agent: str, path: Path) -> None:
        try:
            db = AgentDb(path, agent)
        except FormatError as exc:
            problem = Problem(
                exc.file, exc.line, f"live mode cannot follow it: {exc.detail}", "warning"
            )
            if problem not in self.data.problems:
                self.data.problems.append(problem)
            return
        self._databases[str(path)] = _Database(agent, db)

    def close(self) -> None:
        """Close the databases followed (the loaded objects stay)."""
        for state in self._databases.values():
            state.db.close()
        self._databases.clear()

    def _poll_database(self, state: _Database, changes: LiveChanges) -> None:
        db = state.db
        try:
            db.refresh()  # a writer appeared (immutable -> ro) or left, or the file changed
            growth = db.growth()
        except FormatError as exc:
            if state.failing != exc.detail:
                state.failing = exc.detail
                changes.problems.append(Problem(exc.file, 0, exc.detail, "warning"))
            return
        state.failing = None
        mine = {s.id: s for s in self.data.sessions if s.db == db.path}
        pending = {s.id for s in self.data.pending.values() if s.path.startswith(db.path + SEP)}
        grew = False
        for sid, (top, rows, generation) in growth.items():
            session = mine.get(sid)
            if session is None:
                if sid not in pending and state.ignored.get(sid, -2) < top:
                    grew |= self._add_db_session(state, sid, top, changes)
                continue
            same_gen = generation == session.db_generation
            if same_gen and top == session.db_seq and rows == session.db_rows:
                continue  # nothing new
            # OpenClaw changes the generation on a destructive rewrite (and creates it,
            # None -> value, on an append too): the last row read tells which it was
            rewritten = (
                top < session.db_seq
                or (session.db_generation is not None and not same_gen)
                or not self._same_last_row(state, session)
                or (top == session.db_seq and rows != session.db_rows)
            )
            if rewritten:
                grew |= self._reload_db_session(state, session, changes)
            elif top > session.db_seq:
                grew |= self._extend_db_session(state, session, top, rows, changes)
            session.db_generation = generation
        if grew:
            try:
                listed = db.sessions()
            except FormatError:
                return
            key = f"{state.agent} (sqlite)"
            self.data.stores[key] = db.store(listed)
            changes.stores_changed.append(key)
            by_id = {r.session_id: r for r in listed}
            for session in self.data.sessions:
                if session.db == db.path and session.id in changes.sessions_changed:
                    self._db_summary(state, session, by_id.get(session.id), changes)

    @staticmethod
    def _same_last_row(state: _Database, session: Session) -> bool:
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

    def _extend_db_session(
        self, state: _Database, session: Session, top: int, rows: int, changes: LiveChanges
    ) -> bool:
        try:
            read = state.db.read_events(session.id, after_seq=session.db_seq)
        except FormatError as exc:
            changes.problems.append(Problem(exc.file, exc.line, exc.detail, "warning"))
            return False
        # rows OpenClaw committed after the count are read too: compare up to the count
        counted = sum(1 for seq in read.seqs if seq <= top)
        if session.db_rows + counted != rows:  # rows before the old end changed too
            return self._reload_db_session(state, session, changes)
        cursor = state.cursors.get(session.id)
        if cursor is None or cursor.session is not session:
            # the next index counts every object read, skipped ones too (as the loader)
            cursor = state.cursors[session.id] = SessionCursor(
                session, session.db_objects, session.db_seq
            )
        added = extend_session_objects(
            cursor, read.objects, read.problems, flush_prompt=self.flush_prompt
        )
        session.db_seq = max(session.db_seq, read.max_seq)
        session.db_bytes.update(read.sizes)
        session.db_rows += len(read.seqs)
        session.db_objects += len(read.objects)
        cursor.known_end = session.db_seq
        session.size += read.size
        changes.lines += len(read.objects)
        changes.problems.extend(added.problems)
        changes._changed(session.id)
        if added.entries:
            changes.entries.setdefault(session.id, []).extend(added.entries)
            self._announce(added.announcements, changes, source="transcript")
        return True

    def _reload_db_session(self, state: _Database, session: Session, changes: LiveChanges) -> bool:
        try:
            fresh = state.db.load_session(session.id)
        except FormatError as exc:
            changes.problems.append(Problem(exc.file, exc.line, exc.detail, "warning"))
            return False
        self._forget_problems(session.path)
        replace_session(session, fresh)
        state.cursors.pop(session.id, None)
        changes.resets.append(session.path)
        changes.problems.extend(fresh.problems)
        changes._changed(session.id)
        return True

    def _add_db_session(self, state: _Database, sid: str, top: int, changes: LiveChanges) -> bool:
        try:
            session = state.db.load_session(sid)
        except FormatError:
            state.ignored[sid] = top  # perhaps being written: tried again when it grows
            return False
        state.ignored.pop(sid, None)
        self.data.sessions.append(session)
        changes.sessions_added.append(session.id)
        changes.problems.extend(session.problems)
        changes._changed(session.id)
        return True

    def _db_summary(
        self, state: _Database, session: Session, row: DbSession | None, changes: LiveChanges
    ) -> None:
        # as a load: the window's update time (now when the row says nothing)
        updated = row.updated_ms if row is not None else None
        modified = updated / 1000 if updated is not None else time.time()
        key = row.key if row is not None else None
        self._put_summary(
            summarize(session, state.agent, modified, storage="sqlite", key=key), changes
        )

    def _put_summary(self, summary: SessionSummary, changes: LiveChanges) -> None:
        """Replace the session's summary (or add it) and say so."""
        changes.summaries_changed.append(summary.id)
        summaries = self.data.summaries
        for i, old in enumerate(summaries):
            if old.path == summary.path:
                summaries[i] = summary
                return
        summaries.append(summary)

    # -- sessions.json ----------------------------------------------------------------------
    def _watch_store(self, agent: str, path: Path) -> None:
        signature = _signature(path) if agent in self.data.stores else None
        self._stores[str(path)] = _StoreFile(agent, path, signature)

    def _poll_store(self, watch: _StoreFile, changes: LiveChanges) -> None:
        signature = _signature(watch.path)
        if signature is None or signature == watch.signature or signature == watch.failed:
            return
        try:
            store = load_sessions_store(watch.path)
        except FormatError as exc:
            # Perhaps written in place and not finished: try again when it changes.
            watch.failed = signature
            changes.problems.append(Problem(exc.file, exc.line, exc.detail, "warning"))
            return
        watch.signature = signature
        watch.failed = None
        old = self.data.stores.get(watch.agent)
        self.data.stores[watch.agent] = store
        changes.stores_changed.append(watch.agent)
        self._store_flushes(old, store, changes)

    def _store_flushes(
        self, old: SessionStore | None, new: SessionStore, changes: LiveChanges
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
            self._announce(
                [Announcement("memory_flush", sid, message, new.path, "", entry.line)],
                changes,
                source="store",
            )

    def _announce(
        self, found: Iterable[Announcement], changes: LiveChanges, *, source: str
    ) -> None:
        now = time.monotonic()
        for a in found:
            if a.kind == "memory_flush":
                last = self._flushes.get(a.session_id)
                self._flushes[a.session_id] = (now, source)
                # The agent's flush turn and its sessions.json record are one flush.
                if last is not None and last[1] != source and now - last[0] < FLUSH_DEDUP_SECONDS:
                    continue
            changes.announcements.append(a)

    # -- memory-context store -------------------------------------------------------------
    def _poll_segments(self, tail: Tail, changes: LiveChanges) -> None:
        follower = self.segments
        assert follower is not None
        event = tail.poll()
        if event.kind == "none":
            return
        if event.kind == "missing":
            changes.missing.append(tail.path)
            return
        changes.lines += event.lines
        _report_skipped(event, changes)
        if event.kind == "reset":
            self._forget_problems(tail.path)
            out = follower.reload(event.data)
            changes.resets.append(tail.path)
            changes.store_reopen_needed = True
            changes.segments_added += len(out.added)
        else:
            out = follower.apply(event.data, first_line=event.first_line, offset=event.offset)
            changes.segments_added += len(out.added)
            changes.segment_ids.extend(s.id for s in out.added)
            changes.segments_indexed += out.indexed
        changes.problems.extend(out.problems)

    def _poll_knowledge(self, tail: Tail, changes: LiveChanges) -> None:
        log = self.data.knowledge
        assert log is not None
        event = tail.poll()
        if event.kind == "none":
            return
        if event.kind == "missing":
            changes.missing.append(tail.path)
            return
        changes.lines += event.lines
        _report_skipped(event, changes)
        index = self.recall.knowledge if self.recall is not None else None
        if index is not None and index.log is not log:
            index = None  # an index over another log: not ours to update
        if event.kind == "reset":
            self._forget_problems(tail.path)
            out = reload_knowledge(log, event.data)
            changes.resets.append(tail.path)
            if index is not None:
                index.rebuild()
        else:
            out = apply_knowledge(log, event.data, first_line=event.first_line, offset=event.offset)
            if index is not None:
                index.sync()
        changes.facts_changed.extend(out.fact_ids)
        changes.problems.extend(out.problems)


def _report_skipped(event: TailEvent, changes: LiveChanges) -> None:
    """Lines over the line limit the tail counted and skipped: problems with their line."""
    limit = max_line_bytes()
    changes.problems.extend(
        too_long_problem(event.path, line, length, limit, True) for line, _, length in event.skipped
    )


def _subdirs(folder: Path) -> list[Path]:
    try:
        return [p for p in folder.iterdir() if p.is_dir()]
    except OSError:
        return []
