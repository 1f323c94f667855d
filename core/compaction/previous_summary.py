"""The five headings of memlens's offline summary, and reading a previous summary.

A compaction of a session that was compacted before gets the previous summary
(pi's update prompt: keep everything in it that still holds). The offline
summariser reads it with :func:`parse_summary` (the bullets of the five headings,
pi's "Key Decisions" and "Constraints & Preferences" among them) and
:func:`carried_sections` (every other section: pi's Goal, Progress, Next Steps,
Critical Context..., kept as they were). The parts the safeguard appends to every
summary (recent turns, tool failures, file lists) are made again, not carried.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from core.safety.redact import redact

if TYPE_CHECKING:
    from collections.abc import Iterable

HEADINGS = (
    "Decisions",
    "Open TODOs",
    "Constraints/Rules",
    "Pending user asks",
    "Exact identifiers",
)
EMPTY = "(none)"
MAX_ITEM_CHARS = 240
_ALIASES = {re.sub("[^a-z]", "", h.lower()): h for h in HEADINGS} | {
    "todos": "Open TODOs",
    "constraints": "Constraints/Rules",
    "identifiers": "Exact identifiers",
    # pi's checkpoint names for two of the five
    "keydecisions": "Decisions",
    "keydecisionsmade": "Decisions",
    "constraintspreferences": "Constraints/Rules",
}
_TOP_HEADING = re.compile(r"^\s{0,3}(#{1,2})\s+(.+?)\s*#*\s*$")
_APPENDIX = re.compile(
    r"(?m)^(?:---[ \t]*\n\s*\*\*Turn Context \(split turn\):\*\*"
    r"|## Recent turns preserved verbatim\s*$|## Tool Failures\s*$"
    r"|<read-files>|<modified-files>|\[Compaction summary truncated)"
)
"""Where the safeguard's appended parts start: they are made again for each compaction."""
_SPACE = re.compile(r"\s+")


def clip(text: str, limit: int = MAX_ITEM_CHARS) -> str:
    """Redact, collapse whitespace and cut *text* to *limit* characters."""
    text = _SPACE.sub(" ", redact(text)).strip()
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _heading_key(title: str) -> str:
    return re.sub(r"[^a-z]", "", title.lower())


def _top_sections(summary: str) -> list[tuple[str, list[str]]]:
    """*summary* cut at its ``#`` and ``##`` headings (deeper ones stay in the body).

    The safeguard's appended parts (recent turns, tool failures, file lists: made
    again for each compaction) are left out, and so is the text before the first
    heading (a label or a title).
    """
    cut = _APPENDIX.search(summary)
    if cut is not None:
        summary = summary[: cut.start()]
    out: list[tuple[str, list[str]]] = []
    for line in summary.splitlines():
        head = _TOP_HEADING.match(line)
        if head:
            out.append((head.group(2), []))
        elif out:
            out[-1][1].append(line)
    return out


def parse_summary(summary: str) -> dict[str, list[str]]:
    """The bullets under each of the five headings of *summary* (other text ignored).

    pi's "Key Decisions" and "Constraints & Preferences" count as Decisions and
    Constraints/Rules when they hold bullets only (see :func:`carried_sections`).
    """
    out: dict[str, list[str]] = {h: [] for h in HEADINGS}
    for title, body in _top_sections(summary):
        heading = _ALIASES.get(_heading_key(title))
        if heading is None or any(
            _TOP_HEADING.match(x) or x.lstrip().startswith("#") for x in body
        ):
            continue
        items = out[heading]
        for line in body:
            bullet = re.match(r"^\s*(?:[-*+]|\d+[.)])\s+(.*\S)", line)
            if bullet:
                items.append(bullet.group(1))
            elif line.strip() and line[:1] in " \t" and items:
                items[-1] += " " + line.strip()
    return {h: [clip(i) for i in items if i.strip() != EMPTY] for h, items in out.items()}


def carried_sections(summary: str) -> list[tuple[str, str]]:
    """The sections of a previous summary the five headings do not hold, as they were.

    pi's checkpoints open with ``## Goal`` and ``## Progress`` (``### Done``,
    ``### In Progress``...), then ``## Next Steps``, ``## Critical Context``...; an
    update keeps them (pi's update prompt: "preserve all existing information").
    Each is ``(title, body)``; a section without a body (a title line) is left out.
    """
    out: list[tuple[str, str]] = []
    for title, body in _top_sections(summary):
        key = _heading_key(title)
        nested = any(x.lstrip().startswith("#") for x in body)
        if key in _ALIASES and not nested:
            continue  # its bullets go under one of the five headings
        text = "\n".join(body).strip("\n")
        if text.strip():
            out.append((title, text))
    return out


def union_carried(summaries: Iterable[str]) -> list[tuple[str, str]]:
    """The carried sections of *summaries*, the first of each title kept, in order."""
    seen: set[str] = set()
    out = []
    for summary in summaries:
        for title, body in carried_sections(summary):
            if _heading_key(title) not in seen:
                seen.add(_heading_key(title))
                out.append((title, body))
    return out
