"""bench_config runs at a tiny size, so it cannot rot (no timing asserts)."""

from __future__ import annotations

import subprocess
import sys

import json5
import orjson

from bench.bench_config import make_config
from tests.conftest import ROOT


def test_bench_config_tiny() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.bench_config",
            "--mb",
            "0.2",
            "--old-mb",
            "0.02",
            "--runs",
            "1",
        ],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    result = orjson.loads(done.stdout)
    assert result["benchmark"] == "config" and result["problems"] == 0
    assert result["file_bytes"] >= 200_000 and result["small_file_bytes"] >= 20_000
    assert result["new_mb_per_s"] > 0 and result["new_cpu_mb_per_s"] > 0
    assert result["old_json5_small_mb_per_s"] > 0


def test_generated_config_is_valid_json5_of_about_the_size_asked() -> None:
    text = make_config(50_000)
    assert 50_000 <= len(text.encode()) < 60_000
    assert "//" in text and "/*" in text and ",\n      }," in text
    raw = json5.loads(text)
    assert raw["agents"]["list"][0]["id"] == "agent-000000"
    assert raw["models"]["providers"]["p0"]["models"][0]["id"] == "model-0"
