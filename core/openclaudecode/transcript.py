"""An OpenClaudeCode transcript as a memlens :class:`~core.transcript.model.Session`.

One JSON object a line: ``session`` (``id``, ``version``), ``message`` (``message``:
``role``, ``content`` as a string, ``channel``, ``from``) and ``compaction``
(``summary``, ``removedCount``), each with an ISO ``timestamp``. Entries carry no id:
they are read as pi's version 1 transcripts are (ids derived from the session id and
the position, each entry chained to the previous one), so the timeline and the replay
work unchanged. A compaction names no first kept entry: after it the context is its
summary and the messages that follow (the design's ``compactSession`` removes the
older ones). The design's own ``version`` is kept in the header as ``occVersion``.

Damaged lines (bad JSON, a truncated last line) are problems naming the file and the
line, as for every transcript. The session is read-only: :data:`READ_ONLY` is the
refusal a write gets; such a session's header has :data:`FORMAT_KEY` set to
:data:`FORMAT`.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from core.io.jsonio import JsonlObject, read_jsonl_file
from core.io.problems import FormatError, Problem
from core.transcript.loader import parse_read

if TYPE_CHECKING:
    from core.openclaudecode.sessions_table import SessionRow
    from core.transcript.model import Session

FORMAT = "openclaudecode"
FORMAT_KEY = "memlensFormat"
"""Header key marking a session read from OpenClaudeCode (memlens's, not the agent's)."""
READ_ONLY = (
    "is an OpenClaudeCode transcript: memlens reads this format but never writes it "
    "(no compaction on demand, no edit). Compact it with the agent (compactSession), "
    "or keep this dry run."
)
"""The refusal of a write, after the session's path (``header[FORMAT_KEY] == FORMAT``)."""


def _iso(ms: int | None) -> str:
    if ms is None:
        return ""
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")
    except (OverflowError, OSError, ValueError):
        return ""


def _header(first: Any, session_id: str, row: SessionRow | None) -> dict[str, Any]:
    header = dict(first) if isinstance(first, dict) else {"type": "session"}
    header["occVersion"] = header.get("version")
    header["version"] = 1  # entries without ids, chained in file order
    if not isinstance(header.get("id"), str) or not header["id"]:
        header["id"] = session_id
    if row is not None:
        if row.session_key:
            header["sessionKey"] = row.session_key
        if not isinstance(header.get("timestamp"), str):
            header["timestamp"] = _iso(row.created_ms)
    header[FORMAT_KEY] = FORMAT
    return header


def load_occ_transcript(path: str | os.PathLike[str], row: SessionRow | None = None) -> Session:
    """Read an OpenClaudeCode transcript; *row* is its ``sessions`` row, when known.

    A file whose first line is not a ``session`` event (lost, damaged) still loads:
    the session id comes from *row* or the file name, with a warning.

    Raises
    ------
    FormatError
        When the file cannot be read or holds no JSON object at all.
    """
    name = os.fspath(path)
    try:
        read = read_jsonl_file(name)
    except FileNotFoundError as exc:
        raise FormatError(name, f"cannot read: {exc.strerror or exc}") from exc
    if not read.objects:
        raise FormatError(name, "not an OpenClaudeCode transcript: no JSON object in the file")
    session_id = (
        row.session_id if row is not None else os.path.basename(name).removesuffix(".jsonl")
    )
    first = read.objects[0]
    if isinstance(first.value, dict) and first.value.get("type") == "session":
        read.objects[0] = JsonlObject(
            first.line, _header(first.value, session_id, row), first.offset
        )
    else:
        read.problems.append(
            Problem(
                name,
                first.line,
                f"no session event before this line; read as session {session_id}",
                "warning",
            )
        )
        read.objects.insert(0, JsonlObject(0, _header(None, session_id, row), 0))
    session = parse_read(read, name)
    session.problems.extend(_check(session, row))
    return session


def _check(session: Session, row: SessionRow | None) -> list[Problem]:
    """Compactions' ``removedCount``, and the row's counts against the transcript (notes)."""
    out: list[Problem] = []
    for e in session.compaction_entries():
        removed = e.raw.get("removedCount")
        if removed is not None and not (
            isinstance(removed, int) and not isinstance(removed, bool) and removed >= 0
        ):
            out.append(
                Problem(
                    session.path,
                    e.line,
                    f"compaction removedCount {removed!r} is not a count",
                    "warning",
                )
            )
    if row is None:
        return out
    where = f"sessions table row {row.row} ({row.session_id})"
    messages = sum(1 for e in session.entries if e.type == "message")
    removed = sum(
        r for e in session.compaction_entries() if isinstance(r := e.raw.get("removedCount"), int)
    )
    # the agent counts what is left after its compactions removed messages
    if row.message_count is not None and row.message_count not in (messages, messages - removed):
        out.append(
            Problem(
                session.path,
                0,
                f"{where} says messageCount {row.message_count}; the transcript holds "
                f"{messages} message(s)",
                "info",
            )
        )
    compactions = len(session.compaction_entries())
    if row.compaction_count is not None and row.compaction_count < compactions:
        out.append(
            Problem(
                session.path,
                0,
                f"{where} says compactionCount {row.compaction_count}; the transcript holds "
                f"{compactions} compaction(s)",
                "info",
            )
        )
    return out
