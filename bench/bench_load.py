"""Benchmark: loading a large transcript and a 20,000-segment store.

Prints one JSON object. Targets (2 cores): transcript load >= 50 MB/s of JSONL;
20,000 segments + vectors.bin loaded in <= 1 s.

    python -m bench.bench_load [--lines 200000] [--segments 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
import orjson

from core.store.segments import load_segments
from core.store.vectors import load_vectors, write_vectors
from core.transcript import load_transcript

WORDS = (
    "parser config session token budget compaction summary fixture test module "
    "function error path build index vector segment knowledge recall trim cache"
).split()


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def make_transcript(path: Path, lines: int, seed: int = 1) -> int:
    """Write a v3 transcript of *lines* lines shaped like a coding agent's."""
    rng = random.Random(seed)
    ts = 1_760_000_000_000
    out = [
        orjson.dumps(
            {
                "type": "session",
                "version": 3,
                "id": str(uuid.UUID(int=seed)),
                "timestamp": "2026-01-01T00:00:00.000Z",
                "cwd": "/home/dev/p",
            }
        )
    ]
    parent = None
    for i in range(1, lines):
        eid = f"{i:08x}"
        ts += rng.randint(200, 5000)
        kind = i % 3
        if kind == 1:
            msg = {
                "role": "user",
                "content": [{"type": "text", "text": _text(rng, rng.randint(5, 60))}],
                "timestamp": ts,
            }
        elif kind == 2:
            msg = {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": _text(rng, rng.randint(10, 80))},
                    {
                        "type": "toolCall",
                        "id": f"toolu_{i}",
                        "name": "read",
                        "arguments": {"path": f"src/{rng.choice(WORDS)}.py"},
                    },
                ],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "usage": {
                    "input": 10,
                    "output": 50,
                    "cacheRead": 1000 + i,
                    "cacheWrite": 0,
                    "totalTokens": 1060 + i,
                },
                "stopReason": "toolUse",
                "timestamp": ts,
            }
        else:
            msg = {
                "role": "toolResult",
                "toolCallId": f"toolu_{i - 1}",
                "toolName": "read",
                "content": [{"type": "text", "text": _text(rng, rng.randint(20, 400))}],
                "isError": False,
                "timestamp": ts,
            }
        out.append(
            orjson.dumps(
                {
                    "type": "message",
                    "id": eid,
                    "parentId": parent,
                    "timestamp": "2026-01-01T00:00:00.000Z",
                    "message": msg,
                }
            )
        )
        parent = eid
    data = b"\n".join(out) + b"\n"
    path.write_bytes(data)
    return len(data)


def make_store(folder: Path, count: int, dim: int = 384, seed: int = 2) -> None:
    """Write segments.jsonl and vectors.bin with *count* segments."""
    rng = random.Random(seed)
    now = int(time.time() * 1000)
    ids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(count)]
    lines = []
    for i, sid in enumerate(ids):
        content = _text(rng, rng.randint(10, 80))
        lines.append(
            orjson.dumps(
                {
                    "id": sid,
                    "sessionId": f"s{i % 12}",
                    "timestamp": now - (count - i) * 60_000,
                    "role": "user" if i % 2 else "assistant",
                    "content": content,
                    "tokens": -(-len(content) // 3),
                    "metadata": {"topics": ["programming"], "entities": []},
                }
            )
        )
    (folder / "segments.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    matrix = np.random.default_rng(seed).standard_normal((count, dim)).astype(np.float32)
    write_vectors(folder / "vectors.bin", ids, matrix, dim)


def _best(fn, repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times)


def run(lines: int, segments: int, repeat: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        size = make_transcript(root / "t.jsonl", lines)
        best, median = _best(lambda: load_transcript(root / "t.jsonl"), repeat)
        session = load_transcript(root / "t.jsonl")
        # Messages are normalised on first use; report that cost too.
        norm, _ = _best(lambda: [e.message for e in session.entries] and None, 1)
        make_store(root, segments)

        def store() -> None:
            load_segments(root / "segments.jsonl")
            load_vectors(root / "vectors.bin")

        s_best, s_median = _best(store, repeat)
    return {
        "benchmark": "load",
        "transcript": {
            "lines": lines,
            "bytes": size,
            "seconds_best": round(best, 4),
            "seconds_median": round(median, 4),
            "mb_per_s": round(size / best / 1e6, 1),
            "target_mb_per_s": 50,
            "normalise_all_messages_seconds": round(norm, 4),
            "mb_per_s_with_normalising": round(size / (best + norm) / 1e6, 1),
        },
        "store": {
            "segments": segments,
            "seconds_best": round(s_best, 4),
            "seconds_median": round(s_median, 4),
            "target_seconds": 1.0,
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--segments", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    sys.stdout.buffer.write(orjson.dumps(run(args.lines, args.segments, args.repeat)) + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
