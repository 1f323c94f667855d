"""A total time limit shared by every model call of one job (a compaction)."""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable


class Deadline:
    """A point in time by which a job's model calls, retries and back-offs must end.

    The clock starts when the deadline is made. Clients given one bound every
    request by what remains, abort a request still running when it passes, and
    fail (kind ``deadline``) instead of sleeping or retrying past it.

    Parameters
    ----------
    seconds
        The time allowed, above 0 (``math.inf``: no limit).
    clock
        Monotonic seconds (injectable for tests).
    """

    def __init__(self, seconds: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        if not seconds > 0:
            raise ValueError("a deadline needs a time above 0 seconds")
        self.seconds = seconds
        self._clock = clock
        self._end = clock() + seconds

    def remaining(self) -> float:
        """Seconds left, 0 once the deadline has passed."""
        return max(0.0, self._end - self._clock())

    @property
    def expired(self) -> bool:
        """True once the deadline has passed."""
        return self._clock() >= self._end

    def describe(self) -> str:
        """``the total time limit of 120 s``, for messages."""
        if math.isinf(self.seconds):
            return "no total time limit"
        return f"the total time limit of {self.seconds:g} s"

    def __repr__(self) -> str:
        return f"Deadline({self.seconds:g} s, {self.remaining():.1f} s left)"
