"""Fact writes on a QUndoStack: undo and redo append lines too (never a truncation).

A :class:`FactCommand` is pushed after its write happened (the first ``redo``
that ``QUndoStack.push`` makes is a no-op). Undo appends the inverse of the lines
that are now in effect (:func:`core.knowledge.ops.inverse`), redo the inverse of the
undo. Both go through the writer's confirm; when the user declines, or the fact
changed since, nothing is written and the writer moves the stack back
(:meth:`FactWriter.bounce`), so the stack always says what the file holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol

from PySide6.QtGui import QUndoCommand
from typing_extensions import override

if TYPE_CHECKING:
    from core.knowledge.ops import Plan

Direction = Literal["undo", "redo"]


class FactWriter(Protocol):
    """What a :class:`FactCommand` needs from the view that made it."""

    def write_inverse(self, done: Plan) -> Plan | None:
        """Plan, confirm and append the inverse of *done*; the plan written, or None."""
        ...

    def bounce(self, command: FactCommand, direction: Direction) -> None:
        """Move the stack back after a failed undo (*direction* ``redo``) or redo."""
        ...


class FactCommand(QUndoCommand):
    """One append to knowledge.jsonl (one fact or a bulk action), undoable by appending.

    Parameters
    ----------
    writer
        The view that writes (confirm, append, refresh).
    done
        The plan that was just appended.
    text
        What the undo/redo actions say, e.g. ``"Delete 3 facts"``.
    """

    def __init__(self, writer: FactWriter, done: Plan, text: str) -> None:
        super().__init__(text)
        self._writer = writer
        self._current = done
        self._applied = True
        self.original = done

    @property
    def applied(self) -> bool:
        """Whether the command's change is in effect in the file."""
        return self._applied

    @property
    def current(self) -> Plan:
        """The plan whose lines are the last ones written for the command."""
        return self._current

    @override
    def redo(self) -> None:
        if self._applied:  # push() after the write, or moving back after a failed redo
            return
        written = self._writer.write_inverse(self._current)
        if written is None:
            self._writer.bounce(self, "undo")
            return
        self._current, self._applied = written, True

    @override
    def undo(self) -> None:
        if not self._applied:
            return
        written = self._writer.write_inverse(self._current)
        if written is None:
            self._writer.bounce(self, "redo")
            return
        self._current, self._applied = written, False
