"""The embedding benchmark runs at a tiny size, so it cannot rot (no timing asserts)."""

from __future__ import annotations

import subprocess
import sys

import orjson

from tests.conftest import ROOT


def test_bench_embed_tiny():
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_embed", "--texts", "8", "--repeat", "1"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    result = orjson.loads(done.stdout)
    assert result["benchmark"] == "embed" and result["texts"] == 8
    for key in ("numpy", "torch", "numpy_over_torch", "min_cosine_numpy_vs_torch"):
        assert key in result
    if result["numpy"] is None:  # the optional model package is not installed
        assert "skipped" in result and result["torch"] is None
        return
    assert result["numpy"]["texts_per_s"] > 0
    assert 10 <= result["tokens_per_text"]["min"] <= result["tokens_per_text"]["max"]
    if result["torch"] is not None:
        assert result["torch"]["texts_per_s"] > 0 and result["numpy_over_torch"] > 0
        assert result["min_cosine_numpy_vs_torch"] > 0.9999
