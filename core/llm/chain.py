"""A model chain: the next client answers when the previous one cannot (algorithms.md 8)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from core.io.jobs import check
from core.llm.base import DEFAULT_MAX_TOKENS, LLMError

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from core.io.jobs import CancelCheck
    from core.llm.base import ChatMessage, Completion, ErrorKind, LLMClient

FALL_THROUGH: frozenset[ErrorKind] = frozenset({"capability", "bad_response"})
"""Errors that pass the request on to the next client.

``capability`` (unknown model, rejected parameter) is what the spec names.
``bad_response`` is included because an endpoint that answers 200 with something
unusable (an HTML page, a reasoning model with no ``content``) will do so again,
while another model may well answer. Everything else stops the chain: auth and
config errors need the user, ``overflow`` needs a smaller prompt (the caller's
fallback ladder), and transient errors were already retried by the client.
"""


class FallbackChain:
    """Try *clients* in order; see :data:`FALL_THROUGH` for when to move on.

    Parameters
    ----------
    clients
        At least one client, preferred first.
    fall_through
        Error kinds that move on to the next client.
    """

    def __init__(
        self,
        clients: Sequence[LLMClient],
        *,
        fall_through: Collection[ErrorKind] = FALL_THROUGH,
    ) -> None:
        if not clients:
            raise ValueError("a fallback chain needs at least one client")
        self._clients = tuple(clients)
        self._fall_through = frozenset(fall_through)
        self.answered_by: str | None = None
        """Name of the client that gave the last completion (None before any)."""

    @property
    def clients(self) -> tuple[LLMClient, ...]:
        """The clients, in the order they are tried."""
        return self._clients

    @property
    def name(self) -> str:
        """The client names joined by `` -> ``."""
        return " -> ".join(client.name for client in self._clients)

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        system: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float | None = 0.2,
        cancelled: CancelCheck | None = None,
    ) -> Completion:
        """The first completion a client gives; :attr:`Completion.skipped` lists the rest.

        Raises
        ------
        LLMError
            The first error not in *fall_through*; or, when every client fell
            through, one of the last client's kind whose message lists them all.
        core.io.jobs.Cancelled
            When *cancelled* returns True.
        """
        errors: list[LLMError] = []
        for client in self._clients:
            check(cancelled, "LLM fallback chain")
            try:
                completion = client.complete(
                    messages,
                    system=system,
                    max_tokens=max_tokens,
                    temperature=temperature,
                    cancelled=cancelled,
                )
            except LLMError as exc:
                if exc.kind not in self._fall_through:
                    raise
                errors.append(exc)
                continue
            self.answered_by = client.name
            return dataclasses.replace(
                completion,
                client=completion.client or client.name,
                skipped=tuple(str(e) for e in errors),
            )
        last = errors[-1]
        if len(errors) == 1:
            raise last
        raise LLMError(
            last.kind,
            "no model in the chain could answer: " + "; ".join(str(e) for e in errors),
            status=last.status,
            provider=last.provider,
            model=last.model,
            client=self.name,
            attempts=sum(e.attempts for e in errors),
        ) from last

    def abort(self) -> int:
        """Cut every client's connections now; the number of sockets shut down."""
        return sum(int(getattr(c, "abort", lambda: 0)()) for c in self._clients)

    def close(self) -> None:
        """Close every client."""
        for client in self._clients:
            client.close()
