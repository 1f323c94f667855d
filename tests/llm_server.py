"""A real HTTP server on 127.0.0.1 with scripted answers, for LLM client tests."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from core.io import jsonio

# -- the scripted server ---------------------------------------------------------


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any


class Script:
    """Answers requests in order; records what each request carried."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.seen: list[Seen] = []
        self.url = ""
        self.lock = threading.Lock()

    def add(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def next(self, seen: Seen) -> Reply:
        with self.lock:
            self.seen.append(seen)
            if not self.replies:
                return Reply(599, {"error": "the test script ran out of replies"})
            return self.replies.pop(0)


def _handler(script: Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length", "0")))
            try:
                body = jsonio.loads(raw)
            except jsonio.JSONDecodeError:
                body = raw
            reply = script.next(
                Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
            if reply.delay:
                time.sleep(reply.delay)
            if isinstance(reply.body, bytes):
                data = reply.body
            elif reply.body is None:
                data = b""
            else:
                data = jsonio.dumps(reply.body)
            self.send_response(reply.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # the client hung up on a slow reply: expected in the timeout tests


@pytest.fixture
def server() -> Any:
    script = Script()
    httpd = QuietServer(("127.0.0.1", 0), _handler(script))
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    script.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield script
    httpd.shutdown()
    httpd.server_close()
