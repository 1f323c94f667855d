"""bench/bench_eval.py at a tiny size (no timing asserts): both rows are timed and scored."""

from __future__ import annotations

import subprocess
import sys

import orjson

from tests.conftest import ROOT


def test_bench_eval_tiny():
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_eval", "--segments", "150", "--queries", "20",
         "--embedders", "hash"],
        cwd=ROOT, capture_output=True, check=True, timeout=300,
    )  # fmt: skip
    out = orjson.loads(done.stdout)
    assert out["segments"] == 150 and out["queries"] == 20
    row = out["hash"]
    assert {"eval_seconds", "rank_bm25_row_seconds", "target_seconds"} <= set(row)
    assert set(row["recall@10"]) == {"ranking", "agent", "rank-bm25"}
    assert all(0 <= v <= 1 for v in row["recall@10"].values())
