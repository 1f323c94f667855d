"""memlens's side of the append helper process (:mod:`core.io.append_worker`).

:func:`core.io.fsutil.append_lines` hands each append to one long-lived helper
process, started on first use, so that a SIGKILL of memlens in the middle of a
write leaves the file as it was or with the whole lines appended. Where no helper
can run (not POSIX, a frozen app, no interpreter) :meth:`AppendHelper.append`
returns None and the caller writes in-process.
"""

from __future__ import annotations

import atexit
import errno
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

from core.io import append_worker as worker

log = logging.getLogger(__name__)


class AppendHelper:
    """The running :mod:`core.io.append_worker` process, started on first use."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[bytes] | None = None
        self.owner = 0
        self.disabled = False  # set when a helper cannot be started: append in-process

    @staticmethod
    def available() -> bool:
        """A helper can run: POSIX, a real interpreter, the worker on disk."""
        return (
            os.name == "posix"
            and not getattr(sys, "frozen", False)
            and bool(sys.executable)
            and Path(worker.__file__).is_file()
        )

    def _start(self) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", worker.__file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,  # no Ctrl-C or process-group kill reaches it
            close_fds=True,
        )
        self.proc, self.owner = proc, os.getpid()
        return proc

    def _running(self) -> subprocess.Popen[bytes]:
        proc = self.proc
        if proc is None or self.owner != os.getpid() or proc.poll() is not None:
            if proc is not None and self.owner == os.getpid():
                self._close(proc)
            proc = self._start()
        return proc

    @staticmethod
    def _close(proc: subprocess.Popen[bytes]) -> None:
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass

    def append(self, name: str, payload: bytes) -> tuple[int, int] | None:
        """Ask the helper to append; None when no helper can run (write inline)."""
        if self.disabled or not self.available():
            return None
        path = os.fsencode(name)
        request = worker.HEADER.pack(len(path), len(payload)) + path + payload
        with self.lock:
            for attempt in (1, 2):
                try:
                    proc = self._running()
                except OSError:
                    log.warning("cannot start the append helper; appending in-process")
                    self.disabled = True
                    return None
                assert proc.stdin is not None and proc.stdout is not None
                try:
                    proc.stdin.write(request)
                    proc.stdin.flush()
                except BrokenPipeError:
                    # The helper died before it had the whole request: it wrote nothing.
                    self._close(proc)
                    self.proc = None
                    if attempt == 2:
                        log.warning("the append helper keeps exiting; appending in-process")
                        self.disabled = True
                        return None
                    continue
                return self._reply(proc.stdout, name)
        return None  # pragma: no cover (the loop returns or raises)

    def _reply(self, out: IO[bytes], name: str) -> tuple[int, int]:
        kind = out.read(1)
        if kind == b"K":
            data = out.read(worker.OK.size)
            if len(data) == worker.OK.size:
                offset, length = worker.OK.unpack(data)
                return offset, length
        elif kind == b"E":
            data = out.read(worker.ERR.size)
            if len(data) == worker.ERR.size:
                code, size = worker.ERR.unpack(data)
                message = out.read(size).decode("utf-8", "replace")
                raise OSError(code, message, name) if code else OSError(message)
        self.proc = None
        raise OSError(
            errno.EIO,
            "the append helper stopped during the write; the lines may or may not be there",
            name,
        )

    def stop(self) -> None:
        """Close the helper's input (it exits) and wait for it briefly."""
        with self.lock:
            proc, self.proc = self.proc, None
            if proc is None or self.owner != os.getpid():
                return
            self._close(proc)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                log.warning("the append helper did not exit")


helper = AppendHelper()
atexit.register(helper.stop)
