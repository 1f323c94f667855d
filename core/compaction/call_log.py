"""The call log of a summary run: each call to the summariser and how it went.

A failed call becomes a :class:`CallRecord` with its error kind; a run that had one
starts its summary with a :func:`fallback_notice`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from core.safety.redact import redact


# -- the call log --------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CallRecord:
    """One call of a run to the summariser (or the knowledge extractor), as it went.

    Parameters
    ----------
    index, total
        Call number (from 1) and the calls the plan expected.
    step
        What the call was for (``summarising chunk 2 of 3``).
    client
        The client's name (``openai:URL:MODEL``, ``anthropic:MODEL``, ``offline``).
    endpoint
        The URL called, without credentials ("" for the offline summariser).
    ok
        False when the call failed after its retries.
    kind
        The :class:`~core.llm.base.LLMError` kind, or ``error`` for another exception.
    status
        The HTTP status of the failing answer, if there was one.
    message
        Why it failed ("" when it did not).
    attempts
        HTTP requests made.
    seconds
        Wall time of the call, back-offs included.
    """

    index: int
    total: int
    step: str
    client: str
    endpoint: str
    ok: bool
    kind: str = ""
    status: int | None = None
    message: str = ""
    attempts: int = 0
    seconds: float = 0.0

    @property
    def target(self) -> str:
        """The client, and its endpoint when the name does not already hold it."""
        if self.endpoint and self.endpoint not in self.client:
            return f"{self.client} ({self.endpoint})"
        return self.client

    def describe(self) -> str:
        """``call 2 of 3 (summarising chunk 2 of 3) to CLIENT failed after 4 attempts: WHY``."""
        of = f" of {self.total}" if self.index <= self.total else ""
        head = f"call {self.index}{of} ({self.step}) to {self.target}"
        plural = "" if self.attempts == 1 else "s"
        if self.ok:
            return f"{head} answered after {self.attempts} attempt{plural} in {self.seconds:.1f} s"
        tries = f" after {self.attempts} attempt{plural}" if self.attempts else ""
        return f"{head} failed{tries}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        """The JSON shape in ``memlens compact --json`` (``attempts`` list)."""
        return {
            "call": self.index,
            "of": self.total,
            "step": self.step,
            "client": self.client,
            "endpoint": self.endpoint,
            "ok": self.ok,
            "kind": self.kind or None,
            "status": self.status,
            "message": self.message or None,
            "attempts": self.attempts,
            "seconds": round(self.seconds, 3),
        }


def failed_call(
    exc: BaseException,
    *,
    index: int,
    total: int,
    step: str,
    client: str,
    endpoint: str,
    start: float,
) -> CallRecord:
    """The record of a call that raised *exc* (an LLMError or anything else)."""
    kind = str(getattr(exc, "kind", "") or "error")
    message = redact(str(getattr(exc, "message", "") or exc or type(exc).__name__))
    return CallRecord(
        index,
        total,
        step,
        str(getattr(exc, "client", "") or client),
        str(getattr(exc, "endpoint", "") or endpoint),
        False,
        kind,
        getattr(exc, "status", None),
        " ".join(message.split()),
        int(getattr(exc, "attempts", 0) or 0),
        time.monotonic() - start,
    )


FALLBACK_PREFIX = "[memlens fallback summary:"
"""How the first line of a summary written despite a failed call begins."""
_NOTICE_REASON_CHARS = 300


def fallback_notice(failure: CallRecord) -> str:
    """The first line of a fallback summary: it is one, which call failed and why."""
    reason = failure.message
    if len(reason) > _NOTICE_REASON_CHARS:
        reason = reason[: _NOTICE_REASON_CHARS - 1] + "…"
    of = f" of {failure.total}" if failure.index <= failure.total else ""
    return (
        f"{FALLBACK_PREFIX} the summariser {failure.target} failed (call {failure.index}{of}, "
        f"{failure.step}: {reason}); this is not a real summary of the messages it replaces]"
    )
