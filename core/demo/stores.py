"""The stores of the demo home: openclaw.json, sessions.json, segments, knowledge, memory index.

Each writer takes the generated sessions (:class:`~core.demo.sessions.GeneratedSession`)
and a ``random.Random``, so the same seed gives the same bytes.
"""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from core.demo.plans import DAY_MS, rng_uuid
from core.demo.projects import PROJECTS
from core.demo.text import (
    generated_exchange,
)
from core.embed.hashembed import DIM, embed_many
from core.io import jsonio
from core.store.knowledge import KnowledgeLog
from core.store.segments import Segment, dedup_key, make_segment
from core.store.vectors import encode_vectors

if TYPE_CHECKING:
    import random
    from pathlib import Path

    from core.demo.sessions import GeneratedSession

# -- the stores ---------------------------------------------------------------
CONFIG_TEXT = """// OpenClaw configuration of the memlens demo home. All data here is fictional.
// JSON5: comments, unquoted keys and trailing commas are allowed.
{
  agents: {
    defaults: {
      workspace: "~/.openclaw/workspace",
      contextTokens: 200000,
      compaction: {
        mode: "safeguard",
        reserveTokensFloor: 20000,
        maxHistoryShare: 0.5,
        memoryFlush: { enabled: true, softThresholdTokens: 4000 },
      },
      // memory-context (openclaw/openclaw#14362): raw archive, knowledge log, recall
      memoryContext: {
        enabled: true,
        hardCapTokens: 4000,
        embeddingModel: "hash",
        redaction: true,
        knowledgeExtraction: true,
        maxSegments: 20000,
        evictionDays: 90,
        crossSession: false,
      },
    },
    list: [
      { id: "main", default: true },
      { id: "reviewer", workspace: "~/.openclaw/workspace-reviewer" },
    ],
  },
  models: {
    providers: {
      anthropic: {
        baseUrl: "https://api.anthropic.com",
        api: "anthropic-messages",
        apiKey: "${ANTHROPIC_API_KEY}",
        models: [
          { id: "claude-sonnet-4-5", name: "Claude Sonnet 4.5", contextWindow: 200000,
            maxTokens: 64000 },
        ],
      },
    },
  },
}
"""


def write_sessions_store(path: Path, outs: list[GeneratedSession], rng: random.Random) -> Path:
    """Write the agent's ``sessions.json`` for *outs*; returns its path."""
    store: dict[str, Any] = {}
    for o in outs:
        u = o.last_usage
        entry: dict[str, Any] = {
            "sessionId": o.session_id,
            "updatedAt": o.updated_at,
            "sessionFile": o.file_name,
            "compactionCount": o.compactions,
        }
        if o.flush_at is not None:
            # The flush runs before the compaction it prepares for.
            entry.update(memoryFlushAt=o.flush_at, memoryFlushCompactionCount=o.compactions - 1)
        channel = o.plan.key.split(":")[2].replace("main", "webchat")
        entry.update(
            totalTokens=u["totalTokens"],
            totalTokensFresh=True,
            inputTokens=u["input"] + u["cacheRead"] + u["cacheWrite"],
            outputTokens=u["output"],
            contextTokens=200_000,
            thinkingLevel="medium",
            channelMeta={
                "provider": channel,
                "lastMessageId": str(rng.randint(10**6, 10**7)),
                "displayName": o.plan.task,
            },
        )
        store[o.plan.key] = entry
    path.write_bytes(jsonio.dumps(store, pretty=True) + b"\n")
    return path


@dataclass(frozen=True, slots=True)
class _SegmentsOut:
    segments_file: Path
    vectors_file: Path
    segments: int
    duplicates: int
    invalid: int
    vectors: int


OLD_KEYS = (
    "agent:main:main",
    "agent:main:telegram:direct:123456789",
    "agent:main:discord:channel:998877665544332211",
    "agent:main:slack:dm:u04demo",
)
"""Keys of the older sessions whose transcripts are gone but whose segments remain."""


def _secrets(rng: random.Random) -> list[str]:
    def token(n: int) -> str:
        return "".join(
            rng.choice("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
            for _ in range(n)
        )

    return [
        f"use the staging config for the smoke test: api_key={'sk_live_' + token(24)}",
        f"staging answers 401 with Authorization: Bearer {token(40)} - is it expired?",
        f"the deploy hook still has token={'ghp_' + token(36)} hardcoded, move it to the env",
    ]


def write_segments(
    folder: Path, outs: list[GeneratedSession], rng: random.Random, now: int, count: int
) -> _SegmentsOut:
    """Write ``segments.jsonl`` and ``vectors.bin`` from the sessions' archived turns."""
    folder.mkdir(parents=True, exist_ok=True)
    pool = [
        (o.session_id, o.plan.key, role, text, ms)
        for o in outs
        for role, text, ms in o.texts
        if text != "NO_REPLY"
    ]
    picked = sorted(rng.sample(range(len(pool)), min(len(pool), count * 3 // 5)))
    items: list[tuple[str, str, str, str, int]] = []
    seen: set[str] = set()

    def keep(item: tuple[str, str, str, str, int]) -> None:
        key = dedup_key(item[0], item[2], item[3])
        if key not in seen and len(items) < count:
            seen.add(key)
            items.append(item)

    for i in picked:
        keep(pool[i])
    old = [(rng_uuid(rng), key, PROJECTS[i % len(PROJECTS)]) for i, key in enumerate(OLD_KEYS * 3)]
    secrets = _secrets(rng)
    while len(items) < count:
        sid, key, project = rng.choice(old)
        ms = now - rng.randint(14 * DAY_MS, 60 * DAY_MS)
        user, reply = generated_exchange(rng, project)
        keep((sid, key, "user", secrets.pop() if secrets else user, ms))
        keep((sid, key, "assistant", reply, ms + rng.randint(4000, 90_000)))
    items.sort(key=lambda it: it[4])
    segs = [
        make_segment(sid, role, text, timestamp=ms, session_key=key, new_id=lambda: rng_uuid(rng))
        for sid, key, role, text, ms in items
    ]
    lines = [jsonio.dumps_line(s.to_json()) for s in segs]
    # Two messages archived twice (an agent restart) and one line the loader must skip.
    for i in sorted(rng.sample(range(count), min(2, count)), reverse=True):
        s = segs[i]
        dup = make_segment(
            s.session_id,
            s.role,
            s.content,
            timestamp=s.timestamp + 1500,
            session_key=s.session_key,
            new_id=lambda: rng_uuid(rng),
        )
        lines.insert(i + 1, jsonio.dumps_line(dup.to_json()))
    bad = segs[count // 2]
    lines.insert(
        count // 2,
        jsonio.dumps_line(
            {
                "id": rng_uuid(rng),
                "sessionId": bad.session_id,
                "timestamp": bad.timestamp,
                "role": "system",
                "content": "You are a coding agent. Follow AGENTS.md.",
                "tokens": 14,
                "metadata": {"topics": [], "entities": []},
            }
        ),
    )
    seg_file = folder / "segments.jsonl"
    seg_file.write_bytes(b"".join(lines))
    missing = set(rng.sample(range(count), min(50, max(1, count // 60))))
    have: list[Segment] = [s for i, s in enumerate(segs) if i not in missing]
    vec_file = folder / "vectors.bin"
    vec_file.write_bytes(
        encode_vectors([s.id for s in have], embed_many([s.content for s in have]), DIM)
    )
    return _SegmentsOut(seg_file, vec_file, count, min(2, count), 1, len(have))


def write_knowledge(path: Path, rng: random.Random, now: int) -> tuple[Path, int, int]:
    """Write ``knowledge.jsonl``; returns its path, the facts and the lines."""
    path.unlink(missing_ok=True)
    clock = [now - 58 * DAY_MS]

    def tick() -> int:
        clock[0] += rng.randint(3, 16) * 3600_000 + rng.randint(0, 3599_999)
        return clock[0]

    log = KnowledgeLog(str(path), clock=tick, new_id=lambda: rng_uuid(rng))
    facts: list[tuple[str, str, str]] = []
    for p in PROJECTS:
        ctx = f"{p.name} ({p.lang}), /home/dev/projects/{p.name}"
        facts += [("decision", d, ctx) for d in p.decisions]
        facts += [("architecture", a, ctx) for a in p.architecture]
        facts += [("implementation", a, ctx) for a in p.implementation]
        facts += [("config", c, ctx) for c in p.config]
        facts += [
            ("issue", f"{p.name}: {t} failed with {e.splitlines()[0].lstrip('E ').strip()}", ctx)
            for t, e in p.failures[:2]
        ]
        facts += [("task_state", f"{p.name}: open: {t}", ctx) for t in p.todos[:2]]
    rng.shuffle(facts)
    added = [log.add(kind, content, context) for kind, content, context in facts]
    for p in PROJECTS:  # supersession chains: each version replaces the previous one
        fact = log.add("decision" if p.lang != "go" else "config", p.chain[0], p.name)
        for version in p.chain[1:]:
            fact = log.supersede(fact.id, version)
        if len(p.chain) == 1:
            log.delete(fact.id)  # a wrong fact the user removed
    tasks = [f for f in added if f.type == "task_state"]
    for f in rng.sample(tasks, 4):
        log.update(f.id, content=f.content.replace(": open: ", ": done: "))
    log.delete(rng.choice([f for f in added if f.type == "issue"]).id)
    return path, len(log.facts), log.lines


def _chunks(lines: list[tuple[int, str]], size: int) -> list[tuple[int, int, str]]:
    out: list[tuple[int, int, str]] = []
    start, buf = 0, list[str]()
    for line_no, text in lines:
        if not buf:
            start = line_no
        buf.append(text)
        if sum(len(t) for t in buf) >= size:
            out.append((start, line_no, "\n".join(buf)))
            buf = []
    if buf:
        out.append((start, lines[-1][0], "\n".join(buf)))
    return out


def write_index(dest: Path, outs: list[GeneratedSession]) -> tuple[Path, list[Path], int]:
    """Write the workspace notes and the memory index over them; returns paths and chunks."""
    notes: dict[str, list[str]] = {}
    for o in outs:
        for date, note in o.notes:
            notes.setdefault(date, []).append(note)
    folder = dest / "workspace" / "memory"
    folder.mkdir(parents=True, exist_ok=True)
    sources: list[tuple[str, str, bytes, int, list[tuple[int, int, str]]]] = []
    written: list[Path] = []
    for date in sorted(notes):
        text = f"# {date}\n\n" + "\n".join(notes[date])
        path = folder / f"{date}.md"
        path.write_text(text, encoding="utf-8")
        written.append(path)
        numbered = list(enumerate(text.splitlines(), start=1))
        mtime = int(datetime.fromisoformat(date).replace(tzinfo=UTC).timestamp() * 1000)
        sources.append(
            (
                f"memory/{date}.md",
                "memory",
                text.encode(),
                mtime + 20 * 3600_000,
                _chunks(numbered, 320),
            )
        )
    for o in [o for o in outs if o.plan.agent == "main"][:3]:
        said: list[tuple[int, str]] = []
        for line_no, raw in enumerate(o.data.splitlines(), start=1):
            msg = jsonio.loads(raw).get("message")
            if msg and msg["role"] in ("user", "assistant"):
                text = " ".join(b["text"] for b in msg["content"] if b["type"] == "text")
                if text and text != "NO_REPLY":
                    said.append((line_no, f"{msg['role'].capitalize()}: {text}"))
        chunks = _chunks(said, 1600)
        step = max(1, len(chunks) // 8)
        sources.append(
            (f"sessions/{o.file_name}", "sessions", o.data, o.updated_at, chunks[::step][:8])
        )
    texts = [c[2] for s in sources for c in s[4]]
    vectors = embed_many(texts)
    meta = {
        "model": "hash",
        "provider": "memory-context",
        "providerKey": "demo",
        "chunkTokens": 400,
        "chunkOverlap": 80,
        "vectorDims": DIM,
    }
    db_path = dest / "memory" / "main.sqlite"
    db_path.unlink(missing_ok=True)
    with closing(sqlite3.connect(db_path)) as db:
        db.executescript(INDEX_SCHEMA)
        db.execute(
            "INSERT INTO meta VALUES (?, ?)", ("memory_index_meta_v1", jsonio.dumps(meta).decode())
        )
        row = 0
        for rel, source, data, mtime, parts in sources:
            db.execute(
                "INSERT INTO files VALUES (?, ?, ?, ?, ?)",
                (rel, source, _sha(data), mtime, len(data)),
            )
            for start, end, text in parts:
                h = _sha(text.encode())
                emb = jsonio.dumps([round(float(v), 6) for v in vectors[row]]).decode()
                cid = _sha(f"{source}:{rel}:{start}:{end}:{h}:hash".encode())
                db.execute(
                    "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (cid, rel, source, start, end, h, "hash", text, emb, mtime),
                )
                db.execute(
                    "INSERT OR IGNORE INTO embedding_cache VALUES (?, ?, ?, ?, ?, ?, ?)",
                    ("memory-context", "hash", "demo", h, emb, DIM, mtime),
                )
                row += 1
        db.commit()
    return db_path, written, row


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


INDEX_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (path TEXT PRIMARY KEY, source TEXT NOT NULL DEFAULT 'memory',
  hash TEXT NOT NULL, mtime INTEGER NOT NULL, size INTEGER NOT NULL);
CREATE TABLE chunks (id TEXT PRIMARY KEY, path TEXT NOT NULL,
  source TEXT NOT NULL DEFAULT 'memory', start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL, hash TEXT NOT NULL, model TEXT NOT NULL, text TEXT NOT NULL,
  embedding TEXT NOT NULL, updated_at INTEGER NOT NULL);
CREATE TABLE embedding_cache (provider TEXT NOT NULL, model TEXT NOT NULL,
  provider_key TEXT NOT NULL, hash TEXT NOT NULL, embedding TEXT NOT NULL, dims INTEGER,
  updated_at INTEGER NOT NULL, PRIMARY KEY (provider, model, provider_key, hash));
CREATE INDEX idx_chunks_path ON chunks(path);
CREATE INDEX idx_chunks_source ON chunks(source);
"""
