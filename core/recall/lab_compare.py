"""The recall lab's run: every labelled query under two (or more) configs, compared.

:func:`compare` ranks each label under each :class:`LabConfig` (a named ranking of
:mod:`core.recall.rankings` with its settings, the agent as configured, or the
rank-bm25 reference of :mod:`core.recall.lab`) one label at a time, so that a long
run reports progress and stops when asked, and scores it as ``memlens eval`` does
(:func:`core.recall.evaluate.score_queries`). A label no ranking can find (its
session or relevant ids not in the store) is skipped and the reason kept, so that
averages measure ranking, not missing data.

:class:`LabRun` answers what the lab shows: recall@k curves, the summary row of
each config (R@k, MRR, nDCG@10), and which config wins each query.
"""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from core.embed.base import remember_queries
from core.io.fsutil import file_identity
from core.io.jobs import check
from core.recall.evaluate import score_queries, why_skipped
from core.recall.lab import REFERENCE, OkapiReference
from core.recall.rankings import RANKINGS, SEED, get_ranking, ranked_search
from core.recall.warm_store import WarmStore

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from core.io.jobs import CancelCheck, Progress
    from core.recall.engine import RecallSettings
    from core.recall.evaluate import Label, QueryReport
    from core.recall.hybrid import SearchConfig
    from core.recall.rankings import Ranking

AGENT = "agent"
"""The config of the agent as the data directory configures it."""
VIEW = "recall view"
"""The config the Recall view's knobs and ranking make now."""
CURVE_K = 10
"""recall@k curves run from k = 1 to this (or the largest k asked, if larger).

The lab ranks as deep as ``memlens eval`` does (the largest k, and 10): the seed
formula's candidates depend on its limit, so a deeper list would rank otherwise."""


@dataclass(frozen=True, slots=True)
class LabConfig:
    """A named way of ranking the lab runs: a ranking with settings, or rank-bm25."""

    name: str
    description: str
    search: SearchConfig
    ranking: Ranking | None
    """None: the rank-bm25 reference (:class:`core.recall.lab.OkapiReference`)."""
    deepen: bool = True
    """Rank as deep as the lab looks (the largest k, and 10); False: the config's own limit."""


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

    def curve(self, name: str) -> list[float]:
        """recall@1 .. recall@k of config *name*, k as deep as the run ranked."""
        return [self.recall_at(name, k) for k in range(1, max(*self.ks, CURVE_K) + 1)]

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


def lab_configs(agent: SearchConfig) -> list[LabConfig]:
    """Every config the lab offers for a data directory whose settings are *agent*.

    Each named ranking without minScore and decay (what it finds), the agent as
    configured (the seed formula, the directory's minScore, limit and decay, its list
    cut at its limit: what it injects) and the rank-bm25 reference.
    """
    pure = agent.with_(min_score=0.0, decay=1.0)
    out = [
        LabConfig(r.name, f"{r.summary}; no minScore, no decay", r.search_config(pure), r)
        for r in RANKINGS.values()
    ]
    out.append(
        LabConfig(
            AGENT,
            f"as the agent is configured: the seed formula, minScore {agent.min_score:g},"
            f" limit {agent.limit}, decay {agent.decay:g}",
            agent,
            SEED,
            deepen=False,
        )
    )
    out.append(LabConfig(REFERENCE, "reference baseline: rank-bm25 BM25Okapi", pure, None))
    return out


def view_config(settings: RecallSettings) -> LabConfig:
    """The Recall view's current settings as a lab config: what "Apply to agent" would write.

    Ranked as that view recalls: its ranking, its knobs, the limit of its hard cap,
    the list cut at that limit.
    """
    search = settings.search_config()
    return LabConfig(
        VIEW,
        f"the Recall view's settings: the {settings.ranking} ranking, minScore"
        f" {search.min_score:g}, limit {search.limit}, weights {search.vector_weight:g} /"
        f" {search.bm25_weight:g}, decay {search.decay:g}",
        search,
        get_ranking(settings.ranking),
        deepen=False,
    )


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
    # One copy per store state: every run of the lab would read and embed it again.
    state = (len(store), file_identity(store.segments_path))
    kept = _UNEVICTED.get(store)
    if kept is not None and kept[0] == state:
        return kept[1]
    settings = replace(store.settings, eviction_days=0)
    copy = WarmStore.open(
        store.folder, store.embedder, settings, cache_dir=store.cache_dir,
        progress=progress, cancelled=cancelled,
    )  # fmt: skip
    copy.embed_missing(progress=progress, cancelled=cancelled, save=False)
    _UNEVICTED[store] = (state, copy)
    return copy


_UNEVICTED: weakref.WeakKeyDictionary[WarmStore, tuple[Any, WarmStore]] = (
    weakref.WeakKeyDictionary()
)
"""The store read without eviction, by the store it was read for, with that store's state."""


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
    (:func:`without_eviction`); :attr:`LabRun.kept` says how many. A label that no
    ranking can find (:func:`core.recall.evaluate.why_skipped`) is skipped, its reason
    kept.
    """
    depth = max(*ks, CURVE_K)
    run = LabRun(list(configs), ks)
    if not evict:
        searched = without_eviction(store, progress=progress, cancelled=cancelled)
        run.kept = len(searched) - len(store)
        store = searched
    now = int(time.time() * 1000) if now_ms is None else now_ms
    remember_queries(store.embedder, [label.query for label in labels])
    reference = OkapiReference(store) if any(c.ranking is None for c in configs) else None

    def ranker(cfg: LabConfig) -> Callable[[Label, int], list[str]]:
        def rank(label: Label, n: int) -> list[str]:
            if cfg.ranking is None:
                assert reference is not None
                return reference.ranked(label.query, label.session, n)
            limit = max(cfg.search.limit, n) if cfg.deepen else cfg.search.limit
            search = cfg.search.with_(limit=limit, cross_session=label.session is None)
            found = ranked_search(
                store, label.query, search, cfg.ranking, session_id=label.session, now_ms=now
            )
            return [h.segment.id for h in found.hits]

        return rank

    rankers = {c.name: ranker(c) for c in configs}
    total = len(labels)
    for i, label in enumerate(labels):
        check(cancelled, "recall lab")
        if progress is not None:
            progress(i, total, f"query {i + 1} of {total}")
        reason = why_skipped(store, label)
        if reason is not None:
            run.skipped.append((label, reason))
            continue
        reports = {
            name: score_queries([label], ks, depth, rank, lambda _: None)[0]
            for name, rank in rankers.items()
        }
        run.rows.append(QueryRow(label, reports))
    if progress is not None:
        progress(total, total, "done")
    return run
