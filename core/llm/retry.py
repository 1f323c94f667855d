"""Back-off between attempts, as OpenClaw's compaction summary calls make them.

OpenClaw 2026.9.6 (``dist/builtin-openclaw-*.mjs``, ``summarizeChunks``) wraps
each summary call in ``retryAsync(..., {attempts: 3, minDelayMs: 500,
maxDelayMs: 5e3, jitter: .2})``: 3 requests in all, and before retry *n*
(1-based) ``min(500 * 2 ** (n - 1), 5000)`` ms, jittered symmetrically by up to
20 %, rounded to the millisecond and kept within [500, 5000] ms
(``retryAsync`` / ``applyJitter`` in ``dist/src-*.mjs``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.io.jobs import check
from core.io.jsstr import js_round

if TYPE_CHECKING:
    import random
    from collections.abc import Callable

    from core.io.jobs import CancelCheck

SLEEP_STEP = 0.1
"""Longest single sleep while a cancel check is given: how late a cancel may be seen."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many retries, and how long to wait before each.

    Parameters
    ----------
    retries
        Retries after the first attempt (so ``retries + 1`` requests at most);
        2 as OpenClaw's ``attempts: 3``.
    base
        Delay before the first retry, in seconds; doubles for each further one.
        Also the floor of every computed delay (OpenClaw's ``minDelayMs``).
    jitter
        Relative spread: the delay is multiplied by ``1 + (2r - 1) * jitter``
        for a uniform ``r`` in ``[0, 1)``.
    cap
        No computed delay exceeds this, jitter included (``maxDelayMs``).
    retry_after_cap
        Bound on a server's ``Retry-After``, which replaces the computed delay.
    """

    retries: int = 2
    base: float = 0.5
    jitter: float = 0.2
    cap: float = 5.0
    retry_after_cap: float = 30.0

    def delay(self, retry: int, rng: random.Random) -> float:
        """Seconds to wait before retry number *retry* (0 for the first retry).

        OpenClaw's ``retryAsync`` without a ``Retry-After``: the doubling capped,
        jittered, rounded to whole milliseconds, then held within
        ``[base, cap]``: the cap stays a hard bound and no delay is shorter
        than the first.
        """
        low, high = self.base * 1000.0, self.cap * 1000.0
        nominal = min(low * 2.0 ** min(retry, 62), high)
        r = rng.uniform(0.0, 1.0)  # Math.random()
        ms = js_round(nominal * (1.0 + (r * 2.0 - 1.0) * self.jitter))
        return min(max(ms, low), high) / 1000.0

    def honour_retry_after(self, value: str | None) -> float | None:
        """The server's ``Retry-After`` in seconds, bounded; None when absent or unusable.

        Only the delta-seconds form is read; an HTTP date falls back to the
        computed back-off.
        """
        if value is None:
            return None
        try:
            seconds = float(value.strip())
        except ValueError:
            return None
        if not math.isfinite(seconds) or seconds < 0:
            return None
        return min(seconds, self.retry_after_cap)


def wait(
    seconds: float,
    *,
    sleep: Callable[[float], None],
    cancelled: CancelCheck | None,
    where: str = "LLM back-off",
) -> None:
    """Sleep *seconds*, in steps of at most :data:`SLEEP_STEP` when *cancelled* is given.

    Raises
    ------
    core.io.jobs.Cancelled
        As soon as *cancelled* returns True.
    """
    if cancelled is None:
        if seconds > 0:
            sleep(seconds)
        return
    remaining = seconds
    while remaining > 1e-9:
        check(cancelled, where)
        step = min(SLEEP_STEP, remaining)
        sleep(step)
        remaining -= step
    check(cancelled, where)
