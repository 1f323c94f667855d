"""Epoch times as text for people, without ever failing on a bad value.

Agent files are read leniently, so a timestamp can be anything a JSON number
can be: negative, ``1e300``, far beyond what ``datetime`` (or JavaScript's
``Date``, +-8.64e15 ms) can hold. Formatting one must give a readable
placeholder, not an ``OverflowError``.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

MAX_DATE_MS = 8_640_000_000_000_000
"""JavaScript's ``Date`` range: +-8.64e15 ms around the epoch."""
BAD_TIME = "????-??-?? ??:??"
"""What an unrepresentable time shows as (as wide as a good one)."""


def is_date_ms(ms: object) -> bool:
    """True when *ms* is a number JavaScript's ``Date`` can hold."""
    if isinstance(ms, bool) or not isinstance(ms, (int, float)):
        return False
    try:
        return abs(ms) <= MAX_DATE_MS
    except OverflowError:
        return False


def utc_minute(seconds: float) -> str:
    """``YYYY-MM-DD HH:MM`` (UTC) of epoch *seconds*, or :data:`BAD_TIME`."""
    try:
        if not math.isfinite(seconds):
            return BAD_TIME
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, ValueError, OSError):
        return BAD_TIME


def utc_minute_ms(ms: float) -> str:
    """``YYYY-MM-DD HH:MM`` (UTC) of epoch milliseconds *ms*, or :data:`BAD_TIME`."""
    try:
        return utc_minute(ms / 1000)
    except OverflowError:  # an int too large for a float
        return BAD_TIME
