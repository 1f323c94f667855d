"""What each compaction of a what-if replay would have lost: the loss audit per compaction.

:func:`audit_whatif` takes a finished :class:`~core.compaction.whatif.WhatIfResult`
(the replay stays as fast as it is: the audit is a second, optional job) and audits
every compaction in it with :mod:`core.compaction.audit`'s rules:

- a **real** compaction: the agent's own summary, :func:`~core.compaction.audit.audit_compaction`
  at that compaction (the messages it replaced against its summary, then against
  the kept messages and every later one on the session's current branch);
- a **simulated** one: the replay summarises nothing (its summary is a placeholder
  of the summary budget's size), so what it would have lost is measured on
  memlens's offline summary of its plan, as ``memlens audit --dry-run-summary``
  audits one: the plan's summarised messages (with the previous simulated summary,
  which a compaction folds into the new one) against that summary, then against
  the kept messages and every later message of the replayed path ("lost for good":
  no later message mentions it again). Each simulated summary is the offline one of
  the compaction before it, so losses carry over from one to the next as they would.

Item texts are redacted by the audit; :meth:`CompactionLoss.to_json` is the ``loss``
object of ``memlens whatif --audit --json``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from core.compaction.audit import (
    AuditItem,
    LossAudit,
    audit_compaction,
    message_texts,  # what the model reads of a message: the audit's own rule
    score,
)
from core.compaction.audit_extract import extract
from core.compaction.audit_match import Haystack, content_words, normalise, status_of
from core.compaction.summarize import summarize_plan
from core.compaction.summarizers import OfflineSummarizer
from core.io.jobs import check
from core.safety.redact import redact
from core.transcript.normalize import entry_message

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.compaction.audit import Score
    from core.compaction.whatif import Kind, WhatIfCompaction, WhatIfResult
    from core.io.jobs import CancelCheck, Progress
    from core.transcript.message import Message
    from core.transcript.model import Session

TOP_LOST = 5
"""Lost items a compaction's summary lists (the JSON, the tooltip)."""
LOST_ORDER = (
    "request", "decision", "todo", "file", "path", "error", "command", "symbol", "url", "id",
    "number",
)  # fmt: skip
"""Which lost items come first: what the user asked and decided, then what was touched."""
SIMULATED_ID = "whatif-"
"""Id prefix of a simulated compaction entry (``whatif-N``: the N-th of the replay)."""


@dataclass(frozen=True, slots=True)
class CompactionLoss:
    """What one compaction of a replay would have lost."""

    kind: Kind
    number: int
    """Its place among the replay's compactions of its kind (0-based)."""
    entry_id: str
    """The entry after which it happens (:attr:`WhatIfCompaction.entry_id`)."""
    audit: LossAudit
    previous_entry_id: str | None = None
    """A simulated one: the entry after which the previous simulated compaction happens
    (where the items of the summary it folds in were summarised)."""

    total: Score = field(init=False)
    """Counts by status over every item, and the overall loss share (read per table
    cell and tooltip: counted once)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "total", score(self.audit.items))

    def categories(self) -> dict[str, float]:
        """Loss share (missing or lost over items) of each category that has items."""
        return {c: s.loss for c, s in self.audit.scores().items()}

    def lost_items(self, limit: int | None = TOP_LOST) -> list[AuditItem]:
        """The items lost for good, requests and decisions first (*limit*: None for all)."""
        rank = {c: n for n, c in enumerate(LOST_ORDER)}
        lost = sorted(self.audit.lost(), key=lambda i: rank.get(i.category, len(rank)))
        return lost if limit is None else lost[:limit]

    def entry_of(self, item: AuditItem) -> str | None:
        """The entry to show for *item*: its first source, a simulated summary's compaction."""
        if not item.source:
            return None
        first = item.source[0]
        return self.previous_entry_id if first.startswith(SIMULATED_ID) else first

    def to_json(self, limit: int | None = TOP_LOST) -> dict[str, Any]:
        """The ``loss`` object of a compaction in ``memlens whatif --audit --json``.

        Counts by status, ``loss`` (missing or lost over every item), ``categories``
        (each one's loss), ``lost_items`` (text, category, ``source`` entry ids, and
        ``entry``: the session's entry to show, :meth:`entry_of`).
        """
        t = self.total
        return {
            "summariser": self.audit.summariser,
            "items": t.items,
            "kept": t.kept,
            "normalised": t.normalised,
            "missing": t.missing,
            "lost": t.lost,
            "loss": round(t.loss, 4),
            "categories": {c: round(v, 4) for c, v in self.categories().items()},
            "lost_items": [
                {
                    "text": i.text,
                    "category": i.category,
                    "source": list(i.source),
                    "entry": self.entry_of(i),
                }
                for i in self.lost_items(limit)
            ],
        }


@dataclass(frozen=True, slots=True)
class WhatIfAudit:
    """The loss of every compaction of one replay, in the replay's order."""

    real: tuple[CompactionLoss, ...]
    simulated: tuple[CompactionLoss, ...]

    def of(self, kind: Kind, number: int) -> CompactionLoss | None:
        """The loss of the *number*-th compaction of *kind* (None: not audited)."""
        losses = self.real if kind == "real" else self.simulated
        return next((x for x in losses if x.number == number), None)


def audit_whatif(
    result: WhatIfResult,
    session: Session,
    *,
    reuse: WhatIfAudit | None = None,
    progress: Progress | None = None,
    cancelled: CancelCheck | None = None,
) -> WhatIfAudit:
    """What each compaction of *result* (a replay of *session*) would have lost.

    Parameters
    ----------
    reuse
        An earlier audit of a replay of the same session: the audits of the real
        compactions do not depend on the replay's settings and are taken from it.
        (The simulated ones are audited first: each is a short step, cancelled
        quickly; a real one is one call of :func:`audit_compaction`.)
    progress, cancelled
        As every long core job (:mod:`core.io.jobs`): one step a compaction.

    Raises
    ------
    core.io.jobs.Cancelled
        When *cancelled* says so.
    """
    total = len(result.real) + len(result.simulated)
    done = 0

    def step(label: str) -> None:
        check(cancelled, "what-if loss audit")
        if progress is not None:
            progress(done, total, label)

    texts = _PathTexts(session, result.entry_ids)
    simulated: list[CompactionLoss] = []
    summary: str | None = None
    for n, c in enumerate(result.simulated):
        step("auditing memlens's summaries of the simulated cuts")
        previous = result.simulated[n - 1] if n else None
        audit, summary = _audit_simulated(c, n, summary, session, texts, cancelled)
        simulated.append(
            CompactionLoss(
                "simulated", n, c.entry_id, audit, previous.entry_id if previous else None
            )
        )
        done += 1
    known = {x.audit.entry_id: x.audit for x in reuse.real} if reuse is not None else {}
    real: list[CompactionLoss] = []
    for n, c in enumerate(result.real):
        step("auditing the agent's summaries")
        if c.compaction_id is not None:
            audit = known.get(c.compaction_id) or audit_compaction(session, c.compaction_id)
            real.append(CompactionLoss("real", n, c.entry_id, audit))
        done += 1
    if progress is not None:
        progress(total, total, "done")
    return WhatIfAudit(tuple(real), tuple(simulated))


def _audit_simulated(
    c: WhatIfCompaction,
    n: int,
    previous_summary: str | None,
    session: Session,
    texts: _PathTexts,
    cancelled: CancelCheck | None,
) -> tuple[LossAudit, str]:
    """The audit of memlens's offline summary of *c*'s plan, and that summary."""
    plan = c.plan
    if plan is None:
        raise ValueError(f"the simulated compaction after {c.entry_id} has no plan to audit")
    # the replay's summary is a placeholder: the previous offline one is folded in instead
    prev = previous_summary if plan.previous_summary is not None else None
    run = summarize_plan(
        replace(plan, previous_summary=prev), OfflineSummarizer(), cancelled=cancelled
    )
    check(cancelled, "what-if loss audit")
    items = [*plan.history_dropped, *plan.summarize, *plan.turn_prefix]
    summarised: list[tuple[str, Message]] = [(i.entry.id, i.message) for i in items]
    if prev:
        msg = entry_message("compaction", {"type": "compaction", "summary": prev})
        if msg is not None:
            summarised.insert(0, (f"{SIMULATED_ID}{n}", msg))  # the n-th: the one before
    # the kept messages as the replay has them (an overflow may have truncated them)
    after = _After(message_texts([i.message for i in plan.kept]), texts, c.position)
    found = extract(summarised)
    hay = Haystack(run.summary)
    audited = [
        AuditItem(redact(f.text), f.category, status_of(f, hay, after), tuple(f.source), f.detail)
        for f in found
    ]  # audit_messages's items, with the later messages read once for every cut
    audit = LossAudit(
        session.id, session.path, "memlens offline", run.summary, None,
        plan.first_kept_entry_id, plan.tokens_before, len(summarised),
        plan.tokens_summarized, len(plan.kept), audited, index=c.index,
    )  # fmt: skip
    return audit, run.summary


class _PathTexts:
    """What the model reads of each message of the replayed path, normalised once."""

    def __init__(self, session: Session, entry_ids: Sequence[str]) -> None:
        messages = [session.by_id[e].message for e in entry_ids]  # message entries only
        self.raw = message_texts(m for m in messages if m is not None)
        self._norm: dict[bool, list[str]] = {}
        self._words: list[set[str]] | None = None

    def norm(self, numbers: bool) -> list[str]:
        found = self._norm.get(numbers)
        if found is None:
            found = self._norm[numbers] = _normalised(self.raw, numbers)
        return found

    @property
    def words(self) -> list[set[str]]:
        if self._words is None:
            self._words = [content_words(t) for t in self.raw]
        return self._words


def _normalised(parts: Sequence[str], numbers: bool) -> list[str]:
    return [normalise(p, numbers=numbers).strip(" ") for p in parts]


class _After(Haystack):
    """The messages the model sees after a simulated cut: the kept ones, then the later ones.

    The later ones' normalised texts and words are the path's, computed once.

    The normalised text is the messages' normalised texts joined by a space: as
    :func:`normalise` of the whole, but for a space run or a number and its unit
    across two messages (no item spans two messages).
    """

    def __init__(self, kept: list[str], path: _PathTexts, start: int) -> None:
        parts = [*kept, *path.raw[start:]]
        super().__init__("\n".join(parts), parts)
        self._kept, self._path, self._start = kept, path, start
        self._joined: dict[bool, str] = {}
        self._after_words: list[set[str]] | None = None

    def norm(self, *, numbers: bool = False) -> str:
        found = self._joined.get(numbers)
        if found is None:
            pieces = [*_normalised(self._kept, numbers), *self._path.norm(numbers)[self._start :]]
            found = self._joined[numbers] = " ".join(p for p in pieces if p)
        return found

    @property
    def words(self) -> list[set[str]]:
        if self._after_words is None:
            kept = [content_words(k) for k in self._kept]
            self._after_words = [*kept, *self._path.words[self._start :]]
        return self._after_words
