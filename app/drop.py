"""What a drop on the window opens: a folder, a transcript, an agent database, a reference.

:func:`drop_action` reads the dragged data and says what to do with it, or why it is
refused; the window accepts the drag only when there is something to open.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.dataset.discovery import AGENT_DB, is_archive_name
from core.refs.reference import looks_like_reference

if TYPE_CHECKING:
    from PySide6.QtCore import QMimeData


@dataclass(frozen=True, slots=True)
class DropAction:
    """What to do with a drop: open a ``path``, go to a ``reference``, or ``refuse`` it."""

    kind: str
    value: str
    """The path, the reference text, or the message saying why it is refused."""


def openable(path: str) -> bool:
    """Whether memlens opens *path*: a folder, a ``.jsonl`` transcript, an agent database."""
    name = os.path.basename(path.rstrip("/\\"))
    transcript = name.endswith(".jsonl") or is_archive_name(name)  # or an archive beside it
    return os.path.isdir(path) or name == AGENT_DB or transcript


def drop_action(mime: QMimeData) -> DropAction | None:
    """What to do with *mime* (None: nothing memlens could use, e.g. no text nor file)."""
    urls = mime.urls()
    for url in urls:
        if url.scheme() == "memlens":
            return DropAction("reference", url.toString())
    if not urls and mime.hasText():
        text = mime.text().strip()
        if looks_like_reference(text):
            return DropAction("reference", text)
        return DropAction("refuse", "Drop a folder, a transcript or a memlens:// reference")
    if not urls:
        return None
    local = [u.toLocalFile() for u in urls if u.isLocalFile()]
    if not local:
        return DropAction("refuse", f"Only local files open in memlens: {urls[0].toString()}")
    path = local[0]
    if not os.path.exists(path):
        return DropAction("refuse", f"{path}: no such file or folder")
    if not openable(path):
        return DropAction(
            "refuse",
            f"Cannot open {path}: drop a data folder, a .jsonl transcript or an OpenClaw "
            f"agent database ({AGENT_DB})",
        )
    return DropAction("path", path)
