"""The sections of a compaction summary: its ``## `` headings and what each holds."""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.compaction.summarize import REQUIRED_HEADINGS

_HEADING = re.compile(r"^(#{1,6})\s+(\S.*?)\s*#*\s*$")
_PART = re.compile(r"^\*\*(Turn Context \(split turn\)):?\*\*\s*$")
_REQUIRED_TITLES = frozenset(h[3:] for h in REQUIRED_HEADINGS)


@dataclass(frozen=True, slots=True)
class SummarySection:
    """One heading of a summary and the lines under it."""

    title: str
    """The heading without its ``#`` marks (``""`` for text before the first one)."""
    level: int
    line: int
    """0-based line of the heading in the summary."""
    body: str
    part: str = ""
    """``"Turn Context (split turn)"`` for the headings of the split turn's own summary."""

    @property
    def items(self) -> int:
        """Non-empty body lines, ``(none)`` excluded."""
        return sum(1 for x in self.body.splitlines() if x.strip() and x.strip() != "(none)")

    @property
    def empty(self) -> bool:
        """True when the section holds nothing (or only ``(none)``)."""
        return self.items == 0


def summary_sections(text: str) -> list[SummarySection]:
    """Split *text* at its markdown headings; text before the first is a section titled ``""``."""
    out: list[SummarySection] = []
    title, level, start, part, current_part = "", 0, 0, "", ""
    body: list[str] = []

    def flush() -> None:
        if title or any(x.strip() for x in body):
            text = "\n".join(body).strip("\n")
            out.append(SummarySection(title, level, start, text, current_part))

    for n, line in enumerate(text.splitlines()):
        m = _HEADING.match(line)
        if m:
            flush()
            title, level, start, body = m.group(2), len(m.group(1)), n, []
            if title not in _REQUIRED_TITLES:
                part = ""  # the split turn's summary ends at the first other heading
            current_part = part
            continue
        p = _PART.match(line.strip())
        if p:
            part = p.group(1)
        body.append(line)
    flush()
    return out


def missing_headings(text: str) -> list[str]:
    """The required headings (``REQUIRED_HEADINGS``) missing from *text*."""
    present = {line.strip() for line in text.splitlines()}
    return [h for h in REQUIRED_HEADINGS if h not in present]
