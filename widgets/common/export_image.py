"""A widget as a picture: PNG (what the screen shows) or SVG (vector, text kept as text).

Rendering a widget runs on the GUI thread (:func:`grab_image`, :func:`render_svg`);
encoding an image (:func:`png_bytes`, a :class:`QImage`) and redacting an SVG's text
(:func:`redact_svg_text`: a message on screen may hold a key) work on data, so they run
in a job. A PNG is pixels and keeps what the screen shows.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from html import escape, unescape
from typing import TYPE_CHECKING

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint, QRect
from PySide6.QtGui import QImageWriter, QPainter
from PySide6.QtSvg import QSvgGenerator

from core.safety.redact import redact

if TYPE_CHECKING:
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QWidget

_TEXT = re.compile(r"(<text\b[^>]*>)([^<]*)(</text>)")
_NEAR = 12
"""Equal runs shorter than this inside a replaced span are chance matches: masked too."""


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


def _masked(texts: list[str], sep: str) -> list[set[int]]:
    """Per text, the positions :func:`redact` replaces in the texts joined by *sep*."""
    joined = sep.join(texts)
    clean = redact(joined)
    masked: list[set[int]] = [set() for _ in texts]
    if clean == joined:
        return masked
    spans: list[list[int]] = []
    opcodes = SequenceMatcher(None, joined, clean, autojunk=False).get_opcodes()
    for tag, i1, i2, _j1, _j2 in opcodes:
        if tag == "equal":
            continue
        if spans and i1 - spans[-1][1] < _NEAR:
            spans[-1][1] = max(spans[-1][1], i2)
        else:
            spans.append([i1, i2])
    starts = []
    offset = 0
    for text in texts:
        starts.append(offset)
        offset += len(text) + len(sep)
    for lo, hi in spans:
        for k, (start, text) in enumerate(zip(starts, texts, strict=True)):
            masked[k].update(range(max(lo, start) - start, min(hi, start + len(text)) - start))
    return masked


def redact_svg_text(svg: str) -> str:
    """*svg* with the secrets in its ``<text>`` redacted, across the runs a wrap splits.

    A key the widget wrapped over two lines is two text runs: the runs are joined
    (with and without a space between them), redacted, and every character a
    redaction covers is masked in the runs it came from. Attributes (embedded images
    among them) are left alone.
    """
    parts = _TEXT.findall(svg)
    texts = [unescape(text) for _open, text, _close in parts]
    hidden = [a | b for a, b in zip(_masked(texts, ""), _masked(texts, " "), strict=True)]
    if not any(hidden):
        return svg
    runs = iter(zip(texts, hidden, strict=True))

    def replace(match: re.Match[str]) -> str:
        text, mask = next(runs)
        if not mask:
            return match.group(0)
        out = []
        for i, ch in enumerate(text):
            if i not in mask:
                out.append(ch)
            elif i == 0 or i - 1 not in mask:
                out.append("[REDACTED]")
        return match.group(1) + escape("".join(out), quote=False) + match.group(3)

    return _TEXT.sub(replace, svg)


def render_svg(widget: QWidget, title: str) -> bytes:
    """*widget* drawn into an SVG document of its size (GUI thread).

    Its text is as the screen shows it: :func:`redact_svg_text` it before writing
    (in a job: on a large view it takes a while).
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
    return bytes(data.data())
