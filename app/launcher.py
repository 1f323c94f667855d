"""The ``memlens`` entry point: a CLI command, or the desktop app.

``memlens info PATH`` (and every other command of :mod:`core.cli`) runs without
importing Qt; ``memlens``, ``memlens --demo`` and ``memlens PATH`` open the app.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from core import cli

if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch to the CLI or the GUI."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and (args[0] in cli.COMMANDS or args[0] in ("-h", "--help", "--version")):
        return cli.main(args)
    from app.main import run_gui

    return run_gui(args)


if __name__ == "__main__":
    sys.exit(main())
