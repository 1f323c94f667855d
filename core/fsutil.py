"""Safe writes to files an agent may also be using.

* An append is whole lines in one ``write`` on an ``O_APPEND`` descriptor; if the
  file does not end with a newline (an agent's line in progress, or a crash),
  our lines start on a fresh line so they are never glued to a partial one.
* A rewrite is atomic: temp file in the same folder, fsync, rename, with the old
  file kept as a backup beside it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from core.problems import FormatError


@dataclass(frozen=True, slots=True)
class AppendResult:
    """Where an append landed."""

    path: str
    offset: int
    """Byte offset of the first byte written."""
    length: int


def read_file(path: str | os.PathLike[str]) -> bytes:
    """Read a whole file; any OS error becomes a :class:`FormatError` naming it."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise FormatError(name, f"cannot read: {exc.strerror or exc}") from exc


def _ends_with_newline(fd: int) -> bool:
    size = os.fstat(fd).st_size
    if size == 0:
        return True
    return os.pread(fd, 1, size - 1) == b"\n"


def append_lines(path: str | os.PathLike[str], payload: bytes) -> AppendResult:
    """Append *payload* (one or more whole lines, ending in a newline) in one write.

    Raises
    ------
    ValueError
        If *payload* does not end with a newline.
    """
    if not payload.endswith(b"\n"):
        raise ValueError("an append must be whole lines ending with a newline")
    name = os.fspath(path)
    fd = os.open(name, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        if not _ends_with_newline(fd):
            payload = b"\n" + payload
        offset = os.fstat(fd).st_size
        written = os.write(fd, payload)
        while written < len(payload):  # rare short write: finish the same lines
            written += os.write(fd, payload[written:])
        os.fsync(fd)
    finally:
        os.close(fd)
    return AppendResult(name, offset, len(payload))


def backup_path(path: Path) -> Path:
    """Base name of the backup kept beside *path* (see :func:`make_backup`)."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    return path.with_name(f"{path.name}.memlens-backup-{stamp}")


def make_backup(path: str | os.PathLike[str]) -> Path:
    """Copy *path* to a new backup beside it and return the backup's path.

    The name is :func:`backup_path`'s, with ``.1``, ``.2``... appended when taken:
    each name is claimed with ``O_EXCL``, so two backups in the same second (or
    from two processes) never overwrite one another. Mode and times are copied.

    Raises
    ------
    OSError
        When the copy fails (no backup is left behind then).
    """
    src = Path(path)
    base = backup_path(src)
    candidate, n = base, 0
    while True:
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            break
        except FileExistsError:
            n += 1
            candidate = base.with_name(f"{base.name}.{n}")
    try:
        with os.fdopen(fd, "wb") as dst, open(src, "rb") as fh:
            shutil.copyfileobj(fh, dst)
            dst.flush()
            os.fsync(dst.fileno())
        shutil.copystat(src, candidate)
    except BaseException:
        candidate.unlink(missing_ok=True)
        raise
    return candidate


def atomic_write(path: str | os.PathLike[str], data: bytes, *, backup: bool = True) -> Path | None:
    """Replace *path* with *data* atomically; returns the backup path, if any."""
    target = Path(path)
    saved: Path | None = None
    if backup and target.exists():
        saved = make_backup(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if target.exists():
            os.chmod(tmp, target.stat().st_mode & 0o777)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return saved
