"""Overflow recovery, simulated: OpenClaw's run loop when the prompt is too big.

OpenClaw 2026.9.6 (``dist/embedded-agent-*.mjs``, the overflow branch of the run
loop) answers a provider "context overflow" error so:

1. while fewer than 3 compactions were tried (``overflowCompactionAttempts < 3``)
   and the error is not itself a failed compaction: compact again, a fresh plan
   of the current transcript (right after a compaction too), and retry the
   prompt. A compaction that compacts nothing falls through to step 2;
2. once per run (``toolResultTruncationAttempted``): when a tool result is over
   the live limit (30 % of the window as characters, at most 16,000, 32,000
   from 100k tokens, 64,000 from 200k) or all of them are over the aggregate
   budget, truncate them in the transcript and retry;
3. give up with the overflow error.

The attempt counter (and the truncation flag) is reset only by a successful
model call. This replays that loop on a session without calling any model: a
compaction's summary is taken at its output budget (0.8 x reserveTokens), and
the tool results are truncated as OpenClaw's own ``truncateToolResultMessage``
would (``buildToolResultReplacementPlan``, below).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.compaction.plan import estimate_string_chars, plan_compaction
from core.io.jsonio import dumps
from core.transcript.model import Entry, Session
from core.transcript.normalize import normalize_message
from core.transcript.replay import context_at, context_size
from core.transcript.tokens import estimate_message

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from core.compaction.plan import CompactionPlan

    Suffix = Callable[[float], str]

MAX_ATTEMPTS = 3
"""``overflowCompactionAttempts < 3``."""


# -- OpenClaw's tool-result truncation (dist/tool-result-truncation-*.mjs) -------------------
# Texts are handled as UTF-16 code units (a str of surrogates) so that every length,
# slice and budget is JavaScript's.
MAX_TOOL_RESULT_CONTEXT_SHARE = 0.3
LIVE_TOOL_RESULT_CAPS = ((200_000, 64_000), (100_000, 32_000), (0, 16_000))
"""``resolveAutoLiveToolResultMaxChars``: (from window tokens, max chars)."""
AGGREGATE_TOOL_RESULT_CONTEXT_SHARE = 0.5
AGGREGATE_CAP_MULTIPLIER = 4
AGGREGATE_ELISION_MARKER = (
    "[tool result elided: aggregate tool-result budget exceeded; "
    "rerun the command if the output is needed]"
)
MIDDLE_OMISSION_MARKER = "\n\n⚠️ [... middle content omitted — showing head and tail ...]\n\n"
_ERROR_TAIL = re.compile(
    r"\b(error|exception|failed|fatal|traceback|panic|stack trace|errno|exit code)\b", re.ASCII
)
_DONE_TAIL = re.compile(r"\b(total|summary|result|complete|finished|done)\b", re.ASCII)


def live_tool_result_max_chars(window: int) -> int:
    """``resolveLiveToolResultMaxChars``: 30 % of the window as chars, capped by its size."""
    cap = next(chars for start, chars in LIVE_TOOL_RESULT_CAPS if math.floor(window) >= start)
    return min(math.floor(window * MAX_TOOL_RESULT_CONTEXT_SHARE) * 4, max(1, cap))


def aggregate_tool_result_chars(window: int, per_result: int) -> int:
    """``resolveLiveToolResultAggregateMaxChars``: what all tool results may hold."""
    share = math.floor(max(1, math.floor(window)) * 4 * AGGREGATE_TOOL_RESULT_CONTEXT_SHARE)
    return max(max(1, per_result) * AGGREGATE_CAP_MULTIPLIER, share)


def _u16(text: str) -> str:
    """*text* as UTF-16 code units (astral characters as surrogate pairs)."""
    if text.isascii() or all(ord(c) < 0x10000 for c in text):
        return text
    data = text.encode("utf-16-le", "surrogatepass")
    return "".join(chr(data[k] | data[k + 1] << 8) for k in range(0, len(data), 2))


def _from_u16(units: str) -> str:
    return units.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _chars(units: str) -> int:
    """``estimateStringChars`` of a string of UTF-16 units."""
    if units.isascii():
        return len(units)
    return estimate_string_chars(_from_u16(units))


def _slice(units: str, start: int, end: int | None = None) -> str:
    """``sliceUtf16Safe``: never half a surrogate pair."""
    n = len(units)
    lo = max(n + start, 0) if start < 0 else min(start, n)
    hi = n if end is None else (max(n + end, 0) if end < 0 else min(end, n))
    if hi <= lo:
        return ""
    if 0 < lo < n and "\udc00" <= units[lo] <= "\udfff" and "\ud800" <= units[lo - 1] <= "\udbff":
        lo += 1
    if 0 < hi < n and "\ud800" <= units[hi - 1] <= "\udbff" and "\udc00" <= units[hi] <= "\udfff":
        hi -= 1
    return units[lo:hi]


def _to_budget(units: str, max_chars: float, *, tail: bool = False) -> str:
    """``sliceToolResultTextToBudget`` (head) or ``...TailToBudget``."""
    budget = max(0, math.floor(max_chars))
    if len(units) <= budget and _chars(units) <= budget:
        return units
    if units.isascii():
        return units[len(units) - budget :] if tail and budget else ("" if tail else units[:budget])
    best, low, high = "", 0, min(len(units), budget)
    while low <= high:
        mid = (low + high) // 2
        cand = _slice(units, len(units) - mid) if tail else _slice(units, 0, mid)
        if _chars(cand) <= budget:
            best, low = cand, mid + 1
        else:
            high = mid - 1
    return best


def notice(truncated: float) -> str:
    """``formatContextLimitTruncationNotice``."""
    return (
        f"[... {max(1, math.floor(truncated))} more characters truncated; "
        "rerun with narrower args if needed]"
    )


def _compact_notice(truncated: float) -> str:
    return f"[... {max(1, math.floor(truncated))} chars truncated; narrow args]"


def _min_keep(max_chars: float, min_keep: float, suffix: Suffix) -> float:
    return max(0, min(min_keep, max(0, max_chars - _chars(suffix(1)))))


def _append_suffix(kept: str, original: int, max_chars: float, suffix: Suffix) -> str:
    """``appendBoundedTruncationSuffix``."""
    while True:
        text = suffix(max(1, original - len(kept)))
        cost = _chars(text)
        if cost >= max_chars:
            return _to_budget(suffix(max(1, original)), max_chars)
        nxt = _to_budget(kept, max_chars - cost)
        final = nxt + text
        if len(nxt) == len(kept) and _chars(final) <= max_chars:
            return final
        if not nxt and not kept:
            return _to_budget(final, max_chars)
        kept = nxt


def _important_tail(units: str) -> bool:
    tail = _from_u16(_slice(units, -2000)).strip().lower()
    return bool(
        _ERROR_TAIL.search(tail) or re.search(r"\}\s*$", tail.strip()) or _DONE_TAIL.search(tail)
    )


def truncate_text(units: str, max_chars: float, suffix: Suffix, min_keep_chars: float) -> str:
    """``truncateToolResultText``: head (and a diagnostic tail) plus a notice."""
    min_keep = _min_keep(max_chars, min_keep_chars, suffix)
    if len(units) <= max_chars and _chars(units) <= max_chars:
        return units
    first = _to_budget(units, max_chars)
    budget = max(min_keep, max_chars - _chars(suffix(max(1, len(units) - len(first)))))
    if _important_tail(units) and budget > min_keep * 2:
        tail_budget = min(math.floor(budget * 0.3), 4000)
        head_budget = budget - tail_budget - _chars(_u16(MIDDLE_OMISSION_MARKER))
        if head_budget > min_keep:
            head = _to_budget(units, head_budget)
            cut = head.rfind("\n")
            if cut > len(head) * 0.8:
                head = _slice(head, 0, cut)
            tail = _to_budget(units, tail_budget, tail=True)
            cut = tail.find("\n")
            if cut != -1 and cut < len(tail) * 0.2:
                tail = _slice(tail, cut + 1)
            if len(head) + len(tail) < len(units):
                kept = head + _u16(MIDDLE_OMISSION_MARKER) + tail
                return _append_suffix(kept, len(units), max_chars, suffix)
    kept = _to_budget(units, budget)
    cut = kept.rfind("\n")
    if cut > len(kept) * 0.8:
        kept = _slice(kept, 0, cut)
    return _append_suffix(kept, len(units), max_chars, suffix)


def _text_block(block: Any) -> bool:
    """``isToolResultTextBlock``."""
    return (
        isinstance(block, dict)
        and block.get("type") in ("text", "toolResult")
        and isinstance(block.get("text"), str)
    )


def tool_result_text_chars(raw: dict[str, Any]) -> int:
    """``getToolResultTextBudget``: the characters a tool result's text blocks weigh."""
    content = raw.get("content")
    if raw.get("role") != "toolResult" or not isinstance(content, list):
        return 0
    return sum(estimate_string_chars(b["text"]) for b in content if _text_block(b))


def truncate_message(
    raw: dict[str, Any], max_chars: float, *, min_keep_chars: float = 2000, suffix: Suffix = notice
) -> dict[str, Any]:
    """``truncateToolResultMessage``: each text block cut to its share of *max_chars*."""
    content = raw.get("content")
    if not isinstance(content, list):
        return raw
    min_keep = _min_keep(max_chars, min_keep_chars, suffix)
    texts = [_u16(b["text"]) if _text_block(b) else "" for b in content]
    chars = [_chars(t) if _text_block(b) else 0 for t, b in zip(texts, content, strict=True)]
    total = sum(chars)
    if total <= max_chars:
        return raw
    text_block = [c > 0 and _text_block(b) for c, b in zip(chars, content, strict=True)]
    small = [
        tb and len(t) <= min_keep and _chars(t) <= min_keep
        for tb, t in zip(text_block, texts, strict=True)
    ]
    notes = [
        _chars(suffix(max(1, len(t)))) if tb else 0 for tb, t in zip(text_block, texts, strict=True)
    ]
    small_chars = sum(c for c, s in zip(chars, small, strict=True) if s)
    large_notes = sum(n for n, s in zip(notes, small, strict=True) if not s)
    keep_small = small_chars + large_notes <= max_chars
    remaining = max(0, max_chars - (small_chars if keep_small else 0))
    reducible = total - (small_chars if keep_small else 0)
    reducible_notes = large_notes if keep_small else sum(notes)
    scale = min(1, remaining / reducible_notes) if reducible_notes > 0 else 0
    spread = max(0, remaining - reducible_notes)
    out: list[Any] = []
    for k, block in enumerate(content):
        if not _text_block(block):
            out.append(block)
            continue
        keep = keep_small and small[k]
        share = chars[k] / reducible if reducible > 0 else 0
        budget = chars[k] if keep else math.floor(notes[k] * scale + spread * share)
        floor = chars[k] if keep else math.floor(min_keep * share)
        text = _from_u16(truncate_text(texts[k], budget, suffix, floor))
        new = {**block, "text": text}
        if isinstance(block.get("content"), str):
            new["content"] = text
        out.append(new)
    return {**raw, "content": out}


def _clear(raw: dict[str, Any], max_text_chars: float) -> dict[str, Any]:
    """``clearToolResultText``: each text block becomes (part of) the elision marker."""
    content = raw.get("content")
    if not isinstance(content, list):
        return raw
    left = max(0, math.floor(max_text_chars))
    out: list[Any] = []
    for block in content:
        if not _text_block(block):
            out.append(block)
            continue
        text = _to_budget(AGGREGATE_ELISION_MARKER, left)
        left = max(0, left - _chars(text))
        new = {**block, "text": text}
        if isinstance(block.get("content"), str):
            new["content"] = text
        out.append(new)
    return {**raw, "content": out}


def truncate_tool_results(
    messages: Sequence[dict[str, Any]], window: int
) -> list[dict[str, Any] | None]:
    """OpenClaw's recovery truncation plan over a context's messages.

    ``buildToolResultReplacementPlan`` with the live limit, the aggregate budget
    and no minimum kept: first every tool result over the limit is cut to it,
    then, while all of them weigh more than the aggregate budget, the oldest are
    cut further and then cleared. The new message for each one changed, else None.
    """
    max_chars = max(1, live_tool_result_max_chars(window))
    aggregate = max(1, aggregate_tool_result_chars(window, max_chars))
    if not any(m.get("role") == "toolResult" for m in messages):
        return [None] * len(messages)
    current: list[dict[str, Any]] = list(messages)
    sizes = [tool_result_text_chars(m) for m in messages]
    changed: dict[int, dict[str, Any]] = {}
    for k, m in enumerate(messages):
        if m.get("role") == "toolResult" and sizes[k] > max_chars:
            new = truncate_message(m, max_chars, min_keep_chars=0)
            changed[k], current[k] = new, new
            sizes[k] = tool_result_text_chars(new) if new is not m else sizes[k]
    candidates = [
        k for k, m in enumerate(current) if m.get("role") == "toolResult" and sizes[k] > 0
    ]
    total = sum(sizes[k] for k in candidates)
    if len(candidates) >= 2 and total > aggregate:
        few = aggregate < len(candidates) * _chars(notice(1))
        suffix: Suffix = _compact_notice if few else notice
        min_truncated = _chars(suffix(1))
        remaining = total - aggregate
        done: dict[int, int] = {}
        for clear in (False, True):
            for k in candidates:
                if remaining <= 0:
                    break
                base = done.get(k, sizes[k])
                if not clear and base <= min_truncated:
                    continue
                if clear:
                    new = _clear(current[k], max(0, base - remaining))
                else:
                    target = max(min_truncated, base - remaining, _chars(suffix(1)))
                    new = truncate_message(current[k], target, min_keep_chars=0, suffix=suffix)
                size = sizes[k] if new is current[k] else tool_result_text_chars(new)
                if base - size <= 0:
                    continue
                changed[k], done[k] = new, size
                remaining -= base - size
    out: list[dict[str, Any] | None] = [None] * len(messages)
    for k, new in changed.items():
        if dumps(new) != dumps(messages[k]):
            out[k] = new
    return out


@dataclass(frozen=True, slots=True)
class OverflowStep:
    """One step of the recovery."""

    kind: str
    """``fits``, ``overflow``, ``compact``, ``truncate``, ``recovered`` or ``give_up``."""
    tokens_before: int
    tokens_after: int
    detail: str


def max_tool_result_chars(window: int) -> int:
    """Largest tool result kept whole (``resolveLiveToolResultMaxChars``)."""
    return live_tool_result_max_chars(window)


def _tokens(session: Session) -> int:
    size = context_size(context_at(session, None))
    return size.measured if size.measured is not None else size.estimated


def _branch(session: Session) -> list[Entry]:
    leaf = session.leaf
    return session.path_to(leaf.id) if leaf is not None else []


def _session(session: Session, entries: list[Entry]) -> Session:
    return Session(
        session.path,
        session.header,
        session.version,
        entries,
        agent_readable=session.agent_readable,
    )


def _compacted(session: Session, plan: CompactionPlan, summary_tokens: int, n: int) -> Session:
    """*session* with a compaction appended as *plan* would write it."""
    path = _branch(session)
    leaf = path[-1]
    cid = f"overflow-recovery-{n}"
    raw: dict[str, Any] = {
        "type": "compaction",
        "id": cid,
        "parentId": leaf.id,
        "timestamp": leaf.timestamp,
        "summary": "s" * (4 * summary_tokens),  # pi's estimate: summary_tokens
        "firstKeptEntryId": plan.first_kept_entry_id,
        "tokensBefore": plan.tokens_before,
    }
    entry = Entry(leaf.index + 1, 0, 0, "compaction", cid, leaf.id, leaf.timestamp, raw)
    return _session(session, [*path, entry])


def _truncated(session: Session, window: int) -> tuple[Session, int, int]:
    """Tool results truncated in the context: ``(session, count, pi tokens saved)``."""
    items = [i for i in context_at(session, None) if not i.synthetic]
    new = truncate_tool_results([i.message.raw for i in items], window)
    changed = {id(items[k].entry): raw for k, raw in enumerate(new) if raw is not None}
    if not changed:
        return session, 0, 0
    saved = 0
    entries: list[Entry] = []
    for e in _branch(session):
        raw = changed.get(id(e))
        if raw is None:
            entries.append(e)
            continue
        saved += (
            estimate_message(e.message) - estimate_message(normalize_message(raw))
            if e.message
            else 0
        )
        entries.append(
            Entry(
                e.index,
                e.line,
                e.offset,
                e.type,
                e.id,
                e.parent_id,
                e.timestamp,
                {**e.raw, "message": raw},
            )
        )
    return _session(session, entries), len(changed), saved


def simulate_overflow(
    session: Session,
    window: int,
    *,
    at: str | None = None,
    reserve_tokens: int = 20_000,
    keep_recent_tokens: int = 20_000,
    max_history_share: float = 0.5,
) -> list[OverflowStep]:
    """Replay the recovery for the context at *at* on a model with *window* tokens."""
    if at is not None:
        target = session.entry(at)
        session = _session(session, session.path_to(target.id))
    tokens = _tokens(session)
    if tokens <= window:
        return [
            OverflowStep("fits", tokens, tokens, f"{tokens:,} tokens fit the {window:,} window")
        ]
    summary_tokens = math.floor(0.8 * reserve_tokens)
    steps: list[OverflowStep] = []
    attempts = 0
    truncation_tried = False
    while True:
        why = f"{tokens:,} tokens > {window:,}: the provider answers 'context overflow'"
        steps.append(OverflowStep("overflow", tokens, tokens, why))
        retry = False
        if attempts < MAX_ATTEMPTS:
            attempts += 1
            plan = plan_compaction(
                session,
                window=window,
                reserve_tokens=reserve_tokens,
                keep_recent_tokens=keep_recent_tokens,
                max_history_share=max_history_share,
                compaction_leaf=True,
            )
            if plan.ok:
                session = _compacted(session, plan, summary_tokens, attempts)
                after = _tokens(session)
                detail = (
                    f"attempt {attempts}/{MAX_ATTEMPTS}: summarise "
                    f"{len(plan.summarize) + len(plan.history_dropped) + len(plan.turn_prefix)} "
                    f"messages, keep {len(plan.kept)} from #{plan.first_kept_index}"
                )
                if after >= tokens:
                    detail += " (removed nothing: the kept messages and summary are this large)"
                steps.append(OverflowStep("compact", tokens, after, detail))
                tokens, retry = after, True
            else:
                fail = f"attempt {attempts}/{MAX_ATTEMPTS}: auto-compaction failed ({plan.reason})"
                steps.append(OverflowStep("compact", tokens, tokens, fail))
        if not retry and not truncation_tried:
            limit = max_tool_result_chars(window)
            session_after, count, saved = _truncated(session, window)
            if count:
                truncation_tried = True
                after = tokens - saved
                detail = f"truncate {count} tool result(s) (limit {limit:,} chars each)"
                steps.append(OverflowStep("truncate", tokens, after, detail))
                session, tokens, retry = session_after, after, True
        if not retry:
            fail = f"still {tokens:,} > {window:,}: the run fails with the overflow error"
            steps.append(OverflowStep("give_up", tokens, tokens, fail))
            return steps
        if tokens <= window:
            steps.append(
                OverflowStep("recovered", tokens, tokens, "the retried prompt fits: counters reset")
            )
            return steps
