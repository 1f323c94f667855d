"""Decode the JSON5 text of ``openclaw.json`` with pyjson5, placing errors by line and column.

pyjson5's messages are rewritten into readable ones (``expected ',' or '}'``); a
number JSON5 allows but no double holds is read as Infinity, as OpenClaw reads it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import pyjson5

from core.io.problems import FormatError, Problem

MAX_DEPTH = 200
"""Deepest nesting of objects and arrays read; a real config nests less than 10."""
_BOM = "\ufeff"
_DECODE_ERRORS = (pyjson5.Json5Exception, ValueError, RecursionError)


class ConfigSyntaxError(FormatError):
    """``openclaw.json`` is not JSON5; :attr:`line` and :attr:`column` say where."""

    def __init__(self, file: str, message: str, line: int, column: int) -> None:
        super().__init__(file, f"invalid JSON5 at line {line}, column {column}: {message}", line)
        self.column = column


def decode_json5(text: str, name: str, data: bytes | None = None) -> tuple[Any, list[Problem]]:
    """Decode the JSON5 *text* of file *name*: the value and warnings with lines.

    A number JSON5 allows but no double holds (``1e400``, 5,000 digits) is read as
    Infinity, as OpenClaw (JavaScript) reads it, with a warning naming its line;
    a checked field holding one is then an error and keeps its default.

    Parameters
    ----------
    data
        *text* as UTF-8 bytes, when at hand: read about twice as fast as the str
        (which one emoji makes UCS-4).

    Raises
    ------
    ConfigSyntaxError
        On a JSON5 syntax error, or nesting deeper than :data:`MAX_DEPTH`: the
        line and column in *text*, in characters.
    """
    text = text.removeprefix(_BOM)
    if data is not None:
        try:
            return pyjson5.decode_utf8(data.removeprefix(_BOM.encode()), maxdepth=MAX_DEPTH), []
        except _DECODE_ERRORS:
            pass  # rare: read the str again, for positions in characters
    try:
        return pyjson5.decode(text, maxdepth=MAX_DEPTH), []
    except _DECODE_ERRORS as exc:
        first = _Failure.of(exc)
    # pyjson5 refuses such numbers ("unclosed NumericLiteral", or the 4,300-digit
    # ValueError of int()): replace each by Infinity and read again.
    fixed, edits = _infinite_numbers(text) if first.about_number else (text, [])
    if not edits:
        raise first.error(name, text) from None
    try:
        raw = pyjson5.decode(fixed, maxdepth=MAX_DEPTH)
    except _DECODE_ERRORS as exc:
        raise _Failure.of(exc).error(name, text, edits) from None
    notes = []
    for pos, literal, _new in edits:
        line, column = _line_col(text, pos)
        digits = sum(c.isdigit() for c in literal)
        shown = literal if len(literal) <= 24 else f"{literal[:12]}... ({digits} digits)"
        message = f"number {shown} at column {column} is out of range; read as Infinity"
        notes.append(Problem(name, line, message, "warning"))
    return raw, notes


_NUMBER_SCAN = re.compile(
    r"""
      "[^"\\]*(?:\\.[^"\\]*)*"?
    | '[^'\\]*(?:\\.[^'\\]*)*'?
    | //[^\n]*
    | /\*.*?(?:\*/|\Z)
    | [^\W\d][\w$]* | \$[\w$]*
    | (?P<num>[+-]?(?:0[xX][0-9A-Fa-f]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))
    """,
    re.S | re.X,
)


def _infinite_numbers(text: str) -> tuple[str, list[tuple[int, str, str]]]:
    """*text* with every out-of-range number literal replaced by (-)Infinity.

    Returns the new text and the edits (index in *text*, literal, replacement).
    Strings, comments and names are matched whole, so no digit in them is touched.
    """
    edits: list[tuple[int, str, str]] = []
    for m in _NUMBER_SCAN.finditer(text):
        literal = m.group("num")
        if literal is None or (len(literal) <= 300 and "e" not in literal.lower()):
            continue  # a short number without exponent always fits
        try:
            value = pyjson5.decode(literal)
            fits = not (isinstance(value, float) and math.isinf(value))
        except (pyjson5.Json5Exception, ValueError):
            fits = False
        if not fits:
            edits.append((m.start(), literal, "-Infinity" if literal[0] == "-" else "Infinity"))
    parts = []
    pos = 0
    for start, literal, new in edits:
        parts += [text[pos:start], new]
        pos = start + len(literal)
    parts.append(text[pos:])
    return "".join(parts), edits


def _before_edits(pos: int, edits: list[tuple[int, str, str]]) -> int:
    """Map an index of the edited text back to the original text."""
    shift = 0
    for start, literal, new in edits:
        if start + shift >= pos:
            break
        shift += len(new) - len(literal)
    return pos - shift


def _line_col(text: str, pos: int) -> tuple[int, int]:
    """1-based line and column (in characters) of index *pos* of *text*."""
    pos = max(0, min(pos, len(text)))
    return text.count("\n", 0, pos) + 1, pos - text.rfind("\n", 0, pos)


_PYJSON5_MESSAGE = re.compile(
    r"^(?:Expected (?P<expected>.+?)|Stray (?P<stray>.+?)|(?P<extra>Extra data .+?)"
    r"|Unclosed (?P<unclosed>.+?) starting|(?P<empty>No JSON data found)"
    r"|(?P<deep>Maximum nesting level exceeded)) near (?P<near>\d+)",
    re.S,
)
_NAMES = {
    "comma": "','",
    "colon": "':'",
    "slash": "'/'",
    "JSON5Value": "a value",
    "value": "a value",
    "IdentifierStart": "a key",
    "IdentifierName": "a key",
    "NumericLiteral": "number",
    "UnicodeEscapeSequence": "a \\u escape",
    "hexadecimal character": "a hexadecimal digit",
}
_BLANKS = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.S)
_CODE_POINT = re.compile(r"U\+([0-9A-Fa-f]{4,6})")
_WORD = re.compile(r"[\w$+\-.]*")


def _name(token: str) -> str:
    """``b'comma'`` -> ``','``, ``U+007d`` -> ``'}'``: pyjson5's words made readable."""
    token = token.strip()
    if token[:2] in ("b'", 'b"'):
        token = token[2:-1]
    code = _CODE_POINT.fullmatch(token)
    if code is not None:
        return _show_char(chr(int(code.group(1), 16)))
    return _NAMES.get(token, token)


def _show_char(char: str) -> str:
    return repr(char) if char.isprintable() else f"U+{ord(char):04X}"


@dataclass(frozen=True, slots=True)
class _Failure:
    """What pyjson5 said, without the partial result it holds (deep or huge)."""

    message: str
    found: str | None
    about_number: bool

    @classmethod
    def of(cls, exc: BaseException) -> _Failure:
        # Never str(exc): it shows .result, which recursion fails to print when
        # the document is nested deeply.
        if isinstance(exc, RecursionError):  # the caller's stack was already deep
            return cls("Maximum nesting level exceeded near 0", None, False)
        args = exc.args
        message = args[0] if args and isinstance(args[0], str) else type(exc).__name__
        found = args[2] if len(args) > 2 else None
        if isinstance(found, bytes):
            found = _name(found.decode("ascii", "replace")).strip("'")
        plain_value_error = not isinstance(exc, pyjson5.Json5Exception)
        number = plain_value_error or "NumericLiteral" in message
        return cls(message, found if isinstance(found, str) else None, number)

    def error(
        self, name: str, text: str, edits: list[tuple[int, str, str]] | None = None
    ) -> FormatError:
        """The FormatError to raise, placed in *text* (the text before *edits*)."""
        m = _PYJSON5_MESSAGE.match(self.message)
        if m is None:
            return FormatError(name, f"invalid JSON5: {self.message}")
        near = _before_edits(int(m.group("near")), edits or [])
        # "Extra data" gives the index just after the value; the others the
        # 1-based index of the character (or of the token it belongs to).
        pos = near if m.group("extra") else max(near - 1, 0)
        if m.group("empty"):
            return ConfigSyntaxError(name, "no value: the file is empty or only comments", 1, 1)
        if m.group("deep"):
            if near == 0:
                pos = _deep_position(text)
            return _at(
                name, text, pos, f"nested too deeply (memlens reads up to {MAX_DEPTH} levels)"
            )
        if m.group("unclosed"):
            kind = _name(m.group("unclosed"))
            if kind == "number":
                return _at(name, text, pos, f"invalid number {_word(text, pos)!r}")
            end = text.count("\n") + 1
            message = f"the {kind} that starts here is never closed (the file ends at line {end})"
            return _at(name, text, pos, message)
        if m.group("extra"):
            blanks = _BLANKS.match(text, pos)
            pos = blanks.end() if blanks is not None else pos
        found = self.found or ""
        if len(found) == 1 and not text.startswith(found, pos):
            hit = text.find(found, pos, pos + 4096)
            pos = hit if hit >= 0 else pos
        shown = _show_char(found) if len(found) == 1 else found
        if m.group("expected"):
            want = m.group("expected").strip()
            wants = [_name(w) for w in want.split(" or ")]
            start = max(near - 1, 0)
            if "surrogate" in want or want == "U+005c":
                # pyjson5 wants both halves of a \ud800-\udfff pair (json5 took one)
                what = "a \\ud800-\\udfff escape must be half of a surrogate pair"
                return _at(name, text, start, what)
            if _CODE_POINT.fullmatch(want) and text[start : start + 1].isalpha():
                # a misspelt true/false/null/Infinity/NaN: show the word, not a letter
                return _at(name, text, start, f"unknown word {_word(text, start)!r}")
            what = f"expected {' or '.join(wants)}" + (f", found {shown}" if shown else "")
        elif m.group("stray"):
            what = f"unexpected {_name(m.group('stray'))}"
        else:
            what = f"unexpected {shown} after the end of the document"
        return _at(name, text, pos, what)


def _at(name: str, text: str, pos: int, what: str) -> ConfigSyntaxError:
    line, column = _line_col(text, pos)
    return ConfigSyntaxError(name, what, line, column)


def _word(text: str, pos: int) -> str:
    word = _WORD.match(text, pos, pos + 40)
    return word.group(0) if word is not None and word.group(0) else text[pos : pos + 1]


_BRACKETS = re.compile(
    r"""[\[\]{}]|"[^"\\]*(?:\\.[^"\\]*)*"?|'[^'\\]*(?:\\.[^'\\]*)*'?|//[^\n]*|/\*.*?(?:\*/|\Z)""",
    re.S,
)


def _deep_position(text: str) -> int:
    """Index of the bracket that opens level :data:`MAX_DEPTH` + 1 (0 if none)."""
    depth = 0
    for m in _BRACKETS.finditer(text):
        char = m.group(0)
        if char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return m.start()
        elif char in "]}":
            depth -= 1
    return 0


def value_start(text: str) -> tuple[int, int]:
    """1-based line and column of the first value of *text* (after a BOM, blanks, comments)."""
    blanks = _BLANKS.match(text, len(_BOM) if text.startswith(_BOM) else 0)
    return _line_col(text, blanks.end() if blanks is not None else 0)
