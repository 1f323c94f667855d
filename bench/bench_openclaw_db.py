"""Benchmark: current OpenClaw's agent database (issue 15).

Builds an OpenClaw 2026.9.6 home whose ``agents/main/agent/openclaw-agent.sqlite``
holds SESSIONS sessions and EVENTS transcript events in all (a few large ones stored
zstd, as OpenClaw stores them), plus one session of REPLAY events, then times:

* ``sqlite_plain``: plain SQLite reading every event row (and decoding zstd): the floor;
* ``session_rows``: memlens's session list from the session tables (no transcript read);
* ``session_list``: ``load_dataset(defer_db=True)`` on the home: what the app does
  before its session list shows (sessions listed from SQL counts, read later);
* ``full_load``: ``load_dataset`` with every session read and summarised (what
  ``memlens sessions`` does, and the app in the background after the list shows);
* ``replay``: one REPLAY-event session loaded from the database and its context at
  the leaf replayed (``context_at`` + ``context_size``);
* ``live``: a writer process appends LIVE rows (one every 100 ms, as OpenClaw commits
  them) while memlens's live follower polls at the app's interval (500 ms); the delay
  between a row's commit and the follower having it.

Prints one JSON object. Targets (2 cores): session_list <= 2 s for 100 sessions /
100,000 events; replay <= 300 ms for 5,000 events; live rows within 1 s.

    python -m bench.bench_openclaw_db [--sessions 100] [--events 100000] [--replay 5000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import zstandard

from core.dataset.load import load_dataset
from core.openclaw.agentdb import AgentDb
from core.openclaw.sqlite_ro import ReadOnlyDb
from core.transcript import context_at, context_size
from tests.openclaw_db import add_session, conversation, create_agent_db


def build(home: Path, sessions: int, events: int, replay: int) -> Path:
    """Write the home; returns the database path."""
    path = home / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    path.parent.mkdir(parents=True)
    db = create_agent_db(path)
    per = max(1, events // sessions)
    for i in range(sessions):
        # every 20th message is over 1 kB: stored as a zstd frame
        sid = f"s{i:04d}"
        evs = conversation(sid, max(1, (per - 1) // 2), size=200)
        for j in range(5, len(evs), 20):
            evs[j]["message"]["content"] = (
                "x " * 700
                if evs[j]["message"]["role"] == "user"
                else [{"type": "text", "text": "y " * 700}]
            )
        add_session(db, sid, evs, created_at=1_795_600_000_000 + i * 1000)
    add_session(db, "replay", conversation("replay", max(1, (replay - 1) // 2), size=300))
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    return path


WRITER = """
import sqlite3, sys, time, orjson
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=5)
db.create_function("octet_length", 1, lambda v: None if v is None else len(str(v).encode()))
db.execute("PRAGMA journal_mode=WAL")
n, first = int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    seq = first + i
    event = {"type": "message", "id": f"live-{i}", "parentId": f"live-{i - 1}" if i else None,
             "timestamp": "2026-11-25T16:00:00.000Z",
             "message": {"role": "user", "content": f"live row {i}", "timestamp": 0}}
    text = orjson.dumps(event).decode()
    db.execute("INSERT INTO transcript_events (session_id, seq, event_json, created_at, "
               "event_utf8_bytes) VALUES ('replay', ?, ?, ?, ?)",
               (seq, text, int(time.time() * 1000), len(text)))
    time.sleep(0.1)
"""


def live_latency(home: Path, path: Path, rows: int, poll_s: float = 0.5) -> dict[str, float]:
    """Delays (ms) between a writer's commits and the live follower having the rows."""
    import subprocess

    from core.live.follow import LiveFollower

    data = load_dataset(home, defer_db=False)
    session = next(s for s in data.sessions if s.id == "replay")
    follower = LiveFollower(data)
    first = session.db_seq + 1
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(rows), str(first)])
    seen: dict[int, float] = {}
    try:
        while len(seen) < rows:
            follower.poll()
            now = time.time() * 1000
            for e in session.entries:
                if e.line >= first and e.line not in seen:
                    seen[e.line] = now
            if writer.poll() is not None and len(seen) < rows and not follower.poll():
                break
            time.sleep(poll_s)
    finally:
        writer.wait(timeout=60)
        follower.close()
    with ReadOnlyDb(path) as db:
        made = dict(
            db.rows("SELECT seq, created_at FROM transcript_events WHERE session_id = 'replay' "
                    "AND seq >= ?", (first,))
        )  # fmt: skip
    delays = sorted(seen[s] - made[s] for s in seen if s in made)
    return {
        "rows": float(len(delays)),
        "p50_ms": round(delays[len(delays) // 2], 1) if delays else -1.0,
        "max_ms": round(delays[-1], 1) if delays else -1.0,
    }


def _time(fn, repeat: int) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    times = []
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=100)
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--replay", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--live", type=int, default=20, help="rows the live writer appends")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / ".openclaw"
        t0 = time.perf_counter()
        path = build(home, args.sessions, args.events, args.replay)
        built = time.perf_counter() - t0

        def plain() -> int:
            dz = zstandard.ZstdDecompressor()
            n = 0
            with ReadOnlyDb(path) as db:
                for text, frame, size in db.rows(
                    "SELECT event_json, event_zstd, event_utf8_bytes FROM transcript_events"
                ):
                    n += len(text) if text is not None else len(dz.decompress(frame, size))
            return n

        def rows() -> int:
            with AgentDb(path) as db:
                return len(db.sessions())

        def session_list() -> int:
            return len(load_dataset(home, defer_db=True).summaries)

        def full_load() -> int:
            return len(load_dataset(home).summaries)

        def replay() -> int:
            with AgentDb(path) as db:
                session = db.load_session("replay")
            items = context_at(session)
            context_size(items)
            return len(items)

        plain_s, nbytes = _time(plain, args.repeat)
        rows_s, nsessions = _time(rows, args.repeat)
        list_s, listed = _time(session_list, args.repeat)
        full_s, _ = _time(full_load, args.repeat)
        replay_s, items = _time(replay, args.repeat)
        with AgentDb(path) as db:
            total = sum(s.events for s in db.sessions())
            zstd_rows = db._db.rows(
                "SELECT count(*) FROM transcript_events WHERE event_zstd IS NOT NULL"
            )[0][0]
        leftovers = sorted(p.name for p in path.parent.iterdir())  # before any writer
        db_bytes = os.path.getsize(path)
        live = live_latency(home, path, args.live)
    result = {
        "sessions": nsessions,
        "events": total,
        "zstd_events": zstd_rows,
        "db_bytes": db_bytes,
        "build_seconds": round(built, 3),
        "sqlite_plain_seconds": round(plain_s, 4),
        "sqlite_plain_bytes": nbytes,
        "session_rows_seconds": round(rows_s, 4),
        "session_list_seconds": round(list_s, 4),
        "session_list_sessions": listed,
        "full_load_seconds": round(full_s, 4),
        "replay_events": args.replay,
        "replay_context_items": items,
        "replay_seconds": round(replay_s, 4),
        "live_rows": int(live["rows"]),
        "live_p50_ms": live["p50_ms"],
        "live_max_ms": live["max_ms"],
        "files_beside_db": leftovers,
        "targets": {"session_list_seconds": 2.0, "replay_seconds": 0.3, "live_max_ms": 1000},
    }
    sys.stdout.write(__import__("json").dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
