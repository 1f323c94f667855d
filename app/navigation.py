"""Navigation: search everywhere (Ctrl+K), Back/Forward, ``memlens://`` references.

Installed on the main window by :func:`install_navigation` (issue 17, item 13).
"""

from __future__ import annotations

from typing import Any


def install_navigation(window: Any) -> None:
    """Give *window* its navigation actions (being built: issue 17 item 13)."""
    del window
