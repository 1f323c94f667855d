"""Where memlens's resource files (app icon, desktop entry) are, however it was installed.

The files live in the top-level ``resources/`` folder of the source tree. They are found

- in a source checkout or an editable install: ``resources/`` beside the ``app`` package;
- in an installed wheel: the same, since the wheel ships ``resources/`` as package data
  beside ``app/`` in site-packages;
- in a frozen PyInstaller build: ``resources/`` inside the bundle (``sys._MEIPASS``), where
  ``packaging/memlens.spec`` puts them.

Looking a file up never imports Qt; only :func:`app_icon` does.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtGui import QIcon

FOLDER = "resources"
MARKER = "memlens.svg"  # a folder holding this file is memlens's resources folder
ICON_SIZES = (16, 32, 48, 64, 128, 256)
DESKTOP_FILE = "memlens.desktop"


def icon_file(size: int) -> str:
    """The file name of the PNG app icon of one size (see :data:`ICON_SIZES`)."""
    return f"memlens-{size}.png"


def is_frozen() -> bool:
    """True when running from a PyInstaller build."""
    return bool(getattr(sys, "frozen", False)) and hasattr(sys, "_MEIPASS")


def candidate_dirs() -> list[Path]:
    """The folders searched for the resources, in order."""
    found = []
    if is_frozen():
        found.append(Path(getattr(sys, "_MEIPASS")) / FOLDER)  # noqa: B009 - set by PyInstaller
    found.append(Path(__file__).resolve().parent.parent / FOLDER)
    return found


def resources_dir() -> Path:
    """The resources folder of this installation.

    Raises
    ------
    FileNotFoundError
        When no candidate folder holds the resources (a broken installation); the message
        names every place searched.
    """
    places = candidate_dirs()
    for place in places:
        if (place / MARKER).is_file():
            return place
    searched = ", ".join(str(p) for p in places)
    raise FileNotFoundError(f"memlens resources not found (searched {searched})")


def app_icon() -> QIcon:
    """The application icon with every PNG size; an empty icon if the files are missing.

    A missing icon never stops the app from starting; the packaging tests catch it instead.
    """
    from PySide6.QtGui import QIcon

    icon = QIcon()
    try:
        folder = resources_dir()
    except FileNotFoundError:
        return icon
    for size in ICON_SIZES:
        path = folder / icon_file(size)
        if path.is_file():
            icon.addFile(str(path))
    return icon
