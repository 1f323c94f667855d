"""A write memlens is about to make, shown to the user before it happens.

Views that change an agent's files build :class:`PlannedWrite` objects and ask a
:data:`Confirm` callback (the app shows a preview dialog); only a True answer
lets the write go ahead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

WriteAction = Literal["append", "rewrite", "create", "backup"]


@dataclass(frozen=True, slots=True)
class PlannedWrite:
    """One file memlens will change, and exactly how."""

    path: str
    action: WriteAction
    summary: str
    """One line for the user: "append 1 fact line (UPDATE of k3f9…)"."""
    lines: tuple[str, ...] = ()
    """For appends: the exact lines (already redacted), without newlines."""
    backup: str | None = None
    """The backup made of :attr:`path` before this write, by its exact name.

    Computed once when the write is planned (``core.io.fsutil.next_backup_path``)
    and handed to the write: the preview names the file that is then written.
    """


def planned_backup(writes: Sequence[PlannedWrite], path: str) -> str | None:
    """The backup name *writes* planned for *path* (None: no backup planned)."""
    return next((w.backup for w in writes if w.path == path and w.backup), None)


Confirm = Callable[[Sequence[PlannedWrite]], bool]
"""Asked before a write; True lets it happen."""


def always(_writes: Sequence[PlannedWrite]) -> bool:
    """A confirm that accepts everything (scripts and tests that asked for the write)."""
    return True
