"""A scripted Anthropic Messages API on 127.0.0.1, for Claude Code in the oracle tier.

Claude Code (``ANTHROPIC_BASE_URL=http://127.0.0.1:PORT``) talks to it as to the
real API: ``POST /v1/messages`` is answered as server-sent events when the request
says ``"stream": true`` (``message_start``, ``content_block_start`` /
``content_block_delta`` (``text_delta``, ``input_json_delta``) /
``content_block_stop``, ``message_delta`` with the stop reason, ``message_stop``),
else as one message; ``POST /v1/messages/count_tokens`` gets a token count; any
other request gets an empty JSON object. Every request is recorded.

What to answer is the test's *script*: a function of the request body returning a
:class:`Reply` (a text and/or tool uses), or None for :attr:`FakeAnthropic.default`.
Claude Code's side requests (a title, a quota probe) ask the same endpoint, so a
script answers only the requests it recognises.

Usage::

    def script(body):
        if offers_tool(body, "mcp__x__search") and not tool_results(body):
            return Reply(tool_uses=(ToolUse("toolu_1", "mcp__x__search", {"q": "a"}),))
        return None

    with FakeAnthropic(script) as api:
        ... run claude with ANTHROPIC_BASE_URL=api.base_url ...
        assert tool_results(api.messages()[-1])
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeAnthropic", "Reply", "Request", "ToolUse", "offers_tool", "tool_results"]


@dataclass(frozen=True, slots=True)
class ToolUse:
    """One ``tool_use`` block of a reply; ``input`` is streamed as JSON pieces."""

    id: str
    name: str
    input: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted assistant message: a text, then tool uses."""

    text: str = ""
    tool_uses: tuple[ToolUse, ...] = ()

    @property
    def stop_reason(self) -> str:
        """``tool_use`` when the reply asks for tools, else ``end_turn``."""
        return "tool_use" if self.tool_uses else "end_turn"


@dataclass(frozen=True, slots=True)
class Request:
    """A request received: method, path (query stripped), headers, JSON body, reply."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    reply: Reply | None = None


Script = Callable[[dict[str, Any]], Reply | None]


def offers_tool(body: dict[str, Any], name: str) -> bool:
    """Whether the request offers the model a tool named *name*."""
    return any(isinstance(t, dict) and t.get("name") == name for t in body.get("tools") or ())


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks of the request's messages, in order."""
    out: list[dict[str, Any]] = []
    for message in body.get("messages") or ():
        content = message.get("content")
        if isinstance(content, list):
            out.extend(b for b in content if isinstance(b, dict) and b.get("type") == "tool_result")
    return out


class FakeAnthropic:
    """The server; a context manager that serves in a daemon thread on a free port."""

    def __init__(self, script: Script, *, model: str = "claude-fake-1") -> None:
        self.script = script
        self.model = model
        self.default = Reply("(nothing scripted)")
        """The reply when the script returns None."""
        self.requests: list[Request] = []
        self.errors: list[str] = []
        """Exceptions raised by the script (the request then got :attr:`default`)."""
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def messages(self) -> list[dict[str, Any]]:
        """Bodies of the ``/v1/messages`` requests, in order received."""
        with self._lock:
            return [r.body for r in self.requests if r.path.endswith("/v1/messages")]

    def _reply(self, body: dict[str, Any]) -> Reply:
        try:
            reply = self.script(body)
        except Exception as exc:  # the test reads it from .errors; Claude Code gets a text
            with self._lock:
                self.errors.append(repr(exc))
            reply = None
        return reply if reply is not None else self.default

    def _record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (Claude Code appends ``/v1/messages``)."""
        if self._server is None:
            raise RuntimeError("FakeAnthropic is not running")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeAnthropic:
        self._server = _QuietServer(("127.0.0.1", 0), _make_handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="fake-anthropic", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that drops a kept-alive connection is no error of the test


def _usage(output: int) -> dict[str, int]:
    return {
        "input_tokens": 100,
        "output_tokens": output,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _blocks(reply: Reply) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if reply.text:
        out.append({"type": "text", "text": reply.text})
    out.extend(
        {"type": "tool_use", "id": t.id, "name": t.name, "input": t.input} for t in reply.tool_uses
    )
    return out


def _message(reply: Reply, model: str, mid: str) -> dict[str, Any]:
    return {
        "id": mid,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _blocks(reply),
        "stop_reason": reply.stop_reason,
        "stop_sequence": None,
        "usage": _usage(10),
    }


def _halves(text: str) -> list[str]:
    # Two pieces, so that Claude Code really assembles a streamed block.
    half = len(text) // 2
    return [p for p in (text[:half], text[half:]) if p]


def _events(reply: Reply, model: str, mid: str) -> list[tuple[str, dict[str, Any]]]:
    start = _message(reply, model, mid) | {"content": [], "stop_reason": None}
    start["usage"] = _usage(1)
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"message": start})]
    for index, block in enumerate(_blocks(reply)):
        if block["type"] == "text":
            empty: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in _halves(block["text"])]
        else:
            empty = block | {"input": {}}
            pieces = _halves(json.dumps(block["input"]))
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
        events.append(("content_block_start", {"index": index, "content_block": empty}))
        events.extend(("content_block_delta", {"index": index, "delta": d}) for d in deltas)
        events.append(("content_block_stop", {"index": index}))
    delta = {"stop_reason": reply.stop_reason, "stop_sequence": None}
    events.append(("message_delta", {"delta": delta, "usage": {"output_tokens": 10}}))
    events.append(("message_stop", {}))
    return [(name, {"type": name} | data) for name, data in events]


def _make_handler(api: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _json(self, status: int, obj: Any) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _read(self) -> tuple[str, dict[str, str], Any]:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode(errors="replace")
            headers = {k.lower(): v for k, v in self.headers.items()}
            return self.path.split("?", 1)[0].rstrip("/"), headers, body

        def do_GET(self) -> None:
            path, headers, body = self._read()
            api._record(Request("GET", path, headers, body))
            self._json(200, {})

        def do_HEAD(self) -> None:
            path, headers, _ = self._read()
            api._record(Request("HEAD", path, headers, None))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            path, headers, body = self._read()
            if path.endswith("/v1/messages/count_tokens"):
                api._record(Request("POST", path, headers, body))
                self._json(200, {"input_tokens": max(1, len(json.dumps(body)) // 4)})
                return
            if not path.endswith("/v1/messages") or not isinstance(body, dict):
                api._record(Request("POST", path, headers, body))
                self._json(200, {})
                return
            reply = api._reply(body)
            api._record(Request("POST", path, headers, body, reply))
            mid = f"msg_fake{next(api._ids)}"
            model = str(body.get("model") or api.model)
            if not body.get("stream"):
                self._json(200, _message(reply, model, mid))
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for name, data in _events(reply, model, mid):
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
            self.close_connection = True

    return Handler
