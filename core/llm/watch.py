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

import errno
import os
import select
import socket
import threading
import time
from typing import TYPE_CHECKING, Any, Literal

import httpcore
from httpcore._backends.sync import SyncStream  # the stream httpcore's own backend returns

if TYPE_CHECKING:
    from collections.abc import Iterable
    from types import TracebackType

    from core.io.jobs import CancelCheck
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
        self.stop = threading.Event()
        """Set while a request is being cut: a connection still being made gives up."""

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
        self._connections.stop.clear()
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
                self._connections.stop.set()
                self._connections.abort()


class AbortableBackend(httpcore.SyncBackend):
    """httpcore's network backend, with a host lookup and a connect that can be cut.

    httpcore connects with ``socket.create_connection``: the name lookup has no
    time limit and the connect waits out its timeout whatever happens meanwhile,
    so neither a cancel nor the total deadline could end a request to a host that
    does not answer. Here the lookup runs in a helper thread (left to finish on
    its own: it waits on the resolver, not on a server) and the connect is
    non-blocking, polled every :data:`POLL_SECONDS`; both give up as soon as
    :attr:`Connections.stop` is set.
    """

    def __init__(self, connections: Connections) -> None:
        self._connections = connections

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        """A connected stream to *host*:*port*, or ConnectError/ConnectTimeout."""
        end = None if timeout is None else time.monotonic() + timeout
        infos = self._lookup(host, port, end)
        last: OSError | None = None
        for family, kind, proto, _name, address in infos:
            sock = socket.socket(family, kind, proto)
            try:
                if local_address is not None:
                    sock.bind((local_address, 0))
                self._connect(sock, address, end)
                sock.setblocking(True)
                for option in socket_options or ():
                    sock.setsockopt(*option)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except (httpcore.ConnectError, httpcore.ConnectTimeout):
                sock.close()
                raise
            except OSError as exc:
                sock.close()
                last = exc
                continue
            return SyncStream(sock)
        raise httpcore.ConnectError(str(last or f"cannot connect to {host}:{port}"))

    def _left(self, end: float | None, what: str) -> float:
        """Seconds left before *end*; raises when the request is being cut or time is up."""
        if self._connections.stop.is_set():
            raise httpcore.ConnectError(f"{what}: the request was cut")
        if end is None:
            return POLL_SECONDS
        left = end - time.monotonic()
        if left <= 0:
            raise httpcore.ConnectTimeout(f"{what}: timed out")
        return min(left, POLL_SECONDS)

    def _lookup(self, host: str, port: int, end: float | None) -> list[Any]:
        done = threading.Event()
        found: list[Any] = []
        failed: list[OSError] = []

        def lookup() -> None:
            try:
                found.extend(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
            except OSError as exc:
                failed.append(exc)
            finally:
                done.set()

        threading.Thread(target=lookup, name="memlens dns lookup", daemon=True).start()
        while not done.wait(self._left(end, f"looking up {host}")):
            pass
        if failed:
            raise httpcore.ConnectError(f"cannot look up {host}: {failed[0]}")
        return found

    def _connect(self, sock: socket.socket, address: Any, end: float | None) -> None:
        sock.setblocking(False)
        err = sock.connect_ex(address)
        while err in (errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EALREADY, errno.EINTR):
            _, ready, _ = select.select([], [sock], [], self._left(end, "connecting"))
            if ready:
                err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                break
        if err:
            raise OSError(err, os.strerror(err))
