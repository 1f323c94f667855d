"""Benchmark: ``memlens eval`` of 1,000 labelled queries over 3,000 segments (issue 19).

Builds a store of SEGMENTS synthetic turns (``bench.corpus``) and QUERIES labels, each a
few words of one turn that should find it within its session; then times the eval the
CLI runs by default (:func:`core.recall.lab.run_lab`: the recommended ranking, the agent
as configured) with every query embedding included, and beside it, in the same run,
the rank-bm25 reference row (rank-bm25's ``BM25Okapi``). With the MiniLM transformer
the segments' vectors are embedded and cached first (not timed), as a store the agent
or memlens has embedded holds them.

Prints one JSON object. Target (2 cores): the eval <= 10 s with cached MiniLM vectors.

Results on the 2-core build machine (load average 0.5, 2026-11-28): the eval 2.9 s with
the hash embedder and 7.2 s with MiniLM (its 1,000 query embeddings included), the
rank-bm25 row 1.1 s beside each. Before (the same day: queries embedded one at a time,
two BLAS threads on small products, rank-bm25 scoring every document of the corpus for
each query), the same report on the LoCoMo dev half took 60 s with MiniLM.

    python -m bench.bench_eval [--segments 3000] [--queries 1000] [--embedders hash,transformer]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from bench.corpus import write_store
from core.embed import load_embedder
from core.recall.evaluate import Label
from core.recall.hybrid import SearchConfig
from core.recall.lab import evaluate_reference, run_lab
from core.recall.rankings import DEFAULT_RANKING, get_ranking
from core.recall.warm_store import StoreSettings, WarmStore

NOW = 1_790_000_000_000
KS = (1, 5, 10)


def labels_for(folder: Path, n: int, seed: int = 9) -> list[Label]:
    """*n* labels: four words of a turn, which should find that turn in its session."""
    rng = random.Random(seed)
    segs = [orjson.loads(x) for x in (folder / "segments.jsonl").read_bytes().splitlines() if x]
    out = []
    for line in range(1, n + 1):
        seg = rng.choice(segs)
        words = seg["content"].split()
        query = " ".join(rng.sample(words, min(4, len(words))))
        out.append(Label(query, (seg["id"],), seg["sessionId"], line))
    return out


def run_one(folder: Path, cache: Path, name: str, labels: list[Label]) -> dict[str, Any]:
    """The eval and the reference row with embedder *name* (None when it cannot load)."""
    embedder, note = load_embedder(name)
    if note or embedder.name != name:
        return {"skipped": note or f"{name} did not load"}
    settings = StoreSettings(eviction_days=0)
    store = WarmStore.open(folder, embedder, settings, cache_dir=cache, now_ms=NOW)
    t = time.perf_counter()
    store.embed_missing(save=True)  # the cached vectors (not timed)
    embedded = time.perf_counter() - t
    ranking = get_ranking(DEFAULT_RANKING)
    pure = ranking.search_config(SearchConfig(min_score=0.0, decay=1.0))
    t = time.perf_counter()
    report = run_lab(
        store, labels, KS, ranking=ranking, ranking_config=pure,
        agent_config=SearchConfig(), now_ms=NOW, reference=False,
    )  # fmt: skip
    ours = time.perf_counter() - t
    t = time.perf_counter()
    ref = evaluate_reference(store, labels, KS, pure)
    theirs = time.perf_counter() - t
    rows = {r.name: round(r.metrics()["recall@10"], 3) for r in [*report.rows, ref]}
    return {
        "eval_seconds": round(ours, 3),
        "rank_bm25_row_seconds": round(theirs, 3),
        "target_seconds": 10.0,
        "vectors_embedded_seconds": round(embedded, 3),
        "recall@10": rows,
    }


def run(segments: int, queries: int, embedders: list[str]) -> dict[str, Any]:
    """Build the corpus and time each embedder."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "context"
        write_store(folder, segments, now_ms=NOW)
        labels = labels_for(folder, queries)
        out: dict[str, Any] = {"benchmark": "eval", "segments": segments, "queries": queries}
        for name in embedders:
            out[name] = run_one(folder, Path(tmp) / "cache", name, labels)
        return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--segments", type=int, default=3000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--embedders", default="hash,transformer")
    args = parser.parse_args(argv)
    names = [e for e in args.embedders.split(",") if e]
    sys.stdout.buffer.write(orjson.dumps(run(args.segments, args.queries, names)) + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
