"""The names memlens gives the quantities it shows: one name and one line each.

Every view that shows a context size, a message's tokens or a threshold takes its
words from here, so the timeline, the budget gauge, the Sessions navigator, the
context view and the CLI say the same thing for the same number.

The context size is what pi's ``estimateContextTokens`` computes
(``/work/shared/spec/algorithms.md`` section 1): the last assistant turn's
``usage`` as the provider reported it (not aborted, not an error) plus a chars/4
estimate of the messages after it; where no such turn exists, the chars/4
estimate of the whole context. Its *source tag* says which: ``reported`` or
``estimated``. The machine keys (``Budget.context_source``,
``ContextBreakdown.source``: ``"measured"`` / ``"estimated"``) stay as they are
for the CLI's JSON; :func:`source_label` words them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CHARS4_ESTIMATE",
    "CONTEXT_TOKENS",
    "MESSAGE_TOKENS",
    "README_THRESHOLDS",
    "THRESHOLD_TERMS",
    "Term",
    "ThresholdTerm",
    "source_label",
    "source_tip",
    "threshold_help",
]

README_THRESHOLDS = "README.md#context-thresholds"
"""The README section that explains every threshold (linked from the tooltips)."""


@dataclass(frozen=True, slots=True)
class Term:
    """A quantity: the name views show and one line saying what it is."""

    name: str
    help: str


CONTEXT_TOKENS = Term(
    "context tokens",
    "what the model had in its window at that entry, as pi computes it "
    "(estimateContextTokens): the provider's reported usage of the last assistant turn "
    "plus a chars/4 estimate of the messages after it; the chars/4 estimate of the "
    "whole context where no turn reported usage",
)
CHARS4_ESTIMATE = Term(
    "chars/4 estimate",
    "pi's estimate of the whole context, ignoring reported usage: ceil(chars / 4) per "
    "message, summed (it drives pi's compaction cut point)",
)
MESSAGE_TOKENS = Term(
    "message tokens",
    "pi's chars/4 estimate of one message: what it adds to the context",
)

_SOURCES = {
    "measured": (
        "reported",
        "the provider's reported usage of the last assistant turn plus a chars/4 "
        "estimate of the messages after it",
    ),
    "estimated": (
        "estimated (chars/4)",
        "no assistant turn in this context reported usage: pi's chars/4 estimate",
    ),
}


def source_label(source: str) -> str:
    """The source tag of a context size: ``reported`` or ``estimated (chars/4)``.

    *source* is the machine key (``"measured"``, ``"estimated"``; ``"reported"`` too).
    """
    key = "measured" if source == "reported" else source
    return _SOURCES[key][0] if key in _SOURCES else source


def source_tip(source: str) -> str:
    """One line saying how a context size with that source tag was computed."""
    key = "measured" if source == "reported" else source
    return _SOURCES[key][1] if key in _SOURCES else ""


@dataclass(frozen=True, slots=True)
class ThresholdTerm:
    """A threshold: its name, whose rule it is, and what happens when it is crossed."""

    key: str
    name: str
    short: str
    """The few letters a crowded plot or bar labels it with."""
    whose: str
    rule: str
    crossed: str

    @property
    def line(self) -> str:
        """The one-line explanation a tooltip shows."""
        return f"{self.whose}: {self.rule}; {self.crossed}."


THRESHOLD_TERMS: dict[str, ThresholdTerm] = {
    t.key: t
    for t in (
        ThresholdTerm(
            "window",
            "context window",
            "window",
            "the model",
            "the most tokens the model accepts in one request",
            "past it the provider rejects the request (context overflow): pi compacts and retries",
        ),
        ThresholdTerm(
            "compaction",
            "compaction trigger",
            "compaction",
            "pi",
            "window - reserveTokens (at least reserveTokensFloor 20,000)",
            "past it pi compacts the session before the next turn: older messages become a summary",
        ),
        ThresholdTerm(
            "seed",
            "80% rule",
            "80%",
            "the memory-context design's simpler rule, which memlens offers beside pi's",
            "80% of the window",
            "past it the rule says compact down to 30% of the window (20% in an "
            "emergency); no agent acts on it by itself",
        ),
        ThresholdTerm(
            "flush",
            "memory flush",
            "flush",
            "OpenClaw",
            "window - reserveTokensFloor - softThresholdTokens",
            "at it the agent runs a silent turn that writes durable notes to "
            "memory/YYYY-MM-DD.md, once per compaction cycle",
        ),
        ThresholdTerm(
            "safe_limit",
            "safeLimit",
            "safeLimit",
            "OpenClaw's memory-context (smart trim)",
            "window - 4,000 reserve - recall hard cap",
            "past it smart trim drops old messages (counted at chars/3) before the next "
            "request, so the recalled block still fits",
        ),
    )
}


def threshold_help(key: str) -> str:
    """The threshold's line and where the README explains it ('' for an unknown key)."""
    t = THRESHOLD_TERMS.get(key)
    if t is None:
        return ""
    return f"{t.line}\nMore: {README_THRESHOLDS}"
