"""The About dialog: what memlens is and the versions it runs with."""

from __future__ import annotations

import platform
from importlib import metadata

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import qVersion
from PySide6.QtWidgets import QMessageBox, QWidget

from core import __version__


def versions() -> dict[str, str]:
    """Versions of memlens and of what it runs on."""
    found = {"memlens": __version__, "Python": platform.python_version()}
    found["Qt"] = qVersion()
    found["PySide6"] = pyside_version
    for name in ("pyqtgraph", "numpy", "orjson", "httpx", "rank-bm25"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    found["Platform"] = f"{platform.system()} {platform.release()} ({platform.machine()})"
    return found


def about_text() -> str:
    """The dialog's rich text."""
    rows = "".join(f"<tr><td>{k}</td><td>&nbsp;{v}</td></tr>" for k, v in versions().items())
    return (
        f"<h3>memlens {__version__}</h3>"
        "<p>An inspector and manager for the memory of LLM coding agents "
        "(OpenClaw and the pi coding agent): timelines, budgets, recall, trim, facts.</p>"
        f"<table>{rows}</table>"
    )


def show_about(parent: QWidget) -> QMessageBox:
    """Open the About dialog (non-modal so tests and users can keep working)."""
    box = QMessageBox(parent)
    box.setWindowTitle("About memlens")
    box.setTextFormat(box.textFormat().RichText)
    box.setText(about_text())
    box.setStandardButtons(QMessageBox.StandardButton.Close)
    box.open()
    return box
