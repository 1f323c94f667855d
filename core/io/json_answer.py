"""JSON in a model's answer: fenced or bare, with trailing commas, or cut short.

Models wrap JSON in markdown fences, leave a comma before a closing bracket, or stop
at their token limit mid-answer. :func:`answer_body` gives the JSON part of an
answer with such commas dropped (outside strings); :func:`complete_objects` gives
every object that closed before a cut. Both read strings as JSON does, so a comma
or brace inside a quoted value is left alone.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from core.io import jsonio

if TYPE_CHECKING:
    from collections.abc import Iterator

_FENCE = re.compile(r"```[ \t]*(?:json5?|JSON)?[ \t]*\n?(.*?)(?:```|\Z)", re.S)


def answer_body(text: str) -> str:
    """The fenced block of *text* if it has one (else all of it), trailing commas dropped."""
    body = text.strip()
    fence = _FENCE.search(body)
    if fence:
        body = fence.group(1)
    return without_trailing_commas(body)


def _scanned(text: str) -> Iterator[tuple[int, str, bool]]:
    """Each character of *text*, its position, and whether it lies in a JSON string.

    A string's closing quote is in it, its opening quote not (as a reader that has not
    yet seen it).
    """
    in_str = escaped = False
    for i, ch in enumerate(text):
        inside = in_str
        if in_str:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        yield i, ch, inside


def without_trailing_commas(text: str) -> str:
    """Drop commas that close an object or array (outside strings)."""
    out: list[str] = []
    pending: int | None = None  # index in out of a comma that may be trailing
    for _, ch, inside in _scanned(text):
        if not inside:
            if ch in "}]" and pending is not None:
                out[pending] = ""
            if not ch.isspace():
                pending = None
            if ch == ",":
                pending = len(out)
        out.append(ch)
    return "".join(out)


def complete_objects(text: str) -> list[dict[str, Any]]:
    """Every complete ``{...}`` object of *text*, in closing order (inner ones first).

    For an answer that does not parse as a whole: a truncated one still yields the
    objects closed before the cut.
    """
    found: list[dict[str, Any]] = []
    starts: list[int] = []
    for i, ch, inside in _scanned(text):
        if inside:
            continue
        if ch == "{":
            starts.append(i)
        elif ch == "}" and starts:
            start = starts.pop()
            try:
                value = jsonio.loads(text[start : i + 1])
            except jsonio.JSONDecodeError:
                continue
            if isinstance(value, dict):
                found.append(value)
    return found
