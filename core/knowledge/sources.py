"""Where a fact most likely came from: archived segments and transcript messages.

A fact is a sentence distilled from the conversation, so its likely sources are
the segments (hybrid search of the warm store, as recall does, over every
session and without time decay) and the transcript messages (the share of the
fact's words they contain, each word weighted by its rarity) that say what it
says. The facts view calls a ``sources(content)`` callable that the app builds
with :func:`fact_sources`.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from core.recall.hybrid import SearchConfig, search
from core.recall.tokenize import tokenize

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable

    from core.recall.warm_store import WarmStore
    from core.transcript.model import Session

SourceKind = Literal["segment", "message"]
ROLES = frozenset({"user", "assistant", "toolResult", "bashExecution"})
BETA2 = 9.0
"""beta squared of the message score: the fact's words found count 3x the message's length."""
VERBATIM = 0.8
"""A message holding the fact word for word scores at least this."""


def _flat(text: str) -> str:
    """Lower case, runs of white space and punctuation around words as one space."""
    return " ".join(re.findall(r"\w+", text.lower()))


@dataclass(frozen=True, slots=True)
class SourceHit:
    """A segment or message a fact may have come from, with its score.

    Attributes
    ----------
    kind
        ``segment`` (warm store) or ``message`` (transcript entry).
    id
        The segment id, or the transcript entry id.
    session_id
        The session it belongs to.
    role
        ``user``, ``assistant``, ``toolResult``...
    text
        What it says (whole).
    score
        0..1: for a segment the hybrid score (0.7 cosine + 0.3 normalised BM25,
        no decay), for a message the IDF-weighted share of the fact's words it
        contains, balanced against the message's length (see :class:`MessageIndex`).
    timestamp
        Epoch milliseconds, if known.
    path
        The file holding it (segments.jsonl or the transcript).
    line
        1-based line in that file (0 when unknown).
    detail
        How the score was made, for people.
    """

    kind: SourceKind
    id: str
    session_id: str
    role: str
    text: str
    score: float
    timestamp: int | None = None
    path: str = ""
    line: int = 0
    detail: str = ""


def segment_sources(
    store: WarmStore, content: str, *, limit: int = 8, min_score: float = 0.25
) -> list[SourceHit]:
    """Segments of every session matching *content*, best first."""
    if not content.strip() or len(store) == 0:
        return []
    cfg = SearchConfig(limit=limit, min_score=0.0, decay=1.0, cross_session=True)
    result = search(store, content, cfg)
    path = str(store.segments_path)
    return [
        SourceHit(
            "segment",
            h.segment.id,
            h.segment.session_id,
            h.segment.role,
            h.segment.content,
            round(h.score, 4),
            h.segment.timestamp,
            path,
            h.segment.line,
            f"cosine {h.vector_score:.2f}, BM25 {h.bm25_norm:.2f} (rank {h.rank})",
        )
        for h in result.hits
        if h.score >= min_score
    ]


@dataclass(frozen=True, slots=True)
class _Doc:
    session: str
    path: str
    entry: str
    line: int
    role: str
    text: str
    timestamp: int | None
    tokens: frozenset[str]
    flat: str


class MessageIndex:
    """Transcript messages by the words they hold (built on first search, thread-safe).

    Parameters
    ----------
    sessions
        The loaded transcripts; only user, assistant, tool-result and bash
        messages are indexed.
    only
        ``(session id, entry id)`` pairs: index those messages alone (the ones a
        compaction summarised), so word rarity is measured among them.
    """

    def __init__(
        self, sessions: Iterable[Session], *, only: Collection[tuple[str, str]] | None = None
    ) -> None:
        self._sessions = list(sessions)
        self._only = only
        self._docs: list[_Doc] | None = None
        self._df: Counter[str] = Counter()
        self._lock = threading.Lock()

    def _build(self) -> list[_Doc]:
        with self._lock:
            if self._docs is not None:
                return self._docs
            docs: list[_Doc] = []
            for s in self._sessions:
                for e in s.messages():
                    msg = e.message
                    if msg is None or msg.role not in ROLES:
                        continue
                    if self._only is not None and (s.id, e.id) not in self._only:
                        continue
                    text = msg.text() or str(msg.raw.get("command", ""))
                    if not text.strip():
                        continue
                    toks = frozenset(tokenize(text))
                    docs.append(
                        _Doc(
                            s.id,
                            s.path,
                            e.id,
                            e.line,
                            msg.role,
                            text,
                            msg.timestamp,
                            toks,
                            _flat(text),
                        )
                    )
                    self._df.update(toks)
            self._docs = docs
            return docs

    def search(self, content: str, *, limit: int = 8, min_score: float = 0.2) -> list[SourceHit]:
        """Messages holding most of *content*'s words (rare words count more), best first."""
        docs = self._build()
        query = set(tokenize(content))
        if not query or not docs:
            return []
        phrase = _flat(content)
        n = len(docs)
        idf = {t: math.log(1 + n / (1 + self._df.get(t, 0))) for t in query}
        total = sum(idf.values())
        scored: list[tuple[float, int]] = []
        for i, d in enumerate(docs):
            common = query & d.tokens
            if common:
                # F-beta of the weighted share of the fact's words found (recall)
                # and the share of the message's words that are the fact's
                # (precision): a long file listing that happens to hold every
                # word ranks below the sentence that says the fact.
                rec = sum(idf[t] for t in common) / total
                prec = len(common) / len(d.tokens)
                score = (1 + BETA2) * prec * rec / (BETA2 * prec + rec)
                if phrase and phrase in d.flat:
                    score = VERBATIM + (1 - VERBATIM) * score
                if score >= min_score:
                    scored.append((score, i))
        scored.sort(key=lambda t: (-t[0], t[1]))
        out: list[SourceHit] = []
        shown: set[str] = set()
        for score, i in scored:
            if len(out) >= limit:
                break
            d = docs[i]
            if d.text in shown:  # the same tool output read again, a branch's copy
                continue
            shown.add(d.text)
            found = len(query & d.tokens)
            how = f"{found} of {len(query)} words of the fact"
            if score >= VERBATIM and phrase in d.flat:
                how = "says it word for word"
            out.append(
                SourceHit(
                    "message",
                    d.entry,
                    d.session,
                    d.role,
                    d.text,
                    round(score, 4),
                    d.timestamp,
                    d.path,
                    d.line,
                    how,
                )
            )
        return out


def fact_sources(
    content: str,
    *,
    store: WarmStore | None = None,
    messages: MessageIndex | None = None,
    limit: int = 8,
) -> list[SourceHit]:
    """The segments and messages *content* most likely came from, best first.

    Parameters
    ----------
    content
        The fact's content.
    store
        The warm store (segments), if open.
    messages
        The transcripts' messages, if loaded.
    limit
        Hits of each kind.
    """
    hits: list[SourceHit] = []
    if store is not None:
        hits += segment_sources(store, content, limit=limit)
    if messages is not None:
        hits += messages.search(content, limit=limit)
    hits.sort(key=lambda h: -h.score)
    return hits
