"""Current OpenClaw's per-agent database, ``agents/<id>/agent/openclaw-agent.sqlite``.

OpenClaw 2026.9 keeps session rows and transcripts in SQLite (docs/notes/openclaw-sqlite.md):

* ``session_nodes``: one row per session key; ``entry_json`` is what ``sessions.json``
  held per key (token counters, model, compactionCount...);
* ``session_windows``: one row per transcript generation (session id), with its
  channel, conversation, model and lifecycle timestamps;
* ``transcript_events``: the transcript, one row per entry ordered by ``seq`` (the
  header is seq 0). A row holds ``event_json``, or (schema 23, events of 1 kB and more)
  a zstd frame ``event_zstd`` of ``event_utf8_bytes`` bytes with ``navigation_json``, a
  content-less projection of the entry;
* ``session_transcript_fts``: OpenClaw's full-text index of user and assistant text.

Everything is read through :class:`core.openclaw.sqlite_ro.ReadOnlyDb`: memlens never
writes here. A transcript becomes the same :class:`core.transcript.model.Session` as a
JSONL file, so every view works on it; its ``path`` is ``<database>#<session id>`` and
the ``line`` of its entries and problems is the event's ``seq``.

Figures counted in SQL are :mod:`core.openclaw.agentdb_stats`, archived transcripts
:mod:`core.openclaw.agentdb_archives`, the full-text search
:mod:`core.openclaw.agentdb_search`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from core.io import jsonio
from core.io.closing import Closing
from core.io.jsonio import JsonlObject, JsonlRead, as_int, gc_paused
from core.io.problems import FormatError, Problem
from core.openclaw.agentdb_archives import (
    ARCHIVE_PREFIX,
    ArchiveRow,
    archive_rows,
    load_archive,
    load_archive_row,
    zstd_decompressor,
)
from core.openclaw.agentdb_search import TranscriptHit, search_transcript_fts
from core.openclaw.agentdb_stats import SessionStats, session_stats
from core.openclaw.sessions_store import SessionEntry, SessionStore
from core.openclaw.sqlite_ro import ReadOnlyDb
from core.transcript.loader import parse_read

if TYPE_CHECKING:
    import sqlite3

    from core.transcript.model import Session

DB_NAME = "openclaw-agent.sqlite"
KNOWN_SCHEMA = 23
"""``OPENCLAW_AGENT_SCHEMA_VERSION`` of OpenClaw 2026.9.6."""
SEP = "#"
"""Between the database path and the session id in a session's ``path``."""

_WINDOW_COLUMNS = (
    "session_key", "previous_session_id", "reason", "session_scope", "created_at",
    "updated_at", "transcript_updated_at", "started_at", "ended_at", "status", "chat_type",
    "channel", "account_id", "primary_conversation_id", "model_provider", "model",
    "agent_harness_id", "parent_session_key", "spawned_by", "display_name",
)  # fmt: skip
_NODE_COLUMNS = (
    "session_key", "current_session_id", "entry_json", "updated_at", "status", "created_at",
    "label", "display_name", "archived_at", "last_interaction_at", "last_activity_at",
)  # fmt: skip


def session_path(db: str | os.PathLike[str], session_id: str) -> str:
    """The ``path`` memlens gives a session stored in *db*."""
    return f"{os.fspath(db)}{SEP}{session_id}"


def split_session_path(path: str) -> tuple[str, str] | None:
    """``(database, session id)`` for a path made by :func:`session_path`, else None."""
    db, sep, sid = path.rpartition(SEP)
    if not sep or not sid or not db.endswith(".sqlite"):
        return None
    return db, sid


def is_agent_db(path: str | os.PathLike[str]) -> bool:
    """True for a file named like OpenClaw's per-agent database."""
    return os.path.basename(os.fspath(path)) == DB_NAME


@dataclass(frozen=True, slots=True)
class DbSession:
    """One transcript of the database: its window row and its session key's row."""

    session_id: str
    key: str | None
    """The session key (``agent:main:explicit:s1``) whose current window this is, or
    whose window it was (``previous`` generations keep their key)."""
    current: bool
    """True when the key's ``current_session_id`` is this session."""
    window: dict[str, Any]
    entry: dict[str, Any]
    """The key's ``entry_json`` (the old ``sessions.json`` entry); {} when absent."""
    events: int
    max_seq: int
    """Highest ``seq`` (-1 without events)."""
    bytes: int
    """Sum of ``event_utf8_bytes`` (the transcript's size as JSON)."""

    @property
    def channel(self) -> str | None:
        """The window's channel (``telegram``...), if any."""
        value = self.window.get("channel")
        return value if isinstance(value, str) else None

    @property
    def updated_ms(self) -> int | None:
        """When the transcript last changed (epoch ms)."""
        for key in ("transcript_updated_at", "updated_at", "created_at"):
            value = as_int(self.window.get(key))
            if value is not None:
                return value
        return None


@dataclass(slots=True)
class EventRead:
    """Rows of one session read from ``transcript_events``."""

    objects: list[JsonlObject] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    size: int = 0
    max_seq: int = -1
    sizes: dict[int, int] = field(default_factory=dict)
    """``event_utf8_bytes`` (else the JSON's length) by seq."""
    seqs: list[int] = field(default_factory=list)
    """The seq of every row read (damaged ones included)."""


class AgentDb(Closing):
    """A read-only handle on one agent database; use as a context manager or close()."""

    def __init__(self, path: str | os.PathLike[str], agent: str | None = None) -> None:
        self.path = os.fspath(path)
        self.agent = agent or _agent_from_path(Path(self.path))
        self._db = ReadOnlyDb(self.path)
        self.problems: list[Problem] = []
        try:
            self._tables = self._db.tables()
            self.schema_version = self._db.user_version()
            self.app_version = self._app_version()
            self._event_cols = self._columns("transcript_events")
        except FormatError:
            self._db.close()
            raise
        if "transcript_events" not in self._tables or "session_windows" not in self._tables:
            self._db.close()
            raise FormatError(
                self.path,
                "not an OpenClaw agent database: no transcript_events / session_windows table",
            )
        if self.schema_version > KNOWN_SCHEMA:
            self.problems.append(
                Problem(
                    self.path,
                    0,
                    f"schema version {self.schema_version} is newer than memlens knows "
                    f"({KNOWN_SCHEMA}, OpenClaw 2026.9.6); read what is recognisable",
                    "warning",
                )
            )
        self._decoder: Any = None

    # -- plumbing ----------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    @property
    def mode(self) -> str:
        """How the file is open: ``ro``, ``immutable`` or ``snapshot``."""
        return self._db.mode

    def refresh(self) -> bool:
        """Reopen when a writer appeared or left (see :meth:`ReadOnlyDb.refresh`)."""
        return self._db.refresh()

    def _columns(self, table: str) -> set[str]:
        if table not in self._tables:
            return set()
        return {str(r[1]) for r in self._db.rows(f'PRAGMA table_info("{table}")')}

    def _app_version(self) -> str | None:
        if "schema_meta" not in self._tables:
            return None
        try:
            rows = self._db.rows("SELECT app_version FROM schema_meta WHERE role = 'agent'")
        except FormatError:
            return None
        return str(rows[0][0]) if rows and rows[0][0] is not None else None

    # -- sessions ----------------------------------------------------------------------

    def sessions(self) -> list[DbSession]:
        """Every transcript window, newest first, with its key's entry and event counts."""
        return self._db.snapshot(self._sessions)  # type: ignore[no-any-return]

    def _sessions(self, db: sqlite3.Connection) -> list[DbSession]:
        wcols = self._columns("session_windows")
        have_w = [c for c in _WINDOW_COLUMNS if c in wcols]
        windows: dict[str, dict[str, Any]] = {}
        sql = f"SELECT session_id, {', '.join(have_w)} FROM session_windows"
        for row in db.execute(sql):
            windows[str(row[0])] = dict(zip(have_w, row[1:], strict=True))
        nodes: dict[str, dict[str, Any]] = {}
        ncols = self._columns("session_nodes")
        have_n = [c for c in _NODE_COLUMNS if c in ncols]
        if "session_key" in have_n:
            for row in db.execute(f"SELECT {', '.join(have_n)} FROM session_nodes"):
                nodes[str(row[0])] = dict(zip(have_n, row, strict=True))
        bytes_col = "sum(event_utf8_bytes)" if "event_utf8_bytes" in self._event_cols else "0"
        counts: dict[str, tuple[int, int, int]] = {}
        for sid, n, top, size in db.execute(
            f"SELECT session_id, count(*), max(seq), {bytes_col} FROM transcript_events "
            "GROUP BY session_id"
        ):
            counts[str(sid)] = (int(n), int(top), int(size or 0))
        current = {str(n.get("current_session_id")): key for key, n in nodes.items()}
        out = []
        for sid in set(windows) | set(counts):
            window = windows.get(sid, {})
            key = current.get(sid) or window.get("session_key")
            node = nodes.get(key) if isinstance(key, str) else None
            entry = self._entry_json(node, key) if node is not None else {}
            n, top, size = counts.get(sid, (0, -1, 0))
            out.append(
                DbSession(
                    session_id=sid,
                    key=key if isinstance(key, str) else None,
                    current=sid in current,
                    window=window,
                    entry=entry,
                    events=n,
                    max_seq=top,
                    bytes=size,
                )
            )
        out.sort(key=lambda s: (-(s.updated_ms or 0), s.session_id))
        return out

    def _entry_json(self, node: dict[str, Any], key: str | None) -> dict[str, Any]:
        raw = node.get("entry_json")
        if not isinstance(raw, str):
            return {}
        try:
            value = jsonio.loads(raw)
        except jsonio.JSONDecodeError as exc:
            self.problems.append(
                Problem(self.path, 0, f"session {key}: entry_json is not JSON ({exc}); ignored")
            )
            return {}
        return value if isinstance(value, dict) else {}

    def store(self, sessions: list[DbSession] | None = None) -> SessionStore:
        """The session rows as a :class:`SessionStore` (what ``sessions.json`` was).

        Each entry is the key's ``entry_json`` with the window's promoted fields added
        under names that ``sessions.json`` never used (``channel``, ``chatType``...
        only when the entry lacks them).
        """
        rows = self.sessions() if sessions is None else sessions
        raw: dict[str, Any] = {}
        entries: dict[str, SessionEntry] = {}
        for s in rows:
            if s.key is None or not s.current:
                continue
            merged = dict(s.entry)
            merged.setdefault("sessionId", s.session_id)
            for col, name in (
                ("channel", "channel"),
                ("chat_type", "chatType"),
                ("account_id", "accountId"),
                ("primary_conversation_id", "conversationId"),
                ("model_provider", "modelProvider"),
                ("model", "model"),
                ("started_at", "startedAt"),
                ("ended_at", "endedAt"),
                ("created_at", "createdAt"),
                ("status", "status"),
            ):
                value = s.window.get(col)
                if value is not None:
                    merged.setdefault(name, value)
            raw[s.key] = merged
            entries[s.key] = SessionEntry(s.key, merged)
        return SessionStore(self.path, raw, entries, tuple(self.problems))

    # -- transcripts -------------------------------------------------------------------

    def stats(self) -> dict[str, SessionStats]:
        """Entry, message, compaction and role counts of every session, counted in SQL.

        See :func:`core.openclaw.agentdb_stats.session_stats`.
        """
        return session_stats(self._db, self._tables, self._event_cols, self.max_seqs())

    def max_seqs(self) -> dict[str, int]:
        """Highest ``seq`` of each session (cheap: the primary key index)."""
        return {sid: top for sid, (top, _n, _g) in self.growth().items()}

    def growth(self) -> dict[str, tuple[int, int, str | None]]:
        """``(max seq, rows, rewrite generation)`` of each session, for live mode.

        Read from the primary key index and OpenClaw's ``transcript_rewrite_watermarks``
        (a rewind or repair bumps the generation): no event is read.
        """

        def read(db: sqlite3.Connection) -> dict[str, tuple[int, int, str | None]]:
            gens: dict[str, str] = {}
            if "transcript_rewrite_watermarks" in self._tables:
                gens = {
                    str(s): str(g)
                    for s, g in db.execute(
                        "SELECT session_id, generation FROM transcript_rewrite_watermarks"
                    )
                }
            return {
                str(sid): (int(top), int(n), gens.get(str(sid)))
                for sid, top, n in db.execute(
                    "SELECT session_id, max(seq), count(*) FROM transcript_events "
                    "GROUP BY session_id"
                )
            }

        return self._db.snapshot(read)  # type: ignore[no-any-return]

    def read_events(self, session_id: str, after_seq: int = -1) -> EventRead:
        """The events of *session_id* with ``seq > after_seq``, decoded, in order."""
        cols = self._event_cols
        select = ", ".join(
            c if c in cols else "NULL"
            for c in ("seq", "event_json", "event_zstd", "event_utf8_bytes", "navigation_json")
        )
        rows = self._db.rows(
            f"SELECT {select} FROM transcript_events WHERE session_id = ? AND seq > ? ORDER BY seq",
            (session_id, after_seq),
        )
        name = session_path(self.path, session_id)
        out = EventRead(max_seq=after_seq)
        loads = orjson.loads
        for seq, text, frame, nbytes, nav in rows:
            out.max_seq = seq
            out.seqs.append(seq)
            data: bytes | str | None = text
            if data is None and frame is not None:
                data = self._decode(name, seq, frame, nbytes, out)
            value: Any = None
            if data is not None:
                try:
                    value = loads(data)
                except orjson.JSONDecodeError as exc:
                    if text is not None:
                        out.problems.append(
                            Problem(name, seq, f"event is not JSON ({exc}); skipped")
                        )
                        continue
                    out.problems.append(Problem(name, seq, f"zstd frame holds no JSON ({exc})"))
                    data = None
            if data is None:
                value = _from_navigation(nav)
                if value is None:
                    out.problems.append(
                        Problem(
                            name, seq, "event has neither JSON nor a readable zstd frame; skipped"
                        )
                    )
                    continue
                out.problems.append(
                    Problem(
                        name,
                        seq,
                        "event content unreadable; shown from its navigation data, without "
                        "its text",
                        "warning",
                    )
                )
                out.objects.append(JsonlObject(seq, value, seq))
                continue
            size = nbytes if isinstance(nbytes, int) else len(data)
            out.size += size
            out.sizes[seq] = size
            out.objects.append(JsonlObject(seq, value, seq))
        return out

    def _decode(
        self, name: str, seq: int, frame: bytes, nbytes: Any, out: EventRead
    ) -> bytes | None:
        if self._decoder is None:
            self._decoder = zstd_decompressor()
            if self._decoder is None:
                out.problems.append(
                    Problem(name, seq, "zstd event and no zstandard module: install zstandard")
                )
                return None
        size = nbytes if isinstance(nbytes, int) and nbytes > 0 else 0
        try:
            if size:
                data: bytes = self._decoder.decompress(frame, max_output_size=size)
            else:
                data = self._decoder.decompress(frame)
        except Exception as exc:  # zstandard.ZstdError and bad frames
            out.problems.append(Problem(name, seq, f"zstd frame cannot be decoded ({exc})"))
            return None
        if size and len(data) != size:
            out.problems.append(
                Problem(
                    name,
                    seq,
                    f"zstd frame decodes to {len(data)} bytes, event_utf8_bytes says {size}",
                )
            )
            return None
        return data

    def load_session(self, session_id: str) -> Session:
        """The transcript of *session_id* as a :class:`Session` (read-only).

        Raises
        ------
        FormatError
            When the session has no events or its first event is not a session header.
        """
        name = session_path(self.path, session_id)
        with gc_paused():
            events = self.read_events(session_id)
            if not events.objects:
                raise FormatError(name, "no transcript events for this session")
            read = JsonlRead(objects=events.objects, problems=events.problems, size=events.size)
            session = parse_read(read, name)
        session.db = self.path
        session.db_seq = events.max_seq
        session.db_bytes = events.sizes
        session.db_rows = len(events.seqs)
        session.db_objects = len(events.objects)
        session.db_generation = self._generation(session_id)
        session.run_context_tokens = self._context_tokens(session_id)
        return session

    def row_identity(self, session_id: str, seq: int) -> tuple[str | None, int | None] | None:
        """``(event id, event_utf8_bytes)`` of one row, None when there is no such row."""
        rows = self._db.rows(
            "SELECT event_utf8_bytes FROM transcript_events WHERE session_id = ? AND seq = ?",
            (session_id, seq),
        )
        if not rows:
            return None
        event_id = None
        if "transcript_event_identities" in self._tables:
            ids = self._db.rows(
                "SELECT event_id FROM transcript_event_identities WHERE session_id = ? AND seq = ?",
                (session_id, seq),
            )
            event_id = str(ids[0][0]) if ids and ids[0][0] is not None else None
        size = rows[0][0]
        return event_id, size if isinstance(size, int) else None

    def _generation(self, session_id: str) -> str | None:
        if "transcript_rewrite_watermarks" not in self._tables:
            return None
        rows = self._db.rows(
            "SELECT generation FROM transcript_rewrite_watermarks WHERE session_id = ?",
            (session_id,),
        )
        return str(rows[0][0]) if rows and rows[0][0] is not None else None

    def _context_tokens(self, session_id: str) -> int | None:
        """``contextTokens`` of the session's row: the budget OpenClaw's run used."""
        if "session_nodes" not in self._tables:
            return None
        try:
            rows = self._db.rows(
                "SELECT n.entry_json FROM session_nodes n WHERE n.current_session_id = ? "
                "OR n.session_key = (SELECT w.session_key FROM session_windows w "
                "WHERE w.session_id = ?) ORDER BY n.current_session_id = ? DESC LIMIT 1",
                (session_id, session_id, session_id),
            )
        except FormatError:
            return None
        if not rows or not isinstance(rows[0][0], str):
            return None
        try:
            entry = jsonio.loads(rows[0][0])
        except jsonio.JSONDecodeError:
            return None
        value = as_int(entry.get("contextTokens")) if isinstance(entry, dict) else None
        return value if value is not None and value > 0 else None

    # -- archived transcripts ----------------------------------------------------------

    def archives(self) -> list[ArchiveRow]:
        """The transcripts archived in the database, oldest first (blobs are not read).

        Rows of ``session_transcript_archives`` (reset and deleted generations) and
        ``session_transcript_cold_archives`` (cold storage).
        """
        return archive_rows(self._db, self._tables)

    def load_archive_row(self, name: str) -> Session:
        """An archived transcript kept in the database, as a :class:`Session` (read-only).

        Raises
        ------
        FormatError
            When there is no such archive, it is kept as a file, or it cannot be decoded.
        """
        return load_archive_row(self._db, self._tables, name, db_path=self.path)

    # -- transcript search -------------------------------------------------------------

    def has_transcript_fts(self) -> bool:
        """True when the database has OpenClaw's transcript full-text index."""
        return "session_transcript_fts" in self._tables

    def search_transcripts(
        self, query: str, *, limit: int = 20, session_id: str | None = None
    ) -> list[TranscriptHit]:
        """Search ``session_transcript_fts`` as OpenClaw's session search does.

        See :func:`core.openclaw.agentdb_search.search_transcript_fts`; [] without the index.
        """
        if not self.has_transcript_fts():
            return []
        cols = self._columns("session_transcript_fts")
        return search_transcript_fts(
            self._db, cols, self.path, query, limit=limit, session_id=session_id
        )


def _from_navigation(nav: Any) -> dict[str, Any] | None:
    if not isinstance(nav, str):
        return None
    try:
        value = jsonio.loads(nav)
    except jsonio.JSONDecodeError:
        return None
    entry = value.get("navigation") if isinstance(value, dict) else None
    return entry if isinstance(entry, dict) else None


def home_of_database(db: str | os.PathLike[str]) -> Path | None:
    """The OpenClaw home (state folder) of ``<home>/agents/<id>/agent/openclaw-agent.sqlite``."""
    parents = Path(db).resolve().parents
    if len(parents) >= 4 and parents[0].name == "agent" and parents[2].name == "agents":
        return parents[3]
    return None


def _agent_from_path(path: Path) -> str:
    # agents/<id>/agent/openclaw-agent.sqlite
    parent = path.parent
    if parent.name == "agent" and parent.parent.parent.name == "agents":
        return parent.parent.name
    return path.stem


def load_session_ref(ref: str | os.PathLike[str]) -> Session:
    """A session by path: a transcript file, an archive, or ``<agent database>#<session id>``.

    Raises
    ------
    FormatError
        When it cannot be read.
    """
    from core.transcript.loader import load_transcript

    name = os.fspath(ref)
    split = split_session_path(name)
    if split is not None and not os.path.exists(name) and os.path.isfile(split[0]):
        with AgentDb(split[0]) as db:
            if split[1].startswith(ARCHIVE_PREFIX):
                return db.load_archive_row(split[1].removeprefix(ARCHIVE_PREFIX))
            return db.load_session(split[1])
    if name.endswith(".zst"):
        return load_archive(name)
    return load_transcript(name)
