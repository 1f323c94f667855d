r"""OpenClaudeCode's memory search: FTS5 over ``memory_fts``, read-only.

As the design's ``MemoryManager.search``: the query's tokens (``[\p{L}\p{N}_]+``)
each double-quoted and joined with ``AND`` (OpenClaw's ``buildFtsQuery``,
:func:`core.openclaw.memsearch_text.build_fts_query`), ``ORDER BY rank``, at most
*max_results* hits, those under *min_score* dropped, optionally only one session key,
one channel (the key's part before the first ``:``) or one source.

The score: the design writes ``1 / (1 + rank)``, but FTS5's ``rank`` is the negative
bm25 (lower is better), where that formula is undefined at -1 and exceeds 1 below
it. The agent's code, read for the design (OpenClaw 2026.9.6's ``bm25RankToScore``),
maps a negative rank ``r`` to ``-r / (1 - r)`` and only a non-negative one to
``1 / (1 + rank)``; the code wins, so scores are
:func:`core.openclaw.memsearch_text.bm25_rank_to_score` (0..1, higher is better).
Each hit keeps the raw rank beside its score.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.io.closing import Closing
from core.io.problems import FormatError
from core.openclaudecode.home import find_openclaudecode
from core.openclaudecode.sessions_table import channel_of
from core.openclaw.memsearch_text import bm25_rank_to_score, build_fts_query
from core.openclaw.sqlite_ro import ReadOnlyDb

if TYPE_CHECKING:
    import os

DEFAULT_MAX_RESULTS = 10
SNIPPET_TOKENS = 24
"""Tokens of FTS5's ``snippet()`` excerpt around the matches."""


@dataclass(frozen=True, slots=True)
class MemoryFtsHit:
    """One chunk found: the design's ``MemorySearchResult`` and how it scored."""

    id: str
    session_key: str
    source: str
    """``session`` or ``memory``."""
    text: str
    """The chunk's whole text."""
    snippet: str
    """FTS5's excerpt around the matched tokens (``…`` where text was left out)."""
    timestamp: int | None
    """``memory_chunks.timestamp`` (epoch ms); None when the chunk row is missing."""
    rank: float
    """FTS5's raw ``rank`` (bm25, negative: lower is better)."""
    score: float

    @property
    def channel(self) -> str:
        """The session key's channel (``telegram``)."""
        return channel_of(self.session_key)


@dataclass(frozen=True, slots=True)
class MemoryFtsResult:
    """The hits of one search, best first, and the ``MATCH`` string used."""

    query: str
    match: str | None
    """The FTS5 query sent (None when the query has no token)."""
    hits: tuple[MemoryFtsHit, ...] = ()
    reason: str | None = None
    """Why there is no hit to look for (a blank query, no token), else None."""
    database: str = ""


def _clean(value: str | None) -> str | None:
    return value.strip() if value is not None and value.strip() else None


class MemoryFts(Closing):
    """An OpenClaudeCode database opened read-only for repeated searches."""

    def __init__(self, db_path: str | os.PathLike[str]) -> None:
        path = Path(db_path)
        if path.is_dir():
            home = find_openclaudecode(path)
            if home is None:
                raise FormatError(str(path), "no OpenClaudeCode database here")
            path = home.database
        self.path = str(path)
        self.db = ReadOnlyDb(path)
        tables = self.db.tables()
        if "memory_fts" not in tables:
            self.db.close()
            raise FormatError(self.path, "no memory_fts table: not an OpenClaudeCode memory")
        self._chunks = "memory_chunks" in tables

    def close(self) -> None:
        """Close the database."""
        self.db.close()

    def search(
        self,
        query: str,
        *,
        max_results: int = DEFAULT_MAX_RESULTS,
        min_score: float = 0.0,
        session_key: str | None = None,
        channel: str | None = None,
        source: str | None = None,
    ) -> MemoryFtsResult:
        """Search the memory; see :func:`search_memory`."""
        if not isinstance(max_results, int) or isinstance(max_results, bool) or max_results < 1:
            raise ValueError(f"max_results must be a whole number >= 1, not {max_results!r}")
        if query is None or not str(query).strip():
            return MemoryFtsResult(query or "", None, reason="empty query", database=self.path)
        match = build_fts_query(query)
        if match is None:
            return MemoryFtsResult(
                query, None, reason="no searchable token in the query", database=self.path
            )
        where = ["memory_fts MATCH ?"]
        params: list[object] = [match]
        if (key := _clean(session_key)) is not None:
            where.append("f.session_key = ?")
            params.append(key)
        if (chan := _clean(channel)) is not None:
            where.append(
                "(CASE WHEN instr(f.session_key, ':') > 0 "
                "THEN substr(f.session_key, 1, instr(f.session_key, ':') - 1) "
                "ELSE f.session_key END) = ?"
            )
            params.append(chan)
        if (src := _clean(source)) is not None:
            where.append("f.source = ?")
            params.append(src)
        stamp = "c.timestamp" if self._chunks else "NULL"
        join = "LEFT JOIN memory_chunks c ON c.id = f.id" if self._chunks else ""
        sql = (
            f"SELECT f.id, f.session_key, f.source, f.text, {stamp}, f.rank, "
            f"snippet(memory_fts, 0, '', '', '…', {SNIPPET_TOKENS}) "
            f"FROM memory_fts f {join} WHERE {' AND '.join(where)} ORDER BY f.rank LIMIT ?"
        )
        params.append(max_results)
        hits = []
        for cid, key_, src_, text, ts, rank, snip in self.db.rows(sql, params):
            score = bm25_rank_to_score(float(rank) if rank is not None else None)
            if score < min_score:
                continue
            hits.append(
                MemoryFtsHit(
                    str(cid or ""), str(key_ or ""), str(src_ or ""), str(text or ""),
                    str(snip or ""), int(ts) if isinstance(ts, (int, float)) else None,
                    float(rank) if rank is not None else float("nan"), score,
                )
            )  # fmt: skip
        return MemoryFtsResult(query, match, tuple(hits), database=self.path)


def search_memory(
    db_path: str | os.PathLike[str],
    query: str,
    *,
    max_results: int = DEFAULT_MAX_RESULTS,
    min_score: float = 0.0,
    session_key: str | None = None,
    channel: str | None = None,
    source: str | None = None,
) -> MemoryFtsResult:
    """Search an OpenClaudeCode memory (*db_path*: its database, or its data directory).

    A blank query, or one without a token, gives no hit and a :attr:`~MemoryFtsResult.reason`.
    For many searches keep one :class:`MemoryFts` open instead.

    Raises
    ------
    FormatError
        When the database cannot be read or has no ``memory_fts`` table.
    ValueError
        When *max_results* is not a whole number >= 1.
    """
    with MemoryFts(db_path) as fts:
        return fts.search(
            query,
            max_results=max_results,
            min_score=min_score,
            session_key=session_key,
            channel=channel,
            source=source,
        )
