"""The committed real OpenClaw home (tests/data/openclaw-2026.9.6) has not rotted.

The pinned OpenClaw regenerates the hybrid home and the FTS-only home into a
temporary folder with :mod:`tests.oracle.make_openclaw_home` (quick: the memory
searches, status and session listings left out; about 5 minutes on an idle 2-core
machine, 9 on a busy one), and the result
must have the committed fixture's shape: the same agents, session keys and ids,
the same entry types (and message roles) seq by seq, the same rows stored zstd,
the same indexed memory files and embedding encoding. Ids, timestamps and scores
differ at every run, so they are not compared.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.oracle import make_openclaw_home

pytestmark = [
    pytest.mark.slow,
    # OpenClaw is pinned, so the committed output cannot drift while the pin stands;
    # regenerating costs 5-9 minutes, more than the whole suite's budget. Run it when
    # bumping the pin (tests/oracle/agents.py): MEMLENS_ORACLE_REGENERATE=1.
    pytest.mark.skipif(
        os.environ.get("MEMLENS_ORACLE_REGENERATE") != "1",
        reason="regenerates the real OpenClaw fixture (5-9 min): set "
        "MEMLENS_ORACLE_REGENERATE=1 when bumping the pinned OpenClaw",
    ),
]

FIXTURE = Path(__file__).parents[1] / "data" / "openclaw-2026.9.6"


def _open(db: Path) -> sqlite3.Connection:
    # immutable: OpenClaw has exited and checkpointed; creates no -wal/-shm
    return sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)


def _role(row: tuple[Any, ...]) -> str | None:
    event_json, navigation_json = row
    if event_json is not None:
        event = json.loads(event_json)
    else:
        event = json.loads(navigation_json)["navigation"]
    message = event.get("message")
    return message.get("role") if isinstance(message, dict) else None


def shape(state: Path) -> dict[str, Any]:
    """What must not change between regenerations of a state dir."""
    out: dict[str, Any] = {}
    for db in sorted(state.glob("agents/*/agent/openclaw-agent.sqlite")):
        agent = db.parent.parent.name
        with contextlib.closing(_open(db)) as con:
            sessions = dict(
                con.execute("select session_key, current_session_id from session_nodes")
            )
            events = {}
            for (sid,) in con.execute("select session_id from session_windows order by 1"):
                rows = con.execute(
                    "select e.seq, i.event_type, e.event_json, e.navigation_json,"
                    " e.event_zstd is not null from transcript_events e"
                    " join transcript_event_identities i using (session_id, seq)"
                    " where e.session_id = ? order by e.seq",
                    (sid,),
                ).fetchall()
                events[sid] = [(seq, t, _role((j, n)), bool(z)) for seq, t, j, n, z in rows]
            sources = sorted(
                con.execute("select source, path from memory_index_sources").fetchall()
            )
            chunks = sorted(
                set(
                    con.execute(
                        "select source, model, length(embedding) from memory_index_chunks"
                    ).fetchall()
                )
            )
            version = con.execute("pragma user_version").fetchone()[0]
        out[agent] = {
            "sessions": sessions,
            "events": events,
            "sources": sources,
            "chunk_kinds": chunks,
            "user_version": version,
        }
    return out


# OpenClaw's backup of a config it validated; the quick regeneration leaves out the
# commands (memory status, sessions) that write it
OPTIONAL = {"openclaw.json.last-good"}


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()} - OPTIONAL


def test_the_fixture_is_what_openclaw_writes(openclaw, tmp_path):
    out = tmp_path / "out"
    data = make_openclaw_home.generate(out, tmp_path / "work", quick=True)
    assert data["openclaw_version"] == "2026.9.6"
    for home in ("home", "fts-home"):
        fresh, committed = out / home / ".openclaw", FIXTURE / home / ".openclaw"
        assert shape(fresh) == shape(committed), home
        assert _files(fresh) == _files(committed), home
    compact = [c for c in data["commands"] if c["label"] == "sessions compact"]
    assert compact and compact[0]["json"]["ok"] and compact[0]["json"]["compacted"]
