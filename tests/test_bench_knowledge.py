"""The knowledge-search benchmark runs at a tiny size (no timing asserts)."""

from __future__ import annotations

import subprocess
import sys

import orjson

from tests.conftest import ROOT


def test_bench_knowledge_tiny():
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_knowledge", "--facts", "50", "--queries", "5"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    result = orjson.loads(done.stdout)
    assert {"facts", "build_seconds", "query_ms_p50", "query_ms_p95", "target_p50_ms"} <= set(
        result
    )
    assert result["facts"] == 50 and result["target_p50_ms"] == 2
    assert result["query_ms_p50"] <= result["query_ms_p95"]
