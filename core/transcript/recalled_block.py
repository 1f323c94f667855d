"""Where memory-context's recalled-context block sits in a context, and its marker.

The block itself is built in :mod:`core.recall.block`; a transcript only needs to
recognise it (:data:`MARKER`) and to know where it is injected
(:func:`injection_index`), so both live down here with the other transcript code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

MARKER = '<recalled-context source="memory-context">'


def injection_index(roles: Sequence[str]) -> int:
    """Where the block goes: right after the system prompt and a compaction summary."""
    i = 0
    while i < len(roles) and roles[i] in ("system", "compactionSummary"):
        i += 1
    return i
