"""Open only regular files.

A data folder can hold a FIFO, a socket, a device or a symlink to one under a
name memlens reads (``x.jsonl``, ``vectors.bin``...). Opening a FIFO for reading
blocks until someone writes, and ``/dev/zero`` never ends: such a file is
reported (:class:`NotRegularFile`, naming it) and never opened. The kind is
checked with ``stat`` before the open and again with ``fstat`` on the
descriptor, opened non-blocking, so a file swapped in between is caught too.
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

from core.io.problems import FormatError

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
_FLAGS |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


class NotRegularFile(FormatError):
    """A path names something other than a regular file (FIFO, socket, device...)."""


def kind_of(mode: int) -> str | None:
    """``a FIFO``, ``a socket``... for a mode that is not a regular file's; None for one."""
    if stat.S_ISREG(mode):
        return None
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def special_kind(path: str | os.PathLike[str]) -> str | None:
    """What *path* is when it exists and is not a regular file (symlinks followed).

    ``"a FIFO"``, ``"a symlink to a character device"``...; None for a regular
    file or a path that does not exist (or cannot be examined).
    """
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    kind = kind_of(st.st_mode)
    if kind is None:
        return None
    try:
        if os.path.islink(path):
            return f"a symlink to {kind.removeprefix('a ')}"
    except (OSError, ValueError):
        pass
    return kind


def skip_message(kind: str) -> str:
    """The problem message for a special file: ``not a regular file (a FIFO); skipped``."""
    return f"not a regular file ({kind}); skipped"


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """Open a regular file for reading in binary mode.

    Raises
    ------
    FileNotFoundError
        When *path* does not exist.
    NotRegularFile
        When it is a folder, FIFO, socket, device (or a symlink to one).
    FormatError
        When it cannot be opened.
    """
    name = os.fspath(path)
    kind = special_kind(name)
    if kind is not None:
        raise NotRegularFile(name, skip_message(kind))
    try:
        fd = os.open(name, _FLAGS)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise FormatError(name, f"cannot read: {exc.strerror or exc}") from exc
    try:
        mode = os.fstat(fd).st_mode
        kind = kind_of(mode)
        if kind is not None:
            raise NotRegularFile(name, skip_message(kind))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str], *, max_bytes: int | None = None) -> bytes:
    """The bytes of a regular file (see :func:`open_regular` for the errors).

    A file larger than *max_bytes* is refused (a :class:`FormatError`) without
    being read.

    Raises
    ------
    NotRegularFile
        When *path* is a folder, FIFO, socket or device (never opened).
    FormatError
        When it does not exist or cannot be read.
    """
    name = os.fspath(path)
    try:
        fh = open_regular(name)
    except FileNotFoundError as exc:
        raise FormatError(name, f"cannot read: {exc.strerror or exc}") from exc
    with fh:
        if max_bytes is not None:
            size = os.fstat(fh.fileno()).st_size
            if size > max_bytes:
                raise FormatError(
                    name, f"file of {size:,} bytes exceeds the {max_bytes:,}-byte limit; skipped"
                )
        try:
            return fh.read()
        except OSError as exc:
            raise FormatError(name, f"cannot read: {exc.strerror or exc}") from exc
