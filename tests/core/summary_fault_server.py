"""A real HTTP server on 127.0.0.1 that misbehaves: answers, hangs, trickles, and says when
the client hung up.

Every request gets the same behaviour (a summariser that is down stays down). ``hang``
accepts the request and never answers; ``trickle`` sends headers and then one byte of
body now and then. Both watch the socket and record when the client closed it, which
is how the tests prove that a cancel or the total deadline closed the connection.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from core.io import jsonio

if TYPE_CHECKING:
    from collections.abc import Iterator

MAX_HOLD = 60.0
"""No handler holds a connection longer than this, whatever the client does."""


@dataclass
class Fault:
    """What the server does with every request."""

    mode: str = "reply"  # "reply", "hang" or "trickle"
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    every: float = 0.3
    """For ``trickle``: seconds between bytes."""


class FaultServer:
    """The running server: its URL, the requests it saw, the connections the client closed."""

    def __init__(self) -> None:
        self.fault = Fault(body=_ok("fine"))
        self.queue: list[Fault] = []
        self.requests: list[Any] = []
        self.closed: list[float] = []
        """monotonic() of each client hang-up seen while hanging or trickling."""
        self.lock = threading.Lock()
        self.url = ""
        self.httpd: ThreadingHTTPServer | None = None

    def set(self, fault: Fault, *first: Fault) -> None:
        """Answer every request with *fault*, after one request for each of *first*."""
        with self.lock:
            self.fault = fault
            self.queue = list(first)

    def next_fault(self) -> Fault:
        with self.lock:
            return self.queue.pop(0) if self.queue else self.fault

    def wait_closed(self, count: int = 1, timeout: float = 5.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                if len(self.closed) >= count:
                    return True
            time.sleep(0.02)
        return False


def _ok(text: str) -> dict[str, Any]:
    return {
        "model": "m",
        "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    }


def _handler(state: FaultServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length", "0")))
            with state.lock:
                state.requests.append(jsonio.loads(raw) if raw else None)
            fault = state.next_fault()
            if fault.mode == "hang":
                self._hold(None)
                return
            if fault.mode == "trickle":
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", "1000000")
                self.end_headers()
                self.wfile.flush()
                self._hold(fault.every)
                return
            body = fault.body
            data = body if isinstance(body, bytes) else b"" if body is None else jsonio.dumps(body)
            self.send_response(fault.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in fault.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _hold(self, every: float | None) -> None:
            """Wait for the client to hang up (EOF or reset); trickle a byte each *every*."""
            sock = self.connection
            assert isinstance(sock, socket.socket)
            end = time.monotonic() + MAX_HOLD
            while time.monotonic() < end:
                ready, _, _ = select.select([sock], [], [], every or 0.05)
                if ready:
                    try:
                        chunk = sock.recv(1)
                    except OSError:
                        chunk = b""
                    if not chunk:
                        with state.lock:
                            state.closed.append(time.monotonic())
                        self.close_connection = True
                        return
                elif every is not None:
                    try:
                        sock.sendall(b" ")
                    except OSError:
                        with state.lock:
                            state.closed.append(time.monotonic())
                        self.close_connection = True
                        return
            self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up mid-answer is what these tests are about


@contextlib.contextmanager
def running() -> Iterator[FaultServer]:
    """Start a :class:`FaultServer`; stop it on exit (use it in a fixture)."""
    state = FaultServer()
    httpd = _Quiet(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    state.httpd = httpd
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


ok_answer = _ok
