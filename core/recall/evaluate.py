"""Recall-quality evaluation: recall@k, MRR and nDCG@10 over labelled queries.

A label line is ``{"query": ..., "relevant": [segment ids], "session"?: ...}``.
Each query is searched (within its session when the label names one, across
sessions otherwise) and its hits are compared with the relevant ids. The ranking
evaluated is the hits list after minScore, at least as deep as the largest k asked
for (unless the row is "as the agent is configured", which keeps the agent's limit).
A query that cannot be scored (its session or its relevant ids are not in the store)
is skipped, counted and reported with its reason, never averaged in as a zero.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from core.embed.base import remember_queries
from core.io import jsonio
from core.io.fsutil import read_file
from core.io.problems import FormatError, Problem
from core.recall.hybrid import SearchConfig, explain, explain_text
from core.recall.rankings import SEED, Ranking, rank_text, ranked_search

if TYPE_CHECKING:
    from collections.abc import Callable

    from core.recall.hybrid import SegmentExplanation
    from core.recall.warm_store import WarmStore


@dataclass(frozen=True, slots=True)
class Label:
    """One labelled query."""

    query: str
    relevant: tuple[str, ...]
    session: str | None
    line: int


def load_labels(path: str | os.PathLike[str]) -> tuple[list[Label], list[Problem]]:
    """Read a labels file; bad lines are reported and skipped.

    Raises
    ------
    FormatError
        When the file cannot be read or holds no usable label.
    """
    name = os.fspath(path)
    read = jsonio.read_jsonl(read_file(name), name)
    labels: list[Label] = []
    problems = list(read.problems)
    for rec in read.objects:
        obj = rec.value
        if not isinstance(obj, dict) or not isinstance(obj.get("query"), str):
            problems.append(Problem(name, rec.line, "label skipped: it needs a string 'query'"))
            continue
        rel = obj.get("relevant")
        if not isinstance(rel, list) or not all(isinstance(r, str) for r in rel) or not rel:
            problems.append(
                Problem(name, rec.line, "label skipped: 'relevant' must be a list of segment ids")
            )
            continue
        session = obj.get("session")
        labels.append(
            Label(obj["query"], tuple(rel), session if isinstance(session, str) else None, rec.line)
        )
    if not labels:
        raise FormatError(name, "no usable label (each line: {query, relevant, session?})")
    return labels, problems


def ndcg(ranked: list[str], relevant: set[str], k: int = 10) -> float:
    """Binary-relevance nDCG@k."""
    dcg = sum(1 / math.log2(i + 2) for i, sid in enumerate(ranked[:k]) if sid in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), k)))
    return dcg / ideal if ideal else 0.0


@dataclass(slots=True)
class QueryReport:
    """How one labelled query fared."""

    label: Label
    ranked: list[str]
    recall: dict[int, float]
    reciprocal_rank: float
    ndcg10: float
    missing: list[str]
    miss_explanation: str | None = None
    skipped: str | None = None
    """Why the query is left out of the averages (None: it counts)."""
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """JSON form of the report."""
        out: dict[str, Any] = {
            "query": self.label.query,
            "session": self.label.session,
            "line": self.label.line,
            "relevant": list(self.label.relevant),
            "ranked": self.ranked,
            "rr": self.reciprocal_rank,
            "ndcg@10": self.ndcg10,
            "missing": self.missing,
            "miss_explanation": self.miss_explanation,
            "skipped": self.skipped,
        }
        out.update({f"recall@{k}": v for k, v in self.recall.items()})
        return out


@dataclass(slots=True)
class EvalReport:
    """One configuration's averages over the scored queries, and the per-query reports."""

    ks: tuple[int, ...]
    config: SearchConfig
    embedder: str
    queries: list[QueryReport] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    name: str = "ranking"
    title: str = ""
    ranking: str = SEED.name
    depth: int = 10
    """Hits kept in each ranked list (the candidate limit the search ran with)."""

    @property
    def scored(self) -> list[QueryReport]:
        """The queries the averages are over (not skipped)."""
        return [q for q in self.queries if q.skipped is None]

    def skipped_reasons(self) -> dict[str, int]:
        """How many queries were skipped, by reason."""
        return dict(Counter(q.skipped for q in self.queries if q.skipped is not None))

    def mean(self, values: list[float]) -> float:
        """Mean of *values* (0 for none)."""
        return sum(values) / len(values) if values else 0.0

    def metrics(self) -> dict[str, Any]:
        """n, skipped, recall@k, MRR, nDCG@10 and the p50 latency of one query."""
        scored = self.scored
        out: dict[str, Any] = {"n": len(scored)}
        for k in self.ks:
            out[f"recall@{k}"] = self.mean([q.recall[k] for q in scored])
        out["mrr"] = self.mean([q.reciprocal_rank for q in scored])
        out["ndcg@10"] = self.mean([q.ndcg10 for q in scored])
        times = [q.seconds for q in self.queries]
        out["p50_ms"] = round(statistics.median(times) * 1000, 3) if times else 0.0
        reasons = self.skipped_reasons()
        out["skipped"] = {"count": sum(reasons.values()), "reasons": reasons}
        return out

    def config_json(self) -> dict[str, Any]:
        """The configuration this report ran."""
        cfg = self.config
        return {
            "row": self.name,
            "ranking": self.ranking,
            "embedder": self.embedder,
            "limit": cfg.limit,
            "depth": self.depth,
            "min_score": cfg.min_score,
            "vector_weight": cfg.vector_weight,
            "bm25_weight": cfg.bm25_weight,
            "decay": cfg.decay,
        }

    def row_json(self) -> dict[str, Any]:
        """The row of a multi-configuration report: name, config, metrics."""
        return {
            "name": self.name,
            "title": self.title,
            **self.metrics(),
            "config": self.config_json(),
        }

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of ``memlens eval --json`` (for this configuration)."""
        out = self.metrics()
        out["config"] = self.config_json()
        out["queries"] = [q.to_json() for q in self.queries]
        out["problems"] = [p.to_json() for p in self.problems]
        return out


def why_skipped(store: WarmStore, label: Label) -> str | None:
    """Why *label* cannot be scored against *store* (None when it can)."""
    with store.lock:
        present = [
            store.segments[s] for r in label.relevant if (s := store.slot_of.get(r)) is not None
        ]
        mask = store.session_mask(label.session)
    if mask is not None and not mask.any():
        return "session not in the store (unknown, or evicted: see --no-evict)"
    if not present:
        return "no relevant id in the store (unknown, or evicted: see --no-evict)"
    if label.session is not None and all(
        s is None or s.session_id != label.session for s in present
    ):
        return "relevant ids belong to another session"
    return None


def score_queries(
    labels: list[Label],
    ks: tuple[int, ...],
    depth: int,
    rank: Callable[[Label, int], list[str]],
    skip: Callable[[Label], str | None],
) -> list[QueryReport]:
    """Rank every label with *rank* (ids, best first, at most *depth*) and score it."""
    reports = []
    for label in labels:
        started = time.perf_counter()
        ranked = rank(label, depth)[:depth]
        seconds = time.perf_counter() - started
        relevant = set(label.relevant)
        recall = {k: len(relevant & set(ranked[:k])) / len(relevant) for k in ks}
        first = next((i for i, sid in enumerate(ranked, 1) if sid in relevant), None)
        top = set(ranked[: max(ks)])
        missing = [sid for sid in label.relevant if sid not in top]
        q = QueryReport(
            label, ranked, recall, 1 / first if first else 0.0, ndcg(ranked, relevant), missing
        )
        q.skipped, q.seconds = skip(label), seconds
        reports.append(q)
    return reports


def evaluate(
    store: WarmStore,
    labels: list[Label],
    config: SearchConfig,
    ks: tuple[int, ...] = (1, 5, 10),
    *,
    now_ms: int | None = None,
    ranking: Ranking = SEED,
    deepen: bool = True,
    explain_misses: bool = True,
) -> EvalReport:
    """Search every label's query with *ranking* and score the ranking against its ids.

    With *deepen* the ranked list (and so the candidate limit) is at least the largest
    k and 10 deep; without it, the config's own limit is kept (what the agent injects).
    """
    depth = max(config.limit, *ks, 10) if deepen else config.limit
    now = int(time.time() * 1000) if now_ms is None else now_ms
    remember_queries(store.embedder, [label.query for label in labels])
    report = EvalReport(ks, config, store.embedder.name, ranking=ranking.name, depth=depth)

    def rank(label: Label, n: int) -> list[str]:
        cfg = replace(config, limit=n, cross_session=label.session is None)
        result = ranked_search(
            store, label.query, cfg, ranking, session_id=label.session, now_ms=now
        )
        return [h.segment.id for h in result.hits]

    report.queries = score_queries(labels, ks, depth, rank, lambda lb: why_skipped(store, lb))
    if explain_misses:
        for q in report.queries:
            if q.missing and q.skipped is None:
                q.miss_explanation = _explain_miss(store, q, config, ranking, now)
    return report


def _explain_miss(
    store: WarmStore, q: QueryReport, config: SearchConfig, ranking: Ranking, now: int
) -> str:
    label = q.label
    # Explained at the configuration itself (not at the evaluation's depth), as the
    # recall view explains it: the same candidates, the same words.
    cfg = replace(config, cross_session=label.session is None)
    at_config = ranked_search(
        store, label.query, cfg, ranking, session_id=label.session, now_ms=now
    )
    if ranking != SEED:
        for sid in q.missing:
            text = rank_text(store, at_config, ranking, sid)
            if text is not None:
                return f"{sid}: {text}"
        return f"{q.missing[0]}: not in the store"
    whys = [explain(store, at_config, sid) for sid in q.missing]
    best = min(whys, key=_closest)
    return f"{best.segment_id}: {explain_text(best)}"


def _closest(expl: SegmentExplanation) -> tuple[int, int]:
    """Sort key: the missing segment nearest to being recalled first."""
    if expl.standing is not None:
        return (0, expl.standing.rank)
    return (1, 0)
