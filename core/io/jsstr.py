r"""JavaScript string and number semantics the agent's numbers depend on.

Lengths in UTF-16 code units, ``JSON.stringify`` lengths, ``Number#toString``,
``Math.round``, ``\s`` and ``String#trim`` whitespace, and Node's UTF-8 encoding
of strings. Every count that must match the agent's (token estimates, caps,
hashes) is measured the way Node measures it.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any

_SPECIAL = re.compile(r'["\\\x00-\x1f]')
_LONE_SURROGATE = re.compile(
    r"[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]"
)
"""JSON.stringify (ES2019) writes a lone surrogate as a ``\\uXXXX`` escape."""
_SHORT_ESCAPES = frozenset('"\\\b\f\n\r\t')

JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
r"""The contents of a character class equal to JavaScript's ``\s`` (WhiteSpace and
LineTerminator: Unicode Zs, TAB, VT, FF, ZWNBSP U+FEFF, LF, CR, U+2028, U+2029).

Python's ``\s`` differs: it adds U+001C-U+001F and U+0085 and lacks U+FEFF (and,
with ``re.ASCII``, lacks everything beyond ASCII). ``String#trim`` strips the same set.
"""
_TRIM_CHARS = "".join(
    chr(c)
    for c in (
        *b"\t\n\x0b\x0c\r ",
        0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF,
    )
)  # fmt: skip
_SURROGATE = re.compile("[\ud800-\udfff]")
MEMO_MIN_CHARS = 256
"""Texts this long have their measures remembered (few, long, and measured again and again)."""


def js_len(text: str) -> int:
    """Length of *text* as JavaScript's ``String.prototype.length``."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_slice(text: str, limit: int) -> str:
    """The longest prefix of *text* of at most *limit* UTF-16 code units.

    Like JavaScript's ``text.slice(0, limit)``, except that a surrogate pair is
    never cut in half (the result is one unit shorter instead), so the prefix
    stays valid Unicode and still fits *limit* as the agent measures it.
    """
    if limit <= 0:
        return ""
    if text.isascii() or len(text) * 2 <= limit:
        return text[:limit]
    units = 0
    for i, ch in enumerate(text):
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > limit:
            return text[:i]
    return text


def js_trim(text: str) -> str:
    """``String.prototype.trim()``: strip JavaScript whitespace (see :data:`JS_SPACE`)."""
    return text.strip(_TRIM_CHARS)


def js_round(value: float) -> int:
    """``Math.round``: halves round up, towards +infinity (2.5 -> 3, -2.5 -> -2).

    Python's ``round`` rounds halves to even. Computed without ``floor(x + 0.5)``,
    which is off by one for 0.49999999999999994 where JavaScript is not.
    """
    floor = math.floor(value)
    return floor + 1 if value - floor >= 0.5 else floor


def js_utf8(text: str) -> bytes:
    """The bytes Node hashes for *text* (``hash.update(text)``: UTF-8).

    A surrogate pair (even one held as two code points) becomes its 4-byte
    character; a lone surrogate becomes U+FFFD, as Node's encoder does.
    """
    if text.isascii() or _SURROGATE.search(text) is None:
        return text.encode("utf-8")
    units = text.encode("utf-16-le", "surrogatepass")
    return units.decode("utf-16-le", "replace").encode("utf-8")


def _escaped_len(text: str) -> int:
    return _escaped_len_long(text) if len(text) >= MEMO_MIN_CHARS else _escaped_len_of(text)


@functools.lru_cache(maxsize=1024)
def _escaped_len_long(text: str) -> int:
    """:func:`_escaped_len_of`, remembered: planning measures the same long texts often."""
    return _escaped_len_of(text)


def _escaped_len_of(text: str) -> int:
    extra = 0
    for ch in _SPECIAL.findall(text):
        extra += 1 if ch in _SHORT_ESCAPES else 5
    if _SURROGATE.search(text) is not None:
        extra += 5 * len(_LONE_SURROGATE.findall(text))
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
    # repr gives the shortest digits that round-trip, as JavaScript does; only the
    # choice between plain and exponent notation differs.
    text = repr(value)
    if "e" not in text:
        return text
    mantissa, exp = text.split("e")
    e = int(exp)
    if -7 < e < 21:
        # JS prints plain decimals down to 1e-6; Python's repr switches at 1e-4.
        sign = "-" if mantissa.startswith("-") else ""
        digits = mantissa.lstrip("-").replace(".", "")
        return f"{sign}0.{'0' * (-e - 1)}{digits}"
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
