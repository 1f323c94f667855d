"""OpenClaw's hybrid merge (``mergeHybridResults``) and selection, scored as records.

The union of the vector and keyword hits is scored in one pass: each candidate's
keyword, content and lexical scores, its decay, importance and project check, as a
tuple (:data:`_Record`), the formulas of :mod:`core.openclaw.memsearch_rank`. A
:class:`~core.openclaw.memsearch_records.MemoryCandidate` (and, for a vector hit,
its :class:`~core.openclaw.memsearch_records.MemoryHit`) is made from a record
only when someone reads it: every one when the whole order is asked for; otherwise
(*lazy*, the MCP tool's search) the exact-path tiers and the others MMR places as
the selection reads them, a few of ~400. Moved out of memsearch_rank with the
selection (``selectHybridSearchResults``) and OpenClaw's hybrid sort keys.
"""

from __future__ import annotations

import itertools
import math
import operator
from typing import TYPE_CHECKING, Any

import numpy as np

from core.openclaw.memsearch_mmr import (
    LAZY_PICKS,
    MMR_ARRAY_MIN,
    MMR_LAMBDA,
    mmr_order,
    mmr_picks,
    mmr_rerank,
    picks_every,
)
from core.openclaw.memsearch_rank import (
    TEXT_WEIGHT,
    VECTOR_WEIGHT,
    Clock,
    decay_at,
    exact_tie,
    importance_multiplier,
    project_ok,
    timestamp,
)
from core.openclaw.memsearch_records import MemoryCandidate, MemoryHit
from core.openclaw.memsearch_text import exact_path_matcher, locale_cmp, locale_sort_key, sort_by

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

    from core.openclaw.memindex_records import Attached

HitFields = tuple[str, str, int, int, str, str]
"""A vector hit's id, path, start and end line, source and snippet
(:func:`core.openclaw.memsearch_vectors.hit_fields`)."""

VectorRow = tuple[HitFields, float]
"""A vector hit as the search finds it: its fields and its cosine."""

_Record = tuple[Any, ...]
"""One candidate, scored: ``(hit, fields, 18 numbers and flags)`` where *hit* is the
keyword hit (a keyword-only candidate) or None, *fields* the vector hit's
``(HitFields, importance, triggers, project key, provenance, source mtime, snippet)``
(its recall rows and the keyword hit's merged in) or None, and the rest the
candidate's fields from ``vector_score`` to ``score`` in their order."""

_EXACT, _LEXICAL, _RANKING, _SCORE = 6, 11, 18, 19
"""Where a record holds ``exact``, ``lexical_rank``, ``ranking_score`` and ``score``."""


def _row_fields(
    row: VectorRow, attached: Mapping[str, Attached], session_mtimes: Mapping[str, float | None]
) -> tuple[HitFields, Any, Any, Any, Any, Any, str]:
    """A vector hit's fields with what ``attachRecallMetadata`` sets on it."""
    fields = row[0]
    a = attached.get(fields[0])
    importance, triggers, project_key, provenance = a if a is not None else (None,) * 4
    mtime = session_mtimes.get(fields[1]) if fields[4] == "sessions" else None
    return (fields, importance, triggers, project_key, provenance or None, mtime, fields[5])


def _score(
    hit: MemoryHit | None, fields: tuple[Any, ...] | None, vs: float, text_score: float,
    raw: float, path_score: float, exact: int, has_keyword: bool, has_body: bool,
    clock: Clock,
) -> _Record | None:  # fmt: skip
    """The candidate's record: ``mergeHybridResults``' scores, decay and importance.

    None when OpenClaw's project step drops the candidate.
    """
    if fields is not None:
        (_, path, _, _, source, _), importance, _, project_key, _, mtime, _ = fields
    else:
        assert hit is not None
        source, path, mtime = hit.source, hit.path, hit.source_mtime
        importance, project_key = hit.importance, hit.project_key
    kw = raw if text_score > 0 else (0.0 if exact > 0 else path_score)
    content = VECTOR_WEIGHT * vs + TEXT_WEIGHT * kw
    lexical = raw if has_body and text_score == 0 else 0.0
    if exact > 0:
        pre = exact_tie(content)
    else:
        pre = lexical if content == 0 else content
    score, decay, age = pre, 1.0, None
    ts, origin = timestamp(source, path, mtime, clock)
    if ts is not None:
        age, factor = decay_at(ts, clock.now_ms)
        if factor is not None:
            decay = factor
            score = score * factor
    multiplier = 1.0
    if importance is not None:
        multiplier = importance_multiplier(importance)
        score = score * multiplier
    if project_key and not project_ok(project_key):
        return None
    shown = 1.0 if exact > 0 else (0.0 if content == 0 else score)
    return (
        hit, fields, vs, text_score, kw, path_score, exact, fields is not None, has_keyword,
        has_body, content, lexical, pre, decay, age, ts, origin, multiplier, score, shown,
    )  # fmt: skip


def _candidate(r: _Record) -> MemoryCandidate:
    """The :class:`MemoryCandidate` of a record (and its vector hit, made here)."""
    hit, fields = r[0], r[1]
    if fields is not None:
        (cid, path, start, end, source, _), importance, triggers, project_key = fields[:4]
        provenance, mtime, snippet = fields[4:]
        hit = MemoryHit(cid, path, start, end, source, snippet, r[2])
        hit.importance, hit.triggers, hit.project_key = importance, triggers, project_key
        hit.provenance, hit.source_mtime = provenance, mtime
    return MemoryCandidate(hit, *r[2:])


class KeywordSide:
    """The keyword hits, scored as keyword-only candidates while the vector side runs.

    *hits*: the keyword hits, their recall rows attached, one per chunk id; *clock*:
    with the indexed mtimes of their files. :func:`score_candidates` scores again the
    few a vector hit of the same chunk joins.
    """

    def __init__(self, hits: list[MemoryHit], clock: Clock) -> None:
        self.hits = hits
        self.at = {h.id: i for i, h in enumerate(hits)}
        self.records = [
            _score(h, None, 0.0, h.text_score, h.score, h.path_score, h.exact, True,
                   h.has_body, clock)
            for h in hits
        ]  # fmt: skip
        self.range_keys = {_range_key(h) for h in hits}
        """The hits' ranges (``selectHybridSearchResults``' keys)."""


def score_candidates(
    query: str, vector: list[VectorRow], keyword: KeywordSide, clock: Clock,
    live: set[str] | frozenset[str], attached: Mapping[str, Attached],
    session_mtimes: Mapping[str, float | None], forms: frozenset[str] | None = None,
) -> list[_Record]:  # fmt: skip
    """``mergeHybridResults``' union by chunk id, each candidate scored (:data:`_Record`).

    *vector*: the vector hits; *live*, *attached*, *session_mtimes*: their chunks'
    recall rows (:func:`core.openclaw.memsearch_rank.recall_rows`: a vector hit of a
    chunk gone is dropped, as ``attachRecallMetadata`` drops it). *clock*: with the
    indexed mtimes of the vector hits' files. *forms*: every exact-path form of the
    index's chunk paths (:func:`~core.openclaw.memsearch_rank.warm_path_caches`).
    """
    match_exact = exact_path_matcher(query, forms)
    exact_of: dict[str, int] = {}
    by_id: dict[str, tuple[Any, ...]] = {}  # the vector hits, the last of an id kept first
    for row in vector:
        cid = row[0][0]
        if cid in live:
            by_id[cid] = (_row_fields(row, attached, session_mtimes), row[1])
    joined: set[int] = set()
    out: list[_Record] = []
    for cid, (fields, vs) in by_id.items():
        path = fields[0][1]
        exact = exact_of.get(path)
        if exact is None:
            exact = exact_of[path] = match_exact(path)
        at = keyword.at.get(cid)
        if at is None:
            r = _score(None, fields, vs, 0.0, 0.0, 0.0, exact, False, False, clock)
        else:
            h = keyword.hits[at]
            base, importance, triggers, project_key, provenance, mtime, snippet = fields
            merged = (
                base,
                importance if importance is not None else h.importance,
                triggers or h.triggers,
                project_key or h.project_key,
                provenance or h.provenance,
                mtime if mtime is not None else h.source_mtime,
                h.snippet if h.snippet else snippet,
            )
            exact = max(exact, h.exact)
            joined.add(at)
            r = _score(
                None, merged, vs, h.text_score, h.score, h.path_score, exact, True, h.has_body,
                clock,
            )  # fmt: skip
        if r is not None:
            out.append(r)
    # keyword-only, in the keyword hits' order (dropped by the project step: None)
    out += [r for i, r in enumerate(keyword.records) if r is not None and i not in joined]
    return out


# -- OpenClaw's hybrid order ------------------------------------------------------------


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
    return (-c.score, *_ranking_key(c))


_RANKING_NUMBERS = tuple(map(operator.attrgetter, ("score", "ranking_score", "lexical_rank")))


def _cmp_non_exact(a: MemoryCandidate, b: MemoryCandidate) -> int:
    if a.score != b.score:
        return -1 if b.score < a.score else 1
    return _cmp_ranking(a, b)


class HybridOrder:
    """The hybrid candidates and their order, made as read.

    Iterating gives the candidates in OpenClaw's order; its MMR picks are made as the
    iteration asks for them, so that reading the first few costs what they cost.
    :attr:`scores` holds every member's score (in no order), :meth:`member` makes the
    member of a position (the same object each time); :meth:`ordered` is the whole
    order.
    """

    def __init__(
        self, members: list[MemoryCandidate], head: list[MemoryCandidate],
        rest: Iterator[MemoryCandidate],
        lazy: tuple[list[float], Callable[[int], MemoryCandidate]] | None = None,
    ) -> None:  # fmt: skip
        self.scores = lazy[0] if lazy is not None else [c.score for c in members]
        self.member = lazy[1] if lazy is not None else members.__getitem__
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

    def over(self, min_score: float) -> list[MemoryCandidate]:
        """The members scoring *min_score* or more (in no order)."""
        return [self.member(i) for i, s in enumerate(self.scores) if s >= min_score]


def merge_hybrid(
    query: str, vector: list[VectorRow], keyword: KeywordSide, clock: Clock,
    recall: tuple[set[str] | frozenset[str], Mapping[str, Attached], Mapping[str, float | None]],
    *, lazy: bool = False, forms: frozenset[str] | None = None,
) -> HybridOrder:  # fmt: skip
    """``mergeHybridResults`` (with ``projectHybridCandidates``): the ranked union.

    *recall*: the vector hits' live chunk ids, recall rows and session mtimes (see
    :func:`score_candidates`). *lazy*: MMR places the other (not exact-path)
    candidates only as far as the :class:`HybridOrder`'s reader asks (the same
    picks, in the same order), and only those read are made. *forms*: the index's
    exact-path forms, when known (see :func:`score_candidates`).
    """
    records = score_candidates(query, vector, keyword, clock, *recall, forms=forms)
    tiers: dict[int, list[_Record]] = {0: [], 1: [], 2: [], 3: []}
    for r in records:
        members = tiers.get(r[_EXACT])  # (an exactness of no tier is dropped, as OpenClaw's)
        if members is not None:
            members.append(r)
    out: list[MemoryCandidate] = []
    for tier in (3, 2, 1):
        if not tiers[tier]:
            continue
        group = sort_by(map(_candidate, tiers[tier]), _ranking_key, _cmp_ranking, _RANKING_NUMBERS)
        for c in group:
            c.score = c.ranking_score
        group = mmr_rerank(group)
        for c in group:
            c.score = 1.0
        out += group
    others = tiers[0]
    if lazy and len(others) > MMR_ARRAY_MIN and _finite(others):
        return _lazy_order(out, others)
    non_exact = sort_by(map(_candidate, others), _non_exact_key, _cmp_non_exact, _RANKING_NUMBERS)
    if lazy and picks_every(non_exact):  # the members are the order's, picked as read
        return HybridOrder(out + non_exact, out, mmr_picks(non_exact))
    order = out + mmr_rerank(non_exact)  # (MMR drops an item of no number, as OpenClaw's)
    return HybridOrder(order, order, iter(()))


def _finite(records: list[_Record]) -> bool:
    """Whether the scores, ranking scores and lexical ranks are finite, and the scores' span."""
    scores = [r[_SCORE] for r in records]
    return (
        math.isfinite(sum(scores))
        and math.isfinite(sum(r[_RANKING] for r in records))
        and math.isfinite(sum(r[_LEXICAL] for r in records))
        and math.isfinite(max(scores) - min(scores))
    )


def _lazy_order(head: list[MemoryCandidate], others: list[_Record]) -> HybridOrder:
    """*head* (the exact-path tiers), then MMR's picks of *others* made as read."""
    ranked = _non_exact_order(others)
    made: dict[int, MemoryCandidate] = {}

    def member(i: int) -> MemoryCandidate:
        if i < len(head):
            return head[i]
        c = made.get(i - len(head))
        if c is None:
            c = made[i - len(head)] = _candidate(ranked[i - len(head)])
        return c

    scores = np.fromiter((r[_SCORE] for r in ranked), dtype=np.float64, count=len(ranked))
    snippets = [r[1][6] if r[1] is not None else r[0].snippet for r in ranked]
    picks = mmr_order(scores, snippets, MMR_LAMBDA, LAZY_PICKS)
    rest = (member(len(head) + i) for i in picks)
    return HybridOrder([], head, rest, ([c.score for c in head] + scores.tolist(), member))


def _non_exact_order(records: list[_Record]) -> list[_Record]:
    """*records* sorted by :func:`_non_exact_key`, stably (as :func:`sort_by` sorts them).

    By the score first, in numpy (stable); only records of equal scores (few: scores
    are products of cosines) are put in order by the rest of the key.
    """
    neg = -np.fromiter((r[_SCORE] for r in records), dtype=np.float64, count=len(records))
    order = np.argsort(neg, kind="stable")
    ranked = neg[order]
    out = [records[i] for i in order.tolist()]
    ties = np.flatnonzero(ranked[1:] == ranked[:-1]).tolist()  # out[t] ties out[t + 1]
    k = 0
    while k < len(ties):  # each run of equal scores (in their first order: the sort is stable)
        a = ties[k]
        while k + 1 < len(ties) and ties[k + 1] == ties[k] + 1:
            k += 1
        b = ties[k] + 2
        out[a:b] = sorted(out[a:b], key=_rest_key)
        k += 1
    return out


def _rest_key(r: _Record) -> tuple[object, ...]:
    """:func:`_ranking_key` of a record."""
    f = r[1]
    path, start, end = f[0][1:4] if f is not None else (r[0].path, r[0].start_line, r[0].end_line)
    return (-r[_RANKING], -r[_LEXICAL], locale_sort_key(path), start, end)


def _range_key(h: MemoryHit) -> str:
    return f"{h.source}:{h.path}:{h.start_line}:{h.end_line}"


def select_hybrid(
    merged: HybridOrder, keyword: list[MemoryHit], max_results: int, min_score: float,
    cap: int = 200, keys: set[str] | None = None,
) -> list[MemoryCandidate]:  # fmt: skip
    """``selectHybridSearchResults``: over minScore, then keyword-only hits to fill.

    OpenClaw takes every candidate over minScore (in order), fills with keyword-only
    ones below it (their ranges among the keyword hits, not yet taken), up to *cap*
    (its candidate universe), and cuts at *max_results*; the same, reading *merged*'s
    order only as far as the answer is known. *keys*: the keyword hits' ranges, when
    the caller has them (:attr:`KeywordSide.range_keys`).
    """
    if max_results < 0:  # JavaScript's slice(0, n): all but the last -n of the selection
        return select_hybrid(merged, keyword, cap, min_score, cap, keys)[:max_results]
    max_results = min(max_results, cap)
    if max_results == 0:
        return []
    strict = sum(1 for s in merged.scores if s >= min_score)
    if not keyword or strict >= max_results:
        want = min(strict, max_results)
        return list(itertools.islice((c for c in merged if c.score >= min_score), want))
    if keys is None:
        keys = {_range_key(h) for h in keyword}
    if not strict:
        found = (c for c in merged if c.score >= 0 and _range_key(c.hit) in keys)
        return list(itertools.islice(found, max_results))
    seen = {_range_key(c.hit) for c in merged.over(min_score)}
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
