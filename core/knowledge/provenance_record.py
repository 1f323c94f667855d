"""The provenance record memlens writes with a fact (``memlensSource``).

A fact memlens writes from a conversation carries, under
:data:`core.store.knowledge.SOURCE_KEY`, where it came from::

    {"by": "extraction", "run": "<extraction run id>", "extractor": "offline",
     "sessionId": "<session>", "compaction": "<compaction entry id>",
     "entryIds": ["<entry>", ...], "segmentIds": ["<segment>", ...], "narrowed": true}

Ids only: no message text, nothing redacted (an id is not a secret). ``by`` is
``extraction`` (a compaction's knowledge extraction) or ``user`` (an edit; a
supersession adds ``supersedes`` and keeps the old fact's evidence, see
:meth:`core.store.knowledge.KnowledgeLog.supersede`); a proposal the user edited
before accepting adds ``edited: true``. ``compaction`` is the entry the run
appended (or would have: a dry run's facts accepted from the review queue name an
entry that is not in the transcript).

**Which entries.** :func:`extraction_sources` narrows ``entryIds`` to the
summarised messages that support the fact: those the message scorer of
:class:`core.knowledge.sources.MessageIndex` (run over the summarised messages
alone) finds at :data:`NARROW_MIN_SCORE` or more and at least half the best score,
at most :data:`NARROW_LIMIT` of them (``narrowed: true``). A fact no message
supports that well (a model's paraphrase, a summary of many turns) keeps every
summarised message (``narrowed: false``): the record then says "somewhere in
this span", never a wrong single message. ``segmentIds`` are the segments
archived from the entries named (the agent's dedup key: an already archived copy's id).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.store.knowledge import content_hash

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from core.transcript.model import Message, Session

NARROW_MIN_SCORE = 0.3
"""A summarised message supports a fact from this message score up (see the module docstring)."""
NARROW_LIMIT = 5
"""At most this many supporting messages are named."""


def segment_text(message: Message) -> str | None:
    """The text a segment archives of *message* (before redaction), or None if none is.

    User messages: their text; assistant messages: their text blocks; other roles,
    empty texts and recalled-context blocks are not archived.
    """
    if message.role == "user":
        text = message.text().strip()
    elif message.role == "assistant":
        text = "\n".join(b.text for b in message.blocks if b.kind == "text" and b.text).strip()
    else:
        return None
    if not text or "<recalled-context" in text:
        return None
    return text


def extraction_sources(
    contents: Iterable[str],
    session: Session,
    entry_ids: Sequence[str],
    *,
    run: str,
    extractor: str,
    compaction: str | None = None,
    segment_ids: Mapping[str, str] | None = None,
) -> dict[str, dict[str, Any]]:
    """The provenance record of each extracted fact, by content hash (for ``sourced``).

    Parameters
    ----------
    contents
        The candidates' contents, as they will be written (redacted).
    session
        The session compacted.
    entry_ids
        The summarised messages the extraction read, oldest first.
    run
        The extraction run's id.
    extractor
        ``offline`` or the model client's name.
    compaction
        The compaction entry the run appends.
    segment_ids
        Entry id -> id of the segment archived from it.
    """
    from core.knowledge.sources import MessageIndex  # the recall stack, only when extracting

    order = {eid: i for i, eid in enumerate(entry_ids)}
    index = MessageIndex([session], only={(session.id, eid) for eid in entry_ids})
    segs = segment_ids or {}
    out: dict[str, dict[str, Any]] = {}
    for content in contents:
        hits = index.search(content, limit=NARROW_LIMIT, min_score=NARROW_MIN_SCORE)
        best = hits[0].score if hits else 0.0
        picked = [h.id for h in hits if h.score >= best / 2]
        narrowed = bool(picked)
        ids = sorted(picked, key=lambda e: order.get(e, 0)) if narrowed else list(entry_ids)
        record: dict[str, Any] = {"by": "extraction", "run": run, "extractor": extractor}
        record["sessionId"] = session.id
        if compaction:
            record["compaction"] = compaction
        record["entryIds"] = ids
        record["segmentIds"] = [segs[e] for e in ids if e in segs]
        record["narrowed"] = narrowed
        out[content_hash(content)] = record
    return out
