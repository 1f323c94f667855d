"""Progress and cancellation for long jobs (loading, embedding, indexing)."""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[int, int, str], None]
"""``progress(done, total, label)``."""
CancelCheck = Callable[[], bool]
"""Returns True when the caller wants the job to stop."""


class Cancelled(Exception):
    """Raised inside a job when its caller asked it to stop."""


def check(cancelled: CancelCheck | None, where: str = "") -> None:
    """Raise :class:`Cancelled` if *cancelled* says so."""
    if cancelled is not None and cancelled():
        raise Cancelled(where)
