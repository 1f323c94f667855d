"""OpenClaw's full-text index of transcript text, ``session_transcript_fts``, searched.

The query is built and ranked as OpenClaw's own session search does it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.io.jsonio import as_int
from core.io.problems import FormatError

if TYPE_CHECKING:
    from core.openclaw.sqlite_ro import ReadOnlyDb


@dataclass(frozen=True, slots=True)
class TranscriptHit:
    """One match of OpenClaw's transcript full-text index."""

    session_id: str
    message_id: str | None
    role: str | None
    snippet: str
    score: float
    """``-bm25`` (higher is better), as OpenClaw's session search ranks."""
    timestamp: int | None


def search_transcript_fts(
    db: ReadOnlyDb,
    cols: set[str],
    db_path: str,
    query: str,
    *,
    limit: int = 20,
    session_id: str | None = None,
) -> list[TranscriptHit]:
    """Search ``session_transcript_fts`` as OpenClaw's session search does.

    The query is split on whitespace, each token double-quoted, joined with AND;
    ranked by ``-bm25`` with a 48-token snippet (docs/notes/openclaw-sqlite.md §6).
    *cols* are the columns of ``session_transcript_fts`` in database *db_path*.
    """
    tokens = [t for t in query.replace("\x00", " ").split() if t]
    if not tokens:
        return []
    match = " AND ".join('"' + t.replace('"', '""') + '"' for t in tokens)
    role = "role" if "role" in cols else "NULL"
    stamp = "timestamp" if "timestamp" in cols else "NULL"
    sid_col = "session_id" if "session_id" in cols else "NULL"
    mid_col = "message_id" if "message_id" in cols else "NULL"
    where = "session_transcript_fts MATCH ?"
    params: list[Any] = [match]
    if session_id is not None and sid_col != "NULL":
        where += " AND session_id = ?"
        params.append(session_id)
    params.append(limit)
    sql = (
        f"SELECT {sid_col}, {mid_col}, {role}, "
        "snippet(session_transcript_fts, 0, '', '', ' … ', 48), "  # 0: the text column
        f"-bm25(session_transcript_fts), {stamp} "
        f"FROM session_transcript_fts WHERE {where} ORDER BY bm25(session_transcript_fts) "
        "LIMIT ?"
    )
    try:
        rows = db.rows(sql, params)
    except FormatError as exc:
        raise FormatError(db_path, f"transcript search failed: {exc.detail}") from exc
    return [
        TranscriptHit(
            session_id=str(sid) if sid is not None else "",
            message_id=str(mid) if mid is not None else None,
            role=str(r) if r is not None else None,
            snippet=str(snip or ""),
            score=float(score or 0.0),
            timestamp=as_int(ts),
        )
        for sid, mid, r, snip, score, ts in rows
    ]
