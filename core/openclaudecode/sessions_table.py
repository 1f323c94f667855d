"""The ``sessions`` table of an OpenClaudeCode database (the design's ``SessionEntry``).

The design gives TypeScript field names (``sessionId``, ``sessionKey``, ``createdAt``,
``updatedAt``, ``messageCount``, ``compactionCount``, ``transcriptPath``,
``metadata``) but not the columns: snake_case and camelCase are both read, matched
without case or underscores; unknown columns are ignored. A row without a session id
is skipped and a garbled value is dropped, each a :class:`Problem` naming the database
and the row, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.io.jsonio import JSONDecodeError, loads
from core.io.problems import Problem

if TYPE_CHECKING:
    import sqlite3

    from core.openclaw.sqlite_ro import ReadOnlyDb

_FIELDS = {
    "sessionid": "session_id",
    "sessionkey": "session_key",
    "createdat": "created_ms",
    "updatedat": "updated_ms",
    "messagecount": "message_count",
    "compactioncount": "compaction_count",
    "transcriptpath": "transcript_path",
    "metadata": "metadata",
}
_INTS = ("created_ms", "updated_ms", "message_count", "compaction_count")


@dataclass(frozen=True, slots=True)
class SessionRow:
    """One row of ``sessions``; a value the row lacks (or garbled) is None."""

    row: int
    """1-based position in the table's order."""
    session_id: str
    session_key: str | None = None
    created_ms: int | None = None
    updated_ms: int | None = None
    message_count: int | None = None
    compaction_count: int | None = None
    transcript_path: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def channel(self) -> str:
        """The session key's part before the first ``:`` (``telegram``), else ``""``."""
        return channel_of(self.session_key or "")


def channel_of(session_key: str) -> str:
    """The channel of a ``{channel}:{userId}`` key (the whole key without a ``:``)."""
    return session_key.split(":", 1)[0]


def _as_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def _metadata(value: object) -> dict[str, Any] | None:
    if value is None or value == "":
        return {}
    if isinstance(value, (bytes, str)):
        try:
            parsed = loads(value.encode() if isinstance(value, str) else value)
        except JSONDecodeError:
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


def parse_row(n: int, raw: dict[str, object], name: str) -> tuple[SessionRow | None, list[Problem]]:
    """One row (its columns by design field) as a :class:`SessionRow` and its problems."""
    where = f"sessions table row {n}"
    sid = raw.get("session_id")
    if not isinstance(sid, str) or not sid.strip():
        return None, [Problem(name, 0, f"{where}: no session id ({sid!r}); skipped")]
    problems: list[Problem] = []
    values: dict[str, Any] = {}
    for key in _INTS:
        value = raw.get(key)
        values[key] = _as_int(value)
        if value is not None and values[key] is None:
            problems.append(
                Problem(
                    name, 0, f"{where} ({sid}): {key} {value!r} is not a number; ignored", "warning"
                )
            )
    for key in ("session_key", "transcript_path"):
        value = raw.get(key)
        values[key] = value if isinstance(value, str) and value else None
        if value is not None and values[key] is None:
            problems.append(
                Problem(
                    name, 0, f"{where} ({sid}): {key} {value!r} is not text; ignored", "warning"
                )
            )
    meta = _metadata(raw.get("metadata"))
    if meta is None:
        problems.append(
            Problem(name, 0, f"{where} ({sid}): metadata is not a JSON object; ignored", "warning")
        )
    return SessionRow(n, sid, metadata=meta or {}, **values), problems


def read_sessions(db: ReadOnlyDb) -> tuple[list[SessionRow], list[Problem]]:
    """Every row of ``sessions`` in ``rowid`` order, and the problems met.

    Raises
    ------
    FormatError
        When the table cannot be read at all (naming the database).
    """

    def read(conn: sqlite3.Connection) -> tuple[Any, list[tuple[Any, ...]]]:
        cursor = conn.execute("SELECT * FROM sessions")  # table order: rowid order
        return cursor.description or (), cursor.fetchall()

    described, table = db.snapshot(read)
    names = [_FIELDS.get(str(d[0]).replace("_", "").lower()) for d in described]
    rows: list[SessionRow] = []
    problems: list[Problem] = []
    for n, values in enumerate(table, start=1):
        raw = {k: v for k, v in zip(names, values, strict=False) if k is not None}
        row, found = parse_row(n, raw, db.path)
        problems.extend(found)
        if row is not None:
            rows.append(row)
    return rows, problems
