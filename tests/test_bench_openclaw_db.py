"""The OpenClaw database benchmark runs at a tiny size (no timing asserts)."""

from __future__ import annotations

import subprocess
import sys

import orjson

from tests.conftest import ROOT


def test_bench_openclaw_db_tiny():
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_openclaw_db", "--sessions", "3", "--events", "120",
         "--replay", "41", "--repeat", "1", "--live", "3"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )  # fmt: skip
    result = orjson.loads(done.stdout)
    assert result["sessions"] == 4 and result["session_list_sessions"] == 4
    assert result["events"] == 3 * 39 + 41 and result["zstd_events"] > 0
    assert result["replay_context_items"] == 40
    assert result["live_rows"] == 3 and result["live_max_ms"] >= 0  # every row followed
    # reading never leaves -wal / -shm files beside the database
    assert result["files_beside_db"] == ["openclaw-agent.sqlite"]
