"""Which model summarises: the choices the app offers, and the summariser each one makes.

A :class:`ProviderChoice` is a label, an ``--llm`` spec (``offline``,
``openai:URL:MODEL`` or ``anthropic:MODEL``) and the name of the environment
variable holding the key. Only the variable's *name* is kept: the key is read
from the environment at call time, and :func:`key_status` says whether it is set
without ever returning it.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from core.compaction.summarize import LLMSummarizer, OfflineSummarizer
from core.jobs import Cancelled, check
from core.llm.base import DEFAULT_MAX_TOKENS

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from core.compaction.summarize import Summarizer
    from core.jobs import CancelCheck
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


def key_status(choice: ProviderChoice, environ: Mapping[str, str] | None = None) -> KeyStatus:
    """Whether the key *choice* needs is in the environment (the key itself is never read out)."""
    name = choice.effective_key_env
    if name is None:
        return "not needed"
    env = os.environ if environ is None else environ
    return "set" if env.get(name, "").strip() else "missing"


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


def open_provider(choice: ProviderChoice) -> OpenedProvider:
    """The summariser *choice* names; model calls are wrapped in :class:`InterruptibleClient`.

    Raises
    ------
    ValueError
        For a spec :func:`core.llm.parse_llm_spec` does not accept.
    """
    if choice.offline:
        return OpenedProvider(OfflineSummarizer())
    from core.llm import parse_llm_spec

    client = parse_llm_spec(choice.spec, api_key_env=choice.key_env)
    if client is None:
        return OpenedProvider(OfflineSummarizer())
    wrapped = InterruptibleClient(client)
    return OpenedProvider(LLMSummarizer(wrapped), wrapped)


class InterruptibleClient:
    """An :class:`~core.llm.base.LLMClient` whose calls return as soon as they are cancelled.

    The HTTP clients check their cancel callback only between attempts, so a
    request to a slow server holds the caller until it answers or times out. This
    wrapper makes the request in a helper thread and waits for it while polling
    the callback: on a cancel it raises :class:`~core.jobs.Cancelled` at once and
    the request is abandoned (its answer, when it comes, is dropped; closing the
    client makes it fail).
    """

    def __init__(self, inner: LLMClient, *, poll: float = POLL_SECONDS) -> None:
        self._inner = inner
        self._poll = poll
        self.abandoned = 0
        """Requests left behind by a cancel."""

    @property
    def inner(self) -> LLMClient:
        """The wrapped client."""
        return self._inner

    @property
    def name(self) -> str:
        """The wrapped client's name."""
        return self._inner.name

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        system: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float | None = 0.2,
        cancelled: CancelCheck | None = None,
    ) -> Completion:
        """The wrapped client's answer, or :class:`~core.jobs.Cancelled` within one poll."""
        if cancelled is None:
            return self._inner.complete(
                messages, system=system, max_tokens=max_tokens, temperature=temperature
            )
        check(cancelled, "LLM call")
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

    def close(self) -> None:
        """Close the wrapped client (an abandoned request then fails instead of waiting)."""
        self._inner.close()
