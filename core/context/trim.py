"""Smart trim in three layers, rule for rule as memory-context runs it.

Read from openclaw/openclaw (reference only): ``src/agents/memory-context/smart-trim.ts``
at 72840bfcf7c49ecd3700cb2b51fc03d4c1b01f6a, ``shared.ts`` (``extractText``) at
be8775146da7cb960578b9d7846e585ece66651c, and its caller
``src/agents/pi-extensions/memory-context-recall.ts`` (listed at e5a3122c1f86): query
of 3+ characters, ``safeLimit = window - reserve - hardCap``, ``protectedRecent: 6``,
``max(1, ceil(len(text) / 3))`` per message, then ``sanitizeToolUseResultPairing``
(the agent then archives the trimmed user/assistant text; memlens shows the trim).

Taken from the source where algorithms.md is silent: layer 2 indexes unprotected
messages with non-blank text, lowest score first, ties oldest first; layer 3 walks
the rest oldest first; each layer stops once the total is within the limit, and
the pairing repair runs after both (it can take the total further down); the last
tool call is the last assistant message holding a call; a message is a recalled
block when its text holds the marker, whatever its role; a summary counts at
index 1, or 2 after a system message, by role, pi's prefix, file tags or markers.

memlens differs on purpose: a summary also counts at index 0 (pi keeps the system
prompt out of the messages); tool pairing goes by call id, and a call with its
results is protected or removed as one group (the agent's adjacency pass can drop
a protected call whose result was trimmed); the text also reads Anthropic
``tool_result`` blocks, summaries and bash runs, which the agent's
``extractText`` (``content`` only) would weigh as one token.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from core.io.jsstr import js_len
from core.recall import block as recall_block
from core.recall.bm25 import bm25_scores
from core.recall.token_table import TABLE
from core.recall.tokenize import tokenize
from core.transcript.provider import as_sent
from core.transcript.recalled_block import MARKER

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.transcript.message import Message

Decision = Literal["protected", "kept", "trimmed_bm25", "trimmed_age", "removed_pairing"]
Layer = Literal[1, 2, 3, "pairing"]

PROTECTED_RECENT = 6
RESERVE_TOKENS = 4000
HARD_CAP_TOKENS = 4000
MIN_QUERY_CHARS = 3
SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:"
)
SUMMARY_MARKERS = ("<read-files>", "<modified-files>", "Summary unavailable", "Turn Context")
"""What smart-trim.ts looks for in a message near the top to call it a summary."""
REMOVED: frozenset[str] = frozenset({"trimmed_bm25", "trimmed_age", "removed_pairing"})


@dataclass(frozen=True, slots=True)
class TrimDecision:
    """What the trim did with one input message, which layer decided, and why."""

    index: int
    role: str
    decision: Decision
    layer: Layer | None
    """None when the trim did not run."""
    reason: str
    tokens: int
    """memory-context's estimate of the message."""
    bm25_score: float | None
    """Score against the query; None when the message was not a layer-2 candidate."""

    @property
    def removed(self) -> bool:
        """True when the message is not in the trimmed context."""
        return self.decision in REMOVED


@dataclass(frozen=True, slots=True)
class TrimResult:
    """The trimmed context, with a decision for every input message."""

    messages: tuple[Message, ...]
    decisions: tuple[TrimDecision, ...]
    tokens_before: int
    tokens_after: int
    safe_limit: int
    hard_cap: int
    query: str
    ran: bool
    skipped_reason: str = ""

    def kept_messages(self) -> list[Message]:
        """The messages left in context, in order."""
        return [m for m, d in zip(self.messages, self.decisions, strict=True) if not d.removed]

    def kept_raw(self) -> list[dict[str, Any]]:
        """The kept messages as the session file holds them (as pi sends a synthetic one)."""
        return [as_sent(m) for m in self.kept_messages()]

    def counts(self) -> dict[str, int]:
        """How many messages got each decision."""
        return dict(Counter(d.decision for d in self.decisions))


def message_text(message: Message) -> str:
    """The text memory-context weighs and searches: text blocks joined by a space."""
    return " ".join([b.text for b in message.blocks if b.kind in ("text", "tool_result")])


def default_query(messages: Sequence[Message]) -> str:
    """The recall query: the last up to 3 user messages (recalled blocks skipped)."""
    return recall_block.extract_query([m.text() for m in messages if m.role == "user"])


def clear_caches() -> None:
    """Forget memoised token ids of chunks and message texts."""
    TABLE.clear()


def _is_result(m: Message) -> bool:
    return m.role == "toolResult" or any(b.kind == "tool_result" for b in m.blocks)


def _calls(m: Message) -> bool:
    return m.role == "assistant" and any(b.kind == "tool_call" for b in m.blocks)


def _pairs(msgs: Sequence[Message]) -> tuple[list[list[int]], list[bool], dict[int, list[str]]]:
    """Call <-> result links, orphaned result messages, and unanswered call ids."""
    links: list[list[int]] = [[] for _ in msgs]
    orphan = [False] * len(msgs)
    owner: dict[str, int] = {}
    answered: set[tuple[int, str]] = set()
    calls: list[tuple[int, list[str]]] = []
    run_call = -1  # the call message that a run of results right after it answers
    for i, m in enumerate(msgs):
        if _is_result(m):
            found: set[int] = set()
            ids = m.result_ids()
            for t in ids:
                j = owner.get(t)
                if j is not None:
                    found.add(j)
                    answered.add((j, t))
            if not ids and m.role == "toolResult" and run_call >= 0:
                found.add(run_call)  # no id: smart-trim.ts pairs by position
            for j in found:
                links[i].append(j)
                links[j].append(i)
            orphan[i] = not found
        if _calls(m):
            made = [b.tool_id for b in m.blocks if b.kind == "tool_call" and b.tool_id]
            owner.update(dict.fromkeys(made, i))
            calls.append((i, made))
            run_call = i
        elif m.role != "toolResult":
            run_call = -1
    missing: dict[int, list[str]] = {}
    for i, made in calls:
        lost = [t for t in made if (i, t) not in answered]
        if lost:
            missing[i] = lost
    return links, orphan, missing


def _group(links: list[list[int]], start: int) -> list[int]:
    seen, stack = {start}, [start]
    while stack:
        for j in links[stack.pop()]:
            if j not in seen:
                seen.add(j)
                stack.append(j)
    return sorted(seen)


def _summary_reason(m: Message, index: int, msgs: Sequence[Message]) -> str | None:
    if index > 2 or (index == 2 and msgs[1].role != "system"):
        return None
    if m.role == "compactionSummary":
        return "compaction summary at the top of the context"
    text = message_text(m)
    if m.role == "user" and text.startswith(SUMMARY_PREFIX):
        return "compaction summary (pi's summary prefix) at the top of the context"
    if any(marker in text for marker in SUMMARY_MARKERS):
        return "compaction summary (file tags or summary markers) at the top of the context"
    return None


def _protect(
    msgs: Sequence[Message], texts: list[str], links: list[list[int]], recent: int
) -> list[str | None]:
    why: list[str | None] = [None] * len(msgs)
    for i, m in enumerate(msgs):
        if m.role == "system":
            why[i] = "system message"
        elif MARKER in texts[i]:
            why[i] = "recalled-context block"
        else:
            why[i] = _summary_reason(m, i, msgs)
    talkers = [i for i, m in enumerate(msgs) if m.role in ("user", "assistant")]
    for i in talkers[max(0, len(talkers) - recent) :] if recent > 0 else []:
        why[i] = why[i] or f"one of the last {recent} user/assistant messages"
    last_call = next((i for i in range(len(msgs) - 1, -1, -1) if _calls(msgs[i])), None)
    if last_call is not None:
        why[last_call] = why[last_call] or "the last tool call"
    grouped: set[int] = set()
    for i in range(len(msgs)):  # a protected call keeps its results, a result its call
        if why[i] is not None and links[i] and i not in grouped:
            group = _group(links, i)
            grouped.update(group)
            for j in group:
                why[j] = why[j] or f"tool partner of protected message #{i}"
    return why


def smart_trim(
    messages: Sequence[Message],
    query: str | None = None,
    *,
    window: int,
    reserve_tokens: int = RESERVE_TOKENS,
    hard_cap: int | None = None,
    protected_recent: int = PROTECTED_RECENT,
) -> TrimResult:
    """Trim *messages* to the recall safe limit, as memory-context would.

    Parameters
    ----------
    messages
        The context, oldest first (e.g. the messages of ``context_at``).
    query
        The BM25 query; by default the last up to 3 user messages.
    window
        The model's context window in tokens.
    reserve_tokens
        Kept free for the reply (4,000 in the recall path).
    hard_cap
        The recalled block's cap; by default ``min(4000, floor(window * 0.1))``.
    protected_recent
        How many of the last user/assistant messages are never trimmed.

    Returns
    -------
    TrimResult
        A decision for every input message; ``ran`` is False (and nothing is
        removed) when the total is within the safe limit or the query is shorter
        than 3 characters.
    """
    msgs = tuple(messages)
    n = len(msgs)
    cap = recall_block.hard_cap(HARD_CAP_TOKENS, window) if hard_cap is None else hard_cap
    limit = recall_block.safe_limit(window, reserve_tokens, cap)
    texts = [message_text(m) for m in msgs]
    tokens = [max(1, math.ceil(js_len(t) / 3)) for t in texts]
    total = sum(tokens)
    q = (default_query(msgs) if query is None else query).strip()

    skip = ""
    if js_len(q) < MIN_QUERY_CHARS:
        skip = (
            f"query {q!r} is shorter than {MIN_QUERY_CHARS} characters: the agent does not "
            "trim without a recall to make up for it"
        )
    elif total <= limit:
        skip = f"{total:,} tokens are within the safe limit of {limit:,}: nothing to trim"
    if skip:
        decisions = tuple(
            TrimDecision(i, m.role, "kept", None, skip, tokens[i], None) for i, m in enumerate(msgs)
        )
        return TrimResult(msgs, decisions, total, total, limit, cap, q, False, skip)

    links, orphan, missing = _pairs(msgs)
    why = _protect(msgs, texts, links, protected_recent)
    decision: list[Decision] = ["protected" if w is not None else "kept" for w in why]
    layer: list[Layer] = [1 if w is not None else 2 for w in why]
    blank = "blank text (not a BM25 candidate): the limit was reached without it"
    reason: list[str] = [w or blank for w in why]
    score: list[float | None] = [None] * n

    # Layer 2: the least relevant to the query go first.
    cands = [i for i in range(n) if why[i] is None and texts[i].strip()]
    if cands:
        scores = bm25_scores([texts[i] for i in cands], tokenize(q))
        for rank, k in enumerate(np.argsort(scores, kind="stable").tolist()):
            i = cands[k]
            score[i] = float(scores[k])
            if total <= limit:
                reason[i] = f"BM25 {score[i]:.3f}: the total reached the safe limit before it"
                continue
            decision[i] = "trimmed_bm25"
            reason[i] = f"BM25 {score[i]:.3f}: least relevant ({rank + 1} of {len(cands)})"
            total -= tokens[i]

    # Layer 3: still over, the oldest unprotected go.
    for i in range(n) if total > limit else ():
        if decision[i] == "kept":
            layer[i] = 3
            if total <= limit:
                reason[i] = "the total reached the safe limit before it (oldest first)"
                continue
            decision[i] = "trimmed_age"
            reason[i] = "still over the safe limit after BM25: oldest unprotected first"
            total -= tokens[i]

    # Pairing: a trimmed call takes its results, a trimmed result its call.
    done: set[int] = set()
    for i in range(n):
        if decision[i] in ("trimmed_bm25", "trimmed_age") and links[i] and i not in done:
            for j in _group(links, i):
                done.add(j)
                if decision[j] == "kept":  # a protected group is never split
                    via = next((k for k in links[j] if decision[k] in REMOVED), i)
                    what = "a result of its tool call" if _calls(msgs[j]) else "its tool call"
                    decision[j], layer[j] = "removed_pairing", "pairing"
                    reason[j] = f"{what} (#{via}) was removed ({decision[via]})"
                    total -= tokens[j]
    for i in range(n):
        if orphan[i] and decision[i] == "kept":
            decision[i], layer[i] = "removed_pairing", "pairing"
            reason[i] = "orphaned tool result: its call is not in the context"
            total -= tokens[i]
    for i, ids in missing.items():
        if decision[i] in ("kept", "protected"):
            reason[i] += f"; no result for {', '.join(ids)} (the agent adds a synthetic one)"

    decisions = tuple(
        TrimDecision(i, m.role, decision[i], layer[i], reason[i], tokens[i], score[i])
        for i, m in enumerate(msgs)
    )
    return TrimResult(msgs, decisions, sum(tokens), total, limit, cap, q, True)
