"""What every LLM client speaks: messages in, a completion or an :class:`LLMError` out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.io.jobs import CancelCheck

Role = Literal["user", "assistant"]

ErrorKind = Literal[
    "auth",
    "rate_limit",
    "server",
    "timeout",
    "connection",
    "bad_response",
    "overflow",
    "capability",
    "config",
    "refusal",
    "deadline",
]

RETRYABLE_KINDS: frozenset[ErrorKind] = frozenset({"rate_limit", "server", "timeout", "connection"})
"""Kinds worth another attempt after a back-off (algorithms.md section 8)."""

DEFAULT_MAX_TOKENS = 1024


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One turn of the conversation sent to the model."""

    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts reported by the server; None where it reported nothing."""

    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Completion:
    """The model's answer and how it was obtained.

    Parameters
    ----------
    text
        The generated text (every text part, concatenated).
    model
        The model that answered, as the server names it (else the one asked for).
    provider
        ``openai`` (any OpenAI-compatible server) or ``anthropic``.
    usage
        Token counts from the response.
    attempts
        HTTP requests made, 1 when the first one succeeded.
    seconds
        Wall time of the whole call, back-off sleeps included.
    finish_reason
        The server's own word (``stop``, ``length``, ``end_turn``, ``max_tokens``...).
    client
        :attr:`LLMClient.name` of the client that answered.
    skipped
        For a :class:`~core.llm.chain.FallbackChain`: the errors of the clients passed
        over before this one answered, as display strings.
    """

    text: str
    model: str
    provider: str
    usage: Usage
    attempts: int
    seconds: float
    finish_reason: str | None
    client: str = ""
    skipped: tuple[str, ...] = ()

    @property
    def truncated(self) -> bool:
        """True when the answer stopped at the output-token limit."""
        return self.finish_reason in ("length", "max_tokens")


class LLMError(Exception):
    """A call that did not produce a completion.

    The message is safe to show and to log: server text is redacted and never
    holds the API key.

    Parameters
    ----------
    kind
        What went wrong, for the caller to choose what to do next: retry later
        (``rate_limit``, ``server``, ``timeout``, ``connection``), fix settings
        (``auth``, ``config``), summarise in smaller pieces (``overflow``), use
        another model (``capability``, ``bad_response``, ``refusal``), allow more
        time (``deadline``: the caller's total time limit ran out).
    message
        A sentence for the user.
    status
        The HTTP status, when the server answered.
    provider, model
        Which endpoint failed.
    client
        The failing client's :attr:`LLMClient.name`, used as the message prefix.
    attempts
        HTTP requests made before giving up (0 when none was sent).
    endpoint
        Where the request went, without credentials (``http://host:port/v1``).

    Attributes
    ----------
    retry_after
        The server's ``Retry-After`` in seconds (bounded), on a 429 or 503.
    """

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status: int | None = None,
        provider: str = "",
        model: str = "",
        client: str = "",
        attempts: int = 0,
        endpoint: str = "",
    ) -> None:
        self.kind: ErrorKind = kind
        self.message = message
        self.status = status
        self.provider = provider
        self.model = model
        self.client = client
        self.attempts = attempts
        self.endpoint = endpoint
        self.retry_after: float | None = None
        super().__init__(message)

    @property
    def retryable(self) -> bool:
        """True for the transient kinds that get a back-off and another attempt."""
        return self.kind in RETRYABLE_KINDS

    def __str__(self) -> str:
        where = self.client or ":".join(p for p in (self.provider, self.model) if p)
        return f"{where}: {self.message}" if where else self.message


class LLMClient(Protocol):
    """A chat model behind one endpoint (or a chain of them).

    Implementations are synchronous and block; callers run them in worker threads.
    """

    @property
    def name(self) -> str:
        """``provider:...:model``, as :func:`~core.llm.spec.parse_llm_spec` reads it."""
        ...

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        system: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float | None = 0.2,
        cancelled: CancelCheck | None = None,
    ) -> Completion:
        """Ask the model to continue *messages*.

        Raises
        ------
        LLMError
            When no completion could be obtained.
        core.io.jobs.Cancelled
            When *cancelled* returns True before an attempt or during a back-off.
        """
        ...

    def close(self) -> None:
        """Release the HTTP connections."""
        ...
