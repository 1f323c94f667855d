"""The HTTP half shared by every provider: key lookup, redaction, retries, error mapping.

The API key is read from the environment at each call and lives only in the
request headers: it is never stored on the client, written anywhere or put in an
error message.
"""

from __future__ import annotations

import random
import re
import threading
import time
from typing import TYPE_CHECKING, Any, ClassVar, Self

import httpx

from core.io import jsonio
from core.io.jobs import Cancelled, check
from core.llm.base import DEFAULT_MAX_TOKENS, ChatMessage, Completion, LLMError, Usage
from core.llm.errors import (
    LABELS,
    classify,
    error_detail,
    looks_like_capability,
    looks_like_overflow,
)
from core.llm.retry import RetryPolicy, wait
from core.llm.watch import AbortableBackend, Connections, Watchdog
from core.safety.redact import redact

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import TracebackType

    from core.io.jobs import CancelCheck
    from core.llm.base import ErrorKind
    from core.llm.deadline import Deadline

_PRINTABLE_KEY = re.compile(r"[\x21-\x7e]+")
_USERINFO = re.compile(r"(?<=://)[^/@]*@")

REFUSAL_REASONS = frozenset({"content_filter", "refusal"})
"""Finish reasons that say the model (or its provider) declined to answer."""


class BadResponse(Exception):
    """Raised by a provider's ``parse_answer`` for a 200 answer it cannot use."""

    def __init__(self, message: str, kind: ErrorKind = "bad_response") -> None:
        self.kind: ErrorKind = kind
        super().__init__(message)


def answer_error(data: dict[str, Any], what: str) -> BadResponse:
    """A 200 answer carrying an ``error`` object instead of *what* (seen behind proxies)."""
    err = data.get("error")
    if err is None:
        return BadResponse(f"the answer has no {what}")
    message = err.get("message") if isinstance(err, dict) else err
    text = " ".join(str(message).split())[:300]
    if looks_like_overflow(text.lower()):
        return BadResponse(text, "overflow")
    if looks_like_capability(text.lower()):
        return BadResponse(text, "capability")
    return BadResponse(f"the answer has no {what}: {text}")


class HttpProvider:
    """Base of the HTTP clients; subclasses say where to post and how to read the answer."""

    provider: ClassVar[str] = ""
    path: ClassVar[str] = ""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str | None,
        timeout: float,
        retries: int,
        transport: httpx.BaseTransport | None,
        sleep: Callable[[float], None],
        rng: random.Random | None,
        connect_timeout: float | None = None,
        read_timeout: float | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        try:
            url = httpx.URL(base_url)
        except httpx.InvalidURL as exc:
            raise ValueError(f"invalid base URL {_USERINFO.sub('', base_url)!r}: {exc}") from None
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"base URL must be http(s)://host[:port][/path], not {base_url!r}")
        if not model:
            raise ValueError("a model name is required")
        if retries < 0:
            raise ValueError("retries must be >= 0")
        self._base_url = base_url.rstrip("/")
        self._model = model
        self._api_key_env = api_key_env
        self._timeouts = httpx.Timeout(
            timeout,
            connect=timeout if connect_timeout is None else connect_timeout,
            read=timeout if read_timeout is None else read_timeout,
        )
        self._policy = RetryPolicy(retries=retries)
        self._sleep = sleep
        self._rng = rng if rng is not None else random.Random()
        self._connections = Connections()
        self._transport = transport
        self._client: httpx.Client | None = None
        self._client_lock = threading.Lock()
        self.deadline = deadline
        """The job's total time limit (None: none); settable between jobs."""

    @property
    def _http(self) -> httpx.Client:
        """The connection pool, made on the first request.

        A client that is only made to check a spec, or never asked, never builds
        one: the default transport's TLS context (the system's CA certificates) costs
        tens of milliseconds, and the app makes a client per provider choice.
        """
        with self._client_lock:
            if self._client is None:
                transport = self._transport
                if transport is None:
                    transport = httpx.HTTPTransport()
                    # a connect a cancel or the deadline can cut (see AbortableBackend)
                    transport._pool._network_backend = AbortableBackend(self._connections)
                self._client = httpx.Client(timeout=self._timeouts, transport=transport)
            return self._client

    @property
    def model(self) -> str:
        """The model asked for."""
        return self._model

    @property
    def base_url(self) -> str:
        """The endpoint root, without a trailing slash."""
        return self._base_url

    @property
    def api_key_env(self) -> str | None:
        """Name of the environment variable holding the API key (None: send no key)."""
        return self._api_key_env

    @property
    def timeouts(self) -> httpx.Timeout:
        """Connect, read, write and pool timeouts of each request."""
        return self._timeouts

    @property
    def display_url(self) -> str:
        """:attr:`base_url` without any ``user:password@``."""
        return _USERINFO.sub("", self._base_url)

    @property
    def name(self) -> str:
        """``provider:...:model`` (see :func:`core.llm.spec.parse_llm_spec`)."""
        raise NotImplementedError

    def abort(self) -> int:
        """Shut down the connections now, from any thread; a request in flight fails at once.

        Returns the number of sockets shut down.
        """
        return self._connections.abort()

    def close(self) -> None:
        """Cut any request in flight and close the connection pool."""
        self._connections.abort()
        with self._client_lock:
            client = self._client
        if client is not None:
            client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    # -- what subclasses provide -------------------------------------------------

    def build_headers(self, key: str | None) -> dict[str, str]:
        """Request headers, the key included when there is one."""
        raise NotImplementedError

    def build_body(
        self,
        messages: Sequence[ChatMessage],
        system: str | None,
        max_tokens: int,
        temperature: float | None,
    ) -> dict[str, Any]:
        """The JSON body, from already-redacted texts."""
        raise NotImplementedError

    def parse_answer(self, data: Any) -> tuple[str, str | None, Usage, str | None]:
        """``(text, model, usage, finish_reason)`` of a 200 answer; :class:`BadResponse` else."""
        raise NotImplementedError

    # -- the call ----------------------------------------------------------------

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        system: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float | None = 0.2,
        cancelled: CancelCheck | None = None,
    ) -> Completion:
        """Send *messages* (and *system*), redacted, and return the answer.

        Retries rate limits, 5xx answers, timeouts and connection errors with the
        back-off of :class:`~core.llm.retry.RetryPolicy`; a ``Retry-After`` on a
        429 or 503 replaces the computed delay. *cancelled* is checked before each
        attempt, during back-off and, from a watchdog thread, while a request is
        in flight: a cancel shuts its connection down at once. With a
        :attr:`deadline`, each request is bounded by the time left, a request
        still running when it passes is cut the same way, and no back-off or
        retry goes past it (kind ``deadline``).

        A 200 answer is refused when its text is empty (``bad_response``) or the
        provider says the model refused (``refusal``: OpenAI ``refusal`` or
        ``finish_reason: content_filter``, Anthropic ``stop_reason: refusal``).

        Raises
        ------
        LLMError
            See :class:`~core.llm.base.LLMError` for the kinds.
        core.io.jobs.Cancelled
            When *cancelled* returns True.
        """
        start = time.monotonic()
        check(cancelled, "LLM call")
        key = self._read_key()
        body = self.build_body(
            [ChatMessage(m.role, redact(m.content)) for m in messages],
            None if system is None else redact(system),
            max_tokens,
            temperature,
        )
        data, attempts = self._post(jsonio.dumps(body), self.build_headers(key), key, cancelled)
        try:
            text, model, usage, finish_reason = self.parse_answer(data)
        except BadResponse as exc:
            raise self._error(exc.kind, str(exc), None, key, attempts) from None
        if finish_reason in REFUSAL_REASONS:
            message = f"the model refused to answer (finish reason {finish_reason!r})"
            raise self._error("refusal", message, None, key, attempts)
        if not text.strip():
            why = f" (finish reason {finish_reason!r})" if finish_reason else ""
            raise self._error("bad_response", f"the answer is empty{why}", None, key, attempts)
        return Completion(
            text=text,
            model=model or self._model,
            provider=self.provider,
            usage=usage,
            attempts=attempts,
            seconds=time.monotonic() - start,
            finish_reason=finish_reason,
            client=self.name,
        )

    def _read_key(self) -> str | None:
        if self._api_key_env is None:
            return None
        from core.safety.secrets import resolve_key

        key = (resolve_key(self._api_key_env) or "").strip()
        if not key:
            raise self._error(
                "config",
                f"no API key: environment variable {self._api_key_env} is not set and the OS "
                "keychain holds none for it",
                None,
                None,
                0,
            )
        if not _PRINTABLE_KEY.fullmatch(key):
            # A header cannot carry it, and the HTTP library's error would quote it.
            raise self._error(
                "config",
                f"the API key in {self._api_key_env} holds a space, a line break or a "
                "non-ASCII character (a paste error?); it was not sent",
                None,
                None,
                0,
            )
        return key

    def _post(
        self,
        payload: bytes,
        headers: dict[str, str],
        key: str | None,
        cancelled: CancelCheck | None,
    ) -> tuple[Any, int]:
        url = self._base_url + self.path
        attempt = 0
        while True:
            check(cancelled, "LLM call")
            attempt += 1
            try:
                return self._attempt(url, payload, headers, key, attempt, cancelled), attempt
            except LLMError as error:
                if not error.retryable or attempt > self._policy.retries:
                    raise
                delay = error.retry_after
                if delay is None:
                    delay = self._policy.delay(attempt - 1, self._rng)
                if self.deadline is not None and delay >= self.deadline.remaining():
                    raise self._deadline_error(key, attempt, error.message) from None
            wait(delay, sleep=self._sleep, cancelled=cancelled)

    def _request_timeout(self) -> httpx.Timeout:
        """The timeouts of the next request: each bounded by the time left."""
        t = self._timeouts
        if self.deadline is None:
            return t
        left = max(self.deadline.remaining(), 0.001)

        def bound(value: float | None) -> float:
            return left if value is None else min(value, left)

        return httpx.Timeout(
            connect=bound(t.connect), read=bound(t.read), write=bound(t.write), pool=bound(t.pool)
        )

    def _deadline_error(
        self, key: str | None, attempts: int, last: str | None, *, waiting: bool = False
    ) -> LLMError:
        assert self.deadline is not None
        message = f"{self.deadline.describe()} ran out"
        if waiting:
            message += " while waiting for the answer; the connection was closed"
        if last:
            message += f" (last error: {last})"
        return self._error("deadline", message, None, key, attempts)

    def _attempt(
        self,
        url: str,
        payload: bytes,
        headers: dict[str, str],
        key: str | None,
        attempt: int,
        cancelled: CancelCheck | None,
    ) -> Any:
        """One request: the decoded 200 answer, or an :class:`LLMError`."""
        if self.deadline is not None and self.deadline.expired:
            raise self._deadline_error(key, attempt - 1, None)
        watch = Watchdog(self._connections, cancelled=cancelled, deadline=self.deadline)
        timeout = self._request_timeout()
        try:
            with watch:
                response = self._http.post(
                    url,
                    content=payload,
                    headers=headers,
                    timeout=timeout,
                    extensions={"trace": self._connections.trace},
                )
        except httpx.HTTPError as exc:
            if watch.reason == "cancel":
                raise Cancelled("LLM call (the connection was closed)") from None
            if watch.reason == "deadline" or (self.deadline is not None and self.deadline.expired):
                raise self._deadline_error(key, attempt, None, waiting=True) from None
            raise self._http_error(exc, key, attempt, timeout) from None
        except (ValueError, UnicodeError) as exc:  # a header or URL httpx cannot encode
            message = f"the request to {self.display_url} could not be built: {type(exc).__name__}"
            raise self._error("config", message, None, key, attempt) from None
        if watch.reason == "cancel":
            raise Cancelled("LLM call")
        return self._decode(response, key, attempt)

    def _http_error(
        self, exc: httpx.HTTPError, key: str | None, attempt: int, timeout: httpx.Timeout
    ) -> LLMError:
        if isinstance(exc, httpx.ConnectTimeout):
            message = f"could not connect to {self.display_url} within {timeout.connect:g} s"
            return self._error("timeout", message, None, key, attempt)
        if isinstance(exc, httpx.TimeoutException):
            message = f"no answer within {timeout.read:g} s"
            return self._error("timeout", message, None, key, attempt)
        if isinstance(exc, httpx.UnsupportedProtocol):
            return self._error("config", str(exc), None, key, attempt)
        if isinstance(exc, httpx.DecodingError):
            return self._error("bad_response", str(exc), None, key, attempt)
        message = f"cannot reach {self.display_url}: {exc or type(exc).__name__}"
        return self._error("connection", message, None, key, attempt)

    def _decode(self, response: httpx.Response, key: str | None, attempt: int) -> Any:
        """The JSON of a 2xx answer; an :class:`LLMError` for any other."""
        status = response.status_code
        if 200 <= status < 300:
            try:
                return jsonio.loads(response.content)
            except jsonio.JSONDecodeError:
                snippet = " ".join(response.text.split())[:120]
                message = f"the answer is not JSON: {snippet!r}"
                raise self._error("bad_response", message, None, key, attempt) from None
        detail, haystack = error_detail(response)
        kind = classify(status, haystack)
        message = f"HTTP {status}, {LABELS[kind]}: {detail}"
        if kind == "auth" and self._api_key_env is not None:
            message += f" (the key comes from {self._api_key_env})"
        error = self._error(kind, message, status, key, attempt)
        if status in (429, 503):
            error.retry_after = self._policy.honour_retry_after(response.headers.get("retry-after"))
        raise error

    def _error(
        self, kind: ErrorKind, message: str, status: int | None, key: str | None, attempts: int
    ) -> LLMError:
        message = redact(message)
        if key:
            # the key as written, and as a repr or an escaped header value would show it
            for shown in {key, repr(key)[1:-1], key.encode("unicode_escape").decode("ascii")}:
                message = message.replace(shown, "[REDACTED]")
        return LLMError(
            kind,
            message,
            status=status,
            provider=self.provider,
            model=self._model,
            client=self.name,
            attempts=attempts,
            endpoint=self.display_url,
        )
