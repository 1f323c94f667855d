"""A stand-in OpenClaw agent for the soak test: writes a data directory as the agent does.

Two steps, both seeded (the same seed and the same number of writes give the same
content; only the timestamps are the wall clock's, as an agent's are)::

    python -m tests.soak.writer init ROOT [--seed N]
    python -m tests.soak.writer run ROOT [--seconds S | --count N] [--rate R]
        [--cycle K] [--seed N] [--log PATH]

``init`` writes an OpenClaw home (JSONL era): ``openclaw.json``, two transcripts and
``sessions.json`` under ``agents/main/sessions``, and ``memory/context/segments.jsonl``
and ``knowledge.jsonl``. ``run`` then behaves like the running agent: turns of a user
message, assistant tool calls, ``toolResult`` messages and a final answer (each entry
one line, appended in one ``write``), a ``custom`` cache-ttl entry per turn, a segment
per user or assistant text, facts extracted now and then (added, edited, superseded,
deleted), and ``sessions.json`` rewritten by a rename after each turn. Once every
*cycle* writes it also: branches from an older entry (a ``branch_summary`` whose
``parentId`` is an entry two turns back, as pi's ``/tree``), flushes memory and
compacts the main session, starts a new session (a new transcript file and its
``sessions.json`` entry), and truncates an older transcript and rewrites it (the
repair of an interrupted turn: the same entries without the last turn), in two
writes with a pause between them so a reader can see the file empty or half written.

``run`` writes at a steady *rate* of writes per second (a write is one line or one
``sessions.json`` replacement; the truncate-and-rewrite counts as one) and appends one
JSON object per write to ``--log`` (``{"n", "kind", "path", "bytes", "t"}``), so the
harness knows what was written and when. It never writes to stdout in a loop (a full
pipe would block the agent).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FLUSH_PROMPT = (
    "Pre-compaction memory flush. Store durable memories now (use memory/{date}.md; "
    "create memory/ if needed). If nothing to store, reply with NO_REPLY."
)
CONFIG = """// OpenClaw configuration written by the memlens soak writer.
{
  agents: {
    defaults: {
      workspace: "~/.openclaw/workspace",
      contextTokens: 200000,
      compaction: { mode: "safeguard", memoryFlush: { enabled: true } },
      memoryContext: {
        enabled: true,
        embeddingModel: "hash",
        maxSegments: 20000,
        evictionDays: 90,
      },
    },
    list: [{ id: "main", default: true }],
  },
}
"""
MODEL = "claude-sonnet-4-5"
WORDS = (
    "amber basalt cobalt delta ember fjord granite harbor indigo juniper kestrel lumen "
    "meadow nickel orchid pylon quartz raven sierra tundra umber vortex willow xenon "
    "yarrow zephyr parser cache schema socket worker index budget ledger"
).split()
TOOLS = ("read", "bash", "edit", "write", "grep")
FACT_TYPES = ("decision", "implementation", "config", "issue", "task_state", "architecture")


def _iso(seconds: float) -> str:
    ms = int(seconds * 1000) % 1000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{ms:03d}Z"


def _line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


@dataclass(slots=True)
class Transcript:
    """What the agent knows of one of its session files."""

    key: str
    sid: str
    path: Path
    leaf: str | None = None
    lines: list[bytes] = field(default_factory=list)
    """Every line of the file, header included (for the rewrite)."""
    turns: list[tuple[int, str]] = field(default_factory=list)
    """(line count before the turn, id of its user message) of each turn on the path."""
    path_ids: list[str] = field(default_factory=list)
    """Message ids on the current path, oldest first (compaction picks a kept one)."""
    context: int = 6000
    compactions: int = 0
    flush_at: int | None = None
    updated: int = 0


class Agent:
    """The agent's state and its writes (see the module docstring)."""

    def __init__(
        self, root: Path, seed: int, log: Path | None = None, *, pauses: bool = True
    ) -> None:
        self.root = root
        self.rng = random.Random(seed)
        self.seed = seed
        self.sessions_dir = root / "agents" / "main" / "sessions"
        self.store = root / "memory" / "context"
        self.workspace = root / "workspace" / "memory"
        self.transcripts: dict[str, Transcript] = {}
        self.facts: list[str] = []
        """Ids of live facts (neither deleted nor superseded)."""
        self.fact_records: dict[str, dict[str, Any]] = {}
        self.n = 0
        self.counts: dict[str, int] = {}
        self.new_sessions = 0
        self._log = open(log, "ab") if log is not None else None
        self._dry = False
        self.pauses = pauses
        """Pause inside the truncate-and-rewrite (off: only for fast tests of the writer)."""
        """Replaying: change the state as each write would, write nothing."""

    # -- low level ----------------------------------------------------------------------
    def _uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def _eid(self) -> str:
        return f"{self.rng.getrandbits(32):08x}"

    def _words(self, lo: int, hi: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(lo, hi)))

    def _record(self, kind: str, path: Path, size: int) -> None:
        if self._dry:
            return
        self.n += 1
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if self._log is not None:
            rec = {"n": self.n, "kind": kind, "path": str(path), "bytes": size, "t": time.time()}
            self._log.write(_line(rec))
            self._log.flush()

    def append(self, path: Path, line: bytes, kind: str) -> None:
        """One whole line in one ``write`` (O_APPEND), as the agents do."""
        if self._dry:
            return
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
        self._record(kind, path, len(line))

    # -- transcripts ----------------------------------------------------------------------
    def new_transcript(self, key: str) -> Any:
        """A new session file: its header, then pi's first entries (a generator of writes)."""
        sid = self._uuid()
        t = Transcript(key, sid, self.sessions_dir / f"{sid}.jsonl")
        self.transcripts[key] = t
        header = {"type": "session", "version": 3, "id": sid, "timestamp": _iso(time.time())}
        header["cwd"] = "/home/dev/projects/soak"
        line = _line(header)
        t.lines.append(line)
        self.append(t.path, line, "header")
        yield
        self.entry(t, "model_change", provider="anthropic", modelId=MODEL)
        yield
        self.entry(t, "thinking_level_change", thinkingLevel="medium")
        yield

    def entry(self, t: Transcript, type_: str, **fields: Any) -> str:
        eid = self._eid()
        obj = {"type": type_, "id": eid, "parentId": t.leaf, "timestamp": _iso(time.time())}
        obj.update(fields)
        line = _line(obj)
        t.lines.append(line)
        self.append(t.path, line, type_)
        t.leaf = eid
        return eid

    def message(self, t: Transcript, message: dict[str, Any]) -> str:
        message["timestamp"] = int(time.time() * 1000)
        eid = self.entry(t, "message", message=message)
        t.path_ids.append(eid)
        return eid

    def turn(self, t: Transcript, *, text: str | None = None) -> Any:
        """One user turn, write by write (a generator: each ``yield`` follows one write)."""
        start = len(t.lines)
        ask = text or f"Please {self._words(3, 9)} in the {self.rng.choice(WORDS)} module."
        uid = self.message(t, {"role": "user", "content": ask})
        t.turns.append((start, uid))
        yield
        self.segment(t, "user", ask)
        yield
        for _ in range(self.rng.choice((1, 1, 2, 3))):
            calls = []
            for _ in range(self.rng.choice((1, 1, 2))):
                name = self.rng.choice(TOOLS)
                call_id = "toolu_" + f"{self.rng.getrandbits(64):016x}"
                args = {"path": f"src/{self.rng.choice(WORDS)}.py"}
                if name == "bash":
                    args = {"command": f"pytest -q tests/test_{self.rng.choice(WORDS)}.py"}
                calls.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
            blocks: list[dict[str, Any]] = []
            if self.rng.random() < 0.3:
                blocks.append({"type": "thinking", "thinking": self._words(10, 40)})
            self.message(t, self._assistant([*blocks, *calls], "toolUse", t))
            yield
            for call in calls:
                body = "\n".join(self._words(6, 14) for _ in range(self.rng.randint(2, 60)))
                result = {
                    "role": "toolResult",
                    "toolCallId": call["id"],
                    "toolName": call["name"],
                    "content": [{"type": "text", "text": body}],
                    "isError": self.rng.random() < 0.08,
                }
                t.context += len(body) // 4
                self.message(t, result)
                yield
        answer = f"Done: {self._words(8, 30)}."
        self.message(t, self._assistant([{"type": "text", "text": answer}], "stop", t))
        yield
        self.segment(t, "assistant", answer)
        yield
        self.entry(
            t,
            "custom",
            customType="openclaw.cache-ttl",
            data={"timestamp": int(time.time() * 1000), "provider": "anthropic", "modelId": MODEL},
        )
        yield

    def _assistant(self, blocks: list[dict[str, Any]], stop: str, t: Transcript) -> dict[str, Any]:
        out = self.rng.randint(20, 400)
        t.context += out
        usage = {
            "input": self.rng.randint(3, 40),
            "output": out,
            "cacheRead": max(0, t.context - 2000),
            "cacheWrite": 1900,
            "totalTokens": t.context + out,
            "cost": {
                "input": 0.0,
                "output": 0.0,
                "cacheRead": 0.0,
                "cacheWrite": 0.0,
                "total": 0.0,
            },
        }
        return {
            "role": "assistant",
            "content": blocks,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": MODEL,
            "usage": usage,
            "stopReason": stop,
        }

    # -- the special events ----------------------------------------------------------------
    def branch(self, t: Transcript) -> Any:
        """Go back two turns (pi's /tree): a branch summary hangs off the older entry."""
        if len(t.turns) < 3:
            return
        _, older_user = t.turns[-2]
        # the entry just before that turn's user message: the point the user went back to
        idx = t.path_ids.index(older_user) if older_user in t.path_ids else -1
        if idx <= 0:
            return
        target = t.path_ids[idx - 1]
        from_id = t.leaf
        t.leaf = target
        t.path_ids = t.path_ids[:idx]
        t.turns = t.turns[:-2]
        summary = f"The user went back: the {self._words(2, 5)} attempt was dropped."
        self.entry(t, "branch_summary", fromId=from_id, summary=summary)
        yield
        self.entry(t, "label", targetId=t.leaf, label="retry: smaller change")
        yield

    def compact(self, t: Transcript) -> Any:
        """The memory flush turn, its note, then the compaction entry and the store's counters."""
        date = _iso(time.time())[:10]
        yield from self.turn(t, text=FLUSH_PROMPT.format(date=date))
        note = self.workspace / f"{date}.md"
        self.workspace.mkdir(parents=True, exist_ok=True)
        with open(note, "a", encoding="utf-8") as fh:
            fh.write(f"- {self._words(5, 12)}\n")
        t.flush_at = int(time.time() * 1000)
        self.write_store()
        yield
        kept = t.path_ids[-min(len(t.path_ids), 6)]
        before = t.context
        t.context = 6000 + before // 10
        t.compactions += 1
        summary = f"## Goal\n{self._words(6, 12)}\n\n## Progress\n{self._words(20, 60)}"
        details = {"readFiles": ["src/a.py"], "modifiedFiles": ["src/b.py"]}
        self.entry(
            t,
            "compaction",
            summary=summary,
            firstKeptEntryId=kept,
            tokensBefore=before,
            details=details,
        )
        yield
        self.write_store()
        yield

    def rewrite(self, t: Transcript) -> Any:
        """Truncate *t* and write it again without its last turn, in two writes."""
        if len(t.turns) < 3:
            return
        start, user = t.turns.pop()
        keep = t.lines[:start]
        t.lines = keep
        t.leaf = json.loads(keep[-1]).get("id")
        if user in t.path_ids:
            t.path_ids = t.path_ids[: t.path_ids.index(user)]
        data = b"".join(keep)
        cut = len(b"".join(keep[: len(keep) // 2]))
        fd = os.open(t.path, os.O_WRONLY | os.O_TRUNC)
        try:
            # a reader may look between the truncation and each part
            time.sleep(self.rng.choice((0.0, 0.05, 0.3)) * self.pauses)
            os.write(fd, data[:cut])
            time.sleep(self.rng.choice((0.0, 0.05, 0.3)) * self.pauses)
            os.write(fd, data[cut:])
        finally:
            os.close(fd)
        self._record("rewrite", t.path, len(data))
        yield

    # -- memory-context and the store ------------------------------------------------------
    def segment(self, t: Transcript, role: str, content: str) -> None:
        obj = {
            "id": self._uuid(),
            "sessionId": t.sid,
            "sessionKey": t.key,
            "timestamp": int(time.time() * 1000),
            "role": role,
            "content": content,
            "tokens": max(1, math.ceil(len(content) / 3)),
            "metadata": {"topics": ["programming"], "entities": []},
        }
        self.append(self.store / "segments.jsonl", _line(obj), "segment")

    def fact(self) -> None:
        """Knowledge extraction: mostly new facts, sometimes an edit, a supersede, a delete."""
        roll = self.rng.random()
        now = int(time.time() * 1000)
        path = self.store / "knowledge.jsonl"
        if len(self.facts) < 5 or roll < 0.6:
            fid = self._uuid()
            rec = {
                "id": fid,
                "type": self.rng.choice(FACT_TYPES),
                "content": f"Soak fact: {self._words(4, 14)}",
                "context": "soak",
                "timestamp": now,
            }
            self.facts.append(fid)
            records = [rec]
        elif roll < 0.8:
            fid = self.rng.choice(self.facts)
            rec = dict(self.fact_records[fid], content=f"Edited: {self._words(4, 10)}")
            rec["timestamp"] = now
            records = [rec]
        elif roll < 0.92:
            old = self.rng.choice(self.facts)
            new = {
                "id": self._uuid(),
                "type": self.fact_records[old]["type"],
                "content": f"Supersedes: {self._words(4, 10)}",
                "timestamp": now,
            }
            marked = dict(self.fact_records[old], supersededBy=new["id"])
            self.facts.remove(old)
            self.facts.append(new["id"])
            records = [new, marked]
        else:
            fid = self.rng.choice(self.facts)
            self.facts.remove(fid)
            records = [dict(self.fact_records[fid], _deleted=True)]
        for rec in records:
            self.fact_records[rec["id"]] = rec
        # a supersede is two lines in one write, as memlens and the agent both do
        self.append(path, b"".join(_line(r) for r in records), "fact")

    def write_store(self) -> None:
        """``sessions.json`` as OpenClaw saves it: 2-space JSON, written and renamed."""
        store: dict[str, Any] = {}
        for t in self.transcripts.values():
            entry: dict[str, Any] = {
                "sessionId": t.sid,
                "updatedAt": t.updated or int(time.time() * 1000),
                "sessionFile": t.path.name,
                "compactionCount": t.compactions,
                "totalTokens": t.context,
                "totalTokensFresh": True,
                "contextTokens": 200_000,
                "channelMeta": {"provider": t.key.split(":")[2]},
            }
            if t.flush_at is not None:
                entry["memoryFlushAt"] = t.flush_at
                entry["memoryFlushCompactionCount"] = t.compactions
            store[t.key] = entry
        path = self.sessions_dir / "sessions.json"
        tmp = path.with_name(f"sessions.json.{os.getpid()}.tmp")
        data = json.dumps(store, indent=2).encode() + b"\n"
        if self._dry:
            return
        tmp.write_bytes(data)
        os.replace(tmp, path)
        self._record("store", path, len(data))

    # -- the two steps ------------------------------------------------------------------------
    def init(self, *, turns: int = 12, facts: int = 30) -> None:
        """The home as the app finds it when it opens: two sessions, a store, facts."""
        if not self._dry:
            self.sessions_dir.mkdir(parents=True, exist_ok=True)
            self.store.mkdir(parents=True, exist_ok=True)
            self.workspace.mkdir(parents=True, exist_ok=True)
            (self.root / "openclaw.json").write_text(CONFIG, encoding="utf-8")
            (self.store / "segments.jsonl").touch()
            (self.store / "knowledge.jsonl").touch()
        for key in ("agent:main:main", "agent:main:discord:channel:1"):
            for _ in self.new_transcript(key):
                pass
            t = self.transcripts[key]
            for _ in range(turns):
                for _ in self.turn(t):
                    pass
            self.entry(t, "session_info", name=f"soak {key.split(':')[2]}")
            t.updated = int(time.time() * 1000)
        for _ in range(facts):
            self.fact()
        self.write_store()

    def replay_init(self) -> None:
        """The state ``init`` left (``run`` is another process): the same seed, replayed.

        ``init`` runs again without writing, for the random state and the ids; then each
        transcript's lines are read back from the files (their timestamps are the first
        run's).
        """
        self._dry = True
        try:
            self.init()
        finally:
            self._dry = False
        for t in self.transcripts.values():
            t.lines = t.path.read_bytes().splitlines(keepends=True)

    def steps(self, cycle: int) -> Any:
        """Every write of the run, forever (the caller stops): a generator of writes."""
        main = self.transcripts["agent:main:main"]
        side = self.transcripts["agent:main:discord:channel:1"]
        active = [main, side]
        done: set[str] = set()
        turn_no = 0
        while True:
            phase = (self.n % cycle) / cycle
            if phase < 0.1:
                done.clear()
            event = None
            for name, at in (("branch", 0.2), ("compact", 0.4), ("new", 0.6), ("rewrite", 0.8)):
                if phase >= at and name not in done:
                    event = name
                    break
            if event is not None:
                done.add(event)
                if event == "branch":
                    yield from self.branch(main)
                elif event == "compact":
                    yield from self.compact(main)
                elif event == "new":
                    self.new_sessions += 1
                    key = f"agent:main:telegram:direct:{1000 + self.new_sessions}"
                    yield from self.new_transcript(key)
                    self.write_store()
                    yield
                    active = [main, side, self.transcripts[key]]
                else:
                    yield from self.rewrite(side if len(side.turns) >= 3 else main)
                continue
            t = active[turn_no % len(active)] if turn_no % 2 else main
            turn_no += 1
            yield from self.turn(t)
            if self.rng.random() < 0.5:
                self.fact()
                yield
            t.updated = int(time.time() * 1000)
            self.write_store()
            yield


def init_home(root: Path, seed: int = 1) -> None:
    """Write the starting home under *root* (what ``init`` does)."""
    Agent(root, seed).init()


def run(
    root: Path,
    *,
    seed: int = 1,
    seconds: float = 10.0,
    count: int = 0,
    rate: float = 40.0,
    cycle: int = 400,
    log: Path | None = None,
    pauses: bool = True,
) -> dict[str, int]:
    """Write like the running agent (see the module docstring); returns writes by kind."""
    agent = Agent(root, seed, log, pauses=pauses)
    agent.replay_init()
    steps = agent.steps(cycle)
    start = time.monotonic()
    interval = 1.0 / rate
    while True:
        if count and agent.n >= count:
            break
        if not count and time.monotonic() - start >= seconds:
            break
        next(steps)
        # A steady rate: sleep until the next slot, whatever the write took.
        delay = start + agent.n * interval - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    return dict(agent.counts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("step", choices=("init", "run"))
    ap.add_argument("root")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--count", type=int, default=0, help="writes in all (0: use --seconds)")
    ap.add_argument("--rate", type=float, default=40.0, help="writes per second")
    ap.add_argument("--cycle", type=int, default=400, help="writes between special events")
    ap.add_argument("--log", default="", help="append one JSON line per write here")
    ap.add_argument("--no-pauses", action="store_true", help="rewrite without pauses")
    args = ap.parse_args(argv)
    root = Path(args.root)
    if args.step == "init":
        init_home(root, args.seed)
        return 0
    counts = run(
        root,
        seed=args.seed,
        seconds=args.seconds,
        count=args.count,
        rate=args.rate,
        cycle=args.cycle,
        log=Path(args.log) if args.log else None,
        pauses=not args.no_pauses,
    )
    sys.stdout.write(json.dumps(counts, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
