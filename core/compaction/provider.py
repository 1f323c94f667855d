"""Which model summarises: the choices the app offers, and the summariser each one makes.

A :class:`ProviderChoice` is a label, an ``--llm`` spec (``offline``,
``openai:URL:MODEL`` or ``anthropic:MODEL``) and the name of the environment
variable holding the key. Only the variable's *name* is kept: the key is read
from the environment at call time, and :func:`provider_key_status` says whether it is set
without ever returning it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from core.compaction.summarizers import LLMSummarizer, OfflineSummarizer
from core.io.jobs import Cancelled, check
from core.llm.base import DEFAULT_MAX_TOKENS

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from core.compaction.summarizers import Summarizer
    from core.io.jobs import CancelCheck
    from core.llm.base import ChatMessage, Completion, LLMClient

KeyStatus = Literal["not needed", "set", "missing"]
POLL_SECONDS = 0.05
"""How often a waiting call looks at its cancel check."""


@dataclass(frozen=True, slots=True)
class ProviderChoice:
    """A summarising model the user can pick.

    Parameters
    ----------
    label
        What the picker shows.
    spec
        ``offline``, ``openai:URL:MODEL`` or ``anthropic:MODEL``
        (see :func:`core.llm.parse_llm_spec`).
    key_env
        Name of the environment variable with the API key; None: no key for
        ``openai:`` (local servers), ``ANTHROPIC_API_KEY`` for ``anthropic:``.
    """

    label: str
    spec: str
    key_env: str | None = None

    @property
    def offline(self) -> bool:
        """True for the built-in extractive summariser (no model, no network)."""
        return self.spec.strip() == "offline"

    @property
    def effective_key_env(self) -> str | None:
        """The variable the client will read the key from (None: no key is sent)."""
        if self.offline:
            return None
        if self.spec.strip().startswith("anthropic:"):
            return self.key_env or "ANTHROPIC_API_KEY"
        return self.key_env


OFFLINE = ProviderChoice("Offline (extractive, no model)", "offline")


def with_offline_first(choices: Iterable[ProviderChoice]) -> list[ProviderChoice]:
    """*choices* with an offline choice first (:data:`OFFLINE` if none is given)."""
    given = list(choices)
    offline = [c for c in given if c.offline]
    return [offline[0] if offline else OFFLINE, *(c for c in given if not c.offline)]


def provider_key_status(
    choice: ProviderChoice, environ: Mapping[str, str] | None = None
) -> KeyStatus:
    """Whether the key *choice* needs is in the environment or the OS keychain.

    The key itself is never read out.
    """
    from core.safety.secrets import key_source

    name = choice.effective_key_env
    if name is None:
        return "not needed"
    return "set" if key_source(name, environ) else "missing"


def check_spec(choice: ProviderChoice) -> str | None:
    """None when *choice*'s spec is valid, else the error to show."""
    if choice.offline:
        return None
    from core.llm import parse_llm_spec

    try:
        client = parse_llm_spec(choice.spec, api_key_env=choice.key_env)
    except ValueError as exc:
        return str(exc)
    if client is not None:
        client.close()
    return None


@dataclass(slots=True)
class OpenedProvider:
    """A summariser and, for a model, its client (also used for knowledge extraction)."""

    summarizer: Summarizer
    client: LLMClient | None = None

    def close(self) -> None:
        """Release the client's connections."""
        if self.client is not None:
            self.client.close()


@dataclass(frozen=True, slots=True)
class Timeouts:
    """How long a compaction may wait on its summariser.

    Parameters
    ----------
    connect
        Seconds to connect to the endpoint.
    read
        Seconds between bytes of one answer.
    total
        Seconds for all the model calls of one compaction (retries, back-offs
        and the knowledge extraction included); the call in flight when it
        passes is cut and the run fails with a ``deadline`` reason.
    """

    connect: float = 10.0
    read: float = 60.0
    total: float = 120.0


def open_provider(choice: ProviderChoice, timeouts: Timeouts | None = None) -> OpenedProvider:
    """The summariser *choice* names; model calls are wrapped in :class:`InterruptibleClient`.

    The total deadline of *timeouts* (default :class:`Timeouts`) starts now: open
    the provider just before the compaction it serves.

    Raises
    ------
    ValueError
        For a spec :func:`core.llm.parse_llm_spec` does not accept.
    """
    if choice.offline:
        return OpenedProvider(OfflineSummarizer())
    from core.llm import Deadline, parse_llm_spec

    t = timeouts or Timeouts()
    client = parse_llm_spec(
        choice.spec,
        api_key_env=choice.key_env,
        connect_timeout=t.connect,
        read_timeout=t.read,
        deadline=Deadline(t.total),
    )
    if client is None:
        return OpenedProvider(OfflineSummarizer())
    wrapped = InterruptibleClient(client)
    return OpenedProvider(LLMSummarizer(wrapped), wrapped)


class InterruptibleClient:
    """An :class:`~core.llm.base.LLMClient` whose calls end as soon as they are cancelled.

    A client that can cut its own connections (an ``abort()`` method, as
    :class:`~core.llm.http.HttpProvider` has) is called directly: it watches the
    cancel check while a request is in flight and shuts the connection down at
    once, so no thread is left waiting on the server. Any other client is run
    in a helper thread while the caller polls the check; on a cancel the request
    is abandoned (its answer, when it comes, is dropped).
    """

    def __init__(self, inner: LLMClient, *, poll: float = POLL_SECONDS) -> None:
        self._inner = inner
        self._poll = poll
        self.abandoned = 0
        """Requests cut (or left behind) by a cancel."""

    @property
    def inner(self) -> LLMClient:
        """The wrapped client."""
        return self._inner

    @property
    def name(self) -> str:
        """The wrapped client's name."""
        return self._inner.name

    @property
    def display_url(self) -> str:
        """The wrapped client's URL without credentials ("" when it has none)."""
        return str(getattr(self._inner, "display_url", ""))

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        system: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float | None = 0.2,
        cancelled: CancelCheck | None = None,
    ) -> Completion:
        """The wrapped client's answer, or :class:`~core.io.jobs.Cancelled` within one poll."""
        if cancelled is None:
            return self._inner.complete(
                messages, system=system, max_tokens=max_tokens, temperature=temperature
            )
        check(cancelled, "LLM call")
        if callable(getattr(self._inner, "abort", None)):
            try:
                return self._inner.complete(
                    messages,
                    system=system,
                    max_tokens=max_tokens,
                    temperature=temperature,
                    cancelled=cancelled,
                )
            except Cancelled:
                self.abandoned += 1
                raise
        return self._in_thread(messages, system, max_tokens, temperature, cancelled)

    def _in_thread(
        self,
        messages: Sequence[ChatMessage],
        system: str | None,
        max_tokens: int,
        temperature: float | None,
        cancelled: CancelCheck,
    ) -> Completion:
        done = threading.Event()
        answer: list[Completion] = []
        error: list[BaseException] = []

        def call() -> None:
            try:
                answer.append(
                    self._inner.complete(
                        messages,
                        system=system,
                        max_tokens=max_tokens,
                        temperature=temperature,
                        cancelled=cancelled,
                    )
                )
            except BaseException as exc:  # handed to the waiting thread
                error.append(exc)
            finally:
                done.set()

        threading.Thread(target=call, name=f"llm {self.name}", daemon=True).start()
        while not done.wait(self._poll):
            if cancelled():
                self.abandoned += 1
                raise Cancelled("LLM call")
        if error:
            raise error[0]
        return answer[0]

    def abort(self) -> int:
        """Cut the wrapped client's connections now (0 when it cannot)."""
        abort = getattr(self._inner, "abort", None)
        return int(abort()) if callable(abort) else 0

    def close(self) -> None:
        """Close the wrapped client (a request in flight fails instead of waiting)."""
        self._inner.close()
