"""One recall, end to end: query, knowledge hits, detail hits, the block.

This is what the agent does before each model call, made inspectable: every
intermediate result is kept so a UI can show why the block holds what it holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from core.recall.block import (
    Detail,
    RecalledBlock,
    build_block,
    extract_query,
    hard_cap,
    search_limit,
)
from core.recall.hybrid import SearchConfig, SearchResult, SegmentExplanation, explain
from core.recall.rankings import SEED, get_ranking, rank_text, ranked_search

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.recall.knowledge_search import KnowledgeHit, KnowledgeIndex
    from core.recall.warm_store import WarmStore
    from core.transcript.replay import ContextItem

MIN_QUERY_CHARS = 3


@dataclass(frozen=True, slots=True)
class RecallSettings:
    """The memoryContext knobs of one recall (the agent's defaults)."""

    hard_cap_tokens: int = 4000
    window: int = 200_000
    knowledge_limit: int = 10
    knowledge_min_score: float = 0.5
    knowledge_mode: str = "idf"
    search: SearchConfig = field(default_factory=SearchConfig)
    limit_from_cap: bool = True
    """Use ``max(8, ceil(hardCap / 500))`` as the search limit (the agent's rule)."""
    ranking: str = SEED.name
    """The ranking of :mod:`core.recall.rankings`; the agent's own is ``seed``."""

    def search_config(self) -> SearchConfig:
        """:attr:`search` with the limit recall uses (the hard cap's, under the agent's rule)."""
        if not self.limit_from_cap:
            return self.search
        return replace(self.search, limit=search_limit(hard_cap(self.hard_cap_tokens, self.window)))


@dataclass(slots=True)
class RecallOutcome:
    """Everything one recall computed."""

    query: str
    hard_cap: int
    skipped: str | None = None
    """Why nothing was recalled at all (short query, no store)."""
    knowledge: list[KnowledgeHit] = field(default_factory=list)
    search: SearchResult | None = None
    block: RecalledBlock | None = None


def query_from_context(items: Sequence[ContextItem]) -> str:
    """The query the agent would use at this point: its last user messages."""
    texts = [i.message.text() for i in items if i.message.role == "user"]
    return extract_query(texts)


def recall(
    query: str,
    *,
    store: WarmStore | None,
    knowledge: KnowledgeIndex | None,
    settings: RecallSettings | None = None,
    session_id: str | None = None,
    now_ms: int | None = None,
) -> RecallOutcome:
    """Run one recall for *query* and build the block that would be injected."""
    s = settings or RecallSettings()
    cap = hard_cap(s.hard_cap_tokens, s.window)
    preview = RecallOutcome(query, cap)
    if len(query.strip()) < MIN_QUERY_CHARS:
        preview.skipped = f"query shorter than {MIN_QUERY_CHARS} characters: recall is skipped"
        preview.block = build_block([], [], cap)
        return preview
    if knowledge is not None:
        preview.knowledge = knowledge.search(
            query,
            limit=s.knowledge_limit,
            min_score=s.knowledge_min_score,
            mode=s.knowledge_mode,  # type: ignore[arg-type]
        )
    details: list[Detail] = []
    if store is not None:
        cfg = s.search_config()
        preview.search = ranked_search(
            store, query, cfg, get_ranking(s.ranking), session_id=session_id, now_ms=now_ms
        )
        details = [Detail(h.segment, h.score) for h in preview.search.hits]
    preview.block = build_block([h.fact for h in preview.knowledge], details, cap)
    return preview


def explain_recall(
    store: WarmStore, outcome: RecallOutcome, segment_id: str, ranking: str = SEED.name
) -> SegmentExplanation:
    """Why *segment_id* is or is not in *outcome*'s hits and block, under *ranking*.

    The seed formula scores only the top ``2 x limit`` by cosine and by BM25; the
    other rankings keep the ``2 x limit`` best of every segment they score, so a
    segment outside them is told its place in that ranking instead.
    """
    assert outcome.search is not None
    expl = explain(store, outcome.search, segment_id, outcome.block)
    if ranking == SEED.name or expl.reason != "no_candidate":
        return expl
    where = rank_text(store, outcome.search, get_ranking(ranking), segment_id)
    kept = len(outcome.search.candidates)
    return replace(expl, message=f"not among the {kept} best kept as candidates: {where}")
