"""Export what the user sees, for a bug report (File > Export).

- the view that has the keyboard focus (else the current tab's) as PNG or SVG;
- the timeline, and the Compaction tab's plan (with its summary, if run), each as one
  self-contained HTML page (:mod:`core.export.report`);
- the trim view's message list as JSON (:func:`save_export`).

Each asks where to save (:func:`ask_save_path`, which confirms before replacing a file;
:attr:`Exporter.ask_path` can be replaced, in tests for example), builds and writes
the file in a job (atomically, :func:`core.io.fsutil.atomic_write`), and says in the
status bar what was written.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QApplication, QDialog, QFileDialog, QMenu, QWidget

from app.context import AppHelper
from core.export.report import compaction_report, timeline_report
from core.io.fsutil import atomic_write
from widgets.common.export_image import grab_image, png_bytes, redact_svg_text, render_svg

if TYPE_CHECKING:
    from collections.abc import Callable

    from PySide6.QtGui import QAction, QImage

    from app.context import AppContext
    from core.transcript.model import Session
    from widgets.common.jobs import Job

    AskPath = Callable[[QWidget, str, str, str, str], str]

FORMATS = {
    "png": ("PNG image (*.png)", "png"),
    "svg": ("SVG image (*.svg)", "svg"),
    "html": ("HTML page (*.html *.htm)", "html"),
    "json": ("JSON (*.json)", "json"),
}


def ask_save_path(parent: QWidget, caption: str, path: str, filters: str, suffix: str) -> str:
    """Ask where to save (a modal dialog over *parent*); "" when the user cancels.

    The dialog adds *suffix* to a bare name and asks before replacing a file, the
    suffixed name included.
    """
    dialog = QFileDialog(parent, caption, path, filters)
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    dialog.setFileMode(QFileDialog.FileMode.AnyFile)
    dialog.setDefaultSuffix(suffix)
    if dialog.exec() != QDialog.DialogCode.Accepted:
        return ""
    files = dialog.selectedFiles()
    return files[0] if files else ""


def write_export(path: str, payload: bytes) -> str:
    """Write *payload* to *path* atomically; returns the status message."""
    atomic_write(path, payload, backup=False)
    return f"Exported {len(payload):,} bytes to {path}"


def save_export(
    parent: QWidget,
    payload: bytes,
    say: Callable[[str], object],
    name: str = "trimmed-context.json",
    ask: AskPath = ask_save_path,
) -> None:
    """Ask where to save *payload* (a dialog over *parent*), write it, and *say* so."""
    path = ask(parent, "Export trimmed messages", name, FORMATS["json"][0], "json")
    if not path:
        return
    try:
        message = write_export(path, payload)
    except OSError as exc:
        message = f"Could not export to {path}: {exc.strerror or exc}"
    say(message)


class MenuActions(Protocol):
    """The window's actions and menus by name (:class:`app.actions.Actions`)."""

    by_name: dict[str, QAction]
    menus: dict[str, QMenu]

    def add(self, name: str, text: str, keys: str | None, slot: object) -> QAction:
        """Create an action with a shortcut, registered on the window."""


class SessionSource(Protocol):
    """What knows the selected session (the window's inspector)."""

    @property
    def session(self) -> Session | None:
        """The session the views show."""


def install_export(window: Any) -> Exporter:
    """Give *window* its File > Export submenu; returns the :class:`Exporter`."""
    exporter = Exporter(window.context, window.inspector, window)
    exporter.install_menu(window.menu_actions)
    return exporter


def _slug(text: str) -> str:
    keep = "".join(c if c.isalnum() or c in "-_" else "-" for c in text.lower())
    return "-".join(part for part in keep.split("-") if part)[:40] or "view"


class Exporter(AppHelper):
    """The File > Export actions and the jobs that write what they export."""

    def __init__(self, context: AppContext, inspector: SessionSource, window: QWidget) -> None:
        super().__init__(context, window)
        self.main = window
        self.inspector = inspector
        self.ask_path: AskPath = ask_save_path
        """Asks where to save: ``(parent, caption, suggested path, filters, suffix)``."""
        self.folder = str(Path.home())
        """Where the next dialog opens: the folder of the last export."""
        self.menu: QMenu | None = None
        self._actions: MenuActions | None = None
        self._focused: QWidget | None = None
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._on_focus_changed)

    # -- the menu ---------------------------------------------------------------------
    def install_menu(self, actions: MenuActions) -> QMenu:
        """Add the Export submenu to File, after Reload."""
        menu = QMenu("&Export", self.main)
        menu.setObjectName("export-menu")
        entries = (
            ("export_view_png", "Export Current View as &PNG…", "Ctrl+Shift+E", self._on_png),
            ("export_view_svg", "Export Current View as &SVG…", None, self._on_svg),
            ("export_timeline_html", "Export &Timeline as HTML…", None, self._on_timeline_html),
            (
                "export_compaction_html",
                "Export &Compaction Report as HTML…",
                None,
                self._on_compaction_html,
            ),
        )
        for i, (name, text, keys, slot) in enumerate(entries):
            if i == 2:
                menu.addSeparator()
            menu.addAction(actions.add(name, text, keys, slot))
        file_menu = actions.menus["file"]
        items = file_menu.actions()
        reload_action = actions.by_name.get("reload")
        after = items.index(reload_action) + 1 if reload_action in items else len(items)
        if after < len(items):
            file_menu.insertMenu(items[after], menu)
        else:
            file_menu.addMenu(menu)
        menu.aboutToShow.connect(self.update_actions)
        menu.aboutToHide.connect(self._enable_all)  # shortcuts and other callers say why not
        self.menu = menu
        self._actions = actions
        self.update_actions()
        return menu

    @Slot()
    def update_actions(self) -> None:
        """Grey out the HTML exports that have nothing to export (while the menu shows)."""
        if self._actions is None:
            return
        actions = self._actions.by_name
        actions["export_timeline_html"].setEnabled(self._timeline_source() is not None)
        actions["export_compaction_html"].setEnabled(self.views.compaction_panel.plan() is not None)

    @Slot()
    def _enable_all(self) -> None:
        if self._actions is not None:
            for name in ("export_timeline_html", "export_compaction_html"):
                self._actions.by_name[name].setEnabled(True)

    # -- which view ---------------------------------------------------------------------
    def view_widgets(self) -> list[tuple[str, QWidget]]:
        """Every view that can be exported, by the name the menus give it."""
        v = self.views
        named: list[tuple[str, QWidget]] = [
            ("Timeline", v.timeline),
            ("Budget", v.gauge),
            ("Sessions", v.navigator),
            ("Problems", v.problem_view),
            ("Activity", v.activity_tabs),
        ]
        named += [
            (v.tabs.tabText(i).replace("&", ""), v.tab_views[i]) for i in range(v.tabs.count())
        ]
        return named

    def current_view(self) -> tuple[str, QWidget]:
        """The view with the keyboard focus (or the last one that had it), else the tab's."""
        views = self.view_widgets()
        for focus in (QApplication.focusWidget(), self._focused):
            for name, view in views:
                if focus is not None and (focus is view or view.isAncestorOf(focus)):
                    if view.isVisible():
                        return name, view
        tabs = self.views.tabs
        index = tabs.currentIndex()
        if index < 0:
            return views[0]
        return tabs.tabText(index).replace("&", ""), self.views.tab_views[index]

    @Slot(object, object)
    def _on_focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        if new is not None and self.main.isAncestorOf(new):
            self._focused = new

    # -- exports ------------------------------------------------------------------------
    def export_view(self, fmt: str, view: tuple[str, QWidget] | None = None) -> Job | None:
        """Ask where, then write the current view (or *view*) as ``png`` or ``svg``."""
        name, widget = view or self.current_view()
        path = self._ask(f"Export the {name} view as {fmt.upper()}", f"memlens-{_slug(name)}", fmt)
        if not path:
            return None
        size = f"{widget.width()} x {widget.height()}"
        if fmt == "svg":
            svg = render_svg(widget, f"memlens: {name}")  # on the GUI thread; redacted in the job
            return self._write(
                f"the {name} view ({size} SVG)",
                path,
                lambda: redact_svg_text(svg.decode("utf-8")).encode("utf-8"),
            )
        image = grab_image(widget)  # on the GUI thread; encoded in the job
        return self._write(f"the {name} view ({size} PNG)", path, lambda: png_bytes(image))

    def export_timeline_html(self) -> Job | None:
        """Ask where, then write the timeline of the selected session as an HTML page."""
        source = self._timeline_source()
        if source is None:
            self.status.say("No timeline to export: select a session and wait for its timeline")
            return None
        session, timeline = source
        path = self._ask(
            "Export the timeline as HTML", f"memlens-timeline-{session.id[:8]}", "html"
        )
        if not path:
            return None
        shot: QImage | None = None
        if self.views.timeline.isVisible():
            shot = grab_image(self.views.timeline)
        now = datetime.now(UTC)

        def page() -> bytes:
            png = png_bytes(shot) if shot is not None else None
            html = timeline_report(session, timeline, generated=now, screenshot_png=png)
            return html.encode("utf-8")

        return self._write(f"the timeline of {session.id}", path, page)

    def export_compaction_html(self) -> Job | None:
        """Ask where, then write the Compaction tab's plan (and summary) as an HTML page."""
        panel = self.views.compaction_panel
        plan, target = panel.plan(), panel.target()
        if plan is None or target is None:
            self.status.say("No compaction plan to export: select a session and wait for its plan")
            return None
        session = target.session.snapshot()
        name = f"memlens-compaction-{session.id[:8]}"
        path = self._ask("Export the compaction report as HTML", name, "html")
        if not path:
            return None
        run = panel.result()
        source = self._timeline_source()
        timeline = source[1] if source is not None else None
        now = datetime.now(UTC)

        def page() -> bytes:
            html = compaction_report(plan, session, generated=now, run=run, timeline=timeline)
            return html.encode("utf-8")

        return self._write(f"the compaction report of {session.id}", path, page)

    @Slot()
    def _on_png(self) -> None:
        self.export_view("png")

    @Slot()
    def _on_svg(self) -> None:
        self.export_view("svg")

    @Slot()
    def _on_timeline_html(self) -> None:
        self.export_timeline_html()

    @Slot()
    def _on_compaction_html(self) -> None:
        self.export_compaction_html()

    # -- helpers ------------------------------------------------------------------------
    def _timeline_source(self) -> tuple[Any, Any] | None:
        """The selected session (a snapshot) and the timeline shown for it."""
        session = self.inspector.session
        timeline = self.views.timeline.timeline()
        if session is None or timeline is None or timeline.session_id != session.id:
            return None
        return session.snapshot(), timeline

    def _ask(self, caption: str, stem: str, fmt: str) -> str:
        filters, suffix = FORMATS[fmt]
        suggested = os.path.join(self.folder, f"{stem}.{suffix}")
        path = self.ask_path(self.main, caption, suggested, filters, suffix)
        if path:
            self.folder = os.path.dirname(os.path.abspath(path))
        return path

    def _write(self, what: str, path: str, payload: Callable[[], bytes]) -> Job:
        def job(**_: object) -> str:
            data = payload()
            try:
                atomic_write(path, data, backup=False)
            except OSError as exc:  # the message names the export, not the temp file
                raise OSError(exc.strerror or str(exc)) from exc
            return f"Exported {what} to {path} ({len(data):,} bytes)"

        return self.runner.submit(
            f"exporting {what}",
            job,
            done=self.status.say,
            failed=lambda message: self.status.say(f"Could not export to {path}: {message}"),
        )
