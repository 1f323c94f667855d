"""OpenClaw 2026.9.6's per-agent SQLite database, read-only (core.openclaw.agentdb/sqlite_ro).

Every view must work on a database session exactly as on the same JSONL transcript;
damage becomes problems naming ``<db>#<session id>`` and the seq; memlens never
creates, changes or locks anything beside OpenClaw's files.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import tempfile
import threading
from pathlib import Path

import orjson
import pytest
import zstandard

from core.compaction.refusals import InDatabase
from core.compaction.run import compact
from core.compaction.write import compaction_job, write_compaction
from core.dataset.discovery import discover, is_archive_name
from core.dataset.load import load_dataset, summarize
from core.io.problems import FormatError
from core.openclaw import sqlite_ro
from core.openclaw.agentdb import (
    AgentDb,
    load_session_ref,
    session_path,
    split_session_path,
)
from core.openclaw.agentdb_archives import load_archive
from core.openclaw.sqlite_ro import ReadOnlyDb, choose_mode
from core.transcript import context_at, context_size, parse_transcript
from core.transcript.replay import compactions
from tests.openclaw_db import add_session, connect, conversation, create_agent_db, header, message

from .build import run_json

STAMP = "2026-11-25T16:00:02.000Z"
ARCHIVE_STAMP = "2026-11-25T16-08-49.997Z"


# -- building ---------------------------------------------------------------------------
def rich_events(sid: str) -> list[dict]:
    """A header, model change, 4 turns (zstd-sized), a tool turn, a compaction, a name."""
    events = conversation(sid, 4, size=1500)
    events.insert(
        1,
        {"type": "model_change", "provider": "fake", "modelId": "m", "id": f"{sid}-mc",
         "parentId": None, "timestamp": STAMP},
    )  # fmt: skip
    events[2]["parentId"] = f"{sid}-mc"
    last = events[-1]["id"]
    call = message(
        f"{sid}-t1", last, "assistant", "let me look",
        usage={"input": 300, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 320},
        stopReason="toolUse", model="m",
    )  # fmt: skip
    call["message"]["content"].append(
        {"type": "toolCall", "id": "call-1", "name": "read", "arguments": {"path": "a.txt"}}
    )
    result = {
        "type": "message", "id": f"{sid}-r1", "parentId": f"{sid}-t1", "timestamp": STAMP,
        "message": {"role": "toolResult", "toolCallId": "call-1", "toolName": "read",
                    "content": [{"type": "text", "text": "file body " * 200}], "isError": False,
                    "timestamp": 1_795_600_000_000},
    }  # fmt: skip
    comp = {
        "type": "compaction", "id": f"{sid}-c1", "parentId": f"{sid}-r1", "timestamp": STAMP,
        "summary": "Earlier: four questions about lorem ipsum were answered. " * 30,
        "firstKeptEntryId": f"{sid}-u3", "tokensBefore": 4321,
    }  # fmt: skip
    after_u = message(f"{sid}-u9", f"{sid}-c1", "user", "after the compaction, one more")
    after_a = message(
        f"{sid}-a9", f"{sid}-u9", "assistant", "done " * 300,
        usage={"input": 900, "output": 30, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 930},
        stopReason="stop", model="m2",
    )  # fmt: skip
    info = {"type": "session_info", "id": f"{sid}-n", "parentId": f"{sid}-a9",
            "timestamp": STAMP, "name": "Deploy planning"}  # fmt: skip
    return [*events, call, result, comp, after_u, after_a, info]


def jsonl(events: list[dict]) -> bytes:
    return b"".join(orjson.dumps(e) + b"\n" for e in events)


def agent_db(home: Path, agent: str = "main") -> Path:
    folder = home / "agents" / agent / "agent"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "openclaw-agent.sqlite"


def new_db(path: Path, *, wal: bool = True) -> sqlite3.Connection:
    """An empty v23 database (tests.openclaw_db keeps a template: the DDL is slow)."""
    return create_agent_db(path, wal=wal)


def make_db(path: Path, sessions: dict[str, list[dict]], **kwargs) -> Path:
    """A closed WAL database (checkpointed: no -wal/-shm left) holding *sessions*."""
    wal = kwargs.pop("wal", True)
    db = new_db(path, wal=wal)
    for sid, events in sessions.items():
        add_session(db, sid, events, **kwargs)
    db.close()
    return path


def listing(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


def fingerprint(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return hashlib.sha256(path.read_bytes()).hexdigest(), st.st_mtime_ns, st.st_size


def writer(path: Path) -> sqlite3.Connection:
    """A writer connection as OpenClaw's (WAL; no checkpoint while the test runs)."""
    db = connect(path)
    db.execute("PRAGMA wal_autocheckpoint = 0")
    return db


def read_everything(db: AgentDb) -> None:
    """Every read path of an AgentDb."""
    rows = db.sessions()
    db.stats()
    db.store(rows)
    db.max_seqs()
    for r in rows:
        db.read_events(r.session_id)
        db.load_session(r.session_id)
    db.search_transcripts("lorem")
    db.search_transcripts('say "hi"', session_id=rows[0].session_id if rows else None)
    db.refresh()


def shape(session) -> dict:
    """What every view shows of a session, without the file-specific path/lines."""
    items = context_at(session)
    size = context_size(items)
    comps = compactions(session)
    return {
        "entries": [(e.id, e.type, e.parent_id, e.index) for e in session.entries],
        "raw": [e.raw for e in session.entries],
        "header": session.header,
        "version": session.version,
        "context": [(i.entry.id, i.message.role, i.tokens) for i in items],
        "size": (size.estimated, size.measured, size.measured_from),
        "compactions": [
            (
                c.entry.id,
                c.summary,
                c.first_kept_entry_id,
                c.tokens_before,
                c.tokens_after,
                [i.entry.id for i in c.replaced],
                [i.entry.id for i in c.kept],
            )
            for c in comps
        ],
        "leaves": [e.id for e in session.leaves()],
        "tools": sorted(session.tool_pairs()),
        "problems": [(p.line, p.message) for p in session.problems],
    }


def figures(summary) -> dict:
    out = summary.to_json()
    for k in ("path", "storage", "key", "modified", "size"):
        out.pop(k)
    return out


# -- 1. the same session, JSONL or database ------------------------------------------------
@pytest.mark.parametrize("compress", [True, False], ids=["zstd-rows", "plain-rows"])
def test_database_session_equals_jsonl(tmp_path, compress):
    events = rich_events("s1")
    path = make_db(tmp_path / "openclaw-agent.sqlite", {"s1": events}, compress=compress)
    con = sqlite3.connect(path)
    zstd_rows = con.execute("SELECT count(*) FROM transcript_events WHERE event_zstd IS NOT NULL")
    assert (zstd_rows.fetchone()[0] > 3) is compress
    con.close()
    with AgentDb(path) as db:
        from_db = db.load_session("s1")
    from_file = parse_transcript(jsonl(events), str(tmp_path / "s1.jsonl"))
    assert from_db.path == session_path(path, "s1")
    assert from_db.db == str(path) and from_db.db_seq == len(events) - 1
    assert [e.line for e in from_db.entries] == list(range(1, len(events)))  # the seq
    assert shape(from_db) == shape(from_file)
    assert from_db.problems == []
    assert len(compactions(from_db)) == 1 and from_db.role_counts()["toolResult"] == 1
    assert figures(summarize(from_db, "main", 0, storage="sqlite")) == figures(
        summarize(from_file, "main", 0)
    )
    assert summarize(from_db, "main", 0).name == "Deploy planning"


def test_zstd_and_plain_rows_decode_to_the_same_objects(tmp_path):
    events = rich_events("s1")
    a = make_db(agent_db(tmp_path / "a"), {"s1": events}, compress=True)
    b = make_db(agent_db(tmp_path / "b"), {"s1": events}, compress=False)
    with AgentDb(a) as da, AgentDb(b) as dbb:
        ra, rb = da.read_events("s1"), dbb.read_events("s1")
        assert [(o.line, o.value) for o in ra.objects] == [(o.line, o.value) for o in rb.objects]
        assert [o.value for o in ra.objects] == events
        assert ra.size == rb.size == len(jsonl(events)) - len(events)
        assert ra.problems == rb.problems == []
        # after_seq reads only what follows
        tail = da.read_events("s1", after_seq=10)
        assert [o.line for o in tail.objects] == list(range(11, len(events)))
        assert tail.max_seq == len(events) - 1
        assert da.stats() == dbb.stats()
        stats = da.stats()["s1"]
        assert stats.compactions == 1 and stats.name == "Deploy planning"


# -- 2. damaged rows ------------------------------------------------------------------
def damaged_db(tmp_path: Path, how: str) -> tuple[Path, int]:
    """A database whose session s1 has one damaged row; returns (db, seq)."""
    events = rich_events("s1")
    path = agent_db(tmp_path / "home")
    db = new_db(path)
    add_session(db, "s1", events)
    add_session(db, "s2", conversation("s2", 2))
    db.execute("PRAGMA ignore_check_constraints = ON")
    zseq = db.execute(
        "SELECT min(seq) FROM transcript_events WHERE session_id='s1' AND event_zstd IS NOT NULL"
    ).fetchone()[0]
    pseq = db.execute(
        "SELECT max(seq) FROM transcript_events WHERE session_id='s1' AND event_json IS NOT NULL"
        " AND seq > 0"
    ).fetchone()[0]
    frame = db.execute(
        "SELECT event_zstd, event_utf8_bytes FROM transcript_events WHERE session_id='s1' "
        "AND seq=?",
        (zseq,),
    ).fetchone()
    seq = zseq
    if how == "bad-frame":
        broken = frame[0][:12] + bytes(b ^ 0x5A for b in frame[0][12:])
        db.execute("UPDATE transcript_events SET event_zstd=? WHERE session_id='s1' AND seq=?",
                   (broken, zseq))  # fmt: skip
    elif how == "size-larger":
        db.execute("UPDATE transcript_events SET event_utf8_bytes=? WHERE session_id='s1' "
                   "AND seq=?", (frame[1] + 7, zseq))  # fmt: skip
    elif how == "size-smaller":
        db.execute("UPDATE transcript_events SET event_utf8_bytes=? WHERE session_id='s1' "
                   "AND seq=?", (frame[1] - 7, zseq))  # fmt: skip
    elif how == "no-content":
        db.execute("UPDATE transcript_events SET event_zstd=?, navigation_json='{nope' "
                   "WHERE session_id='s1' AND seq=?", (b"\x00junk", zseq))  # fmt: skip
    elif how == "plain-not-json":
        seq = pseq
        db.execute("UPDATE transcript_events SET event_json='{\"type\": \"message\", nope' "
                   "WHERE session_id='s1' AND seq=?", (pseq,))  # fmt: skip
    elif how == "zstd-not-json":
        text = b'{"type":"message", oops' + b"x" * 2000
        cctx = zstandard.ZstdCompressor(level=1, write_checksum=True)
        db.execute("UPDATE transcript_events SET event_zstd=?, event_utf8_bytes=? "
                   "WHERE session_id='s1' AND seq=?", (cctx.compress(text), len(text), zseq))  # fmt: skip
    db.close()
    return path, seq


def _problems_at(problems, name: str, seq: int):
    return [p for p in problems if p.file == name and p.line == seq]


@pytest.mark.parametrize(
    ("how", "words", "fallback"),
    [
        ("bad-frame", "zstd frame cannot be decoded", True),
        ("size-larger", "event_utf8_bytes says", True),
        ("size-smaller", "event_utf8_bytes says", True),
        ("no-content", "zstd frame cannot be decoded", False),
        ("plain-not-json", "not JSON", False),
    ],
)
def test_damaged_row_is_a_problem_naming_db_session_and_seq(tmp_path, how, words, fallback):
    path, seq = damaged_db(tmp_path, how)
    name = f"{path}#s1"
    with AgentDb(path) as db:
        session = db.load_session("s1")
        other = db.load_session("s2")
        stats = db.stats()
    assert other.problems == [] and len(other.entries) == 4
    assert session.path == name
    here = _problems_at(session.problems, name, seq)
    assert here, session.problems
    assert any(words in p.message for p in here), here
    ids = [e.line for e in session.entries]
    if fallback:
        # shown from navigation_json: the entry keeps its id, type and parent, not its text
        assert seq in ids
        entry = next(e for e in session.entries if e.line == seq)
        assert entry.type == "message" and entry.id == rich_events("s1")[seq]["id"]
        assert any("navigation" in p.message and p.severity == "warning" for p in here)
    else:
        assert seq not in ids
    assert len(session.entries) >= len(rich_events("s1")) - 2
    assert "s1" in stats
    # a whole load goes on and names the row
    data = load_dataset(path.parents[3])
    assert {s.id for s in data.sessions} == {"s1", "s2"}
    assert _problems_at(data.problems, name, seq)


def test_zstd_row_decoding_to_non_json_uses_navigation(tmp_path):
    path, seq = damaged_db(tmp_path, "zstd-not-json")
    with AgentDb(path) as db:
        session = db.load_session("s1")
    here = _problems_at(session.problems, f"{path}#s1", seq)
    assert any("JSON" in p.message for p in here)
    assert seq in [e.line for e in session.entries]


def test_zstd_row_decoding_to_non_json_is_a_problem(tmp_path):
    path, seq = damaged_db(tmp_path, "zstd-not-json")
    with AgentDb(path) as db:
        session = db.load_session("s1")
    here = _problems_at(session.problems, f"{path}#s1", seq)
    assert any("JSON" in p.message for p in here), here
    assert len(session.entries) >= len(rich_events("s1")) - 2


def test_session_without_events_or_header(tmp_path):
    path = agent_db(tmp_path)
    db = new_db(path)
    add_session(db, "s1", conversation("s1", 1))
    add_session(db, "headless", conversation("headless", 1)[1:])
    db.execute(
        "INSERT INTO session_windows (session_id, session_key, created_at, updated_at) "
        "VALUES ('empty', 'agent:main:explicit:empty', 1, 1)"
    )
    db.close()
    with AgentDb(path) as adb:
        with pytest.raises(FormatError) as info:
            adb.load_session("empty")
        assert info.value.file == f"{path}#empty"
        with pytest.raises(FormatError) as info:
            adb.load_session("headless")
        assert info.value.file == f"{path}#headless"
        assert {s.session_id: s.events for s in adb.sessions()} == {
            "s1": 3, "headless": 2, "empty": 0,
        }  # fmt: skip
    data = load_dataset(tmp_path)
    assert [s.id for s in data.sessions] == ["s1"]
    assert any(p.file == f"{path}#headless" for p in data.problems)


# -- 3. versions and files that are not databases ------------------------------------------
def test_newer_schema_is_a_warning_and_still_reads(tmp_path):
    path = agent_db(tmp_path)
    db = new_db(path)
    add_session(db, "s1", conversation("s1", 2))
    db.execute("PRAGMA user_version = 24")
    db.close()
    with AgentDb(path) as adb:
        assert adb.schema_version == 24
        (warn,) = adb.problems
        assert warn.severity == "warning" and "24" in warn.message and warn.file == str(path)
        assert len(adb.load_session("s1").entries) == 4
    data = load_dataset(tmp_path)
    assert any(p.file == str(path) and "newer" in p.message for p in data.problems)
    assert data.databases[0].schema == 24


def test_current_schema_has_no_warning_and_names_its_version(tmp_path):
    path = make_db(agent_db(tmp_path), {"s1": conversation("s1", 1)})
    with AgentDb(path) as db:
        assert db.problems == []
        assert (db.schema_version, db.app_version) == (23, "2026.9.6")
        assert db.agent == "main"
    info = load_dataset(tmp_path).databases[0]
    assert info.describe().startswith("main: schema 23 (OpenClaw 2026.9.6),")


def test_plain_sqlite_file_is_a_format_error_naming_it(tmp_path):
    path = agent_db(tmp_path)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE notes (x)")
    con.commit()
    con.close()
    with pytest.raises(FormatError) as info:
        AgentDb(path)
    assert info.value.file == str(path)
    assert "not an OpenClaw agent database" in info.value.detail
    data = load_dataset(tmp_path)
    assert any(p.file == str(path) for p in data.problems)


@pytest.mark.parametrize("kind", ["text", "empty", "short", "half", "first-page"])
def test_not_a_database_is_a_format_error(tmp_path, kind):
    good = make_db(tmp_path / "good.sqlite", {"s1": conversation("s1", 20, size=400)},
                   wal=False)  # fmt: skip
    data = good.read_bytes()
    path = agent_db(tmp_path / "home")
    content = {
        "text": b"this is a note, not a database\n" * 10,
        "empty": b"",
        "short": data[:50],
        "half": data[: len(data) // 2],
        "first-page": data[:4096],
    }[kind]
    path.write_bytes(content)
    before = listing(path.parent)

    def read() -> None:
        with AgentDb(path) as db:
            read_everything(db)

    with pytest.raises(FormatError) as info:
        read()
    assert info.value.file.startswith(str(path))
    assert listing(path.parent) == before
    loaded = load_dataset(tmp_path / "home")  # never raises
    assert any(p.file.startswith(str(path)) for p in loaded.problems)


def test_text_file_error_says_not_sqlite(tmp_path):
    path = agent_db(tmp_path)
    path.write_text("hello\n" * 40)
    with pytest.raises(FormatError, match="not an SQLite database") as info:
        AgentDb(path)
    assert info.value.file == str(path)


OLD_DDL = """
CREATE TABLE session_nodes (session_key TEXT PRIMARY KEY, current_session_id TEXT NOT NULL,
  entry_json TEXT NOT NULL, updated_at INTEGER NOT NULL);
CREATE TABLE session_windows (session_id TEXT PRIMARY KEY, session_key TEXT NOT NULL,
  created_at INTEGER, updated_at INTEGER);
CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL,
  event_json TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (session_id, seq));
PRAGMA user_version = 21;
"""


def test_database_from_before_schema_23_reads(tmp_path):
    path = agent_db(tmp_path)
    events = rich_events("old")
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode = WAL")
    con.executescript(OLD_DDL)
    con.execute("INSERT INTO session_nodes VALUES ('agent:main:main', 'old', ?, 5)",
                (orjson.dumps({"sessionId": "old", "model": "m"}).decode(),))  # fmt: skip
    con.execute("INSERT INTO session_windows VALUES ('old', 'agent:main:main', 1, 5)")
    con.executemany(
        "INSERT INTO transcript_events VALUES ('old', ?, ?, ?)",
        [(i, orjson.dumps(e).decode(), i) for i, e in enumerate(events)],
    )
    con.close()
    with AgentDb(path) as db:
        assert db.schema_version == 21 and db.problems == [] and db.app_version is None
        (row,) = db.sessions()
        assert (row.session_id, row.key, row.current, row.events) == (
            "old", "agent:main:main", True, len(events),
        )  # fmt: skip
        stats = db.stats()["old"]
        session = db.load_session("old")
        store = db.store()
        hits = db.search_transcripts("lorem")
    assert hits == []  # no full-text index before it
    assert store.entries["agent:main:main"].session_id == "old"
    from_file = parse_transcript(jsonl(events), "old.jsonl")
    assert shape(session) == shape(from_file)
    assert (stats.entries, stats.messages, stats.compactions, stats.name) == (
        len(from_file.entries), len(from_file.messages()), 1, "Deploy planning",
    )  # fmt: skip
    assert stats.roles == from_file.role_counts()
    data = load_dataset(tmp_path, defer_db=True)
    (quick,) = data.summaries
    assert (quick.entries, quick.messages, quick.compactions) == (
        stats.entries, stats.messages, stats.compactions,
    )  # fmt: skip


# -- 4. how the file is opened --------------------------------------------------------
def test_closed_wal_database_opens_immutable_and_creates_nothing(tmp_path):
    path = make_db(agent_db(tmp_path), {"s1": rich_events("s1"), "s2": conversation("s2", 3)})
    folder = path.parent
    before = listing(folder)
    assert before == ["openclaw-agent.sqlite"]
    assert choose_mode(path) == "immutable"
    print_before = fingerprint(path)
    with AgentDb(path) as db:
        assert db.mode == "immutable"
        assert listing(folder) == before
        db.sessions()
        assert listing(folder) == before
        db.load_session("s1")
        assert listing(folder) == before
        assert db.search_transcripts("lorem")
        assert listing(folder) == before
        db.stats()
        assert listing(folder) == before
        read_everything(db)
        assert db.mode == "immutable"
    data = load_dataset(tmp_path)
    assert data.databases[0].mode == "immutable"
    load_dataset(tmp_path, defer_db=True).load_pending()
    assert listing(folder) == before
    assert fingerprint(path) == print_before


def test_writer_present_opens_ro_and_sees_committed_rows(tmp_path):
    path = make_db(agent_db(tmp_path), {"s1": conversation("s1", 2)})
    w = writer(path)
    w.execute("PRAGMA journal_mode = WAL")
    add_session(w, "s2", conversation("s2", 1))
    try:
        assert os.path.getsize(str(path) + "-wal") > 0
        assert os.path.exists(str(path) + "-shm")
        before = listing(path.parent)
        with AgentDb(path) as db:
            assert db.mode == "ro"
            assert {s.session_id for s in db.sessions()} == {"s1", "s2"}
            add_session(w, "s1", [message("late", "s1-a1", "user", "late words")], first_seq=5)
            assert db.max_seqs() == {"s1": 5, "s2": 2}
            assert db.load_session("s1").leaf.id == "late"
            assert [h.message_id for h in db.search_transcripts("late words")] == ["late"]
            read_everything(db)
        assert listing(path.parent) == before
    finally:
        w.close()


def test_wal_without_shm_is_read_from_a_private_snapshot(tmp_path, monkeypatch):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    src = make_db(agent_db(tmp_path / "live"), {"s1": conversation("s1", 2)})
    w = writer(src)
    add_session(w, "in-wal", conversation("in-wal", 2))
    try:
        copy = agent_db(tmp_path / "copy")
        shutil.copyfile(src, copy)
        shutil.copyfile(str(src) + "-wal", str(copy) + "-wal")
    finally:
        w.close()
    before = listing(copy.parent)
    assert before == ["openclaw-agent.sqlite", "openclaw-agent.sqlite-wal"]
    prints = fingerprint(copy), fingerprint(Path(str(copy) + "-wal"))
    assert choose_mode(copy) == "snapshot"
    with AgentDb(copy) as db:
        assert db.mode == "snapshot"
        assert {s.session_id for s in db.sessions()} == {"s1", "in-wal"}
        assert len(db.load_session("in-wal").entries) == 4
        read_everything(db)
        assert not db.refresh()  # nothing changed: the copy is still good (no copy a poll)
        assert db.mode == "snapshot"
        assert len(os.listdir(scratch)) == 1
        assert listing(copy.parent) == before
    assert os.listdir(scratch) == []  # closing drops the private copy
    assert listing(copy.parent) == before
    assert (fingerprint(copy), fingerprint(Path(str(copy) + "-wal"))) == prints


def test_empty_wal_without_shm_is_immutable(tmp_path):
    path = make_db(agent_db(tmp_path), {"s1": conversation("s1", 1)})
    Path(str(path) + "-wal").write_bytes(b"")
    assert choose_mode(path) == "immutable"
    with AgentDb(path) as db:
        assert db.mode == "immutable" and db.max_seqs() == {"s1": 2}
    assert listing(path.parent) == ["openclaw-agent.sqlite", "openclaw-agent.sqlite-wal"]


def test_rollback_journal_database_opens_ro_and_creates_nothing(tmp_path):
    path = make_db(agent_db(tmp_path), {"s1": rich_events("s1")}, wal=False)
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    con.close()
    before, prints = listing(path.parent), fingerprint(path)
    assert choose_mode(path) == "ro"
    with AgentDb(path) as db:
        assert db.mode == "ro"
        read_everything(db)
        assert listing(path.parent) == before
    assert fingerprint(path) == prints


def test_refresh_follows_a_writer_coming_and_going(tmp_path):
    path = make_db(agent_db(tmp_path), {"s1": conversation("s1", 1)})
    with AgentDb(path) as db:
        assert db.mode == "immutable"
        assert not db.refresh()
        w = writer(path)
        w.execute("PRAGMA journal_mode = WAL")
        add_session(w, "s2", conversation("s2", 1))
        assert db.refresh() and db.mode == "ro"
        assert db.max_seqs() == {"s1": 2, "s2": 2}
        assert not db.refresh()
        w.close()  # memlens still reads: the WAL stays, and so does mode ro
        assert not db.refresh() and db.mode == "ro"
        assert db.max_seqs() == {"s1": 2, "s2": 2}
    # the writer gone and the WAL checkpointed away: immutable again
    last = writer(path)
    last.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    last.close()
    assert listing(path.parent) == ["openclaw-agent.sqlite"]
    with AgentDb(path) as db:
        assert db.mode == "immutable"
        assert db.max_seqs() == {"s1": 2, "s2": 2}


def test_connection_is_query_only(tmp_path):
    path = make_db(agent_db(tmp_path), {"s1": conversation("s1", 1)}, wal=False)
    prints = fingerprint(path)
    with ReadOnlyDb(path) as ro:
        with pytest.raises(FormatError) as info:
            ro.rows("DELETE FROM transcript_events")
        assert info.value.file == str(path)
        assert ro.rows("SELECT count(*) FROM transcript_events") == [(3,)]
    assert fingerprint(path) == prints


# -- 5. busy ------------------------------------------------------------------------------
@pytest.fixture
def short_retry(monkeypatch):
    """Busy moments retried for 0.3 s (the setting memlens reads when it opens a file)."""
    monkeypatch.setattr(sqlite_ro, "RETRY_SECONDS", 0.3)


def locked_db(tmp_path: Path) -> Path:
    return make_db(agent_db(tmp_path), {"s1": conversation("s1", 2)}, wal=False)


def test_busy_database_fails_with_a_format_error_naming_it(tmp_path, short_retry):
    path = locked_db(tmp_path)
    db = AgentDb(path)
    lock = sqlite3.connect(path, isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")
    try:
        for read in (db.sessions, db.max_seqs, lambda: db.load_session("s1")):
            with pytest.raises(FormatError) as info:
                read()
            assert info.value.file == str(path)
            assert "busy" in info.value.detail and "locked" in info.value.detail
        with pytest.raises(FormatError) as info:
            AgentDb(path)  # opening while locked
        assert info.value.file == str(path)
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    assert db.max_seqs() == {"s1": 4}  # usable again once released
    db.close()


def test_lock_released_within_the_window_reads(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_ro, "RETRY_SECONDS", 5.0)
    path = locked_db(tmp_path)
    db = AgentDb(path)
    lock = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    lock.execute("BEGIN EXCLUSIVE")
    lock.execute("DELETE FROM transcript_events WHERE session_id='s1' AND seq=4")
    timer = threading.Timer(0.2, lambda: lock.execute("COMMIT"))
    timer.start()
    try:
        assert db.max_seqs() == {"s1": 3}  # waited, then saw the committed change
        assert len(db.load_session("s1").entries) == 3
    finally:
        timer.join()
        lock.close()
        db.close()


def test_retry_seconds_setting_is_honoured(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_ro, "RETRY_SECONDS", 0.1)
    path = locked_db(tmp_path)
    db = AgentDb(path)
    lock = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    lock.execute("BEGIN EXCLUSIVE")
    # released after 1 s: a read that gives up after 0.1 s fails, one that waits 5 s reads
    timer = threading.Timer(1.0, lambda: lock.execute("ROLLBACK"))
    timer.start()
    try:
        with pytest.raises(FormatError) as info:
            db.max_seqs()
        assert "after 0.1 s" in info.value.detail
    finally:
        timer.join()
        lock.close()
        db.close()


# -- 6. nothing is written ------------------------------------------------------------
@pytest.mark.parametrize("wal", [True, False], ids=["wal", "rollback"])
def test_no_read_path_changes_the_file(tmp_path, wal):
    home = tmp_path / "home"
    path = make_db(agent_db(home), {"s1": rich_events("s1"), "s2": conversation("s2", 3)},
                   wal=wal)  # fmt: skip
    os.utime(path, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    before, prints = listing(path.parent), fingerprint(path)
    with AgentDb(path) as db:
        read_everything(db)
    load_session_ref(session_path(path, "s1"))
    data = load_dataset(home)
    deferred = load_dataset(home, defer_db=True)
    deferred.session("s2")
    deferred.adopt(deferred.load_pending())
    assert len(data.sessions) == len(deferred.sessions) == 2
    discover(path)
    load_dataset(path)  # the database file itself
    assert fingerprint(path) == prints
    assert listing(path.parent) == before


def test_compaction_write_on_a_database_session_is_refused(tmp_path):
    events = conversation("s1", 12, size=1500)
    path = make_db(agent_db(tmp_path), {"s1": events})
    before, prints = listing(path.parent), fingerprint(path)
    session = load_session_ref(session_path(path, "s1"))
    run = compact(session, keep_recent_tokens=500, window=4000, reserve_tokens=500)
    assert run.entry is not None  # the dry run works
    with pytest.raises(InDatabase, match="never"):
        write_compaction(run, session, force=True, allow_fallback=True)
    with pytest.raises(InDatabase):
        with compaction_job(session, tool="test"):
            pytest.fail("the job must not start")
    assert not run.written and run.backup is None
    assert fingerprint(path) == prints and listing(path.parent) == before


def test_cli_compact_write_on_a_database_session_is_refused(tmp_path, capsys):
    from core.cli.main import run_cli

    path = make_db(agent_db(tmp_path), {"s1": conversation("s1", 12, size=1500)})
    before, prints = listing(path.parent), fingerprint(path)
    ref = session_path(path, "s1")
    code = run_cli(["compact", ref, "--write", "--force", "--json"])
    out = capsys.readouterr()
    assert code != 0
    assert "database" in (out.err + out.out)
    assert fingerprint(path) == prints and listing(path.parent) == before
    dry = run_json(capsys, "compact", ref)  # the dry run still works
    assert dry


# -- 7. discovery and the command line ------------------------------------------------
@pytest.fixture
def mixed_home(tmp_path) -> dict:
    home = tmp_path / "home"
    db = make_db(
        agent_db(home),
        {"s1": rich_events("s1"), "s2": conversation("s2", 2)},
        window={"channel": "telegram", "model": "m"},
    )
    sessions = home / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    plain = sessions / f"old1.jsonl.reset.{ARCHIVE_STAMP}"
    plain.write_bytes(jsonl(conversation("old1", 2)))
    packed = sessions / f"old2.jsonl.deleted.{ARCHIVE_STAMP}.zst"
    packed.write_bytes(zstandard.ZstdCompressor().compress(jsonl(conversation("old2", 3))))
    (sessions / "notes.txt").write_text("not a transcript")
    legacy = home / "agents" / "legacy" / "sessions"
    legacy.mkdir(parents=True)
    (legacy / "leg1.jsonl").write_bytes(jsonl(conversation("leg1", 1)))
    (legacy / "sessions.json").write_bytes(
        orjson.dumps({"agent:legacy:main": {"sessionId": "leg1", "updatedAt": 1_795_600_000_000}})
    )
    return {"home": home, "db": db, "plain": plain, "packed": packed,
            "legacy": legacy / "leg1.jsonl"}  # fmt: skip


def test_discovery_finds_database_archives_and_jsonl(mixed_home):
    found = discover(mixed_home["home"])
    agents = {a.name: a for a in found.agents}
    assert agents["main"].database == mixed_home["db"]
    assert agents["main"].archives == (mixed_home["plain"], mixed_home["packed"])
    assert agents["main"].transcripts == ()
    assert agents["legacy"].transcripts == (mixed_home["legacy"],)
    assert agents["legacy"].database is None and agents["legacy"].sessions_json is not None
    assert found.databases == [mixed_home["db"]]
    assert found.memory_indexes[0] == mixed_home["db"]
    assert "1 agent database(s)" in found.describe()
    assert "2 archived transcript(s)" in found.describe()


def test_cli_sessions_lists_every_storage(mixed_home, capsys):
    out = run_json(capsys, "sessions", str(mixed_home["home"]))
    rows = {s["id"]: s for s in out["sessions"]}
    assert set(rows) == {"s1", "s2", "old1", "old2", "leg1"}
    db = str(mixed_home["db"])
    assert rows["s1"]["storage"] == "sqlite" and rows["s1"]["path"] == f"{db}#s1"
    assert rows["s1"]["key"] == "agent:main:explicit:s1"
    assert rows["s1"]["compactions"] == 1 and rows["s1"]["name"] == "Deploy planning"
    assert rows["s2"]["storage"] == "sqlite" and rows["s2"]["messages"] == 4
    assert rows["old1"]["storage"] == "archive"
    assert rows["old1"]["path"] == str(mixed_home["plain"])
    assert rows["old2"]["storage"] == "archive" and rows["old2"]["messages"] == 6
    assert rows["old2"]["path"] == str(mixed_home["packed"])
    assert rows["leg1"]["storage"] == "jsonl" and rows["leg1"]["path"] == str(mixed_home["legacy"])
    assert all(r["loaded"] for r in rows.values())


def test_cli_info_names_stores_and_memory_indexes(mixed_home, capsys):
    info = run_json(capsys, "info", str(mixed_home["home"]))
    stores = info["stores"]
    (sql,) = [s for s in stores if s["kind"] == "openclaw-agent-sqlite"]
    assert sql["path"] == str(mixed_home["db"])
    assert (sql["schema"], sql["app_version"], sql["agent"]) == (23, "2026.9.6", "main")
    assert sql["open_mode"] == "immutable" and sql["sessions"] == 2
    assert sql["events"] == len(rich_events("s1")) + 5
    assert {(s["agent"], s["kind"]) for s in stores} == {
        ("main", "openclaw-agent-sqlite"), ("main", "archive"), ("legacy", "jsonl"),
    }  # fmt: skip
    assert str(mixed_home["db"]) in [m["path"] for m in info["memory_indexes"]]
    assert [p for p in info["problems"] if p["severity"] == "error"] == []
    assert len(info["sessions"]) == 5


def test_cli_show_database_session(mixed_home, capsys):
    ref = f"{mixed_home['db']}#s1"
    shown = run_json(capsys, "show", ref)
    assert shown["session"] == "s1" and shown["path"] == ref
    expected = context_at(load_session_ref(ref))
    assert [m["entry_id"] for m in shown["messages"]] == [i.entry.id for i in expected]
    assert shown["messages"][0]["role"] == "compactionSummary"
    assert shown["at"]["line"] == len(rich_events("s1")) - 1  # the seq of the leaf
    # by id through --data, and the archives open by path
    by_id = run_json(capsys, "show", "s2", "--data", str(mixed_home["home"]))
    assert by_id["path"] == f"{mixed_home['db']}#s2"
    packed = run_json(capsys, "show", str(mixed_home["packed"]))
    assert packed["session"] == "old2" and len(packed["messages"]) == 6


def test_cli_show_missing_database_session_fails_plainly(mixed_home, capsys):
    from core.cli.main import run_cli

    code = run_cli(["show", f"{mixed_home['db']}#nope", "--json"])
    out = capsys.readouterr()
    assert code != 0 and "nope" in out.err and "Traceback" not in out.err


def test_session_paths_split_back():
    assert split_session_path("/a/b/openclaw-agent.sqlite#s1") == (
        "/a/b/openclaw-agent.sqlite", "s1",
    )  # fmt: skip
    assert split_session_path(session_path("/x/openclaw-agent.sqlite", "a#b")) is None or (
        split_session_path(session_path("/x/openclaw-agent.sqlite", "a#b"))[1] == "a#b"
    )
    assert split_session_path("/a/s1.jsonl") is None
    assert split_session_path("/a/openclaw-agent.sqlite#") is None


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        (f"s1.jsonl.reset.{ARCHIVE_STAMP}", True),
        (f"s1.jsonl.reset.{ARCHIVE_STAMP}.zst", True),
        ("s1.jsonl.deleted.2026-11-25T16-08-49Z", True),
        (f"s1.jsonl.bak.{ARCHIVE_STAMP}.{'0123456789abcdef' * 2}", True),
        (f"s1.jsonl.bak.{ARCHIVE_STAMP}.{'0123456789abcdef' * 2}.zst", True),
        (f"a.b.jsonl.reset.{ARCHIVE_STAMP}", True),
        ("s1.jsonl", False),
        ("s1.jsonl.zst", False),
        ("s1.jsonl.reset.", False),
        ("s1.jsonl.reset.2026-11-25T16:08:49.997Z", False),  # colons: not OpenClaw's stamp
        ("s1.jsonl.reset.2026-11-25T16-08-49.99Z", False),
        ("s1.jsonl.reset.2026-11-25T16-08-49.997", False),
        (f"s1.jsonl.compacted.{ARCHIVE_STAMP}", False),
        (f"s1.jsonl.reset.{ARCHIVE_STAMP}.tmp", False),
        (f"s1.jsonl.reset.{ARCHIVE_STAMP}.{'0123456789ABCDEF' * 2}", False),
        (f"s1.jsonl.reset.{ARCHIVE_STAMP}.{'0123456789abcdef'}", False),
        (f"s1.jsonl.reset.{ARCHIVE_STAMP}.zst.zst", False),
        (f"s1.jsonl.reset.{ARCHIVE_STAMP}.gz", False),
    ],
)
def test_is_archive_name_follows_openclaw(name, ok):
    assert is_archive_name(name) is ok


def test_load_archive_plain_zstd_and_damaged(tmp_path):
    events = rich_events("arc")
    plain = tmp_path / f"arc.jsonl.reset.{ARCHIVE_STAMP}"
    plain.write_bytes(jsonl(events))
    packed = tmp_path / f"arc.jsonl.reset.{ARCHIVE_STAMP}.zst"
    packed.write_bytes(zstandard.ZstdCompressor(level=3).compress(jsonl(events)))
    reference = shape(parse_transcript(jsonl(events), "x"))
    assert shape(load_archive(plain)) == reference
    assert shape(load_archive(packed)) == reference
    assert load_archive(packed).path == str(packed)
    bad = tmp_path / f"bad.jsonl.reset.{ARCHIVE_STAMP}.zst"
    bad.write_bytes(b"\x28\xb5\x2f\xfd" + b"garbage" * 20)
    with pytest.raises(FormatError) as info:
        load_archive(bad)
    assert info.value.file == str(bad)
    data = load_dataset(_home_with_archive(tmp_path, bad))
    assert any(p.file.endswith(bad.name) for p in data.problems)


def _home_with_archive(tmp_path: Path, archive: Path) -> Path:
    home = tmp_path / "h"
    sessions = home / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    shutil.copy(archive, sessions / archive.name)
    return home


# -- 8. deferred loading --------------------------------------------------------------
@pytest.mark.parametrize("identities", [True, False], ids=["identities", "no-identities"])
def test_deferred_summaries_match_the_full_load(tmp_path, identities):
    sessions = {
        "s1": rich_events("s1"),
        "s2": conversation("s2", 3, size=1500),
        "s3": conversation("s3", 1),
    }
    make_db(agent_db(tmp_path), sessions, identities=identities)
    full = load_dataset(tmp_path)
    quick = load_dataset(tmp_path, defer_db=True)
    assert quick.sessions == [] and set(quick.pending) == {s.path for s in full.summaries}
    by_path = {s.path: s for s in full.summaries}
    for q in quick.summaries:
        f = by_path[q.path]
        assert q.loaded is False and f.loaded is True
        assert (q.id, q.entries, q.messages, q.compactions, q.name, q.storage, q.key) == (
            f.id, f.entries, f.messages, f.compactions, f.name, f.storage, f.key,
        ), q.id  # fmt: skip
        assert q.model == "" or q.model == f.model
    if not identities:  # roles only known from the JSON
        assert {q.id: q.roles for q in quick.summaries} == {f.id: f.roles for f in full.summaries}
    # opening one reads it and replaces its row
    s2 = quick.session("s2")
    assert s2.db is not None and len(s2.entries) == 6
    row = next(s for s in quick.summaries if s.id == "s2")
    assert row.loaded and figures(row) == figures(by_path[row.path])
    assert (row.storage, row.key, row.path) == ("sqlite", "agent:main:explicit:s2", s2.path)
    assert quick.session("s2") is s2  # not read twice
    assert len(quick.pending) == 2
    loaded = quick.load_pending()
    assert {s.id for s, _ in loaded} == {"s1", "s3"}
    quick.adopt(loaded)
    quick.adopt(loaded)  # a second adopt adds nothing
    assert quick.pending == {}
    assert sorted(s.id for s in quick.sessions) == ["s1", "s2", "s3"]
    assert {s.path: figures(s) for s in quick.summaries} == {
        s.path: figures(s) for s in full.summaries
    }
    assert all(s.loaded for s in quick.summaries)
    assert len(quick.summaries) == 3


def test_deferred_session_that_cannot_be_read(tmp_path):
    path, seq = damaged_db(tmp_path, "bad-frame")
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("DELETE FROM transcript_events WHERE session_id='s2' AND seq=0")
    db.close()
    quick = load_dataset(path.parents[3], defer_db=True)
    assert len(quick.pending) == 2
    with pytest.raises(KeyError) as info:
        quick.session("s2")
    assert f"{path}#s2" in str(info.value)
    loaded = quick.load_pending()
    assert [s.id for s, _ in loaded] == ["s1"]
    quick.adopt(loaded)
    assert _problems_at(quick.problems, f"{path}#s1", seq)


def test_data_set_session_refs(tmp_path):
    make_db(agent_db(tmp_path), {"alpha-1": conversation("alpha-1", 1),
                                 "alpha-2": conversation("alpha-2", 1)})  # fmt: skip
    quick = load_dataset(tmp_path, defer_db=True)
    with pytest.raises(KeyError, match="2 sessions"):
        quick.session("alpha")
    with pytest.raises(KeyError, match="no session"):
        quick.session("beta")
    db = agent_db(tmp_path)
    assert quick.session(f"{db}#alpha-2").id == "alpha-2"
    assert quick.session("alpha-1").id == "alpha-1"
    assert quick.session("agent:main:explicit:alpha-2").id == "alpha-2"  # its key
    assert quick.session("agent:main:explicit:alpha-1").id == "alpha-1"  # (once read too)
    other = tmp_path / "other"
    make_db(agent_db(other), {"alpha": conversation("alpha", 1),
                              "alpha-2": conversation("alpha-2", 1)})  # fmt: skip
    assert load_dataset(other, defer_db=True).session("alpha").id == "alpha"  # exact first


# -- 9. transcript search ---------------------------------------------------------------
@pytest.fixture
def searchable(tmp_path) -> Path:
    s1 = [
        header("s1"),
        message("u1", None, "user", "please deploy the parser on friday"),
        message("a1", "u1", "assistant", "I will deploy it on friday morning"),
        message("u2", "a1", "user", 'he said "ship it" and left'),
        message("a2", "u2", "assistant", "tests " * 400 + "zebra"),  # compressed row
    ]
    s2 = [
        header("s2"),
        message("v1", None, "user", "the parser is slow"),
        message("b1", "v1", "assistant", "deploy later, profile first"),
    ]
    return make_db(agent_db(tmp_path), {"s1": s1, "s2": s2})


def test_search_finds_user_and_assistant_text(searchable):
    with AgentDb(searchable) as db:
        assert db.has_transcript_fts()
        hits = db.search_transcripts("deploy")
        assert {(h.session_id, h.message_id, h.role) for h in hits} == {
            ("s1", "u1", "user"), ("s1", "a1", "assistant"), ("s2", "b1", "assistant"),
        }  # fmt: skip
        assert all("deploy" in h.snippet for h in hits)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert [h.message_id for h in db.search_transcripts("zebra")] == ["a2"]
        assert len(db.search_transcripts("deploy", limit=1)) == 1


def test_search_multiword_is_and(searchable):
    with AgentDb(searchable) as db:
        assert {h.message_id for h in db.search_transcripts("parser friday")} == {"u1"}
        assert {h.message_id for h in db.search_transcripts("parser")} == {"u1", "v1"}
        assert db.search_transcripts("parser zebra") == []
        assert db.search_transcripts("   ") == []


@pytest.mark.parametrize(
    "query", ['"ship it"', 'ship"', '"', 'it" OR "x', "deploy AND", "NOT deploy", "a*b", "(x"]
)
def test_search_quotes_and_operators_do_not_break_it(searchable, query):
    with AgentDb(searchable) as db:
        hits = db.search_transcripts(query)  # never raises
    assert isinstance(hits, list)


def test_search_quoted_words_match_as_words(searchable):
    with AgentDb(searchable) as db:
        assert {h.message_id for h in db.search_transcripts('"ship')} == {"u2"}
        assert {h.message_id for h in db.search_transcripts('deploy"')} == {"u1", "a1", "b1"}
        assert db.search_transcripts("NOT deploy") == []  # NOT is a word, not an operator


def test_search_session_filter(searchable):
    with AgentDb(searchable) as db:
        assert {h.session_id for h in db.search_transcripts("deploy", session_id="s2")} == {"s2"}
        assert db.search_transcripts("friday", session_id="s2") == []
        assert db.search_transcripts("deploy", session_id="nope") == []


def test_immutable_connection_sees_a_finished_writers_rows_after_refresh(tmp_path):
    path = make_db(agent_db(tmp_path), {"s1": conversation("s1", 1)})
    with AgentDb(path) as db:
        assert db.mode == "immutable" and db.max_seqs() == {"s1": 2}
        db.load_session("s1")
        w = writer(path)
        add_session(w, "s1", [message("late", "s1-a0", "user", "more " * 300)], first_seq=3)
        add_session(w, "s2", conversation("s2", 20, size=800))
        w.close()
        assert listing(path.parent) == ["openclaw-agent.sqlite"]
        db.refresh()
        assert db.max_seqs() == {"s1": 3, "s2": 40}


def test_search_with_a_nul_in_the_query(searchable):
    with AgentDb(searchable) as db:
        assert db.search_transcripts("deploy\x00x") == []


def test_cli_on_the_database_file_itself(mixed_home, capsys):
    db = str(mixed_home["db"])
    rows = run_json(capsys, "sessions", db)["sessions"]
    assert {(r["id"], r["storage"], r["agent"]) for r in rows} == {
        ("s1", "sqlite", "main"),
        ("s2", "sqlite", "main"),
    }
    info = run_json(capsys, "info", db)
    assert [s["path"] for s in info["stores"]] == [db]
    assert [m["path"] for m in info["memory_indexes"]] == [db]
    at = run_json(capsys, "show", f"{db}#s1", "--at", "#4")
    assert at["at"]["index"] == 4 and at["at"]["line"] == 4
    assert [m["entry_id"] for m in at["messages"]] == ["s1-u0", "s1-a0", "s1-u1"]
