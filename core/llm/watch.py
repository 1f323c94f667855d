"""Cutting a request that is in flight: on a cancel, or when the total deadline passes.

A read timeout does not bound a request: a server that sends a byte now and then
keeps it alive for ever, and a thread blocked in ``recv`` does not look at a
cancel flag. So every socket a client's requests open is remembered (through
httpcore's ``trace`` extension), and a watchdog thread, alive only while a
request is, shuts those sockets down when the request must end. ``shutdown``
(not ``close``, which on Linux neither wakes a blocked ``recv`` nor tells the
server) makes the blocked read return at once and sends the server a FIN.
"""

from __future__ import annotations

import socket
import threading
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from types import TracebackType

    from core.jobs import CancelCheck
    from core.llm.deadline import Deadline

POLL_SECONDS = 0.05
"""How often the watchdog looks at the cancel check."""

WATCHDOG_THREAD = "memlens llm watchdog"
"""Name of the watchdog threads (tests look for leftovers by it)."""

Reason = Literal["cancel", "deadline"]

_OPENED = ("connect_tcp.complete", "connect_unix_socket.complete", "start_tls.complete")


class Connections:
    """The network streams a client's requests opened, so that another thread can cut them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._streams: list[Any] = []

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """Remember each stream as it is opened (the ``trace`` extension of httpcore)."""
        if not event.endswith(_OPENED):
            return
        stream = info.get("return_value")
        if stream is None:
            return
        with self._lock:
            self._streams = [s for s in self._streams if _open(s)]
            self._streams.append(stream)

    def abort(self) -> int:
        """Shut every remembered socket down in both directions; the number shut down.

        Idle keep-alive connections are shut down too: the pool drops them as
        dead on its next request.
        """
        with self._lock:
            streams, self._streams = self._streams, []
        done = 0
        for stream in streams:
            sock = _socket(stream)
            if sock is None:
                continue
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # already closed or never connected: nothing to cut
                continue
            done += 1
        return done


def _socket(stream: Any) -> socket.socket | None:
    try:
        sock = stream.get_extra_info("socket")
    except Exception:  # a backend without sockets (tests' transports)
        return None
    return sock if isinstance(sock, socket.socket) else None


def _open(stream: Any) -> bool:
    sock = _socket(stream)
    return sock is not None and sock.fileno() != -1


class Watchdog:
    """Watch one request; cut its connections on a cancel or when *deadline* passes.

    Use as a context manager around the request. Without a cancel check and a
    deadline it does nothing (no thread). After the request, :attr:`reason` says
    whether (and why) it was cut.

    Parameters
    ----------
    connections
        The client's :class:`Connections`.
    cancelled
        Polled every :data:`POLL_SECONDS` from the watchdog thread.
    deadline
        The job's total deadline.
    """

    def __init__(
        self,
        connections: Connections,
        *,
        cancelled: CancelCheck | None,
        deadline: Deadline | None,
        poll: float = POLL_SECONDS,
    ) -> None:
        self._connections = connections
        self._cancelled = cancelled
        self._deadline = deadline
        self._poll = poll
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self.reason: Reason | None = None

    def __enter__(self) -> Watchdog:
        if self._cancelled is not None or self._deadline is not None:
            self._thread = threading.Thread(target=self._watch, name=WATCHDOG_THREAD, daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _wait(self) -> float:
        step = self._poll if self._cancelled is not None or self.reason else 3600.0
        if self._deadline is not None and self.reason is None:
            step = min(step, self._deadline.remaining())
        return max(step, 0.0)

    def _watch(self) -> None:
        while not self._done.wait(self._wait()):
            if self.reason is None:
                if self._cancelled is not None and self._cancelled():
                    self.reason = "cancel"
                elif self._deadline is not None and self._deadline.expired:
                    self.reason = "deadline"
            if self.reason is not None:
                # Again at each poll: a connection still being made when the
                # request was cut is shut down as soon as it exists.
                self._connections.abort()
