"""Figures of an agent's sessions: counted in SQL without reading them, and per agent.

What the session list shows before any transcript is read: :func:`session_stats`
counts entries, messages, compactions and roles of every session from OpenClaw's
``transcript_event_identities`` index, else from the events' JSON.

:func:`agent_figures` gives an agent's figures that mean something: how many
sessions, messages and compactions (counts add up), and its largest and latest
session's context. A session's context size is a snapshot of one conversation,
not a flow: the sum over unrelated sessions measures nothing, so none is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Iterable

    from core.openclaw.sqlite_ro import ReadOnlyDb


class SessionFigures(Protocol):
    """What :func:`agent_figures` reads of a session (``core.dataset``'s summaries)."""

    @property
    def agent(self) -> str: ...  # noqa: D102
    @property
    def id(self) -> str: ...  # noqa: D102
    @property
    def name(self) -> str: ...  # noqa: D102
    @property
    def messages(self) -> int: ...  # noqa: D102
    @property
    def compactions(self) -> int: ...  # noqa: D102
    @property
    def tokens_estimated(self) -> int: ...  # noqa: D102
    @property
    def modified(self) -> float: ...  # noqa: D102
    @property
    def loaded(self) -> bool: ...  # noqa: D102


@dataclass(frozen=True, slots=True)
class AgentFigures:
    """An agent's sessions summed where a sum means something, else their largest and latest.

    The context figures are pi's estimate (chars / 4) of one session's context at
    its current leaf; sessions not read yet (listed from the database's counts)
    have none and are left out of them.
    """

    agent: str
    sessions: int
    messages: int
    """Messages of all its sessions (a count: the sum is the agent's total)."""
    compactions: int
    largest_context: int | None
    """The largest context of one session, or None when none is known yet."""
    largest_session: str
    """That session's name (or id)."""
    latest_context: int | None
    """The context of the session modified last (None while it is not read)."""
    latest_session: str
    last_active: float
    """When the agent's newest session was modified (epoch seconds; 0 with none)."""


def agent_figures(sessions: Iterable[SessionFigures]) -> list[AgentFigures]:
    """Each agent's :class:`AgentFigures`, in the order agents first appear."""
    by_agent: dict[str, list[SessionFigures]] = {}
    for s in sessions:
        by_agent.setdefault(s.agent, []).append(s)
    out = []
    for agent, rows in by_agent.items():
        known = [s for s in rows if s.loaded]
        largest = max(known, key=lambda s: s.tokens_estimated, default=None)
        latest = max(rows, key=lambda s: s.modified)
        out.append(
            AgentFigures(
                agent=agent,
                sessions=len(rows),
                messages=sum(s.messages for s in rows),
                compactions=sum(s.compactions for s in rows),
                largest_context=largest.tokens_estimated if largest is not None else None,
                largest_session=(largest.name or largest.id) if largest is not None else "",
                latest_context=latest.tokens_estimated if latest.loaded else None,
                latest_session=latest.name or latest.id,
                last_active=latest.modified,
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class SessionStats:
    """Figures of a transcript counted in SQL, without reading it into memory."""

    entries: int
    """Events after the header."""
    messages: int
    """Entries that put a message in context, compactions excepted (as
    :meth:`core.transcript.model.Session.messages`)."""
    compactions: int
    roles: dict[str, int]
    """``message`` entries by role."""
    name: str = ""
    """The last ``session_info`` name."""


_STATS_SQL = """
SELECT session_id, t, role, count(*) FROM (
  SELECT session_id, seq,
    coalesce(json_extract(event_json, '$.type'),
             json_extract(navigation_json, '$.navigation.type')) AS t,
    coalesce(json_extract(event_json, '$.message.role'),
             json_extract(navigation_json, '$.navigation.message.role')) AS role
  FROM transcript_events WHERE seq > 0 AND {valid}
) GROUP BY 1, 2, 3
"""
_IDENTITY_SQL = """
SELECT session_id, event_type, count(*) FROM transcript_event_identities
WHERE seq > 0 GROUP BY 1, 2
"""
_NAME_SQL = """
SELECT e.session_id, json_extract(e.event_json, '$.name')
FROM transcript_event_identities i JOIN transcript_events e
  ON e.session_id = i.session_id AND e.seq = i.seq
WHERE i.event_type = 'session_info' AND json_valid(e.event_json) ORDER BY e.seq
"""


def session_stats(
    db: ReadOnlyDb, tables: set[str], event_cols: set[str], max_seqs: dict[str, int]
) -> dict[str, SessionStats]:
    """Entry, message, compaction and role counts of every session, counted in SQL.

    What the session list shows before any transcript is read (a large database
    lists in well under a second); :meth:`AgentDb.load_session` gives the whole story.
    *max_seqs* is :meth:`AgentDb.max_seqs`: sessions the identity rows count short
    of it are counted from their JSON.
    """
    counts: dict[str, dict[str, Any]] = {}
    names: dict[str, str] = {}
    if "transcript_event_identities" in tables:
        # OpenClaw's own index of event types: no JSON read (roles stay unknown)
        for sid, kind, n in db.rows(_IDENTITY_SQL):
            _count(counts, str(sid), kind, None, n)
        names = {str(s): v for s, v in db.rows(_NAME_SQL) if isinstance(v, str)}
    missing = [s for s, top in max_seqs.items() if counts.get(s, {}).get("entries", 0) < top]
    if missing:
        _stats_from_json(db, event_cols, counts, names, set(missing))
    return {
        sid: SessionStats(
            c["entries"], c["messages"], c["compactions"], dict(sorted(c["roles"].items())),
            names.get(sid, ""),
        )
        for sid, c in counts.items()
    }  # fmt: skip


def _stats_from_json(
    db: ReadOnlyDb,
    event_cols: set[str],
    counts: dict[str, dict[str, Any]],
    names: dict[str, str],
    sessions: set[str],
) -> None:
    """Counts read from the events' JSON (no identity rows: older or partial databases)."""
    for sid in sessions:
        counts.pop(sid, None)
    valid = "(event_json IS NULL OR json_valid(event_json))"
    if "navigation_json" not in event_cols:
        sql = _STATS_SQL.replace(
            "json_extract(navigation_json, '$.navigation.type')", "NULL"
        ).replace("json_extract(navigation_json, '$.navigation.message.role')", "NULL")
    else:
        valid += " AND (navigation_json IS NULL OR json_valid(navigation_json))"
        sql = _STATS_SQL
    for sid, kind, role, n in db.rows(sql.format(valid=valid)):
        if str(sid) in sessions:
            _count(counts, str(sid), kind, role, n)
    for sid, name in db.rows(
        "SELECT session_id, json_extract(event_json, '$.name') FROM transcript_events "
        "WHERE event_json LIKE '%\"session\\_info\"%' ESCAPE '\\' AND json_valid(event_json) "
        "AND json_extract(event_json, '$.type') = 'session_info' ORDER BY seq"
    ):
        if str(sid) in sessions and isinstance(name, str):
            names[str(sid)] = name


def _count(counts: dict[str, dict[str, Any]], sid: str, kind: Any, role: Any, n: int) -> None:
    c = counts.setdefault(sid, {"entries": 0, "messages": 0, "compactions": 0, "roles": {}})
    c["entries"] += n
    if kind == "compaction":
        c["compactions"] += n
    elif kind in ("branch_summary", "custom_message"):
        c["messages"] += n
    elif kind == "message":
        c["messages"] += n
        if isinstance(role, str):
            c["roles"][role] = c["roles"].get(role, 0) + n
