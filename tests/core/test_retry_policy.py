"""Summary-call retries as OpenClaw makes them: 3 requests, 500 ms doubling, 20 % jitter.

OpenClaw 2026.9.6, ``dist/builtin-openclaw-q1hiFm14.mjs`` (``summarizeChunks``)::

    summary = await retryAsync(() => generateSummary(chunk, ...), {
        attempts: 3,
        minDelayMs: 500,
        maxDelayMs: 5e3,
        jitter: .2,
        label: "compaction/generateSummary",
        ...

and ``dist/src-D4OikzaT.mjs`` (``retryAsync``, ``applyJitter``)::

    const baseDelay = hasRetryAfter ? ... : minDelayMs * 2 ** (attempt - 1);
    let delay = Math.min(baseDelay, delayCap);
    delay = applyJitter(delay, resolved.jitter, wantsPositiveDraw ? "positive" : "symmetric", random);
    delay = Math.min(Math.max(delay, minDelayMs), delayCap);
    ...
    const raw = delayMs * (1 + (mode === "positive" ? fraction * jitter : (fraction * 2 - 1) * jitter));
    return Math.max(0, mode === "positive" ? Math.ceil(raw) : Math.round(raw));

The requests are counted by a real HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import random

import pytest

from core.llm import LLMError, OpenAICompatibleClient
from core.llm.base import ChatMessage
from core.llm.retry import RetryPolicy
from tests.core.summary_fault_server import Fault, running

HELLO = [ChatMessage("user", "hello")]
DOWN = Fault(status=503, body={"error": {"message": "overloaded"}})


class Draws(random.Random):
    """``Math.random()`` answers given in advance."""

    def __init__(self, *values: float) -> None:
        super().__init__()
        self.values = list(values)

    def uniform(self, a: float, b: float) -> float:
        assert (a, b) == (0.0, 1.0)
        return self.values.pop(0)


def openclaw_delays(draws: list[float], attempts: int = 3) -> list[float]:
    """The sleeps of OpenClaw's ``retryAsync`` for the summary call, in seconds."""
    out = []
    for attempt in range(1, attempts):
        delay = min(500 * 2 ** (attempt - 1), 5000)
        raw = delay * (1 + (draws[attempt - 1] * 2 - 1) * 0.2)
        ms = int(raw // 1 + (1 if raw % 1 >= 0.5 else 0))  # Math.round
        out.append(min(max(ms, 500), 5000) / 1000)
    return out


def test_the_policy_is_openclaws():
    p = RetryPolicy()
    assert (p.retries + 1, p.base, p.cap, p.jitter) == (3, 0.5, 5.0, 0.2)
    for draws in ([0.0, 0.0], [0.999, 0.999], [0.5, 0.5], [0.123456, 0.777777], [0.25, 0.9]):
        rng = Draws(*draws)
        assert [p.delay(k, rng) for k in range(2)] == openclaw_delays(draws)
    # later retries (a longer policy) stay capped at 5 s, jitter included
    rng = Draws(0.99, 0.99, 0.99, 0.99, 0.99, 0.99)
    assert [p.delay(k, rng) for k in range(6)] == [0.598, 1.196, 2.392, 4.784, 5.0, 5.0]


def test_a_summary_server_that_stays_down_gets_three_requests():
    sleeps: list[float] = []
    with running() as server:
        server.set(DOWN)
        client = OpenAICompatibleClient(
            f"{server.url}/v1",
            "m",
            retries=RetryPolicy().retries,
            sleep=sleeps.append,
            rng=Draws(0.1, 0.8),
        )
        with pytest.raises(LLMError) as info:
            client.complete(HELLO)
        assert len(server.requests) == 3
    assert info.value.attempts == 3
    assert sleeps == openclaw_delays([0.1, 0.8]) == [0.5, 1.12]


def test_a_summary_server_that_recovers_on_the_third_request():
    sleeps: list[float] = []
    with running() as server:
        server.set(Fault(body={"choices": [{"message": {"content": "ok"}}]}), DOWN, DOWN)
        client = OpenAICompatibleClient(
            f"{server.url}/v1", "m", retries=RetryPolicy().retries, sleep=sleeps.append
        )
        done = client.complete(HELLO)
        assert len(server.requests) == 3
    assert done.attempts == 3 and len(sleeps) == 2
    assert 0.5 <= sleeps[0] <= 0.6 and 0.8 <= sleeps[1] <= 1.2


def test_the_default_client_makes_three_requests():
    """OpenClaw's summary call: ``retryAsync(..., {attempts: 3})``, 3 requests in all."""
    with running() as server:
        server.set(DOWN)
        client = OpenAICompatibleClient(f"{server.url}/v1", "m", sleep=lambda s: None)
        with pytest.raises(LLMError):
            client.complete(HELLO)
        assert len(server.requests) == 3
