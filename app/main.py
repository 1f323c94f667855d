"""Start the desktop app: parse GUI arguments, build the window, run Qt."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from core import __version__
from core.refs.reference import looks_like_reference

if TYPE_CHECKING:
    from collections.abc import Sequence

    from app.main_window import MainWindow
    from app.settings import AppSettings


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """GUI arguments: ``[PATH | REF] [--demo] [--open REF]``."""
    parser = argparse.ArgumentParser(
        prog="memlens",
        description=(
            "Open the memlens inspector on PATH, else on the place opened last, "
            "else on the first-run page."
        ),
        epilog="Command-line tools: memlens --help lists them.",
    )
    parser.add_argument(
        "path", nargs="?", help="data directory or transcript to open (or a memlens:// reference)"
    )
    parser.add_argument(
        "--open",
        metavar="REF",
        dest="reference",
        help="a memlens:// reference: open its place and select its session, entry, fact "
        "or segment",
    )
    parser.add_argument("--demo", action="store_true", help="open the built-in demo data")
    parser.add_argument("--version", action="version", version=f"memlens {__version__}")
    args = parser.parse_args(list(argv))
    if args.reference is None and args.path and looks_like_reference(args.path):
        args.reference, args.path = args.path, None  # a desktop link hands the app its URL
    return args


def build_window(argv: Sequence[str], settings: AppSettings | None = None) -> MainWindow:
    """Create the main window and start loading what the arguments name.

    Without a path, the place opened last is opened again (if it still exists); with a
    reference, its place is opened and what it names selected.
    """
    import os

    from app.main_window import MainWindow

    args = parse_args(argv)
    window = MainWindow(settings)
    window.show()
    if args.reference:
        window.navigation.open_reference(args.reference)
    elif args.demo:
        window.open_demo()
    elif args.path:
        window.open_path(args.path)
    elif window.settings.last_place and os.path.exists(window.settings.last_place):
        window.open_path(window.settings.last_place)
    return window


def run_gui(argv: Sequence[str]) -> int:
    """Open the main window; returns Qt's exit status."""
    from PySide6.QtWidgets import QApplication

    from app.logs import setup_logging
    from app.resources import app_icon
    from app.settings import AppSettings
    from app.theme import apply_theme
    from widgets.common.jobs import default_runner

    setup_logging()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("memlens")
    app.setOrganizationName("memlens")
    app.setDesktopFileName("memlens")  # Wayland: the compositor finds memlens.desktop's icon
    app.setWindowIcon(app_icon())
    settings = AppSettings()
    apply_theme(app, settings.theme)
    app.styleHints().colorSchemeChanged.connect(
        lambda scheme: (
            apply_theme(app, settings.theme, scheme) if settings.theme == "system" else None
        )
    )
    app.aboutToQuit.connect(lambda: default_runner().shutdown(3000))
    window = build_window(argv, settings)  # noqa: F841 - kept alive while Qt runs
    return int(app.exec())
