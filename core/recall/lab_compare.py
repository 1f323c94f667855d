"""The recall lab's run: every labelled query under two (or more) configs, compared.

:func:`compare` evaluates each label under each :class:`LabConfig` with
:func:`core.recall.evaluate.evaluate` (one label at a time, so that a long run
reports progress and stops when asked), and keeps per query the rank of its first
relevant segment under each config. A label none of whose relevant ids is in the
store, or whose session is not, cannot be found by any ranking: it is skipped and
the reason kept, so that averages measure ranking, not missing data.

:class:`LabRun` answers what the lab shows: recall@k curves, the summary row of
each config (R@k, MRR, nDCG@10), and which config wins each query.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from core.io.jobs import check
from core.recall.evaluate import QueryReport, ndcg
from core.recall.hybrid import search
from core.recall.warm_store import WarmStore

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.io.jobs import CancelCheck, Progress
    from core.io.problems import Problem
    from core.recall.evaluate import Label
    from core.recall.hybrid import SearchConfig

CURVE_K = 20
"""recall@k curves run from k = 1 to this."""


@dataclass(frozen=True, slots=True)
class LabConfig:
    """A named search configuration the lab runs."""

    name: str
    description: str
    search: SearchConfig


@dataclass(slots=True)
class QueryRow:
    """One labelled query and its report under each config (by config name)."""

    label: Label
    reports: dict[str, QueryReport]

    def first_rank(self, name: str) -> int | None:
        """Rank (1-based) of the first relevant segment under config *name*; None: not found."""
        rr = self.reports[name].reciprocal_rank
        return round(1 / rr) if rr > 0 else None

    def winner(self, a: str, b: str) -> str | None:
        """The config of *a* and *b* that ranks a relevant segment higher; None on a tie."""
        ra, rb = self.first_rank(a), self.first_rank(b)
        if ra == rb:
            return None
        if rb is None or (ra is not None and ra < rb):
            return a
        return b


@dataclass(slots=True)
class LabRun:
    """The outcome of :func:`compare`."""

    configs: list[LabConfig]
    ks: tuple[int, ...]
    rows: list[QueryRow] = field(default_factory=list)
    skipped: list[tuple[Label, str]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    kept: int = 0
    """Segments searched that the agent evicts for age (``evict=False``)."""

    def recall_at(self, name: str, k: int) -> float:
        """Mean recall@k of config *name* over the evaluated queries."""
        if not self.rows:
            return 0.0
        total = 0.0
        for row in self.rows:
            rel = set(row.label.relevant)
            ranked = row.reports[name].ranked[:k]
            total += len(rel.intersection(ranked)) / len(rel)
        return total / len(self.rows)

    def curve(self, name: str, k_max: int = CURVE_K) -> list[float]:
        """recall@1 .. recall@k_max of config *name*."""
        return [self.recall_at(name, k) for k in range(1, k_max + 1)]

    def summary(self, name: str) -> dict[str, float]:
        """R@k for each k, MRR and nDCG@10 of config *name*."""
        n = len(self.rows) or 1
        out = {f"R@{k}": self.recall_at(name, k) for k in self.ks}
        out["MRR"] = sum(r.reports[name].reciprocal_rank for r in self.rows) / n
        out["nDCG@10"] = sum(r.reports[name].ndcg10 for r in self.rows) / n
        return out

    def wins(self, a: str, b: str) -> tuple[int, int, int]:
        """``(queries a wins, b wins, ties)``."""
        won = [r.winner(a, b) for r in self.rows]
        return won.count(a), won.count(b), won.count(None)


def skip_reason(store: WarmStore, label: Label) -> str | None:
    """Why *label* cannot be evaluated on *store* (None: it can)."""
    with store.lock:
        if label.session is not None:
            mask = store.session_mask(label.session)
            slots = np.flatnonzero(mask) if mask is not None else np.empty(0, np.intp)
            if not any(store.segments[i] is not None for i in slots):
                return f"session {label.session!r} has no segment in the store"
        if not any(sid in store.slot_of for sid in label.relevant):
            return "none of its relevant segments is in the store"
    return None


def without_eviction(
    store: WarmStore, *, progress: Progress | None = None, cancelled: CancelCheck | None = None
) -> WarmStore:
    """*store*, or, when it evicted segments for age, the same store read without eviction.

    The agent drops segments older than ``evictionDays`` when it loads its store; a
    labelled set older than that would then measure nothing. The copy is memlens's
    own, in memory (its vectors are not saved); the agent's files are only read.
    """
    load = store.stats.load
    if load is None or load.evicted_age == 0:
        return store
    settings = replace(store.settings, eviction_days=0)
    copy = WarmStore.open(
        store.folder, store.embedder, settings, cache_dir=store.cache_dir,
        progress=progress, cancelled=cancelled,
    )  # fmt: skip
    copy.embed_missing(progress=progress, cancelled=cancelled, save=False)
    return copy


def compare(
    store: WarmStore,
    labels: Sequence[Label],
    configs: Sequence[LabConfig],
    ks: tuple[int, ...] = (1, 5, 10),
    *,
    now_ms: int | None = None,
    evict: bool = True,
    progress: Progress | None = None,
    cancelled: CancelCheck | None = None,
) -> LabRun:
    """Every label of *labels* under every config; raises ``Cancelled`` when asked to stop.

    With *evict* False, segments the agent evicts for age are searched too
    (:func:`without_eviction`); :attr:`LabRun.kept` says how many.
    """
    depth = max(*ks, CURVE_K)
    run = LabRun(list(configs), ks)
    if not evict:
        searched = without_eviction(store, progress=progress, cancelled=cancelled)
        run.kept = len(searched) - len(store)
        store = searched
    total = len(labels)
    for i, label in enumerate(labels):
        check(cancelled, "recall lab")
        if progress is not None:
            progress(i, total, f"query {i + 1} of {total}")
        reason = skip_reason(store, label)
        if reason is not None:
            run.skipped.append((label, reason))
            continue
        reports = {cfg.name: _report(store, label, cfg, ks, depth, now_ms) for cfg in configs}
        run.rows.append(QueryRow(label, reports))
    if progress is not None:
        progress(total, total, "done")
    return run


def _report(
    store: WarmStore, label: Label, cfg: LabConfig, ks: tuple[int, ...], depth: int,
    now_ms: int | None,
) -> QueryReport:  # fmt: skip
    """How *label* fares under *cfg* (the ranking to *depth*; no "why not?" here)."""
    config = cfg.search.with_(
        limit=max(cfg.search.limit, depth), cross_session=label.session is None
    )
    result = search(store, label.query, config, session_id=label.session, now_ms=now_ms)
    ranked = [h.segment.id for h in result.hits]
    relevant = set(label.relevant)
    recall = {k: len(relevant.intersection(ranked[:k])) / len(relevant) for k in ks}
    first = next((i for i, sid in enumerate(ranked, 1) if sid in relevant), None)
    top = set(ranked[: max(ks)])
    missing = [sid for sid in label.relevant if sid not in top]
    rr = 1 / first if first else 0.0
    return QueryReport(label, ranked, recall, rr, ndcg(ranked, relevant), missing)


def lab_configs(agent: SearchConfig) -> list[LabConfig]:
    """The configs the lab offers for a data directory whose settings are *agent*."""
    return [
        LabConfig(
            "ranking",
            "the agent's formula without its cut-offs: no minScore, no time decay",
            agent.with_(min_score=0.0, decay=1.0),
        ),
        LabConfig(
            "as configured",
            f"the data directory's own settings (minScore {agent.min_score:g},"
            f" limit {agent.limit}, decay {agent.decay:g})",
            agent,
        ),
    ]
