"""The recalled-context block, exactly as memory-context builds and injects it.

Budget: knowledge gets ``floor(hardCap * 0.3)``, detail the rest; within each
budget items are taken best first until the next would not fit (the first one
always goes in). Details are printed oldest first. If the whole block is still
over the hard cap, the lowest-scored details are dropped one by one, then the
block falls back to knowledge only, then to nothing.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from core.io.timefmt import utc_minute_ms
from core.transcript.recalled_block import MARKER
from core.transcript.tokens import estimate_text

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.store.segments import Segment

KNOWLEDGE_LIMIT = 10
BLOCK_ESTIMATOR = "memory-context's estimate, characters / 3"
"""How every view counts the recalled block's tokens (:func:`block_token_count`): the
estimate memory-context enforces its hard cap with, not pi's characters / 4."""
_SYSTEM_PREFIX = re.compile(
    r"^(?:System:\s*)?\[(?:(?:Sun|Mon|Tue|Wed|Thu|Fri|Sat)\s+)?\d{4}-\d{2}-\d{2}\s[^\]]*\]\s*"
)
_METADATA_HEAD = re.compile(
    r"^(?:Conversation|Sender|Channel)\s.*\(untrusted metadata\):?\s*$", re.I
)


class FactLike(Protocol):
    """What the block needs of a knowledge fact."""

    @property
    def type(self) -> str: ...  # noqa: D102

    @property
    def content(self) -> str: ...  # noqa: D102


def block_token_count(text: str) -> int:
    """Tokens of a recalled block as every view shows them (see :data:`BLOCK_ESTIMATOR`).

    ``max(1, ceil(len / 3))`` in JavaScript characters; 0 for an empty block.
    """
    return estimate_text(text) if text else 0


def hard_cap(hard_cap_tokens: int, window: int) -> int:
    """``min(hardCapTokens, floor(window * 0.10))``."""
    return min(hard_cap_tokens, math.floor(window * 0.1))


def search_limit(cap: int) -> int:
    """``max(8, ceil(hardCap / 500))``."""
    return max(8, math.ceil(cap / 500))


def safe_limit(window: int, reserve_tokens: int, cap: int) -> int:
    """``window - reserveTokens - hardCap`` (reserve 4,000 in the recall path)."""
    return window - reserve_tokens - cap


def strip_prefixes(text: str) -> str:
    """Drop channel metadata blocks and a leading ``[Mon 2026-01-01 10:00 ...]``."""
    kept: list[str] = []
    in_meta = False
    for line in text.splitlines():
        if _METADATA_HEAD.match(line.strip()):
            in_meta = True
            continue
        if in_meta:
            if line.strip() in ("", "```", "```json") or line.strip()[:1] in '{}[]"':
                continue
            in_meta = False
        kept.append(line)
    return _SYSTEM_PREFIX.sub("", "\n".join(kept).strip(), count=1).strip()


def extract_query(user_texts: Sequence[str], max_messages: int = 3) -> str:
    """The recall query: the last up to 3 user messages, prefixes stripped.

    Recalled blocks are not user words and are skipped.
    """
    picked: list[str] = []
    for text in reversed(user_texts):
        if MARKER in text:
            continue
        clean = strip_prefixes(text)
        if clean:
            picked.append(clean)
        if len(picked) == max_messages:
            break
    return "\n".join(reversed(picked))


@dataclass(frozen=True, slots=True)
class Detail:
    """A segment offered to the block, with its search score."""

    segment: Segment
    score: float


@dataclass(slots=True)
class RecalledBlock:
    """The block as it would be injected, and what was left out and why."""

    text: str
    tokens: int
    hard_cap: int
    knowledge: list[FactLike] = field(default_factory=list)
    details: list[Detail] = field(default_factory=list)
    cut_knowledge: list[tuple[FactLike, str]] = field(default_factory=list)
    cut_details: list[tuple[Detail, str]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """True when nothing would be injected."""
        return not self.text

    def cut_reason(self, segment_id: str) -> str | None:
        """Why the hard cap left segment *segment_id* out; None if it did not."""
        return next((why for d, why in self.cut_details if d.segment.id == segment_id), None)


def _cap(items: list[tuple[str, float]], budget: int) -> list[int]:
    # enforceHardCap of runtime.ts: best first; stop at the first that would not fit.
    order = sorted(range(len(items)), key=lambda i: -items[i][1])
    chosen: list[int] = []
    used = 0
    for i in order:
        tokens = estimate_text(items[i][0])
        if used + tokens > budget and chosen:
            break
        chosen.append(i)
        used += tokens
    return chosen


def _knowledge_text(facts: Sequence[FactLike]) -> str:
    if not facts:
        return ""
    lines = "\n".join(f"- [{f.type}] {f.content}" for f in facts)
    return f"<knowledge>\n{lines}\n</knowledge>"


def _when(ms: int) -> str:
    return utc_minute_ms(ms)


def _detail_text(details: Sequence[Detail]) -> str:
    if not details:
        return ""
    ordered = sorted(details, key=lambda d: d.segment.timestamp)
    body = "\n\n".join(
        f"[{_when(d.segment.timestamp)} {d.segment.role}] {d.segment.content}" for d in ordered
    )
    return f"<detail>\n{body}\n</detail>"


def _wrap(*parts: str) -> str:
    inner = "\n\n".join(p for p in parts if p)
    return f"{MARKER}\n\n{inner}\n\n</recalled-context>" if inner else ""


def build_block(facts: Sequence[FactLike], details: Sequence[Detail], cap: int) -> RecalledBlock:
    """Build the recalled-context block for *facts* and *details* under *cap* tokens."""
    if not facts and not details:
        return RecalledBlock("", 0, cap)
    k_budget = math.floor(cap * 0.3)
    d_budget = cap - k_budget
    k_items = [(f"- [{f.type}] {f.content}", 1.0) for f in facts]
    k_keep = set(_cap(k_items, k_budget))
    # The agent matches kept knowledge back by its line text, keeping input order.
    kept_lines = {k_items[i][0] for i in k_keep}
    knowledge = [f for f in facts if f"- [{f.type}] {f.content}" in kept_lines]
    cut_k = [
        (f, "over the knowledge budget (30% of the hard cap)")
        for f in facts
        if f"- [{f.type}] {f.content}" not in kept_lines
    ]
    d_items = [(d.segment.content, d.score) for d in details]
    d_order = _cap(d_items, d_budget)
    included = [details[i] for i in d_order]  # best first
    chosen = set(d_order)
    cut_d = [
        (d, "over the detail budget (70% of the hard cap)")
        for i, d in enumerate(details)
        if i not in chosen
    ]
    k_text = _knowledge_text(knowledge)
    text = _wrap(k_text, _detail_text(included))
    if not text:
        return RecalledBlock("", 0, cap, cut_knowledge=cut_k, cut_details=cut_d)
    if block_token_count(text) <= cap:
        return RecalledBlock(text, block_token_count(text), cap, knowledge, included, cut_k, cut_d)
    while included:
        dropped = included.pop()
        cut_d.append((dropped, "dropped (lowest score) so the whole block fits the hard cap"))
        text = _wrap(k_text, _detail_text(included))
        if not text:
            break
        if block_token_count(text) <= cap:
            return RecalledBlock(
                text, block_token_count(text), cap, knowledge, included, cut_k, cut_d
            )
    if k_text:
        text = _wrap(k_text)
        if block_token_count(text) <= cap:
            return RecalledBlock(text, block_token_count(text), cap, knowledge, [], cut_k, cut_d)
    cut_k.extend((f, "the knowledge block alone is over the hard cap") for f in knowledge)
    return RecalledBlock("", 0, cap, [], [], cut_k, cut_d)
