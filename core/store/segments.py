"""``segments.jsonl``: the raw archive of memory-context.

Loading follows the agent's rules: a line is used only when ``id`` and
``sessionId`` are strings, ``role`` is user or assistant, ``content`` is a
string and ``timestamp`` a number; the first segment of each dedup key
(``sessionId:role:`` + 16 hex of sha256(content)) wins; segments older than
``evictionDays`` stay in the file but not in the warm set; beyond
``maxSegments`` the oldest are evicted, by timestamp, equal timestamps in file
order (see :func:`oldest_first`).
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.io import jsonio
from core.io.fsutil import AppendResult, append_lines
from core.io.jsstr import js_utf8
from core.io.problems import Problem
from core.io.timefmt import MAX_DATE_MS
from core.safety.redact import maybe_redact
from core.store.tagging import extract_entities, extract_topics
from core.transcript.tokens import estimate_text

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

DAY_MS = 24 * 60 * 60 * 1000


def dedup_key(session_id: str, role: str, content: str) -> str:
    """The agent's dedup key: ``sessionId:role:`` + 16 hex of sha256(content)."""
    digest = hashlib.sha256(js_utf8(content)).hexdigest()[:16]  # Node's UTF-8
    return f"{session_id}:{role}:{digest}"


def ids_by_dedup_key(segments: Iterable[Segment]) -> dict[str, str]:
    """Each dedup key's segment id: the first segment with that key, as the agent keeps."""
    ids: dict[str, str] = {}
    for seg in segments:
        ids.setdefault(dedup_key(seg.session_id, seg.role, seg.content), seg.id)
    return ids


@dataclass(frozen=True, slots=True)
class Segment:
    """One archived message."""

    id: str
    session_id: str
    role: str
    content: str
    timestamp: int
    tokens: int
    line: int
    session_key: str | None = None
    topics: tuple[str, ...] = ()
    entities: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The segment as a segments.jsonl object."""
        out: dict[str, Any] = {"id": self.id, "sessionId": self.session_id}
        if self.session_key is not None:
            out["sessionKey"] = self.session_key
        out.update(
            timestamp=self.timestamp,
            role=self.role,
            content=self.content,
            tokens=self.tokens,
            metadata={"topics": list(self.topics), "entities": list(self.entities)},
        )
        return out


@dataclass(slots=True)
class SegmentLoad:
    """What loading segments.jsonl found."""

    path: str
    segments: list[Segment]
    """The warm set, in file order."""
    lines: int = 0
    valid: int = 0
    duplicates: int = 0
    evicted_age: int = 0
    evicted_count: int = 0
    problems: list[Problem] = field(default_factory=list)
    size: int = 0


def oldest_first(timestamps: Sequence[int]) -> list[int]:
    """Positions ordered for ``maxSegments`` eviction: by timestamp, then position.

    File order is not age: the agent and memlens both append, and archived
    messages carry their own time, not the time of the append.
    """
    return sorted(range(len(timestamps)), key=lambda i: (timestamps[i], i))


def _segment_from(obj: Any, line: int) -> Segment | str:
    if not isinstance(obj, dict):
        return "not a JSON object"
    sid, session = obj.get("id"), obj.get("sessionId")
    if not isinstance(sid, str) or not isinstance(session, str):
        return "id and sessionId must be strings"
    role = obj.get("role")
    if role not in ("user", "assistant"):
        return f"role must be user or assistant, not {role!r}"
    content, ts = obj.get("content"), obj.get("timestamp")
    if not isinstance(content, str):
        return "content must be a string"
    if isinstance(ts, bool) or not isinstance(ts, (int, float)):
        return "timestamp must be a number"
    tokens = obj.get("tokens")
    meta = obj.get("metadata")
    topics: tuple[str, ...] = ()
    entities: tuple[dict[str, Any], ...] = ()
    if isinstance(meta, dict):
        if isinstance(meta.get("topics"), list):
            topics = tuple(t for t in meta["topics"] if isinstance(t, str))
        if isinstance(meta.get("entities"), list):
            entities = tuple(e for e in meta["entities"] if isinstance(e, dict))
    key = obj.get("sessionKey")
    return Segment(
        id=sid,
        session_id=session,
        role=role,
        content=content,
        timestamp=int(ts),
        tokens=int(tokens) if isinstance(tokens, (int, float)) else estimate_text(content),
        line=line,
        session_key=key if isinstance(key, str) else None,
        topics=topics,
        entities=entities,
    )


def parse_segments(
    data: bytes,
    name: str,
    *,
    max_segments: int = 20000,
    eviction_days: float = 90,
    now_ms: int | None = None,
) -> SegmentLoad:
    """Parse segments.jsonl bytes into the warm set (see module docstring)."""
    with jsonio.gc_paused():
        return _parse(jsonio.read_jsonl(data, name), name, max_segments, eviction_days, now_ms)


def _parse(
    read: jsonio.JsonlRead,
    name: str,
    max_segments: int,
    eviction_days: float,
    now_ms: int | None,
) -> SegmentLoad:
    result = SegmentLoad(name, [], problems=read.problems, size=read.size)
    result.lines = read.lines
    now = int(time.time() * 1000) if now_ms is None else now_ms
    cutoff = now - eviction_days * DAY_MS if eviction_days > 0 else None
    seen: set[str] = set()
    warm: list[Segment] = []
    for rec in read.objects:
        seg = _segment_from(rec.value, rec.line)
        if isinstance(seg, str):
            result.problems.append(Problem(name, rec.line, f"segment skipped: {seg}"))
            continue
        result.valid += 1
        if not -MAX_DATE_MS <= seg.timestamp <= MAX_DATE_MS:
            result.problems.append(
                Problem(
                    name,
                    rec.line,
                    f"timestamp {rec.value.get('timestamp')!r:.30} is outside the dates "
                    "JavaScript can hold; shown without a time",
                    "warning",
                )
            )
        if cutoff is not None and seg.timestamp < cutoff:
            result.evicted_age += 1
            continue
        key = dedup_key(seg.session_id, seg.role, seg.content)
        if key in seen:
            result.duplicates += 1
            continue
        seen.add(key)
        warm.append(seg)
    if max_segments >= 0 and len(warm) > max_segments:
        result.evicted_count = len(warm) - max_segments
        gone = set(oldest_first([s.timestamp for s in warm])[: result.evicted_count])
        warm = [s for i, s in enumerate(warm) if i not in gone]
    result.segments = warm
    return result


def load_segments(
    path: str | os.PathLike[str],
    *,
    max_segments: int = 20000,
    eviction_days: float = 90,
    now_ms: int | None = None,
) -> SegmentLoad:
    """Read segments.jsonl (a missing file is an empty store).

    Raises
    ------
    FormatError
        When the file exists but cannot be read or is not a regular file (a
        FIFO, a device: never opened).
    """
    name = os.fspath(path)
    with jsonio.gc_paused():
        try:
            read = jsonio.read_jsonl_file(name)
        except FileNotFoundError:
            return SegmentLoad(name, [])
        return _parse(read, name, max_segments, eviction_days, now_ms)


def make_segment(
    session_id: str,
    role: str,
    content: str,
    *,
    timestamp: int | None = None,
    session_key: str | None = None,
    redaction: bool = True,
    new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
) -> Segment:
    """Build a new segment as the agent would archive it (redacted, tagged)."""
    if role not in ("user", "assistant"):
        raise ValueError(f"a segment's role is user or assistant, not {role!r}")
    text = maybe_redact(content, redaction)
    return Segment(
        id=new_id(),
        session_id=session_id,
        role=role,
        content=text,
        timestamp=int(time.time() * 1000) if timestamp is None else timestamp,
        tokens=estimate_text(text),
        line=0,
        session_key=session_key,
        topics=tuple(extract_topics(text)),
        entities=tuple(e.to_json() for e in extract_entities(text)),
    )


def append_segments(path: str | os.PathLike[str], segments: list[Segment]) -> AppendResult:
    """Append segments as whole lines in one write."""
    payload = b"".join(jsonio.dumps_line(s.to_json()) for s in segments)
    return append_lines(path, payload)
