"""The MCP search benchmark runs at a tiny size (no timing asserts)."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

import orjson

from tests.conftest import ROOT

if TYPE_CHECKING:
    from pathlib import Path

TIMED = ("sqlite_fts", "sqlite_hybrid", "memsearch_fts", "memsearch_hybrid",
         "memsearch_hybrid_rank_all", "run_search_fts",
         "openclaudecode_sqlite")  # fmt: skip


def test_bench_mcp_search_tiny(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_mcp_search", "--chunks", "300", "--queries", "6",
         "--server-runs", "1", "--dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )  # fmt: skip
    result = orjson.loads(done.stdout)
    assert result["benchmark"] == "mcp_search"
    assert result["chunks"] == 300 and result["queries"] == 6 and result["dims"] == 384
    for key in TIMED:
        assert set(result[key]) == {"p50_ms", "p95_ms", "cpu_p50_ms", "cpu_p95_ms"}
        assert 0 <= result[key]["cpu_p50_ms"] <= result[key]["cpu_p95_ms"]
        assert 0 <= result[key]["p50_ms"] <= result[key]["p95_ms"]
    assert result["results_per_query"]["fts"] > 0 and result["results_per_query"]["hybrid"] > 0
    assert result["matches_per_query_p50"] > 0
    assert result["targets_p50_ms"] == {"memsearch_fts": 5.0, "memsearch_hybrid": 10.0}
    # the OpenClaudeCode search function, and the server once `memlens mcp` exists
    assert result["openclaudecode"] is None or set(result["openclaudecode"]) == {
        "p50_ms",
        "p95_ms",
        "cpu_p50_ms",
        "cpu_p95_ms",
    }
    assert len(result["load_average_before"]) == 3
    assert len(result["python_loop_ms"]) == 3 and all(x > 0 for x in result["python_loop_ms"])
    if result["server"] is None:
        assert result["server_reason"]
    else:
        assert result["server"]["runs"] == 1 and result["server"]["sessions_listed"] == 100
        assert result["server"]["initialize_s_p50"] <= result["server"]["sessions_list_s_p50"]
        search = result["server_search"]
        assert search["calls"] == 30 and search["second_ms"] is not None
        figures = ("first_ms", "second_ms", "max_after_first_ms", "p50_ms", "last_half_p50_ms")
        assert set(search) == {"calls", *figures}
        assert all(isinstance(search[k], float) for k in figures)
