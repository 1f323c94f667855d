"""The alternated MCP search benchmark runs at a tiny size (no timing asserts)."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

import orjson

from tests.conftest import ROOT

if TYPE_CHECKING:
    from pathlib import Path


def test_bench_mcp_alternate_tiny(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_mcp_alternate", str(ROOT), str(ROOT),
         "--chunks", "300", "--queries", "4", "--rounds", "2", "--dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        check=True,
        timeout=300,
    )  # fmt: skip
    result = orjson.loads(done.stdout)
    assert result["benchmark"] == "mcp_alternate" and result["mode"] == "lazy"
    assert result["queries"] == 4 and result["rounds"] == 2 and len(result["trees"]) == 2
    for tree in result["trees"]:
        assert tree["tree"] == str(ROOT.resolve())
        figures = {"p25_ms", "p50_ms", "p75_ms", "p95_ms"}
        assert set(tree) == {"tree", "p50_per_round_ms", *figures}
        assert all(isinstance(tree[k], float) for k in figures)
        assert len(tree["p50_per_round_ms"]) == 2
