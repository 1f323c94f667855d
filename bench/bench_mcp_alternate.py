"""Benchmark: two trees' ``memory_search``, alternated query by query (issue 18).

A 2-core VM can change pace by 1.5x within seconds (``bench_mcp_search`` prints
``python_loop_ms`` to show it), so two single runs of :mod:`bench.bench_mcp_search`
cannot say which of two versions is faster. This one starts one long-lived process
per tree (each imports that tree's ``core``), gives both the same index, and asks them
for the same query in turn, the order swapped every query, ROUNDS times over QUERIES
queries: both versions see the same pace. It prints, per tree, the p25 / p50 / p75 /
p95 in ms of every search it timed, and the p50 of each tree's searches as measured in
the same minute as the other's.

    python -m bench.bench_mcp_alternate OLD_TREE NEW_TREE [--mode lazy|all|fts]
        [--queries 60] [--rounds 5] [--chunks 50000] [--dir DIR]

``--mode``: ``lazy`` the MCP tool's hybrid search (``rank_all=False``), ``all`` the
app's (every candidate ranked), ``fts`` keyword-only. A tree is a checkout of this
repository (``git worktree add /tmp/old COMMIT``), run with this interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.bench_mcp_search import _ms, build_index

SERVE = r"""
import os, sys, time
sys.path.insert(0, os.getcwd())
from pathlib import Path
from bench.bench_mcp_search import FixedEmbedder, NOW, queries, query_vectors
from core.openclaw.memindex import open_memory_index
from core.openclaw.memsearch import memory_search
path, n, mode = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
qs, emb = queries(n), FixedEmbedder(query_vectors(n))
def search(index, i):
    emb.at = i
    if mode == "fts":
        return memory_search(index, qs[i], now_ms=NOW, embedder=None)
    return memory_search(index, qs[i], now_ms=NOW, embedder=emb, rank_all=mode == "all")
with open_memory_index(path) as index:
    for i in range(min(n, 5)):  # the matrix and the kept tables built
        search(index, i)
    print("ready", flush=True)
    for line in sys.stdin:
        i = int(line)
        t = time.perf_counter()
        search(index, i)
        print(f"{time.perf_counter() - t:.6f}", flush=True)
"""


def _pcts(samples: list[float]) -> dict[str, float]:
    """:func:`bench.bench_mcp_search._ms`'s p50 / p95, with the p25 and p75."""
    s = sorted(samples)
    quarter = {f"p{q}_ms": round(s[int(q / 100 * (len(s) - 1))] * 1000, 3) for q in (25, 75)}
    return {**_ms(samples), **quarter}


def run(trees: list[Path], index: Path, n: int, rounds: int, mode: str) -> dict[str, Any]:
    """Alternate *trees*' searches of *index*; their figures."""
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    procs = []
    try:
        for tree in trees:
            p = subprocess.Popen(
                [sys.executable, "-c", SERVE, str(index), str(n), mode],
                cwd=tree, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            procs.append(p)
            assert p.stdout is not None
            if p.stdout.readline().strip() != "ready":
                raise RuntimeError(f"the search process of {tree} did not start")
        times: list[list[float]] = [[] for _ in trees]
        per_round: list[list[float]] = [[] for _ in trees]
        for r in range(rounds):
            this_round: list[list[float]] = [[] for _ in trees]
            for i in range(n):
                order = range(len(trees)) if (i + r) % 2 == 0 else reversed(range(len(trees)))
                for k in order:
                    p = procs[k]
                    assert p.stdin is not None and p.stdout is not None
                    p.stdin.write(f"{i}\n")
                    p.stdin.flush()
                    this_round[k].append(float(p.stdout.readline()))
            for k in range(len(trees)):
                times[k] += this_round[k]
                per_round[k].append(round(statistics.median(this_round[k]) * 1000, 3))
    finally:
        for p in procs:
            if p.stdin is not None:
                p.stdin.close()
            p.wait(timeout=60)
    return {
        "benchmark": "mcp_alternate",
        "mode": mode,
        "queries": n,
        "rounds": rounds,
        "trees": [
            {"tree": str(t), **_pcts(x), "p50_per_round_ms": pr}
            for t, x, pr in zip(trees, times, per_round, strict=True)
        ],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trees", nargs=2, type=Path, help="two checkouts of this repository")
    ap.add_argument("--mode", choices=("lazy", "all", "fts"), default="lazy")
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--chunks", type=int, default=50_000)
    ap.add_argument("--dir", type=Path, default=None, help="the index is built here (kept)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.dir or Path(tmp)
        index = folder / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
        if not index.exists():
            build_index(index, args.chunks)
        out = run([t.resolve() for t in args.trees], index, args.queries, args.rounds, args.mode)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
