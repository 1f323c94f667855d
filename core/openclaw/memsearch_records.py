"""What OpenClaw's memory search (:mod:`core.openclaw.memsearch`) answers, as records.

A :class:`MemoryCandidate` is one chunk the search considered, with every
component of its score; a :class:`MemorySearchResult` is the whole answer, in
the JSON shape of ``openclaw memory search --json`` plus memlens's components.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from core.io.problems import Problem

Mode = Literal["hybrid", "fts-only", "vector-only", "empty"]
TimeFrom = Literal["path-date", "evergreen", "file-mtime", "index-mtime", "session-mtime", "none"]


@dataclass(slots=True)
class MemoryHit:
    """One search hit (a chunk), as OpenClaw's keyword and vector searches build it."""

    id: str
    path: str
    start_line: int
    end_line: int
    source: str
    snippet: str
    score: float = 0.0
    text_score: float = 0.0
    path_score: float = 0.0
    exact: int = 0
    """``exactPathSpecificity``: 3 the whole path, 2 the file name, 1 the stem."""
    has_body: bool = False
    importance: int | None = None
    triggers: str | None = None
    project_key: str | None = None
    provenance: dict[str, Any] | None = None
    source_mtime: float | None = None


@dataclass(slots=True)
class MemoryCandidate:
    """One chunk considered by the search, with every component of its score."""

    hit: MemoryHit
    vector_score: float = 0.0
    text_score: float = 0.0
    keyword_score: float = 0.0
    """The boosted keyword score (``rankingScore`` of the keyword side; capped at 1)."""
    path_score: float = 0.0
    exact: int = 0
    has_vector: bool = False
    has_keyword: bool = False
    has_body: bool = False
    content_score: float = 0.0
    """``0.7 * vectorScore + 0.3 * keywordScore`` (keyword-only: the keyword score)."""
    lexical_rank: float = 0.0
    pre_decay: float = 0.0
    decay: float = 1.0
    age_days: float | None = None
    time_ms: float | None = None
    time_from: TimeFrom = "none"
    importance_multiplier: float = 1.0
    ranking_score: float = 0.0
    score: float = 0.0
    order: int = 0
    """Position after ranking (exact-path tiers first, then MMR order), from 1."""
    selected: bool = False
    below_min_score: bool = False

    def to_json(self, mode: Mode) -> dict[str, Any]:
        """OpenClaw's result fields, then memlens's components under ``memlens``."""
        h = self.hit
        out: dict[str, Any] = {
            "path": h.path,
            "startLine": h.start_line,
            "endLine": h.end_line,
            "score": self.score,
        }
        if mode != "fts-only":
            out["vectorScore"] = self.vector_score
        out["textScore"] = self.text_score
        out["snippet"] = h.snippet
        out["source"] = h.source
        if h.importance is not None:
            out["importance"] = h.importance
        if h.triggers:
            out["triggers"] = h.triggers
        if h.project_key:
            out["projectKey"] = h.project_key
        if h.provenance:
            out["provenance"] = dict(h.provenance)  # a recall table's object: shared
        out["memlens"] = {
            "id": h.id,
            "keywordScore": self.keyword_score,
            "pathScore": self.path_score,
            "exactPathSpecificity": self.exact,
            "contentScore": self.content_score,
            "lexicalRank": self.lexical_rank,
            "scoreBeforeDecay": self.pre_decay,
            "decayFactor": self.decay,
            "ageDays": self.age_days,
            "timestampMs": self.time_ms,
            "timestampFrom": self.time_from,
            "importanceMultiplier": self.importance_multiplier,
            "rankingScore": self.ranking_score,
            "rank": self.order,
            "hasVector": self.has_vector,
            "hasKeyword": self.has_keyword,
            "selected": self.selected,
            "belowMinScore": self.below_min_score,
        }
        return out


@dataclass(slots=True)
class MemorySearchResult:
    """The search's answer: ``results`` as OpenClaw returns them, ``candidates`` all of them."""

    query: str
    mode: Mode
    reason: str | None
    """Why the search was keyword-only (or empty), in plain words; None for hybrid."""
    now_ms: int
    max_results: int
    min_score: float
    index: str
    model: str | None
    results: list[MemoryCandidate] = field(default_factory=list)
    candidates: list[MemoryCandidate] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """``{"results": [...], "mode", "reason", "index", ...}`` for ``--json``."""
        return {
            "results": [c.to_json(self.mode) for c in self.results],
            "mode": self.mode,
            "reason": self.reason,
            "query": self.query,
            "index": self.index,
            "model": self.model,
            "now": self.now_ms,
            "nowIso": datetime.fromtimestamp(self.now_ms / 1000, UTC).isoformat(),
            "maxResults": self.max_results,
            "minScore": self.min_score,
            "candidates": [c.to_json(self.mode) for c in self.candidates],
            "problems": [p.to_json() for p in self.problems],
        }
