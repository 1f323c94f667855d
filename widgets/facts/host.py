"""What the facts view's edits need of the view: its table, messages and selection.

:class:`~widgets.facts.editing.FactEditing` works on this base class, not on
:class:`~widgets.facts.view.FactsView` itself, so the view can own its editing
without the two modules importing each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    from PySide6.QtWidgets import QLabel, QTableView

    from core.store.knowledge import Fact


class FactsHost(QWidget):
    """A view of facts that edits can read the selection of and report to.

    Signals
    -------
    written(list)
        After every write: the :class:`core.knowledge.ops.Applied` records written.
    failed(str)
        A write was refused or failed (the message is also shown in the view).
    """

    written = Signal(list)
    failed = Signal(str)

    table: QTableView
    status_label: QLabel

    def current_fact(self) -> Fact | None:
        """The current fact, if any."""
        raise NotImplementedError

    def selected_facts(self) -> list[Fact]:
        """The selected facts, in table order."""
        raise NotImplementedError

    def select_fact(self, fact_id: str) -> bool:
        """Make *fact_id* current and selected."""
        raise NotImplementedError

    def refresh(self) -> list[str]:
        """Update the rows from the log; the ids that changed."""
        raise NotImplementedError

    def show_message(self, text: str) -> None:
        """Show *text* under the table."""
        raise NotImplementedError
