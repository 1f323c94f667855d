"""A stand-in agent for live-mode tests: appends to a data directory at a steady rate.

Run as a separate process::

    python tests/live_writer.py ROOT [--count N | --seconds S] [--rate R]
        [--kinds transcript,segment,fact] [--split transcript,segment]
        [--session PATH] [--compaction-every K] [--flush-every K]
        [--start-delay S] [--seed N]

It writes, in turn, one line of each kind in ``--kinds``: a transcript entry
(a user or assistant message chained to the current leaf; every K-th one a
compaction, or a memory-flush prompt), a segment in ``memory/context/segments.jsonl``
and a fact in ``memory/context/knowledge.jsonl``. Kinds in ``--split`` are written
in random pieces with short pauses, as a slow writer would (never use it for a file
another process appends to: pieces of one line could be split by the other's line;
real agents write a line in one ``write``). After each line is complete it prints
``{"kind", "id", "path", "line_bytes", "t"}`` as one JSON line on stdout (``t`` is
``time.time()`` when the last byte was written), so a test knows what was written and when.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import uuid
from pathlib import Path

FLUSH_PROMPT = (
    "Pre-compaction memory flush. Store durable memories now (use memory/{date}.md; "
    "create memory/ if needed). If nothing to store, reply with NO_REPLY."
)


def last_entry(path: Path) -> tuple[str, str | None]:
    """The session id (header) and the id of the last complete entry of a transcript."""
    lines = [ln for ln in path.read_bytes().split(b"\n")[:-1] if ln.strip()]
    header = json.loads(lines[0])
    leaf = None
    for raw in reversed(lines[1:]):
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("id"), str):
            leaf = obj["id"]
            break
    return header["id"], leaf


def biggest_transcript(root: Path) -> Path:
    files = sorted(root.glob("agents/*/sessions/*.jsonl"), key=lambda p: p.stat().st_size)
    if not files:
        sys.exit(f"no transcript under {root}/agents/*/sessions")
    return files[-1]


class Writer:
    def __init__(self, args: argparse.Namespace) -> None:
        self.root = Path(args.root)
        self.rng = random.Random(args.seed)
        self.seed = args.seed
        self.split = set(filter(None, args.split.split(",")))
        self.session_path = Path(args.session) if args.session else biggest_transcript(self.root)
        self.session_id, self.leaf = last_entry(self.session_path)
        self.store = self.root / "memory" / "context"
        self.compaction_every = args.compaction_every
        self.flush_every = args.flush_every
        self.first_written: str | None = None
        self.n = {"transcript": 0, "segment": 0, "fact": 0}

    def write(self, path: Path, line: bytes, kind: str) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if kind in self.split:
                pos = 0
                while pos < len(line):
                    step = self.rng.randint(1, max(1, len(line) - pos))
                    os.write(fd, line[pos : pos + step])
                    pos += step
                    if pos < len(line) and self.rng.random() < 0.5:
                        time.sleep(self.rng.uniform(0.0005, 0.01))
            else:
                os.write(fd, line)
        finally:
            os.close(fd)

    def emit(self, kind: str, ident: str, path: Path, line: bytes) -> None:
        record = {
            "kind": kind,
            "id": ident,
            "path": str(path),
            "line_bytes": len(line),
            "t": time.time(),
        }
        sys.stdout.write(json.dumps(record) + "\n")
        sys.stdout.flush()

    def transcript(self) -> None:
        i = self.n["transcript"] = self.n["transcript"] + 1
        ident = f"{self.seed:02x}{i:06x}"[-8:]
        now = time.time()
        iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + ".000Z"
        if self.compaction_every and i % self.compaction_every == 0:
            obj = {
                "type": "compaction",
                "id": ident,
                "parentId": self.leaf,
                "timestamp": iso,
                "summary": f"## Goal\nLive writer compaction {i}.",
                "firstKeptEntryId": self.first_written or self.leaf,
                "tokensBefore": 120_000 + i,
            }
        else:
            role = "user" if i % 2 else "assistant"
            text = f"live writer message {i} (seed {self.seed})"
            if self.flush_every and i % self.flush_every == 0:
                role, text = "user", FLUSH_PROMPT.format(date=iso[:10])
            content: object = text if role == "user" else [{"type": "text", "text": text}]
            message = {"role": role, "content": content, "timestamp": int(now * 1000)}
            obj = {
                "type": "message",
                "id": ident,
                "parentId": self.leaf,
                "timestamp": iso,
                "message": message,
            }
        line = json.dumps(obj, separators=(",", ":")).encode() + b"\n"
        self.write(self.session_path, line, "transcript")
        self.leaf = ident
        self.first_written = self.first_written or ident
        self.emit("transcript", ident, self.session_path, line)

    def segment(self) -> None:
        i = self.n["segment"] = self.n["segment"] + 1
        ident = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        content = f"Live segment {i} from writer {self.seed}: the {self.rng.choice(WORDS)} {self.rng.choice(WORDS)} plan"
        obj = {
            "id": ident,
            "sessionId": self.session_id,
            "timestamp": int(time.time() * 1000),
            "role": "user" if i % 2 else "assistant",
            "content": content,
            "tokens": max(1, -(-len(content) // 3)),
            "metadata": {"topics": [], "entities": []},
        }
        line = json.dumps(obj, separators=(",", ":")).encode() + b"\n"
        path = self.store / "segments.jsonl"
        self.write(path, line, "segment")
        self.emit("segment", ident, path, line)

    def fact(self) -> None:
        i = self.n["fact"] = self.n["fact"] + 1
        ident = f"live-fact-{self.seed}-{i}"
        obj = {
            "id": ident,
            "type": self.rng.choice(["decision", "issue", "task_state", "config"]),
            "content": f"Live fact {i} from writer {self.seed}: keep the {self.rng.choice(WORDS)} switch",
            "timestamp": int(time.time() * 1000),
        }
        line = json.dumps(obj, separators=(",", ":")).encode() + b"\n"
        path = self.store / "knowledge.jsonl"
        self.write(path, line, "fact")
        self.emit("fact", ident, path, line)


WORDS = [
    "amber",
    "basalt",
    "cobalt",
    "delta",
    "ember",
    "fjord",
    "granite",
    "harbor",
    "indigo",
    "juniper",
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root")
    ap.add_argument("--count", type=int, default=0, help="lines in all (0: use --seconds)")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rate", type=float, default=20.0, help="lines per second")
    ap.add_argument("--kinds", default="transcript,segment,fact")
    ap.add_argument("--split", default="transcript,segment")
    ap.add_argument("--session", default="")
    ap.add_argument("--compaction-every", type=int, default=0)
    ap.add_argument("--flush-every", type=int, default=0)
    ap.add_argument("--start-delay", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    writer = Writer(args)
    kinds = [k for k in args.kinds.split(",") if k]
    actions = {"transcript": writer.transcript, "segment": writer.segment, "fact": writer.fact}
    time.sleep(args.start_delay)
    start = time.monotonic()
    interval = 1.0 / args.rate
    i = 0
    while True:
        if args.count and i >= args.count:
            break
        if not args.count and time.monotonic() - start >= args.seconds:
            break
        actions[kinds[i % len(kinds)]]()
        i += 1
        # A steady rate: sleep until the next slot, whatever the write took.
        delay = start + i * interval - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    return 0


if __name__ == "__main__":
    sys.exit(main())
