"""Build the OpenClaudeCode fixture (seed document 004's design) deterministically.

Run ``python tests/data/openclaudecode/make_fixture.py [OUT]`` (default: ``home`` beside
this file). It writes ``openclaudecode.db`` (tables ``sessions``, ``memory_chunks`` and
the FTS5 ``memory_fts``) and four transcripts under ``sessions/``:

* ``tg-0001`` (``telegram:5054873275``): eight messages, a compaction (``removedCount``
  6), then four more messages;
* ``dc-0002`` (``discord:918273645546372819``): four messages;
* ``wa-0003`` (``whatsapp:15551234567``): a corrupt line (line 4) and a truncated
  last line (line 7, no newline);
* ``tg-0004`` (``telegram:5054873275`` again, a fresh session after the 4 h reset;
  ``compactionCount`` 1 carried over).

Every time is fixed, so two runs give the same files.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from datetime import UTC, datetime
from pathlib import Path

BASE_MS = 1_790_000_000_000  # 2026-09-21T14:13:20Z
DB_NAME = "openclaudecode.db"


def iso(ms: int) -> str:
    """An event's ISO time, as JavaScript's ``toISOString``."""
    return (
        datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"
    )


def line(obj: dict[str, object]) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def message(ms: int, role: str, content: str, channel: str, sender: str) -> dict[str, object]:
    msg: dict[str, object] = {"role": role, "content": content, "channel": channel}
    if role == "user":
        msg["from"] = sender
    return {"type": "message", "timestamp": iso(ms), "message": msg}


TG_TURNS = [
    (
        "Can you remind me what we decided about the deploy window?",
        "We settled on Thursday 18:00 UTC for the deploy window, after the freeze.",
    ),
    (
        "And the database migration?",
        "The migration runs first, at 17:30 UTC, with a rollback script ready.",
    ),
    (
        "Who owns the rollback script?",
        "Priya owns the rollback script; she tests it on staging Wednesday.",
    ),
    (
        "Add a reminder for the staging test.",
        "Reminder set: staging rollback test, Wednesday 15:00 UTC.",
    ),
]
TG_AFTER = [
    (
        "Did Priya confirm the staging test?",
        "Yes, Priya confirmed the staging rollback test passed.",
    ),
    (
        "Great, then the deploy window stays Thursday.",
        "Noted: deploy window Thursday 18:00 UTC stands.",
    ),
]
DC_TURNS = [
    (
        "what is the raid schedule this week",
        "The raid is Saturday at 20:00 server time; bring fire resistance potions.",
    ),
    ("remind me about potions friday", "Reminder set for Friday: buy fire resistance potions."),
]
WA_TURNS = [
    ("Buy oat milk and coffee beans", "Added oat milk and coffee beans to the shopping list."),
    ("What is on the shopping list?", "Oat milk, coffee beans."),
]
TG4_TURNS = [
    (
        "New day. What is left for the deploy?",
        "Only the deploy window on Thursday 18:00 UTC; the migration is ready.",
    ),
]


def transcript(
    session_id: str, start: int, turns: list[tuple[str, str]], channel: str, sender: str
) -> tuple[list[str], int]:
    out = [line({"type": "session", "version": 1, "id": session_id, "timestamp": iso(start)})]
    ms = start
    for user, assistant in turns:
        ms += 60_000
        out.append(line(message(ms, "user", user, channel, sender)))
        ms += 5_000
        out.append(line(message(ms, "assistant", assistant, channel, sender)))
    return out, ms


def build(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    sessions = out / "sessions"
    sessions.mkdir(exist_ok=True)
    rows = []
    chunks = []

    # telegram: eight messages, a compaction of six, four more
    sid, key = "tg-0001", "telegram:5054873275"
    lines, ms = transcript(sid, BASE_MS, TG_TURNS, "telegram", "5054873275")
    ms += 1_000
    summary = (
        "Deploy window Thursday 18:00 UTC; migration 17:30 UTC with a rollback script "
        "owned by Priya, tested on staging Wednesday."
    )
    lines.append(
        line({"type": "compaction", "timestamp": iso(ms), "summary": summary, "removedCount": 6})
    )
    more, ms2 = transcript(sid, ms, TG_AFTER, "telegram", "5054873275")
    lines += more[1:]
    (sessions / f"{sid}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows.append((sid, key, BASE_MS, ms2, 6, 1))
    for n, (u, a) in enumerate(TG_TURNS + TG_AFTER):
        t = BASE_MS + 60_000 * (n + 1)
        chunks.append((f"{sid}-c{n}", key, f"[user] {u}\n[assistant] {a}", "session", t))
    chunks.append(
        (
            "mem-tg-1",
            key,
            "Priya prefers rollback scripts written in bash, not python.",
            "memory",
            BASE_MS + 900_000,
        )
    )

    # discord
    sid, key = "dc-0002", "discord:918273645546372819"
    start = BASE_MS + 3_600_000
    lines, ms = transcript(sid, start, DC_TURNS, "discord", "918273645546372819")
    (sessions / f"{sid}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows.append((sid, key, start, ms, 4, 0))
    for n, (u, a) in enumerate(DC_TURNS):
        chunks.append(
            (
                f"{sid}-c{n}",
                key,
                f"[user] {u}\n[assistant] {a}",
                "session",
                start + 60_000 * (n + 1),
            )
        )
    chunks.append(
        (
            "mem-dc-1",
            key,
            "The guild raid needs fire resistance; the deploy channel is elsewhere.",
            "memory",
            start + 700_000,
        )
    )

    # whatsapp: a corrupt line and a truncated last line
    sid, key = "wa-0003", "whatsapp:15551234567"
    start = BASE_MS + 7_200_000
    lines, ms = transcript(sid, start, WA_TURNS, "whatsapp", "15551234567")
    lines.insert(3, '{"type":"message","timestamp":"' + iso(ms) + '","message":{"role":"user",,}}')
    text = (
        "\n".join(lines)
        + "\n"
        + '{"type":"message","timestamp":"'
        + iso(ms + 1_000)
        + '","message":{"role":"assis'
    )
    (sessions / f"{sid}.jsonl").write_text(text, encoding="utf-8")
    rows.append((sid, key, start, ms, 6, 0))
    for n, (u, a) in enumerate(WA_TURNS):
        chunks.append(
            (
                f"{sid}-c{n}",
                key,
                f"[user] {u}\n[assistant] {a}",
                "session",
                start + 60_000 * (n + 1),
            )
        )

    # telegram again: a new session after the 4 h reset (compactionCount carried over)
    sid, key = "tg-0004", "telegram:5054873275"
    start = BASE_MS + 6 * 3_600_000
    lines, ms = transcript(sid, start, TG4_TURNS, "telegram", "5054873275")
    (sessions / f"{sid}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows.append((sid, key, start, ms, 2, 1))
    for n, (u, a) in enumerate(TG4_TURNS):
        chunks.append(
            (
                f"{sid}-c{n}",
                key,
                f"[user] {u}\n[assistant] {a}",
                "session",
                start + 60_000 * (n + 1),
            )
        )

    db_path = out / DB_NAME
    db_path.unlink(missing_ok=True)
    db = sqlite3.connect(db_path)
    db.executescript(
        """
        CREATE TABLE sessions (
          session_id TEXT PRIMARY KEY, session_key TEXT NOT NULL, created_at INTEGER NOT NULL,
          updated_at INTEGER NOT NULL, message_count INTEGER NOT NULL DEFAULT 0,
          compaction_count INTEGER NOT NULL DEFAULT 0, transcript_path TEXT NOT NULL,
          metadata TEXT);
        CREATE TABLE IF NOT EXISTS memory_chunks (
          id TEXT PRIMARY KEY, session_key TEXT NOT NULL, text TEXT NOT NULL,
          source TEXT NOT NULL DEFAULT 'session', timestamp INTEGER NOT NULL,
          created_at INTEGER NOT NULL);
        CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5(
          text, id UNINDEXED, session_key UNINDEXED, source UNINDEXED);
        CREATE INDEX IF NOT EXISTS idx_memory_chunks_session ON memory_chunks(session_key);
        CREATE INDEX IF NOT EXISTS idx_memory_chunks_timestamp ON memory_chunks(timestamp);
        """
    )
    for sid, key, created, updated, count, comps in rows:
        # the design's default place; memlens finds the file in sessions/ when the path is elsewhere
        path = f"~/.openclaudecode/sessions/{sid}.jsonl"
        meta = json.dumps({"channel": key.split(":", 1)[0]})
        db.execute(
            "INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (sid, key, created, updated, count, comps, path, meta),
        )
    for cid, key, text, source, ts in chunks:
        db.execute(
            "INSERT INTO memory_chunks VALUES (?, ?, ?, ?, ?, ?)", (cid, key, text, source, ts, ts)
        )
        db.execute(
            "INSERT INTO memory_fts (text, id, session_key, source) VALUES (?, ?, ?, ?)",
            (text, cid, key, source),
        )
    db.commit()
    db.execute("VACUUM")
    db.close()


if __name__ == "__main__":
    build(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "home")
