"""Transcripts OpenClaw archived inside its database (issue 15): reset, deleted, cold."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import orjson
import zstandard

from core.dataset.load import load_dataset
from core.openclaw.agentdb import AgentDb, load_session_ref, session_path
from tests.openclaw_db import add_session, conversation, create_agent_db

if TYPE_CHECKING:
    from pathlib import Path


def _jsonl(events: list[dict]) -> bytes:
    return b"".join(orjson.dumps(e) + b"\n" for e in events)


def _home(tmp_path: Path) -> Path:
    home = tmp_path / ".openclaw"
    path = home / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    path.parent.mkdir(parents=True)
    db = create_agent_db(path)
    add_session(db, "live", conversation("live", 2))
    add_session(db, "old", conversation("old", 1))
    old = conversation("old", 3)
    zipped = zstandard.ZstdCompressor().compress(_jsonl(old))
    db.execute(
        "INSERT INTO session_transcript_archives (session_id, generation, session_key, reason, "
        "encoding, archive_blob, archive_sha256, archive_name, created_at) "
        "VALUES ('old', 'g1', 'agent:main:explicit:old', 'reset', 'zstd', ?, ?, "
        "'old.jsonl.reset.2026-11-25T16-00-00.000Z', 1795600000000)",
        (zipped, hashlib.sha256(zipped).hexdigest()),
    )
    cold = _jsonl(conversation("cold", 2))
    db.execute(
        "INSERT INTO session_windows (session_id, session_key, created_at, updated_at) "
        "VALUES ('cold', 'agent:main:explicit:cold', 1, 1)"
    )
    db.execute(
        "INSERT INTO session_transcript_cold_archives (session_id, generation, archive_name, "
        "archive_sha256, event_count, raw_bytes, archive_bytes, last_seq, archived_at, storage, "
        "archive_blob) VALUES ('cold', 'g1', 'cold.jsonl', ?, 5, ?, ?, 4, 1795600000001, "
        "'sqlite', ?)",
        (hashlib.sha256(cold).hexdigest(), len(cold), len(cold), cold),
    )
    db.close()
    return home


def test_archive_rows_are_listed_and_read(tmp_path):
    home = _home(tmp_path)
    db_path = home / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    with AgentDb(db_path) as db:
        rows = db.archives()
        assert [(r.name, r.reason, r.in_database) for r in rows] == [
            ("old.jsonl.reset.2026-11-25T16-00-00.000Z", "reset", True),
            ("cold.jsonl", "cold", True),
        ]
        old = db.load_archive_row(rows[0].name)  # zstd-encoded
        assert len(old.messages()) == 6 and old.db == str(db_path)
        cold = db.load_archive_row("cold.jsonl")  # plain JSONL
        assert len(cold.messages()) == 4
    data = load_dataset(home)
    storages = sorted((s.id, s.storage) for s in data.summaries)
    assert storages == [("cold", "archive"), ("live", "sqlite"), ("old", "archive"),
                        ("old", "sqlite")]  # fmt: skip
    ref = session_path(db_path, "archive/cold.jsonl")
    assert load_session_ref(ref).path == ref


def test_an_archived_transcript_is_never_written(tmp_path, capsys):
    """A compaction of an archive is refused before anything happens, forced, with the
    fallback asked for, plain or zstd: OpenClaw never reads it again."""
    import os

    from core.cli.main import run_cli

    sessions = tmp_path / ".openclaw" / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    events = conversation("arch", 60, size=2000)
    events[0] = {**events[0], "version": 3}
    plain = sessions / "arch.jsonl.reset.2026-11-25T16-00-00.000Z"
    plain.write_bytes(_jsonl(events))
    zipped = sessions / "arch.jsonl.deleted.2026-11-25T16-00-00.000Z.zst"
    zipped.write_bytes(zstandard.ZstdCompressor().compress(_jsonl(events)))
    for path in (plain, zipped):
        os.utime(path, (1, 1))  # not "modified in the last seconds"
        before = path.read_bytes()
        for extra in ([], ["--allow-fallback", "--llm", "openai:http://127.0.0.1:9:m"]):
            code = run_cli(["compact", str(path), "--write", "--force", *extra])
            err = capsys.readouterr().err
            assert code == 1 and "archived transcript" in err, err
            assert path.read_bytes() == before
        assert sorted(p.name for p in sessions.iterdir()) == sorted([plain.name, zipped.name])
