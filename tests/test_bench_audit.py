"""The loss-audit benchmark runs at a tiny size (no timing asserts)."""

from __future__ import annotations

import subprocess
import sys

import orjson

from tests.conftest import ROOT


def test_bench_audit_tiny():
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_audit", "--tokens", "3000", "--runs", "1"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    result = orjson.loads(done.stdout)
    assert {"tokens", "summarised_tokens", "items", "p50_s", "max_s", "target_s"} <= set(result)
    assert result["tokens"] == 3000 and result["target_s"] == 1.0
    assert result["summarised_tokens"] >= 3000 and result["summarised_messages"] > 0
    assert result["items"] > 0 and 0 <= result["loss"] <= 1
    assert result["p50_s"] <= result["max_s"]
    assert [f["compaction"] for f in result["fixtures"]] == ["2b9a9701", "dc2335c4"]
    assert all(f["items"] > 100 for f in result["fixtures"])
