"""The soak writer writes what a real agent writes, the same way for the same seed."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

from tests.conftest import ROOT
from tests.soak.meters import BASE_ALLOWANCE, memory_verdict
from tests.soak.views import diff
from tests.soak.writer import init_home, run

if TYPE_CHECKING:
    from pathlib import Path


def _entries(path: Path) -> list[dict]:
    data = path.read_bytes()
    assert data.endswith(b"\n"), f"{path} ends in a partial line"
    return [json.loads(line) for line in data.splitlines()]


def _ids(root: Path) -> list[tuple[str, list]]:
    files = sorted((root / "agents" / "main" / "sessions").glob("*.jsonl"))
    return [(f.name, [(e.get("type"), e.get("id")) for e in _entries(f)]) for f in files]


def test_the_same_seed_writes_the_same_home(tmp_path):
    for name in ("a", "b"):
        init_home(tmp_path / name, seed=4)
        run(tmp_path / name, seed=4, count=300, rate=10_000, cycle=100, pauses=False)
    assert _ids(tmp_path / "a") == _ids(tmp_path / "b")
    other = tmp_path / "c"
    init_home(other, seed=5)
    assert _ids(other) != _ids(tmp_path / "a")


def test_every_special_event_is_written_as_the_agents_write_it(tmp_path):
    root = tmp_path / "home"
    init_home(root, seed=2)
    log = tmp_path / "writes.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "tests.soak.writer", "run", str(root), "--count", "260",
         "--rate", "10000", "--cycle", "120", "--seed", "2", "--log", str(log), "--no-pauses"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    counts = json.loads(done.stdout)
    writes = [json.loads(line) for line in log.read_bytes().splitlines()]
    assert len(writes) == sum(counts.values()) == 260
    for kind in ("message", "segment", "fact", "store", "header", "branch_summary",
                 "compaction", "rewrite", "custom", "label"):  # fmt: skip
        assert counts.get(kind, 0) >= 1, (kind, counts)

    sessions = root / "agents" / "main" / "sessions"
    store = json.loads((sessions / "sessions.json").read_bytes())
    files = sorted(sessions.glob("*.jsonl"))
    assert sorted(e["sessionFile"] for e in store.values()) == [f.name for f in files]
    assert len(files) == 2 + counts["header"]
    branched = compacted = tool_results = 0
    for path in files:
        header, *entries = _entries(path)
        assert header["type"] == "session" and header["version"] == 3
        seen: list[str] = []
        for e in entries:
            # a tree: every parent is an earlier entry of the file
            assert e["parentId"] is None or e["parentId"] in seen, e
            if e["type"] == "branch_summary":
                assert e["parentId"] != seen[-1], "a branch hangs off an older entry"
                branched += 1
            if e["type"] == "compaction":
                assert e["firstKeptEntryId"] in seen and e["tokensBefore"] > 0
                compacted += 1
            message = e.get("message") or {}
            if message.get("role") == "toolResult":
                tool_results += 1
            seen.append(e["id"])
    assert branched >= 1 and compacted >= 1 and tool_results >= 10
    store_dir = root / "memory" / "context"
    segs = _entries(store_dir / "segments.jsonl")
    assert all(s["role"] in ("user", "assistant") and s["tokens"] >= 1 for s in segs)
    facts = _entries(store_dir / "knowledge.jsonl")
    assert any("supersededBy" in f for f in facts) or any(f.get("_deleted") for f in facts)


def test_memory_is_flat_unless_it_grows_beyond_what_was_written():
    mb = 1 << 20
    steady = [(float(i), 200 * mb + (i % 3) * mb) for i in range(60)]
    assert memory_verdict(steady, data_bytes=0).flat
    leaking = [(float(i), 200 * mb + i * 2 * mb) for i in range(60)]
    verdict = memory_verdict(leaking, data_bytes=mb)
    assert not verdict.flat and verdict.growth > BASE_ALLOWANCE
    # the same growth is fine when the agent wrote that much
    assert memory_verdict(leaking, data_bytes=20 * mb).flat


def test_diff_names_where_views_differ():
    live = {"navigator": [(0, "main", "3")], "counts": "1 sessions"}
    fresh = {"navigator": [(0, "main", "4")], "counts": "1 sessions", "facts": []}
    found = diff(live, fresh)
    assert found == [
        "/facts: only in fresh",
        "/navigator[0]: live (0, 'main', '3') != fresh (0, 'main', '4')",
    ]
    assert diff(fresh, fresh) == []
