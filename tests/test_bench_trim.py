"""The trim benchmark runs at a tiny size (no timing asserts)."""

from __future__ import annotations

import subprocess
import sys

import orjson

from tests.conftest import ROOT


def test_bench_trim_tiny():
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_trim", "--messages", "50", "--runs", "2"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    result = orjson.loads(done.stdout)
    assert {"messages", "tokens", "p50_ms", "p95_ms", "target_p50_ms"} <= set(result)
    assert result["messages"] == 50 and result["target_p50_ms"] == 50
    assert result["tokens"] > 0 and result["p50_ms"] <= result["p95_ms"]
    assert result["tokens_after"] <= result["tokens"]
