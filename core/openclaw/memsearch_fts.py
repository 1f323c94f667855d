"""The body query of OpenClaw's keyword search, with FTS5's ranking sorted in numpy.

OpenClaw's ``searchKeyword`` runs (:func:`core.openclaw.memsearch_keyword.search_body`)::

    SELECT id, path, source, start_line, end_line, text, fts.rank AS rank FROM fts
     WHERE fts MATCH ? AND fts.rank MATCH 'bm25()' AND EXISTS (live chunk)
       AND source IN (...) ORDER BY rank ASC LIMIT ?

FTS5 answers ``ORDER BY rank`` by running a second statement per query that sorts
every match by ``bm25()`` (SQLite's sorter, stable: equal ranks keep FTS5's scan
order, ascending rowid), then SQLite reads each row's columns and tests the live and
source conditions until the limit is reached. :func:`ranked_body_rows` asks SQLite for
the same matches and the same ``bm25()`` values unsorted (``rowid, rank``: no sorter
statement, no column read), sorts them by ``(rank, rowid)`` in numpy, and reads the
columns of the best rows only, with OpenClaw's own live and source conditions, until
it has *limit* of them: the same rows, in the same order, with the same ranks
(``tests/core/test_memsearch_fast.py`` compares it with OpenClaw's statement on
indexes full of equal ranks). A rank SQLite gives as NULL (a NaN) makes it step aside:
the caller runs OpenClaw's statement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.openclaw.memindex import MemoryIndex

ENABLED = True
"""False runs OpenClaw's own statement (the tests compare the two)."""
_BATCH_MIN = 32


def ranked_body_rows(
    index: MemoryIndex, fts: str, match: str | None, terms: Sequence[str], where: str,
    params: Sequence[Any], limit: int,
) -> list[tuple[Any, ...]] | None:  # fmt: skip
    """OpenClaw's body query's rows ``(id, path, source, start, end, text, rank)``.

    *fts* is the quoted FTS table, *match* the MATCH query, *where* the conditions
    after it (the live chunk and the sources, each starting with `` AND ``) and
    *params* theirs. None where OpenClaw's statement must run: no MATCH query, the
    substring *terms* of a trigram index, ranks that are not all numbers.
    """
    if not ENABLED or not match or terms:
        return None
    found = index.db.rows(
        f"SELECT rowid, rank FROM {fts} WHERE {fts} MATCH ? AND {fts}.rank MATCH 'bm25()'",
        [match],
    )
    if not found or limit <= 0:
        return []
    if not all(type(r[0]) is int and type(r[1]) is float for r in found):
        return None
    rowids = np.fromiter((r[0] for r in found), np.int64, len(found))
    ranks = np.fromiter((r[1] for r in found), np.float64, len(found))
    order = rowids[np.lexsort((rowids, ranks))].tolist()  # by rank, then rowid
    rank_of = dict(zip(rowids.tolist(), ranks.tolist(), strict=True))
    out: list[tuple[Any, ...]] = []
    at = 0
    while len(out) < limit and at < len(order):
        part = order[at : at + max(limit - len(out), _BATCH_MIN)]
        at += len(part)
        marks = ", ".join("?" * len(part))
        sql = (
            f"SELECT rowid, id, path, source, start_line, end_line, text FROM {fts}"
            f" WHERE rowid IN ({marks}){where}"
        )
        kept = {r[0]: r for r in index.db.rows(sql, [*part, *params])}
        for rowid in part:
            row = kept.get(rowid)
            if row is not None and len(out) < limit:
                out.append((*row[1:], rank_of[rowid]))
    return out
