"""All JSON goes through here (orjson: bytes in, bytes out).

JSONL reading is lenient: blank lines, partial last lines, invalid UTF-8 and
invalid JSON are skipped and reported; a line holding several JSON objects run
together (seen in real pi transcripts) yields every object.
"""

from __future__ import annotations

import gc
import json
import math
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO

import orjson

from core.io.limits import max_line_bytes
from core.io.problems import FormatError, Problem
from core.io.safe_read import open_regular

if TYPE_CHECKING:
    from collections.abc import Iterator

JSONDecodeError = orjson.JSONDecodeError
JSONEncodeError = orjson.JSONEncodeError


class _NotJson(ValueError):
    """A value Python's json accepts and JSON (and orjson) does not."""


def _reject_constant(name: str) -> Any:
    raise _NotJson(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotJson(f"number {text[:24]} is out of range")
    return value


def _double_int(text: str) -> int:
    # float() reads any number of digits; int() refuses 4,300 and more.
    if len(text) > 308 and not math.isfinite(float(text)):
        raise _NotJson(f"number {text[:24]}... ({len(text)} characters) is out of range")
    return int(text)


# The fallback decoder (for lines orjson refuses) must not accept more than
# orjson: NaN, Infinity and numbers that overflow a double are errors, else they
# reach int(), float arithmetic and datetime as inf, nan or a 400-digit int.
_decoder = json.JSONDecoder(
    parse_constant=_reject_constant, parse_float=_finite_float, parse_int=_double_int
)
_WS = " \t\r\n"
_SURROGATES = re.compile("([\ud800-\udbff][\udc00-\udfff])|[\ud800-\udfff]")
MAX_PROBLEMS = 1000
"""Problems kept per file read; the rest are counted."""
READ_CHUNK = 1 << 24
"""Bytes read at a time by :func:`read_jsonl_file`."""


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many acyclic objects.

    Parsed JSON holds no reference cycles, but creating millions of objects
    triggers collections that cost more than the parsing itself (2-3x on a
    200,000-line transcript).

    While :func:`freeze_after_pauses` is on, everything alive is frozen on the way
    out (``gc.freeze``): the first collections after the pause would otherwise walk
    all that was just built at once, 15-75 ms holding the GIL, which in the app
    freezes the window (bench_responsiveness).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if _freeze_after_pauses:
            gc.freeze()
        if was_enabled:
            gc.enable()


_freeze_after_pauses = False


def freeze_after_pauses(on: bool) -> None:
    """Whether :func:`gc_paused` freezes what is alive when it ends.

    Frozen objects are still freed by reference counting, but a reference cycle
    among them is not collected until ``gc.unfreeze()``: the app turns this on
    while its window is open and unfreezes when it opens another place or closes.
    """
    global _freeze_after_pauses
    _freeze_after_pauses = on


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
    r"""Serialise compactly (or with a 2-space indent when *pretty*).

    Strings holding lone surrogates (JavaScript strings may: the agent's files
    can, and the fallback reader keeps them) are written as ``JSON.stringify``
    writes them, a ``\udXXX`` escape, so nothing is lost; so are integers
    beyond 64 bits, which orjson refuses.
    """
    opts = orjson.OPT_NON_STR_KEYS
    if pretty:
        opts |= orjson.OPT_INDENT_2
    if sort_keys:
        opts |= orjson.OPT_SORT_KEYS
    try:
        return orjson.dumps(obj, option=opts)
    except orjson.JSONEncodeError as exc:
        if not _json_can(exc):
            raise
        return _dumps_with_json(obj, pretty=pretty, sort_keys=sort_keys)


def dumps_line(obj: Any) -> bytes:
    """Serialise as one JSONL line, newline included."""
    try:
        return orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError as exc:
        if not _json_can(exc):
            raise
        return _dumps_with_json(obj, pretty=False, sort_keys=False) + b"\n"


def _json_can(exc: orjson.JSONEncodeError) -> bool:
    # Lone surrogates, and integers past 64 bits (the fallback reader keeps
    # both as JSON holds them): json writes them, orjson refuses.
    text = str(exc)
    return "surrogates" in text or "64-bit" in text


def _plain(obj: Any) -> Any:
    """*obj* with what orjson writes differently from json made explicit."""
    if isinstance(obj, dict):
        return {_key(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None  # as orjson and JSON.stringify write NaN and Infinity
    return obj


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _escape_surrogate(m: re.Match[str]) -> str:
    if m.group(1):  # a pair held as two code points: one character, as in JavaScript
        return m.group(1).encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    return f"\\u{ord(m.group(0)):04x}"


def _replace_surrogate(m: re.Match[str]) -> str:
    if m.group(1):
        return m.group(1).encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    return "\ufffd"


def printable(text: str) -> str:
    r"""*text* with lone surrogates (invalid in UTF-8) replaced by U+FFFD, for printing.

    Strings read from agent files can hold them (``"\ud800"`` is valid JSON).
    """
    if text.isascii():
        return text
    return _SURROGATES.sub(_replace_surrogate, text)


def _dumps_with_json(obj: Any, *, pretty: bool, sort_keys: bool) -> bytes:
    # json.dumps keeps surrogates as they are; outside strings JSON text holds
    # none, so escaping every lone one in the output only touches string values.
    text = json.dumps(
        _plain(obj),
        ensure_ascii=False,
        allow_nan=False,
        sort_keys=sort_keys,
        indent=2 if pretty else None,
        separators=(",", ": ") if pretty else (",", ":"),
    )
    return _SURROGATES.sub(_escape_surrogate, text).encode("utf-8")


@dataclass(slots=True)
class JsonlObject:
    """One JSON value read from a JSONL file."""

    line: int
    value: Any
    offset: int
    """Byte offset of the start of the line in the file."""
    recovered: bool = False
    """The line is not one JSON value (objects run together, or one followed by
    garbage): a reader that parses line by line, like the agent's, drops it."""


@dataclass(slots=True)
class JsonlRead:
    """Every object read from a JSONL buffer and every problem met."""

    objects: list[JsonlObject] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    partial_tail: bytes = b""
    """Bytes after the last newline that did not parse (an append in progress)."""
    size: int = 0
    """Bytes read (the file's size when it was read whole)."""
    newlines: int = 0
    """Complete lines read (those ending with a newline)."""
    ends_with_newline: bool = True

    hidden: int = 0
    """Problems past :data:`MAX_PROBLEMS`: counted, not kept (a file of a million
    damaged lines must not cost a million records)."""

    def note(self, problem: Problem) -> None:
        """Keep *problem*, or count it once :data:`MAX_PROBLEMS` are kept."""
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(problem)
        else:
            self.hidden += 1

    def close(self, source: str) -> None:
        """Add the count of problems not kept, if any (once, at the end of a read)."""
        if self.hidden:
            self.problems.append(
                Problem(
                    source,
                    0,
                    f"{self.hidden:,} more problems in this file not listed "
                    f"(only the first {MAX_PROBLEMS:,} are)",
                    "warning",
                )
            )
            self.hidden = 0

    def extend(self, other: JsonlRead) -> None:
        """Append what *other*, read just after this, holds."""
        self.objects.extend(other.objects)
        for p in other.problems:
            self.note(p)
        self.hidden += other.hidden
        self.partial_tail = other.partial_tail
        self.ends_with_newline = other.ends_with_newline
        self.size += other.size
        self.newlines += other.newlines

    @property
    def lines(self) -> int:
        """Lines read, a last line without its newline included."""
        return self.newlines + (1 if self.size and not self.ends_with_newline else 0)


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
            value, end_pos = _decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            return values, f"invalid JSON at column {exc.pos + 1}: {exc.msg}"
        except _NotJson as exc:
            return values, f"invalid JSON in the value at column {pos + 1}: {exc}"
        except RecursionError:
            return values, f"the value at column {pos + 1} is nested deeper than {MAX_DEPTH} levels"
        except ValueError as exc:  # int() and float() limits not foreseen above
            return values, f"invalid JSON in the value at column {pos + 1}: {exc}"
        if too_deep(value, text[pos:end_pos]):
            return values, f"the value at column {pos + 1} is nested deeper than {MAX_DEPTH} levels"
        pos = end_pos
        values.append(value)


MAX_DEPTH = 255
"""The deepest nesting memlens keeps (orjson writes no deeper; Python's recursion
limit is near): a deeper value is a problem, not a RecursionError later."""
_DEEP_LINE = 2 * MAX_DEPTH
_DEEP_MESSAGE = f"a value nested deeper than {MAX_DEPTH} levels; line skipped"


def too_deep(value: Any, text: bytes | str | None = None) -> bool:
    """True when *value* nests lists and objects more than :data:`MAX_DEPTH` deep.

    *text*, the JSON it was parsed from, makes the common case cheap: with fewer
    brackets than the limit it cannot be that deep.
    """
    if text is not None:
        if isinstance(text, str):
            if text.count("[") + text.count("{") <= MAX_DEPTH:
                return False
        elif text.count(b"[") + text.count(b"{") <= MAX_DEPTH:
            return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item if isinstance(v, (dict, list)))
    return False


def too_long_problem(source: str, line_no: int, length: int, limit: int, complete: bool) -> Problem:
    """The problem of a line over the line limit (skipped, never read whole)."""
    what = "line" if complete else "partial last line"
    return Problem(
        source,
        line_no,
        f"{what} of {length:,} bytes exceeds the {limit:,}-byte line limit "
        f"(MEMLENS_MAX_LINE_BYTES); skipped",
    )


def read_jsonl(
    data: bytes,
    source: str,
    *,
    first_line: int = 1,
    base_offset: int = 0,
    limit: int | None = None,
) -> JsonlRead:
    """Read every JSON value in a JSONL buffer.

    Parameters
    ----------
    data
        The bytes of the file (or of an appended tail of it).
    source
        The file name used in problems.
    first_line, base_offset
        Line number and byte offset of ``data[0]`` in the file (for tails).
    limit
        Lines longer than this many bytes are reported and skipped
        (default: :func:`core.io.limits.max_line_bytes`).
    """
    out = JsonlRead()
    max_len = max_line_bytes() if limit is None else limit
    n = len(data)
    line_no = _scan(data, 0, n, source, first_line, base_offset, max_len, out)
    out.size = n
    out.ends_with_newline = not n or data[-1] == 0x0A
    out.newlines = line_no - first_line - (0 if out.ends_with_newline else 1)
    out.close(source)
    return out


def _scan(
    data: bytes,
    pos: int,
    end: int,
    source: str,
    line_no: int,
    base_offset: int,
    max_len: int,
    out: JsonlRead,
) -> int:
    """Read the lines of ``data[pos:end]`` into *out*; returns the next line number.

    *base_offset* is the file offset of ``data[0]``. Only a line running to *end*
    without a newline is partial.
    """
    objects = out.objects
    loads_ = orjson.loads
    while pos < end:
        nl = data.find(b"\n", pos, end)
        complete = nl >= 0
        stop = nl if complete else end
        if stop - pos > max_len:
            out.note(too_long_problem(source, line_no, stop - pos, max_len, complete))
            pos = stop + 1
            line_no += 1
            continue
        line = data[pos:stop]
        try:
            value = loads_(line)
            if stop - pos > _DEEP_LINE and too_deep(value, line):
                out.note(Problem(source, line_no, _DEEP_MESSAGE))
            else:
                objects.append(JsonlObject(line_no, value, base_offset + pos))
        except orjson.JSONDecodeError:
            if not complete:
                # An append in progress: keep the bytes, report it, parse it later.
                if line.strip():
                    out.partial_tail = line
                    out.note(
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
    return line_no


def read_jsonl_file(
    path: str | os.PathLike[str],
    source: str | None = None,
    *,
    limit: int | None = None,
    chunk: int = READ_CHUNK,
) -> JsonlRead:
    """Read every JSON value of a JSONL file, a chunk at a time.

    A line longer than *limit* bytes is reported and skipped without ever being
    held in memory whole: only the bytes up to the limit are kept, then the
    reader looks for its newline. Lines, offsets and problems are as
    :func:`read_jsonl` gives for the whole file.

    Raises
    ------
    FileNotFoundError
        When *path* does not exist.
    core.io.problems.FormatError
        When it is not a regular file (a FIFO, a device: never opened) or cannot be read.
    """
    name = os.fspath(path) if source is None else source
    max_len = max_line_bytes() if limit is None else limit
    out = JsonlRead()
    line_no = 1
    read = 0  # bytes read so far: the file offset of the next block
    carry = b""  # the start of a line the block before did not end (at most max_len)
    carry_at = 0
    skip_from = -1  # file offset where an over-limit line starts, while skipping it
    last = 0x0A
    with open_regular(path) as fh:
        while True:
            try:
                block = fh.read(chunk)
            except OSError as exc:
                raise FormatError(name, f"cannot read: {exc.strerror or exc}", line_no) from exc
            if not block:
                break
            at, read, last = read, read + len(block), block[-1]
            pos = 0
            if skip_from >= 0:
                nl = block.find(b"\n")
                if nl < 0:
                    continue
                length = at + nl - skip_from
                out.note(too_long_problem(name, line_no, length, max_len, True))
                line_no += 1
                skip_from = -1
                pos = nl + 1
            elif carry:
                nl = block.find(b"\n")
                if nl < 0:
                    carry += block
                    if len(carry) > max_len:
                        skip_from, carry = carry_at, b""
                    continue
                line = carry + block[: nl + 1]
                carry = b""
                line_no = _scan(line, 0, len(line), name, line_no, carry_at, max_len, out)
                pos = nl + 1
            cut = block.rfind(b"\n", pos) + 1
            if cut > pos:
                line_no = _scan(block, pos, cut, name, line_no, at, max_len, out)
                pos = cut
            if pos < len(block):
                carry, carry_at = block[pos:], at + pos
                if len(carry) > max_len:
                    skip_from, carry = carry_at, b""
    out.size = read
    out.newlines = line_no - 1
    out.ends_with_newline = last == 0x0A
    if skip_from >= 0:
        out.note(too_long_problem(name, line_no, read - skip_from, max_len, False))
    elif carry:
        _scan(carry, 0, len(carry), name, line_no, carry_at, max_len, out)
    out.close(name)
    return out


def _recover(line: bytes, line_no: int, offset: int, source: str, out: JsonlRead) -> None:
    if not line.strip():
        out.note(Problem(source, line_no, "blank line skipped", "info"))
        return
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        out.note(Problem(source, line_no, f"invalid UTF-8 at byte {exc.start + 1}; line skipped"))
        return
    values, error = split_run_together(text)
    recovered = len(values) > 1 or error is not None
    for value in values:
        out.objects.append(JsonlObject(line_no, value, offset, recovered))
    if len(values) > 1:
        out.note(
            Problem(
                source,
                line_no,
                f"{len(values)} JSON objects run together on one line; all recovered",
                "warning",
            )
        )
    if error is not None:
        kept = f" after recovering {len(values)} object(s)" if values else "; line skipped"
        out.note(Problem(source, line_no, f"{error}{kept}"))


def iter_bounded_lines(
    fh: BinaryIO, *, limit: int | None = None, chunk: int = 1 << 20
) -> Iterator[bytes | None]:
    """Yield each line of a binary file (without its newline), a chunk at a time.

    A line longer than *limit* bytes (default :func:`core.io.limits.max_line_bytes`)
    yields None and is never held in memory whole.
    """
    max_len = max_line_bytes() if limit is None else limit
    carry = b""
    skipping = False
    while True:
        block = fh.read(chunk)
        if not block:
            break
        if skipping:
            nl = block.find(b"\n")
            if nl < 0:
                continue
            skipping = False
            yield None
            block = block[nl + 1 :]
        buf = carry + block if carry else block
        start = 0
        while True:
            nl = buf.find(b"\n", start)
            if nl < 0:
                break
            yield buf[start:nl] if nl - start <= max_len else None
            start = nl + 1
        carry = buf[start:]
        if len(carry) > max_len:
            carry, skipping = b"", True
    if skipping:
        yield None
    elif carry:
        yield carry


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
