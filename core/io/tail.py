"""Follow a file an agent appends to, one complete line at a time.

A :class:`Tail` remembers where it stopped: the file's identity (device and
inode), the offset just past the last complete line it returned, the line
number of the next line, the bytes of a partial last line read so far, and the
few bytes before its offset (a guard). :meth:`Tail.poll` then costs one
``stat`` when nothing changed and reads only the new bytes when something did.

It never returns half a line: bytes after the last newline wait in the tail
until their newline arrives. A file that shrank (truncated), whose identity
changed (replaced by a rename: rotation, an atomic rewrite) or whose bytes
before the offset changed (rewritten in place) gives a ``reset`` event holding
every complete line of the file as it is now; a file that disappeared gives
``missing``, and when it comes back a ``reset``.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Literal

from core.io.limits import max_line_bytes

EventKind = Literal["none", "append", "reset", "missing"]
GUARD = 64
"""Bytes before the offset compared on each change, to see an in-place rewrite."""
_CHUNK = 1 << 16
_READ = 1 << 22
"""Bytes read at a time (at most the line limit)."""
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


@dataclass(frozen=True, slots=True)
class TailEvent:
    """What one :meth:`Tail.poll` found.

    Attributes
    ----------
    kind
        ``none`` (no new complete line), ``append`` (complete lines after the
        previous ones), ``reset`` (the file was truncated, replaced or
        rewritten: *data* is every complete line it holds now, from offset 0),
        ``missing`` (the file is gone).
    path
        The file followed.
    data
        Whole lines, each ending with a newline (empty for ``none`` and ``missing``).
    first_line
        1-based line number of the first line of *data*.
    offset
        Byte offset of ``data[0]`` in the file.
    lines
        How many lines *data* holds.
    reason
        Why a ``reset`` happened (``truncated``, ``replaced``, ``rewritten``,
        ``reappeared``); empty otherwise.
    """

    kind: EventKind
    path: str
    data: bytes = b""
    first_line: int = 1
    offset: int = 0
    lines: int = 0
    reason: str = ""
    skipped: tuple[tuple[int, int, int], ...] = ()
    """``(line, offset, length)`` of lines over the line limit just before *data*:
    counted, never read into memory, not in *data*."""

    @property
    def end(self) -> int:
        """Offset just past *data*."""
        return self.offset + len(self.data)


class Tail:
    """Follow one file: see the module docstring.

    Parameters
    ----------
    path
        The file; it need not exist yet (it is then read from its first byte
        when it appears).
    offset
        Bytes of the file already consumed by the caller (for instance the size
        a loader read). When it does not fall just after a newline, the tail
        moves back to the start of that line: the caller sees that line again
        once it is complete (and must skip it if it had parsed it already).
    line
        The 1-based line number of the line starting at *offset* (after the
        move back), when the caller knows it; otherwise it is counted from the
        file (or from *anchor*).
    anchor
        ``(line, offset)`` of a line start the caller knows (for example the
        last entry a loader kept): newlines are counted from there, not from
        the start of the file.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        offset: int = 0,
        *,
        line: int | None = None,
        anchor: tuple[int, int] | None = None,
    ) -> None:
        self.path = os.fspath(path)
        self.offset = 0
        """Offset just past the last complete line returned."""
        self.line = 1
        """Line number of the next complete line."""
        self._pending: list[bytes] = []  # the partial last line, as read (no newline yet)
        self._pending_len = 0
        self._id: tuple[int, int] | None = None
        self._mtime = 0
        self._guard = b""
        self._missing = False
        self._skipping = False  # inside a line over the limit: counted, not kept
        self.more = False
        """True when the last poll stopped early (before a line over the limit):
        poll again for the rest."""
        self._start(offset, line, anchor)

    # -- set-up -----------------------------------------------------------------------
    def _start(self, offset: int, line: int | None, anchor: tuple[int, int] | None) -> None:
        try:
            fd = _open(self.path)
        except FileNotFoundError:
            self._missing = offset > 0
            return
        except OSError:  # not a regular file (a FIFO, a device): never read
            self._missing = offset > 0
            return
        try:
            st = os.fstat(fd)
            offset = _line_start(fd, min(max(offset, 0), st.st_size))
            if line is None:
                a_line, a_off = anchor if anchor is not None and anchor[1] <= offset else (1, 0)
                line = a_line + _count_newlines(fd, a_off, offset)
            self._id = (st.st_dev, st.st_ino)
            self._mtime = st.st_mtime_ns
            self.offset = offset
            self.line = line
            self._guard = os.pread(fd, min(GUARD, offset), offset - min(GUARD, offset))
        finally:
            os.close(fd)

    @property
    def position(self) -> int:
        """Offset just past every byte read (complete lines and the partial one)."""
        return self.offset + self._pending_len

    @property
    def pending(self) -> bytes:
        """Bytes of the partial last line read so far (no newline yet)."""
        return b"".join(self._pending)

    # -- polling -----------------------------------------------------------------------
    def poll(self) -> TailEvent:
        """Read what changed since the last poll (see :class:`TailEvent`).

        Costs one ``stat`` when the file did not change, and O(new bytes) when it grew.
        """
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return self._gone()
        except OSError:
            return TailEvent("none", self.path)
        if not stat.S_ISREG(st.st_mode):
            # A FIFO or a device took the file's place: never opened, as if gone.
            return self._gone()
        same_file = self._id == (st.st_dev, st.st_ino)
        if (
            same_file
            and st.st_size == self.position
            and st.st_mtime_ns == self._mtime
            and not self.more
        ):
            return TailEvent("none", self.path)
        try:
            fd = _open(self.path)
        except FileNotFoundError:
            return self._gone()
        except OSError:
            return TailEvent("none", self.path)
        try:
            return self._read(fd)
        finally:
            os.close(fd)

    def _gone(self) -> TailEvent:
        if self._id is None and not self._missing:
            return TailEvent("none", self.path)  # never existed: nothing to report
        if self._missing:
            return TailEvent("none", self.path)  # already reported
        self._missing = True
        return TailEvent("missing", self.path)

    def _read(self, fd: int) -> TailEvent:
        st = os.fstat(fd)  # of the file opened, whatever the path names by now
        ident = (st.st_dev, st.st_ino)
        if self._id is None and not self._missing:
            # First sight of a file that did not exist: read it from the start.
            self._id = ident
            return self._advance(fd, st.st_size, st.st_mtime_ns)
        if self._id != ident:
            return self._reset(fd, "reappeared" if self._missing else "replaced")
        if st.st_size < self.position:
            return self._reset(fd, "truncated")
        guard = os.pread(fd, len(self._guard), self.offset - len(self._guard))
        if guard != self._guard:
            return self._reset(fd, "rewritten")
        return self._advance(fd, st.st_size, st.st_mtime_ns)

    def _advance(self, fd: int, size: int, mtime: int) -> TailEvent:
        self._mtime = mtime
        self.more = False
        limit = max_line_bytes()
        step = max(1, min(_READ, limit))
        parts: list[bytes] = []
        skipped: list[tuple[int, int, int]] = []
        start = (self.line, self.offset)  # of data[0]
        # Read a chunk at a time: a line over the limit is counted, never kept.
        # Only the new bytes are searched, so a long line written slowly costs
        # O(new bytes) per poll; its pieces are joined once, when it is complete.
        while True:
            pos = self.position
            if pos >= size:
                break
            chunk = os.pread(fd, min(step, size - pos), pos)
            if not chunk:
                break
            if self._skipping:
                nl = chunk.find(b"\n")
                if nl < 0:
                    self._pending_len += len(chunk)
                    continue
                length = self._pending_len + nl
                skipped.append((self.line, self.offset, length))
                self.offset += length + 1
                self.line += 1
                self._pending_len = 0
                self._skipping = False
                start = (self.line, self.offset)
                continue
            first = chunk.find(b"\n")
            if first < 0 or self._pending_len + first > limit:
                # No newline yet, or one ending a line over the limit.
                self._pending.append(chunk if first < 0 else chunk[:first])
                self._pending_len += len(chunk) if first < 0 else first
                if self._pending_len > limit:
                    self._pending = []
                    self._skipping = True
                    if parts:  # skipped lines come first in an event: this one, next poll
                        self.more = True
                        break
                continue
            cut = chunk.rfind(b"\n") + 1
            block = b"".join([*self._pending, chunk[:cut]]) if self._pending else chunk[:cut]
            parts.append(block)
            self.offset += len(block)
            self.line += block.count(b"\n")
            rest = chunk[cut:]
            self._pending = [rest] if rest else []
            self._pending_len = len(rest)
        if not parts and not skipped:
            return TailEvent("none", self.path)
        data = b"".join(parts) if len(parts) != 1 else parts[0]
        if len(data) >= GUARD:
            self._guard = data[-GUARD:]
        elif data and not skipped:
            self._guard = (self._guard + data)[-GUARD:]
        else:  # after a skipped line: those bytes were never kept
            keep = min(GUARD, self.offset)
            self._guard = os.pread(fd, keep, self.offset - keep) if keep else b""
        return TailEvent(
            "append",
            self.path,
            data,
            start[0],
            start[1],
            data.count(b"\n"),
            skipped=tuple(skipped),
        )

    def _reset(self, fd: int, reason: str) -> TailEvent:
        st = os.fstat(fd)
        self._id = (st.st_dev, st.st_ino)
        self._missing = False
        self.offset = 0
        self.line = 1
        self._pending = []
        self._pending_len = 0
        self._guard = b""
        self._skipping = False
        appended = self._advance(fd, st.st_size, st.st_mtime_ns)
        return TailEvent(
            "reset",
            self.path,
            appended.data,
            appended.first_line,
            appended.offset,
            appended.lines,
            reason,
            appended.skipped,
        )


def _open(path: str) -> int:
    """A descriptor on *path* if it is a regular file (FIFOs and devices never block it).

    Raises
    ------
    OSError
        When it cannot be opened or is not a regular file.
    """
    fd = os.open(path, _FLAGS)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path}: not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _line_start(fd: int, offset: int) -> int:
    """The start of the line that *offset* falls in.

    That is *offset* itself when it is 0 or follows a newline; otherwise the
    offset just past the last newline before it (0 when there is none).
    """
    pos = offset
    while pos > 0:
        lo = max(0, pos - _CHUNK)
        chunk = os.pread(fd, pos - lo, lo)
        if pos == offset and chunk.endswith(b"\n"):
            return offset
        nl = chunk.rfind(b"\n")
        if nl >= 0:
            return lo + nl + 1
        pos = lo
    return 0


def _count_newlines(fd: int, start: int, stop: int) -> int:
    count = 0
    pos = start
    while pos < stop:
        chunk = os.pread(fd, min(stop - pos, 1 << 20), pos)
        if not chunk:
            break
        count += chunk.count(b"\n")
        pos += len(chunk)
    return count
