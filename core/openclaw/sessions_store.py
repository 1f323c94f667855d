"""OpenClaw's session store ``~/.openclaw/agents/<agentId>/sessions/sessions.json``.

An object mapping session keys to entries (formats.md section 2). Reading keeps the
raw objects; the typed accessors never change them. A write re-reads the file
(the gateway updates it all the time, so a stale copy must not win), changes only
the given fields of the given entries, and replaces the file atomically with a
backup, as 2-space pretty JSON: unknown fields, non-object entries and the key
order all survive.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from core.io import jsonio
from core.io.fsutil import FileChangedError, atomic_write, file_identity
from core.io.jsonio import as_int
from core.io.limits import max_document_bytes
from core.io.problems import FormatError, Problem
from core.io.safe_read import read_regular

if TYPE_CHECKING:
    from pathlib import Path


class _Remove:
    """Type of :data:`REMOVE`."""

    def __repr__(self) -> str:
        return "REMOVE"


REMOVE: Final = _Remove()
"""Pass as a field's new value to delete the field from the entry."""


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class SessionEntry:
    """One session of the store: the raw object and typed views of known fields.

    An accessor gives None when the field is missing or of an unexpected type.
    """

    key: str
    raw: dict[str, Any]
    line: int = 0
    """Line of the entry's key in the file (0 when unknown)."""

    @property
    def session_id(self) -> str | None:
        """``sessionId``: the transcript's session id."""
        return _str(self.raw.get("sessionId"))

    @property
    def updated_at(self) -> int | None:
        """``updatedAt``, epoch milliseconds."""
        return as_int(self.raw.get("updatedAt"))

    @property
    def session_file(self) -> str | None:
        """``sessionFile``: path of the transcript."""
        return _str(self.raw.get("sessionFile"))

    @property
    def compaction_count(self) -> int | None:
        """``compactionCount``."""
        return as_int(self.raw.get("compactionCount"))

    @property
    def total_tokens(self) -> int | None:
        """``totalTokens``."""
        return as_int(self.raw.get("totalTokens"))

    @property
    def input_tokens(self) -> int | None:
        """``inputTokens``."""
        return as_int(self.raw.get("inputTokens"))

    @property
    def output_tokens(self) -> int | None:
        """``outputTokens``."""
        return as_int(self.raw.get("outputTokens"))

    @property
    def context_tokens(self) -> int | None:
        """``contextTokens``: the context window the session ran with."""
        return as_int(self.raw.get("contextTokens"))


@dataclass(frozen=True, slots=True)
class SessionStore:
    """A parsed ``sessions.json``.

    Attributes
    ----------
    raw
        The whole document, key order as in the file; entries that are not
        objects are kept here (and reported in *problems*) but not in *entries*.
    entries
        The object entries, by session key, in file order.
    """

    path: str
    raw: dict[str, Any]
    entries: dict[str, SessionEntry]
    problems: tuple[Problem, ...]
    trailing_newline: bool = False

    def __getitem__(self, key: str) -> SessionEntry:
        return self.entries[key]

    def __len__(self) -> int:
        return len(self.entries)


@dataclass(frozen=True, slots=True)
class StoreWrite:
    """The outcome of :func:`update_sessions_store`."""

    store: SessionStore
    """The store as written."""
    backup: Path | None
    """Copy of the previous file, or None when no backup was asked for."""


def load_sessions_store(path: str | os.PathLike[str]) -> SessionStore:
    """Read a ``sessions.json``.

    Raises
    ------
    FormatError
        When the file cannot be read, is not JSON (with the line) or its top
        level is not an object.
    """
    name = os.fspath(path)
    return parse_sessions_store(read_regular(name, max_bytes=max_document_bytes()), name)


def parse_sessions_store(data: bytes, name: str = "sessions.json") -> SessionStore:
    """Parse the bytes of a ``sessions.json``; see :func:`load_sessions_store`."""
    if not data.strip():
        raise FormatError(name, "empty file (expected a JSON object)")
    try:
        raw = jsonio.loads(data)
    except jsonio.JSONDecodeError as exc:
        # orjson's error is a json.JSONDecodeError: lineno/colno are the position.
        message = f"invalid JSON: {exc.msg} at column {exc.colno}"
        raise FormatError(name, message, exc.lineno) from exc
    if not isinstance(raw, dict):
        raise FormatError(name, "the top level must be an object mapping session keys")
    if jsonio.too_deep(raw, data):
        raise FormatError(name, f"a value nested deeper than {jsonio.MAX_DEPTH} levels")
    entries: dict[str, SessionEntry] = {}
    problems: list[Problem] = []
    for key, value in raw.items():
        line = _key_line(data, key)
        if isinstance(value, dict):
            entries[key] = SessionEntry(key, value, line)
        else:
            kind = "an array" if isinstance(value, list) else type(value).__name__
            problems.append(
                Problem(
                    name,
                    line,
                    f"entry {key!r} is {kind}, not an object; kept as is, not shown",
                    "warning",
                )
            )
    return SessionStore(name, raw, entries, tuple(problems), data.endswith(b"\n"))


def _key_line(data: bytes, key: str) -> int:
    # The store is 2-space pretty JSON: a top-level key starts a line at indent 2.
    needle = b"\n  " + jsonio.dumps(key) + b":"
    at = data.find(needle)
    return data.count(b"\n", 0, at) + 2 if at >= 0 else 0


def render_sessions_store(raw: Mapping[str, Any], *, trailing_newline: bool = False) -> bytes:
    """Serialise a store as OpenClaw writes it: 2-space pretty JSON, key order kept."""
    data = jsonio.dumps(raw, pretty=True)
    return data + b"\n" if trailing_newline else data


Changes: TypeAlias = Mapping[str, Any] | Callable[[Mapping[str, Any]], Mapping[str, Any]]
"""The new fields of one entry, or a function of the entry as it is now that gives them."""


def apply_changes(raw: Mapping[str, Any], changes: Mapping[str, Changes]) -> dict[str, Any]:
    """Return a copy of *raw* with *changes* applied; *raw* is not modified.

    A changed field keeps its position in the entry, a new field goes last, and
    :data:`REMOVE` deletes a field. A callable gets the entry as it is and
    returns its changes (a counter incremented from the current value).

    Raises
    ------
    KeyError
        When a session key of *changes* is not in the store.
    TypeError
        When the entry to change is not an object.
    """
    out = dict(raw)
    for key, fields in changes.items():
        if key not in out:
            raise KeyError(f"no session {key!r} in the store")
        entry = out[key]
        if not isinstance(entry, dict):
            raise TypeError(f"session {key!r} is not an object; it cannot be changed")
        entry = dict(entry)
        if callable(fields):
            fields = fields(entry)
        for field, value in fields.items():
            if value is REMOVE:
                entry.pop(field, None)
            else:
                entry[field] = value
        out[key] = entry
    return out


UPDATE_ATTEMPTS: Final = 3


def update_sessions_store(
    path: str | os.PathLike[str],
    changes: Mapping[str, Changes],
    *,
    backup: bool = True,
) -> StoreWrite:
    """Change fields of entries in ``sessions.json`` and rewrite it atomically.

    The file is read again first, so what the agent wrote since it was loaded
    is kept. Nothing else changes: unknown fields, entries that are not objects,
    key order and the trailing newline (or its absence) are preserved.

    The agent may rewrite the store at any moment: the file must be the one
    read, from the read to the replacement (:func:`core.io.fsutil.atomic_write`
    with the identity of the file as read, checked after its backup and right
    before the rename). When the agent wrote meanwhile nothing is replaced and
    the changes are applied again on top of its version (at most
    :data:`UPDATE_ATTEMPTS` times), so its write is never lost.

    Parameters
    ----------
    path
        The ``sessions.json`` file.
    changes
        ``{session_key: {field: new_value}}``; the value :data:`REMOVE` deletes
        the field. A callable instead of the fields gets the entry as read
        (each time it is read) and returns them.
    backup
        Keep a copy of the previous file beside it (``core.io.fsutil.backup_path``).

    Raises
    ------
    FormatError
        When the current file cannot be read or parsed.
    KeyError, TypeError
        See :func:`apply_changes`; the file is then left untouched.
    OSError
        When it cannot be written (:class:`core.io.fsutil.FileChangedError` when
        the agent kept changing it).
    """
    name = os.fspath(path)
    for _attempt in range(UPDATE_ATTEMPTS):
        stamp = file_identity(name)
        on_disk = read_regular(name, max_bytes=max_document_bytes())
        current = parse_sessions_store(on_disk, name)
        raw = apply_changes(current.raw, changes)
        data = render_sessions_store(raw, trailing_newline=current.trailing_newline)
        if stamp is None:
            continue  # replaced while we read it: read it again (atomic_write checks the rest)
        try:
            saved = atomic_write(name, data, backup=backup, expect=stamp)
        except FileChangedError:
            continue  # the agent wrote since our read: apply the changes to its version
        return StoreWrite(parse_sessions_store(data, current.path), saved)
    raise FileChangedError(f"{name} kept changing while it was updated; try again")


# -- after a compaction ------------------------------------------------------------------------

COMPACTION_USAGE_CLEARED: Final = (
    "inputTokens",
    "outputTokens",
    "cacheRead",
    "cacheWrite",
    "estimatedCostUsd",
)
"""OpenClaw's ``COMPACTION_RUN_USAGE_CLEAR_PATCH``: the last run's usage, void after compacting."""


def compaction_changes(
    entry: Mapping[str, Any], *, tokens_after: int | float | None, now_ms: int
) -> dict[str, Any]:
    """The fields OpenClaw's gateway changes in a session entry after a compaction.

    ``projectCompactionAccountingPatch(existingEntry, {compactionKind,
    tokensAfter})`` of the gateway's ``sessions.compact`` (OpenClaw 2026.9.6,
    ``session-accessor.sqlite-transcript-write-*.mjs``), for one compaction that
    is not a context-engine one: ``compactionCount`` + 1, ``updatedAt`` now, the
    last run's usage, ``contextBudgetStatus`` and ``transcriptByteCompactionLatch``
    cleared (a field set to ``undefined`` is dropped by ``JSON.stringify``), and
    ``totalTokens`` = floor(*tokens_after*) with ``totalTokensFresh`` true and
    ``totalTokensVersion`` 1; without a usable *tokens_after*, ``totalTokensFresh``
    false and no ``totalTokensVersion``.
    """
    count = entry.get("compactionCount")
    current = count if isinstance(count, int | float) and not isinstance(count, bool) else 0
    changes: dict[str, Any] = {
        "compactionCount": int(current) + 1 if float(current).is_integer() else current + 1,
        "transcriptByteCompactionLatch": REMOVE,
        "updatedAt": now_ms,
    }
    for name in COMPACTION_USAGE_CLEARED:
        changes[name] = REMOVE
    changes["contextBudgetStatus"] = REMOVE
    usable = (
        isinstance(tokens_after, int | float)
        and not isinstance(tokens_after, bool)
        and tokens_after >= 0
        and tokens_after != float("inf")
        and tokens_after == tokens_after  # not NaN
    )
    if usable:
        assert tokens_after is not None
        changes["totalTokens"] = int(tokens_after // 1)
        changes["totalTokensFresh"] = True
        changes["totalTokensVersion"] = 1
    else:
        changes["totalTokensFresh"] = False
        changes["totalTokensVersion"] = REMOVE
    return changes


def _same_path(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # ValueError: a name with a NUL in it
        pass
    try:
        return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))
    except ValueError:
        return False


def entries_for_transcript(
    store: SessionStore, transcript: str | os.PathLike[str], session_id: str | None = None
) -> list[SessionEntry]:
    """The entries of *store* that name *transcript*.

    Those whose ``sessionFile`` is the transcript (relative names are taken
    beside the store); when none does, those whose ``sessionId`` is the
    transcript's (*session_id*, or the file name before ``.jsonl`` and any
    ``-topic-`` suffix) and whose ``sessionFile`` is missing or has the
    transcript's file name (a home moved from another machine).
    """
    path = os.fspath(transcript)
    base = os.path.dirname(os.path.abspath(store.path))
    by_file = []
    for entry in store.entries.values():
        name = entry.session_file
        if name and _same_path(path, name if os.path.isabs(name) else os.path.join(base, name)):
            by_file.append(entry)
    if by_file:
        return by_file
    stem = os.path.basename(path)
    stem = stem[: -len(".jsonl")] if stem.endswith(".jsonl") else stem
    ids = {i for i in (session_id, stem.split("-topic-")[0]) if i}
    name = os.path.basename(path)
    return [
        e
        for e in store.entries.values()
        if e.session_id in ids
        and (not e.session_file or os.path.basename(e.session_file.replace("\\", "/")) == name)
    ]
