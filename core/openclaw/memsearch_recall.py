"""The recall rows of search hits in one read, where that provably answers the same.

OpenClaw's ``attachRecallMetadata`` (:func:`core.openclaw.memsearch_rank.attach_recall`)
keeps the hits whose chunk still exists and reads their recall metadata and
provenance: three statements. With OpenClaw's schema (a chunk id names one chunk
and keys at most one row of each recall table) one LEFT JOIN reads the same rows;
:func:`live_recall` uses it there, and answers None elsewhere (the caller reads
them apart). The join of each index is worked out once and kept with it; once the
index is seen unchanged, every chunk's row is read once and kept
(:mod:`core.openclaw.memsearch_chunks`) and a search reads none.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

from core.openclaw.memindex import quote
from core.openclaw.memindex_records import Attached, RecallInfo
from core.openclaw.memsearch_chunks import RecallTable, recall_table
from core.openclaw.memsearch_vectors import canonical

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.openclaw.memindex import MemoryIndex

_META = ("chunk_id", "importance", "triggers", "project_key")
_PROV = ("chunk_id", "origin_class", "session_kind", "observed_at", "supersedes_key")
_JOINS: weakref.WeakKeyDictionary[MemoryIndex, str] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def live_recall(
    index: MemoryIndex, ids: Sequence[str]
) -> tuple[set[str], dict[str, Attached]] | None:
    """Which of *ids* are chunks now, and what their :meth:`~MemoryIndex.recall_info` attaches.

    None when the schema does not make one join the same as the separate reads.
    """
    with _LOCK:
        joins = _JOINS.get(index)
        if joins is None:
            joins = _JOINS[index] = _recall_joins(index) or ""
    if not joins:
        return None
    table = recall_table(index, lambda i: _whole_table(i, joins))
    if table is not None:  # every chunk's row, read once for this state of the index
        rows = table.rows
        alive: set[str] = set()
        attached: dict[str, Attached] = {}
        for cid in ids:
            a = rows.get(cid, _GONE)
            if a is _GONE:
                continue
            alive.add(cid)
            if a is not None:
                attached[cid] = a  # type: ignore[assignment]
        return alive, attached
    live: set[str] = set()
    out: dict[str, Attached] = {}
    wanted = sorted(set(ids))
    for i in range(0, len(wanted), 500):
        part = wanted[i : i + 500]
        marks = ", ".join("?" * len(part))
        for row in index.db.rows(f"{joins} WHERE c.id IN ({marks})", part):
            live.add(str(row[0]))
            info = _info(row)
            if info is not None:
                out[info.chunk_id] = info.attached()
    return live, out


def _whole_table(index: MemoryIndex, joins: str) -> RecallTable:
    """Every chunk's id and recall row (the join of :func:`live_recall` without its WHERE)."""
    rows: dict[str, Attached | None] = {}
    canon = canonical(index)  # the ids the hits carry (see hit_fields)
    for row in index.db.rows(joins):
        info = _info(row)
        rows[canon(str(row[0]))] = info.attached() if info is not None else None
    return RecallTable(rows)


_GONE = object()


def _info(row: Sequence[Any]) -> RecallInfo | None:
    """The :class:`RecallInfo` of one row of the join (None: neither table has a row)."""
    if row[1] is None and row[5] is None:
        return None  # recall_info has no entry
    imp, trig, proj = row[2:5] if row[1] is not None else (None, None, None)
    origin, kind, seen, sup = row[6:10] if row[5] is not None else (None,) * 4
    return RecallInfo(
        str(row[0]),
        imp if isinstance(imp, int) else None,
        trig if isinstance(trig, str) else None,
        proj if isinstance(proj, str) else None,
        origin if isinstance(origin, str) else None,
        kind if isinstance(kind, str) else None,
        seen if isinstance(seen, int) else None,
        sup if isinstance(sup, str) else None,
    )


def _recall_joins(index: MemoryIndex) -> str | None:
    """The SELECT of :func:`live_recall`, or None when the schema does not allow it."""
    lay = index.layout
    chunks, meta, prov = lay.chunks, lay.recall_metadata, lay.provenance
    if chunks is None or meta is None or prov is None or "id" not in index.columns(chunks):
        return None
    unique_id = any(
        r[2] and [c[2] for c in index.db.rows(f"PRAGMA index_info({quote(str(r[1]))})")] == ["id"]
        for r in index.db.rows(f"PRAGMA index_list({quote(chunks)})")
    )
    if not unique_id:
        return None
    for table, cols in ((meta, _META), (prov, _PROV)):
        info = index.db.rows(f"PRAGMA table_info({quote(table)})")
        keys = [str(r[1]) for r in info if r[5]]
        if keys != ["chunk_id"] or not set(cols) <= {str(r[1]) for r in info}:
            return None
    m = ", ".join(f"m.{quote(c)}" for c in _META)
    p = ", ".join(f"p.{quote(c)}" for c in _PROV)
    return (
        f"SELECT c.id, {m}, {p} FROM {quote(chunks)} c"
        f" LEFT JOIN {quote(meta)} m ON m.chunk_id = c.id"
        f" LEFT JOIN {quote(prov)} p ON p.chunk_id = c.id"
    )
