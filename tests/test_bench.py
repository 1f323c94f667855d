"""Every benchmark runs at a tiny size, so none of them can rot (no timing asserts)."""

from __future__ import annotations

import subprocess
import sys

import orjson

from tests.conftest import ROOT


def test_bench_load_tiny():
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.bench_load",
            "--lines",
            "300",
            "--segments",
            "200",
            "--repeat",
            "1",
        ],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    result = orjson.loads(done.stdout)
    assert result["transcript"]["lines"] == 300 and result["transcript"]["bytes"] > 0
    assert result["store"]["segments"] == 200


def test_bench_recall_tiny():
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_recall", "--segments", "300", "--queries", "10"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    result = orjson.loads(done.stdout)
    assert result["segments"] == 300
    assert {"p50_ms", "p95_ms"} <= result["hybrid"].keys()
    assert {"p50_ms", "p95_ms"} <= result["rank_bm25_pipeline"].keys()
    assert result["add_segment"]["p50_ms"] >= 0 and result["open_seconds"] >= 0


def test_bench_compaction_tiny():
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_compaction", "--messages", "60", "--runs", "1"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    result = orjson.loads(done.stdout)
    assert result["messages"] == 60 and result["tokens"] > 0
    assert {"plan_ms_p50", "summary_ms_p50", "plan_and_summary_s_p50"} <= result.keys()
