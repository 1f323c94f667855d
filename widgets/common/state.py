"""The app state views observe: the open data, the selected session and entry, live status.

Views and app helpers take an :class:`AppState` and connect to its signals; none of them
reaches into the main window. Each setter emits only when the value changes, so a view
may set what it also observes without loops.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

if TYPE_CHECKING:
    from core.dataset.load import DataSet


@dataclass(frozen=True)
class LiveStatus:
    """What live mode is doing: off, following *path*, or stopped by *error*."""

    following: bool = False
    path: str = ""
    last_change: float = 0.0
    """Epoch seconds of the last change live mode applied (0: none yet)."""
    error: str = ""


class AppState(QObject):
    """The open data set, the selection and live status, with a signal for each."""

    data_changed = Signal(object)  # DataSet | None
    session_changed = Signal(object)  # session path | None
    entry_changed = Signal(object)  # entry id | None
    live_changed = Signal(object)  # LiveStatus

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._data: DataSet | None = None
        self._session: str | None = None
        self._entry: str | None = None
        self._live = LiveStatus()

    @property
    def data(self) -> DataSet | None:
        """The open data set (None before anything is open)."""
        return self._data

    @property
    def session(self) -> str | None:
        """The path (or ``<db>#<id>`` reference) of the selected session."""
        return self._session

    @property
    def entry(self) -> str | None:
        """The id of the selected entry of the selected session."""
        return self._entry

    @property
    def live(self) -> LiveStatus:
        """What live mode is doing."""
        return self._live

    def set_data(self, data: DataSet | None) -> None:
        """Open *data* (None: close); clears the selection."""
        if data is self._data:
            return
        self._data = data
        self._session = None
        self._entry = None
        self.data_changed.emit(data)

    def select_session(self, session: str | None) -> None:
        """Select a session (clears the entry)."""
        if session == self._session:
            return
        self._session = session
        self._entry = None
        self.session_changed.emit(session)

    def select_entry(self, entry: str | None) -> None:
        """Select an entry of the selected session."""
        if entry == self._entry:
            return
        self._entry = entry
        self.entry_changed.emit(entry)

    def set_live(self, status: LiveStatus) -> None:
        """Report what live mode is doing."""
        if status == self._live:
            return
        self._live = status
        self.live_changed.emit(status)
