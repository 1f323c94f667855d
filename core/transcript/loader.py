"""Load a pi / OpenClaw transcript (versions 1 to 4) into a :class:`Session`.

pi writes versions 1 to 3 (JSONL); OpenClaw 2026.9's headers are version 4 (rows of
its database, :mod:`core.openclaw.agentdb`).

Migration happens in memory only: v1 entries get ids derived from the session
id and their position (stable from run to run), parentIds chaining them in file
order, and ``firstKeptEntryIndex`` resolved to an entry id; v2 role
``hookMessage`` reads as ``custom``. The file is never written.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import replace
from typing import Any

from core.io.jsonio import JsonlRead, gc_paused, read_jsonl, read_jsonl_file
from core.io.problems import FormatError, Problem
from core.io.text import cut
from core.transcript.model import Entry, Session
from core.transcript.normalize import MAX_TOKENS, USAGE_FIELDS, bad_token_count
from core.transcript.openclaw_tree import OpenClawTree

KNOWN_TYPES = frozenset(
    {
        "message",
        "thinking_level_change",
        "model_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }
)


CURRENT_VERSION = 4
"""The newest header version known: OpenClaw 2026.9's (``CURRENT_SESSION_VERSION``);
pi writes 3. Entries of versions 3 and 4 read alike."""

OPENCLAW_TYPES = frozenset({"reset", "leaf"})
"""Entry types of OpenClaw's version 4 transcripts that pi does not have."""

_NONE: list[Problem] = []  # never appended to: the answer when all is well


def message_problems(obj: dict[str, Any], entry_id: str, line: int, name: str) -> list[Problem]:
    """What is wrong with a ``message`` entry's message: missing, or absurd ``usage``."""
    msg = obj.get("message")
    if type(msg) is not dict:
        what = "null" if msg is None else type(msg).__name__
        return [
            Problem(
                name,
                line,
                f"entry {entry_id}: message is {what}, not an object; not in the context",
                "warning",
            )
        ]
    usage = msg.get("usage")
    if usage is None:
        return _NONE
    if type(usage) is dict:
        for key in USAGE_FIELDS:  # the common case, quickly: whole counts in range
            value = usage.get(key)
            if value is not None and not (type(value) is int and 0 <= value <= MAX_TOKENS):
                break
        else:
            return _NONE
    else:
        return [
            Problem(name, line, f"entry {entry_id}: usage is not an object; ignored", "warning")
        ]
    return [
        Problem(
            name,
            line,
            f"entry {entry_id}: usage.{key} {_short(usage[key])} is not a token count "
            f"(0 to {MAX_TOKENS:,}); ignored",
            "warning",
        )
        for key in USAGE_FIELDS
        if key in usage and bad_token_count(usage[key])
    ]


def _short(value: object, width: int = 30) -> str:
    return cut(repr(value), width)


def load_transcript(path: str | os.PathLike[str]) -> Session:
    """Read and parse a transcript file.

    The file is read a chunk at a time: a line over the line limit
    (:func:`core.io.limits.max_line_bytes`) is a problem, never held in memory.

    Raises
    ------
    FormatError
        When the file cannot be read, is not a regular file (a FIFO, a device:
        never opened) or is not a pi transcript.
    """
    name = os.fspath(path)
    with gc_paused():
        try:
            read = read_jsonl_file(name)
        except FileNotFoundError as exc:
            raise FormatError(name, f"cannot read: {exc.strerror or exc}") from exc
        return _parse(read, name)


def _stable_id(session_id: str, index: int, taken: set[str]) -> str:
    salt = 0
    while True:
        seed = f"{session_id}:{index}:{salt}".encode()
        candidate = hashlib.sha256(seed).hexdigest()[:8]
        if candidate not in taken:
            return candidate
        salt += 1


def parse_transcript(data: bytes, name: str) -> Session:
    """Parse transcript bytes; *name* is used in problems and errors.

    Raises
    ------
    FormatError
        When the first object is not a session header.
    """
    with gc_paused():
        return _parse(read_jsonl(data, name), name)


def parse_read(read: JsonlRead, name: str) -> Session:
    """Build a :class:`Session` from objects already read (a JSONL file, database rows).

    Raises
    ------
    FormatError
        When the first object is not a session header.
    """
    return _parse(read, name)


def _parse(read: JsonlRead, name: str) -> Session:
    problems = read.problems
    objects = read.objects
    if not objects:
        raise FormatError(name, "not a pi transcript: no JSON object in the file")
    first = objects[0]
    header = first.value
    if not (
        isinstance(header, dict)
        and header.get("type") == "session"
        and isinstance(header.get("id"), str)
    ):
        raise FormatError(
            name,
            "not a pi transcript: the first object is not a session header "
            '({"type":"session","id":...})',
            first.line,
        )
    readable = not first.recovered
    if not readable:
        problems.append(
            Problem(
                name,
                first.line,
                "the session header has another object run together with it: the agent "
                "cannot parse that line, so it finds no session in this file (pi starts a "
                "new session and rewrites the file when it opens it); every entry is "
                "shown as never seen by the agent, and nothing is written to it",
            )
        )
    raw_version = header.get("version", 1)
    version = raw_version if isinstance(raw_version, int) and raw_version > 0 else 1
    if version > CURRENT_VERSION:
        problems.append(
            Problem(
                name,
                first.line,
                f"transcript version {raw_version} is newer than memlens knows "
                f"({CURRENT_VERSION}); read as version {CURRENT_VERSION}",
                "warning",
            )
        )
    session_id = header["id"]
    tree = OpenClawTree() if version >= 4 else None
    entries: list[Entry] = []
    taken: set[str] = set()
    # pi's position of each object (its parse drops lines of objects run together)
    # -> id, for v1 firstKeptEntryIndex as pi's migration resolves it
    position_ids: dict[int, str] = {}
    pi_position = 0
    pending_v1: list[tuple[int, int]] = []  # (entry list index, firstKeptEntryIndex)
    prev_id: str | None = None
    for index, obj_rec in enumerate(objects[1:], start=1):
        obj = obj_rec.value
        if not obj_rec.recovered:
            pi_position += 1
        if not isinstance(obj, dict):
            problems.append(Problem(name, obj_rec.line, "not a JSON object; skipped"))
            continue
        kind = obj.get("type")
        if not isinstance(kind, str):
            problems.append(Problem(name, obj_rec.line, "object without a 'type'; skipped"))
            continue
        if kind == "session":
            problems.append(Problem(name, obj_rec.line, "second session header ignored", "warning"))
            continue
        synthetic = False
        if version >= 2 and isinstance(obj.get("id"), str) and obj["id"]:
            entry_id = obj["id"]
            parent = obj.get("parentId")
            parent_id = parent if isinstance(parent, str) else None
            if entry_id in taken:
                problems.append(
                    Problem(name, obj_rec.line, f"duplicate entry id {entry_id!r}", "warning")
                )
        else:
            entry_id = _stable_id(session_id, index, taken)
            parent_id = prev_id
            synthetic = True
            if version >= 2:
                problems.append(
                    Problem(
                        name,
                        obj_rec.line,
                        f"{kind} entry without an id; given {entry_id} chained to the previous",
                        "warning",
                    )
                )
        if tree is not None and not synthetic:
            in_tree, tree_parent = tree.feed(obj)
            parent_id = tree_parent if in_tree else None
        if kind not in KNOWN_TYPES and not (tree is not None and kind in OPENCLAW_TYPES):
            problems.append(
                Problem(name, obj_rec.line, f"unknown entry type {kind!r} kept raw", "info")
            )
        taken.add(entry_id)
        if not obj_rec.recovered:
            position_ids[pi_position] = entry_id
        if kind == "compaction" and version < 2:
            pos = obj.get("firstKeptEntryIndex")
            if isinstance(pos, int):
                pending_v1.append((len(entries), pos))
        if kind == "message":
            problems.extend(message_problems(obj, entry_id, obj_rec.line, name))
        ts = obj.get("timestamp")
        entries.append(
            Entry(
                index=index,
                line=obj_rec.line,
                offset=obj_rec.offset,
                type=kind,
                id=entry_id,
                parent_id=parent_id,
                timestamp=ts if isinstance(ts, str) else "",
                raw=obj,
                synthetic_id=synthetic,
                recovered=obj_rec.recovered or not readable,
            )
        )
        if not obj_rec.recovered:  # pi chains v1 entries over the lines it parsed
            prev_id = entry_id
    for list_index, pos in pending_v1:
        old = entries[list_index]
        target = position_ids.get(pos)
        if target is None:
            problems.append(
                Problem(
                    name,
                    old.line,
                    f"compaction firstKeptEntryIndex {pos} names no entry",
                    "warning",
                )
            )
            continue
        raw = dict(old.raw)
        raw["firstKeptEntryId"] = target
        entries[list_index] = replace(old, raw=raw)
    session = Session(
        path=name,
        header=header,
        version=version,
        entries=entries,
        problems=problems,
        size=read.size,
        agent_readable=readable,
        tree=tree,
    )
    problems.extend(Problem(name, b.line, b.message, "warning") for b in session.parent_breaks())
    return session
