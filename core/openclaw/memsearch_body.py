"""The body hits of OpenClaw's keyword search, built from rows or from the postings in memory.

:func:`core.openclaw.memsearch_keyword.search_body` asks SQLite for the body query's
rows (or :mod:`core.openclaw.memsearch_postings` for them) and turns each into a
:class:`~core.openclaw.memsearch_records.MemoryHit` with its bm25 score and
OpenClaw's lexical boost; :func:`postings_hits` does it from the postings directly,
the boost's whole-token counts read from the term postings
(:func:`core.openclaw.memsearch_boost.boosted_from_postings`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.openclaw.memsearch_boost import boosted_from_postings, boosted_scores, path_boost
from core.openclaw.memsearch_chunks import chunk_tokens
from core.openclaw.memsearch_postings import body_postings
from core.openclaw.memsearch_records import MemoryHit
from core.openclaw.memsearch_text import SNIPPET_CHARS, fts_rank_score_array, truncate_utf16

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.openclaw.memindex import MemoryIndex
    from core.openclaw.memsearch_boost import Matcher


def path_boosts(matchers: Sequence[Matcher], paths: Sequence[str]) -> list[float]:
    """:func:`path_boost` of each of *paths* (chunks of one file share it)."""
    known: dict[str, float] = {}
    out = []
    for path in paths:
        boost = known.get(path)
        if boost is None:
            boost = known[path] = path_boost(matchers, path)
        out.append(boost)
    return out


def body_hits(
    rows: Sequence[Sequence[Any]], paths: Sequence[str], texts: Sequence[str],
    scores: Sequence[float], text_scores: Sequence[float],
) -> list[MemoryHit]:  # fmt: skip
    """The body hits of *rows* (``id, path, source, start_line, end_line, ...``)."""
    return [
        MemoryHit(
            str(cid), path, int(start), int(end), str(source),
            truncate_utf16(text, SNIPPET_CHARS), score, text_score, 0.0, 0, True,
        )
        for (cid, _, source, start, end, *_), path, text, score, text_score in zip(
            rows, paths, texts, scores, text_scores, strict=True
        )
    ]  # fmt: skip


def postings_hits(
    index: MemoryIndex, tables: tuple[str, str], sources: Sequence[str], match: str,
    limit: int, matchers: Sequence[Matcher],
) -> list[MemoryHit] | None:  # fmt: skip
    """``search_body``'s hits from the body postings in memory, or None (ask SQLite).

    *tables*: the body FTS table and the chunks table.
    """
    post = body_postings(index, *tables)
    found = post.ranked(match, sources, limit) if post is not None else None
    if post is None or found is None:
        return None
    at, ranks = found
    rows = [post.rows[r] for r in at.tolist()]  # (id, path, source, start, end, text)
    texts = [r[5] for r in rows]  # ASCII strings (the postings hold no other)
    paths = [str(r[1]) for r in rows]
    fts_scores = fts_rank_score_array(ranks)
    text_scores: list[float] = fts_scores.tolist()
    boosts = path_boosts(matchers, paths)
    scores = boosted_from_postings(matchers, post, at, texts, paths, fts_scores, boosts)
    if scores is None:
        scores = boosted_scores(matchers, texts, paths, text_scores, boosts, chunk_tokens(index))
    return body_hits(rows, paths, texts, scores, text_scores)
