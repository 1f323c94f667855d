"""sessions.json after a written compaction: the gateway's fields, nothing else, never on failure."""

from __future__ import annotations

import json
import os
import time

import orjson
import pytest

from core.compaction.refusals import CompactionRefused, LaneBusy
from core.compaction.run import compact
from core.compaction.store_update import plan_store_update
from core.compaction.write import planned_writes, write_compaction
from core.openclaw.sessions_store import (
    REMOVE,
    compaction_changes,
    entries_for_transcript,
    load_sessions_store,
)
from core.safety.session_lock import acquire
from core.transcript import load_transcript

from .build import chain, lines, write_file

KEY = "agent:main:telegram:direct:123"


def _now_iso() -> str:
    """A lock's ``createdAt`` of now (a lock from before the boot is stale)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


ENTRY = {
    "sessionId": "sess-1",
    "updatedAt": 1_700_000_000_000,
    "compactionCount": 2,
    "memoryFlushAt": 1_699_999_000_000,
    "memoryFlushCompactionCount": 2,
    "totalTokens": 150_000,
    "totalTokensFresh": True,
    "inputTokens": 140_000,
    "outputTokens": 2_000,
    "cacheRead": 90_000,
    "cacheWrite": 1_000,
    "estimatedCostUsd": 0.42,
    "contextTokens": 200_000,
    "contextBudgetStatus": {"state": "near-limit"},
    "transcriptByteCompactionLatch": {"bytes": 123},
    "modelOverride": "claude-opus",
    "futureField": {"nested": [1, 2, {"x": None}], "ünïcode": "✓"},
}


def _home(tmp_path, *, entry=None, others=True, session_file=True):
    sessions = tmp_path / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    transcript = sessions / "sess-1.jsonl"
    write_file(transcript, lines(chain(20)))
    old = time.time() - 60
    os.utime(transcript, (old, old))
    e = dict(ENTRY if entry is None else entry)
    if session_file:
        e["sessionFile"] = str(transcript)
    store = {KEY: e}
    if others:
        store["agent:main:main"] = {"sessionId": "other", "updatedAt": 1, "compactionCount": 7}
        store["broken"] = [1, 2, 3]
    path = sessions / "sessions.json"
    path.write_text(json.dumps(store, indent=2, ensure_ascii=False) + "\n")
    return transcript, path


def test_compaction_changes_are_the_gateways():
    # projectCompactionAccountingPatch(existingEntry, {compactionKind, tokensAfter})
    got = compaction_changes(ENTRY, tokens_after=41_234.9, now_ms=1_800_000_000_000)
    assert got == {
        "compactionCount": 3,
        "transcriptByteCompactionLatch": REMOVE,
        "updatedAt": 1_800_000_000_000,
        "inputTokens": REMOVE,
        "outputTokens": REMOVE,
        "cacheRead": REMOVE,
        "cacheWrite": REMOVE,
        "estimatedCostUsd": REMOVE,
        "contextBudgetStatus": REMOVE,
        "totalTokens": 41_234,
        "totalTokensFresh": True,
        "totalTokensVersion": 1,
    }
    # no usable tokensAfter: the total is left, marked not fresh, its version dropped
    for bad in (None, -1, float("nan"), float("inf"), True):
        got = compaction_changes({}, tokens_after=bad, now_ms=5)
        assert got["compactionCount"] == 1 and got["totalTokensFresh"] is False
        assert got["totalTokensVersion"] is REMOVE and "totalTokens" not in got


def test_written_compaction_updates_only_its_entry(tmp_path):
    transcript, path = _home(tmp_path)
    before = orjson.loads(path.read_bytes())
    s = load_transcript(transcript)
    run = compact(s, keep_recent_tokens=3000)
    t0 = int(time.time() * 1000)
    run = write_compaction(run, s, update_store=True)
    assert run.written and run.store_update is not None and run.store_update.updated
    assert run.store_update.keys == [KEY] and "compactionCount 3" in run.store_update.note
    after = orjson.loads(path.read_bytes())
    assert list(after) == list(before)  # key order
    assert after["agent:main:main"] == before["agent:main:main"]
    assert after["broken"] == before["broken"]
    e = after[KEY]
    assert e["compactionCount"] == 3 and e["updatedAt"] >= t0
    assert e["totalTokens"] == run.entry["tokensAfter"]
    assert e["totalTokensFresh"] is True and e["totalTokensVersion"] == 1
    for gone in (
        "inputTokens",
        "outputTokens",
        "cacheRead",
        "cacheWrite",
        "estimatedCostUsd",
        "contextBudgetStatus",
        "transcriptByteCompactionLatch",
    ):
        assert gone not in e
    untouched = (
        "sessionId",
        "memoryFlushAt",
        "memoryFlushCompactionCount",
        "contextTokens",
        "modelOverride",
        "futureField",
        "sessionFile",
    )
    assert {k: e[k] for k in untouched} == {k: before[KEY][k] for k in untouched}
    assert [k for k in e if k in untouched] == [k for k in before[KEY] if k in untouched]
    assert path.read_bytes().endswith(b"}\n") and b'\n  "' in path.read_bytes()
    assert run.store_update.backup is not None
    assert orjson.loads(run.store_update.backup.read_bytes()) == before
    assert run.to_json()["sessions_store"]["updated"] is True


def test_planned_writes_list_the_store_rewrite(tmp_path):
    transcript, path = _home(tmp_path)
    s = load_transcript(transcript)
    run = compact(s, keep_recent_tokens=3000)
    writes = planned_writes(run, s, update_store=True)
    assert [w.action for w in writes] == ["backup", "append", "rewrite"]
    assert writes[-1].path == str(path) and KEY in writes[-1].summary
    assert "compactionCount 2 -> 3" in writes[-1].summary
    assert [w.action for w in planned_writes(run, s)] == ["backup", "append"]
    planned = plan_store_update(run, s)
    assert planned is not None and not planned.updated and planned.keys == [KEY]


@pytest.mark.parametrize(
    "content, why",
    [
        (b'{\n  "a": {\n', "invalid JSON"),
        (b"", "empty file"),
        (b"[1, 2]\n", "top level must be an object"),
    ],
)
def test_a_corrupt_store_is_left_alone_and_the_compaction_stays(tmp_path, content, why):
    transcript, path = _home(tmp_path)
    path.write_bytes(content)
    s = load_transcript(transcript)
    before = transcript.read_bytes()
    run = write_compaction(compact(s, keep_recent_tokens=3000), s, update_store=True)
    assert run.written and transcript.read_bytes().startswith(before)
    assert path.read_bytes() == content
    assert run.store_update is not None and not run.store_update.updated
    assert "sessions.json not updated: cannot read it" in run.store_update.note
    assert why in run.store_update.note
    assert not [p for p in path.parent.iterdir() if p.name.startswith("sessions.json.memlens")]


@pytest.mark.parametrize("case", ["several", "none"])
def test_no_or_several_matching_entries_change_nothing(tmp_path, case):
    transcript, path = _home(tmp_path, session_file=False)
    data = orjson.loads(path.read_bytes())
    if case == "several":
        data["alias"] = dict(data[KEY])
    else:
        del data[KEY]
    path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
    raw = path.read_bytes()
    s = load_transcript(transcript)
    run = write_compaction(compact(s, keep_recent_tokens=3000), s, update_store=True)
    assert run.written and path.read_bytes() == raw and run.store_update is not None
    assert not run.store_update.updated
    why = "several sessions" if case == "several" else "no session in it names sess-1"
    assert why in run.store_update.note


def test_entries_are_matched_by_file_then_by_session_id(tmp_path):
    transcript, path = _home(tmp_path, session_file=False)
    store = load_sessions_store(path)
    assert [e.key for e in entries_for_transcript(store, transcript, "sess-1")] == [KEY]
    topic = transcript.with_name("sess-1-topic-build%20fix.jsonl")
    assert [e.key for e in entries_for_transcript(store, topic)] == [KEY]
    data = orjson.loads(path.read_bytes())
    data[KEY]["sessionFile"] = "sess-1.jsonl"  # relative: beside the store
    data["agent:main:main"]["sessionFile"] = "/elsewhere/sess-1.jsonl"
    data["agent:main:main"]["sessionId"] = "sess-1"
    path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
    store = load_sessions_store(path)
    assert [e.key for e in entries_for_transcript(store, transcript, "sess-1")] == [KEY]


def test_nothing_is_written_when_the_compaction_is_refused(tmp_path):
    transcript, path = _home(tmp_path)
    raw, before = path.read_bytes(), transcript.read_bytes()
    s = load_transcript(transcript)
    run = compact(s, keep_recent_tokens=3000)
    with acquire(transcript, tool="memlens compact"):  # another compaction runs
        with pytest.raises(LaneBusy, match=r"another compaction .* memlens compact"):
            write_compaction(run, s, update_store=True)
    os.utime(transcript, None)  # the agent just wrote
    with pytest.raises(CompactionRefused, match="mid-turn"):
        write_compaction(run, s, update_store=True)
    assert path.read_bytes() == raw and transcript.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["sess-1.jsonl", "sessions.json"]


def test_the_agents_write_lock_refuses_the_write(tmp_path):
    transcript, path = _home(tmp_path)
    raw, before = path.read_bytes(), transcript.read_bytes()
    sidecar = transcript.with_name("sess-1.jsonl.lock")
    sidecar.write_text(json.dumps({"pid": os.getpid(), "createdAt": _now_iso()}))
    s = load_transcript(transcript)
    run = compact(s, keep_recent_tokens=3000)
    with pytest.raises(LaneBusy, match="the agent is writing it"):
        write_compaction(run, s, update_store=True)
    assert path.read_bytes() == raw and transcript.read_bytes() == before
    sidecar.unlink()
    assert write_compaction(run, s, update_store=True).store_update.updated


def test_an_agent_write_between_read_and_backup_is_kept(tmp_path, monkeypatch):
    from core.io.fsutil import atomic_write as real_atomic_write
    from core.openclaw import sessions_store

    transcript, path = _home(tmp_path)
    calls = []

    def racing(target, data, *, backup=True, **kw):  # the gateway writes just before our backup
        if not calls:
            now = orjson.loads(path.read_bytes())
            now[KEY]["compactionCount"] = 10  # its own compaction
            now["agent:main:new"] = {"sessionId": "new", "updatedAt": 2}
            path.write_bytes(orjson.dumps(now, option=orjson.OPT_INDENT_2) + b"\n")
        calls.append(target)
        return real_atomic_write(target, data, backup=backup, **kw)

    monkeypatch.setattr(sessions_store, "atomic_write", racing)
    s = load_transcript(transcript)
    run = write_compaction(compact(s, keep_recent_tokens=3000), s, update_store=True)
    assert run.store_update is not None and run.store_update.updated and len(calls) == 2
    after = orjson.loads(path.read_bytes())
    assert "agent:main:new" in after  # the gateway's write survived ours
    assert after[KEY]["compactionCount"] == 11  # counted on top of its count
    assert "inputTokens" not in after[KEY]


def test_the_gateways_store_lock_and_a_reset_session_are_respected(tmp_path, monkeypatch):
    from core.compaction import checks, store_update

    monkeypatch.setattr(store_update, "STORE_LOCK_WAIT_SECONDS", 0.2)
    transcript, path = _home(tmp_path)
    lock = path.with_name("sessions.json.lock")
    lock.write_text(json.dumps({"pid": os.getpid(), "createdAt": _now_iso()}))
    raw = path.read_bytes()
    s = load_transcript(transcript)
    run = write_compaction(compact(s, keep_recent_tokens=3000), s, update_store=True)
    assert run.written and path.read_bytes() == raw
    assert "OpenClaw holds its lock" in run.store_update.note and lock.exists()
    lock.unlink()
    # the session was reset between the plan and the update: the gateway's guard
    transcript2, path2 = _home(tmp_path / "b")
    s = load_transcript(transcript2)
    result = compact(s, keep_recent_tokens=3000)
    real = store_update.load_sessions_store
    seen = []

    def reset_after_read(p):  # type: ignore[no-untyped-def]
        store = real(p)
        seen.append(p)
        if len(seen) == 2:  # after update_store_after read the entry's session id
            data = orjson.loads(path2.read_bytes())
            data[KEY]["sessionId"] = "sess-2"
            path2.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
        return store

    monkeypatch.setattr(checks, "load_sessions_store", reset_after_read)
    monkeypatch.setattr(store_update, "load_sessions_store", reset_after_read)
    run = write_compaction(result, s, update_store=True)
    assert run.written and not run.store_update.updated
    assert "the session changed meanwhile" in run.store_update.note
    assert orjson.loads(path2.read_bytes())[KEY]["compactionCount"] == 2


def _agent_replaces_during_backup(monkeypatch, path, change):
    """The agent's atomic rewrite of *path* lands inside make_backup, after the copy was verified."""
    import shutil

    from core.io import fsutil

    real = shutil.copystat
    done = []

    def copystat(src, dst, **kw):  # type: ignore[no-untyped-def]
        real(src, dst, **kw)
        if not done and os.fspath(src) == os.fspath(path):
            done.append(True)
            now = orjson.loads(path.read_bytes())
            change(now)
            tmp = path.with_name(".agent.tmp")
            tmp.write_bytes(orjson.dumps(now, option=orjson.OPT_INDENT_2) + b"\n")
            os.replace(tmp, path)

    monkeypatch.setattr(fsutil.shutil, "copystat", copystat)
    return done


def test_an_agent_rewrite_of_the_same_size_during_the_backup_is_never_replaced(
    tmp_path, monkeypatch
):
    from core.openclaw.sessions_store import update_sessions_store

    _transcript, path = _home(tmp_path)

    def agent(now):  # only updatedAt's digits change: the same size
        now[KEY]["updatedAt"] = 1_799_999_999_999

    done = _agent_replaces_during_backup(monkeypatch, path, agent)
    update_sessions_store(path, {KEY: {"totalTokens": 1}})
    assert done
    after = orjson.loads(path.read_bytes())
    assert after[KEY]["updatedAt"] == 1_799_999_999_999  # the agent's write survived
    assert after[KEY]["totalTokens"] == 1  # ours, applied on top of it


def test_atomic_write_refuses_a_file_replaced_during_its_backup(tmp_path, monkeypatch):
    from core.io.fsutil import FileChangedError, atomic_write, file_identity

    p = tmp_path / "sessions.json"
    p.write_bytes(orjson.dumps({KEY: {"updatedAt": 1_000}}, option=orjson.OPT_INDENT_2))
    read = file_identity(p)

    def agent(now):
        now[KEY]["updatedAt"] = 2_000

    done = _agent_replaces_during_backup(monkeypatch, p, agent)
    with pytest.raises(FileChangedError, match="nothing was replaced"):
        atomic_write(p, b"ours", expect=read)
    assert done and orjson.loads(p.read_bytes())[KEY]["updatedAt"] == 2_000
    # without expect too: the backup's verified identity is the one checked
    done.clear()
    with pytest.raises(FileChangedError, match="nothing was replaced"):
        atomic_write(p, b"ours")
    assert done and orjson.loads(p.read_bytes())[KEY]["updatedAt"] == 2_000


def test_a_write_between_the_read_and_the_backup_is_refused_with_expect(tmp_path):
    from core.io.fsutil import FileChangedError, atomic_write, file_identity

    p = tmp_path / "sessions.json"
    p.write_bytes(b'{"a": 1}')
    read = file_identity(p)
    tmp = tmp_path / "x"
    tmp.write_bytes(b'{"a": 2}')
    os.replace(tmp, p)  # same size, new inode
    with pytest.raises(FileChangedError):
        atomic_write(p, b"ours", expect=read)
    assert p.read_bytes() == b'{"a": 2}'
    assert not list(tmp_path.glob("sessions.json.memlens-backup-*"))  # refused before the backup


def test_a_session_file_with_a_nul_never_raises(tmp_path):
    transcript, path = _home(tmp_path, session_file=False)
    data = orjson.loads(path.read_bytes())
    data["agent:main:main"]["sessionFile"] = "bad\x00name.jsonl"
    path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
    store = load_sessions_store(path)
    assert [e.key for e in entries_for_transcript(store, transcript, "sess-1")] == [KEY]


def test_a_nul_in_a_session_file_neither_fails_the_plan_nor_the_written_compaction(tmp_path):
    transcript, path = _home(tmp_path)
    data = orjson.loads(path.read_bytes())
    data["agent:main:main"]["sessionFile"] = "evil\x00.jsonl"
    path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
    s = load_transcript(transcript)
    result = compact(s, keep_recent_tokens=3000)
    assert planned_writes(result, s, update_store=True)[-1].path == str(path)
    run = write_compaction(result, s, update_store=True)
    assert run.written and run.store_update is not None and run.store_update.updated
    assert orjson.loads(path.read_bytes())[KEY]["compactionCount"] == 3


def test_a_failing_store_update_never_fails_the_written_compaction(tmp_path, monkeypatch):
    from core.compaction import store_update

    transcript, path = _home(tmp_path)
    raw = path.read_bytes()

    def boom(*a, **k):  # type: ignore[no-untyped-def]
        raise RuntimeError("something unexpected")

    monkeypatch.setattr(store_update, "update_sessions_store", boom)
    s = load_transcript(transcript)
    run = write_compaction(compact(s, keep_recent_tokens=3000), s, update_store=True)
    assert run.written and run.store_update is not None and not run.store_update.updated
    assert run.store_update.note == "sessions.json not updated: something unexpected"
    assert path.read_bytes() == raw


def test_a_running_agent_refuses_the_write_before_anything_is_written(tmp_path):
    from core.compaction.checks import check_before_write
    from core.compaction.refusals import AgentRunning

    entry = dict(ENTRY, status="running", activeWriterRunId="run-77", lifecycleRevision=4)
    transcript, path = _home(tmp_path, entry=entry)
    before, raw = transcript.read_bytes(), path.read_bytes()
    s = load_transcript(transcript)
    run = compact(s, keep_recent_tokens=3000)
    with pytest.raises(AgentRunning, match="run-77") as err:
        check_before_write(run, s)
    assert "try again when the agent is idle" in str(err.value)
    with pytest.raises(CompactionRefused, match="the agent is running"):
        write_compaction(run, s, update_store=True)
    assert transcript.read_bytes() == before and path.read_bytes() == raw
    assert not list(transcript.parent.glob("*.memlens-backup-*"))
    # a finished run leaves its writer id behind: that is no refusal
    data = orjson.loads(raw)
    data[KEY]["status"] = "done"
    path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
    done = write_compaction(run, s, update_store=True)
    assert done.written and done.store_update is not None and done.store_update.updated


def test_a_stale_running_status_is_overridden_by_force(tmp_path):
    transcript, _path = _home(tmp_path, entry=dict(ENTRY, status="running"))
    s = load_transcript(transcript)
    run = write_compaction(compact(s, keep_recent_tokens=3000), s, force=True, update_store=True)
    assert run.written


@pytest.mark.parametrize(
    ("field", "value"), [("lifecycleRevision", 5), ("activeWriterRunId", "run-new")]
)
def test_the_store_update_is_fenced_like_the_gateways(tmp_path, monkeypatch, field, value):
    """A run that claims the session after the append owns the entry: no patch."""
    from core.compaction import write as write_module

    entry = dict(ENTRY, status="done", activeWriterRunId="run-1", lifecycleRevision=4)
    transcript, path = _home(tmp_path, entry=entry)
    real = write_module.append_lines

    def append_then_agent(p, payload):  # type: ignore[no-untyped-def]
        done = real(p, payload)
        data = orjson.loads(path.read_bytes())
        data[KEY][field] = value
        path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
        return done

    monkeypatch.setattr(write_module, "append_lines", append_then_agent)
    s = load_transcript(transcript)
    run = write_compaction(compact(s, keep_recent_tokens=3000), s, update_store=True)
    assert run.written and run.store_update is not None and not run.store_update.updated
    assert (
        "the session changed meanwhile" in run.store_update.note and field in run.store_update.note
    )
    assert orjson.loads(path.read_bytes())[KEY]["compactionCount"] == 2
