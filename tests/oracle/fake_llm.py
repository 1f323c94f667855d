"""A scripted OpenAI-compatible LLM server on 127.0.0.1, for the real agents.

The oracle tier runs pi and OpenClaw themselves against this server: it answers
``POST /v1/chat/completions`` (streamed as server-sent events when the request
says ``"stream": true``, else one JSON body) and ``POST /v1/embeddings`` (float
lists, or base64 float32 when the request says ``"encoding_format": "base64"``,
as the openai SDKs do by default), from a
queue of scripted answers, and records every request it received so a test can
assert what the agent sent.

Usage::

    with FakeLLM() as llm:
        llm.reply(tool_calls=[ToolCall("call_1", "read", {"path": "a.txt"})])
        llm.reply("Done.", usage=Usage(prompt=900, completion=20))
        llm.fail(500, "overloaded")
        llm.when(lambda body: "summar" in str(body), Answer("## Goal ..."))
        ... run the agent with base URL ``llm.base_url`` (ends in ``/v1``) ...
        assert llm.chat_requests()[0]["messages"][0]["role"] == "system"

An answer is chosen in this order: the first :meth:`FakeLLM.when` rule whose
predicate accepts the request body (rules are not consumed), else the next
queued answer, else :attr:`FakeLLM.default`. The API (``FakeLLM``, ``Answer``,
``ToolCall``, ``Usage``, ``Request``) is shared with the OpenClaw tests: keep
it stable.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Answer", "FakeLLM", "Request", "ToolCall", "Usage"]


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts reported in the answer's ``usage`` (OpenAI names)."""

    prompt: int = 100
    completion: int = 10
    cached: int = 0

    def to_json(self) -> dict[str, Any]:
        """The OpenAI ``usage`` object."""
        out: dict[str, Any] = {
            "prompt_tokens": self.prompt,
            "completion_tokens": self.completion,
            "total_tokens": self.prompt + self.completion,
        }
        if self.cached:
            out["prompt_tokens_details"] = {"cached_tokens": self.cached}
        return out


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call of an answer; ``arguments`` is sent as a JSON string."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Answer:
    """One scripted answer of the chat endpoint.

    ``status`` other than 200 makes an HTTP error whose body is
    ``{"error": {"message": error}}``. ``thinking`` is streamed as
    ``reasoning_content``. ``finish_reason`` defaults to ``tool_calls`` when
    there are tool calls, else ``stop``.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    thinking: str = ""
    finish_reason: str | None = None
    status: int = 200
    error: str = ""
    delay: float = 0.0
    """Seconds to wait before each streamed chunk (to let a test abort mid-answer)."""

    def finish(self) -> str:
        """The ``finish_reason`` sent with the last choice chunk."""
        if self.finish_reason is not None:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"


@dataclass(frozen=True, slots=True)
class Request:
    """A request the server received: its path, headers and JSON body."""

    path: str
    headers: dict[str, str]
    body: Any
    answer: Answer | None = None
    """The answer given (None for embeddings and unknown paths)."""


Predicate = Callable[[Any], bool]


class FakeLLM:
    """The server; a context manager that starts it in a thread on a free port.

    Parameters
    ----------
    model : str
        The model name put in answers.
    embedding_dim : int
        Length of the vectors ``/v1/embeddings`` returns (a deterministic
        hash of the input text).
    port : int
        Where to listen (0: a free port). A recorded home's config names the port
        of its run, which its index's provider key includes.
    """

    def __init__(self, *, model: str = "fake-model", embedding_dim: int = 8, port: int = 0) -> None:
        self.model = model
        self.embedding_dim = embedding_dim
        self._port = port
        self.default = Answer("(nothing scripted)")
        """The answer when no rule matches and the queue is empty."""
        self.requests: list[Request] = []
        self._queue: deque[Answer] = deque()
        self._rules: list[tuple[Predicate, Answer]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # scripting -------------------------------------------------------------

    def reply(
        self,
        text: str = "",
        *,
        tool_calls: list[ToolCall] | tuple[ToolCall, ...] = (),
        usage: Usage | None = None,
        thinking: str = "",
        finish_reason: str | None = None,
        delay: float = 0.0,
    ) -> Answer:
        """Queue a text and/or tool-call answer; return it."""
        answer = Answer(
            text,
            tuple(tool_calls),
            usage or Usage(),
            thinking=thinking,
            finish_reason=finish_reason,
            delay=delay,
        )
        return self.push(answer)

    def fail(self, status: int = 500, message: str = "fake server error") -> Answer:
        """Queue an HTTP error answer; return it."""
        return self.push(Answer(status=status, error=message))

    def push(self, answer: Answer) -> Answer:
        """Queue *answer* as is; return it."""
        with self._lock:
            self._queue.append(answer)
        return answer

    def when(self, predicate: Predicate, answer: Answer) -> None:
        """Answer every chat request whose JSON body *predicate* accepts with *answer*."""
        with self._lock:
            self._rules.append((predicate, answer))

    def pending(self) -> int:
        """Queued answers not yet given."""
        with self._lock:
            return len(self._queue)

    def chat_requests(self) -> list[Any]:
        """Bodies of the chat-completion requests, in order received."""
        with self._lock:
            return [r.body for r in self.requests if r.path.endswith("/chat/completions")]

    def _next_answer(self, body: Any) -> Answer:
        with self._lock:
            for predicate, answer in self._rules:
                try:
                    if predicate(body):
                        return answer
                except Exception:  # a rule that cannot read the body does not match
                    continue
            return self._queue.popleft() if self._queue else self.default

    # server ----------------------------------------------------------------

    @property
    def port(self) -> int:
        """The port the server listens on."""
        if self._server is None:
            raise RuntimeError("FakeLLM is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeLLM:
        """Start serving in a daemon thread; return self."""
        handler = _make_handler(self)
        self._server = _QuietServer(("127.0.0.1", self._port), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="fake-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the server and wait for its thread."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def recorded_port(config: Path) -> int:
    """The fake server's port in a recorded home's ``openclaw.json`` (0: none named).

    The home's memory index keys its embedding provider by that URL: a search there is
    hybrid only with the fake server answering on that very port again.
    """
    found = re.search(r"http://127\.0\.0\.1:(\d+)/v1", config.read_text(encoding="utf-8"))
    return int(found.group(1)) if found else 0


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # An agent that drops a kept-alive connection is no error of the test.
        pass


def embedding(text: str, dim: int) -> list[float]:
    """A deterministic unit-length vector for *text* (not a meaningful embedding)."""
    digest = hashlib.sha256(text.encode()).digest()
    raw = [(digest[i % len(digest)] - 127.5) / 127.5 for i in range(dim)]
    norm = sum(x * x for x in raw) ** 0.5 or 1.0
    return [x / norm for x in raw]


def _chunks(answer: Answer, model: str, cid: str, created: int) -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    out = [chunk({"role": "assistant", "content": ""})]
    if answer.thinking:
        out.append(chunk({"reasoning_content": answer.thinking}))
    if answer.text:
        # Two pieces, so that the agent really assembles a streamed text.
        half = len(answer.text) // 2
        for piece in (answer.text[:half], answer.text[half:]):
            if piece:
                out.append(chunk({"content": piece}))
    for i, call in enumerate(answer.tool_calls):
        args = json.dumps(call.arguments)
        half = len(args) // 2
        out.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": i,
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": args[:half]},
                        }
                    ]
                }
            )
        )
        out.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": args[half:]}}]}))
    out.append(chunk({}, answer.finish()))
    out.append(
        {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": answer.usage.to_json(),
        }
    )
    return out


def _completion(answer: Answer, model: str, cid: str, created: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.text or None}
    if answer.thinking:
        message["reasoning_content"] = answer.thinking
    if answer.tool_calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
            }
            for c in answer.tool_calls
        ]
    return {
        "id": cid,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": answer.finish()}],
        "usage": answer.usage.to_json(),
    }


def _make_handler(llm: FakeLLM) -> type[BaseHTTPRequestHandler]:
    counter = iter(range(1, 1 << 30))

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: pytest shows the test's own output

        def _send_json(self, status: int, obj: Any) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send_json(200, {"object": "list", "data": [{"id": llm.model}]})
            else:
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode(errors="replace")
            headers = {k.lower(): v for k, v in self.headers.items()}
            path = self.path.split("?", 1)[0].rstrip("/")
            if path.endswith("/embeddings"):
                with llm._lock:
                    llm.requests.append(Request(path, headers, body))
                self._embeddings(body)
                return
            if not path.endswith("/chat/completions"):
                with llm._lock:
                    llm.requests.append(Request(path, headers, body))
                self._send_json(404, {"error": {"message": f"no route {path}"}})
                return
            answer = llm._next_answer(body)
            with llm._lock:
                llm.requests.append(Request(path, headers, body, answer))
            if answer.status != 200:
                self._send_json(
                    answer.status,
                    {"error": {"message": answer.error, "type": "fake_error", "code": None}},
                )
                return
            cid = f"chatcmpl-fake{next(counter)}"
            created = int(time.time())
            model = body.get("model", llm.model) if isinstance(body, dict) else llm.model
            if isinstance(body, dict) and body.get("stream"):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for c in _chunks(answer, model, cid, created):
                    if answer.delay:
                        time.sleep(answer.delay)
                    self.wfile.write(b"data: " + json.dumps(c).encode() + b"\n\n")
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True
            else:
                self._send_json(200, _completion(answer, model, cid, created))

        def _embeddings(self, body: Any) -> None:
            inputs = body.get("input") if isinstance(body, dict) else None
            texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
            # The openai SDKs ask for base64 (float32, little-endian) unless told otherwise.
            b64 = isinstance(body, dict) and body.get("encoding_format") == "base64"
            data = []
            for i, t in enumerate(texts):
                vec = embedding(str(t), llm.embedding_dim)
                value: Any = (
                    base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode() if b64 else vec
                )
                data.append({"object": "embedding", "index": i, "embedding": value})
            tokens = sum(max(1, len(str(t)) // 4) for t in texts)
            self._send_json(
                200,
                {
                    "object": "list",
                    "data": data,
                    "model": body.get("model", "fake-embed") if isinstance(body, dict) else "",
                    "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                },
            )

    return Handler
