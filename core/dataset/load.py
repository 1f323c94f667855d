"""Load everything a data directory holds, with progress and cancellation.

The app runs :func:`load_dataset` in a worker; the CLI calls it directly.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.dataset.discovery import OCC_AGENT, Discovery, discover
from core.dataset.store_sessions import STORAGE, rebuild_sessions
from core.io.jobs import Cancelled, Progress
from core.io.problems import FormatError, Problem
from core.io.safe_read import NotRegularFile
from core.openclaudecode.load_home import load_home
from core.openclaw.agentdb import (
    AgentDb,
    DbSession,
    load_session_ref,
    session_path,
)
from core.openclaw.agentdb_archives import load_archive
from core.openclaw.agentdb_stats import SessionStats
from core.openclaw.config import MemoryContextConfig, OpenClawConfig, load_openclaw_config
from core.openclaw.sessions_store import SessionStore, load_sessions_store
from core.store.knowledge import KnowledgeLog, load_knowledge
from core.store.segments import SegmentLoad, load_segments
from core.store.vectors import VectorFile, load_vectors
from core.transcript import Session, context_at, context_size, load_transcript
from core.transcript.tokens import estimate_message

if TYPE_CHECKING:
    from collections.abc import Callable

    from core.transcript.model import Entry


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """The figures of one session that lists and ``info`` show."""

    agent: str
    id: str
    path: str
    version: int
    entries: int
    messages: int
    compactions: int
    roles: dict[str, int]
    tokens_estimated: int
    """pi's estimate of the context at the current leaf."""
    tokens_measured: int | None
    """The agent's own usage figure for that context, where present."""
    tokens_total: int
    """pi's estimate summed over every message in the file."""
    branches: int
    modified: float
    size: int
    name: str = ""
    model: str = ""
    storage: str = "jsonl"
    """Where the session lives: ``jsonl`` (a transcript file), ``sqlite`` (OpenClaw
    2026.9+'s agent database), ``archive`` (an archived transcript, file or row) or
    ``openclaudecode`` (an OpenClaudeCode transcript, read-only)."""
    key: str | None = None
    """The session key (``agent:main:main``) when the store names one."""
    loaded: bool = True
    """False while a database session is listed from its SQL counts only: the token
    figures are not known until it is read (:meth:`DataSet.load_pending`)."""

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of ``info --json`` and ``sessions --json``."""
        return {
            "agent": self.agent,
            "id": self.id,
            "path": self.path,
            "storage": self.storage,
            "key": self.key,
            "loaded": self.loaded,
            "version": self.version,
            "entries": self.entries,
            "messages": self.messages,
            "compactions": self.compactions,
            "roles": self.roles,
            "tokens_estimated": self.tokens_estimated,
            "tokens_measured": self.tokens_measured,
            "tokens_total": self.tokens_total,
            "branches": self.branches,
            "modified": self.modified,
            "size": self.size,
            "name": self.name,
            "model": self.model,
        }


def summarize(
    session: Session,
    agent: str,
    modified: float,
    *,
    storage: str = "jsonl",
    key: str | None = None,
) -> SessionSummary:
    """Figures of a loaded session."""
    items = context_at(session)
    size = context_size(items)
    name = ""
    model = ""
    total = 0
    for e in session.entries:
        if e.type == "session_info" and isinstance(e.raw.get("name"), str):
            name = e.raw["name"]
        elif e.type == "model_change" and isinstance(e.raw.get("modelId"), str):
            model = e.raw["modelId"]
        m = e.message
        if m is not None:
            if m.role == "assistant" and m.model:
                model = m.model
            if e.type != "compaction":
                total += _tokens(e)
    if not model and isinstance(session.header.get("modelId"), str):
        model = session.header["modelId"]
    return SessionSummary(
        agent=agent,
        id=session.id,
        path=session.path,
        version=session.version,
        entries=len(session.entries),
        messages=len(session.messages()),
        compactions=len(session.compaction_entries()),
        roles=session.role_counts(),
        tokens_estimated=size.estimated,
        tokens_measured=size.measured,
        tokens_total=total,
        branches=len(session.leaves()),
        modified=modified,
        size=session.size,
        name=name,
        model=model,
        storage=storage,
        key=key,
    )


def _tokens(entry: Entry) -> int:
    return estimate_message(entry.message) if entry.message else 0


@dataclass(frozen=True, slots=True)
class DatabaseInfo:
    """One OpenClaw agent database as loaded: which era, how it was opened."""

    agent: str
    path: str
    schema: int
    app_version: str | None
    mode: str
    """``ro``, ``immutable`` or ``snapshot`` (see :mod:`core.openclaw.sqlite_ro`)."""
    sessions: int
    events: int

    def describe(self) -> str:
        """``main: schema 23 (OpenClaw 2026.9.6), 3 sessions, 120 events``."""
        app = f" (OpenClaw {self.app_version})" if self.app_version else ""
        return (
            f"{self.agent}: schema {self.schema}{app}, {self.sessions} sessions, "
            f"{self.events} events"
        )

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of ``info --json``."""
        return {
            "agent": self.agent,
            "path": self.path,
            "kind": "openclaw-agent-sqlite",
            "schema": self.schema,
            "app_version": self.app_version,
            "open_mode": self.mode,
            "sessions": self.sessions,
            "events": self.events,
        }


@dataclass(slots=True)
class DataSet:
    """Everything loaded from one data directory."""

    discovery: Discovery
    sessions: list[Session] = field(default_factory=list)
    summaries: list[SessionSummary] = field(default_factory=list)
    segments: SegmentLoad | None = None
    vectors: VectorFile | None = None
    knowledge: KnowledgeLog | None = None
    config: OpenClawConfig | None = None
    stores: dict[str, SessionStore] = field(default_factory=dict)
    """``sessions.json`` of each agent that has one; an agent database's session rows
    under ``<agent> (sqlite)``."""
    databases: list[DatabaseInfo] = field(default_factory=list)
    """The OpenClaw agent databases read (2026.9+)."""
    problems: list[Problem] = field(default_factory=list)
    pending: dict[str, SessionSummary] = field(default_factory=dict)
    """Database sessions listed but not read yet, by path (``load_dataset(defer_db=True)``)."""

    def session(self, ref: str) -> Session:
        """A session by id, path, session key or id prefix, in that order.

        A key (``agent:main:main``, OpenClaudeCode's ``telegram:42``) that several share
        (a live session and its archives, a user's successive sessions) names the newest
        live one: the key's current session.

        Raises
        ------
        KeyError
            When no session or several match.
        """
        known = [(s.id, s.path) for s in self.sessions]
        known += [(s.id, s.path) for s in self.pending.values()]
        hits = [path for sid, path in known if sid == ref or path == ref]
        if not hits:
            keyed = [s for s in self.summaries if s.key == ref]  # (pending ones too)
            live = [s for s in keyed if s.storage != "archive"] or keyed
            hits = [max(live, key=lambda s: s.modified).path] if live else []
        if not hits:
            hits = [
                path
                for sid, path in known
                if os.path.basename(path).startswith(ref) or sid.startswith(ref)
            ]
        if len(hits) == 1:
            if hits[0] in self.pending:
                try:
                    self.adopt([read_pending(self.pending[hits[0]])])
                except FormatError as exc:
                    raise KeyError(str(exc)) from exc
            return next(s for s in self.sessions if s.path == hits[0])
        if not hits:
            raise KeyError(f"no session matches {ref!r}")
        raise KeyError(f"{len(hits)} sessions match {ref!r}; give more of the id")

    def load_pending(
        self,
        *,
        progress: Progress | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> list[tuple[Session, SessionSummary]]:
        """Read every pending database session; :meth:`adopt` takes them."""
        return read_all_pending(list(self.pending.values()), progress, cancelled)

    def adopt(self, loaded: list[tuple[Session, SessionSummary]]) -> None:
        """Put sessions read by :meth:`load_pending` in place of their pending summaries."""
        for session, summary in loaded:
            if self.pending.pop(session.path, None) is None:
                continue  # opened meanwhile, or another load replaced it
            self.sessions.append(session)
            self.problems.extend(session.problems)
            for i, old in enumerate(self.summaries):
                if old.path == session.path:
                    self.summaries[i] = summary
                    break


def load_dataset(
    path: str | os.PathLike[str],
    *,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    max_segments: int | None = None,
    eviction_days: float | None = None,
    now_ms: int | None = None,
    defer_db: bool = False,
) -> DataSet:
    """Discover and load a data directory or transcript.

    Bad files never abort the load: each becomes a problem naming the file.
    With *defer_db*, the sessions of OpenClaw agent databases are listed from their
    SQL counts (``loaded`` False) and read later (:meth:`DataSet.load_pending`, or on
    first use by :meth:`DataSet.session`).

    Raises
    ------
    FormatError
        When *path* holds nothing memlens can read.
    Cancelled
        When *cancelled* returned True.
    """
    found = discover(path)
    data = DataSet(found)
    data.problems.extend(found.problems)
    steps = (
        len(found.transcripts)
        + sum(len(a.archives) for a in found.agents)
        + len(found.databases)
        + (3 if found.memory_context else 0)
        + 1
    )
    done = 0

    def step(label: str) -> None:
        nonlocal done
        if cancelled is not None and cancelled():
            raise Cancelled(label)
        if progress is not None:
            progress(done, steps, label)
        done += 1

    step("configuration")
    settings = _load_config(found, data)
    if max_segments is None:
        max_segments = settings.max_segments
    if eviction_days is None:
        eviction_days = float(settings.eviction_days)
    occ = found.openclaudecode
    if occ is not None:  # read-only: storage "openclaudecode", named by the session key
        loaded = load_home(occ, step)
        for item in loaded.sessions:
            summary = summarize(
                item.session, OCC_AGENT, item.modified, storage=found.kind, key=item.key
            )
            data.sessions.append(item.session)
            data.summaries.append(replace(summary, name=item.key or summary.name))
        data.problems.extend(loaded.problems)
    for agent in found.agents if occ is None else []:
        if agent.sessions_json is not None:
            try:
                data.stores[agent.name] = load_sessions_store(agent.sessions_json)
                data.problems.extend(data.stores[agent.name].problems)
            except FormatError as exc:
                _add_error(data, exc)
        for transcript in agent.transcripts:
            step(f"{agent.name}/{transcript.name}")
            try:
                session = load_transcript(transcript)
                modified = transcript.stat().st_mtime
            except FormatError as exc:
                data.problems.append(Problem(str(transcript), exc.line, exc.detail))
                continue
            except OSError as exc:
                data.problems.append(Problem(str(transcript), 0, f"cannot read: {exc}"))
                continue
            data.sessions.append(session)
            data.summaries.append(summarize(session, agent.name, modified))
            data.problems.extend(session.problems)
        if agent.database is not None:
            step(f"{agent.name}/{agent.database.name}")
            _load_database(data, agent.name, agent.database, cancelled, defer=defer_db)
        for archive in agent.archives:
            step(f"{agent.name}/{archive.name}")
            _load_archive(data, agent.name, archive)
    store = found.memory_context
    if store is not None:
        step("segments.jsonl")
        try:
            data.segments = load_segments(
                store / "segments.jsonl",
                max_segments=max_segments,
                eviction_days=eviction_days,
                now_ms=now_ms,
            )
            data.problems.extend(data.segments.problems)
        except FormatError as exc:
            _add_error(data, exc)
        step("vectors.bin")
        vec_path = store / "vectors.bin"
        if vec_path.exists():
            try:
                data.vectors = load_vectors(vec_path)
                data.problems.extend(data.vectors.problems)
            except FormatError as exc:
                _add_error(data, exc)
        step("knowledge.jsonl")
        try:
            data.knowledge = load_knowledge(store / "knowledge.jsonl")
            data.problems.extend(data.knowledge.problems)
        except FormatError as exc:
            _add_error(data, exc)
    if not data.summaries and data.segments is not None and data.segments.valid:
        _add_store_sessions(data)
    if progress is not None:
        progress(steps, steps, "done")
    return data


def _add_store_sessions(data: DataSet) -> None:
    """No transcript, but archived segments: their sessions, rebuilt (read-only)."""
    load = data.segments
    assert load is not None
    segments = load.segments
    if load.evicted_age or load.evicted_count:  # the archive holds more than the warm set
        segments = load_segments(load.path, max_segments=-1, eviction_days=0).segments
    sessions = rebuild_sessions(load.path, segments)
    for session, agent in sessions:
        last = session.entries[-1].message if session.entries else None
        key = session.header.get("sessionKey")
        data.sessions.append(session)
        data.summaries.append(
            summarize(
                session, agent, (last.timestamp or 0) / 1000 if last else 0.0, storage=STORAGE,
                key=key if isinstance(key, str) else None,
            )
        )  # fmt: skip
    data.discovery.notes.append(
        f"{len(sessions)} session(s) rebuilt from {load.path}: only the user and assistant "
        "text the agent archived (no tool calls, system prompt or compactions); read-only"
    )


def _load_database(
    data: DataSet,
    agent: str,
    path: Path,
    cancelled: Callable[[], bool] | None,
    *,
    defer: bool = False,
) -> None:
    """Every session of an OpenClaw agent database, read-only; problems name the file."""
    try:
        db = AgentDb(path, agent)
    except FormatError as exc:
        _add_error(data, exc)
        return
    with db:
        try:
            rows = db.sessions()
        except FormatError as exc:
            _add_error(data, exc)
            return
        data.stores[f"{agent} (sqlite)"] = db.store(rows)
        data.databases.append(
            DatabaseInfo(
                agent, str(path), db.schema_version, db.app_version, db.mode, len(rows),
                sum(r.events for r in rows),
            )
        )  # fmt: skip
        if defer:
            try:
                stats = db.stats()
            except FormatError as exc:
                _add_error(data, exc)
                stats = {}
        for row in rows:
            if cancelled is not None and cancelled():
                raise Cancelled(f"{agent}/{row.session_id}")
            if not row.events:
                continue
            if defer:
                quick = _quick_summary(path, agent, row, stats.get(row.session_id))
                data.summaries.append(quick)
                data.pending[quick.path] = quick
                continue
            try:
                session = db.load_session(row.session_id)
            except FormatError as exc:
                _add_error(data, exc)
                continue
            modified = (row.updated_ms or 0) / 1000
            data.sessions.append(session)
            data.summaries.append(
                summarize(session, agent, modified, storage="sqlite", key=row.key)
            )
            data.problems.extend(session.problems)
        _load_archive_rows(data, agent, db)
        data.problems.extend(db.problems)


def _load_archive_rows(data: DataSet, agent: str, db: AgentDb) -> None:
    """Transcripts OpenClaw archived inside its database (reset, deleted, cold)."""
    try:
        rows = db.archives()
    except FormatError as exc:
        _add_error(data, exc)
        return
    for row in rows:
        if not row.in_database:
            continue  # a cold archive kept as a file: discovery finds it in sessions/
        try:
            session = db.load_archive_row(row.name)
        except FormatError as exc:
            _add_error(data, exc)
            continue
        data.sessions.append(session)
        data.summaries.append(
            summarize(session, agent, (row.created_at or 0) / 1000, storage="archive")
        )
        data.problems.extend(session.problems)


def _quick_summary(
    db: Path, agent: str, row: DbSession, stats: SessionStats | None
) -> SessionSummary:
    """A database session's row before its transcript is read: counts, no token figures."""
    s = stats or SessionStats(max(row.events - 1, 0), 0, 0, {})
    model = row.window.get("model") or row.entry.get("model")
    return SessionSummary(
        agent=agent,
        id=row.session_id,
        path=session_path(db, row.session_id),
        version=4,
        entries=s.entries,
        messages=s.messages,
        compactions=s.compactions,
        roles=s.roles,
        tokens_estimated=0,
        tokens_measured=None,
        tokens_total=0,
        branches=1,
        modified=(row.updated_ms or 0) / 1000,
        size=row.bytes,
        name=s.name,
        model=model if isinstance(model, str) else "",
        storage="sqlite",
        key=row.key,
        loaded=False,
    )


def read_all_pending(
    todo: list[SessionSummary],
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> list[tuple[Session, SessionSummary]]:
    """Read pending database sessions (a worker's job: it changes no data set).

    Take *todo* from ``DataSet.pending`` on the thread that owns the data set. A
    session that cannot be read is left out; :meth:`DataSet.session` names the
    problem when it is opened.
    """
    out = []
    for n, summary in enumerate(todo):
        if cancelled is not None and cancelled():
            raise Cancelled(summary.path)
        if progress is not None:
            progress(n, len(todo), f"{summary.agent}/{summary.id}")
        try:
            out.append(read_pending(summary))
        except FormatError:
            continue
    if progress is not None:
        progress(len(todo), len(todo), "done")
    return out


def read_pending(summary: SessionSummary) -> tuple[Session, SessionSummary]:
    """Read a pending database session and its full summary.

    Raises
    ------
    FormatError
        When it cannot be read.
    """
    session = load_session_ref(summary.path)
    return session, summarize(
        session, summary.agent, summary.modified, storage=summary.storage, key=summary.key
    )


def _load_archive(data: DataSet, agent: str, path: Path) -> None:
    """An archived transcript file (plain or zstd), read-only."""
    try:
        session = load_archive(path)
        modified = path.stat().st_mtime
    except FormatError as exc:
        _add_error(data, exc)
        return
    except OSError as exc:
        data.problems.append(Problem(str(path), 0, f"cannot read: {exc}"))
        return
    data.sessions.append(session)
    data.summaries.append(summarize(session, agent, modified, storage="archive"))
    data.problems.extend(session.problems)


def _add_error(data: DataSet, exc: FormatError) -> None:
    """A file that could not be used, once: discovery already noted special files."""
    if isinstance(exc, NotRegularFile) and any(p.file == exc.file for p in data.discovery.problems):
        return
    data.problems.append(Problem(exc.file, exc.line, exc.detail))


def _load_config(found: Discovery, data: DataSet) -> MemoryContextConfig:
    """Read openclaw.json if present; its problems join the data set's."""
    if found.config is None:
        return MemoryContextConfig()
    try:
        config = load_openclaw_config(found.config)
    except FormatError as exc:
        data.problems.append(Problem(exc.file, exc.line, exc.detail))
        return MemoryContextConfig()
    data.config = config
    data.problems.extend(config.problems)
    store = config.memory_context.storage_path
    if store and found.memory_context is None:
        path = Path(store.replace("~", str(Path.home()), 1) if store.startswith("~") else store)
        if path.is_dir():
            found.memory_context = path
    return config.memory_context
