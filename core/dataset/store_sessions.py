"""Sessions of a memory-context store opened alone, rebuilt from its archived segments.

A store folder (``segments.jsonl``, ``knowledge.jsonl``, ``vectors.bin``) holds no
transcript, but every segment names its ``sessionId`` (and often a ``sessionKey``
``agent:<id>:...``) with its role, text and time. Grouped by session and put in time
order, the segments are each session's archived user and assistant messages: enough
for a session list, a timeline and the context view, and their ids are the sessions
the Recall view searches. Tool calls, results, system prompts and compactions are not
archived, so they are not there; the sessions are read-only (their path names no file).
"""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from core.io.jsonio import JsonlObject, JsonlRead
from core.io.problems import FormatError
from core.transcript.loader import parse_read

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.store.segments import Segment
    from core.transcript.model import Session

STORAGE = "segments"
"""``SessionSummary.storage`` of a session rebuilt from segments."""
STORE_AGENT = "memory-context"
"""The agent named for segments without a ``sessionKey`` of the form ``agent:<id>:...``."""


def store_session_path(segments_path: str, session_id: str) -> str:
    """The path a rebuilt session is known by: ``<store>/segments.jsonl#<sessionId>``."""
    return f"{segments_path}#{session_id}"


def is_store_session_path(path: str) -> bool:
    """Whether *path* names a session rebuilt from segments (no transcript on disk)."""
    return "segments.jsonl#" in path and not os.path.exists(path)


def store_agent(segments: Sequence[Segment]) -> str:
    """The agent id in the first ``agent:<id>:...`` session key, else :data:`STORE_AGENT`."""
    for seg in segments:
        key = seg.session_key or ""
        parts = key.split(":")
        if len(parts) >= 2 and parts[0] == "agent" and parts[1]:
            return f"{parts[1]} ({STORE_AGENT})"
    return STORE_AGENT


def _iso(ms: int) -> str:
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")
    except (OverflowError, OSError, ValueError):
        return ""


def _entry_id(segment_id: str, taken: set[str]) -> str:
    """The segment's id as the entry's (unique in the session; a repeat gets a suffix)."""
    if segment_id not in taken:
        return segment_id
    digest = hashlib.sha256(f"{segment_id}:{len(taken)}".encode()).hexdigest()[:8]
    return f"{segment_id}-{digest}"


def rebuild_session(segments_path: str, session_id: str, segments: Sequence[Segment]) -> Session:
    """One session of *segments* (all of *session_id*), oldest first, as a transcript.

    Each segment becomes a ``message`` entry whose id is the segment's id, so a message
    and its segment are one click apart. Equal times keep file order.

    Raises
    ------
    FormatError
        When *segments* is empty.
    """
    if not segments:
        raise FormatError(segments_path, f"no segment of session {session_id}")
    ordered = sorted(segments, key=lambda s: (s.timestamp, s.line))
    path = store_session_path(segments_path, session_id)
    key = next((s.session_key for s in ordered if s.session_key), None)
    header: dict[str, object] = {
        "type": "session",
        "version": 3,
        "id": session_id,
        "timestamp": _iso(ordered[0].timestamp),
        "cwd": "",
    }
    if key:
        header["sessionKey"] = key
    objects = [JsonlObject(0, header, 0)]
    taken: set[str] = set()
    parent: str | None = None
    for seg in ordered:
        eid = _entry_id(seg.id, taken)
        taken.add(eid)
        message = {
            "role": seg.role,
            "content": [{"type": "text", "text": seg.content}],
            "timestamp": seg.timestamp,
        }
        entry = {
            "type": "message",
            "id": eid,
            "parentId": parent,
            "timestamp": _iso(seg.timestamp),
            "message": message,
        }
        objects.append(JsonlObject(seg.line, entry, 0))
        parent = eid
    session = parse_read(JsonlRead(objects), path)
    session.size = 0  # no file of its own: live mode finds nothing to follow
    return session


def rebuild_sessions(
    segments_path: str | os.PathLike[str], segments: Sequence[Segment]
) -> list[tuple[Session, str]]:
    """Every session of *segments* and its agent, in the order their first segment appears."""
    name = os.fspath(segments_path)
    groups: dict[str, list[Segment]] = {}
    for seg in segments:
        groups.setdefault(seg.session_id, []).append(seg)
    return [(rebuild_session(name, sid, g), store_agent(g)) for sid, g in groups.items()]
