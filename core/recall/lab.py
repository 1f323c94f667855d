"""The recall lab's report: several configurations on one labelled set, side by side.

Every report has the same rows unless asked otherwise:

* ``ranking``: the chosen ranking (``--ranking``) with no minScore and no decay unless
  given, its ranked list at least as deep as the largest k: what the ranking finds;
* ``agent``: the agent's formula (``seed``) with the data directory's own settings
  (autoRecallMinScore, the limit of its hard cap, the default weights and decay): what
  the agent injects. Its list is cut at the agent's limit, so recall@k for k above
  that limit counts only the limit's hits;
* ``rank-bm25``: the reference baseline, rank-bm25's ``BM25Okapi`` over the store's
  live segments with the project's tokenizer, its scores limited to the label's
  session: the figure every other row is read against.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from rank_bm25 import BM25Okapi

from core.recall.evaluate import EvalReport, evaluate, score_queries, why_skipped
from core.recall.rankings import SEED
from core.recall.tokenize import tokenize

if TYPE_CHECKING:
    from core.recall.evaluate import Label
    from core.recall.hybrid import SearchConfig
    from core.recall.rankings import Ranking
    from core.recall.warm_store import WarmStore

REFERENCE = "rank-bm25"


class OkapiReference:
    """rank-bm25's BM25Okapi over the store's live segments (built once)."""

    def __init__(self, store: WarmStore) -> None:
        with store.lock:
            live = [s for s in store.segments if s is not None]
        self.ids = [s.id for s in live]
        by_session: dict[str, list[int]] = {}
        for i, s in enumerate(live):
            by_session.setdefault(s.session_id, []).append(i)
        self.by_session = {k: np.asarray(v, dtype=np.intp) for k, v in by_session.items()}
        # rank-bm25 divides by the corpus size: an empty (all evicted) store ranks nothing
        self.okapi = BM25Okapi([tokenize(s.content) for s in live]) if live else None

    def ranked(self, query: str, session_id: str | None, depth: int) -> list[str]:
        """Ids of the *depth* best segments with a positive score, best first."""
        if self.okapi is None:
            return []
        tokens = tokenize(query)
        if session_id is None:
            docs = np.arange(len(self.ids))
            scores = np.asarray(self.okapi.get_scores(tokens), dtype=np.float64)
        else:
            # Only the session's documents, scored with the whole corpus's statistics by
            # rank-bm25's get_batch_scores: get_scores' figures for them, a fraction of
            # the work (a test compares the two).
            docs = self.by_session.get(session_id, np.empty(0, dtype=np.intp))
            if not len(docs):
                return []
            scores = np.asarray(self.okapi.get_batch_scores(tokens, docs), dtype=np.float64)
        positive = np.flatnonzero(scores > 0)
        order = positive[np.argsort(-scores[positive], kind="stable")][:depth]
        return [self.ids[int(docs[i])] for i in order]


def evaluate_reference(
    store: WarmStore, labels: list[Label], ks: tuple[int, ...], config: SearchConfig
) -> EvalReport:
    """The rank-bm25 row: BM25 alone, as deep as the largest k (and 10)."""
    depth = max(*ks, 10)
    ref = OkapiReference(store)
    report = EvalReport(
        ks,
        config.with_(vector_weight=0.0, bm25_weight=1.0, min_score=0.0, decay=1.0),
        "none",
        name=REFERENCE,
        title="reference baseline: rank-bm25 BM25Okapi, the project's tokenizer",
        ranking=REFERENCE,
        depth=depth,
    )
    report.queries = score_queries(
        labels,
        ks,
        depth,
        lambda label, n: ref.ranked(label.query, label.session, n),
        lambda label: why_skipped(store, label),
    )
    return report


@dataclass(slots=True)
class LabReport:
    """Every row of one evaluation, the first one in detail."""

    rows: list[EvalReport]
    run: dict[str, Any] = field(default_factory=dict)
    """How the store was opened: now, eviction, the labels file, notes."""

    def to_json(self) -> dict[str, Any]:
        """The first row's full report, every row's figures, and the run's settings."""
        out = self.rows[0].to_json()
        out["rows"] = [r.row_json() for r in self.rows]
        out["run"] = self.run
        return out


def run_lab(
    store: WarmStore,
    labels: list[Label],
    ks: tuple[int, ...],
    *,
    ranking: Ranking,
    ranking_config: SearchConfig,
    agent_config: SearchConfig | None,
    now_ms: int,
    reference: bool = True,
) -> LabReport:
    """The default rows: the ranking, the agent as configured (if given), rank-bm25.

    *reference* False leaves the rank-bm25 row out (a benchmark times it on its own).
    """
    first = evaluate(store, labels, ranking_config, ks, now_ms=now_ms, ranking=ranking)
    first.name = "ranking"
    pure = ranking_config.min_score <= 0 and ranking_config.decay >= 1
    first.title = f"ranking {ranking.name}" + (": no minScore, no decay" if pure else "")
    rows = [first]
    if agent_config is not None:
        agent = evaluate(
            store,
            labels,
            agent_config,
            ks,
            now_ms=now_ms,
            ranking=SEED,
            deepen=False,
            explain_misses=False,
        )
        agent.name = "agent"
        agent.title = "as the agent is configured: the seed formula, the data directory's settings"
        rows.append(agent)
    if reference:
        rows.append(evaluate_reference(store, labels, ks, ranking_config))
    return LabReport(rows)
