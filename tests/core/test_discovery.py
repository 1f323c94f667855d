"""What a path holds: OpenClaw home, pi sessions, store alone, one transcript."""

from __future__ import annotations

import shutil

import pytest

from core.dataset.discovery import discover
from core.io.problems import FormatError


def _copy(fixtures_dir, dest, name="large-session.jsonl"):
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(fixtures_dir / name, dest / name)
    return dest / name


def test_openclaw_home(fixtures_dir, tmp_path):
    home = tmp_path / ".openclaw"
    _copy(fixtures_dir, home / "agents" / "main" / "sessions")
    (home / "agents" / "main" / "sessions" / "sessions.json").write_text("{}")
    _copy(fixtures_dir, home / "agents" / "ops" / "sessions", "before-compaction.jsonl")
    (home / "memory" / "context").mkdir(parents=True)
    (home / "memory" / "context" / "segments.jsonl").write_text("")
    (home / "memory" / "main.sqlite").write_bytes(b"")
    (home / "openclaw.json").write_text("{}")
    found = discover(home)
    assert found.kind == "openclaw-home"
    assert [a.name for a in found.agents] == ["main", "ops"]
    assert found.agents[0].sessions_json is not None and found.agents[1].sessions_json is None
    assert [p.name for p in found.transcripts] == ["large-session.jsonl", "before-compaction.jsonl"]
    assert found.memory_context == home / "memory" / "context"
    assert [p.name for p in found.memory_indexes] == ["main.sqlite"]
    assert found.config == home / "openclaw.json"
    assert "openclaw-home" in found.describe() and "2 agent(s)" in found.describe()


def test_pi_sessions_folder(fixtures_dir, tmp_path):
    root = tmp_path / ".pi" / "agent"
    _copy(fixtures_dir, root / "sessions" / "--home-dev-proj--")
    found = discover(root)  # ~/.pi/agent leads to its sessions/
    assert found.kind == "pi-sessions"
    assert [a.name for a in found.agents] == ["home/dev/proj"]
    assert len(found.transcripts) == 1


def test_store_alone_and_single_transcript(fixtures_dir, tmp_path):
    store = tmp_path / "context"
    store.mkdir()
    (store / "knowledge.jsonl").write_text("")
    assert discover(store).kind == "memory-context"
    assert discover(store / "knowledge.jsonl").memory_context == store
    t = _copy(fixtures_dir, tmp_path / "one")
    found = discover(t)
    assert found.kind == "transcript" and found.transcripts == [t]


def test_nothing_readable(tmp_path):
    with pytest.raises(FormatError, match="no such file"):
        discover(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FormatError, match="nothing memlens can read"):
        discover(tmp_path / "empty")
    bad = tmp_path / "notes.jsonl"
    bad.write_text('{"hello": 1}\n')
    with pytest.raises(FormatError, match="not a pi transcript") as err:
        discover(bad)
    assert str(bad) in str(err.value)


def test_a_home_folder_opens_its_agents_data_newest_first(fixtures_dir, tmp_path):
    """``memlens mcp ~`` (or the app on ``~``): ``~/.openclaw``, else ``~/.pi/agent``."""
    user = tmp_path / "user"
    pi = _copy(fixtures_dir, user / ".pi" / "agent" / "sessions" / "--work-proj--")
    found = discover(user)
    assert (found.kind, found.path, found.transcripts) == ("pi-sessions", pi.parent.parent, [pi])
    assert found.notes == [f"{user} is a home folder: opened {user / '.pi' / 'agent'}"]
    (user / ".openclaw").mkdir()  # nothing in it yet: pi's data is still what opens
    assert discover(user).kind == "pi-sessions"
    claw = _copy(fixtures_dir, user / ".openclaw" / "agents" / "main" / "sessions")
    found = discover(user)
    assert (found.kind, found.path, found.transcripts) == (
        "openclaw-home",
        user / ".openclaw",
        [claw],
    )
    shutil.rmtree(user / ".pi")
    shutil.rmtree(user / ".openclaw")
    with pytest.raises(FormatError, match="nothing memlens can read") as err:
        discover(user)
    assert str(err.value).startswith(f"{user}:")
