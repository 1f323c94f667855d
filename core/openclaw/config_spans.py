"""Where each member of a JSON5 object sits in the text: spans for in-place edits.

:func:`object_spans` scans JSON5 text already known to be valid (pyjson5 read it)
and returns, for the object at a key path, each key's value span and the object's
braces. The scanner knows what JSON5 allows between tokens (comments, every
whitespace and line terminator JSON5 counts) and inside strings (either quote,
escapes, line continuations), so a splice at a span changes that value and nothing
else: comments, order, quoting and indentation stay as the user wrote them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_SPACE = re.compile(r"(?:[\s\ufeff\u2028\u2029]+|//[^\n\r\u2028\u2029]*|/\*.*?\*/)*", re.DOTALL)
_IDENTIFIER = re.compile(r"(?:[\w$]|\\u[0-9a-fA-F]{4})+")
_ATOM_END = re.compile(r"[\s,:\]}/\ufeff\u2028\u2029]")


@dataclass(slots=True)
class ObjectSpans:
    """One object of the text: its braces and, per key, its last member's spans."""

    open: int
    """Offset of ``{``."""
    close: int
    """Offset of ``}``."""
    members: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    """key -> (key start, value start, value end); a repeated key: the last (JSON5's)."""
    children: dict[str, ObjectSpans] = field(default_factory=dict)
    """key -> the object that key holds (objects only)."""
    first_member: int | None = None
    """Offset of the first key (None: an empty object)."""


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text

    def skip(self, i: int) -> int:
        m = _SPACE.match(self.text, i)
        return m.end() if m else i

    def string(self, i: int) -> int:
        """End (past the closing quote) of the string starting at *i*."""
        quote, text, j = self.text[i], self.text, i + 1
        while j < len(text):
            c = text[j]
            if c == "\\":
                j += 2
                continue
            if c == quote:
                return j + 1
            j += 1
        raise ValueError(f"unterminated string at offset {i}")

    def atom(self, i: int) -> int:
        m = _ATOM_END.search(self.text, i)
        return m.start() if m else len(self.text)

    def value(self, i: int) -> tuple[int, ObjectSpans | None]:
        """End of the value starting at *i*, and its spans if it is an object."""
        c = self.text[i]
        if c == "{":
            obj = self.object(i)
            return obj.close + 1, obj
        if c == "[":
            j = self.skip(i + 1)
            while self.text[j] != "]":
                j, _ = self.value(j)
                j = self.skip(j)
                if self.text[j] == ",":
                    j = self.skip(j + 1)
            return j + 1, None
        if c in "\"'":
            return self.string(i), None
        return self.atom(i), None

    def key(self, i: int) -> tuple[str, int]:
        if self.text[i] in "\"'":
            end = self.string(i)
            return _unquote(self.text[i + 1 : end - 1]), end
        m = _IDENTIFIER.match(self.text, i)
        if m is None:
            raise ValueError(f"no key at offset {i}")
        return _unescape_identifier(m.group(0)), m.end()

    def object(self, i: int) -> ObjectSpans:
        obj = ObjectSpans(i, -1)
        j = self.skip(i + 1)
        while self.text[j] != "}":
            if obj.first_member is None:
                obj.first_member = j
            key_at = j
            name, j = self.key(j)
            j = self.skip(j)
            j = self.skip(j + 1)  # the colon
            start = j
            j, child = self.value(j)
            obj.members[name] = (key_at, start, j)
            if child is not None:
                obj.children[name] = child
            else:
                obj.children.pop(name, None)
            j = self.skip(j)
            if self.text[j] == ",":
                j = self.skip(j + 1)
        obj.close = j
        return obj


def _unquote(body: str) -> str:
    if "\\" not in body:
        return body
    import pyjson5

    return str(pyjson5.decode('"' + body.replace('"', '\\"').replace("\\'", "'") + '"'))


def _unescape_identifier(name: str) -> str:
    if "\\u" not in name:
        return name
    return re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), name)


def root_spans(text: str) -> ObjectSpans:
    """The spans of the top-level object of the JSON5 *text* (valid JSON5).

    Raises
    ------
    ValueError
        When the top level is not an object.
    """
    scan = _Scanner(text)
    i = scan.skip(0)
    if i >= len(text) or text[i] != "{":
        raise ValueError("the top level is not an object")
    return scan.object(i)


def object_spans(text: str, path: tuple[str, ...]) -> tuple[ObjectSpans, tuple[str, ...]]:
    """The deepest object of *path* present in *text*, and the keys of *path* missing below it."""
    obj = root_spans(text)
    for n, key in enumerate(path):
        child = obj.children.get(key)
        if child is None:
            return obj, path[n:]
        obj = child
    return obj, ()


def indent_of(text: str, offset: int) -> str:
    """The blanks that start the line holding *offset*."""
    line = text.rfind("\n", 0, offset) + 1
    m = re.match(r"[ \t]*", text[line:])
    return m.group(0) if m else ""
