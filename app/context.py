"""What every app helper works with, handed over once: :class:`AppContext` and :class:`AppHelper`.

The window builds one :class:`AppContext` (the app state, the views, the settings, the
status bar and the job runner) and gives it to each helper (inspector, manager, live
glue, pending and backups glue). A helper subclasses :class:`AppHelper` and takes the
other helpers it needs as explicit arguments; none of them sees the window.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

if TYPE_CHECKING:
    from app.settings import AppSettings
    from app.status import StatusBar
    from app.views import Views
    from widgets.common.jobs import JobRunner
    from widgets.common.state import AppState


@dataclass(frozen=True)
class AppContext:
    """The app state, the window's views, the settings, the status bar and the runner."""

    state: AppState
    views: Views
    settings: AppSettings
    status: StatusBar
    runner: JobRunner


class AppHelper(QObject):
    """A helper of the window: it reaches the app through its :class:`AppContext` only."""

    def __init__(self, context: AppContext, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.app_state = context.state
        self.views = context.views
        self.settings = context.settings
        self.status = context.status
        self.runner = context.runner
