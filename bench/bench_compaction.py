"""Benchmark: offline compaction plan + summary of a 200,000-token session.

Prints one JSON object. Target (2 cores): plan + offline summary <= 1 s.

    python -m bench.bench_compaction [--messages 2000] [--runs 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

import orjson

from bench.corpus import ERRORS, FILES, FUNCS, turn
from core.compaction.plan import plan_compaction
from core.compaction.summarize import summarize_plan
from core.compaction.summarizers import OfflineSummarizer
from core.transcript import context_at, context_size, parse_transcript


def make_session(messages: int, seed: int = 5) -> bytes:
    """A v3 transcript of *messages* messages, ~100 tokens each (pi's estimate)."""
    rng = random.Random(seed)
    lines = [
        {
            "type": "session",
            "version": 3,
            "id": "bench",
            "timestamp": "2026-01-01T00:00:00Z",
            "cwd": "/home/dev/p",
        }
    ]
    parent = None
    ts = 1_767_225_600_000
    for i in range(messages):
        ts += 5000
        kind = i % 3
        if kind == 0:
            msg = {
                "role": "user",
                "content": [{"type": "text", "text": turn(rng) * 2}],
                "timestamp": ts,
            }
        elif kind == 1:
            msg = {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": turn(rng)},
                    {
                        "type": "toolCall",
                        "id": f"c{i}",
                        "name": rng.choice(["read", "edit", "bash"]),
                        "arguments": {"path": rng.choice(FILES)},
                    },
                ],
                "usage": {"totalTokens": 1000 + 100 * i},
                "stopReason": "toolUse",
                "model": "m",
                "timestamp": ts,
            }
        else:
            failed = rng.random() < 0.05
            msg = {
                "role": "toolResult",
                "toolCallId": f"c{i - 1}",
                "toolName": "read",
                "content": [
                    {
                        "type": "text",
                        "text": rng.choice(ERRORS)
                        if failed
                        else f"def {rng.choice(FUNCS)}():\n" + turn(rng) * 3,
                    }
                ],
                "isError": failed,
                "timestamp": ts,
            }
        eid = f"{i + 1:08x}"
        lines.append(
            {
                "type": "message",
                "id": eid,
                "parentId": parent,
                "timestamp": "2026-01-01T00:00:00Z",
                "message": msg,
            }
        )
        parent = eid
    return b"".join(orjson.dumps(x) + b"\n" for x in lines)


def run(messages: int, runs: int) -> dict[str, object]:
    session = parse_transcript(make_session(messages), "bench.jsonl")
    tokens = context_size(context_at(session)).estimated
    plans, summaries = [], []
    calls = 0
    for _ in range(runs):
        t = time.perf_counter()
        plan = plan_compaction(session)
        plans.append(time.perf_counter() - t)
        t = time.perf_counter()
        result = summarize_plan(plan, OfflineSummarizer())
        summaries.append(time.perf_counter() - t)
        calls = result.calls
    total = [p + s for p, s in zip(plans, summaries, strict=True)]
    return {
        "benchmark": "compaction",
        "messages": messages,
        "tokens": tokens,
        "plan_ms_p50": round(statistics.median(plans) * 1000, 2),
        "summary_ms_p50": round(statistics.median(summaries) * 1000, 2),
        "plan_and_summary_s_p50": round(statistics.median(total), 4),
        "target_s": 1.0,
        "summary_calls": calls,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    sys.stdout.buffer.write(orjson.dumps(run(args.messages, args.runs)) + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
