"""Recall-quality evaluation: recall@k, MRR and nDCG@10 over labelled queries.

A label line is ``{"query": ..., "relevant": [segment ids], "session"?: ...}``.
Each query is searched (within its session when the label names one, across
sessions otherwise) and its hits are compared with the relevant ids. The
ranking evaluated is the hits list after minScore, so ``--min-score 0 --decay 1``
measures pure ranking.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from core.io import jsonio
from core.io.fsutil import read_file
from core.io.problems import FormatError, Problem
from core.recall.hybrid import SearchConfig, explain, explain_text, search

if TYPE_CHECKING:
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
        }
        out.update({f"recall@{k}": v for k, v in self.recall.items()})
        return out


@dataclass(slots=True)
class EvalReport:
    """Averages over every query, and the per-query reports."""

    ks: tuple[int, ...]
    config: SearchConfig
    embedder: str
    queries: list[QueryReport] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def mean(self, values: list[float]) -> float:
        """Mean of *values* (0 for none)."""
        return sum(values) / len(values) if values else 0.0

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of ``memlens eval --json``."""
        out: dict[str, Any] = {"n": len(self.queries)}
        for k in self.ks:
            out[f"recall@{k}"] = self.mean([q.recall[k] for q in self.queries])
        out["mrr"] = self.mean([q.reciprocal_rank for q in self.queries])
        out["ndcg@10"] = self.mean([q.ndcg10 for q in self.queries])
        cfg = self.config
        out["config"] = {
            "embedder": self.embedder,
            "limit": cfg.limit,
            "min_score": cfg.min_score,
            "vector_weight": cfg.vector_weight,
            "bm25_weight": cfg.bm25_weight,
            "decay": cfg.decay,
        }
        out["queries"] = [q.to_json() for q in self.queries]
        out["problems"] = [p.to_json() for p in self.problems]
        return out


def evaluate(
    store: WarmStore,
    labels: list[Label],
    config: SearchConfig,
    ks: tuple[int, ...] = (1, 5, 10),
    *,
    now_ms: int | None = None,
) -> EvalReport:
    """Search every label's query and score the ranking against its relevant ids."""
    depth = max(config.limit, *ks, 10)
    report = EvalReport(ks, config, store.embedder.name)
    for label in labels:
        cfg = replace(config, limit=depth, cross_session=label.session is None)
        result = search(store, label.query, cfg, session_id=label.session, now_ms=now_ms)
        ranked = [h.segment.id for h in result.hits]
        relevant = set(label.relevant)
        recall = {k: len(relevant & set(ranked[:k])) / len(relevant) for k in ks}
        first = next((i for i, sid in enumerate(ranked, 1) if sid in relevant), None)
        top = set(ranked[: max(ks)])
        missing = [sid for sid in label.relevant if sid not in top]
        q = QueryReport(
            label, ranked, recall, 1 / first if first else 0.0, ndcg(ranked, relevant), missing
        )
        if missing:
            # Explained at the configuration itself (not at the evaluation's depth), as
            # the recall view explains it: the same candidates, the same words.
            at_config = search(
                store,
                label.query,
                replace(config, cross_session=label.session is None),
                session_id=label.session,
                now_ms=result.now_ms,
            )
            whys = [explain(store, at_config, sid) for sid in missing]
            best = min(whys, key=_closest)
            q.miss_explanation = f"{best.segment_id}: {explain_text(best)}"
        report.queries.append(q)
    return report


def _closest(expl: SegmentExplanation) -> tuple[int, int]:
    """Sort key: the missing segment nearest to being recalled first."""
    if expl.standing is not None:
        return (0, expl.standing.rank)
    return (1, 0)
