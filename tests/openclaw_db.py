"""Build OpenClaw 2026.9.6 agent databases for tests and benchmarks.

The DDL is ``tests/data/openclaw_agent_schema_v23.sql``, dumped from a database
the real OpenClaw wrote (its vec0 table left out). Rows are written as OpenClaw's
``prepareTranscriptPayload`` writes them (docs/notes/openclaw-sqlite.md §4):
``event_utf8_bytes`` on every row, zstd level 1 with a checksum for events of
1,024 bytes and more (not the header, not JSON holding ``\\u``), and then
``event_json`` NULL with a ``navigation_json`` projection.
"""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import orjson
import zstandard

SCHEMA = Path(__file__).parent / "data" / "openclaw_agent_schema_v23.sql"
MIN_COMPRESS_BYTES = 1024


def _octet_length(value: Any) -> int | None:
    if value is None:
        return None
    return len(value.encode() if isinstance(value, str) else bytes(value))


_TEMPLATES: dict[bool, bytes] = {}


def connect(path: str | Path) -> sqlite3.Connection:
    """A writer's connection (autocommit), with the SQL function OpenClaw's CHECKs use."""
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    # SQLite 3.40 lacks octet_length (a CHECK uses it); same meaning for UTF-8 text
    db.create_function("octet_length", 1, _octet_length, deterministic=True)
    return db


def _template(wal: bool) -> bytes:
    """The bytes of an empty database, made once a process (running the DDL is slow)."""
    if wal not in _TEMPLATES:
        with tempfile.TemporaryDirectory() as folder:
            made = Path(folder) / "t.sqlite"
            db = connect(made)
            script = SCHEMA.read_text(encoding="utf-8")
            if not wal:
                script = script.replace("PRAGMA journal_mode = WAL;", "")
            db.executescript(script)
            if _has_schema_meta(db):
                db.execute(
                    "INSERT INTO schema_meta (meta_key, role, schema_version, agent_id, "
                    "app_version, created_at, updated_at) "
                    "VALUES ('primary', 'agent', 23, 'main', '2026.9.6', 0, 0)"
                )
            db.close()
            _TEMPLATES[wal] = made.read_bytes()
    return _TEMPLATES[wal]


def create_agent_db(path: str | Path, *, wal: bool = True) -> sqlite3.Connection:
    """A new, empty agent database at *path* with OpenClaw's schema (version 23)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_bytes(_template(wal))
    return connect(path)


def _has_schema_meta(db: sqlite3.Connection) -> bool:
    cols = {r[1] for r in db.execute("PRAGMA table_info(schema_meta)")}
    return {"meta_key", "role", "schema_version", "agent_id", "app_version"} <= cols


def navigation(event: dict[str, Any], size: int) -> str:
    """A navigation projection as OpenClaw's (content stripped)."""
    nav: dict[str, Any] = {
        k: event[k] for k in ("type", "id", "parentId", "timestamp") if k in event
    }
    msg = event.get("message")
    if isinstance(msg, dict):
        nav["message"] = {"role": msg.get("role")}
    report = {
        "kind": "canonical",
        "hasParentId": "parentId" in event,
        "entry": {k: event.get(k) for k in ("id", "parentId", "timestamp", "type")},
    }
    return orjson.dumps(
        {
            "version": 1,
            "report": report,
            "navigation": nav,
            "reset": {},
            "model": {},
            "modelBytes": size,
            "modelWithoutCheckpointBytes": size,
            "withoutCustomDataBytes": size,
        }
    ).decode()


def add_session(
    db: sqlite3.Connection,
    session_id: str,
    events: list[dict[str, Any]],
    *,
    key: str | None = None,
    entry: dict[str, Any] | None = None,
    window: dict[str, Any] | None = None,
    created_at: int = 1_795_600_000_000,
    compress: bool = True,
    first_seq: int = 0,
    identities: bool = True,
) -> None:
    """Write a session: its window row, its key's node row and its events from *first_seq*."""
    key = key or f"agent:main:explicit:{session_id}"
    cctx = zstandard.ZstdCompressor(level=1, write_checksum=True, write_content_size=True)
    with _transaction(db):
        if first_seq == 0:
            cols = {"session_id": session_id, "session_key": key, "created_at": created_at,
                    "updated_at": created_at, **(window or {})}  # fmt: skip
            db.execute(
                "INSERT OR REPLACE INTO session_nodes (session_key, current_session_id, "
                "entry_json, updated_at, created_at) VALUES (?, ?, ?, ?, ?)",
                (key, session_id, orjson.dumps({"sessionId": session_id, **(entry or {})}).decode(),
                 created_at, created_at),
            )  # fmt: skip
            names = ", ".join(cols)
            marks = ", ".join("?" for _ in cols)
            db.execute(
                f"INSERT INTO session_windows ({names}) VALUES ({marks})", tuple(cols.values())
            )
        rows = []
        for seq, event in enumerate(events, start=first_seq):
            text = orjson.dumps(event)
            size = len(text)
            if (
                compress
                and seq > 0
                and event.get("type") != "session"
                and size >= MIN_COMPRESS_BYTES
                and b"\\u" not in text
            ):
                frame = cctx.compress(text)
                rows.append((session_id, seq, None, created_at + seq, frame, size,
                             navigation(event, size)))  # fmt: skip
            else:
                rows.append((session_id, seq, text.decode(), created_at + seq, None, size, None))
        db.executemany(
            "INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, "
            "event_utf8_bytes, navigation_json) VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        db.executemany(
            "INSERT INTO transcript_event_identities (session_id, event_id, seq, event_type, "
            "parent_id, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            [
                (session_id, str(event.get("id", session_id)), seq, event.get("type"),
                 event.get("parentId"), created_at + seq)
                for seq, event in enumerate(events, start=first_seq)
                if identities
            ],
        )  # fmt: skip
        for seq, event in enumerate(events, start=first_seq):
            if event.get("type") in ("message",) and isinstance(event.get("message"), dict):
                msg = event["message"]
                if msg.get("role") in ("user", "assistant"):
                    content = msg.get("content")
                    text = (
                        content
                        if isinstance(content, str)
                        else "\n".join(
                            b.get("text", "") for b in content or [] if isinstance(b, dict)
                        )
                    )
                    cur = db.execute(
                        "INSERT INTO session_transcript_fts_rows (session_id, message_id) "
                        "VALUES (?, ?)",
                        (session_id, event.get("id")),
                    )
                    db.execute(
                        "INSERT INTO session_transcript_fts (rowid, text, session_id, message_id, "
                        "role, timestamp) VALUES (?, ?, ?, ?, ?, ?)",
                        (cur.lastrowid, text, session_id, event.get("id"), msg["role"], seq),
                    )


class _transaction:
    """BEGIN ... COMMIT (ROLLBACK on error) on an autocommit connection."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN")

    def __exit__(self, kind: object, *_: object) -> None:
        self.db.execute("ROLLBACK" if kind is not None else "COMMIT")


def header(session_id: str, timestamp: str = "2026-11-25T16:00:00.000Z") -> dict[str, Any]:
    """A version 4 session header."""
    return {"type": "session", "version": 4, "id": session_id, "timestamp": timestamp,
            "cwd": "/work"}  # fmt: skip


def message(
    entry_id: str, parent: str | None, role: str, text: str, **extra: Any
) -> dict[str, Any]:
    """A message entry as OpenClaw writes it (string content for users, blocks otherwise)."""
    content: Any = text if role == "user" else [{"type": "text", "text": text}]
    msg: dict[str, Any] = {"role": role, "content": content, "timestamp": 1_795_600_000_000}
    msg.update(extra)
    return {"type": "message", "id": entry_id, "parentId": parent,
            "timestamp": "2026-11-25T16:00:01.000Z", "message": msg}  # fmt: skip


def conversation(session_id: str, turns: int, *, size: int = 200) -> list[dict[str, Any]]:
    """A header and *turns* user/assistant pairs, each message about *size* bytes."""
    events = [header(session_id)]
    parent = None
    filler = "lorem ipsum dolor sit amet " * (size // 27 + 1)
    for i in range(turns):
        uid, aid = f"{session_id}-u{i}", f"{session_id}-a{i}"
        events.append(message(uid, parent, "user", f"question {i}: {filler[:size]}"))
        events.append(
            message(aid, uid, "assistant", f"answer {i}: {filler[:size]}",
                    usage={"input": 100 + i, "output": 10, "cacheRead": 0, "cacheWrite": 0,
                           "totalTokens": 110 + i}, stopReason="stop", model="m")
        )  # fmt: skip
        parent = aid
    return events
