"""Benchmark: every named ranking on a labelled set (the LoCoMo dev half), with rank-bm25.

For each embedder (hash, and the MiniLM transformer when it loads), every ranking of
:data:`core.recall.rankings.RANKINGS` ranks every labelled query within its session,
ten deep, with no minScore and no decay; the agent as configured (the seed formula,
minScore 0.7, limit 8, decay 0.995, "now" one day after the newest segment) and
rank-bm25's BM25Okapi are the reference rows. Prints one JSON object: per row
R@1/5/10, MRR, nDCG@10 and the p50 latency of one query (query embedding included).

Target (issue 19): the recommended ranking's recall@10 >= rank-bm25's + 0.10.

    python -m bench.bench_recall_lab [--data DIR] [--embedders hash,transformer]
                                     [--queries N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson
import platformdirs

from core.embed import load_embedder
from core.recall.evaluate import EvalReport, evaluate, load_labels
from core.recall.hybrid import SearchConfig
from core.recall.lab import evaluate_reference
from core.recall.rankings import DEFAULT_RANKING, RANKINGS, ranked_search
from core.recall.warm_store import StoreSettings, WarmStore

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "locomo-dev"
KS = (1, 5, 10)
DAY_MS = 86_400_000


def _row(report: EvalReport) -> dict[str, object]:
    m = report.metrics()
    return {
        "R@1": round(m["recall@1"], 3),
        "R@5": round(m["recall@5"], 3),
        "R@10": round(m["recall@10"], 3),
        "MRR": round(m["mrr"], 3),
        "nDCG@10": round(m["ndcg@10"], 3),
        "p50_ms": m["p50_ms"],
        "n": m["n"],
        "skipped": m["skipped"]["count"],
    }


def run(data: Path, embedders: list[str], max_queries: int | None) -> dict[str, object]:
    labels, _problems = load_labels(data / "labels.jsonl")
    if max_queries:
        labels = labels[:max_queries]
    settings = StoreSettings(max_segments=-1, eviction_days=0, agent_embedder="none")
    cache = Path(platformdirs.user_cache_dir("memlens"))
    out: dict[str, object] = {
        "benchmark": "recall_lab",
        "data": str(data),
        "queries": len(labels),
        "recommended": DEFAULT_RANKING,
        "embedders": {},
    }
    pure = SearchConfig(limit=10, min_score=0.0, decay=1.0)
    for name in embedders:
        embedder, note = load_embedder(name)
        if note:  # the transformer is not installed here: say so, measure nothing
            out["embedders"][name] = {"unavailable": note}  # type: ignore[index]
            continue
        # MiniLM vectors are kept in memlens's cache between runs; hash ones are instant
        keep = cache if name == "transformer" else None
        store = WarmStore.open(data, embedder, settings, cache_dir=keep)
        store.embed_missing()
        newest = max(int(s.timestamp) for s in store.live())
        rows: dict[str, object] = {}
        for ranking in RANKINGS.values():
            cfg = ranking.search_config(pure)
            for label in labels:  # untimed: the memoised tokens and term arrays, the index
                ranked_search(store, label.query, cfg, ranking, session_id=label.session)
            report = evaluate(
                store, labels, cfg, KS, now_ms=0, ranking=ranking, explain_misses=False
            )
            rows[ranking.name] = _row(report)
        agent = evaluate(
            store,
            labels,
            SearchConfig(),
            KS,
            now_ms=newest + DAY_MS,
            deepen=False,
            explain_misses=False,
        )
        rows["agent (seed, minScore 0.7, limit 8, decay 0.995)"] = _row(agent)
        if "rank-bm25" not in out:
            out["rank-bm25"] = _row(evaluate_reference(store, labels, KS, pure))
            out["segments"] = len(store)
        out["embedders"][name] = rows  # type: ignore[index]
    base = out.get("rank-bm25")
    if isinstance(base, dict):
        out["target"] = {"recall@10_at_least": round(float(base["R@10"]) + 0.10, 3)}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DATA, help="segments.jsonl + labels.jsonl")
    parser.add_argument("--embedders", default="hash,transformer")
    parser.add_argument("--queries", type=int, default=0, help="only the first N labels")
    args = parser.parse_args(argv)
    names = [n for n in args.embedders.split(",") if n]
    result = run(args.data, names, args.queries or None)
    sys.stdout.buffer.write(orjson.dumps(result) + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
