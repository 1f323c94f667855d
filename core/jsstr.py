"""JavaScript string semantics: lengths in UTF-16 code units, JSON.stringify.

Every count that must match the agent's (token estimates, caps) is measured the
way Node measures it.
"""

from __future__ import annotations

import math
import re
from typing import Any

_SPECIAL = re.compile(r'["\\\x00-\x1f]')
_SHORT_ESCAPES = frozenset('"\\\b\f\n\r\t')


def js_len(text: str) -> int:
    """Length of *text* as JavaScript's ``String.prototype.length``."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _escaped_len(text: str) -> int:
    extra = 0
    for ch in _SPECIAL.findall(text):
        extra += 1 if ch in _SHORT_ESCAPES else 5
    return js_len(text) + 2 + extra


def js_number(value: float) -> str:
    """Format a number as JavaScript's ``Number.prototype.toString`` does."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        return "null"  # JSON.stringify turns NaN and Infinity into null
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" not in text:
        return text
    mantissa, exp = text.split("e")
    e = int(exp)
    if -7 < e < 21:
        # JS prints plain decimals in this range; Python's repr switched early.
        return format(value, "f").rstrip("0").rstrip(".") if e < 0 else str(int(value))
    return f"{mantissa}e{'+' if e > 0 else '-'}{abs(e)}"


def js_json_len(value: Any) -> int:
    """Length of ``JSON.stringify(value)`` in UTF-16 code units."""
    if isinstance(value, str):
        return _escaped_len(value)
    if value is None:
        return 4
    if isinstance(value, bool):
        return 4 if value else 5
    if isinstance(value, (int, float)):
        return len(js_number(value))
    if isinstance(value, dict):
        if not value:
            return 2
        # braces + colons + commas, then keys and values
        total = 2 + len(value) + (len(value) - 1)
        for key, item in value.items():
            total += _escaped_len(str(key)) + js_json_len(item)
        return total
    if isinstance(value, (list, tuple)):
        if not value:
            return 2
        return 2 + (len(value) - 1) + sum(js_json_len(item) for item in value)
    return 4  # anything else serialises as null in our data
