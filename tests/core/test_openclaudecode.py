"""OpenClaudeCode (seed document 004's design): detection, sessions, transcripts, writes refused."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli.main import run_cli
from core.compaction.checks import check_writable
from core.compaction.refusals import CompactionRefused
from core.dataset.discovery import discover
from core.dataset.load import load_dataset
from core.openclaudecode import FORMAT, FORMAT_KEY, READ_ONLY, find_openclaudecode
from core.openclaudecode.load_home import load_home
from core.openclaudecode.sessions_table import read_sessions
from core.openclaudecode.transcript import load_occ_transcript
from core.openclaw.sqlite_ro import ReadOnlyDb
from core.transcript import context_at
from core.transcript.replay import compactions

FIXTURE = Path(__file__).parents[1] / "data" / "openclaudecode" / "home"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    dest = tmp_path / ".openclaudecode"
    shutil.copytree(FIXTURE, dest)
    return dest


def _state(root: Path) -> dict[str, tuple[int, str]]:
    return {
        str(p.relative_to(root)): (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_the_fixture_is_what_its_generator_makes(tmp_path):
    script = FIXTURE.parent / "make_fixture.py"
    subprocess.run([sys.executable, str(script), str(tmp_path / "out")], check=True)
    assert _state(tmp_path / "out").keys() == _state(FIXTURE).keys()
    for name in _state(FIXTURE):
        assert (tmp_path / "out" / name).read_bytes() == (FIXTURE / name).read_bytes(), name


def test_found_by_its_tables(home):
    found = find_openclaudecode(home)
    assert found is not None
    assert found.database == home / "openclaudecode.db"
    assert found.sessions_dir == home / "sessions"
    assert found.has_sessions_table and found.has_memory
    assert [p.name for p in found.transcripts] == [
        "dc-0002.jsonl", "tg-0001.jsonl", "tg-0004.jsonl", "wa-0003.jsonl"
    ]  # fmt: skip
    assert find_openclaudecode(home / "openclaudecode.db") == found  # the database itself
    disc = discover(home)
    assert disc.kind == "openclaudecode"
    assert disc.openclaudecode == found
    assert "openclaudecode.db" in disc.describe()


def test_a_database_without_the_tables_is_not_one(tmp_path):
    db = sqlite3.connect(tmp_path / "other.db")
    db.execute("CREATE TABLE sessions (id TEXT, name TEXT)")  # no session id/key columns
    db.close()
    assert find_openclaudecode(tmp_path) is None
    (tmp_path / "garbage.sqlite").write_bytes(b"not sqlite at all")
    assert find_openclaudecode(tmp_path) is None


def test_sessions_table_snake_case(home):
    with ReadOnlyDb(home / "openclaudecode.db") as db:
        rows, problems = read_sessions(db)
    assert problems == []
    assert [(r.session_id, r.session_key, r.message_count, r.compaction_count) for r in rows] == [
        ("tg-0001", "telegram:5054873275", 6, 1),
        ("dc-0002", "discord:918273645546372819", 4, 0),
        ("wa-0003", "whatsapp:15551234567", 6, 0),
        ("tg-0004", "telegram:5054873275", 2, 1),
    ]
    assert rows[0].channel == "telegram"
    assert rows[0].metadata == {"channel": "telegram"}


def test_sessions_table_camel_case_and_garbled_rows(tmp_path):
    path = tmp_path / "occ.sqlite"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE sessions (sessionId TEXT, sessionKey TEXT, createdAt INTEGER, "
        "updatedAt INTEGER, messageCount, compactionCount INTEGER, transcriptPath TEXT, "
        "metadata TEXT, extra TEXT)"
    )
    db.execute("INSERT INTO sessions VALUES ('a', 'discord:1', 1, 2, 3, 0, 'x.jsonl', '{}', 'z')")
    db.execute("INSERT INTO sessions VALUES (NULL, 'discord:2', 1, 2, 3, 0, NULL, NULL, NULL)")
    db.execute(
        "INSERT INTO sessions VALUES ('c', 'telegram:3', 1, 2, 'many', 0, NULL, '{bad', NULL)"
    )
    db.commit()
    db.close()
    with ReadOnlyDb(path) as ro:
        rows, problems = read_sessions(ro)
    assert [(r.session_id, r.session_key, r.message_count) for r in rows] == [
        ("a", "discord:1", 3),
        ("c", "telegram:3", None),
    ]
    text = [str(p) for p in problems]
    assert any(str(path) in t and "row 2" in t and "no session id" in t for t in text)
    assert any("row 3" in t and "message_count 'many'" in t for t in text)
    assert any("row 3" in t and "metadata" in t for t in text)


def test_transcript_compaction_and_replay(home):
    loaded = load_home(find_openclaudecode(home))
    by_id = {s.session.id: s for s in loaded.sessions}
    assert set(by_id) == {"tg-0001", "dc-0002", "wa-0003", "tg-0004"}
    tg = by_id["tg-0001"].session
    assert by_id["tg-0001"].key == "telegram:5054873275"
    assert tg.header[FORMAT_KEY] == FORMAT  # marked read-only
    [comp] = tg.compaction_entries()
    assert comp.raw["removedCount"] == 6
    items = context_at(tg)
    # after the compaction: its summary, then the four messages after it
    assert [i.message.role for i in items] == [
        "compactionSummary", "user", "assistant", "user", "assistant"
    ]  # fmt: skip
    assert items[0].message.text().startswith("Deploy window Thursday")
    before = context_at(tg, f"#{comp.index - 1}")
    assert len(before) == 8  # eight messages before the compaction
    [info] = compactions(tg)
    assert len(info.replaced) == 8
    assert info.kept == ()  # nothing before it stays verbatim
    # messageCount 6 = 12 messages - removedCount 6: no note
    assert not [p for p in tg.problems if "messageCount" in p.message]


def test_bad_lines_are_problems_naming_file_and_line(home):
    path = home / "sessions" / "wa-0003.jsonl"
    session = load_occ_transcript(path)
    assert [m.message.text() for m in context_at(session)][-1] == "Oat milk, coffee beans."
    lines = {(p.file, p.line) for p in session.problems}
    assert (str(path), 4) in lines  # the corrupt line
    assert (str(path), 7) in lines  # the truncated last line
    loaded = load_home(find_openclaudecode(home))
    notes = [str(p) for p in loaded.problems if "messageCount" in p.message]
    assert notes == [f"{path}: sessions table row 3 (wa-0003) says messageCount 6; "
                     "the transcript holds 4 message(s)"]  # fmt: skip


def test_a_transcript_without_its_session_event(tmp_path):
    path = tmp_path / "lost.jsonl"
    path.write_text('{"type":"message","timestamp":"2026-01-01T00:00:00Z",'
                    '"message":{"role":"user","content":"hi"}}\n')  # fmt: skip
    session = load_occ_transcript(path)
    assert session.id == "lost"
    assert [e.type for e in session.entries] == ["message"]
    assert any(p.line == 1 and "no session event" in p.message for p in session.problems)


def test_load_dataset_names_sessions_by_key_and_writes_nothing(home):
    before = _state(home)
    data = load_dataset(home)
    assert data.discovery.kind == "openclaudecode"
    names = {s.id: (s.name, s.key, s.storage) for s in data.summaries}
    assert names["dc-0002"] == ("discord:918273645546372819", "discord:918273645546372819",
                                "openclaudecode")  # fmt: skip
    assert {p.line for p in data.problems if p.file.endswith("wa-0003.jsonl")} >= {4, 7}
    session = data.session("tg-0001")
    # a session key names its newest session (two telegram sessions of one user)
    assert data.session("telegram:5054873275").id == "tg-0004"
    assert data.session("discord:918273645546372819").id == "dc-0002"
    with pytest.raises(KeyError, match="no session matches 'telegram:1'"):
        data.session("telegram:1")
    with pytest.raises(CompactionRefused):  # never appended to
        check_writable(session, force=True)
    assert READ_ONLY.startswith("is an OpenClaudeCode transcript")
    assert _state(home) == before
    assert not [p for p in home.rglob("*") if p.name.endswith(("-wal", "-shm", "-journal"))]


def test_cli_info_sessions_show(home, capsys):
    before = _state(home)
    assert run_cli(["info", str(home)]) in (0, 1)
    out = capsys.readouterr().out
    assert "openclaudecode" in out and "sessions: 4" in out
    assert "wa-0003.jsonl:4" in out
    assert run_cli(["sessions", str(home), "--json"]) == 0
    assert '"key":"telegram:5054873275"' in capsys.readouterr().out.replace(" ", "")
    assert run_cli(["show", "tg-0001", "--data", str(home)]) == 0
    shown = capsys.readouterr().out
    assert "compactionSummary" in shown and "Noted: deploy window" in shown
    assert _state(home) == before


def test_compaction_of_an_openclaudecode_session_is_refused_as_such() -> None:
    from core.compaction.checks import check_agent_owned
    from core.compaction.refusals import Archived
    from core.dataset.load import load_dataset

    session = load_dataset(FIXTURE).session("tg-0001")
    with pytest.raises(Archived, match="is an OpenClaudeCode transcript: memlens reads"):
        check_agent_owned(session)


def test_sessions_text_names_each_session_key(capsys) -> None:
    from core.cli.main import run_cli

    assert run_cli(["sessions", str(FIXTURE)]) == 0
    out = capsys.readouterr().out
    assert "tg-0001.jsonl  [telegram:5054873275]" in out
    assert "dc-0002.jsonl  [discord:918273645546372819]" in out


@pytest.mark.parametrize("fallback", [[], ["--allow-fallback"]], ids=["plain", "fallback-asked"])
def test_a_compaction_with_a_failing_model_writes_nothing_even_with_the_fallback_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fallback: list[str]
) -> None:
    home = tmp_path / "home"
    shutil.copytree(FIXTURE, home)
    before = _state(home)
    argv = ["compact", "tg-0001", "--data", str(home), "--write", "--force"]
    # a summariser that cannot be reached: the write is refused before it is asked
    argv += ["--llm", "openai:http://127.0.0.1:9/v1:m", *fallback]
    assert run_cli(argv) == 1
    err = capsys.readouterr().err
    assert "is an OpenClaudeCode transcript: memlens reads this format but never writes" in err
    assert "cannot reach" not in err
    assert _state(home) == before  # no backup, no appended line, no lock file
