"""A compaction plan as a few rows: what is dropped, summarised and kept, with counts and tokens."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.compaction.plan import CompactionPlan, PlanItem

Fate = Literal["dropped", "summarised", "turn prefix", "kept"]

FATE_TIPS: dict[Fate, str] = {
    "dropped": "Older history pruned because what stays after the cut exceeds "
    "maxHistoryShare x 1.2 of the window; still summarised (first, on its own) and archived",
    "summarised": "Replaced by the summary (archived as segments)",
    "turn prefix": "The start of the turn the cut point splits, summarised on its own",
    "kept": "Kept verbatim after the summary",
}


@dataclass(frozen=True, slots=True)
class PlanGroup:
    """The messages of a plan that share a fate."""

    fate: Fate
    messages: int
    tokens: int
    first_index: int | None
    """Entry index (``#``) of the first message, None when the group is empty."""
    last_index: int | None
    first_entry_id: str | None
    calls: int
    """Model calls spent on this group."""

    @property
    def range_text(self) -> str:
        """``#12 to #340`` (or ``-``)."""
        if self.first_index is None:
            return "-"
        if self.first_index == self.last_index:
            return f"#{self.first_index}"
        return f"#{self.first_index} to #{self.last_index}"


def _group(fate: Fate, items: Sequence[PlanItem], calls: int) -> PlanGroup:
    return PlanGroup(
        fate,
        len(items),
        sum(i.tokens for i in items),
        items[0].entry.index if items else None,
        items[-1].entry.index if items else None,
        items[0].entry.id if items else None,
        calls,
    )


def plan_groups(plan: CompactionPlan) -> list[PlanGroup]:
    """Dropped, summarised, turn prefix and kept, oldest first (empty groups included)."""
    return [
        _group("dropped", plan.history_dropped, plan.history_calls),
        _group("summarised", plan.summarize, plan.main_calls),
        _group("turn prefix", plan.turn_prefix, plan.prefix_calls),
        _group("kept", plan.kept, 0),
    ]
