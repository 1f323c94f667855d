"""All JSON goes through here (orjson: bytes in, bytes out).

JSONL reading is lenient: blank lines, partial last lines, invalid UTF-8 and
invalid JSON are skipped and reported; a line holding several JSON objects run
together (seen in real pi transcripts) yields every object.
"""

from __future__ import annotations

import gc
import json
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from core.problems import Problem

if TYPE_CHECKING:
    from collections.abc import Iterator

JSONDecodeError = orjson.JSONDecodeError

_decoder = json.JSONDecoder()
_WS = " \t\r\n"


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many acyclic objects.

    Parsed JSON holds no reference cycles, but creating millions of objects
    triggers collections that cost more than the parsing itself (2-3x on a
    200,000-line transcript).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def as_int(value: Any) -> int | None:
    """An integer JSON value (``4000`` or ``4000.0``); None for anything else, bools too."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse one JSON document."""
    return orjson.loads(data)


def dumps(obj: Any, *, pretty: bool = False, sort_keys: bool = False) -> bytes:
    """Serialise compactly (or with a 2-space indent when *pretty*)."""
    opts = orjson.OPT_NON_STR_KEYS
    if pretty:
        opts |= orjson.OPT_INDENT_2
    if sort_keys:
        opts |= orjson.OPT_SORT_KEYS
    return orjson.dumps(obj, option=opts)


def dumps_line(obj: Any) -> bytes:
    """Serialise as one JSONL line, newline included."""
    return orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS)


@dataclass(slots=True)
class JsonlObject:
    """One JSON value read from a JSONL file."""

    line: int
    value: Any
    offset: int
    """Byte offset of the start of the line in the file."""


@dataclass(slots=True)
class JsonlRead:
    """Every object read from a JSONL buffer and every problem met."""

    objects: list[JsonlObject] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    partial_tail: bytes = b""
    """Bytes after the last newline that did not parse (an append in progress)."""


def split_run_together(text: str) -> tuple[list[Any], str | None]:
    """Decode every JSON value in *text*, which holds several run together.

    Returns the values decoded and, when something could not be decoded, an
    error naming the column.
    """
    values: list[Any] = []
    pos, end = 0, len(text)
    while True:
        while pos < end and text[pos] in _WS:
            pos += 1
        if pos >= end:
            return values, None
        try:
            value, pos = _decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            return values, f"invalid JSON at column {exc.pos + 1}: {exc.msg}"
        values.append(value)


def read_jsonl(data: bytes, source: str, *, first_line: int = 1, base_offset: int = 0) -> JsonlRead:
    """Read every JSON value in a JSONL buffer.

    Parameters
    ----------
    data
        The bytes of the file (or of an appended tail of it).
    source
        The file name used in problems.
    first_line, base_offset
        Line number and byte offset of ``data[0]`` in the file (for tails).
    """
    out = JsonlRead()
    objects = out.objects
    loads_ = orjson.loads
    n = len(data)
    pos = 0
    line_no = first_line
    while pos < n:
        nl = data.find(b"\n", pos)
        complete = nl >= 0
        stop = nl if complete else n
        line = data[pos:stop]
        try:
            objects.append(JsonlObject(line_no, loads_(line), base_offset + pos))
        except orjson.JSONDecodeError:
            if not complete:
                # An append in progress: keep the bytes, report it, parse it later.
                if line.strip():
                    out.partial_tail = line
                    out.problems.append(
                        Problem(
                            source,
                            line_no,
                            "partial last line (no newline yet; the agent may be writing it)",
                            "warning",
                        )
                    )
            else:
                _recover(line, line_no, base_offset + pos, source, out)
        pos = stop + 1
        line_no += 1
    return out


def _recover(line: bytes, line_no: int, offset: int, source: str, out: JsonlRead) -> None:
    if not line.strip():
        out.problems.append(Problem(source, line_no, "blank line skipped", "info"))
        return
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        out.problems.append(
            Problem(source, line_no, f"invalid UTF-8 at byte {exc.start + 1}; line skipped")
        )
        return
    values, error = split_run_together(text)
    for value in values:
        out.objects.append(JsonlObject(line_no, value, offset))
    if len(values) > 1:
        out.problems.append(
            Problem(
                source,
                line_no,
                f"{len(values)} JSON objects run together on one line; all recovered",
                "warning",
            )
        )
    if error is not None:
        kept = f" after recovering {len(values)} object(s)" if values else "; line skipped"
        out.problems.append(Problem(source, line_no, f"{error}{kept}"))


def iter_lines_with_offsets(data: bytes) -> Iterator[tuple[int, int, bytes]]:
    """Yield ``(line_number, byte_offset, line)`` for each complete line."""
    pos = 0
    line_no = 1
    while True:
        nl = data.find(b"\n", pos)
        if nl < 0:
            return
        yield line_no, pos, data[pos:nl]
        pos = nl + 1
        line_no += 1
