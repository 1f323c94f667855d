"""Live mode on OpenClaw agent databases (core.live.follow.LiveFollower._poll_database).

A writer connection (OpenClaw's stand-in) appends rows; each poll extends the loaded
session, announces compactions, adds new sessions and reloads rewritten ones, as for
JSONL files, without ever writing or crashing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING

import orjson
import pytest

from core.dataset.load import load_dataset
from core.live.follow import LiveFollower
from core.openclaw import sqlite_ro
from core.transcript import context_at, parse_transcript
from tests.conftest import ROOT
from tests.openclaw_db import (
    _template,
    add_session,
    connect,
    conversation,
    create_agent_db,
    message,
)

if TYPE_CHECKING:
    import sqlite3
    from pathlib import Path

STAMP = "2026-11-25T16:00:02.000Z"


def new_db(path: Path, *, wal: bool = True) -> sqlite3.Connection:
    """An empty v23 database (tests.openclaw_db keeps a template: the DDL is slow)."""
    return create_agent_db(path, wal=wal)


def writer(path: Path) -> sqlite3.Connection:
    """OpenClaw's stand-in: a WAL writer that never checkpoints while the test runs."""
    db = connect(path)
    db.execute("PRAGMA wal_autocheckpoint = 0")
    return db


def jsonl(events: list[dict]) -> bytes:
    return b"".join(orjson.dumps(e) + b"\n" for e in events)


def shape(session) -> list:
    return [(e.id, e.type, e.parent_id, e.index, e.raw) for e in session.entries]


@pytest.fixture
def home(tmp_path):
    """A home whose agent database holds s1 (2 turns, seq 0..4) and s2 (1 turn)."""
    h = tmp_path / "home"
    path = h / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    db = new_db(path)
    add_session(db, "s1", conversation("s1", 2))
    add_session(db, "s2", conversation("s2", 1))
    db.close()
    return h


def db_of(home: Path) -> Path:
    return home / "agents" / "main" / "agent" / "openclaw-agent.sqlite"


@pytest.fixture
def follow(home):
    followers = []

    def make(**kwargs):
        data = load_dataset(home, **kwargs)
        f = LiveFollower(data)
        followers.append(f)
        return data, f

    yield make
    for f in followers:
        f.close()


def turn(sid: str, n: int, parent: str, *, big: bool = False) -> list[dict]:
    text = ("a long answer " * 200) if big else f"answer {n}"
    return [
        message(f"{sid}-u{n}", parent, "user", f"question {n}"),
        message(f"{sid}-a{n}", f"{sid}-u{n}", "assistant", text, model="m",
                usage={"input": 500 + n, "output": 5, "cacheRead": 0, "cacheWrite": 0,
                       "totalTokens": 505 + n}, stopReason="stop"),
    ]  # fmt: skip


def test_appended_rows_extend_the_session(home, follow):
    data, f = follow()
    path = str(db_of(home))
    assert str(db_of(home)) in f.files() and str(db_of(home).parent) in f.directories()
    s1 = next(s for s in data.sessions if s.id == "s1")
    assert not f.poll().sessions_changed
    w = writer(db_of(home))
    w.execute("PRAGMA journal_mode = WAL")
    try:
        new = turn("s1", 2, "s1-a1", big=True)  # the assistant row is zstd
        add_session(w, "s1", new, first_seq=5)
        changes = f.poll()
        assert changes.sessions_changed == ["s1"] and changes.sessions_added == []
        assert [e.id for e in changes.entries["s1"]] == ["s1-u2", "s1-a2"]
        assert [e.line for e in changes.entries["s1"]] == [5, 6]
        assert s1.db_seq == 6 and s1.leaf.id == "s1-a2"
        assert changes.problems == []
        assert "main (sqlite)" in changes.stores_changed
        assert "s1" in changes.summaries_changed
        row = next(s for s in data.summaries if s.id == "s1")
        assert (row.messages, row.storage, row.key, row.entries) == (
            6, "sqlite", "agent:main:explicit:s1", 6,
        )  # fmt: skip
        assert row.tokens_measured == 505 + 2
        # the grown session is what a JSONL file of the same events gives
        whole = parse_transcript(jsonl([*conversation("s1", 2), *new]), "s1.jsonl")
        assert shape(s1) == shape(whole)
        assert [i.entry.id for i in context_at(s1)] == [i.entry.id for i in context_at(whole)]
        assert path + "-wal" in f.files()
        assert not f.poll()  # nothing new: nothing applied
    finally:
        w.close()


def test_store_is_refreshed_from_the_session_rows(home, follow):
    data, f = follow()
    w = writer(db_of(home))
    try:
        w.execute("UPDATE session_nodes SET entry_json = ? WHERE session_key = ?",
                  (orjson.dumps({"sessionId": "s1", "totalTokens": 4242}).decode(),
                   "agent:main:explicit:s1"))  # fmt: skip
        add_session(w, "s1", turn("s1", 2, "s1-a1"), first_seq=5)
        changes = f.poll()
        assert changes.stores_changed == ["main (sqlite)"]
        entry = data.stores["main (sqlite)"].entries["agent:main:explicit:s1"]
        assert entry.raw["totalTokens"] == 4242
    finally:
        w.close()


def test_compaction_row_is_announced(home, follow):
    data, f = follow()
    w = writer(db_of(home))
    try:
        comp = {"type": "compaction", "id": "s1-c1", "parentId": "s1-a1", "timestamp": STAMP,
                "summary": "what came before " * 100, "firstKeptEntryId": "s1-u1",
                "tokensBefore": 9000}  # fmt: skip
        add_session(w, "s1", [comp], first_seq=5)
        changes = f.poll()
        (a,) = changes.announcements
        assert (a.kind, a.session_id, a.entry_id) == ("compaction", "s1", "s1-c1")
        assert a.path == f"{db_of(home)}#s1" and a.line == 5
        row = next(s for s in data.summaries if s.id == "s1")
        assert row.compactions == 1
        assert context_at(next(s for s in data.sessions if s.id == "s1"))[0].message.role == (
            "compactionSummary"
        )
    finally:
        w.close()


def test_new_session_joins(home, follow):
    data, f = follow()
    w = writer(db_of(home))
    try:
        add_session(w, "s3", conversation("s3", 2))
        changes = f.poll()
        assert changes.sessions_added == ["s3"]
        s3 = next(s for s in data.sessions if s.id == "s3")
        assert s3.db == str(db_of(home)) and len(s3.entries) == 4
        row = next(s for s in data.summaries if s.id == "s3")
        assert (row.storage, row.messages, row.loaded) == ("sqlite", 4, True)
        assert "agent:main:explicit:s3" in data.stores["main (sqlite)"].entries
        # it grows on the next poll like the others
        add_session(w, "s3", turn("s3", 2, "s3-a1"), first_seq=5)
        changes = f.poll()
        assert changes.sessions_added == [] and [e.id for e in changes.entries["s3"]] == [
            "s3-u2", "s3-a2",
        ]  # fmt: skip
        assert [s.id for s in data.sessions].count("s3") == 1
    finally:
        w.close()


def test_session_without_header_yet_joins_when_it_has_one(home, follow):
    data, f = follow()
    w = writer(db_of(home))
    try:
        events = conversation("s4", 1)
        add_session(w, "s4", events[1:2], first_seq=1)  # rows before the header (no window)
        changes = f.poll()
        assert changes.sessions_added == [] and changes.problems == []
        w.execute("INSERT INTO session_windows (session_id, session_key, created_at, updated_at)"
                  " VALUES ('s4', 'k4', 1, 1)")  # fmt: skip
        w.execute(
            "INSERT INTO transcript_events (session_id, seq, event_json, created_at, "
            "event_utf8_bytes) VALUES ('s4', 0, ?, 1, 1)",
            (orjson.dumps(events[0]).decode(),),
        )
        add_session(w, "s4", events[2:], first_seq=2)
        changes = f.poll()
        assert changes.sessions_added == ["s4"]
        assert len(next(s for s in data.sessions if s.id == "s4").entries) == 2
    finally:
        w.close()


def _rewrite(
    w: sqlite3.Connection, sid: str, events: list[dict], *, watermark: bool = True
) -> None:
    """OpenClaw rewinds or repairs: every row after the header replaced by *events*.

    OpenClaw bumps the session's ``transcript_rewrite_watermarks`` generation when it
    rewrites; *watermark* False leaves it (a rewrite memlens can only see from counts).
    """
    w.execute("DELETE FROM transcript_event_identities WHERE session_id = ?", (sid,))
    w.execute("DELETE FROM transcript_events WHERE session_id = ? AND seq > 0", (sid,))
    add_session(w, sid, events, first_seq=1)
    if watermark:
        w.execute(
            "INSERT INTO transcript_rewrite_watermarks (session_id, generation, updated_at) "
            "VALUES (?, lower(hex(randomblob(8))), 1) ON CONFLICT(session_id) DO UPDATE "
            "SET generation = excluded.generation",
            (sid,),
        )


def test_rewritten_shorter_session_is_reloaded(home, follow):
    data, f = follow()
    s1 = next(s for s in data.sessions if s.id == "s1")
    w = writer(db_of(home))
    try:
        fresh = [message("s1-x1", None, "user", "start over")]
        _rewrite(w, "s1", fresh)
        changes = f.poll()
        assert changes.resets == [f"{db_of(home)}#s1"]
        assert "s1" in changes.sessions_changed
        assert next(s for s in data.sessions if s.id == "s1") is s1  # the same object
        assert [e.id for e in s1.entries] == ["s1-x1"] and s1.db_seq == 1
        row = next(s for s in data.summaries if s.id == "s1")
        assert row.messages == 1
        # and it grows from there
        add_session(w, "s1", [message("s1-x2", "s1-x1", "assistant", "ok")], first_seq=2)
        changes = f.poll()
        assert [e.id for e in changes.entries["s1"]] == ["s1-x2"]
        assert [e.id for e in s1.entries] == ["s1-x1", "s1-x2"]
    finally:
        w.close()


def test_rewritten_longer_session_is_reloaded(home, follow):
    data, f = follow()
    s1 = next(s for s in data.sessions if s.id == "s1")
    w = writer(db_of(home))
    try:
        fresh = [message(f"s1-y{i}", f"s1-y{i - 1}" if i else None, "user", f"new {i}")
                 for i in range(6)]  # fmt: skip
        _rewrite(w, "s1", fresh)
        f.poll()
        assert [e.id for e in s1.entries] == [e["id"] for e in fresh]
    finally:
        w.close()


def test_rewritten_same_length_session_is_reloaded(home, follow):
    data, f = follow()
    s1 = next(s for s in data.sessions if s.id == "s1")
    w = writer(db_of(home))
    try:
        fresh = [message(f"s1-z{i}", f"s1-z{i - 1}" if i else None, "user", f"z {i}")
                 for i in range(4)]  # fmt: skip
        _rewrite(w, "s1", fresh)
        f.poll()
        assert [e.id for e in s1.entries] == [e["id"] for e in fresh]
    finally:
        w.close()


@pytest.fixture
def short_retry(monkeypatch):
    """Busy moments retried for 0.2 s (read when a database is opened)."""
    monkeypatch.setattr(sqlite_ro, "RETRY_SECONDS", 0.2)


def test_busy_poll_reports_once_and_recovers(tmp_path, short_retry):
    home = tmp_path / "home"
    path = db_of(home)
    db = new_db(path, wal=False)  # rollback journal: an exclusive lock blocks readers
    add_session(db, "s1", conversation("s1", 1))
    db.close()
    data = load_dataset(home)
    f = LiveFollower(data)
    lock = connect(path)
    try:
        lock.execute("BEGIN EXCLUSIVE")
        first = f.poll()
        (p,) = first.problems
        assert p.file == str(path) and "busy" in p.message and p.severity == "warning"
        assert p in data.problems
        assert f.poll().problems == []  # said once
        assert f.poll().problems == []
        lock.execute("ROLLBACK")
        add_session(lock, "s1", turn("s1", 1, "s1-a0"), first_seq=3)
        changes = f.poll()
        assert changes.problems == [] and [e.id for e in changes.entries["s1"]] == [
            "s1-u1", "s1-a1",
        ]  # fmt: skip
        lock.execute("BEGIN EXCLUSIVE")
        assert len(f.poll().problems) == 1  # a new failure is said again
        lock.execute("ROLLBACK")
        assert not f.poll().problems
    finally:
        lock.close()
        f.close()


def test_damaged_file_poll_reports_once_and_does_not_crash(home, follow):
    data, f = follow()
    path = db_of(home)
    good = path.read_bytes()
    path.write_bytes(b"not a database any more\n" * 100)
    problems = [f.poll().problems for _ in range(3)]
    assert len(problems[0]) == 1 and problems[0][0].file == str(path)
    assert problems[1] == problems[2] == []
    path.write_bytes(good)
    f.poll()  # never raises
    assert {s.id for s in data.sessions} == {"s1", "s2"}
    w = writer(path)
    try:
        add_session(w, "s1", turn("s1", 2, "s1-a1"), first_seq=5)
        changes = f.poll()
        assert changes.problems == []
        assert [e.id for e in changes.entries["s1"]] == ["s1-u2", "s1-a2"]
    finally:
        w.close()


def test_poll_recovers_after_a_failed_reopen(tmp_path):
    home = tmp_path / "home"
    path = db_of(home)
    db = new_db(path, wal=False)  # mode ro
    add_session(db, "s1", conversation("s1", 1))
    db.close()
    good = path.read_bytes()
    data = load_dataset(home)
    f = LiveFollower(data)
    try:
        # a WAL database's header over damage: refresh closes, reopening fails
        path.write_bytes(_template(True)[:100] + b"\xff" * 8092)
        assert f.poll().problems
        path.write_bytes(good)  # restored
        restored = f.poll()
        w = connect(path)
        add_session(w, "s1", turn("s1", 1, "s1-a0"), first_seq=3)
        w.close()
        changes = f.poll()
        # actual: restored.problems says 'the database is closed', then silence forever
        assert not any("closed" in p.message for p in restored.problems), restored.problems
        assert changes.problems == []
        assert [e.id for e in changes.entries.get("s1", [])] == ["s1-u1", "s1-a1"]
    finally:
        f.close()


def test_pending_sessions_are_not_added_twice(home, follow):
    data, f = follow(defer_db=True)
    assert data.sessions == [] and len(data.pending) == 2
    assert not f.poll().sessions_added
    w = writer(db_of(home))
    try:
        loaded = data.load_pending()  # a worker read them...
        add_session(w, "s1", turn("s1", 2, "s1-a1"), first_seq=5)
        changes = f.poll()  # ...while they were still pending: skipped
        assert changes.sessions_added == [] and data.sessions == []
        data.adopt(loaded)
        assert sorted(s.id for s in data.sessions) == ["s1", "s2"]
        changes = f.poll()  # what was written meanwhile extends the adopted session
        assert changes.sessions_added == []
        assert [e.id for e in changes.entries["s1"]] == ["s1-u2", "s1-a2"]
        add_session(w, "s2", turn("s2", 1, "s2-a0"), first_seq=3)
        changes = f.poll()
        assert changes.sessions_added == [] and list(changes.entries) == ["s2"]
        assert sorted(s.id for s in data.sessions) == ["s1", "s2"]
        assert len(data.summaries) == 2
    finally:
        w.close()


def test_pending_session_opened_then_followed(home, follow):
    data, f = follow(defer_db=True)
    w = writer(db_of(home))
    try:
        s1 = data.session("s1")
        add_session(w, "s1", turn("s1", 2, "s1-a1"), first_seq=5)
        changes = f.poll()
        assert changes.sessions_added == [] and [e.id for e in changes.entries["s1"]] == [
            "s1-u2", "s1-a2",
        ]  # fmt: skip
        assert [s.id for s in data.sessions] == ["s1"] and "s1" not in {
            s.id for s in data.pending.values()
        }
        assert len(s1.entries) == 6
    finally:
        w.close()


def test_close_lets_go_of_the_database(home, follow):
    _data, f = follow()
    path = db_of(home)
    w = writer(path)
    w.execute("PRAGMA journal_mode = WAL")
    add_session(w, "s1", turn("s1", 2, "s1-a1"), first_seq=5)
    assert f.poll().sessions_changed == ["s1"]  # now open with mode ro beside the writer
    f.close()
    assert str(path) not in f.files()
    add_session(w, "s1", turn("s1", 3, "s1-a2"), first_seq=7)
    assert not f.poll().sessions_changed  # no longer followed, never raises
    w.close()  # the last connection: -wal and -shm go, so memlens held nothing open
    assert sorted(os.listdir(path.parent)) == ["openclaw-agent.sqlite"]


WRITER = textwrap.dedent(
    """
    import sqlite3, sys, time
    sys.path.insert(0, sys.argv[2])
    from tests.openclaw_db import add_session, message

    def octet_length(v):
        return None if v is None else len(v.encode() if isinstance(v, str) else v)

    db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=5)
    db.create_function("octet_length", 1, octet_length, deterministic=True)
    db.execute("PRAGMA busy_timeout = 5000")
    parent, seq = "s1-a1", 5
    for i in range(int(sys.argv[3])):
        text = ("long words " * 150 + str(i)) if i % 3 == 0 else f"row {i}"
        role = "user" if i % 2 == 0 else "assistant"
        add_session(db, "s1", [message(f"w{i}", parent, role, text)], first_seq=seq)
        parent, seq = f"w{i}", seq + 1
        time.sleep(0.05)
    db.close()
    """
)


def test_writer_process_and_polling_reader(home, follow):
    data, f = follow()
    s1 = next(s for s in data.sessions if s.id == "s1")
    rows = 30
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db_of(home)), str(ROOT), str(rows)],
        stderr=subprocess.PIPE,
    )
    seen: list = []
    problems: list = []
    polls = 0
    try:
        while proc.poll() is None:
            changes = f.poll()
            polls += 1
            seen.extend(e.id for e in changes.entries.get("s1", []))
            problems.extend(changes.problems)
            assert changes.sessions_added == []
            assert changes.resets == []  # every row an append, none a reload
    finally:
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err.decode()
    changes = f.poll()
    seen.extend(e.id for e in changes.entries.get("s1", []))
    problems.extend(changes.problems)
    assert problems == []
    assert polls > 3
    written = [f"w{i}" for i in range(rows)]
    assert len(seen) == len(set(seen)) and seen == [w for w in written if w in seen]
    assert [e.id for e in s1.entries][-rows:] == written and s1.db_seq == 4 + rows
    assert s1.problems == [] and len(s1.entries) == 4 + rows
    reread = load_dataset(home)
    fresh = next(s for s in reread.sessions if s.id == "s1")
    assert shape(s1) == shape(fresh)
    row = next(s for s in data.summaries if s.id == "s1")
    assert row.messages == 4 + rows


def test_extended_indexes_match_a_reload_after_skipped_rows(tmp_path):
    home = tmp_path / "home"
    path = db_of(home)
    db = new_db(path)
    add_session(db, "s1", conversation("s1", 1))
    db.executemany(
        "INSERT INTO transcript_events (session_id, seq, event_json, created_at, "
        "event_utf8_bytes) VALUES ('s1', ?, ?, 1, 10)",
        [(3, '{"foo": 1}'), (4, "[1, 2]")],
    )
    db.close()
    data = load_dataset(home)
    f = LiveFollower(data)
    w = writer(path)
    try:
        (s1,) = data.sessions
        assert {p.line for p in s1.problems} == {3, 4}
        add_session(w, "s1", turn("s1", 1, "s1-a0"), first_seq=5)
        changes = f.poll()
        assert changes.problems == [] and len(changes.entries["s1"]) == 2
        (fresh,) = load_dataset(home).sessions
        assert [e.index for e in s1.entries] == [e.index for e in fresh.entries]
    finally:
        w.close()
        f.close()


def test_damaged_appended_row_is_a_problem_and_the_rest_extends(home, follow):
    data, f = follow()
    s1 = next(s for s in data.sessions if s.id == "s1")
    w = writer(db_of(home))
    try:
        new = turn("s1", 2, "s1-a1", big=True)
        add_session(w, "s1", new, first_seq=5)
        w.execute("PRAGMA ignore_check_constraints = ON")
        w.execute(
            "UPDATE transcript_events SET event_zstd = ? WHERE session_id = 's1' AND seq = 6",
            (b"\x28\xb5\x2f\xfd" + b"\x00" * 40,),
        )
        add_session(w, "s1", [message("s1-u3", "s1-a2", "user", "next")], first_seq=7)
        changes = f.poll()
        name = f"{db_of(home)}#s1"
        assert [e.id for e in changes.entries["s1"]] == ["s1-u2", "s1-a2", "s1-u3"]
        assert {(p.file, p.line) for p in changes.problems} == {(name, 6)}
        assert any("zstd" in p.message for p in changes.problems)
        assert s1.by_id["s1-a2"].type == "message"  # from its navigation data
        assert not f.poll().problems  # said once
    finally:
        w.close()


def test_writer_that_comes_and_goes_between_polls_is_seen(home, follow):
    data, f = follow()
    path = db_of(home)
    s1 = next(s for s in data.sessions if s.id == "s1")
    seen = []
    for n in range(2, 5):
        w = writer(path)
        add_session(w, "s1", turn("s1", n, f"s1-a{n - 1}", big=True), first_seq=1 + 2 * n)
        w.close()  # an `openclaw agent --local` run: checkpointed, -wal and -shm gone
        assert sorted(os.listdir(path.parent)) == ["openclaw-agent.sqlite"]
        seen += [e.id for e in f.poll().entries.get("s1", [])]
    assert seen == ["s1-u2", "s1-a2", "s1-u3", "s1-a3", "s1-u4", "s1-a4"]
    assert s1.db_seq == 10


def test_database_of_a_new_agent_joins(home, follow):
    data, f = follow()
    other = home / "agents" / "other" / "agent" / "openclaw-agent.sqlite"
    db = new_db(other)
    add_session(db, "o1", conversation("o1", 1))
    db.close()
    f.mark_dirty(str(home / "agents"))
    changes = f.poll(everything=True)
    assert changes.sessions_added == ["o1"]
    assert any(s.id == "o1" for s in data.sessions)


def test_database_unreadable_at_start_is_followed_once_readable(tmp_path):
    home = tmp_path / "home"
    path = db_of(home)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"SQLite format 3\x00" + b"\x00" * 50)  # being created
    data = load_dataset(home)
    f = LiveFollower(data)
    try:
        assert any("live mode cannot follow it" in p.message for p in data.problems)
        path.unlink()
        db = new_db(path)
        add_session(db, "s1", conversation("s1", 1))
        db.close()
        changes = f.poll(everything=True)
        assert changes.sessions_added == ["s1"]
    finally:
        f.close()


def test_append_that_first_sets_a_rewrite_generation_is_an_append(home, follow):
    """OpenClaw's append ensures a generation row (INSERT ... DO NOTHING), rotating it only
    when it rewrites: a session imported without one gets it at its next append."""
    data, f = follow()
    s1 = next(s for s in data.sessions if s.id == "s1")
    w = writer(db_of(home))
    try:
        comp = {"type": "compaction", "id": "s1-c1", "parentId": "s1-a1", "timestamp": STAMP,
                "summary": "what came before", "firstKeptEntryId": "s1-u1",
                "tokensBefore": 9000}  # fmt: skip
        add_session(w, "s1", [comp], first_seq=5)
        w.execute(
            "INSERT INTO transcript_rewrite_watermarks (session_id, generation, updated_at) "
            "VALUES ('s1', 'g1', 1) ON CONFLICT(session_id) DO NOTHING"
        )
        changes = f.poll()
        assert changes.resets == []
        assert [e.id for e in changes.entries["s1"]] == ["s1-c1"]
        assert [a.kind for a in changes.announcements] == ["compaction"]
        # a later rewrite rotates it: reloaded
        _rewrite(w, "s1", [message("s1-x1", None, "user", "again")])
        assert f.poll().resets == [s1.path]
    finally:
        w.close()


def test_rewrite_without_a_generation_bump_seen_from_counts(home, follow):
    data, f = follow()
    s1 = next(s for s in data.sessions if s.id == "s1")
    w = writer(db_of(home))
    try:
        # rows 1..4 replaced by 1..2 and one more appended: fewer rows than seq says
        w.execute("DELETE FROM transcript_event_identities WHERE session_id = 's1'")
        w.execute("DELETE FROM transcript_events WHERE session_id = 's1' AND seq > 0")
        add_session(w, "s1", [message("s1-q1", None, "user", "q")], first_seq=1)
        add_session(w, "s1", [message("s1-q2", "s1-q1", "user", "q2")], first_seq=6)
        changes = f.poll()
        assert changes.resets == [s1.path]
        assert [e.id for e in s1.entries] == ["s1-q1", "s1-q2"]
    finally:
        w.close()


def test_row_appended_between_count_and_read_is_an_append(home, follow):
    data, f = follow()
    s1 = next(s for s in data.sessions if s.id == "s1")
    (state,) = f._databases.values()
    w = writer(db_of(home))
    real = state.db.read_events
    late = turn("s1", 3, "s1-a2")

    def read_events(session_id, after_seq=-1):
        if late:  # OpenClaw appends right after memlens counted the rows
            add_session(w, "s1", late, first_seq=7)
            late.clear()
        return real(session_id, after_seq)

    state.db.read_events = read_events
    try:
        add_session(w, "s1", turn("s1", 2, "s1-a1"), first_seq=5)
        changes = f.poll()
        assert changes.resets == []
        assert [e.id for e in changes.entries["s1"]][:2] == ["s1-u2", "s1-a2"]
        f.poll()
        assert [e.id for e in s1.entries][-4:] == ["s1-u2", "s1-a2", "s1-u3", "s1-a3"]
    finally:
        w.close()
