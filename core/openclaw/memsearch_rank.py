"""The ranking of OpenClaw's memory search: recall metadata, decay, importance, MMR, merge.

Each function names the OpenClaw function it ports (memory-core 2026.9.6,
docs/notes/openclaw-sqlite.md section 6): the 30-day half-life decay of dated
notes, the importance multiplier, MMR over snippet tokens, the hybrid merge
``0.7 * vectorScore + 0.3 * keywordScore`` with its exact-path tiers, and the
keyword-only finish.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from core.openclaw.memindex import quote
from core.openclaw.memsearch_chunks import GenerationTables
from core.openclaw.memsearch_keyword import sort_keyword_hits
from core.openclaw.memsearch_mmr import mmr_picks, mmr_rerank, picks_every
from core.openclaw.memsearch_recall import live_recall
from core.openclaw.memsearch_records import MemoryCandidate
from core.openclaw.memsearch_text import (
    exact_path_matcher,
    locale_cmp,
    locale_sort_key,
    path_forms,
    sort_by,
)
from core.openclaw.memsearch_vectors import index_signature

if TYPE_CHECKING:
    from collections.abc import Iterator

    from core.openclaw.memindex import MemoryIndex
    from core.openclaw.memindex_records import Attached
    from core.openclaw.memsearch_records import MemoryHit, TimeFrom

VECTOR_WEIGHT = 0.7
TEXT_WEIGHT = 0.3
HALF_LIFE_DAYS = 30.0
DAY_MS = 864e5
INVALID_PROJECT_KEY = "!invalid-project-annotation"
_DATED = re.compile(r"(?:^|/)memory/(?:[^/]+/)*(\d{4})-(\d{2})-(\d{2})(?:-[^/]+)?\.md$")


# -- recall metadata, decay, importance --------------------------------------------------


def attach_recall(index: MemoryIndex, hits: list[MemoryHit]) -> list[MemoryHit]:
    """``attachRecallMetadata``: keep live chunks; importance, provenance, session mtimes."""
    if not hits or index.layout.chunks is None:
        return hits
    live, attached = recall_rows(index, list({h.id for h in hits}))
    session_mtimes = index.file_mtimes("sessions", [h.path for h in hits if h.source == "sessions"])
    get = attached.get
    out = []
    for h in hits:
        if h.id not in live:
            continue
        out.append(h)
        a = get(h.id)
        if a is not None:
            importance, triggers, project_key, provenance = a
            if importance is not None:
                h.importance = importance
            if triggers is not None:
                h.triggers = triggers
            if project_key is not None:
                h.project_key = project_key
            if provenance:
                h.provenance = provenance
        if h.source == "sessions":
            h.source_mtime = session_mtimes.get(h.path)
    return out


def recall_rows(index: MemoryIndex, ids: list[str]) -> tuple[set[str], dict[str, Attached]]:
    """Which of *ids* (distinct) are chunks now, and what their recall rows attach to a hit."""
    found = live_recall(index, ids)  # one join where it reads the same rows
    if found is not None:
        return found
    live: set[str] = set()
    for i in range(0, len(ids), 500):
        part = ids[i : i + 500]
        marks = ", ".join("?" * len(part))
        sql = f"SELECT id FROM {quote(index.layout.chunks or '')} WHERE id IN ({marks})"
        live.update(str(r[0]) for r in index.db.rows(sql, part))
    return live, {i: r.attached() for i, r in index.recall_info(ids).items()}


@functools.lru_cache(maxsize=1 << 16)
def memory_date_ms(path: str) -> int | None:
    """``parseMemoryDateFromPath``: the UTC midnight of ``memory/…/YYYY-MM-DD[-x].md``."""
    norm = path.replace("\\", "/")
    norm = norm[2:] if norm.startswith("./") else norm
    m = _DATED.search(norm)
    if not m:
        return None
    try:
        day = datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), tzinfo=UTC)
    except ValueError:
        return None
    return int(day.timestamp() * 1000)


@functools.lru_cache(maxsize=1 << 16)
def is_evergreen(path: str) -> bool:
    """``isEvergreenMemoryPath``: ``MEMORY.md``, ``USER.md``, undated ``memory/*``."""
    norm = path.replace("\\", "/")
    norm = norm[2:] if norm.startswith("./") else norm
    if norm in ("MEMORY.md", "USER.md"):
        return True
    return norm.startswith("memory/") and not _DATED.search(norm)


WARM_PATHS = 1 << 14
"""Indexes of more files leave their paths' caches to fill as searches find them."""


def _warm_paths(index: MemoryIndex) -> int | None:
    """Every per-path cache a search reads, filled for each of *index*'s files.

    A search finds ~150 chunks of as many files, each one's locale sort key, date,
    evergreen test and exact-path forms computed at first sight (about 3 us each):
    an index's files are few beside its chunks (5,000 for 50,000 chunks: 15 ms).
    """
    table = quote(index.layout.chunks or "")
    paths = index.db.rows(f"SELECT DISTINCT path FROM {table} LIMIT {WARM_PATHS + 1}")
    if len(paths) > WARM_PATHS:
        return None
    for (path,) in paths:
        if isinstance(path, str):
            memory_date_ms(path)
            is_evergreen(path)
            locale_sort_key(path)
            path_forms(path)
    return len(paths)


PATH_CACHES = GenerationTables(index_signature)


def warm_path_caches(index: MemoryIndex) -> None:
    """The per-path caches filled for *index*'s files, once per index generation."""
    PATH_CACHES.get(index, _warm_paths)


@dataclass(frozen=True, slots=True)
class Clock:
    """Where timestamps come from: the search time, the workspace, the index's mtimes."""

    now_ms: int
    workspace: Path | None
    index_mtimes: dict[str, float | None]


def _timestamp(c: MemoryCandidate, clock: Clock) -> tuple[float | None, TimeFrom]:
    h = c.hit
    return timestamp(h.source, h.path, h.source_mtime, clock)


def timestamp(
    source: str, path: str, source_mtime: float | None, clock: Clock
) -> tuple[float | None, TimeFrom]:
    """``extractTimestamp`` of a hit (whole milliseconds, as a JavaScript Date)."""
    if source == "sessions":
        m = source_mtime
        return (
            (math.trunc(m), "session-mtime")
            if m is not None and math.isfinite(m)
            else (None, "none")
        )
    dated = memory_date_ms(path)
    if dated is not None:
        return float(dated), "path-date"
    if source == "memory" and is_evergreen(path):
        return None, "evergreen"
    if clock.workspace is None:
        # OpenClaw stats the workspace file; without a workspace the indexed mtime stands in.
        m = clock.index_mtimes.get(path)
        return (math.trunc(m), "index-mtime") if m is not None else (None, "none")
    target = Path(path) if os.path.isabs(path) else clock.workspace / path
    try:
        return float(target.stat().st_mtime_ns // 1_000_000), "file-mtime"
    except OSError:
        return None, "none"


_DECAY_RATE = -(math.log(2) / HALF_LIFE_DAYS)
"""``-(Math.LN2 / halfLifeDays)``: the same float as computed per candidate."""


def apply_decay(cands: list[MemoryCandidate], clock: Clock) -> None:
    """``applyTemporalDecayToHybridResults``: ``score * exp(-ln2/30 * ageDays)``."""
    for c in cands:
        c.pre_decay = c.score
        ts, origin = _timestamp(c, clock)
        c.time_from = origin
        if ts is None:
            continue
        c.time_ms = ts
        c.age_days, decay = decay_at(ts, clock.now_ms)
        if decay is None:
            continue
        c.decay = decay
        c.score = c.score * decay


def decay_at(ts: float, now_ms: int) -> tuple[float, float | None]:
    """The age in days of a time *ts* and its decay factor (None: an age of no number)."""
    age = max(0.0, (now_ms - ts) / DAY_MS)
    if not math.isfinite(age):
        return age, None
    return age, math.exp(_DECAY_RATE * age)


def importance_multiplier(importance: int | None) -> float:
    """``importanceMultiplier``: 0.75 + 0.05 per importance point (1..10)."""
    if importance is None:
        return 1.0
    return 0.75 + max(1, min(10, math.floor(importance))) * 0.05


def apply_importance(cands: list[MemoryCandidate]) -> list[MemoryCandidate]:
    """Importance, then OpenClaw's project step (drops invalid project annotations)."""
    out = []
    for c in cands:
        h = c.hit
        if h.importance is not None:
            c.importance_multiplier = importance_multiplier(h.importance)
            c.score = c.score * c.importance_multiplier
        else:  # a multiplier of 1.0: the same score
            c.importance_multiplier = 1.0
        if project_ok(h.project_key):
            out.append(c)
    return out


def project_ok(key: str | None) -> bool:
    """Whether a hit of this project key stays (OpenClaw drops invalid annotations)."""
    return not key or INVALID_PROJECT_KEY not in [k.strip() for k in key.split(";")]


def _exact_tie(content: float) -> float:
    """``scoreExactPathTieForTemporalDecay``."""
    return (1 + max(0.0, min(1.0, content))) / 2


# -- hybrid ---------------------------------------------------------------------------


def _cmp_ranking(a: MemoryCandidate, b: MemoryCandidate) -> int:
    for x, y in ((a.ranking_score, b.ranking_score), (a.lexical_rank, b.lexical_rank)):
        if x != y:
            return -1 if y < x else 1
    return (
        locale_cmp(a.hit.path, b.hit.path)
        or (a.hit.start_line - b.hit.start_line)
        or (a.hit.end_line - b.hit.end_line)
    )


def _ranking_key(c: MemoryCandidate) -> tuple[object, ...]:
    """:func:`_cmp_ranking` as a key (finite scores)."""
    h = c.hit
    return (-c.ranking_score, -c.lexical_rank, locale_sort_key(h.path), h.start_line, h.end_line)


def _non_exact_key(c: MemoryCandidate) -> tuple[object, ...]:
    """:func:`_cmp_non_exact` as a key (finite scores)."""
    h = c.hit  # (:func:`_ranking_key` spelled out: a key per candidate, per search)
    return (
        -c.score, -c.ranking_score, -c.lexical_rank, locale_sort_key(h.path), h.start_line,
        h.end_line,
    )  # fmt: skip


_RANKING_NUMBERS = tuple(map(operator.attrgetter, ("score", "ranking_score", "lexical_rank")))


def _cmp_non_exact(a: MemoryCandidate, b: MemoryCandidate) -> int:
    if a.score != b.score:
        return -1 if b.score < a.score else 1
    return _cmp_ranking(a, b)


class HybridOrder:
    """The hybrid candidates (:attr:`members`, in no order) and their order, made as read.

    Iterating gives the candidates in OpenClaw's order; its MMR picks are made as the
    iteration asks for them (:func:`~core.openclaw.memsearch_mmr.mmr_picks`), so that
    reading the first few costs what they cost. :meth:`ordered` is the whole order.
    """

    def __init__(
        self, members: list[MemoryCandidate], head: list[MemoryCandidate],
        rest: Iterator[MemoryCandidate],
    ) -> None:  # fmt: skip
        self.members = members
        self.done = list(head)
        """The candidates ordered so far."""
        self._rest: Iterator[MemoryCandidate] | None = rest

    def __iter__(self) -> Iterator[MemoryCandidate]:
        i = 0
        while True:
            if i < len(self.done):
                yield self.done[i]
                i += 1
                continue
            if self._rest is None:
                return
            nxt = next(self._rest, None)
            if nxt is None:
                self._rest = None
                return
            self.done.append(nxt)

    def ordered(self) -> list[MemoryCandidate]:
        """Every candidate, in order."""
        return list(self)

    def unordered(self) -> list[MemoryCandidate]:
        """The candidates not ordered yet (in no particular order)."""
        placed = {id(c) for c in self.done}
        return [c for c in self.members if id(c) not in placed]


def merge_hybrid(
    query: str, vector: list[MemoryHit], keyword: list[MemoryHit], clock: Clock,
    *, lazy: bool = False,
) -> HybridOrder:  # fmt: skip
    """``mergeHybridResults`` (with ``projectHybridCandidates``): the ranked union.

    *lazy*: MMR picks only as many of the other (not exact-path) candidates as the
    :class:`HybridOrder`'s reader asks for (the same picks, in the same order).
    """
    match_exact = exact_path_matcher(query)
    exact_of: dict[str, int] = {}
    by_id: dict[str, MemoryCandidate] = {}
    # candidates built positionally (the fields' order: hit, vector, text, keyword and
    # path scores, exact, has_vector, has_keyword, has_body): half the time of keywords
    for h in vector:
        exact = exact_of.get(h.path)
        if exact is None:
            exact = exact_of[h.path] = match_exact(h.path)
        by_id[h.id] = MemoryCandidate(h, h.score, 0.0, 0.0, 0.0, exact, True)
    for h in keyword:
        c = by_id.get(h.id)
        if c is not None:
            c.text_score = h.text_score
            c.has_body = h.has_body
            c.keyword_score = h.score
            c.path_score = h.path_score
            c.exact = max(c.exact, h.exact)
            c.has_keyword = True
            v = c.hit
            v.importance = v.importance if v.importance is not None else h.importance
            v.triggers = v.triggers or h.triggers
            v.project_key = v.project_key or h.project_key
            v.provenance = v.provenance or h.provenance
            if v.source_mtime is None:
                v.source_mtime = h.source_mtime
            if h.snippet:
                v.snippet = h.snippet
        else:
            by_id[h.id] = MemoryCandidate(
                h, 0.0, h.text_score, h.score, h.path_score, h.exact, False, True, h.has_body
            )
    cands = list(by_id.values())
    for c in cands:
        raw = c.keyword_score  # the keyword side's rankingScore (boosted, or the path score)
        kw = raw if c.text_score > 0 else (0.0 if c.exact > 0 else c.path_score)
        c.keyword_score = kw
        c.content_score = VECTOR_WEIGHT * c.vector_score + TEXT_WEIGHT * kw
        c.lexical_rank = raw if c.has_body and c.text_score == 0 else 0.0
        if c.exact > 0:
            c.score = _exact_tie(c.content_score)
        else:
            c.score = c.lexical_rank if c.content_score == 0 else c.content_score
    apply_decay(cands, clock)
    ranked = apply_importance(cands)
    tiers: dict[int, list[MemoryCandidate]] = {0: [], 1: [], 2: [], 3: []}
    for c in ranked:
        c.ranking_score = c.score
        c.score = 1.0 if c.exact > 0 else (0.0 if c.content_score == 0 else c.score)
        group = tiers.get(c.exact)  # (an exactness of no tier is dropped, as OpenClaw's)
        if group is not None:
            group.append(c)
    non_exact = sort_by(tiers[0], _non_exact_key, _cmp_non_exact, _RANKING_NUMBERS)
    out: list[MemoryCandidate] = []
    for tier in (3, 2, 1):
        if not tiers[tier]:
            continue
        group = sort_by(tiers[tier], _ranking_key, _cmp_ranking, _RANKING_NUMBERS)
        for c in group:
            c.score = c.ranking_score
        group = mmr_rerank(group)
        for c in group:
            c.score = 1.0
        out += group
    if lazy and picks_every(non_exact):  # the members are the order's, picked as read
        return HybridOrder(out + non_exact, out, mmr_picks(non_exact))
    order = out + mmr_rerank(non_exact)  # (MMR drops an item of no number, as OpenClaw's)
    return HybridOrder(order, order, iter(()))


def _range_key(h: MemoryHit) -> str:
    return f"{h.source}:{h.path}:{h.start_line}:{h.end_line}"


def select_hybrid(
    merged: HybridOrder, keyword: list[MemoryHit], max_results: int, min_score: float,
    cap: int = 200,
) -> list[MemoryCandidate]:  # fmt: skip
    """``selectHybridSearchResults``: over minScore, then keyword-only hits to fill.

    OpenClaw takes every candidate over minScore (in order), fills with keyword-only
    ones below it (their ranges among the keyword hits, not yet taken), up to *cap*
    (its candidate universe), and cuts at *max_results*; the same, reading *merged*'s
    order only as far as the answer is known.
    """
    if max_results < 0:  # JavaScript's slice(0, n): all but the last -n of the selection
        return select_hybrid(merged, keyword, cap, min_score, cap)[:max_results]
    max_results = min(max_results, cap)
    if max_results == 0:
        return []
    strict = sum(1 for c in merged.members if c.score >= min_score)
    if not keyword or strict >= max_results:
        want = min(strict, max_results)
        return list(itertools.islice((c for c in merged if c.score >= min_score), want))
    keys = {_range_key(h) for h in keyword}
    if not strict:
        found = (c for c in merged if c.score >= 0 and _range_key(c.hit) in keys)
        return list(itertools.islice(found, max_results))
    seen = {_range_key(c.hit) for c in merged.members if c.score >= min_score}
    over: list[MemoryCandidate] = []
    fills: list[MemoryCandidate] = []
    for c in merged:
        if c.score >= min_score:
            over.append(c)
        elif len(fills) < max_results - strict and c.score < min_score and c.vector_score == 0:
            key = _range_key(c.hit)
            if key in keys and key not in seen:
                seen.add(key)
                fills.append(c)
        if len(over) == strict and len(fills) == max_results - strict:
            break
    return over + fills


def finalize_keyword_only(
    hits: list[MemoryHit], clock: Clock, max_results: int, min_score: float
) -> tuple[list[MemoryCandidate], list[MemoryCandidate]]:
    """``finalizeKeywordOnlyResults``: decay, importance, sort, minScore (relaxed to 0)."""
    cands = []
    for h in hits:  # positional (the fields' order): half the time of keywords, per hit
        c = MemoryCandidate(
            h, 0.0, h.text_score, h.score, h.path_score, h.exact, False, True, h.has_body
        )
        c.content_score = h.score if h.has_body else 0.0
        c.score = _exact_tie(c.content_score) if h.exact > 0 else h.score
        cands.append(c)
    apply_decay(cands, clock)
    ranked = apply_importance(cands)

    for c in ranked:
        c.hit.score = c.score  # compareKeywordSearchHits reads the decayed score

    order = {id(h): i for i, h in enumerate(sort_keyword_hits([c.hit for c in ranked], False))}
    ranked.sort(key=lambda c: order[id(c.hit)])
    for c in ranked:
        c.ranking_score = c.score
        if c.exact > 0:
            c.score = 1.0
    strict = [c for c in ranked if c.score >= min_score]
    chosen = strict[:max_results] if strict else [c for c in ranked if c.score >= 0][:max_results]
    return ranked, chosen
