"""Save what a view exports (the trimmed message list) where the user chooses."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QFileDialog

from core.io.fsutil import atomic_write

if TYPE_CHECKING:
    from collections.abc import Callable

    from PySide6.QtWidgets import QWidget


def install_export(window: Any) -> None:
    """Give *window* its File > Export actions (being built: issue 17 item 14)."""
    del window


def write_export(path: str, payload: bytes) -> str:
    """Write *payload* to *path* atomically; returns the status message."""
    atomic_write(path, payload, backup=False)
    return f"Exported {len(payload):,} bytes to {path}"


def save_export(
    parent: QWidget,
    payload: bytes,
    say: Callable[[str], object],
    name: str = "trimmed-context.json",
) -> None:
    """Ask where to save *payload* (a dialog over *parent*), write it, and *say* so."""
    path, _ = QFileDialog.getSaveFileName(parent, "Export trimmed messages", name, "JSON (*.json)")
    if not path:
        return
    try:
        message = write_export(path, payload)
    except OSError as exc:
        message = f"Could not export to {path}: {exc.strerror or exc}"
    say(message)
