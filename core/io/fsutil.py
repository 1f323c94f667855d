"""Safe writes to files an agent may also be using.

* An append is whole lines in one ``write`` on an ``O_APPEND`` descriptor; if the
  file does not end with a newline (an agent's line in progress, or a crash),
  our lines start on a fresh line so they are never glued to a partial one.
  The write is made by a helper process (:mod:`core.io.append_worker`), so even a
  SIGKILL of memlens in the middle of it leaves the file as it was or with the
  whole lines appended, never half a line.
* A rewrite is atomic: temp file in the same folder, fsync, rename, with the old
  file kept as a backup beside it.
* Every write is reported to the write observers (:func:`add_write_observer`)
  as a :class:`WriteRecord`: the activity log listens there.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.io import append_worker as worker
from core.io.append_client import helper
from core.io.problems import FormatError

if TYPE_CHECKING:
    from core.io.writes import WriteAction

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class AppendResult:
    """Where an append landed."""

    path: str
    offset: int
    """Byte offset of the first byte written."""
    length: int


@dataclass(frozen=True, slots=True)
class WriteRecord:
    """One write memlens made, as the activity log keeps it (never the content).

    Attributes
    ----------
    time
        Epoch seconds when the write completed.
    path
        The file written (for a backup: the file that was copied).
    action
        ``append``, ``rewrite``, ``create`` or ``backup``.
    offset, length
        The bytes written: for an append, exactly where they landed (a newline
        ending someone else's partial line is included); 0 and the size otherwise.
    first_line
        1-based line number of the first line memlens wrote (0 when unknown).
    lines
        How many lines were written.
    backup
        The backup file made (``backup``, or a ``rewrite`` that kept one).
    summary
        One short, redacted line for people; filled in by the activity log.
    sha256
        For a ``backup``: the SHA-256 (hex) of the copy, equal to the original's.
    """

    time: float
    path: str
    action: WriteAction
    offset: int
    length: int
    first_line: int
    lines: int
    backup: str | None = None
    summary: str = ""
    sha256: str | None = None
    """For a backup: the SHA-256 of the copy (verified equal to the original's)."""


WriteObserver = Callable[[WriteRecord], object]
_observers: list[WriteObserver] = []
_observers_lock = threading.Lock()


def add_write_observer(fn: WriteObserver) -> None:
    """Call *fn* with a :class:`WriteRecord` after every write this module makes.

    Observers run in the thread that wrote; an exception in one is logged and
    never reaches the writer (the write has happened by then).
    """
    with _observers_lock:
        if fn not in _observers:
            _observers.append(fn)


def remove_write_observer(fn: WriteObserver) -> None:
    """Stop calling *fn* (no error if it was not observing)."""
    with _observers_lock:
        if fn in _observers:
            _observers.remove(fn)


def _observed() -> list[WriteObserver]:
    with _observers_lock:
        return list(_observers)


def _notify(observers: list[WriteObserver], record: WriteRecord) -> None:
    for fn in observers:
        try:
            fn(record)
        except Exception:
            log.exception("write observer %r failed for %s", fn, record.path)


def _count_lines(data: bytes) -> int:
    """Lines in *data*: newlines, plus one for a last line without one."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def line_at(path: str | os.PathLike[str], offset: int, *, chunk: int = 1 << 20) -> int:
    """1-based number of the line that starts at byte *offset* (0 if unreadable).

    Counts the newlines before *offset*, a chunk at a time: fine for the
    occasional write, linear in the offset.
    """
    count = 0
    try:
        with open(path, "rb") as fh:
            left = offset
            while left > 0:
                data = fh.read(min(chunk, left))
                if not data:
                    break
                count += data.count(b"\n")
                left -= len(data)
    except OSError:
        return 0
    return count + 1


def read_file(path: str | os.PathLike[str]) -> bytes:
    """Read a whole file; any OS error becomes a :class:`FormatError` naming it."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise FormatError(name, f"cannot read: {exc.strerror or exc}") from exc


def append_lines(path: str | os.PathLike[str], payload: bytes) -> AppendResult:
    """Append *payload* (one or more whole lines, ending in a newline) in one write.

    Raises
    ------
    ValueError
        If *payload* does not end with a newline.
    OSError
        When the file cannot be written (nothing was appended then).
    """
    if not payload.endswith(b"\n"):
        raise ValueError("an append must be whole lines ending with a newline")
    name = os.fspath(path)
    done = helper.append(name, payload)
    offset, length = done if done is not None else worker.append_payload(name, payload)
    observers = _observed()
    if observers:
        glued = length - len(payload)  # the newline that ended a partial line, if any
        record = WriteRecord(
            time.time(),
            name,
            "append",
            offset,
            length,
            line_at(name, offset + glued),
            payload.count(b"\n"),
        )
        _notify(observers, record)
    return AppendResult(name, offset, length)


BACKUP_INFIX = ".memlens-backup-"
"""Between a file's name and the time stamp in the name of its backups."""
TEMP_INFIX = ".memlens-copying-"
"""In the name of a backup being copied (``.<name>.memlens-copying-XXXX.tmp``).

It starts with a dot and has neither :data:`BACKUP_INFIX` nor a time stamp in
it, so nothing takes it for a backup; one left by a killed copy is a stale temp
file (:mod:`core.safety.backups` prunes them).
"""
COPY_ATTEMPTS = 3
"""Copies tried when the file keeps changing during the copy (an agent appending)."""


_NO_HARD_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK})


class BackupChanged(OSError):
    """The file changed during every copy attempt: no backup was made."""


def backup_path(path: Path) -> Path:
    """Base name of the backup kept beside *path* (see :func:`make_backup`)."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    return path.with_name(f"{path.name}{BACKUP_INFIX}{stamp}")


def next_backup_path(path: str | os.PathLike[str]) -> Path:
    """The name a backup of *path* made now gets: the one a preview shows.

    :func:`backup_path`'s, with the next ``.N`` when that name is taken. Compute
    it once, show it, and hand it to :func:`make_backup` (``name=``): the file
    written is then the one the user saw, even though the write comes seconds
    after the preview (a stamp computed twice would differ).
    """
    base = backup_path(Path(path))
    n = _last_seq(base) + 1
    return base if n == 0 else base.with_name(f"{base.name}.{n}")


def _check_backup_name(src: Path, name: Path) -> None:
    """A planned backup name must be a backup's name beside *src* (never another file)."""
    if name.parent.resolve() != src.parent.resolve() or not name.name.startswith(
        src.name + BACKUP_INFIX
    ):
        raise ValueError(f"{name} is not the name of a backup of {src} beside it")


@dataclass(frozen=True, slots=True)
class _Copy:
    size: int
    lines: int
    sha256: str
    identity: tuple[int, int, int]
    """Inode, size and modification time of the original the copy was verified against."""


def file_digest(path: str | os.PathLike[str], *, chunk: int = 1 << 20) -> tuple[int, str]:
    """Size and SHA-256 (hex) of the bytes of *path*, read from the start to the end."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while data := fh.read(chunk):
            digest.update(data)
            size += len(data)
    return size, digest.hexdigest()


def _stamp(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _copy_once(src: Path, tmp: str) -> _Copy | None:
    """Copy *src* into the temp file *tmp*, fsync and verify it; None if *src* changed.

    The original's size and hash are those of the bytes read, and count only if
    the file is the same (inode, size, modification time) before and after the
    read: an agent appending meanwhile makes the copy stale, not wrong.
    """
    digest = hashlib.sha256()
    size = lines = 0
    last = b"\n"
    with open(src, "rb") as fh, open(tmp, "wb") as dst:
        before = os.fstat(fh.fileno())
        while chunk := fh.read(1 << 20):
            dst.write(chunk)
            digest.update(chunk)
            size += len(chunk)
            lines += chunk.count(b"\n")
            last = chunk[-1:]
        dst.flush()
        os.fsync(dst.fileno())
        after = os.fstat(fh.fileno())
    try:
        now = os.stat(src)
    except FileNotFoundError:
        return None  # replaced or removed meanwhile: what we copied is gone
    if not (_stamp(before) == _stamp(after) == _stamp(now) and size == after.st_size):
        return None
    copied = file_digest(tmp)
    if copied != (size, digest.hexdigest()):
        raise OSError(errno.EIO, f"the copy does not match {src} (size or SHA-256)", tmp)
    return _Copy(
        size,
        lines + (0 if last == b"\n" else 1),
        copied[1],
        (now.st_ino, now.st_size, now.st_mtime_ns),
    )


def _last_seq(base: Path) -> int:
    """The highest ``.N`` taken after *base*'s name (0 for the name itself, -1: none)."""
    last = -1
    prefix = base.name + "."
    try:
        names = os.listdir(base.parent)
    except OSError:
        return last
    for name in names:
        if name == base.name:
            last = max(last, 0)
        elif name.startswith(prefix) and name[len(prefix) :].isdigit():
            last = max(last, int(name[len(prefix) :]))
    return last


def _claim(tmp: str, base: Path) -> Path:
    """Give the verified temp file *tmp* the next free name of *base*, ``.1``, ``.2``...

    Next after the highest taken, not the first free: a name freed by pruning is
    not reused, so the ``.N`` of one second's backups keeps their order.

    ``os.link`` fails when the name exists, so no backup is ever overwritten, and
    the name appears with the whole copy behind it. Where hard links are not
    supported the file is renamed to a name checked free just before.
    """
    n = _last_seq(base) + 1
    candidate = base if n == 0 else base.with_name(f"{base.name}.{n}")
    while True:
        try:
            os.link(tmp, candidate)
            os.unlink(tmp)
            return candidate
        except FileExistsError:
            pass
        except OSError as exc:
            if exc.errno not in _NO_HARD_LINKS:
                raise
            if not candidate.exists():
                os.rename(tmp, candidate)
                return candidate
        n += 1
        candidate = base.with_name(f"{base.name}.{n}")


def _claim_named(tmp: str, name: Path, src: Path) -> Path:
    """Give *tmp* the planned *name*; when it was taken meanwhile, the next free one.

    The fallback keeps the rule that no backup is ever overwritten; the caller
    reports the name actually claimed.
    """
    try:
        os.link(tmp, name)
    except FileExistsError:
        return _claim(tmp, backup_path(src))
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
        if name.exists():
            return _claim(tmp, backup_path(src))
        os.rename(tmp, name)
        return name
    os.unlink(tmp)
    return name


def _fsync_dir(folder: Path) -> None:
    try:
        dir_fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # a platform that cannot open folders (Windows): rename is durable enough
    try:
        os.fsync(dir_fd)
    except OSError:
        pass  # some file systems refuse fsync on a folder; the data itself was synced
    finally:
        os.close(dir_fd)


def make_backup(path: str | os.PathLike[str], *, name: Path | None = None) -> Path:
    """Copy *path* to a new backup beside it and return the backup's path.

    See :func:`make_verified_backup` (*name* too), which also gives the
    identity of the original the copy was verified against.
    """
    return make_verified_backup(path, name=name)[0]


def make_verified_backup(
    path: str | os.PathLike[str], *, name: Path | None = None
) -> tuple[Path, tuple[int, int, int]]:
    """Copy *path* to a new backup beside it and return the backup's path.

    The copy is made in a temp file in the same folder (a name no listing takes
    for a backup, see :data:`TEMP_INFIX`), fsynced, then verified: its size and
    SHA-256 must be those of the original as read, and the original must not have
    changed during the copy (else it is copied again, up to
    :data:`COPY_ATTEMPTS` times). Only then does it get its name, by a hard link
    that never replaces an existing file, and the folder is fsynced. So a file
    under a backup's name is always a whole, verified copy, even when memlens is
    killed midway.

    The name is :func:`backup_path`'s, with ``.1``, ``.2``... appended when taken,
    so two backups in the same second (or from two processes) never overwrite one
    another. With *name* (:func:`next_backup_path`, computed when the write was
    previewed) the backup gets exactly that name, unless a file took it meanwhile
    (then the next free one). Mode and times are copied. The write observers get a ``backup``
    record with the copy's SHA-256.

    Returns the backup's path and the identity (:func:`file_identity`) of the
    original as copied: a writer that compares it with the file's identity
    right before replacing the file knows whether the backup holds what it
    replaces.

    Raises
    ------
    BackupChanged
        When the file changed during every attempt.
    OSError
        When the copy fails. Either way no backup (and no temp file) is left.
    """
    src = Path(path)
    if name is not None:
        _check_backup_name(src, name)
    for _attempt in range(COPY_ATTEMPTS):
        fd, tmp = tempfile.mkstemp(prefix=f".{src.name}{TEMP_INFIX}", suffix=".tmp", dir=src.parent)
        os.close(fd)
        claimed: Path | None = None
        try:
            copy = _copy_once(src, tmp)
            if copy is None:
                os.unlink(tmp)
                continue
            shutil.copystat(src, tmp)
            claimed = (
                _claim(tmp, backup_path(src)) if name is None else _claim_named(tmp, name, src)
            )
            _fsync_dir(src.parent)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            if claimed is not None:
                claimed.unlink(missing_ok=True)
            raise
        observers = _observed()
        if observers:
            record = WriteRecord(
                time.time(),
                os.fspath(path),
                "backup",
                0,
                copy.size,
                1,
                copy.lines,
                str(claimed),
                sha256=copy.sha256,
            )
            _notify(observers, record)
        return claimed, copy.identity
    raise BackupChanged(
        errno.EAGAIN,
        f"the file changed during each of {COPY_ATTEMPTS} copies (is the agent writing to it?); "
        "no backup was made",
        os.fspath(path),
    )


class FileChangedError(OSError):
    """The file changed between its read (or backup) and its replacement: nothing was replaced."""


Identity = tuple[int, int, int]
"""Inode, size and modification time (ns) of a file: :func:`file_identity`."""


def file_identity(path: str | os.PathLike[str]) -> Identity | None:
    """Inode, size and modification time of *path* (None when it does not exist).

    An agent that rewrites a file atomically gives it a new inode, so a
    rewrite of the same size within the same clock tick is still seen.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _changed(target: Path, when: str) -> FileChangedError:
    return FileChangedError(f"{target} changed {when} (the agent wrote it); nothing was replaced")


def atomic_write(
    path: str | os.PathLike[str],
    data: bytes,
    *,
    backup: bool = True,
    expect: Identity | None = None,
    backup_name: Path | None = None,
) -> Path | None:
    """Replace *path* with *data* atomically; returns the backup path, if any.

    *backup_name* is the backup's name as a preview showed it
    (:func:`next_backup_path`); None names it now.

    The backup (:func:`make_verified_backup`) is made and verified first: when
    it fails, *path* is not touched. The new content goes to a temp file in the
    same folder, is fsynced and renamed over *path*; the folder is fsynced.

    The file must be, right before the rename, the very file the backup copied
    (its :func:`file_identity`), so a write of the agent's during the backup or
    after it is never replaced, nor missing from every backup. With *expect*
    (the identity of the file when the caller read it, to compute *data*) it
    must also be that file: a write of the agent's between the caller's read
    and the backup is not replaced either.

    Raises
    ------
    FileChangedError
        When the file changed: nothing was replaced (a backup made meanwhile
        is kept; it holds the agent's version). Read it again and retry.
    """
    target = Path(path)
    before = file_identity(target)
    if expect is not None and before != expect:
        raise _changed(target, "since it was read")
    existed = before is not None
    saved: Path | None = None
    if backup and existed:
        # the identity of what it copied
        saved, before = make_verified_backup(target, name=backup_name)
        if expect is not None and before != expect:
            raise _changed(target, "since it was read")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if target.exists():
            os.chmod(tmp, target.stat().st_mode & 0o777)
        if file_identity(target) != before:
            # someone (the agent) wrote meanwhile: replacing now would lose that write
            raise _changed(target, "while it was being replaced")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)
    observers = _observed()
    if observers:
        record = WriteRecord(
            time.time(),
            os.fspath(path),
            "rewrite" if existed else "create",
            0,
            len(data),
            1,
            _count_lines(data),
            str(saved) if saved is not None else None,
        )
        _notify(observers, record)
    return saved
