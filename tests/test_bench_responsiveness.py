"""The responsiveness benchmark runs at a tiny size (no timing asserts)."""

from __future__ import annotations

import subprocess
import sys

import orjson

from tests.conftest import ROOT


def test_bench_responsiveness_tiny():
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_responsiveness", "--segments", "300"],
        cwd=ROOT,
        capture_output=True,
        check=True,
        timeout=600,
    )
    result = orjson.loads(done.stdout)
    assert result["benchmark"] == "responsiveness"
    demo, store = result["demo"], result["store"]
    assert demo["sessions"] == 12 and demo["recall_ready"] and store["recall_ready"]
    assert store["segments"] == 300
    assert demo["open_to_painted_s"] <= demo["open_to_ready_s"]
    for phase in (demo, store):
        assert phase["ticks"] > 0 and phase["longest_gap_ms"] >= phase["median_gap_ms"] >= 0
