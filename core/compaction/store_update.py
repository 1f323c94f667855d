"""Counting a written compaction in the sibling ``sessions.json``, as OpenClaw's gateway does.

:func:`plan_store_update` says what would change; :func:`update_store_after` makes the
change under the store's lock, fenced by the entry's run fields, after the transcript
is written (a store that cannot be updated leaves the compaction written).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.compaction.run import CompactionRun, StoreUpdate
from core.io.problems import FormatError
from core.openclaw.sessions_store import (
    REMOVE,
    compaction_changes,
    entries_for_transcript,
    load_sessions_store,
    update_sessions_store,
)
from core.safety.session_lock import (
    LockHolder,
    agent_lock_holder,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from core.transcript.model import Session


FENCE_FIELDS = ("sessionId", "lifecycleRevision", "activeWriterRunId")
"""The fields of a session entry OpenClaw's gateway fences its post-compaction patch with."""


def sessions_store_of(session: Session) -> Path | None:
    """The ``sessions.json`` beside an OpenClaw transcript, if there is one."""
    path = Path(session.path).parent / "sessions.json"
    return path if path.is_file() else None


def _describe_changes(key: str, entry: dict[str, Any], changes: dict[str, Any]) -> str:
    bits = []
    for name, value in changes.items():
        if value is REMOVE:
            if name in entry:
                bits.append(f"{name} cleared")
        elif name == "updatedAt":
            bits.append("updatedAt now")
        elif entry.get(name) != value:
            bits.append(f"{name} {entry.get(name, '(none)')} -> {value}")
    return f"session {key}: " + ", ".join(bits)


def plan_store_update(
    result: CompactionRun, session: Session, *, now_ms: int | None = None
) -> StoreUpdate | None:
    """How ``sessions.json`` would change if *result* were written now.

    None when there is no sibling ``sessions.json`` (a pi transcript, or an
    OpenClaw home that keeps its sessions in SQLite). Otherwise a
    :class:`StoreUpdate` (not yet ``updated``) whose *keys* are empty, with the
    reason in *note*, when the store cannot be read or names no entry, or
    several, for the transcript. Never raises.
    """
    path = sessions_store_of(session)
    if path is None or result.entry is None:
        return None
    name = str(path)
    try:
        store = load_sessions_store(path)
    except FormatError as exc:
        return StoreUpdate(name, [], False, f"sessions.json not updated: cannot read it: {exc}")
    except OSError as exc:
        return StoreUpdate(
            name, [], False, f"sessions.json not updated: cannot read it: {exc.strerror or exc}"
        )
    try:
        found = entries_for_transcript(store, session.path, session.id)
    except ValueError as exc:  # a name the OS refuses (a NUL in it)
        return StoreUpdate(name, [], False, f"sessions.json not updated: {exc}")
    if not found:
        return StoreUpdate(
            name, [], False, f"sessions.json not updated: no session in it names {session.id}"
        )
    if len(found) > 1:
        keys = ", ".join(e.key for e in found)
        return StoreUpdate(
            name,
            [],
            False,
            f"sessions.json not updated: several sessions name this transcript ({keys})",
        )
    entry = found[0]
    stamp = now_ms if now_ms is not None else int(time.time() * 1000)
    changes = compaction_changes(
        entry.raw, tokens_after=result.entry.get("tokensAfter"), now_ms=stamp
    )
    note = "update " + _describe_changes(entry.key, entry.raw, changes)
    return StoreUpdate(name, [entry.key], False, note, changes={entry.key: changes})


class _EntryChanged(Exception):
    """The session's entry now names another session: the gateway's patch would not apply."""


STORE_LOCK_WAIT_SECONDS = 2.0


def _wait_for_store_lock(path: str) -> LockHolder | None:
    """OpenClaw's live ``sessions.json.lock`` after a short wait, or None once it is free."""
    deadline = time.monotonic() + STORE_LOCK_WAIT_SECONDS
    while True:
        holder = agent_lock_holder(path)
        if holder is None or time.monotonic() >= deadline:
            return holder
        time.sleep(0.05)


def update_store_after(
    result: CompactionRun, session: Session, *, fence: Mapping[str, Any] | None = None
) -> StoreUpdate | None:
    """Count the written compaction in ``sessions.json`` as OpenClaw's gateway would.

    Re-reads the store (the gateway writes it all the time) and changes only
    the fields of :func:`~core.openclaw.sessions_store.compaction_changes`,
    computed from the entry as it is then, in the one entry of the transcript;
    atomic rewrite with a backup. Like the gateway, it leaves an entry that
    names another ``sessionId`` by then (the session was reset) alone, and it
    waits for a ``sessions.json.lock`` of OpenClaw's file lock to go. With
    *fence* (:func:`agent_run_fence`, taken before the append) the entry must
    still have the same ``sessionId``, ``lifecycleRevision`` and
    ``activeWriterRunId`` (the gateway's guard: a run that started meanwhile
    owns the entry). Never raises: a store that cannot be read, matched,
    locked or written is left as it was and the returned :class:`StoreUpdate`
    says why.
    """
    try:
        return _update_store_after(result, session, fence)
    except Exception as exc:  # the compaction is written: never fail it for the counters
        path = sessions_store_of(session)
        return StoreUpdate(
            str(path) if path is not None else "",
            [],
            False,
            f"sessions.json not updated: {exc or type(exc).__name__}",
        )


def _update_store_after(
    result: CompactionRun, session: Session, fence: Mapping[str, Any] | None
) -> StoreUpdate | None:
    planned = plan_store_update(result, session)
    if planned is None or not planned.keys or result.entry is None:
        return planned
    key = planned.keys[0]
    if fence is not None:
        expected: Mapping[str, Any] = fence
    else:
        try:
            now = load_sessions_store(planned.path).entries[key].raw
            expected = {name: now[name] for name in FENCE_FIELDS if name in now}
        except (FormatError, OSError, KeyError):
            expected = {"sessionId": None}  # the update below says why
    tokens_after = result.entry.get("tokensAfter")
    stamp = int(time.time() * 1000)
    applied: dict[str, dict[str, Any]] = {}

    def changes(entry: Mapping[str, Any]) -> Mapping[str, Any]:
        # like the gateway's projection: only while the entry names the same session,
        # in the same lifecycle, with the same writer
        if entry.get("sessionId") != expected.get("sessionId"):
            raise _EntryChanged(f"session {key} now names {entry.get('sessionId')!r}")
        for name in FENCE_FIELDS[1:]:
            if entry.get(name) != expected.get(name):
                raise _EntryChanged(
                    f"session {key}: {name} {expected.get(name)!r} -> {entry.get(name)!r}"
                )
        applied[key] = compaction_changes(entry, tokens_after=tokens_after, now_ms=stamp)
        return applied[key]

    def not_updated(why: str) -> StoreUpdate:
        planned.note = f"sessions.json not updated: {why}"
        planned.keys = []
        return planned

    holder = _wait_for_store_lock(planned.path)
    if holder is not None:
        return not_updated(f"OpenClaw holds its lock ({holder.describe()})")
    try:
        done = update_sessions_store(planned.path, {key: changes})
    except FormatError as exc:
        return not_updated(f"cannot read it: {exc}")
    except _EntryChanged as exc:
        return not_updated(f"the session changed meanwhile ({exc})")
    except (KeyError, TypeError) as exc:
        return not_updated(f"it changed meanwhile ({exc})")
    except OSError as exc:
        return not_updated(f"cannot write it: {exc.strerror or exc}")
    planned.updated = True
    planned.backup = done.backup
    planned.changes = applied
    after = done.store.entries.get(key)
    planned.note = f"sessions.json updated: session {key}" + (
        f" compactionCount {after.compaction_count}, totalTokens {after.total_tokens}"
        if after is not None
        else ""
    )
    return planned
