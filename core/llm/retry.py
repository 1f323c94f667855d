"""Back-off between attempts: 500 ms doubling, jitter 0.2, capped at 5 s (algorithms.md 8)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.jobs import check

if TYPE_CHECKING:
    import random
    from collections.abc import Callable

    from core.jobs import CancelCheck

SLEEP_STEP = 0.1
"""Longest single sleep while a cancel check is given: how late a cancel may be seen."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many retries, and how long to wait before each.

    Parameters
    ----------
    retries
        Retries after the first attempt (so ``retries + 1`` requests at most).
    base
        Delay before the first retry, in seconds; doubles for each further one.
    jitter
        Relative spread: the delay is multiplied by a uniform factor in
        ``[1 - jitter, 1 + jitter]``.
    cap
        No computed delay exceeds this, jitter included.
    retry_after_cap
        Bound on a server's ``Retry-After``, which replaces the computed delay.
    """

    retries: int = 3
    base: float = 0.5
    jitter: float = 0.2
    cap: float = 5.0
    retry_after_cap: float = 30.0

    def delay(self, retry: int, rng: random.Random) -> float:
        """Seconds to wait before retry number *retry* (0 for the first retry).

        The cap is applied after the jitter so that it is a hard bound.
        """
        raw = self.base * 2.0 ** min(retry, 62)
        return min(self.cap, raw * rng.uniform(1.0 - self.jitter, 1.0 + self.jitter))

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
    core.jobs.Cancelled
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
