"""The ``memlens`` entry point: a CLI command, or the desktop app.

``memlens info PATH`` (and every other command of :mod:`core.cli.main`) runs without
importing Qt; ``memlens``, ``memlens --demo`` and ``memlens PATH`` open the app, and
``memlens open REF`` checks a ``memlens://`` reference in core, then opens the app on it;
``memlens mcp DATA`` serves DATA over MCP on stdio (never the GUI).
``memlens --paths`` prints where this installation keeps and finds its files
(resources, settings, cache, activity log), for troubleshooting.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch to the CLI or the GUI."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--paths"]:
        return print_paths()
    if args[:1] == ["mcp"]:  # the MCP server starts without building the whole CLI
        from core.cli.mcp import run_mcp

        return run_mcp(args[1:])
    from core.cli.main import run_cli
    from core.cli.parser import COMMANDS

    if args and (args[0] in COMMANDS or args[0] in ("-h", "--help", "--version")):
        if args[0] == "open":
            from core.cli.open import set_gui_opener

            set_gui_opener(open_in_app)
        return run_cli(args)
    from app.main import run_gui

    return run_gui(args)


def open_in_app(reference: str) -> int:
    """``memlens open REF`` after the reference checked out: the app, showing it."""
    from app.main import run_gui

    return run_gui(["--open", reference])


def paths() -> dict[str, object]:
    """Where this installation finds its resources and keeps its own files (no Qt)."""
    import os

    from app.paths import cache_dir, data_dir
    from app.resources import DESKTOP_FILE, ICON_SIZES, candidate_dirs, icon_file, resources_dir
    from core import __version__

    try:
        found: str | None = str(resources_dir())
    except FileNotFoundError:
        found = None
    names = [DESKTOP_FILE, *(icon_file(size) for size in ICON_SIZES)]
    missing = [n for n in names if found is None or not os.path.isfile(os.path.join(found, n))]
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return {
        "version": __version__,
        "frozen": bool(getattr(sys, "frozen", False)),
        "executable": sys.executable,
        "resources": found,
        "resources_searched": [str(p) for p in candidate_dirs()],
        "resources_missing": missing,
        "settings": os.path.join(config, "memlens", "memlens.ini"),
        "cache": str(cache_dir()),
        "activity_log": str(data_dir() / "activity.jsonl"),
    }


def print_paths() -> int:
    """``memlens --paths``: the JSON of :func:`paths`; exit 1 if resources are missing."""
    import json

    found = paths()
    print(json.dumps(found, indent=2))
    return 1 if found["resources"] is None or found["resources_missing"] else 0


if __name__ == "__main__":
    sys.exit(main())
