"""A compaction job: its lane across the app and the CLI, and its two activity events."""

from __future__ import annotations

import json
import os
import time

import orjson
import pytest

from core.cli.main import run_cli
from core.compaction.refusals import CompactionRefused, LaneBusy
from core.compaction.run import compact
from core.compaction.write import compaction_job, write_compaction
from core.io.jobs import Cancelled
from core.safety.activity import ActivityEvent, ActivityLog, event_from_json, load_activity
from core.safety.session_lock import acquire, lock_path_for
from core.transcript import load_transcript

from .build import chain, lines, write_file


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMLENS_DATA_DIR", str(tmp_path / "data"))
    sessions = tmp_path / "oc" / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    transcript = sessions / "sess-1.jsonl"
    write_file(transcript, lines(chain(40)))
    old = time.time() - 60
    os.utime(transcript, (old, old))
    store = {"agent:main:main": {"sessionId": "sess-1", "updatedAt": 1, "compactionCount": 4}}
    (sessions / "sessions.json").write_text(json.dumps(store, indent=2) + "\n")
    return transcript


def _log(tmp_path):
    return ActivityLog(tmp_path / "activity.jsonl", clock=lambda: 1_800_000_000.0)


def test_a_written_job_records_started_then_finished(home, tmp_path):
    log = _log(tmp_path)
    seen: list[ActivityEvent] = []
    log.subscribe_events(seen.append)
    writes: list[object] = []
    log.subscribe(writes.append)
    s = load_transcript(home)
    run = compact(s, keep_recent_tokens=3000)
    with compaction_job(
        s, tool="memlens app", activity=log, tokens_before=run.plan.tokens_before
    ) as job:
        assert lock_path_for(home).exists()
        job.run = write_compaction(run, s, update_store=True, lane=job.lane)
    assert not lock_path_for(home).exists() and job.outcome == "finished"
    assert [e.phase for e in seen] == ["started", "finished"] and writes == []
    start, end = seen
    assert start.session == end.session == "sess-1" and start.path == str(home)
    assert start.tokens_before == end.tokens_before == run.plan.tokens_before
    assert start.tokens_after is None and end.tokens_after == run.entry["tokensAfter"]
    assert end.source == "memlens app" and run.entry["id"] in end.summary
    assert "sessions.json updated" in end.summary and "compactionCount 5" in end.summary
    read = load_activity(tmp_path / "activity.jsonl")
    assert read.events == seen and read.records == [] and read.items == seen
    assert read.problems == []


def test_failed_and_cancelled_jobs_free_the_lane(home, tmp_path):
    log = _log(tmp_path)
    s = load_transcript(home)
    run = compact(s, keep_recent_tokens=3000)
    os.utime(home, None)  # the agent just wrote: refused
    with pytest.raises(CompactionRefused, match="mid-turn"):
        with compaction_job(s, tool="memlens compact", activity=log, tokens_before=9) as job:
            job.run = run
            write_compaction(run, s, lane=job.lane)
    assert job.outcome == "failed" and not lock_path_for(home).exists()
    with pytest.raises(Cancelled):
        with compaction_job(s, tool="memlens compact", activity=log) as job:
            raise Cancelled("stop")
    assert job.outcome == "cancelled" and not lock_path_for(home).exists()
    with compaction_job(s, tool="memlens compact", activity=log) as job:
        pass  # ended without a written run
    assert job.outcome == "failed"
    events = load_activity(log.path).events
    assert [(e.phase, e.source) for e in events] == [
        ("started", "memlens compact"),
        ("failed", "memlens compact"),
        ("started", "memlens compact"),
        ("cancelled", "memlens compact"),
        ("started", "memlens compact"),
        ("failed", "memlens compact"),
    ]
    assert "mid-turn" in events[1].summary and "was not written" in events[3].summary
    assert events[1].tokens_before == 9 and events[1].tokens_after is None


def test_a_busy_lane_refuses_before_any_event(home, tmp_path):
    log = _log(tmp_path)
    s = load_transcript(home)
    with acquire(home, tool="memlens app"):
        with pytest.raises(LaneBusy, match=f"memlens app \\(pid {os.getpid()}"):
            with compaction_job(s, tool="memlens compact", activity=log):
                pass  # pragma: no cover
    assert load_activity(log.path).items == []


def test_a_lane_held_by_someone_else_is_not_accepted(home):
    s = load_transcript(home)
    run = compact(s, keep_recent_tokens=3000)
    lane = acquire(home)
    lane.release()
    with pytest.raises(CompactionRefused, match="does not hold the session's lane"):
        write_compaction(run, s, lane=lane)


def test_event_lines_round_trip_and_bad_ones_are_problems(tmp_path):
    ev = ActivityEvent(1.5, "/x/s.jsonl", "finished", "s", 100, 40, "done", "memlens app")
    line = orjson.dumps(
        {
            "time": 1.5,
            "file": "/x/s.jsonl",
            "action": "compaction",
            "phase": "finished",
            "session": "s",
            "tokensBefore": 100,
            "tokensAfter": 40,
            "source": "memlens app",
            "summary": "done",
        }
    )
    assert event_from_json(orjson.loads(line)) == ev
    path = tmp_path / "a.jsonl"
    path.write_bytes(
        line
        + b'\n{"time":2,"file":"f","action":"compaction","phase":"exploded"}\n'
        + b'{"time":3,"file":"f","action":"append","offset":0,"length":1,"line":1,"lines":1}\n'
    )
    read = load_activity(path)
    assert read.events == [ev] and len(read.records) == 1 and len(read.items) == 2
    assert [p.line for p in read.problems] == [2] and "phase" in read.problems[0].message


def test_cli_write_updates_the_store_and_logs_the_job(home, tmp_path, capsys):
    assert run_cli(["compact", str(home), "--write", "--json"]) == 0
    out = orjson.loads(capsys.readouterr().out)
    assert out["written"] and out["sessions_store"]["updated"]
    assert out["sessions_store"]["keys"] == ["agent:main:main"]
    assert "inputTokens" in out["sessions_store"]["removed"]["agent:main:main"]
    store = orjson.loads((home.parent / "sessions.json").read_bytes())
    assert store["agent:main:main"]["compactionCount"] == 5
    assert store["agent:main:main"]["totalTokens"] == out["entry"]["tokensAfter"]
    read = load_activity(tmp_path / "data" / "activity.jsonl")
    assert [e.phase for e in read.events] == ["started", "finished"]
    assert read.events[1].tokens_after == out["entry"]["tokensAfter"]
    # the CLI's own writes are in the log between the two events
    kinds = [getattr(i, "phase", None) or i.action for i in read.items]
    assert kinds[0] == "started" and kinds[-1] == "finished"
    assert {"backup", "append", "rewrite"} <= set(kinds[1:-1])
    assert not lock_path_for(home).exists()


def test_cli_refuses_a_second_compaction_naming_the_holder(home, tmp_path, capsys):
    before = home.read_bytes()
    with acquire(home, tool="memlens app"):
        assert run_cli(["compact", str(home), "--write"]) == 1
    err = capsys.readouterr().err
    assert "another compaction of" in err and f"memlens app (pid {os.getpid()}" in err
    assert home.read_bytes() == before
    assert load_activity(tmp_path / "data" / "activity.jsonl").items == []
    # the dry run needs no lane
    with acquire(home, tool="memlens app"):
        assert run_cli(["compact", str(home), "--json"]) == 0
    capsys.readouterr()


def test_an_unwritable_lock_folder_refuses_the_write(home, tmp_path, monkeypatch):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    monkeypatch.setenv("MEMLENS_DATA_DIR", str(blocked))  # <data>/locks cannot be made
    s = load_transcript(home)
    before = home.read_bytes()
    run = compact(s, keep_recent_tokens=3000)
    with pytest.raises(CompactionRefused, match=r"cannot lock .* nothing was written"):
        write_compaction(run, s, update_store=True)
    assert home.read_bytes() == before and not run.written


def test_a_nul_in_sessions_json_never_fails_a_written_cli_compaction(home, tmp_path, capsys):
    store_path = home.parent / "sessions.json"
    store = orjson.loads(store_path.read_bytes())
    store["agent:main:other"] = {"sessionId": "x", "sessionFile": "bad\x00.jsonl"}
    store_path.write_bytes(orjson.dumps(store, option=orjson.OPT_INDENT_2) + b"\n")
    assert run_cli(["compact", str(home), "--write", "--json"]) == 0
    out = orjson.loads(capsys.readouterr().out)
    assert out["written"] and out["sessions_store"]["updated"]
    read = load_activity(tmp_path / "data" / "activity.jsonl")
    assert [e.phase for e in read.events] == ["started", "finished"]


def test_the_app_and_the_cli_rotate_the_shared_log_once(tmp_path, monkeypatch):
    """Both see the log full: the second must not move the fresh log over the first's ``.1``."""
    path = tmp_path / "activity.jsonl"
    event = ActivityEvent(time=1.0, path="/a/s.jsonl", phase="started", session="s", summary="x")
    ActivityLog(path).event(event)
    size = path.stat().st_size  # one line
    limit = 2 * size + size // 2  # two lines fit, a third does not
    app, cli = ActivityLog(path, max_bytes=limit), ActivityLog(path, max_bytes=limit)
    app.event(event)
    full = path.read_bytes()
    real_stat = os.stat
    raced = []

    def stat(p, *a, **k):  # type: ignore[no-untyped-def]
        st = real_stat(p, *a, **k)
        if not raced and os.fspath(p) == str(path):
            raced.append(True)  # the CLI saw it full; the app rotates it right then
            app.event(event)
        return st

    monkeypatch.setattr(os, "stat", stat)
    cli.event(event)
    monkeypatch.undo()
    assert raced
    assert (tmp_path / "activity.jsonl.1").read_bytes() == full  # the old log is kept
    assert len(load_activity(path).events) == 2  # the app's line and the CLI's


def test_a_failed_summary_writes_nothing_unless_the_fallback_is_asked_for(home, tmp_path, capsys):
    """The lane, the store update and the events never turn a failure into a write."""
    from tests.core.summary_fault_server import Fault, running

    folder = home.parent
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    with running() as server:
        server.set(Fault(status=500, body={"error": {"message": "boom"}}))
        url = f"openai:{server.url}/v1:m"
        argv = ["compact", str(home), "--write", "--llm", url, "--timeout", "20"]
        assert run_cli(argv) == 1
        assert "nothing was written" in capsys.readouterr().err
        # transcript and sessions.json byte for byte, no backup, no new file
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
        assert not lock_path_for(home).exists()
        read = load_activity(tmp_path / "data" / "activity.jsonl")
        assert [e.phase for e in read.events] == ["started", "failed"] and read.records == []
        # only when the user asks for the fallback
        assert run_cli([*argv, "--allow-fallback", "--json"]) == 0
    out = orjson.loads(capsys.readouterr().out)
    assert out["written"] and out["summary"].startswith("[memlens fallback summary:")
    store = orjson.loads((folder / "sessions.json").read_bytes())
    assert store["agent:main:main"]["compactionCount"] == 5
