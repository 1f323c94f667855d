"""bench/bench_recall_lab.py at a tiny size (no timing asserts): every row is printed."""

from __future__ import annotations

import subprocess
import sys

import orjson

from bench.corpus import write_store
from core.recall.rankings import RANKINGS
from tests.conftest import ROOT


def test_bench_recall_lab_tiny(tmp_path):
    write_store(tmp_path, 120)
    segs = [orjson.loads(x) for x in (tmp_path / "segments.jsonl").read_bytes().splitlines()]
    labels = [
        {"query": s["content"], "relevant": [s["id"]], "session": s["sessionId"]} for s in segs[:6]
    ]
    (tmp_path / "labels.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in labels))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.bench_recall_lab",
            "--data",
            str(tmp_path),
            "--embedders",
            "hash",
            "--queries",
            "4",
        ],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    result = orjson.loads(done.stdout)
    assert result["queries"] == 4 and result["segments"] == 120
    rows = result["embedders"]["hash"]
    assert set(RANKINGS) <= rows.keys()
    for row in [*rows.values(), result["rank-bm25"]]:
        assert {"R@1", "R@5", "R@10", "MRR", "nDCG@10", "p50_ms"} <= row.keys()
        assert row["n"] == 4 and row["skipped"] == 0
    # a segment's own text finds it first with every ranking
    assert all(rows[name]["R@1"] == 1.0 for name in RANKINGS)
    assert result["target"]["recall@10_at_least"] == round(result["rank-bm25"]["R@10"] + 0.1, 3)
