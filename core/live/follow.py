"""Live mode without Qt: follow a data directory's files and apply what changes.

:class:`LiveFollower` keeps a :class:`core.io.tail.Tail` on every transcript, on
``segments.jsonl`` and ``knowledge.jsonl``, and watches each ``sessions.json`` and
agent database. A poll has two phases:

- :meth:`LiveFollower.read` (a worker in the app) does all the work: it reads only
  the new bytes of the files named dirty (or of all), parses them, builds the new
  entries with the loader's rules and checks (:func:`core.live.session.prepare_append`:
  ids, duplicate ids, parent references, message checks, unknown types), finds the
  compactions and memory flushes to announce, opens new transcripts, queries the
  databases, computes the session summaries, and indexes new segments in the warm
  store (under the store's lock). What must change in the loaded objects is returned
  as steps (a :class:`core.live.changes.LiveRead`) holding those ready-made objects.
- :meth:`LiveFollower.apply` runs the steps on the thread that owns the data set (the
  GUI thread in the app). They only attach: prepared entries are appended to their
  session (``entries``, ``by_id``, ``children``), problems and summaries are put in
  place, OpenClaw tree nodes are added, the knowledge log replays the lines the
  read parsed (it stays there: memlens's own fact edits write it there too); one
  :class:`LiveChanges` says what changed. No JSON is parsed and no entry is built or
  checked there (only the fact log's own replay rules run there).

Ownership rule: at most one :meth:`~LiveFollower.read` runs at a time, and never
while :meth:`~LiveFollower.apply`, :meth:`~LiveFollower.set_recall`,
:meth:`~LiveFollower.files` or :meth:`~LiveFollower.directories` run; a read starts
only after the steps of the previous one were applied (or dropped with the follower).
:class:`app.live.LiveController` runs ``read`` in its job runner and ``apply`` when the
result arrives; :meth:`poll` does both in one go (scripts, benchmarks, tests).

What the read phase reads, and why that is safe. The views read the data set on the
GUI thread while a read runs, and only the apply steps change it, so everything the
read phase reads stands still under it:

- of a session: ``entries`` (the last ones, pi's leaf, the positions of a v1
  ``firstKeptEntryIndex``, the name for an announcement), ``by_id`` (duplicate ids,
  parents, ids taken), ``header``/``version``/``agent_readable``, ``size`` and the
  ``db_*`` cursors, and OpenClaw's ``tree`` (version 4: its leaf, nodes,
  ``reset_descendants``, ``invalid``);
- ``data.sessions``, ``data.summaries``, ``data.pending`` (copied as lists before
  iterating), ``data.discovery`` (its kind, path and agents), ``data.stores`` (only
  asked for membership), the warm set's segments (their
  deduplication keys, once), the knowledge log's path.

What it must not touch: any of those objects. New entries go to a
:class:`core.live.draft.SessionDraft` (one per session and read), which later
batches of the same read and the summary consult on top of the session; OpenClaw's
tree is fed through a fork that reads the session's tree and writes its own layer,
returned as a :class:`core.live.draft.TreeDelta` for the step to attach; a session
summary is computed over :meth:`SessionDraft.shadow`, a new ``Session`` sharing the
unchanged entries. The read phase changes only the follower's own state (tails,
cursors, drafts, candidates, summary timing) and the warm store. It is safe because
reads and applies are serialized (a read starts only once the previous read's steps
ran), so nothing it reads changes during the read, and the views only read too.
Entries are frozen (their ``raw`` dicts and the header are never changed by anyone);
an ``Entry.message`` normalised lazily by both threads at once gives the same value.

A truncated or replaced file is reloaded whole (parsed in the read phase into a new
session object the step copies into the old one). New transcripts in the agents'
session folders join the data set. Compactions and memory flushes are announced.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from core.dataset.discovery import AGENT_DB, AgentDir
from core.dataset.load import summarize
from core.io.jsonio import gc_paused, read_jsonl
from core.io.problems import FormatError, Problem
from core.io.tail import Tail, TailEvent
from core.live.changes import LiveChanges, LiveRead, note_event
from core.live.discover import add_to_discovery, agent_dirs, join_step, subdirs
from core.live.draft import SessionDraft
from core.live.follow_db import (
    DbFollowState,
    StoreFileState,
    file_signature,
    open_database,
    read_database,
    read_store_file,
)
from core.live.session import (
    SessionCursor,
    attach_append,
    cursor_from_bytes,
    cursor_from_file,
    prepare_append,
    replace_session,
)
from core.live.store import SegmentFollower, read_knowledge_lines, read_segment_lines
from core.openclaw.config import MemoryContextConfig
from core.store.knowledge import KnowledgeLog
from core.store.segments import SegmentLoad
from core.transcript.loader import parse_transcript

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from core.dataset.load import DataSet, SessionSummary
    from core.dataset.open_recall import RecallData
    from core.live.announce import Announcement
    from core.transcript.model import Session

__all__ = ["LiveChanges", "LiveFollower", "LiveRead"]

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
class _Candidate:
    agent: str
    tail: Tail
    data: list[bytes] = field(default_factory=list)


class LiveFollower:
    """Follow the files of a loaded data set (see the module docstring).

    Parameters
    ----------
    data
        The loaded data set; its sessions, summaries, segments, knowledge log,
        stores and problems are updated in place (by :meth:`apply`).
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
        self._stores: dict[str, StoreFileState] = {}
        self._databases: dict[str, DbFollowState] = {}
        self._flushes: dict[str, tuple[float, str]] = {}  # session id -> (time, source)
        self._dirty: set[str] = set()
        self._drafts: dict[str, SessionDraft] = {}  # by path, for the read running
        self._knowledge: Tail | None = None
        self._segments: Tail | None = None
        self.segments: SegmentFollower | None = None
        summaries = {s.path: s.agent for s in data.summaries}
        for agent in data.discovery.agents:
            if agent.sessions_json is not None:
                self._watch_store(agent.name, agent.sessions_json)
            if agent.database is not None:
                opened = open_database(agent.name, agent.database)
                if isinstance(opened, Problem):
                    if opened not in data.problems:
                        data.problems.append(opened)
                else:
                    self._databases[str(agent.database)] = opened
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
        """Note that *path* (a file or a folder) changed; the next poll reads it."""
        self._dirty.add(os.fspath(path))

    def take_dirty(self) -> set[str]:
        """The paths marked dirty since the last call (for :meth:`read`)."""
        dirty, self._dirty = self._dirty, set()
        return dirty

    def set_recall(self, recall: RecallData | None) -> int:
        """Follow into a newly opened recall side; returns segments indexed from the backlog."""
        self.recall = recall
        if recall is not None and recall.knowledge is not None:
            recall.knowledge.sync()
        if self.segments is None:
            return 0
        return self.segments.set_store(recall.store if recall else None)

    def close(self) -> None:
        """Close the databases followed (the loaded objects stay)."""
        for state in self._databases.values():
            state.db.close()
        self._databases.clear()

    # -- polling ----------------------------------------------------------------------
    def poll(self, *, everything: bool = False) -> LiveChanges:
        """Read and apply what changed in the dirty files (every file when *everything*)."""
        return self.apply(self.read(self.take_dirty(), everything=everything))

    def read(self, dirty: set[str], *, everything: bool = False) -> LiveRead:
        """Read and parse what changed in *dirty* (every file when *everything*).

        Folders in *dirty*, and *everything*, also look for new transcripts. The data
        set is only read here (see the module docstring); the result's steps change it.
        """
        out = LiveRead()
        self._drafts.clear()  # the previous read's steps were applied
        self._follow_replaced_sessions()
        for path, state in list(self._transcripts.items()):
            if everything or path in dirty:
                self._read_transcript(state, out)
                while state.tail.more:  # it stopped before a line over the limit
                    self._read_transcript(state, out)
        self._refresh_summaries(out)
        for db in self._databases.values():
            # one indexed query a database: cheap enough for every poll
            read_database(self, db, out)
        if everything or dirty & set(self.directories()) or self._candidates:
            self._scan(out)
        for store in self._stores.values():
            if everything or str(store.path) in dirty or store.signature is None:
                read_store_file(self, store, out)
        if self._segments is not None and (everything or self._segments.path in dirty):
            self._read_segments(self._segments, out)
            while self._segments.more:
                self._read_segments(self._segments, out)
        if self._knowledge is not None and (everything or self._knowledge.path in dirty):
            self._read_knowledge(self._knowledge, out)
            while self._knowledge.more:
                self._read_knowledge(self._knowledge, out)
        return out

    def apply(self, read: LiveRead) -> LiveChanges:
        """Run the steps of :meth:`read` on the data set; returns what changed."""
        changes = LiveChanges()
        for step in read.steps:
            step(changes)
        self.data.problems.extend(changes.problems)
        return changes

    def draft(self, cursor: SessionCursor) -> SessionDraft:
        """The entries this read built for the cursor's session and has not attached yet."""
        session = cursor.session
        draft = self._drafts.get(session.path)
        if draft is None or draft.session is not session:
            draft = self._drafts[session.path] = SessionDraft(session)
        return draft

    # -- transcripts --------------------------------------------------------------------
    def _track(self, agent: str, session: Session) -> None:
        last = session.last_entry
        anchor = (last.line, last.offset) if last is not None else None
        tail = Tail(session.path, session.size, anchor=anchor)
        cursor = cursor_from_file(session, tail.offset)
        self._transcripts[session.path] = _Transcript(agent, session, tail, cursor)

    def _follow_replaced_sessions(self) -> None:
        """The app may reload a session (a new object): follow the new one from its size."""
        current = {s.path: s for s in list(self.data.sessions) if s.db is None}
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
        for s in list(self.data.summaries):
            if s.path == path:
                return s.agent
        parent = Path(path).parent
        for a in self.data.discovery.agents:
            if a.sessions_dir == parent:
                return a.name
        return parent.name

    def _read_transcript(self, state: _Transcript, out: LiveRead) -> None:
        if state.reload:
            state.tail = Tail(state.session.path)  # read it all again
        event = state.tail.poll()
        if event.kind == "none":
            return
        path = state.session.path
        if event.kind == "missing":
            problem = Problem(path, 0, "transcript removed; what was loaded is kept", "warning")

            def missing(c: LiveChanges) -> None:
                c.missing.append(path)
                c.problems.append(problem)

            out.then(missing)
            return
        note_event(event, out)
        if event.kind == "reset" or state.reload:
            self._read_reload(state, event, out)
            return
        with gc_paused():
            parsed = read_jsonl(
                event.data, path, first_line=event.first_line, base_offset=event.offset
            )
        end = event.offset + len(event.data)
        draft = self.draft(state.cursor)
        added = prepare_append(
            state.cursor, draft, parsed.objects, parsed.problems, flush_prompt=self.flush_prompt
        )
        draft.fields["size"] = max(draft.fields.get("size", draft.session.size), end)
        state.summary_stale |= bool(added.entries)

        def extend(c: LiveChanges) -> None:
            session = state.session
            attach_append(session, added)
            session.size = max(session.size, end)
            c.problems.extend(added.problems)
            if added.entries:
                c._changed(session.id)
                c.entries.setdefault(session.id, []).extend(added.entries)
                self.announce(added.announcements, c, source="transcript")

        out.then(extend)

    def _read_reload(self, state: _Transcript, event: TailEvent, out: LiveRead) -> None:
        path = state.session.path
        try:
            fresh = parse_transcript(event.data, path)
        except FormatError as exc:
            state.reload = True
            problem = Problem(
                path,
                exc.line,
                f"the transcript was {event.reason or 'replaced'} and cannot be read now "
                f"({exc.detail}); what was loaded is kept",
                "warning",
            )
            out.then(lambda c: c.problems.append(problem))
            return
        state.reload = False
        fresh.size = event.end
        # Lines appended after it in this read build on the fresh session (a draft of it).
        cursor = state.cursor = cursor_from_bytes(fresh, event.data)
        summary = self._summary(state, fresh)

        def reload(c: LiveChanges) -> None:
            self.forget_problems(path, c)
            replace_session(state.session, fresh)
            cursor.session = state.session
            c.resets.append(path)
            c.problems.extend(fresh.problems)
            c._changed(state.session.id)
            self.put_summary(summary, c)

        out.then(reload)

    def forget_problems(self, path: str, changes: LiveChanges) -> None:
        """Drop a reloaded file's old problems (the reload reports them again)."""
        problems = self.data.problems
        kept = [p for p in problems if p.file != path]
        if len(kept) != len(problems):
            problems[:] = kept
            changes.problems_dropped = True

    def _refresh_summaries(self, out: LiveRead) -> None:
        """Summarize the sessions this read extended, as they will be after the steps."""
        now = time.monotonic()
        ready: list[SessionSummary] = []
        for state in self._transcripts.values():
            if not state.summary_stale:
                continue
            wait = 0.0 if state.summary_cost < SUMMARY_BUDGET else state.summary_cost * 20
            if now - state.summary_at >= wait:
                session = state.cursor.session  # the fresh one after a reload in this read
                draft = self._drafts.get(session.path)
                if draft is not None and draft.session is session:
                    session = draft.shadow()
                ready.append(self._summary(state, session))
        if ready:

            def put(c: LiveChanges) -> None:
                for summary in ready:
                    self.put_summary(summary, c)

            out.then(put)

    def _summary(self, state: _Transcript, session: Session) -> SessionSummary:
        """*session*'s summary (read phase); *session* is what the steps will make it."""
        started = time.monotonic()
        try:
            modified = os.stat(session.path).st_mtime
        except OSError:
            modified = 0.0
        summary = summarize(session, state.agent, modified)
        state.summary_stale = False
        state.summary_at = time.monotonic()
        state.summary_cost = state.summary_at - started
        return summary

    def put_summary(self, summary: SessionSummary, changes: LiveChanges) -> None:
        """Replace the session's summary (or add it) and say so."""
        changes.summaries_changed.append(summary.id)
        summaries = self.data.summaries
        for i, old in enumerate(summaries):
            if old.path == summary.path:
                summaries[i] = summary
                return
        summaries.append(summary)

    def _scan(self, out: LiveRead) -> None:
        """Look for transcripts that appeared in the agents' folders.

        A single opened transcript stays single: its folder's other files are not the
        user's choice, so they are never added.
        """
        if self.data.discovery.kind == "transcript":
            return
        joined = self._scan_databases(out)
        for agent in agent_dirs(self.data.discovery, joined, out):
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
            self._read_candidate(path, cand, out)

    def _scan_databases(self, out: LiveRead) -> list[AgentDir]:
        """An agent database that appeared (a new agent, or one upgraded to 2026.9) joins.

        Returns the agents it adds to the discovery (by a step).
        """
        found = self.data.discovery
        joined: list[AgentDir] = []
        if found.kind != "openclaw-home" or found.path.name == AGENT_DB:
            return joined
        names = {a.name for a in found.agents}
        for sub in subdirs(found.path / "agents"):
            path = sub / "agent" / AGENT_DB
            if str(path) in self._databases or not path.is_file():
                continue
            opened = open_database(sub.name, path)
            if isinstance(opened, Problem):
                self._unique_problem_step(opened, out)
                continue  # not readable yet: tried again at the next scan
            self._databases[str(path)] = opened
            agent = AgentDir(sub.name, sub / "sessions", (), database=path)
            if sub.name not in names:
                joined.append(agent)
            join_step(found, agent, path, out)
            read_database(self, opened, out)
        return joined

    def _unique_problem_step(self, problem: Problem, out: LiveRead) -> None:
        def step(c: LiveChanges) -> None:
            if problem not in self.data.problems and problem not in c.problems:
                c.problems.append(problem)

        out.then(step)

    def _read_candidate(self, path: str, cand: _Candidate, out: LiveRead) -> None:
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
        state = _Transcript(cand.agent, session, cand.tail, cursor_from_bytes(session, data))
        # Followed from now on (the next read sees it); the data set gets it in the step.
        self._transcripts[path] = state
        summary = self._summary(state, session)

        def add(c: LiveChanges) -> None:
            self.data.sessions.append(session)
            self.put_summary(summary, c)
            add_to_discovery(self.data.discovery.agents, cand.agent, Path(path))
            c.sessions_added.append(session.id)
            c.problems.extend(session.problems)

        out.then(add)

    # -- sessions.json and announcements ----------------------------------------------------
    def _watch_store(self, agent: str, path: Path) -> None:
        signature = file_signature(path) if agent in self.data.stores else None
        self._stores[str(path)] = StoreFileState(agent, path, signature)

    def announce(self, found: Iterable[Announcement], changes: LiveChanges, *, source: str) -> None:
        """Add *found* to *changes*, once per flush (a transcript and a store may both say it)."""
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
    def _read_segments(self, tail: Tail, out: LiveRead) -> None:
        assert self.segments is not None
        read_segment_lines(self, self.segments, tail, out)

    def _read_knowledge(self, tail: Tail, out: LiveRead) -> None:
        read_knowledge_lines(self, tail, out)
