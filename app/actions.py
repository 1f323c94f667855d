"""The window's menus, actions and keyboard shortcuts.

:class:`Actions` is handed the window (for its menu bar and shortcuts), the
:class:`Shell` commands it triggers (open, cancel), the views and the helpers; it
never imports the window's class.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, QUrl, Slot
from PySide6.QtGui import QAction, QActionGroup, QDesktopServices, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog, QMenu, QMessageBox, QWidget

from app.about import show_about
from app.logs import log_file
from app.theme import apply_theme
from core.context.terms import THRESHOLD_TERMS

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

    from app.inspector import Inspector
    from app.manager import Manager
    from app.settings import AppSettings
    from app.settings_dialog import SettingsDialog
    from app.status import StatusBar
    from app.views import Views
    from widgets.common.state import AppState

README = Path(__file__).resolve().parent.parent / "README.md"
"""The README of a checkout (an installed memlens has none)."""
VIEWS = (
    ("sessions", "&Sessions", "Ctrl+1"),
    ("timeline", "&Timeline", "Ctrl+2"),
    ("budget", "&Budget", "Ctrl+3"),
    ("message", "&Message", "Ctrl+4"),
    ("context", "&Context", "Ctrl+5"),
    ("recall", "&Recall", "Ctrl+6"),
    ("recall lab", "Recall &Lab", "Ctrl+Shift+B"),
    ("trim", "T&rim", "Ctrl+7"),
    ("problems", "&Problems", "Ctrl+8"),
    ("facts", "&Facts", "Ctrl+9"),
    ("review", "Re&view Queue", "Ctrl+0"),
    ("compaction", "C&ompaction", "Ctrl+Shift+K"),
    ("what-if", "What-&if", "Ctrl+Shift+I"),
    ("openclaw", "Open&Claw Store", "Ctrl+Shift+L"),
    ("activity", "&Activity Log", "Ctrl+Shift+Y"),
)


class Shell(Protocol):
    """The window's commands the menus trigger."""

    @property
    def place(self) -> str:
        """The place open (or opening) now."""

    def open_path(self, path: str) -> None:
        """Open a data directory or transcript."""

    def open_demo(self) -> None:
        """Open the built-in demo data."""

    def escape(self) -> None:
        """Stop what is running (Esc)."""


class Actions(QObject):
    """Every action of the main window, by name, so tests and menus share them."""

    def __init__(
        self,
        window: QMainWindow,
        shell: Shell,
        views: Views,
        *,
        state: AppState,
        settings: AppSettings,
        inspector: Inspector,
        manager: Manager,
        status: StatusBar,
        live_action: QAction,
    ) -> None:
        super().__init__(window)
        self.main = window
        self.shell = shell
        self.views = views
        self.app_state = state
        self.settings = settings
        self.inspector = inspector
        self.manager = manager
        self.status = status
        self.live_action = live_action
        self.settings_dialog: SettingsDialog | None = None
        self.by_name: dict[str, QAction] = {}
        self.menus: dict[str, QMenu] = {}
        """The menu bar's menus by plain name ("file", "edit", "view", "help")."""
        self.recent_menu = QMenu("Open &Recent", window)
        self._file_menu()
        self._edit_menu()
        self._view_menu()
        self._help_menu()
        self.refresh_recent()

    def add(
        self,
        name: str,
        text: str,
        keys: QKeySequence | QKeySequence.StandardKey | str | None,
        slot: object,
    ) -> QAction:
        """Create an action, give it a shortcut, register it on the window."""
        action = QAction(text, self.main)
        if keys is not None:
            action.setShortcut(QKeySequence(keys))
        action.triggered.connect(slot)
        self.main.addAction(action)
        self.by_name[name] = action
        return action

    def _file_menu(self) -> None:
        menu = self.main.menuBar().addMenu("&File")
        self.menus["file"] = menu
        menu.addAction(
            self.add(
                "open_folder", "Open &Folder…", QKeySequence.StandardKey.Open, self._choose_folder
            )
        )
        menu.addAction(
            self.add("open_file", "Open &Transcript…", "Ctrl+Shift+O", self._choose_file)
        )
        menu.addAction(self.add("open_demo", "Open &Demo Data", "Ctrl+Shift+D", self._open_demo))
        menu.addMenu(self.recent_menu)
        menu.addAction(
            self.add("reload", "Re&load", QKeySequence.StandardKey.Refresh, self._reload)
        )
        menu.addSeparator()
        menu.addAction(self.add("cancel", "&Cancel", "Esc", self.shell.escape))
        menu.addSeparator()
        menu.addAction(self.add("settings", "&Settings…", "Ctrl+,", self._settings))
        menu.addSeparator()
        menu.addAction(self.add("quit", "&Quit", QKeySequence.StandardKey.Quit, self.main.close))
        self.add("find", "Find", QKeySequence.StandardKey.Find, self._find)

    def _edit_menu(self) -> None:
        menu = self.main.menuBar().addMenu("&Edit")
        self.menus["edit"] = menu
        stack = self.views.facts_view.undo_stack
        undo = stack.createUndoAction(self.main, "&Undo")
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        redo = stack.createRedoAction(self.main, "&Redo")
        redo.setShortcut(QKeySequence("Ctrl+Shift+Z"))
        for name, action in (("undo", undo), ("redo", redo)):
            self.main.addAction(action)
            self.by_name[name] = action
            menu.addAction(action)
        menu.addSeparator()
        menu.addAction(self.by_name["find"])

    def _view_menu(self) -> None:
        menu = self.main.menuBar().addMenu("&View")
        self.menus["view"] = menu
        for name, text, keys in VIEWS:
            menu.addAction(
                self.add(
                    f"view_{name}", text, keys, lambda _=False, n=name: self.views.show_view(n)
                )
            )
        menu.addSeparator()
        menu.addAction(
            self.add(
                "why_not",
                "&Why Not Recalled? (selected message)",
                "Ctrl+Shift+W",
                self._why_not,
            )
        )
        live = self.live_action
        self.main.addAction(live)
        self.by_name["live"] = live
        menu.addAction(live)
        menu.addSeparator()
        menu.addAction(self.views.nav_dock.toggleViewAction())
        menu.addAction(self.views.problem_dock.toggleViewAction())
        menu.addAction(self.views.activity_dock.toggleViewAction())
        menu.addAction(self.add("reset_layout", "Reset &Layout", None, self.views.reset_layout))
        theme = menu.addMenu("T&heme")
        group = QActionGroup(self)
        for value in ("system", "light", "dark"):
            action = QAction(value.title(), self.main)
            action.setCheckable(True)
            action.setChecked(self.settings.theme == value)
            action.triggered.connect(lambda _=False, v=value: self.set_theme(v))
            group.addAction(action)
            theme.addAction(action)
            self.by_name[f"theme_{value}"] = action

    def _help_menu(self) -> None:
        menu = self.main.menuBar().addMenu("&Help")
        self.menus["help"] = menu
        menu.addAction(self.add("shortcuts", "&Keyboard Shortcuts", "F1", self._show_shortcuts))
        menu.addAction(
            self.add(
                "thresholds",
                "Context &Thresholds",
                None,
                lambda: self.open_help("context-thresholds"),
            )
        )
        self.views.gauge.help_requested.connect(self.open_help)
        menu.addAction(self.add("open_log", "Open &Log", None, self._open_log))
        menu.addAction(self.add("about", "&About memlens", None, lambda: show_about(self.main)))

    def refresh_recent(self) -> None:
        """Rebuild the recent-places menu from the settings."""
        self.recent_menu.clear()
        places = self.settings.recent
        for i, place in enumerate(places):
            label = f"&{i + 1} {place}" if i < 9 else place
            action = self.recent_menu.addAction(label)
            action.setData(place)
            action.triggered.connect(lambda _=False, p=place: self.open_recent(p))
        if places:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear List", self._clear_recent)
        self.recent_menu.setEnabled(bool(places))
        self.views.first_run.set_recent(places)

    def open_recent(self, place: str) -> None:
        """Open a recent place; one that has gone is dropped from the list, with a message."""
        if not os.path.exists(place):
            self.settings.remove_recent(place)
            self.refresh_recent()
            message = f"{place} no longer exists; removed from recent places"
            self.status.say(message)
            self.views.first_run.set_message(message, error=True)
            return
        self.shell.open_path(place)

    def set_theme(self, theme: str) -> None:
        """Switch to ``system``, ``light`` or ``dark`` and remember it."""
        self.settings.theme = theme
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app, theme)
        self.inspector.refresh()

    @Slot()
    def _settings(self) -> None:
        from app.settings_dialog import SettingsDialog

        data = self.app_state.data
        dialog = SettingsDialog(self.settings, data.config if data else None, parent=self.main)
        dialog.saved.connect(lambda _config: self.manager.apply_settings())
        dialog.open()
        self.settings_dialog = dialog

    @Slot()
    def _why_not(self) -> None:
        result = self.inspector.explain_current_message()
        if result != "explained":
            self.status.say(result)

    @Slot()
    def _clear_recent(self) -> None:
        self.settings.clear_recent()
        self.refresh_recent()

    @Slot()
    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self.main, "Open data directory")
        if folder:
            self.shell.open_path(folder)

    @Slot()
    def _choose_file(self) -> None:
        name, _ = QFileDialog.getOpenFileName(
            self.main, "Open transcript", "", "Transcripts (*.jsonl);;All files (*)"
        )
        if name:
            self.shell.open_path(name)

    @Slot()
    def _open_demo(self) -> None:
        self.shell.open_demo()

    @Slot()
    def _reload(self) -> None:
        if self.shell.place:
            self.shell.open_path(self.shell.place)

    @Slot()
    def _find(self) -> None:
        """Find in the view that has focus; the session filter otherwise."""
        focus = QApplication.focusWidget()
        recall = self.views.recall_view
        if focus is not None and self.views.facts_view.isAncestorOf(focus):
            self.views.facts_view.focus_filter()
            return
        if focus is not None and recall.isAncestorOf(focus):
            recall.query_box.setFocus()
            recall.query_box.selectAll()
            return
        self.views.show_view("sessions")
        self.views.navigator.filter_box.setFocus()
        self.views.navigator.filter_box.selectAll()

    def shortcut_table(self) -> list[tuple[str, str, str]]:
        """(where, action, keys) for every shortcut: the window's, then each view's.

        A view's shortcuts work while the keyboard is in that view.
        """
        rows = [("Window", _label(a), _keys(a)) for a in self.by_name.values() if _keys(a)]
        seen = set(self.by_name.values())
        w = self.views
        views: list[tuple[str, QWidget]] = [
            ("Sessions", w.navigator),
            ("Timeline", w.timeline),
            ("Budget", w.gauge),
            ("Problems", w.problem_view),
            ("Activity", w.activity_view),
            ("Activity > Backups", w.backups_view),
        ]
        views += [(w.tabs.tabText(i), w.tab_views[i]) for i in range(w.tabs.count())]
        for where, view in views:
            for action in [*view.actions(), *view.findChildren(QAction)]:
                if action in seen or not _keys(action):
                    continue
                seen.add(action)
                rows.append((where, _label(action), _keys(action)))
        return rows

    @Slot()
    def _open_log(self) -> None:
        """Help > Open Log: the app's log file in the system's viewer."""
        path = log_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)  # nothing logged yet: an empty file, not an error
        if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
            self.status.say(f"Could not open the log {path}")

    @Slot(str)
    def open_help(self, anchor: str) -> None:
        """A section of the README (``context-thresholds``) in the system's viewer.

        An installed memlens has no README beside it: the section's gist, from
        :mod:`core.context.terms`, in a message box instead.
        """
        readme = README
        if readme.is_file():
            url = QUrl.fromLocalFile(str(readme))
            url.setFragment(anchor)
            if QDesktopServices.openUrl(url):
                self.status.say(f"Opened {readme}#{anchor}")
                return
        rows = "".join(
            f"<p><b>{html.escape(t.name)}</b> ({html.escape(t.whose)}): "
            f"{html.escape(t.rule)}; {html.escape(t.crossed)}.</p>"
            for t in THRESHOLD_TERMS.values()
        )
        QMessageBox.information(self.main, "Context thresholds", rows)

    @Slot()
    def _show_shortcuts(self) -> None:
        rows = []
        last = ""
        for where, action, keys in self.shortcut_table():
            if where != last:
                rows.append(f"<tr><td colspan=2><br><b>{html.escape(where)}</b></td></tr>")
                last = where
            rows.append(
                f"<tr><td>{html.escape(action)}</td>"
                f"<td>&nbsp;&nbsp;<b>{html.escape(keys)}</b></td></tr>"
            )
        box = QMessageBox(self.main)
        box.setWindowTitle("Keyboard shortcuts")
        box.setText(f"<table>{''.join(rows)}</table>")
        box.open()


def _label(action: QAction) -> str:
    return action.text().replace("&", "").rstrip("…")


def _keys(action: QAction) -> str:
    return ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts())
