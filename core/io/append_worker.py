"""The small process that performs memlens's appends, so that no kill leaves half a line.

Linux looks for a fatal signal between the pages of one ``write(2)`` (the page-cache
write loop of ext4, xfs, btrfs and tmpfs alike), so a process SIGKILLed inside a
write of several pages leaves the pages written so far: half a line, which the
agent's next append is then glued to. One ``write`` is atomic against other
writers, not against a kill.

So memlens hands each append, whole, to this helper. It reads a complete request
before it writes anything (a request cut short by memlens dying is dropped), and
once it has one it finishes the write even if memlens is killed meanwhile: it runs
in its own session, out of reach of a Ctrl-C or of a kill of memlens's process
group, and exits when its input closes. The write itself is :func:`append_payload`,
which memlens also calls directly when no helper can run.

Run as a script (``python -I -S _append_worker.py``): standard library only.
"""

from __future__ import annotations

import os
import signal
import struct
import sys

HEADER = struct.Struct("!IQ")
"""A request: path length, payload length; then the path and the payload."""
OK = struct.Struct("!QQ")
"""After ``b"K"``: offset and length of what was written."""
ERR = struct.Struct("!iI")
"""After ``b"E"``: errno (0 if none) and the length of a UTF-8 message."""


def _ends_with_newline(fd: int) -> bool:
    size = os.fstat(fd).st_size
    if size == 0:
        return True
    return os.pread(fd, 1, size - 1) == b"\n"


def append_payload(name: str, payload: bytes) -> tuple[int, int]:
    """Append *payload* to *name* in one write; return ``(offset, length)`` written.

    If the file does not end with a newline, a newline is written first (in the
    same write) so the lines are never glued to a partial one. The offset is read
    back from the descriptor after the write: with ``O_APPEND`` that is where the
    bytes really landed, even when another process appended just before.
    """
    fd = os.open(name, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        if not _ends_with_newline(fd):
            payload = b"\n" + payload
        written = os.write(fd, payload)
        offset = os.lseek(fd, 0, os.SEEK_CUR) - written
        while written < len(payload):  # rare short write: finish the same lines
            written += os.write(fd, payload[written:])
        os.fsync(fd)
    finally:
        os.close(fd)
    return offset, len(payload)


def _read_exactly(fd: int, n: int) -> bytes | None:
    """*n* bytes from *fd*, or None at end of input before all of them came."""
    parts: list[bytes] = []
    while n > 0:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def serve(rfd: int = 0, wfd: int = 1) -> None:
    """Answer requests from *rfd* on *wfd* until *rfd* closes."""
    while True:
        head = _read_exactly(rfd, HEADER.size)
        if head is None:
            return
        path_len, payload_len = HEADER.unpack(head)
        path = _read_exactly(rfd, path_len)
        payload = _read_exactly(rfd, payload_len) if path is not None else None
        if path is None or payload is None:
            return  # memlens died while sending: nothing of this request is written
        try:
            offset, length = append_payload(os.fsdecode(path), payload)
            reply = b"K" + OK.pack(offset, length)
        except Exception as exc:  # every failure goes back to memlens, which raises it
            errno = exc.errno if isinstance(exc, OSError) and exc.errno else 0
            text = (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)) or (
                type(exc).__name__
            )
            message = text.encode("utf-8", "replace")
            reply = b"E" + ERR.pack(errno, len(message)) + message
        try:
            _write_all(wfd, reply)
        except OSError:
            return  # memlens is gone; the write itself is complete


def run_worker_process() -> None:
    """Entry point of the helper process."""
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    serve(sys.stdin.fileno(), sys.stdout.fileno())


if __name__ == "__main__":
    run_worker_process()
