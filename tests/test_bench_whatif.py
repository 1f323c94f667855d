"""The what-if benchmark runs at a tiny size (no timing asserts)."""

from __future__ import annotations

import subprocess
import sys

import orjson

from tests.conftest import ROOT


def test_bench_whatif_tiny():
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_whatif", "--messages", "300", "--runs", "1"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    result = orjson.loads(done.stdout)
    assert result["benchmark"] == "whatif" and result["messages"] >= 300
    assert result["budget_s"] == 2.0
    for name, window in (("own", 200_000), ("gpt-4o", 128_000)):
        row = result[name]
        assert row["window"] == window and row["replay_ms_p50"] >= 0
        assert row["replay_with_audit_ms"] >= row["audit_ms"] >= 0
        assert (
            row["audited_compactions"] == row["simulated_compactions"] + result["real_compactions"]
        )
    assert result["gpt-4o"]["simulated_compactions"] >= result["own"]["simulated_compactions"]
