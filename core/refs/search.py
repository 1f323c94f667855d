"""What a search-everywhere box searches: sessions, entries, facts and segments, ranked.

The app takes a :class:`SearchSource` on the GUI thread (:func:`search_source`: lists
copied, nothing read), builds the items from it in a job (:func:`search_items`: every
entry's text) and ranks them as the user types (:func:`rank_items`: a few ms for tens
of thousands of items). Each item carries the :class:`~core.refs.reference.Reference`
of its place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.io.text import cut
from core.refs.reference import Reference
from core.refs.resolve import reference_to

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from core.dataset.load import DataSet, SessionSummary
    from core.store.knowledge import Fact
    from core.store.segments import Segment
    from core.transcript.model import Entry

KINDS = ("session", "fact", "entry", "segment")
"""Kinds in the order equal matches are listed."""
TEXT_CHARS = 1000
"""How much of an entry's, fact's or segment's text is searched."""
TITLE_CHARS = 90
DEFAULT_LIMIT = 200
_WORD_START = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class SearchItem:
    """One thing the box can go to."""

    kind: str
    title: str
    detail: str
    reference: Reference
    text: str = field(default="", repr=False)
    """What is searched: title, detail and the start of the body, lower case."""


@dataclass(frozen=True, slots=True)
class SearchSource:
    """A snapshot of what to search, taken on the GUI thread (copies of lists only)."""

    path: str
    summaries: list[SessionSummary]
    sessions: list[tuple[str, str, list[Entry]]]
    """(session path, session id, entries) of every session read."""
    facts: list[Fact]
    segments: list[Segment]


def search_source(path: str, data: DataSet) -> SearchSource:
    """Snapshot *data* (opened from *path*) for :func:`search_items` (cheap: list copies)."""
    log, load = data.knowledge, data.segments
    return SearchSource(
        path,
        list(data.summaries),
        [(s.path, s.id, list(s.entries)) for s in data.sessions],
        list(log.facts.values()) if log is not None else [],
        list(load.segments) if load is not None else [],
    )


def _item(kind: str, title: str, detail: str, ref: Reference, body: str = "") -> SearchItem:
    flat = " ".join(title.split())
    short = cut(flat, TITLE_CHARS)
    text = f"{flat}\n{detail}\n{body[:TEXT_CHARS]}".lower()
    return SearchItem(kind, short, detail, ref, text)


def session_items(source: SearchSource) -> list[SearchItem]:
    """One item per session, newest first (cheap enough for the GUI thread)."""
    counts: dict[str, int] = {}
    for s in source.summaries:
        counts[s.id] = counts.get(s.id, 0) + 1
    out = []
    for s in sorted(source.summaries, key=lambda s: -s.modified):
        key = s.id if s.id and counts[s.id] == 1 else s.path
        title = f"{s.name} — {s.id}" if s.name else s.id or s.path
        detail = f"session · {s.agent} · {s.messages:,} messages · {s.path}"
        out.append(_item("session", title, detail, Reference(source.path, key)))
    return out


def search_items(
    source: SearchSource, cancelled: Callable[[], bool] | None = None
) -> list[SearchItem]:
    """Sessions, then facts, entries and segments of *source* (run it in a job)."""
    items = session_items(source)
    keys = {ref.reference.session for ref in items}
    for fact in source.facts:
        if fact.status != "active":
            continue
        ref = reference_to(source.path, fact=fact.id)
        detail = f"fact · {fact.type} · {fact.id}"
        items.append(_item("fact", fact.content, detail, ref, fact.content))
    for path, sid, entries in source.sessions:
        if cancelled is not None and cancelled():
            return items
        key = sid if sid in keys else path
        for e in entries:
            message = e.message
            if message is None:
                continue
            body = message.text()
            if not body.strip():
                continue
            ref = Reference(source.path, key, entry=e.id)
            detail = f"entry #{e.index} · {message.role} · session {sid or path}"
            items.append(_item("entry", body, detail, ref, body))
    for seg in source.segments:
        ref = reference_to(source.path, segment=seg.id)
        detail = f"segment · {seg.role} · {seg.id} · session {seg.session_id}"
        items.append(_item("segment", seg.content, detail, ref, seg.content))
    return items


def _subsequence(needle: str, hay: str) -> bool:
    at = 0
    for ch in needle:
        at = hay.find(ch, at) + 1
        if at == 0:
            return False
    return True


def _score(item: SearchItem, query: str, words: Sequence[str]) -> int:
    title = item.title.lower()
    score = 0
    if title.startswith(query):
        score += 60
    elif query in title:
        score += 40
    starts = {m.group(0)[: len(w)] for m in _WORD_START.finditer(title) for w in words}
    score += sum(12 for w in words if w in starts)
    score += sum(6 for w in words if w in title)
    return score - KINDS.index(item.kind) if item.kind in KINDS else score


def rank_items(
    items: Sequence[SearchItem], query: str, limit: int = DEFAULT_LIMIT
) -> list[SearchItem]:
    """The items that match *query* best first (at most *limit*).

    Every word of *query* must occur in an item (case-insensitive); titles that start
    with the query, hold it, or have words starting with its words rank first, then
    sessions before facts, entries and segments. With no such item, a query of one word
    matches titles that hold its letters in order ("cmpct" finds "compaction").
    """
    query = " ".join(query.lower().split())
    if not query:
        return list(items[:limit])
    words = query.split()
    hits = [i for i in items if all(w in i.text for w in words)]
    if not hits and len(words) == 1 and len(query) >= 2:
        hits = [i for i in items if _subsequence(query, i.title.lower())]
    order = {id(item): n for n, item in enumerate(hits)}
    hits.sort(key=lambda i: (-_score(i, query, words), order[id(i)]))
    return hits[:limit]
