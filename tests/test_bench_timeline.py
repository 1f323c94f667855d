"""The timeline benchmark runs at a tiny size (no timing asserts)."""

from __future__ import annotations

import subprocess
import sys

import orjson

from tests.conftest import ROOT


def test_bench_timeline_tiny():
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_timeline", "--messages", "400", "--runs", "1"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    result = orjson.loads(done.stdout)
    assert result["benchmark"] == "timeline" and result["messages"] >= 400
    assert result["compactions"] >= 1 and result["branches"] == 1
    assert {"build_ms_p50", "set_timeline_ms_p50", "paint_full_ms_p50"} <= result.keys()
    assert result["paint_zoomed_200_ms_p50"] >= 0
    points = result["tool_result_points"]
    assert points["drawn_zoomed"] < points["original"]  # clipped to the 200 messages in view
