"""The activity log: one JSON line per write memlens made, to an agent's files or its own.

It keeps where each write went (file, byte offset, length, line, number of lines,
backup), whose file it was (``owner``: the agent's data, or memlens's own files such
as the demo data and the vector cache) and a short redacted summary, never the
content written. The app points it at ``activity.jsonl`` in the user's data
directory and registers :meth:`ActivityLog.record` as a write observer of
:mod:`core.io.fsutil`.

Whose file a write touched is decided when it is logged: a write made inside
:func:`own_writes` (generating the demo data) is memlens's own; otherwise the file's
place decides (:class:`OwnFiles`: under memlens's data, cache or settings folders,
unless under an agent's data kept there, such as the demo home).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from core.io import jsonio
from core.io.fsutil import WriteRecord
from core.io.problems import Problem
from core.io.text import one_line
from core.safety.activity_owner import AGENT, MEMLENS, OWNERS, OwnFiles, own_scope
from core.safety.redact import redact

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from core.io.writes import PlannedWrite, WriteAction

log = logging.getLogger(__name__)

SUMMARY_CHARS = 160
"""Longest summary kept (longer ones end with an ellipsis)."""
EXPECT_SECONDS = 120.0
"""How long a confirmed write's summary waits for its write."""
MAX_BYTES = 8 << 20
"""Size at which the log is moved to ``<name>.1`` and a new one is started."""
ACTIONS = ("append", "rewrite", "create", "backup")
EVENT_KINDS = ("compaction",)
"""Kinds of :class:`ActivityEvent` (a line whose ``action`` is one of them is an event)."""
PHASES = ("started", "finished", "failed", "cancelled")


def default_activity_path() -> Path:
    """``<data>/activity.jsonl``: the log the app shows (the CLI's compactions go there too)."""
    from core.safety.session_lock import memlens_data_dir

    return memlens_data_dir() / "activity.jsonl"


@dataclass(frozen=True, slots=True)
class ActivityEvent:
    """A step of a job around the writes, e.g. a compaction started or finished.

    Attributes
    ----------
    time
        Epoch seconds.
    path
        The file the job is about (the transcript).
    phase
        ``started`` (before any write), then one of ``finished``, ``failed``,
        ``cancelled``.
    session
        The session id.
    tokens_before, tokens_after
        The context before the compaction and (``finished``) after it.
    summary
        One short, redacted line for people.
    source
        Who ran it: ``memlens app``, ``memlens compact``.
    kind
        ``compaction`` (a job's failure, shown beside: ``job``).
    owner
        ``memlens`` for a job about memlens's own files; "" lets :func:`owner_of`
        decide by kind.
    """

    time: float
    path: str
    phase: str
    session: str = ""
    tokens_before: int | None = None
    tokens_after: int | None = None
    summary: str = ""
    source: str = ""
    kind: str = "compaction"
    owner: str = ""

    @property
    def action(self) -> str:
        """The kind, shown and filtered like a write's action."""
        return self.kind

    @property
    def label(self) -> str:
        """``compaction started``."""
        return f"{self.kind} {self.phase}"


@dataclass(frozen=True, slots=True)
class LoggedWrite(WriteRecord):
    """A write as the activity log keeps it: the record and whose file it touched.

    ``owner`` is :data:`MEMLENS` for memlens's own file, else "" (the file keeps
    ``"owner": "memlens"`` on memlens's own lines only): a write to the agent's
    data, or a line logged before owners were kept, which :meth:`ActivityLog.owner`
    decides from its place.
    """

    owner: str = ""


ActivityItem = WriteRecord | ActivityEvent


def owner_of(item: ActivityItem) -> str:
    """Whose file *item* touched, as logged: a compaction's is the agent's; a job's, memlens's."""
    owner = getattr(item, "owner", "")
    if owner in OWNERS:
        return str(owner)
    if isinstance(item, ActivityEvent) and item.kind not in EVENT_KINDS:
        return MEMLENS  # a job of memlens's own that failed: no agent file was written
    return AGENT


def _logged(record: WriteRecord, owner: str) -> LoggedWrite:
    values = {f.name: getattr(record, f.name) for f in fields(WriteRecord)}
    return LoggedWrite(**values, owner=owner)


def short_summary(text: str, limit: int = SUMMARY_CHARS) -> str:
    """*text* redacted, on one line, at most *limit* characters."""
    return one_line(redact(text), limit)


def default_summary(record: WriteRecord) -> str:
    """What a write says about itself when no confirmed plan described it."""
    noun = "line" if record.lines == 1 else "lines"
    if record.action == "append":
        return f"appended {record.lines} {noun}"
    if record.action == "backup":
        name = Path(record.backup).name if record.backup else "a backup"
        return f"backup copy to {name}"
    verb = "rewrote" if record.action == "rewrite" else "created"
    return f"{verb} the file ({record.lines} {noun})"


def to_json(record: WriteRecord) -> dict[str, Any]:
    """The JSON object of one activity line (no content, only where and how much).

    A backup's line also has ``sha256``, the hash of the verified copy.
    """
    out: dict[str, Any] = {
        "time": round(record.time, 3),
        "file": record.path,
        "action": record.action,
        "offset": record.offset,
        "length": record.length,
        "line": record.first_line,
        "lines": record.lines,
        "backup": record.backup,
        "summary": short_summary(record.summary),
    }
    if record.sha256 is not None:
        out["sha256"] = record.sha256
    if getattr(record, "owner", "") == MEMLENS:  # a line without an owner is the agent's
        out["owner"] = MEMLENS
    return out


def event_to_json(event: ActivityEvent) -> dict[str, Any]:
    """The JSON object of one event line."""
    out: dict[str, Any] = {
        "time": round(event.time, 3),
        "file": event.path,
        "action": event.kind,
        "phase": event.phase,
        "session": event.session,
        "tokensBefore": event.tokens_before,
        "tokensAfter": event.tokens_after,
        "source": event.source,
        "summary": short_summary(event.summary),
    }
    if owner_of(event) == MEMLENS:
        out["owner"] = MEMLENS
    return out


def _opt_int(obj: dict[str, Any], key: str) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{key!r} must be a non-negative integer or null")
    return value


def _line_head(obj: Any, actions: Sequence[str]) -> tuple[float, str, str]:
    """``(time, file, action)`` of an activity line, checked."""
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    stamp, path, action = obj.get("time"), obj.get("file"), obj.get("action")
    if isinstance(stamp, bool) or not isinstance(stamp, int | float):
        raise ValueError("'time' must be a number")
    if not isinstance(path, str) or not path:
        raise ValueError("'file' must be a file name")
    if action not in actions:
        raise ValueError(f"'action' must be one of {', '.join(actions)}")
    return float(stamp), path, str(action)


def event_from_json(obj: Any) -> ActivityEvent:
    """The event of one activity line.

    Raises
    ------
    ValueError
        When a field is missing or has the wrong type.
    """
    stamp, path, kind = _line_head(obj, EVENT_KINDS)
    phase = obj.get("phase")
    if phase not in PHASES:
        raise ValueError(f"'phase' must be one of {', '.join(PHASES)}")
    session, summary, source = obj.get("session"), obj.get("summary"), obj.get("source")
    return ActivityEvent(
        time=stamp,
        path=path,
        phase=phase,
        session=session if isinstance(session, str) else "",
        tokens_before=_opt_int(obj, "tokensBefore"),
        tokens_after=_opt_int(obj, "tokensAfter"),
        summary=summary if isinstance(summary, str) else "",
        source=source if isinstance(source, str) else "",
        kind=kind,
        owner=_owner_field(obj),
    )


def _owner_field(obj: dict[str, Any]) -> str:
    owner = obj.get("owner")
    return owner if owner in OWNERS else ""


def _int(obj: dict[str, Any], key: str) -> int:
    value = obj.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{key!r} must be a non-negative integer")
    return value


def from_json(obj: Any) -> LoggedWrite:
    """The record of one activity line (``owner`` "" when the line does not say).

    Raises
    ------
    ValueError
        When a field is missing or has the wrong type.
    """
    stamp, path, action = _line_head(obj, ACTIONS)
    backup, summary = obj.get("backup"), obj.get("summary", "")
    digest = obj.get("sha256")
    return LoggedWrite(
        time=stamp,
        path=path,
        action=cast("WriteAction", action),
        offset=_int(obj, "offset"),
        length=_int(obj, "length"),
        first_line=_int(obj, "line"),
        lines=_int(obj, "lines"),
        backup=backup if isinstance(backup, str) else None,
        summary=summary if isinstance(summary, str) else "",
        sha256=digest if isinstance(digest, str) else None,
        owner=_owner_field(obj),
    )


@dataclass(slots=True)
class ActivityRead:
    """What :func:`load_activity` found."""

    records: list[WriteRecord] = field(default_factory=list)
    """The writes (a backup's hash, a write's place): what older readers expect."""
    problems: list[Problem] = field(default_factory=list)
    events: list[ActivityEvent] = field(default_factory=list)
    items: list[ActivityItem] = field(default_factory=list)
    """Writes and events together, in file order (what the Activity view shows)."""


def load_activity(path: str | os.PathLike[str]) -> ActivityRead:
    """Read an activity file; bad lines become problems (file and line), never errors.

    A missing file is an empty log.
    """
    name = os.fspath(path)
    out = ActivityRead()
    try:
        data = Path(name).read_bytes()
    except FileNotFoundError:
        return out
    except OSError as exc:
        out.problems.append(Problem(name, 0, f"cannot read: {exc.strerror or exc}"))
        return out
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            obj = jsonio.loads(raw)
            if isinstance(obj, dict) and obj.get("action") in EVENT_KINDS:
                event = event_from_json(obj)
                out.events.append(event)
                out.items.append(event)
            else:
                record = from_json(obj)
                out.records.append(record)
                out.items.append(record)
        except ValueError as exc:  # orjson's JSONDecodeError is a ValueError too
            out.problems.append(Problem(name, number, f"bad activity line skipped: {exc}"))
    return out


def _same_file(a: str) -> str:
    return os.path.normcase(os.path.abspath(a))


@dataclass(frozen=True, slots=True)
class _Expected:
    path: str
    action: str
    summary: str
    until: float


def _matches(item: _Expected, record: WriteRecord, path: str) -> bool:
    """Whether a confirmed write describes *record* (whose file is *path*, normalised).

    A planned backup may name the file copied or the backup itself, whose name
    carries a time stamp and maybe a ``.N`` suffix decided only when it is made.
    """
    if record.action == "backup":
        return item.action == "backup" and (
            item.path == path or item.path.startswith(path + ".memlens-backup-")
        )
    same_action = item.action == record.action or (
        item.action == "rewrite" and record.action == "create"
    )
    return same_action and item.path == path


class ActivityLog:
    """Appends a line per write to *path* and tells its subscribers.

    Parameters
    ----------
    path
        The activity file (its folder is created on the first write).
    max_bytes
        Size at which the file is moved to ``<name>.1`` (the previous ``.1`` is
        replaced) before the next line.
    clock
        Epoch seconds (tests).
    own_files
        Which files are memlens's own by their place (default: none; the app names
        its data, cache and settings folders).

    Notes
    -----
    :meth:`record` is safe to call from any thread (writes happen in workers);
    subscribers are called in the writing thread.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_bytes: int = MAX_BYTES,
        clock: Callable[[], float] = time.time,
        own_files: OwnFiles | None = None,
    ) -> None:
        self.path = Path(path)
        self.own_files = own_files or OwnFiles()
        """Which files are memlens's own (the app adds its cache and settings folders)."""
        self.max_bytes = max_bytes
        self.last_error: str | None = None
        """Why the last line could not be written (None after a good write)."""
        self._clock = clock
        self._lock = threading.Lock()
        self._expected: deque[_Expected] = deque()
        self._subscribers: list[Callable[[WriteRecord], object]] = []
        self._event_subscribers: list[Callable[[ActivityEvent], object]] = []

    def subscribe(self, fn: Callable[[WriteRecord], object]) -> None:
        """Call *fn* with each record once it is in the file (with its summary)."""
        with self._lock:
            if fn not in self._subscribers:
                self._subscribers.append(fn)

    def unsubscribe(self, fn: Callable[[WriteRecord], object]) -> None:
        """Stop calling *fn*."""
        with self._lock:
            if fn in self._subscribers:
                self._subscribers.remove(fn)

    def subscribe_events(self, fn: Callable[[ActivityEvent], object]) -> None:
        """Call *fn* with each :class:`ActivityEvent` once it is in the file.

        Separate from :meth:`subscribe`: write subscribers only ever get writes.
        """
        with self._lock:
            if fn not in self._event_subscribers:
                self._event_subscribers.append(fn)

    def unsubscribe_events(self, fn: Callable[[ActivityEvent], object]) -> None:
        """Stop calling *fn* with events."""
        with self._lock:
            if fn in self._event_subscribers:
                self._event_subscribers.remove(fn)

    def event(self, event: ActivityEvent) -> ActivityEvent:
        """Log *event* (summary redacted and shortened) and tell the event subscribers.

        Never raises, like :meth:`record`.
        """
        with self._lock:
            final = replace(
                event,
                time=round(event.time, 3),
                summary=short_summary(event.summary),
                owner=MEMLENS if owner_of(event) == MEMLENS else "",
            )
            try:
                self._append(jsonio.dumps_line(event_to_json(final)))
                self.last_error = None
            except OSError as exc:
                self.last_error = f"{self.path}: {exc.strerror or exc}"
                log.warning("activity log not written: %s", self.last_error)
            subscribers = list(self._event_subscribers)
        for fn in subscribers:
            try:
                fn(final)
            except Exception:
                log.exception("activity event subscriber %r failed", fn)
        return final

    def owner(self, item: ActivityItem) -> str:
        """Whose file *item* touched: as logged, else (an older line) from its place."""
        if getattr(item, "owner", "") in OWNERS or isinstance(item, ActivityEvent):
            return owner_of(item)
        return self.own_files.owner(item.path)

    def now(self) -> float:
        """The log's clock (epoch seconds)."""
        return self._clock()

    def expect(self, writes: Sequence[PlannedWrite]) -> None:
        """Remember the summaries of confirmed writes for the records they will make.

        The next record for the same file (and a matching action) takes the
        summary; an expectation not met within :data:`EXPECT_SECONDS` is dropped.
        """
        until = self._clock() + EXPECT_SECONDS
        with self._lock:
            for w in writes:
                self._expected.append(_Expected(_same_file(w.path), w.action, w.summary, until))

    def _take_summary(self, record: WriteRecord) -> str:
        now = self._clock()
        while self._expected and self._expected[0].until < now:
            self._expected.popleft()
        path = _same_file(record.path)
        for item in self._expected:
            if _matches(item, record, path):
                self._expected.remove(item)
                return item.summary
        return ""

    def record(self, record: WriteRecord) -> LoggedWrite:
        """Log *record* (a :func:`core.io.fsutil.add_write_observer` callback).

        The summary is the confirmed plan's, else the record's own, else
        :func:`default_summary`; it is redacted and shortened. Its owner is
        memlens inside :func:`own_writes` (the summary then starts with why),
        else :attr:`own_files` decides. Never raises: a failure to write the log
        is kept in :attr:`last_error` and logged.
        """
        why = own_scope()
        # Kept as the file keeps it: "memlens", or "" for the agent's (see LoggedWrite).
        owner = MEMLENS if why or self.own_files.owner(record.path) == MEMLENS else ""
        with self._lock:
            summary = self._take_summary(record) or record.summary or default_summary(record)
            if why:
                summary = f"{why}: {summary}"
            final = _logged(
                replace(record, time=round(record.time, 3), summary=short_summary(summary)), owner
            )
            try:
                self._append(jsonio.dumps_line(to_json(final)))
                self.last_error = None
            except OSError as exc:
                self.last_error = f"{self.path}: {exc.strerror or exc}"
                log.warning("activity log not written: %s", self.last_error)
            subscribers = list(self._subscribers)
        for fn in subscribers:
            try:
                fn(final)
            except Exception:
                log.exception("activity subscriber %r failed", fn)
        return final

    def _append(self, line: bytes) -> None:
        # Plain append, not core.io.fsutil: the log's own writes are not activity.
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            if self.path.stat().st_size + len(line) > self.max_bytes:
                self._rotate(len(line))
        except FileNotFoundError:
            pass
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)

    def _rotate(self, adding: int) -> None:
        """Move the full log to ``<name>.1``, once, though the app and the CLI both see it full.

        Under an exclusive ``flock`` of the log itself, the size is checked again
        on the file still under the name: a process that saw it full before
        another one rotated it finds a new, small file (or a lock on the moved
        one) and does not move it over the ``.1`` just made. Where there is no
        ``flock`` (Windows) it is moved as before, unlocked.
        """
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: an open file cannot be renamed
            os.replace(self.path, self.path.with_name(self.path.name + ".1"))
            return
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            held = os.fstat(fd)
            try:
                now = os.stat(self.path)
            except FileNotFoundError:
                return  # moved by another process
            if (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
                return  # another process rotated it while we waited
            if held.st_size + adding > self.max_bytes:
                os.replace(self.path, self.path.with_name(self.path.name + ".1"))
        finally:
            os.close(fd)  # releases the lock

    def load(self) -> ActivityRead:
        """The records in the file, oldest first (see :func:`load_activity`)."""
        return load_activity(self.path)
