"""A line diff of two texts laid out side by side (previous summary | new summary)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

RowKind = Literal["equal", "replace", "delete", "insert"]


@dataclass(frozen=True, slots=True)
class DiffRow:
    """One row of the side-by-side view; None on a side that has no line there."""

    kind: RowKind
    left: str | None
    right: str | None
    left_line: int | None = None
    """1-based line number in the left text."""
    right_line: int | None = None


@dataclass(frozen=True, slots=True)
class DiffStats:
    """Lines per kind of change."""

    equal: int = 0
    changed: int = 0
    removed: int = 0
    added: int = 0

    @property
    def identical(self) -> bool:
        """True when nothing changed."""
        return not (self.changed or self.removed or self.added)


def side_by_side(left: str, right: str) -> list[DiffRow]:
    """Rows pairing the lines of *left* and *right*; gaps where one side has none."""
    a, b = left.splitlines(), right.splitlines()
    rows: list[DiffRow] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            rows.extend(
                DiffRow("equal", a[i], b[j], i + 1, j + 1)
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            )
            continue
        n = max(i2 - i1, j2 - j1)
        for k in range(n):
            i, j = i1 + k, j1 + k
            has_a, has_b = i < i2, j < j2
            kind: RowKind = "replace" if has_a and has_b else "delete" if has_a else "insert"
            rows.append(
                DiffRow(
                    kind,
                    a[i] if has_a else None,
                    b[j] if has_b else None,
                    i + 1 if has_a else None,
                    j + 1 if has_b else None,
                )
            )
    return rows


def diff_stats(rows: list[DiffRow]) -> DiffStats:
    """How many rows of each kind."""
    count = {"equal": 0, "replace": 0, "delete": 0, "insert": 0}
    for r in rows:
        count[r.kind] += 1
    return DiffStats(count["equal"], count["replace"], count["delete"], count["insert"])


def changed_spans(left: str, right: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Character ranges ``[start, end)`` that differ in *left* and in *right* (by words)."""
    wa, wb = _words(left), _words(right)
    matcher = difflib.SequenceMatcher(None, [w for w, _ in wa], [w for w, _ in wb], autojunk=False)
    spans_a: list[tuple[int, int]] = []
    spans_b: list[tuple[int, int]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            spans_a.append((wa[i1][1], wa[i2 - 1][1] + len(wa[i2 - 1][0])))
        if j2 > j1:
            spans_b.append((wb[j1][1], wb[j2 - 1][1] + len(wb[j2 - 1][0])))
    return spans_a, spans_b


def _words(text: str) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    start = None
    for i, ch in enumerate(text):
        if ch.isspace():
            if start is not None:
                out.append((text[start:i], start))
                start = None
        elif start is None:
            start = i
    if start is not None:
        out.append((text[start:], start))
    return out
