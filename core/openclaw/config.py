"""Read ``~/.openclaw/openclaw.json`` (JSON5): memory-context, compaction, context windows.

memlens never writes this file. Two sections are validated strictly, as OpenClaw's
zod schema does (``.strict()``): ``agents.defaults.memoryContext`` (from the
memory-context pull request #14362) and ``agents.defaults.compaction``. Every unknown
key and every wrong type or range there is a problem whose message starts with the
full key path; all of them are collected. Everything else in the file is kept in
:attr:`OpenClawConfig.raw` untouched and unchecked.

The key set of ``agents.defaults.compaction`` was read from the zod schema of
openclaw/openclaw, ``src/config/zod-schema.agent-defaults.ts``: commit 4370a36b
(mode, reserveTokensFloor, maxHistoryShare, memoryFlush{enabled,
softThresholdTokens, prompt, systemPrompt}), commit 00463892 (adds reserveTokens,
keepRecentTokens, customInstructions, identifierPolicy, identifierInstructions,
recentTurnsPreserve, qualityGuard, postIndexSync, postCompactionSections, model,
timeoutSeconds, memoryFlush.forceFlushTranscriptBytes) and the newest stored version
(adds provider, midTurnPrecheck, memoryFlush.model, truncateAfterCompaction,
maxActiveTranscriptBytes, notifyUser). memlens accepts that union, so a config valid
for any of those OpenClaw versions is valid here.
"""

from __future__ import annotations

import bisect
import gc
import math
import os
import re
import stat
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import pyjson5

from core.io.problems import FormatError, Problem

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

DEFAULT_CONTEXT_WINDOW = 200_000
AUTO_RECALL_MIN_SCORE = 0.7
"""Default ``autoRecallMinScore``, as the memory-context runtime reads it
(``memCtxCfg.autoRecallMinScore ?? 0.7`` in ``pi-embedded-runner/extensions.ts``)."""
PI_RESERVE_TOKENS = 16_384
KEEP_RECENT_TOKENS = 20_000

# Context windows of a few well-known models, used when the config names none.
# Keys match the model id without its provider, by longest prefix (dated ids).
MODEL_REGISTRY: dict[str, int] = {
    "claude-opus-4": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-haiku-4": 200_000,
    "claude-3-5-sonnet": 200_000,
    "claude-3-7-sonnet": 200_000,
    "gpt-4o": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-5": 400_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "gemini-2.5-pro": 1_048_576,
    "gemini-2.5-flash": 1_048_576,
    "deepseek-chat": 128_000,
    "deepseek-reasoner": 128_000,
}

WindowSource = Literal["config", "registry", "default", "cap"]

MAX_SAFE_INTEGER = 2**53 - 1
"""Larger numbers are out of range in a checked field (JavaScript's safe integers)."""


# --- the strict schema -------------------------------------------------------------


def _is_number(value: Any) -> bool:
    # A finite number no larger than MAX_SAFE_INTEGER: math.isfinite itself
    # overflows on an int of 309 digits, which pyjson5 reads as a Python int.
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return abs(value) <= MAX_SAFE_INTEGER if isinstance(value, int) else _finite(value)


def _finite(value: float) -> bool:
    return math.isfinite(value) and abs(value) <= MAX_SAFE_INTEGER


def _is_int(value: Any) -> bool:
    # JSON has one number type: 4000.0 is the integer 4000 (zod's .int() agrees).
    return _is_number(value) and float(value).is_integer()


def _positive_int(value: Any) -> int | None:
    if type(value) is int:  # the common cases first: a config can list 100,000 models
        return value if 1 <= value <= MAX_SAFE_INTEGER else None
    if value is None:
        return None
    return int(value) if _is_int(value) and value >= 1 else None


@dataclass(frozen=True, slots=True)
class _Leaf:
    """A value check: *ok* tells whether a value is valid, *need* says what is."""

    ok: Callable[[Any], bool]
    need: str
    convert: Callable[[Any], Any] | None = None


@dataclass(frozen=True, slots=True)
class _Obj:
    """A strict object: every key must be one of *fields*."""

    fields: Mapping[str, _Leaf | _Obj]
    need: str = "must be an object"

    def ok(self, value: Any) -> bool:
        return isinstance(value, dict)


_BOOL = _Leaf(lambda v: isinstance(v, bool), "must be true or false")
_STR = _Leaf(lambda v: isinstance(v, str), "must be a string")
_STR_LIST = _Leaf(
    lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    "must be an array of strings",
)
_BYTE_SIZE_RE = re.compile(r"^\d+(\.\d+)?\s*(b|k|kb|kib|m|mb|mib|g|gb|gib|t|tb|tib)?$", re.I)
_BYTE_SIZE = _Leaf(
    lambda v: (
        (_is_int(v) and v >= 0) or (isinstance(v, str) and bool(_BYTE_SIZE_RE.match(v.strip())))
    ),
    'must be a byte count or a size string like "2mb"',
)


def _enum(*values: str) -> _Leaf:
    need = "must be one of " + ", ".join(f'"{v}"' for v in values)
    return _Leaf(lambda v: isinstance(v, str) and v in values, need)


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _num(lo: float, hi: float | None = None, *, integer: bool = False) -> _Leaf:
    kind = "an integer" if integer else "a number"
    need = f"must be {kind} " + (
        f">= {_fmt(lo)}" if hi is None else f"between {_fmt(lo)} and {_fmt(hi)}"
    )

    def ok(v: Any) -> bool:
        good = _is_int(v) if integer else _is_number(v)
        return good and v >= lo and (hi is None or v <= hi)

    return _Leaf(ok, need, int if integer else float)


def _int(lo: int, hi: int | None = None) -> _Leaf:
    return _num(lo, hi, integer=True)


MEMORY_CONTEXT_SCHEMA = _Obj(
    {
        "enabled": _BOOL,
        "hardCapTokens": _int(1),
        "embeddingModel": _enum("hash", "transformer"),
        "redaction": _BOOL,
        "knowledgeExtraction": _BOOL,
        "autoRecallMinScore": _num(0, 1),
        "maxSegments": _int(1),
        "crossSession": _BOOL,
        "evictionDays": _int(0),
        "storagePath": _STR,
    }
)

COMPACTION_SCHEMA = _Obj(
    {
        "mode": _enum("default", "safeguard"),
        "provider": _STR,
        "reserveTokens": _int(0),
        "keepRecentTokens": _int(1),
        "reserveTokensFloor": _int(0),
        "maxHistoryShare": _num(0.1, 0.9),
        "customInstructions": _STR,
        "identifierPolicy": _enum("strict", "off", "custom"),
        "identifierInstructions": _STR,
        "recentTurnsPreserve": _int(0, 12),
        "qualityGuard": _Obj({"enabled": _BOOL, "maxRetries": _int(0)}),
        "midTurnPrecheck": _Obj({"enabled": _BOOL}),
        "postIndexSync": _enum("off", "async", "await"),
        "postCompactionSections": _STR_LIST,
        "model": _STR,
        "timeoutSeconds": _int(1),
        "memoryFlush": _Obj(
            {
                "enabled": _BOOL,
                "model": _STR,
                "softThresholdTokens": _int(0),
                "forceFlushTranscriptBytes": _BYTE_SIZE,
                "prompt": _STR,
                "systemPrompt": _STR,
            }
        ),
        "truncateAfterCompaction": _BOOL,
        "maxActiveTranscriptBytes": _BYTE_SIZE,
        "notifyUser": _BOOL,
    }
)


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return repr(value) if len(value) <= 40 else repr(value[:37] + "...")
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, int) and abs(value) > MAX_SAFE_INTEGER:
        if value.bit_length() <= 80:
            return f"{value} (out of range)"
        # str() refuses ints of 4,300 digits and more; the bit length never fails
        digits = (
            len(str(abs(value)))
            if value.bit_length() < 10_000
            else "about " + str(int(value.bit_length() * math.log10(2)) + 1)
        )
        kind = "a negative integer" if value < 0 else "an integer"
        return f"{kind} of {digits} digits (out of range)"
    if isinstance(value, float) and math.isfinite(value) and abs(value) > MAX_SAFE_INTEGER:
        return f"{value} (out of range)"
    return str(value)


class _Checker:
    """Walks a section against its schema, collecting one problem per fault."""

    def __init__(self, name: str, text: str) -> None:
        self.name = name
        self.text = text
        self.problems: list[Problem] = []
        self._keys: dict[tuple[str, ...], tuple[int, int] | None] = {}
        self._lines: list[tuple[int, int]] = [(0, 1)]  # (index, line), sorted
        self._cursors: dict[tuple[str, ...], int] = {}

    def report(
        self,
        path: tuple[str, ...],
        message: str,
        severity: Literal["error", "warning"] = "error",
        label: str | None = None,
    ) -> None:
        line = self.key_line(path)
        where = label if label is not None else ".".join(path)
        self.problems.append(Problem(self.name, line, f"{where}: {message}", severity))

    def walk(self, value: Any, spec: _Obj, path: tuple[str, ...]) -> None:
        for key, item in value.items():
            sub = spec.fields.get(key)
            where = (*path, str(key))
            if sub is None:
                self.report(where, "unknown key")
                continue
            if not sub.ok(item):
                self.report(where, f"{sub.need}, got {_describe(item)}")
            elif isinstance(sub, _Obj):
                self.walk(item, sub, where)

    def key_line(self, path: tuple[str, ...]) -> int:
        """Best-effort 1-based line of the last key of *path* (0 when not found).

        JSON5 parsers give no positions for values, so the keys are searched for
        in order, each after the previous one: right for any config a person
        writes. Siblings are searched from the last one found (faults come in
        document order) and every line counted is remembered, so a file with
        thousands of faults is still read in linear time.
        """
        found = self._key(path)
        if found is None:
            return 0
        at = bisect.bisect_right(self._lines, found[0], key=_first) - 1
        pos, line = self._lines[at]
        line += self.text.count("\n", pos, found[0])
        bisect.insort(self._lines, (found[0], line))
        return line

    def _key(self, path: tuple[str, ...]) -> tuple[int, int] | None:
        if path in self._keys:
            return self._keys[path]
        parent_path = path[:-1]
        parent = self._key(parent_path) if parent_path else (0, 0)
        hit = None
        if parent is not None:
            cursor = self._cursors.get(parent_path, parent[1])
            hit = _find_key(self.text, path[-1], cursor)
            if hit is None and cursor != parent[1]:  # out of order (duplicate keys)
                hit = _find_key(self.text, path[-1], parent[1])
            if hit is not None:
                self._cursors[parent_path] = hit[1]
        self._keys[path] = hit
        return hit


_COLON = re.compile(r"\s*:")


def _first(anchor: tuple[int, int]) -> int:
    return anchor[0]


def _find_key(text: str, key: str, pos: int) -> tuple[int, int] | None:
    """Start and end of the first ``key:``, ``"key":`` or ``'key':`` at or after *pos*.

    ``str.find`` and a check of each hit, rather than one regex per key: a file
    can have thousands of faulty keys.
    """
    if not key:
        return None
    while (i := text.find(key, pos)) >= 0:
        pos = i + 1
        start, end = i, i + len(key)
        quote = text[i - 1 : i] if i else ""
        if quote in ("'", '"') and text.startswith(quote, end):
            start, end = i - 1, end + 1
        before = text[start - 1 : start] if start else ""
        if before and (before.isalnum() or before in "_$"):
            continue  # the end of a longer name
        colon = _COLON.match(text, end)
        if colon is not None:
            return start, colon.end()
    return None


# --- typed records ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MemoryContextConfig:
    """``agents.defaults.memoryContext``, with the defaults of formats.md section 4."""

    enabled: bool = True
    hard_cap_tokens: int = 4000
    embedding_model: Literal["hash", "transformer"] = "hash"
    redaction: bool = True
    knowledge_extraction: bool = True
    auto_recall_min_score: float = AUTO_RECALL_MIN_SCORE
    max_segments: int = 20_000
    cross_session: bool = False
    eviction_days: int = 90
    storage_path: str | None = None


@dataclass(frozen=True, slots=True)
class MemoryFlushConfig:
    """``agents.defaults.compaction.memoryFlush``."""

    enabled: bool = True
    soft_threshold_tokens: int = 4000
    prompt: str | None = None
    system_prompt: str | None = None
    force_flush_transcript_bytes: int | str | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True)
class CompactionConfig:
    """``agents.defaults.compaction`` (the keys memlens computes with).

    ``reserve_tokens`` and ``keep_recent_tokens`` default to pi's values; the other
    keys OpenClaw accepts are validated and left in :attr:`OpenClawConfig.raw`.
    """

    mode: Literal["default", "safeguard"] = "default"
    reserve_tokens: int = PI_RESERVE_TOKENS
    keep_recent_tokens: int = KEEP_RECENT_TOKENS
    reserve_tokens_floor: int = 20_000
    max_history_share: float = 0.5
    memory_flush: MemoryFlushConfig = field(default_factory=MemoryFlushConfig)
    custom_instructions: str | None = None
    """``customInstructions``: read by OpenClaw versions before 2026.9 (2026.9.6's
    ``openclaw doctor`` removes it); memlens still puts it in its summary prompts."""
    identifier_policy: Literal["strict", "off", "custom"] | None = None
    """``identifierPolicy`` (unset: ``strict``; ``custom`` is gone in 2026.9.6)."""
    identifier_instructions: str | None = None
    """``identifierInstructions``, the text of the ``custom`` policy."""

    @property
    def effective_reserve_tokens(self) -> int:
        """``max(reserveTokens, reserveTokensFloor)``, as OpenClaw applies it."""
        return max(self.reserve_tokens, self.reserve_tokens_floor)


@dataclass(frozen=True, slots=True)
class ModelEntry:
    """One ``models.providers.<provider>.models[]`` entry."""

    provider: str
    id: str
    context_window: int | None = None
    context_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class OpenClawConfig:
    """What memlens reads from ``openclaw.json``.

    Attributes
    ----------
    path
        The file name, as given.
    raw
        The whole parsed document (never modified).
    problems
        Every fault found; ``error`` ones are listed by :func:`raise_for_errors`.
    """

    path: str
    raw: dict[str, Any]
    memory_context: MemoryContextConfig
    compaction: CompactionConfig
    context_tokens: int | None
    models: tuple[ModelEntry, ...]
    problems: tuple[Problem, ...]

    @property
    def errors(self) -> tuple[Problem, ...]:
        """The problems of severity ``error``."""
        return tuple(p for p in self.problems if p.severity == "error")

    def context_window_for(self, model_id: str | None) -> tuple[int, WindowSource]:
        """Shortcut for :func:`context_window_for` on this config."""
        return context_window_for(self, model_id)


_R = TypeVar("_R", MemoryContextConfig, MemoryFlushConfig, CompactionConfig)
_NESTED: dict[str, type[MemoryFlushConfig]] = {"memoryFlush": MemoryFlushConfig}


# --- loading ---------------------------------------------------------------------

MAX_DEPTH = 200
"""Deepest nesting of objects and arrays read; a real config nests less than 10."""
_BOM = "\ufeff"
_DECODE_ERRORS = (pyjson5.Json5Exception, ValueError, RecursionError)


class ConfigSyntaxError(FormatError):
    """``openclaw.json`` is not JSON5; :attr:`line` and :attr:`column` say where."""

    def __init__(self, file: str, message: str, line: int, column: int) -> None:
        super().__init__(file, f"invalid JSON5 at line {line}, column {column}: {message}", line)
        self.column = column


@contextmanager
def _gc_off() -> Iterator[None]:
    """The cyclic collector off while a config is built (2x faster on a 24 MB file).

    Not :func:`core.io.jsonio.gc_paused`: that one freezes everything alive when the
    app asks it to, and a config is read first thing in a load, while the window
    may still be releasing the place it had open.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_openclaw_config(
    path: str | os.PathLike[str], *, missing_ok: bool = False
) -> OpenClawConfig:
    """Read and validate ``openclaw.json``.

    Parameters
    ----------
    path
        The config file.
    missing_ok
        When true, a missing file gives the defaults (with an ``info`` problem).

    Raises
    ------
    FormatError
        When the file cannot be read, is not JSON5 (:class:`ConfigSyntaxError`:
        line and column), or is not an object. Faults in the validated sections
        do not raise: see :func:`raise_for_errors`.
    """
    name = os.fspath(path)
    try:
        if not stat.S_ISREG(os.stat(name).st_mode):
            raise FormatError(name, "cannot read: not a regular file")
        with open(name, "rb") as fh:
            data = fh.read()
    except FileNotFoundError as exc:
        if not missing_ok:
            raise FormatError(name, "cannot read: file not found") from exc
        cfg = parse_openclaw_config("{}", name)
        info = Problem(name, 0, "file not found; using the defaults", "info")
        return OpenClawConfig(name, cfg.raw, cfg.memory_context, cfg.compaction, None, (), (info,))
    except (OSError, ValueError) as exc:
        raise FormatError(name, f"cannot read: {getattr(exc, 'strerror', None) or exc}") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FormatError(name, f"invalid UTF-8 at byte {exc.start + 1}", line) from None
    with _gc_off():
        raw, notes = decode_json5(text, name, data)
        return build_openclaw_config(raw, text, name, notes)


def parse_openclaw_config(text: str, name: str = "openclaw.json") -> OpenClawConfig:
    """Parse and validate the JSON5 *text* of an ``openclaw.json``.

    Raises
    ------
    FormatError
        As :func:`decode_json5`, or when the top level is not an object.
    """
    with _gc_off():
        raw, notes = decode_json5(text, name)
        return build_openclaw_config(raw, text, name, notes)


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


def build_openclaw_config(
    raw: Any, text: str, name: str, notes: Iterable[Problem] = ()
) -> OpenClawConfig:
    """Validate *raw*, the parsed *text* of the config file *name*.

    *notes* are problems found while parsing, listed first.

    Raises
    ------
    FormatError
        When the top level is not an object.
    """
    if not isinstance(raw, dict):
        blanks = _BLANKS.match(text, len(_BOM) if text.startswith(_BOM) else 0)
        line, column = _line_col(text, blanks.end() if blanks is not None else 0)
        message = f"the top level must be an object, got {_describe(raw)} at column {column}"
        raise FormatError(name, message, line)

    checker = _Checker(name, text)
    checker.problems.extend(notes)
    agents = _section(raw, ("agents",), checker)
    defaults = _section(agents, ("agents", "defaults"), checker)
    memory_raw = _section(defaults, ("agents", "defaults", "memoryContext"), checker)
    compaction_raw = _section(defaults, ("agents", "defaults", "compaction"), checker)
    checker.walk(memory_raw, MEMORY_CONTEXT_SCHEMA, ("agents", "defaults", "memoryContext"))
    checker.walk(compaction_raw, COMPACTION_SCHEMA, ("agents", "defaults", "compaction"))

    context_tokens: int | None = None
    if "contextTokens" in defaults:
        value = defaults["contextTokens"]
        context_tokens = _positive_int(value)
        if context_tokens is None:
            checker.report(
                ("agents", "defaults", "contextTokens"),
                f"must be an integer >= 1, got {_describe(value)}",
            )

    return OpenClawConfig(
        path=name,
        raw=raw,
        memory_context=_build(MemoryContextConfig, memory_raw, MEMORY_CONTEXT_SCHEMA),
        compaction=_build(CompactionConfig, compaction_raw, COMPACTION_SCHEMA),
        context_tokens=context_tokens,
        models=_models(raw, checker),
        problems=tuple(checker.problems),
    )


def _section(parent: dict[str, Any], path: tuple[str, ...], checker: _Checker) -> dict[str, Any]:
    if path[-1] not in parent:
        return {}
    value = parent[path[-1]]
    if not isinstance(value, dict):
        checker.report(path, f"must be an object, got {_describe(value)}")
        return {}
    return value


def _snake(key: str) -> str:
    return re.sub(r"([A-Z])", r"_\1", key).lower()


def _build(record: type[_R], section: dict[str, Any], schema: _Obj) -> _R:
    """Make *record* from a validated *section*.

    Each field is read from the key of the same name in camelCase; a missing or
    invalid value (already reported) keeps the field's default.
    """
    values: dict[str, Any] = {}
    for key, spec in schema.fields.items():
        name = _snake(key)
        if name not in record.__dataclass_fields__:
            continue  # validated, kept in raw, not typed
        value = section.get(key)
        if isinstance(spec, _Obj):
            sub = value if isinstance(value, dict) else {}
            values[name] = _build(_NESTED[key], sub, spec)
        elif key in section and spec.ok(value):
            values[name] = spec.convert(value) if spec.convert is not None else value
    return record(**values)


def _models(raw: dict[str, Any], checker: _Checker) -> tuple[ModelEntry, ...]:
    # Outside the strict sections: faults here are warnings, the entry is skipped.
    models = raw.get("models")
    providers = models.get("providers") if isinstance(models, dict) else None
    out: list[ModelEntry] = []
    for provider, pcfg in providers.items() if isinstance(providers, dict) else ():
        items = pcfg.get("models") if isinstance(pcfg, dict) else None
        name = str(provider)
        path = ("models", "providers", name, "models")
        for i, item in enumerate(items if isinstance(items, list) else ()):
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                label = f"models.providers.{provider}.models[{i}]"
                checker.report(path, "needs a string id; entry ignored", "warning", label)
                continue
            window = _positive_int(item.get("contextWindow"))
            tokens = _positive_int(item.get("contextTokens"))
            if (window is None and "contextWindow" in item) or (
                tokens is None and "contextTokens" in item
            ):  # rare: the loop above runs for every one of maybe 100,000 models
                for key, size in (("contextWindow", window), ("contextTokens", tokens)):
                    if size is None and key in item:
                        label = f"models.providers.{provider}.models[{i}].{key}"
                        message = f"must be an integer >= 1, got {_describe(item[key])}; ignored"
                        checker.report((*path, key), message, "warning", label)
            out.append(ModelEntry(name, item["id"], window, tokens))
    return tuple(out)


def raise_for_errors(config: OpenClawConfig) -> None:
    """Raise if *config* has any error, listing every one of them.

    Raises
    ------
    FormatError
        Naming the file, with one line per error (``line N: path: message``).
    """
    errors = config.errors
    if not errors:
        return
    lines = [f"line {p.line}: {p.message}" if p.line else p.message for p in errors]
    noun = "error" if len(errors) == 1 else "errors"
    raise FormatError(config.path, f"{len(errors)} config {noun}:\n" + "\n".join(lines))


# --- context window --------------------------------------------------------------


def _registry_window(model: str) -> int | None:
    best = ""
    for key in MODEL_REGISTRY:
        if model.startswith(key) and len(key) > len(best):
            best = key
    return MODEL_REGISTRY[best] if best else None


def _configured_window(models: tuple[ModelEntry, ...], model_id: str) -> int | None:
    provider, _, bare = model_id.partition("/")
    candidates = [m for m in models if m.id == model_id]
    if not candidates and bare:
        candidates = [m for m in models if m.provider == provider and m.id == bare]
    for m in candidates:
        # OpenClaw reads the budget as contextTokens ?? contextWindow.
        size = m.context_tokens if m.context_tokens is not None else m.context_window
        if size is not None:
            return size
    return None


def context_window_for(
    config: OpenClawConfig | None, model_id: str | None
) -> tuple[int, WindowSource]:
    """Return the context window of *model_id* and where it came from.

    Rule (algorithms.md section 2): the config's
    ``models.providers.*.models[].contextTokens`` or ``contextWindow``, else the
    built-in :data:`MODEL_REGISTRY`, else 200,000; the result is capped by
    ``agents.defaults.contextTokens`` (source ``"cap"`` when the cap applied).

    Parameters
    ----------
    config
        The loaded config, or None for the registry and default only.
    model_id
        ``"provider/model"`` or a bare model id; None gives the default.
    """
    window: int | None = None
    source: WindowSource = "default"
    if model_id:
        if config is not None:
            window = _configured_window(config.models, model_id)
            source = "config"
        if window is None:
            bare = model_id.rsplit("/", 1)[-1]
            window = _registry_window(bare.lower())
            source = "registry"
    if window is None:
        window, source = DEFAULT_CONTEXT_WINDOW, "default"
    cap = config.context_tokens if config is not None else None
    if cap is not None and cap < window:
        return cap, "cap"
    return window, source
