"""A widget as a picture: PNG (what the screen shows) or SVG (vector, text kept as text).

Rendering a widget runs on the GUI thread (:func:`grab_image`, :func:`render_svg`);
encoding an image (:func:`png_bytes`) works on a :class:`QImage`, so it can run in a job.
The SVG's text is redacted (:func:`core.safety.redact.redact`): a message on screen may
hold a key. A PNG is pixels and keeps what the screen shows.
"""

from __future__ import annotations

import re
from html import escape, unescape
from typing import TYPE_CHECKING

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint, QRect
from PySide6.QtGui import QImageWriter, QPainter
from PySide6.QtSvg import QSvgGenerator

from core.safety.redact import redact

if TYPE_CHECKING:
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QWidget

_TEXT = re.compile(rb">([^<]+)<")


def grab_image(widget: QWidget) -> QImage:
    """*widget* as the screen shows it (children included), at the screen's pixel ratio."""
    return widget.grab().toImage()


def png_bytes(image: QImage) -> bytes:
    """*image* encoded as PNG (safe off the GUI thread: a QImage, not a QPixmap)."""
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QImageWriter(buffer, QByteArray(b"png"))
    if not writer.write(image):
        raise ValueError(f"the image could not be encoded as PNG: {writer.errorString()}")
    buffer.close()
    return bytes(data.data())


def _redact_text(match: re.Match[bytes]) -> bytes:
    raw = match.group(1).decode("utf-8", "replace")
    clean = redact(unescape(raw))
    if clean == unescape(raw):
        return match.group(0)
    return b">" + escape(clean, quote=False).encode("utf-8") + b"<"


def render_svg(widget: QWidget, title: str) -> bytes:
    """*widget* drawn into an SVG document of its size, its text redacted.

    Attributes (embedded images among them) are left alone; only text between tags
    is redacted.
    """
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    generator = QSvgGenerator()
    generator.setOutputDevice(buffer)
    size = widget.size()
    generator.setSize(size)
    generator.setViewBox(QRect(0, 0, size.width(), size.height()))
    generator.setTitle(title)
    generator.setDescription("exported by memlens")
    painter = QPainter(generator)
    try:
        widget.render(painter, QPoint(0, 0))
    finally:
        painter.end()
    buffer.close()
    return _TEXT.sub(_redact_text, bytes(data.data()))
