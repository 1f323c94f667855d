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

import re
import threading
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from core.openclaw.memindex import quote

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.openclaw.memindex import MemoryIndex

ENABLED = True
"""False runs OpenClaw's own statement (the tests compare the two)."""
_BATCH_MIN = 32
_WANTED = ("id", "path", "source", "start_line", "end_line", "text")
_STORAGE_OPTIONS = {"tokenize", "prefix", "detail", "columnsize"}
"""FTS5 options that leave the ``_content`` table as it is (no external content, no locale)."""
_FTS5_ARGS = re.compile(r"^\s*CREATE\s+VIRTUAL\s+TABLE\s.*?\bUSING\s+fts5\s*\((.*)\)\s*;?\s*$",
                        re.IGNORECASE | re.DOTALL)  # fmt: skip
_CONTENT: weakref.WeakKeyDictionary[MemoryIndex, dict[str, list[str] | None]] = (
    weakref.WeakKeyDictionary()
)
_LOCK = threading.Lock()


def content_columns(index: MemoryIndex, table: str) -> list[str] | None:
    """The ``{table}_content`` columns holding id, path, source, start and end line, text.

    FTS5 keeps a table's column values in its ``_content`` table (``id`` the rowid, ``cN``
    the N-th declared column) and reads them from there; reading that table directly
    gives the same values without the virtual table's per-row work. None when the table
    is declared in any other way (external content, a locale, a column missing).
    """
    with _LOCK:
        known = _CONTENT.setdefault(index, {})
        if table not in known:
            known[table] = _content_columns(index, table)
        return known[table]


def fts5_options(index: MemoryIndex, table: str) -> dict[str, str] | None:
    """The ``name=value`` options *table* was declared with (lower case); None if unsure.

    None when the declaration is not a plain ``fts5(...)`` one (quotes, brackets,
    parentheses: a tokenizer with arguments) or not found.
    """
    rows = index.db.rows("SELECT sql FROM sqlite_master WHERE name = ?", (table,))
    m = _FTS5_ARGS.match(str(rows[0][0] or "")) if rows else None
    if m is None or any(c in m.group(1) for c in "\"'`[()"):
        return None
    out: dict[str, str] = {}
    for arg in (a.strip() for a in m.group(1).split(",")):
        if "=" in arg:
            name, value = arg.split("=", 1)
            out[name.strip().lower()] = value.strip().lower()
    return out


def _content_columns(index: MemoryIndex, table: str) -> list[str] | None:
    rows = index.db.rows("SELECT sql FROM sqlite_master WHERE name = ?", (table,))
    m = _FTS5_ARGS.match(str(rows[0][0] or "")) if rows else None
    if m is None or any(c in m.group(1) for c in "\"'`[()"):
        return None
    columns: list[str] = []
    for arg in (a.strip() for a in m.group(1).split(",")):
        if "=" in arg:
            if arg.split("=")[0].strip().lower() not in _STORAGE_OPTIONS:
                return None
            continue
        words = arg.split()
        if not words or len(words) > 2 or (len(words) == 2 and words[1].lower() != "unindexed"):
            return None
        columns.append(words[0])
    content = index.db.rows(f"PRAGMA table_info({quote(table + '_content')})")
    if [str(r[1]) for r in content] != ["id", *(f"c{i}" for i in range(len(columns)))]:
        return None
    lower = [c.lower() for c in columns]
    if any(lower.count(w) != 1 for w in _WANTED):
        return None
    return [f"c{lower.index(w)}" for w in _WANTED]


def ranked_body_rows(
    index: MemoryIndex, table: str, chunks: str, sources: Sequence[str], match: str | None,
    terms: Sequence[str], limit: int,
) -> list[tuple[Any, ...]] | None:  # fmt: skip
    """OpenClaw's body query's rows ``(id, path, source, start, end, text, rank)``.

    *table* is the FTS table, *chunks* the chunks table (a row counts while its chunk
    id is there), *sources* the sources searched, *match* the MATCH query. None where
    OpenClaw's statement must run: no MATCH query, the substring *terms* of a trigram
    index, ranks that are not all numbers.
    """
    if not ENABLED or not match or terms:
        return None
    fts = quote(table)
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
    cols = content_columns(index, table)
    if cols is None:  # through the virtual table, OpenClaw's own conditions
        src, names = fts, [f"{fts}.{c}" for c in ("rowid", *_WANTED)]
    else:
        src, names = f"{quote(table + '_content')} t", ["t.id", *(f"t.{c}" for c in cols)]
    where = f" AND EXISTS (SELECT 1 FROM {quote(chunks)} c WHERE c.id = {names[1]})"
    if sources:
        where += f" AND {names[3]} IN ({', '.join('?' for _ in sources)})"
    out: list[tuple[Any, ...]] = []
    at = 0
    while len(out) < limit and at < len(order):
        part = order[at : at + max(limit - len(out), _BATCH_MIN)]
        at += len(part)
        marks = ", ".join("?" * len(part))
        sql = f"SELECT {', '.join(names)} FROM {src} WHERE {names[0]} IN ({marks}){where}"
        kept = {r[0]: r for r in index.db.rows(sql, [*part, *sources])}
        for rowid in part:
            row = kept.get(rowid)
            if row is not None and len(out) < limit:
                out.append((*row[1:], rank_of[rowid]))
    return out
