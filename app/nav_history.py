"""Back/Forward: the places visited, as a browser keeps them.

A :class:`Visit` is a :class:`core.refs.reference.Reference` and the inspector tab it
was seen in. :meth:`History.push` drops the forward places (a new branch) and ignores
a place equal to the current one; :meth:`History.back` and :meth:`History.forward`
move the cursor and return the place to restore.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.refs.reference import Reference

LIMIT = 200
"""Places kept; the oldest go first."""


@dataclass(frozen=True, slots=True)
class Visit:
    """A place visited: where, and the tab it was seen in."""

    reference: Reference
    tab: str = ""


class History:
    """The places visited and the cursor among them."""

    def __init__(self, limit: int = LIMIT) -> None:
        self._visits: list[Visit] = []
        self._at = -1
        self._limit = limit

    @property
    def current(self) -> Visit | None:
        """The place the cursor is on."""
        return self._visits[self._at] if self._at >= 0 else None

    @property
    def can_go_back(self) -> bool:
        """Whether there is a place before the current one."""
        return self._at > 0

    @property
    def can_go_forward(self) -> bool:
        """Whether there is a place after the current one (after a Back)."""
        return self._at < len(self._visits) - 1

    def push(self, visit: Visit) -> bool:
        """Record *visit* after the current place; False when it is the current place."""
        current = self.current
        if current is not None and current.reference == visit.reference:
            if current.tab != visit.tab:
                self._visits[self._at] = visit  # the same place, seen in another tab
            return False
        del self._visits[self._at + 1 :]
        self._visits.append(visit)
        if len(self._visits) > self._limit:
            del self._visits[0]
        self._at = len(self._visits) - 1
        return True

    def back(self) -> Visit | None:
        """Move to the place before and return it (None at the start)."""
        if not self.can_go_back:
            return None
        self._at -= 1
        return self._visits[self._at]

    def forward(self) -> Visit | None:
        """Move to the place after and return it (None at the end)."""
        if not self.can_go_forward:
            return None
        self._at += 1
        return self._visits[self._at]
