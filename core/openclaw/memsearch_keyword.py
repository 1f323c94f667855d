"""The keyword half of OpenClaw's memory search: body FTS, path FTS, keyword fallback.

Ported from OpenClaw 2026.9.6 (``dist/manager-search-*.mjs``: ``searchKeyword``,
``searchPathKeyword``, ``scoreFallbackKeywordResult``; ``manager-runtime.js``:
``searchKeywordWithFallback``, ``mergeKeywordSearchHits``,
``limitKeywordSearchHits``, ``attachRecallMetadata``). The SQL is OpenClaw's own,
run on memlens's read-only connection; the two SQL functions OpenClaw registers
(exact path specificity, normalized substring test) are registered here the same
way. Hits are mutable records because OpenClaw's merge steps update them in
place, and the order of those updates is part of the result.
"""

from __future__ import annotations

import functools
import operator
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.io.problems import FormatError
from core.openclaw.memindex import quote
from core.openclaw.memsearch_body import body_hits, path_boosts, postings_hits
from core.openclaw.memsearch_boost import (
    boost_matcher,
    boosted_scores,
    literal_pattern,
)
from core.openclaw.memsearch_chunks import chunk_tokens
from core.openclaw.memsearch_fts import ranked_body_rows
from core.openclaw.memsearch_records import MemoryHit
from core.openclaw.memsearch_sqlfn import CONTAINS_FN, EXACT_FN, sql_functions
from core.openclaw.memsearch_text import (
    FTS_TOKEN,
    FTS_TOKEN_MARKS,
    SNIPPET_CHARS,
    all_finite,
    bm25_rank_to_score,
    build_fts_query,
    entries,
    exact_path_matcher,
    exact_path_patterns,
    extract_keywords,
    fts_rank_scores,
    is_ascii,
    locale_cmp,
    locale_sort_key,
    match_query_from_terms,
    search_tokens,
    sort_by,
    truncate_utf16,
    unique,
    utf16_len,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from core.openclaw.memindex import MemoryIndex

SNIPPET_MAX_CHARS = SNIPPET_CHARS
EXACT_PATH_CANDIDATE_LIMIT = 200
KEYWORD_FALLBACK_SEARCH_TERM_LIMIT = 6


@dataclass(frozen=True, slots=True)
class KeywordContext:
    """Where and how to search: the index, its FTS tokenizer, the sources searched."""

    index: MemoryIndex
    tokenizer: str
    sources: tuple[str, ...]
    body_table: str | None
    path_table: str | None
    chunks_table: str
    forms: frozenset[str] | None = None
    """Every exact-path form of the index's chunk paths, when known
    (:func:`core.openclaw.memsearch_rank.warm_path_caches`)."""

    @property
    def available(self) -> bool:
        """OpenClaw's ``fts.available``: the body FTS table exists."""
        return self.body_table is not None


def keyword_context(
    index: MemoryIndex, sources: Sequence[str], meta: dict[str, Any] | None = None,
    forms: frozenset[str] | None = None,
) -> KeywordContext:  # fmt: skip
    """The keyword context of *index* searching *sources*.

    *meta*: its meta, read already; *forms*: its paths' exact-path forms, when known.
    """
    lay = index.layout
    sql_functions(index)  # registered (and the connection's cache set) before the first query
    return KeywordContext(
        index,
        index.fts_tokenizer(meta),
        tuple(sources),
        lay.fts,
        lay.paths_fts,
        lay.chunks or "memory_index_chunks",
        forms,
    )


def _source_filter(ctx: KeywordContext, alias: str | None) -> tuple[str, list[Any]]:
    if not ctx.sources:
        return "", []
    col = f"{alias}.source" if alias else "source"
    marks = ", ".join("?" for _ in ctx.sources)
    return f" AND {col} IN ({marks})", list(ctx.sources)


# -- plans ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Plan:
    query: str
    match: str | None
    terms: tuple[str, ...]


def _plan(query: str, tokenizer: str, marks: bool = False) -> _Plan:
    """``planKeywordSearch``: trigram queries test short tokens as substrings."""
    if tokenizer != "trigram":
        return _Plan(query, build_fts_query(query), ())
    tokens = entries((FTS_TOKEN_MARKS if marks else FTS_TOKEN).findall(query))
    if not tokens:
        return _Plan(query, None, ())
    match = [t for t in tokens if len(t) >= 3]
    short = tuple(t for t in tokens if len(t) < 3)
    return _Plan(query, match_query_from_terms(match), short)


def _path_plans(query: str, tokenizer: str) -> list[_Plan]:
    """``planPathKeywordSearch``."""
    nfc, nfd = unicodedata.normalize("NFC", query), unicodedata.normalize("NFD", query)
    forms = unique([nfc, nfd]) if tokenizer == "trigram" else [query]
    plans: list[_Plan] = []
    seen: set[tuple[str | None, tuple[str, ...]]] = set()

    def add(plan: _Plan) -> None:
        key = (plan.match, plan.terms)
        if key not in seen:
            seen.add(key)
            plans.append(plan)

    for q in forms:
        add(_plan(q, tokenizer, marks=True))
    if tokenizer != "trigram":
        for q in unique([nfc, nfd]):
            tokens = entries(FTS_TOKEN_MARKS.findall(q))
            terms = tuple(t for t in tokens if not is_ascii(t))
            if terms:
                add(_Plan(q, match_query_from_terms([t for t in tokens if is_ascii(t)]), terms))
    return plans


def _register_contains(ctx: KeywordContext, terms: Sequence[str]) -> None:
    sql_functions(ctx.index).matchers = {t: literal_pattern(t) for t in terms}


def _substring_filter(terms: Sequence[str], column: str) -> tuple[str, list[Any]]:
    return "".join(f" AND {CONTAINS_FN}({column}, ?) = 1" for _ in terms), list(terms)


# -- body search ----------------------------------------------------------------------


def search_body(
    ctx: KeywordContext, query: str, limit: int, ranking_query: str | None
) -> list[MemoryHit]:
    """``searchKeyword`` with ``boostFallbackRanking`` (always on in search)."""
    if limit <= 0 or ctx.body_table is None:
        return []
    plan = _plan(query, ctx.tokenizer)
    if not plan.match and not plan.terms:
        return []
    fts = quote(ctx.body_table)
    live = f" AND EXISTS (SELECT 1 FROM {quote(ctx.chunks_table)} c WHERE c.id = {fts}.id)"
    src_sql, src_params = _source_filter(ctx, None)

    matchers = [boost_matcher(t) for t in unique(search_tokens(ranking_query or query))]
    if plan.match and not plan.terms:  # the postings in memory, when the index has them now
        tables = (str(ctx.body_table), ctx.chunks_table)
        hits = postings_hits(ctx.index, tables, ctx.sources, plan.match, limit, matchers)
        if hits is not None:
            return hits

    def load(match: str | None, terms: Sequence[str]) -> list[tuple[Any, ...]]:
        found = ranked_body_rows(
            ctx.index, str(ctx.body_table), ctx.chunks_table, ctx.sources, match, terms, limit
        )
        if found is not None:
            return found
        filt, fparams = _substring_filter(terms, "text")
        if terms:
            _register_contains(ctx, terms)
        clause = f"{fts} MATCH ? AND {fts}.rank MATCH 'bm25()'" if match else "1=1"
        sql = (
            f"SELECT id, path, source, start_line, end_line, text,\n"
            f"       {fts + '.rank' if match else '0'} AS rank\n  FROM {fts}\n"
            f" WHERE {clause}{filt}{live}{src_sql}\n"
            + (" ORDER BY rank ASC\n" if match else "")
            + " LIMIT ?"
        )
        params = ([match] if match else []) + fparams + src_params + [limit]
        return ctx.index.db.rows(sql, params)

    used_match = False
    if plan.match:
        try:
            rows = load(plan.match, plan.terms)
            used_match = True
        except FormatError:
            tokens = entries(FTS_TOKEN.findall(query))
            rows = load(None, unique(tokens + list(plan.terms)))
    else:
        rows = load(None, plan.terms)
    texts = [text if isinstance(text, str) else "" for *_, text, _ in rows]
    paths = [str(r[1]) for r in rows]
    text_scores = fts_rank_scores([r[6] for r in rows]) if used_match else [0.0] * len(rows)
    boosts = path_boosts(matchers, paths)
    scores = boosted_scores(matchers, texts, paths, text_scores, boosts, chunk_tokens(ctx.index))
    return body_hits(rows, paths, texts, scores, text_scores)


# -- path search ----------------------------------------------------------------------


def _cmp_path_hits(a: MemoryHit, b: MemoryHit) -> int:
    """``comparePathKeywordSearchResults``."""
    if b.exact != a.exact:
        return b.exact - a.exact
    if a.exact == 0 and b.path_score != a.path_score:
        return -1 if b.path_score < a.path_score else 1
    return locale_cmp(a.path, b.path) or (a.start_line - b.start_line) or locale_cmp(a.id, b.id)


def search_paths(ctx: KeywordContext, query: str, limit: int, exact_query: str) -> list[MemoryHit]:
    """``searchPathKeyword``: files whose path names the query; exact paths first."""
    if limit <= 0 or ctx.path_table is None:
        return []
    pfts = quote(ctx.path_table)
    chunks = quote(ctx.chunks_table)
    col = f"{pfts}.path"
    plans = _path_plans(query, ctx.tokenizer)
    plan = plans[0] if plans else _Plan(query, None, ())
    plan_filt, plan_fparams = _substring_filter(plan.terms, col)
    _register_contains(ctx, plan.terms)
    match_exact = exact_path_matcher(exact_query, ctx.forms)
    sql_functions(ctx.index).exact = match_exact
    exact_limit = EXACT_PATH_CANDIDATE_LIMIT
    patterns = exact_path_patterns(exact_query)
    src_sql, src_params = _source_filter(ctx, ctx.path_table)
    snippet = "COALESCE(CAST(substr(CAST(c.text AS BLOB), 1, ?) AS TEXT), c.text)"
    first_chunk = (
        f"  JOIN {chunks} c ON c.id = (\n    SELECT candidate.id FROM {chunks} candidate\n"
        "     WHERE candidate.path = {t}.path\n       AND candidate.source = {t}.source\n"
        "     ORDER BY candidate.start_line, candidate.end_line, candidate.id\n     LIMIT 1\n  )\n"
    )
    live = (
        f"     AND EXISTS (SELECT 1 FROM {chunks} live\n"
        "                  WHERE live.path = {t}.path\n"
        "                    AND live.source = {t}.source)\n"
    )

    def load_exact(lexical: bool) -> list[tuple[Any, ...]]:
        like_any = " OR ".join("path LIKE ? ESCAPE '\\'" for _ in patterns)
        qualified = " OR ".join(f"{col} LIKE ? ESCAPE '\\'" for _ in patterns)
        if lexical:
            ctes = (
                f"candidates AS MATERIALIZED (\n  SELECT {col}, {pfts}.source\n    FROM {pfts}\n"
                f"   WHERE {pfts + ' MATCH ?' if plan.match else '1=1'}{plan_filt}{src_sql}\n"
                f"), pattern_candidates AS MATERIALIZED (\n  SELECT path, source FROM candidates\n"
                f"   WHERE ({like_any})\n)"
            )
            params: list[Any] = ([plan.match] if plan.match else []) + plan_fparams
            params += src_params + patterns
        else:
            ctes = (
                f"pattern_candidates AS MATERIALIZED (\n  SELECT {col}, {pfts}.source\n"
                f"    FROM {pfts}\n   WHERE ({qualified}){src_sql}\n)"
            )
            params = patterns + src_params
        sql = (
            f"WITH {ctes}, scored_paths AS MATERIALIZED (\n  SELECT path, source,\n"
            f"         {EXACT_FN}(path) AS exact_path_specificity\n    FROM pattern_candidates\n"
            "), exact_paths AS MATERIALIZED (\n"
            "  SELECT path, source, exact_path_specificity FROM scored_paths\n"
            "   WHERE exact_path_specificity > 0\n"
            + live.format(t="scored_paths")
            + "   ORDER BY exact_path_specificity DESC, path ASC, source ASC\n   LIMIT ?\n)\n"
            "SELECT c.id, exact_paths.path, exact_paths.source,\n"
            f"       c.start_line, c.end_line, {snippet} AS text,"
            " exact_paths.exact_path_specificity\n  FROM exact_paths\n"
            + first_chunk.format(t="exact_paths")
            + " ORDER BY exact_paths.exact_path_specificity DESC,\n"
            "          exact_paths.path ASC, exact_paths.source ASC"
        )
        return ctx.index.db.rows(sql, [*params, exact_limit, SNIPPET_MAX_CHARS * 4])

    lexical_exact = is_ascii(exact_query) and (plan.match is not None or bool(plan.terms))

    def exact_hits() -> list[MemoryHit]:
        exact_rows: list[tuple[Any, ...]] = []
        if patterns and exact_limit > 0:
            _register_contains(ctx, plan.terms)
            try:
                exact_rows = load_exact(lexical_exact)
            except FormatError:
                if not lexical_exact:
                    raise
                exact_rows = load_exact(False)
        return [
            MemoryHit(str(r[0]), str(r[1]), int(r[3]), int(r[4]), str(r[2]),
                truncate_utf16(r[5] if isinstance(r[5], str) else "", SNIPPET_MAX_CHARS),
                exact=int(r[6]))
            for r in exact_rows
        ]  # fmt: skip

    if not any(p.match or p.terms for p in plans):
        return exact_hits()

    def load_lexical(match: str | None, terms: Sequence[str], exact: bool, n: int) -> list[Any]:
        filt, fparams = _substring_filter(terms, col)
        spec = f" AND {EXACT_FN}({col}) {'>' if exact else '='} 0"
        rank = f"bm25({pfts})" if match else "0"
        sql = (
            f"WITH retained_paths AS MATERIALIZED (\n  SELECT {col}, {pfts}.source,\n"
            f"         {rank} AS rank\n    FROM {pfts}\n"
            f"   WHERE {pfts + ' MATCH ?' if match else '1=1'}{filt}{src_sql}{spec}\n"
            + live.format(t=pfts)
            + f"   ORDER BY rank ASC, {col} ASC, {pfts}.source ASC\n   LIMIT ?\n)\n"
            "SELECT c.id, retained_paths.path, retained_paths.source,\n"
            f"       c.start_line, c.end_line, {snippet} AS text, retained_paths.rank\n"
            "  FROM retained_paths\n"
            + first_chunk.format(t="retained_paths")
            + " ORDER BY retained_paths.rank ASC, retained_paths.path ASC,"
            " retained_paths.source ASC"
        )
        params = ([match] if match else []) + fparams + src_params
        return ctx.index.db.rows(sql, [*params, n, SNIPPET_MAX_CHARS * 4])

    no_exact: list[bool] = []

    def partitions(match: str | None, terms: Sequence[str]) -> list[Any]:
        _register_contains(ctx, terms)
        rows = load_lexical(match, terms, True, exact_limit) if exact_limit > 0 else []
        no_exact.append(not rows)
        return rows + load_lexical(match, terms, False, limit)

    lexical: dict[str, MemoryHit] = {}
    # The exact-path query's lexical candidates are the first plan's matches, and its
    # rows need an exact specificity and a live chunk: the first plan's exact
    # partition with more conditions. That partition empty, so is the query's answer.
    skip_exact = False
    for k, p in enumerate(plans):
        if not p.match and not p.terms:
            continue
        used = False
        if p.match:
            try:
                rows, used = partitions(p.match, p.terms), True
                skip_exact = skip_exact or (k == 0 and lexical_exact and no_exact[-1])
            except FormatError:
                tokens = entries(FTS_TOKEN_MARKS.findall(p.query))
                rows = partitions(None, unique(tokens + list(p.terms)))
        else:
            rows = partitions(None, p.terms)
        for r in rows:
            score = bm25_rank_to_score(r[6]) if used else 1.0
            hit = MemoryHit(
                str(r[0]), str(r[1]), int(r[3]), int(r[4]), str(r[2]),
                truncate_utf16(r[5] if isinstance(r[5], str) else "", SNIPPET_MAX_CHARS),
                score, 0.0, score, match_exact(str(r[1])),
            )  # fmt: skip
            old = lexical.get(hit.id)
            if old is None:
                lexical[hit.id] = hit
                continue
            old.path_score = max(old.path_score, hit.path_score)
            old.score = max(old.score, hit.score)
            old.exact = max(old.exact, hit.exact)
    by_id = {h.id: h for h in ([] if skip_exact else exact_hits())}
    non_exact = 0
    for hit in sorted(lexical.values(), key=functools.cmp_to_key(_cmp_path_hits)):
        known = by_id.get(hit.id)
        if hit.exact > 0:
            if known is None:
                continue
            known.path_score = max(known.path_score, hit.path_score)
            known.score = max(known.score, hit.score)
            known.exact = max(known.exact, hit.exact)
            continue
        if non_exact >= limit:
            continue
        by_id[hit.id] = hit
        non_exact += 1
    ranked = sorted(by_id.values(), key=functools.cmp_to_key(_cmp_path_hits))
    return ranked[: exact_limit + limit]


# -- merging and the fallback ---------------------------------------------------------


def compare_keyword_hits(a: MemoryHit, b: MemoryHit, prefer_exact_body: bool = True) -> int:
    """``compareKeywordSearchHits``."""
    if b.exact != a.exact:
        return b.exact - a.exact
    if prefer_exact_body and a.exact > 0 and b.has_body != a.has_body:
        return int(b.has_body) - int(a.has_body)
    for x, y in ((a.score, b.score), (a.text_score, b.text_score)):
        if x != y:
            return -1 if y < x else 1
    if a.exact == 0 and a.path_score != b.path_score:
        return -1 if b.path_score < a.path_score else 1
    return locale_cmp(a.path, b.path) or (a.start_line - b.start_line) or locale_cmp(a.id, b.id)


def _keyword_key(prefer_exact_body: bool) -> Callable[[MemoryHit], tuple[Any, ...]]:
    """The sort key of :func:`compare_keyword_hits` (finite scores), the id bare (see sort_by)."""

    def key(h: MemoryHit) -> tuple[Any, ...]:
        body = -int(h.has_body) if prefer_exact_body and h.exact > 0 else 0
        path = -h.path_score if h.exact == 0 else 0.0
        return (-h.exact, body, -h.score, -h.text_score, path, locale_sort_key(h.path),
                h.start_line, h.id)  # fmt: skip

    return key


def _id_key(h: MemoryHit) -> tuple[str, str]:
    """The last element of :func:`_keyword_key`, exactly (its key holds the bare id)."""
    return locale_sort_key(h.id)


_KEYS = {True: _keyword_key(True), False: _keyword_key(False)}


_HIT_NUMBERS = tuple(map(operator.attrgetter, ("score", "text_score", "path_score")))


def sort_keyword_hits(hits: Iterable[MemoryHit], prefer_exact_body: bool = True) -> list[MemoryHit]:
    """*hits* in :func:`compare_keyword_hits` order."""
    return sort_by(
        hits,
        _KEYS[prefer_exact_body],
        functools.partial(compare_keyword_hits, prefer_exact_body=prefer_exact_body),
        _HIT_NUMBERS,
        _id_key,
    )


def merge_keyword_hits(
    sets: Sequence[Sequence[MemoryHit]], exact_query: str, ordered: bool = True,
    forms: frozenset[str] | None = None,
) -> list[MemoryHit]:  # fmt: skip
    """``mergeKeywordSearchHits``: one hit per chunk, the best body score, the longest snippet.

    *ordered* False: unsorted, for :func:`limit_keyword_hits` with ``ordered=False``
    (with a NaN score, sorted all the same: the comparator's order then depends on
    its input's, and OpenClaw sorts here).
    """
    match_exact = exact_path_matcher(exact_query, forms)
    seen: dict[str, MemoryHit] = {}
    for results in sets:
        for r in results:
            old = seen.get(r.id)
            if old is None:
                r.exact = match_exact(r.path)
                seen[r.id] = r
                continue
            old_body = old.score if old.has_body else 0.0
            new_body = r.score if r.has_body else 0.0
            had_body = old.has_body
            old.text_score = max(old.text_score, r.text_score)
            old.path_score = max(old.path_score, r.path_score)
            old.has_body = old.has_body or r.has_body
            body = max(old_body, new_body)
            old.score = body if body > 0 else old.path_score
            if (r.has_body and not had_body) or (
                r.has_body == had_body and utf16_len(r.snippet) > utf16_len(old.snippet)
            ):
                old.snippet = r.snippet
    merged = list(seen.values())
    for r in merged:
        if not r.has_body:
            r.score = 1.0 if r.exact > 0 else r.path_score
    if not ordered and all_finite(merged, _HIT_NUMBERS):
        return merged
    return sort_keyword_hits(merged)  # a NaN: OpenClaw's comparator order depends on it


def limit_keyword_hits(
    results: Sequence[MemoryHit], non_exact_limit: int, presorted: bool = False,
    ordered: bool = True,
) -> list[MemoryHit]:  # fmt: skip
    """``limitKeywordSearchHits``: exact-path hits (bounded), then the best others.

    *presorted*: *results* come straight from :func:`merge_keyword_hits`, sorted in
    this order; with finite numbers that sort was by the key, and sorting by it again
    changes nothing (a NaN: sorted again by the comparator, as OpenClaw does).
    *ordered* False: the caller sorts the hits again by a total order (OpenClaw's
    keyword-only finish, by :func:`sort_keyword_hits`, which ends with the chunk
    id), so where no limit cuts the others keep any order, and need no sort here.
    """
    if not ordered and all_finite(results, _HIT_NUMBERS):
        exact = [h for h in results if h.exact > 0]
        others = [h for h in results if h.exact == 0]
        files = {f"{h.source}:{h.path}" for h in exact}
        with_body = sum(1 for h in exact if h.has_body)
        if (
            len(others) <= non_exact_limit
            and with_body <= non_exact_limit
            and len(files) < EXACT_PATH_CANDIDATE_LIMIT
        ):
            return sort_keyword_hits(exact) + others
    finite = presorted and ordered and all_finite(results, _HIT_NUMBERS)
    ranked = list(results) if finite else sort_keyword_hits(results)
    exact_body = [h for h in ranked if h.exact > 0 and h.has_body][:non_exact_limit]
    exact_only = [h for h in ranked if h.exact > 0 and not h.has_body]
    bounded = sort_keyword_hits(exact_body + exact_only)
    keys: set[str] = set()
    for h in bounded:
        keys.add(f"{h.source}:{h.path}")
        if len(keys) == EXACT_PATH_CANDIDATE_LIMIT:
            break
    exact = [h for h in bounded if f"{h.source}:{h.path}" in keys]
    return exact + [h for h in ranked if h.exact == 0][:non_exact_limit]


def search_keyword(
    ctx: KeywordContext, query: str, limit: int, *, exact_query: str | None = None,
    ranking_query: str | None = None, ordered: bool = True,
) -> list[MemoryHit]:  # fmt: skip
    """``MemoryKeywordRetrieval.searchKeyword``: body and path hits, merged and limited.

    *ordered*: see :func:`limit_keyword_hits`.
    """
    if not ctx.available:
        return []
    exact_q = exact_query if exact_query is not None else query
    body = search_body(ctx, query, limit, ranking_query)
    for h in body:
        h.path_score = 0.0
    paths = search_paths(ctx, query, limit, exact_q)
    merged = merge_keyword_hits([body, paths], exact_q, ordered, ctx.forms)
    return limit_keyword_hits(merged, limit, True, ordered)


def fallback_terms(query: str, tokenizer: str) -> list[str]:
    """``resolveKeywordFallbackTerms``: up to 6 keywords, the whole query excluded."""
    whole = query.strip().lower()
    terms = [t for t in extract_keywords(query, fts_tokenizer=tokenizer) if t != whole]
    return terms[:KEYWORD_FALLBACK_SEARCH_TERM_LIMIT]


def search_keyword_with_fallback(
    ctx: KeywordContext, query: str, limit: int, ordered: bool = True
) -> list[MemoryHit]:
    """``searchKeywordWithFallback`` (without the recall metadata, see memsearch).

    *ordered* False: the hits in OpenClaw's order only where a limit needs it (see
    :func:`limit_keyword_hits`); the same hits.
    """
    full = search_keyword(ctx, query, limit, ordered=ordered)
    if sum(1 for h in full if h.exact == 0) >= limit:
        return full
    terms = fallback_terms(query, ctx.tokenizer)
    if not terms:
        return full
    strict = build_fts_query(query)
    keyword = build_fts_query(" ".join(terms))
    if full and (strict and strict.lower()) == (keyword and keyword.lower()):
        return full
    sets = [
        search_keyword(ctx, t, limit, exact_query=query, ranking_query=query, ordered=ordered)
        for t in terms
    ]
    return limit_keyword_hits(
        merge_keyword_hits([full, *sets], query, ordered, ctx.forms), limit, True, ordered
    )
