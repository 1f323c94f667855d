"""Short forms of ids that stay unique: the shortest distinct prefix, at least 8 characters.

Session ids are UUIDs; the first 8 characters usually tell them apart, but two sessions
can share a longer prefix, and then their short forms must grow until they differ.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

MIN_CHARS = 8


def short_ids(ids: Iterable[str], min_chars: int = MIN_CHARS) -> dict[str, str]:
    """Each id of *ids* -> its shortest prefix (at least *min_chars*) no other id shares.

    An id that is a prefix of another stays whole. Sorting puts the ids sharing the
    longest prefix with an id next to it, so two neighbours decide each length.
    """
    ordered = sorted(set(ids))
    out: dict[str, str] = {}
    for i, sid in enumerate(ordered):
        need = min_chars
        for other in ordered[max(0, i - 1) : i] + ordered[i + 1 : i + 2]:
            common = 0
            for a, b in zip(sid, other, strict=False):
                if a != b:
                    break
                common += 1
            need = max(need, common + 1)
        out[sid] = sid[:need]
    return out
