"""The strict checks of two ``openclaw.json`` sections, as OpenClaw's zod schema makes them.

``agents.defaults.memoryContext`` (from the memory-context pull request #14362) and
``agents.defaults.compaction`` are validated as zod's ``.strict()`` does: every
unknown key and every wrong type or range is a problem whose message starts with the
full key path, found at its best-effort line by :class:`SchemaChecker`.

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
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from core.io.problems import Problem

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

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


def positive_int_or_none(value: Any) -> int | None:
    """*value* as an integer >= 1 (4000.0 included), or None when it is not one."""
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
class ObjectSpec:
    """A strict object: every key must be one of *fields*."""

    fields: Mapping[str, _Leaf | ObjectSpec]
    need: str = "must be an object"

    def ok(self, value: Any) -> bool:
        """Whether *value* is an object (its keys are checked by the walk)."""
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


MEMORY_CONTEXT_SCHEMA = ObjectSpec(
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

COMPACTION_SCHEMA = ObjectSpec(
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
        "qualityGuard": ObjectSpec({"enabled": _BOOL, "maxRetries": _int(0)}),
        "midTurnPrecheck": ObjectSpec({"enabled": _BOOL}),
        "postIndexSync": _enum("off", "async", "await"),
        "postCompactionSections": _STR_LIST,
        "model": _STR,
        "timeoutSeconds": _int(1),
        "memoryFlush": ObjectSpec(
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


def describe_value(value: Any) -> str:
    """*value* as a problem message shows it (``'abc'``, ``an object``, ``true``)."""
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


class SchemaChecker:
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
        """Add a problem at the line of *path*, named by *label* or the dotted path."""
        line = self.key_line(path)
        where = label if label is not None else ".".join(path)
        self.problems.append(Problem(self.name, line, f"{where}: {message}", severity))

    def walk(self, value: Any, spec: ObjectSpec, path: tuple[str, ...]) -> None:
        """Check every key of *value* (at *path*) against *spec*, recursively."""
        for key, item in value.items():
            sub = spec.fields.get(key)
            where = (*path, str(key))
            if sub is None:
                self.report(where, "unknown key")
                continue
            if not sub.ok(item):
                self.report(where, f"{sub.need}, got {describe_value(item)}")
            elif isinstance(sub, ObjectSpec):
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
