"""Mutations of agent files for the fuzz tier: each returns new bytes and a description.

Every mutation is drawn from a seeded :class:`random.Random`, so a case is
replayed from its seed and number alone.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    import random

RAW = "@@RAW@@"
"""Placeholder for a value JSON libraries cannot write (1e400, deep nesting...)."""

KNOWN_KEYS = (
    "parentId", "id", "type", "message", "content", "usage", "input", "output", "cacheRead",
    "cacheWrite", "totalTokens", "cost", "role", "timestamp", "summary", "firstKeptEntryId",
    "firstKeptEntryIndex", "tokensBefore", "tokensAfter", "details", "sessionId", "tokens",
    "metadata", "topics", "entities", "supersededBy", "_deleted", "text", "arguments",
    "stopReason", "toolCallId", "toolName", "isError", "version", "name", "thinking",
    "customType", "data", "fromId", "targetId", "label", "provider", "modelId", "model",
    "compactionCount", "updatedAt", "sessionFile", "contextTokens", "inputTokens",
    "memoryFlushAt", "memoryFlushCompactionCount", "context", "command", "exitCode",
)  # fmt: skip

WRONG_VALUES: tuple[Any, ...] = (
    5, -1, 0, 1e300, -1e300, 2**70, -(2**70), 1.5, "x", "", None, True, False, [], {},
    [1, "a", None], {"a": {"b": []}}, "\ud800", "a\udc00b", [{"type": 5}], {"type": "text"},
    "2026-13-45T99:99:99Z", "#1", "../../etc/passwd",
)  # fmt: skip


def raw_values(limit: int) -> tuple[bytes, ...]:
    """Values only raw JSON text can hold, and sizes that test the line limit."""
    return (
        b"1e400",
        b"-1e400",
        b"1E+999",
        b"9" * 5000,
        b"-" + b"9" * 5000,
        b"1" + b"0" * 400 + b".5",
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a":' * 20_000 + b"1" + b"}" * 20_000,
        b"[" * 1000 + b"]" * 1000,  # within orjson's limit: deep, but read
        b"[" * 300 + b"]" * 300,
        b'"\\ud800"',
        b'"x\\udfff\\ud800y"',
        b'"\\u0000"',
        b"NaN",
        b"Infinity",
        b'"' + b"a" * (limit + 100) + b'"',  # over the line limit
        b'"' + b"b" * (limit // 2) + b'"',  # long, under it
    )


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _join(lines: list[bytes]) -> bytes:
    return b"\n".join(lines)


def _paths(obj: Any, prefix: tuple[Any, ...] = (), depth: int = 0) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    if depth > 4:
        return out
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.append((*prefix, k))
            out.extend(_paths(v, (*prefix, k), depth + 1))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:4]):
            out.append((*prefix, i))
            out.extend(_paths(v, (*prefix, i), depth + 1))
    return out


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


def _dump(obj: Any) -> bytes:
    import json

    return json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _field_mutation(rng: random.Random, line: bytes, limit: int) -> tuple[bytes, str] | None:
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    paths = _paths(obj)
    if not paths:
        return None
    known = [p for p in paths if isinstance(p[-1], str) and p[-1] in KNOWN_KEYS]
    path = rng.choice(known if known and rng.random() < 0.85 else paths)
    if rng.random() < 0.35:
        raw = rng.choice(raw_values(limit))
        _set(obj, path, RAW)
        text = _dump(obj).replace(b'"' + RAW.encode() + b'"', raw, 1)
        return (
            text,
            f"{'.'.join(map(str, path))} = raw {raw[:24]!r}{'...' if len(raw) > 24 else ''}",
        )
    value = rng.choice(WRONG_VALUES)
    if rng.random() < 0.1:
        value = None if rng.random() < 0.5 else "deleted"
        if value == "deleted" and len(path) >= 1:
            parent: Any = obj
            for key in path[:-1]:
                parent = parent[key]
            del parent[path[-1]]
            return _dump(obj), f"{'.'.join(map(str, path))} removed"
    _set(obj, path, value)
    return _dump(obj), f"{'.'.join(map(str, path))} = {value!r:.40}"


def _parent_mutation(rng: random.Random, lines: list[bytes]) -> str | None:
    """Make parentIds dangle or loop (entries of a pi v2/v3 transcript)."""
    parsed = []
    for i, line in enumerate(lines):
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("id"), str) and "parentId" in obj:
            parsed.append((i, obj))
    if len(parsed) < 2:
        return None
    (i, a), (j, b) = sorted(rng.sample(parsed, 2), key=lambda t: t[0])
    kind = rng.choice(("cycle", "self", "dangling", "forward"))
    if kind == "cycle":
        a["parentId"] = b["id"]  # a is before b, and b descends from a (usually)
        lines[i] = _dump(a)
    elif kind == "self":
        b["parentId"] = b["id"]
        lines[j] = _dump(b)
    elif kind == "dangling":
        b["parentId"] = "deadbeef"
        lines[j] = _dump(b)
    else:
        a["parentId"] = b["id"]
        b["parentId"] = a["id"]
        lines[i], lines[j] = _dump(a), _dump(b)
    return f"parentId {kind} at lines {i + 1} and {j + 1}"


def mutate_text(rng: random.Random, data: bytes, limit: int) -> tuple[bytes, str]:
    """One mutation of a JSONL or JSON file."""
    lines = _lines(data)
    n = len(lines)
    op = rng.choice(
        (
            "flip", "flip", "truncate", "truncate", "dup", "swap", "delete", "field", "field",
            "field", "field", "parent", "insert", "crlf", "nul", "empty", "garbage", "append",
        )
    )  # fmt: skip
    if op == "flip" and data:
        buf = bytearray(data)
        count = rng.randint(1, 8)
        for _ in range(count):
            pos = rng.randrange(len(buf))
            buf[pos] = rng.choice((rng.randrange(256), buf[pos] ^ (1 << rng.randrange(8))))
        return bytes(buf), f"{count} byte(s) flipped"
    if op == "truncate" and data:
        cut = rng.randrange(len(data))
        return data[:cut], f"truncated at byte {cut}"
    if op == "dup" and n > 1:
        i = rng.randrange(n)
        lines.insert(rng.randrange(n), lines[i])
        return _join(lines), f"line {i + 1} duplicated"
    if op == "swap" and n > 2:
        i, j = rng.randrange(n), rng.randrange(n)
        lines[i], lines[j] = lines[j], lines[i]
        return _join(lines), f"lines {i + 1} and {j + 1} swapped"
    if op == "delete" and n > 1:
        i = rng.randrange(n)
        del lines[i]
        return _join(lines), f"line {i + 1} deleted"
    if op == "field":
        order = list(range(n))
        rng.shuffle(order)
        for i in order[:20]:
            done = _field_mutation(rng, lines[i], limit)
            if done is not None:
                lines[i] = done[0]
                return _join(lines), f"line {i + 1}: {done[1]}"
    if op == "parent":
        what = _parent_mutation(rng, lines)
        if what is not None:
            return _join(lines), what
    if op == "insert":
        raw = rng.choice(raw_values(limit))
        i = rng.randrange(n + 1)
        lines.insert(i, raw)
        return _join(lines), f"raw {raw[:24]!r} inserted as line {i + 1}"
    if op == "crlf":
        return data.replace(b"\n", b"\r\n"), "CRLF line ends"
    if op == "nul" and data:
        pos = rng.randrange(len(data))
        return data[:pos] + b"\x00" * rng.randint(1, 4096) + data[pos:], f"NULs at byte {pos}"
    if op == "empty":
        return b"", "emptied"
    if op == "garbage":
        return rng.randbytes(rng.randint(1, 4096)), "replaced by random bytes"
    # append: a partial line, as an agent in the middle of a write leaves it
    cut = rng.randrange(1, max(2, len(lines[0]) or 2))
    return data + lines[0][:cut], f"partial line of {cut} bytes appended"


def mutate_vectors(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """One mutation of a vectors.bin (VMEM)."""
    op = rng.choice(("flip", "truncate", "count", "dim", "idlen", "append", "empty"))
    if op == "flip" and data:
        buf = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            buf[rng.randrange(len(buf))] = rng.randrange(256)
        return bytes(buf), "bytes flipped"
    if op == "truncate" and data:
        cut = rng.randrange(len(data))
        return data[:cut], f"truncated at byte {cut}"
    if op in ("count", "dim") and len(data) >= 16:
        value = rng.choice((0, 1, 0xFFFFFFFF, 0x7FFFFFFF, 1 << 20))
        at = 12 if op == "count" else 8
        return data[:at] + struct.pack("<I", value) + data[at + 4 :], f"{op} = {value}"
    if op == "idlen" and len(data) > 18:
        return data[:16] + struct.pack("<H", 0xFFFF) + data[18:], "first id length = 65535"
    if op == "append":
        return data + rng.randbytes(rng.randint(1, 100)), "garbage appended"
    return b"", "emptied"


def mutate_binary(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """One mutation of an SQLite file."""
    op = rng.choice(("flip", "truncate", "header", "empty"))
    if op == "flip" and data:
        buf = bytearray(data)
        for _ in range(rng.randint(1, 256)):
            buf[rng.randrange(len(buf))] = rng.randrange(256)
        return bytes(buf), "bytes flipped"
    if op == "truncate" and data:
        cut = rng.randrange(len(data))
        return data[:cut], f"truncated at byte {cut}"
    if op == "header" and len(data) > 100:
        pos = rng.randrange(16, 100)
        return data[:pos] + rng.randbytes(4) + data[pos + 4 :], f"header bytes at {pos} changed"
    return b"", "emptied"
