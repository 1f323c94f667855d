"""Save what a view exports (the trimmed message list) where the user chooses."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog

from core.io.fsutil import atomic_write

if TYPE_CHECKING:
    from app.main_window import MainWindow


def write_export(path: str, payload: bytes) -> str:
    """Write *payload* to *path* atomically; returns the status message."""
    atomic_write(path, payload, backup=False)
    return f"Exported {len(payload):,} bytes to {path}"


def save_export(window: MainWindow, payload: bytes, name: str = "trimmed-context.json") -> None:
    """Ask where to save *payload*, write it, and say so in the status bar."""
    path, _ = QFileDialog.getSaveFileName(window, "Export trimmed messages", name, "JSON (*.json)")
    if not path:
        return
    try:
        message = write_export(path, payload)
    except OSError as exc:
        message = f"Could not export to {path}: {exc.strerror or exc}"
    window.place_label.setText(message)
