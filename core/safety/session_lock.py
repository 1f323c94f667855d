"""The per-session job lane: one compaction at a time per transcript, app and CLI alike.

A lane is a lock file in memlens's own data folder (``<data>/locks/``, never in
the agent's folder), named after the SHA-256 of the transcript's real path, so
the app and the CLI of the same user meet on the same file. It holds one JSON
object: ``{"pid", "host", "createdAt" (ISO), "time" (epoch s), "starttime"?,
"tool", "transcript", "token"}``. It is created with its content in one step
(a temp file hard-linked into place, which fails if a lock exists), and removed
on release, whatever the outcome.

A lock is stale (and is taken over) when its process is gone: same host and the
pid is dead, or the pid now belongs to a process started at another time (Linux
``/proc/<pid>/stat`` start time, as OpenClaw records it), or the lock was taken
before the system last started (:func:`boot_time`; where no start time can be
read, macOS, that is what tells a pid reused after a reboot). A lock from another
host, or one whose content cannot be read, is stale only once it is older than
:data:`STALE_SECONDS` (an unreadable one after :data:`GARBLED_GRACE_SECONDS`).

OpenClaw's own session write lock is honoured too, never taken or removed: the
``<transcript>.lock`` sidecar of its file lock (``{"pid", "createdAt",
"starttime"?}``, see :func:`agent_lock_holder`). While it is held by a live
process memlens does not write the transcript. Only older OpenClaw releases
take that lock: from 2026.9.6 on ``acquireSessionWriteLock`` is a no-op and the
gateway fences its writes with the session entry's ``lifecycleRevision`` and
``activeWriterRunId`` instead (see :mod:`core.compaction.run`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import socket
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import platformdirs

from core.io import jsonio

STALE_SECONDS = 30 * 60.0
"""Age after which a lock whose owner cannot be checked is stale (OpenClaw's
``DEFAULT_SESSION_WRITE_LOCK_STALE_MS`` is 30 minutes too)."""
GARBLED_GRACE_SECONDS = 10.0
"""How long an unreadable lock file is respected (it may be in the middle of being made)."""
MAX_LOCK_BYTES = 64 << 10


def memlens_data_dir() -> Path:
    """Memlens's data folder (``MEMLENS_DATA_DIR`` overrides); the app's too."""
    override = os.environ.get("MEMLENS_DATA_DIR")
    return Path(override) if override else Path(platformdirs.user_data_dir("memlens"))


def lock_dir() -> Path:
    """Where lane locks live: ``<data>/locks``."""
    return memlens_data_dir() / "locks"


def _real(transcript: str | os.PathLike[str]) -> str:
    return os.path.normcase(os.path.realpath(os.fspath(transcript)))


def lock_path_for(transcript: str | os.PathLike[str], folder: Path | None = None) -> Path:
    """The lane lock file of *transcript* (by its real path)."""
    digest = hashlib.sha256(_real(transcript).encode("utf-8", "surrogateescape")).hexdigest()
    return (folder if folder is not None else lock_dir()) / f"{digest[:40]}.lock"


def agent_lock_path(transcript: str | os.PathLike[str]) -> Path:
    """OpenClaw's write-lock sidecar of *transcript*: ``<transcript>.lock``."""
    return Path(os.fspath(transcript) + ".lock")


# -- processes -----------------------------------------------------------------------------------


def process_start_time(pid: int) -> int | None:
    """Start time of *pid* in clock ticks since boot (Linux ``/proc``; None elsewhere).

    Field 22 of ``/proc/<pid>/stat``, counted after the command's closing
    parenthesis as OpenClaw's ``getProcessStartTime`` does.
    """
    if pid <= 0 or pid > MAX_PID or not sys.platform.startswith("linux"):
        return None
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:
            stat = fh.read()
    except OSError:
        return None
    end = stat.rfind(")")
    if end < 0:
        return None
    fields = stat[end + 1 :].split()
    try:
        value = int(fields[19])
    except (IndexError, ValueError):
        return None
    return value if value >= 0 else None


BOOT_MARGIN_SECONDS = 120.0
"""How much earlier than the boot time a lock must be dated to be from before the boot
(the wall clock may have been set meanwhile)."""

_boot: list[float | None] = []


def _read_boot_time() -> float | None:
    platform = str(sys.platform)  # not narrowed: every branch is checked on every platform
    if platform.startswith("linux"):
        try:
            return time.time() - time.clock_gettime(time.CLOCK_BOOTTIME)  # counts suspend
        except (AttributeError, OSError):
            return None
    if platform == "darwin" or "bsd" in platform:
        import re
        import subprocess

        try:
            out = subprocess.run(
                ["sysctl", "-n", "kern.boottime"],
                capture_output=True,
                text=True,
                timeout=2,
                check=True,
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return None
        found = re.search(r"sec\s*=\s*(\d+)", out)  # "{ sec = 1700000000, usec = 1 } ..."
        return float(found.group(1)) if found else None
    return None


def boot_time() -> float | None:
    """When the system started (epoch seconds), or None when it cannot be told.

    Linux: the wall clock minus ``CLOCK_BOOTTIME`` (time asleep included, unlike
    ``time.monotonic``); macOS and the BSDs: ``sysctl kern.boottime``. Read once.
    """
    if not _boot:
        _boot.append(_read_boot_time())
    return _boot[0]


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("State:"):
                    return line.split()[1:2] == ["Z"]
    except OSError:
        pass
    return False


MAX_PID = 2**31 - 1
"""Largest pid a process can have (Linux's ``pid_max`` is at most 2**22, others 2**31 - 1)."""


def pid_dead(pid: int) -> bool:
    """True only when *pid* is certainly not running (invalid, gone or a zombie).

    A pid no process can have (0, negative, past :data:`MAX_PID`: a garbled lock
    file) is dead; so is one ``os.kill`` cannot even take (``OverflowError``).
    """
    if pid <= 0 or pid > MAX_PID:
        return True
    if sys.platform == "win32":  # pragma: no cover - os.kill(pid, 0) would kill it there
        import ctypes

        kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined,unused-ignore]
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return kernel32.GetLastError() == 87  # ERROR_INVALID_PARAMETER: no such process
        code = ctypes.c_ulong()
        try:
            kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        finally:
            kernel32.CloseHandle(handle)
        return code.value != 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return True
    except PermissionError:
        return False
    except OSError:
        return False
    return sys.platform.startswith("linux") and _zombie(pid)


# -- holders -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LockHolder:
    """Who holds a lock, as its file says."""

    path: Path
    pid: int | None
    host: str | None
    created: float | None
    """Epoch seconds the lock was taken (None when the file does not say)."""
    starttime: int | None = None
    tool: str = ""
    token: str = ""
    garbled: bool = False
    """The file could not be read as a lock (its mtime stands for *created*)."""

    def describe(self) -> str:
        """``memlens compact (pid 123 on host, since 2026-11-25 14:03:10 UTC)``."""
        who = self.tool or "a process"
        bits = []
        if self.pid is not None:
            bits.append(f"pid {self.pid}" + (f" on {self.host}" if self.host else ""))
        if self.created is not None:
            stamp = datetime.fromtimestamp(self.created, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
            bits.append(f"since {stamp}")
        if self.garbled:
            bits.append("unreadable lock file")
        return f"{who} ({', '.join(bits)})" if bits else who


def _iso_seconds(text: Any) -> float | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _pid(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def read_holder(path: Path) -> LockHolder | None:
    """The holder recorded in lock file *path*; None when there is no such file."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_LOCK_BYTES + 1)
        mtime = os.stat(path).st_mtime
    except FileNotFoundError:
        return None
    except OSError:
        return LockHolder(path, None, None, None, garbled=True)
    try:
        obj = jsonio.loads(data) if len(data) <= MAX_LOCK_BYTES else None
    except ValueError:
        obj = None
    if not isinstance(obj, dict):
        return LockHolder(path, None, None, mtime, garbled=True)
    created = obj.get("time")
    when = (
        float(created)
        if isinstance(created, int | float) and not isinstance(created, bool)
        else _iso_seconds(obj.get("createdAt"))
    )
    host, tool, token = obj.get("host"), obj.get("tool"), obj.get("token")
    start = obj.get("starttime")
    return LockHolder(
        path,
        _pid(obj.get("pid")),
        host if isinstance(host, str) else None,
        when,
        start if isinstance(start, int) and not isinstance(start, bool) and start >= 0 else None,
        tool if isinstance(tool, str) else "",
        token if isinstance(token, str) else "",
        garbled=_pid(obj.get("pid")) is None and when is None,
    )


def stale_reason(holder: LockHolder, *, now: float | None = None) -> str | None:
    """Why *holder*'s lock is stale, or None while it must be respected.

    The rules of OpenClaw's ``shouldRemoveDeadOwnerOrExpiredLock``: a recorded pid
    decides (dead, or started at another time: stale); without one, the age. A
    lock from another host cannot be checked by pid: only its age counts.
    """
    now = time.time() if now is None else now
    age = None if holder.created is None else now - holder.created
    if holder.garbled:
        return "an unreadable lock" if age is None or age > GARBLED_GRACE_SECONDS else None
    local = holder.host is None or holder.host == socket.gethostname()
    if holder.pid is not None and local:
        if pid_dead(holder.pid):
            return f"its process {holder.pid} is gone"
        if holder.starttime is not None:
            seen = process_start_time(holder.pid)
            if seen is not None and seen != holder.starttime:
                return f"pid {holder.pid} is now another process"
        boot = boot_time()
        if boot is not None and holder.created is not None:
            if holder.created < boot - BOOT_MARGIN_SECONDS:
                # its process died with the system: the pid now is another one's
                return f"taken before the system started (pid {holder.pid} is another process)"
        return None
    if age is None or age > STALE_SECONDS:
        return f"older than {STALE_SECONDS / 60:.0f} minutes"
    return None


def agent_lock_holder(transcript: str | os.PathLike[str]) -> LockHolder | None:
    """OpenClaw's live write lock on *transcript*, or None when none is held.

    OpenClaw (``file-lock-*.mjs`` ``createCurrentProcessLockPayload``) writes
    ``{"pid", "createdAt", "starttime"?}`` to ``<file>.lock``; its stale rule
    (``stale-lock-file-*.mjs``) is the one of :func:`stale_reason`. memlens only
    reads it: a stale one is ignored, never removed.
    """
    path = agent_lock_path(transcript)
    holder = read_holder(path)
    if holder is None or stale_reason(holder) is not None:
        return None
    return LockHolder(
        holder.path,
        holder.pid,
        holder.host,
        holder.created,
        holder.starttime,
        holder.tool or "the agent (OpenClaw session write lock)",
        holder.token,
        holder.garbled,
    )


class SessionBusy(Exception):
    """Another compaction of the session is running (or the agent holds its write lock)."""

    def __init__(self, transcript: str, holder: LockHolder, *, agent: bool = False) -> None:
        self.transcript = transcript
        self.holder = holder
        self.agent = agent
        if agent:
            text = (
                f"{transcript} is locked by {holder.describe()}: the agent is writing it "
                f"({holder.path}). Try again when it is done."
            )
        else:
            text = (
                f"another compaction of {transcript} is running: {holder.describe()}. "
                f"Wait for it to finish (its lock: {holder.path})."
            )
        super().__init__(text)


# -- the lane ------------------------------------------------------------------------------------


class SessionLock:
    """A held lane; :meth:`release` (or leaving the ``with`` block) frees it."""

    def __init__(self, transcript: str, path: Path, token: str) -> None:
        self.transcript = transcript
        self.path = path
        self.token = token
        self.stale_taken: str | None = None
        """Why a stale lock was taken over when this one was acquired (None: there was none)."""
        self._held = True

    @property
    def held(self) -> bool:
        """Whether this lock is still ours (not released, its file still names us)."""
        if not self._held:
            return False
        holder = read_holder(self.path)
        return holder is not None and holder.token == self.token

    def release(self) -> None:
        """Remove the lock file if it is still ours; safe to call twice."""
        if not self._held:
            return
        self._held = False
        holder = read_holder(self.path)
        if holder is not None and holder.token == self.token:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()

    def __enter__(self) -> SessionLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"SessionLock({self.transcript!r}, held={self._held})"


def _create(path: Path, data: bytes) -> bool:
    """Create *path* holding *data* in one step; False when it exists already."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        # no fsync: after a crash the lock is stale anyway (a dead pid, or garbled)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        except OSError:  # no hard links here: exclusive create, then the content
            try:
                fd2 = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                return False
            with os.fdopen(fd2, "wb") as fh:
                fh.write(data)
        return True
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _break(path: Path, holder: LockHolder) -> None:
    """Remove the stale lock of *holder*, unless someone replaced it meanwhile."""
    aside = path.with_name(f".{path.name}.stale-{secrets.token_hex(4)}")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return  # another memlens broke it first
    moved = read_holder(aside)
    if moved is not None and moved.token != holder.token and not moved.garbled:
        # a fresh lock was taken between our read and the rename: give it back
        with contextlib.suppress(OSError):
            os.link(aside, path)
    with contextlib.suppress(OSError):
        os.unlink(aside)


def acquire(
    transcript: str | os.PathLike[str],
    *,
    tool: str = "memlens",
    folder: Path | None = None,
    honour_agent: bool = True,
) -> SessionLock:
    """Take the lane of *transcript*, or raise :class:`SessionBusy` naming the holder.

    Parameters
    ----------
    tool
        Who is asking (``memlens compact``, ``memlens app``): shown to a refused
        second compaction.
    folder
        The lock folder (default :func:`lock_dir`).
    honour_agent
        Also refuse while OpenClaw holds its write lock on the transcript.

    Raises
    ------
    SessionBusy
        With the holder; nothing was written.
    OSError
        When the lock folder cannot be written.
    """
    name = os.fspath(transcript)
    if honour_agent:
        agent = agent_lock_holder(name)
        if agent is not None:
            raise SessionBusy(name, agent, agent=True)
    path = lock_path_for(name, folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_hex(16)
    now = time.time()
    record: dict[str, Any] = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "createdAt": datetime.fromtimestamp(now, UTC).isoformat(timespec="milliseconds"),
        "time": round(now, 3),
        "tool": tool,
        "transcript": _real(name),
        "token": token,
    }
    start = process_start_time(os.getpid())
    if start is not None:
        record["starttime"] = start
    data = jsonio.dumps(record) + b"\n"
    taken_over: str | None = None
    for _ in range(5):
        if _create(path, data):
            lock = SessionLock(name, path, token)
            lock.stale_taken = taken_over
            return lock
        holder = read_holder(path)
        if holder is None:
            continue  # released meanwhile
        reason = stale_reason(holder)
        if reason is None:
            raise SessionBusy(name, holder)
        taken_over = f"took over the stale lock of {holder.describe()}: {reason}"
        _break(path, holder)
    holder = read_holder(path)
    raise SessionBusy(name, holder or LockHolder(path, None, None, None, garbled=True))


def check_agent_lock(transcript: str | os.PathLike[str]) -> None:
    """Raise :class:`SessionBusy` while OpenClaw holds its write lock on *transcript*."""
    agent = agent_lock_holder(transcript)
    if agent is not None:
        raise SessionBusy(os.fspath(transcript), agent, agent=True)
