"""Benchmark: a what-if replay of a 2,000-message session.

The seeded pi-shaped transcript of :mod:`bench.bench_timeline` (tool calls and
results, bash runs, usage that follows the context, a compaction each time the
context passes 180,000 tokens, one abandoned branch), replayed by
:func:`core.compaction.whatif.replay_whatif` with the session's own settings and on a
128k model (``--model gpt-4o``). Prints one JSON object; the budget is 2 s a replay.

Separately, the replay followed by its loss audit
(:func:`core.compaction.whatif_audit.audit_whatif`, what each real and simulated
compaction would have lost), timed once: the audit is the What-if tab's second job,
after the replay's figures are drawn.

    python -m bench.bench_whatif [--messages 2000] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import orjson

from bench.bench_timeline import synthetic_session
from core.compaction.whatif import replay_whatif
from core.compaction.whatif_audit import audit_whatif
from core.compaction.whatif_report import whatif_settings


def run(messages: int, runs: int) -> dict[str, object]:
    """Time the replay under the own settings and a 128k preset."""
    session = synthetic_session(messages)
    out: dict[str, object] = {
        "benchmark": "whatif",
        "messages": len(session.messages()),
        "real_compactions": len(session.compaction_entries()),
        "budget_s": 2.0,
    }
    for name, model in (("own", None), ("gpt-4o", "gpt-4o")):
        settings, own = whatif_settings(session, model=model)
        times: list[float] = []
        result = None
        for _ in range(runs):
            t0 = time.perf_counter()
            result = replay_whatif(session, settings, own=own.compaction)
            times.append(time.perf_counter() - t0)
        assert result is not None
        t0 = time.perf_counter()
        audited = replay_whatif(session, settings, own=own.compaction)
        t1 = time.perf_counter()
        audit = audit_whatif(audited, session)
        t2 = time.perf_counter()
        losses = [*audit.real, *audit.simulated]
        out[name] = {
            "window": settings.compaction.window,
            "simulated_compactions": len(result.simulated),
            "overflows": len(result.overflows),
            "replay_ms_p50": round(statistics.median(times) * 1000, 1),
            "replay_ms_max": round(max(times) * 1000, 1),
            "replay_with_audit_ms": round((t2 - t0) * 1000, 1),
            "audit_ms": round((t2 - t1) * 1000, 1),
            "audited_compactions": len(losses),
            "items_lost_for_good": sum(x.total.lost for x in losses),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the benchmark's JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    sys.stdout.buffer.write(orjson.dumps(run(args.messages, args.runs)) + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
