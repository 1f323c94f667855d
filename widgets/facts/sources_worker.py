"""Search a fact's likely sources off the GUI thread."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QRunnable, Signal
from typing_extensions import override

if TYPE_CHECKING:
    from collections.abc import Callable

    from core.knowledge.sources import SourceHit


class FactSourcesSignals(QObject):
    """Signals of :class:`FactSourcesWorker` (a runnable is not a QObject)."""

    finished = Signal(int, list)
    """serial, the hits."""
    failed = Signal(int, str)


class FactSourcesWorker(QRunnable):
    """Run ``sources(content)`` in a ``QThreadPool`` thread.

    The first search may build an index of every transcript message (hundreds
    of milliseconds); later ones take milliseconds. *serial* lets the view drop
    the answer for a fact no longer selected.
    """

    def __init__(
        self, serial: int, sources: Callable[[str], list[SourceHit]], content: str
    ) -> None:
        super().__init__()
        self.serial = serial
        self.signals = FactSourcesSignals()
        self._sources = sources
        self._content = content

    @override
    def run(self) -> None:
        try:
            hits = list(self._sources(self._content))
        except Exception as exc:  # a worker turns every failure into a signal
            self.signals.failed.emit(self.serial, str(exc) or type(exc).__name__)
        else:
            self.signals.finished.emit(self.serial, hits)
