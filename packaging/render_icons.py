"""Render resources/memlens.svg to the PNG app icons (16 to 256 px) with QtSvg, offscreen.

Usage::

    .venv/bin/python packaging/render_icons.py          # write resources/memlens-<size>.png
    .venv/bin/python packaging/render_icons.py --check  # exit 1 if a PNG is not the SVG's render
    .venv/bin/python packaging/render_icons.py --sheet /tmp/icons.png  # every size, light and dark

Run it after every change to the SVG and commit the PNGs with it.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

RESOURCES = Path(__file__).resolve().parent.parent / "resources"
SVG = RESOURCES / "memlens.svg"
SIZES = (16, 32, 48, 64, 128, 256)
TOLERANCE = 3.0  # mean absolute channel difference (0-255) a re-render may differ by


def png_path(size: int, folder: Path = RESOURCES) -> Path:
    """Where the PNG of one size lives."""
    return folder / f"memlens-{size}.png"


def render(size: int, svg: Path = SVG) -> QImage:
    """The SVG drawn into a transparent ``size`` x ``size`` image."""
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"{svg}: not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    return image


def difference(a: QImage, b: QImage) -> float:
    """Mean absolute difference of the RGBA channels (0-255); inf if the sizes differ."""
    if a.size() != b.size():
        return float("inf")
    a = a.convertToFormat(QImage.Format.Format_RGBA8888)
    b = b.convertToFormat(QImage.Format.Format_RGBA8888)
    da, db = bytes(a.constBits()), bytes(b.constBits())
    return sum(abs(x - y) for x, y in zip(da, db, strict=True)) / max(1, len(da))


def stale(folder: Path = RESOURCES, svg: Path = SVG) -> list[str]:
    """One line for every PNG that is missing or is not the render of the SVG."""
    problems = []
    for size in SIZES:
        path = png_path(size, folder)
        saved = QImage(str(path))
        if saved.isNull():
            problems.append(f"{path}: missing or unreadable")
            continue
        diff = difference(render(size, svg), saved)
        if diff > TOLERANCE:
            problems.append(f"{path}: differs from the SVG's render (mean difference {diff:.1f})")
    return problems


def sheet(path: Path) -> None:
    """Every size side by side on a light and a dark strip, to look at."""
    gap = 16
    width = sum(SIZES) + gap * (len(SIZES) + 1)
    height = 2 * (max(SIZES) + 2 * gap)
    image = QImage(width, height, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    for row, colour in enumerate(("#f3f3f3", "#2b2d30")):
        top = row * height // 2
        painter.fillRect(0, top, width, height // 2, QColor(colour))
        x = gap
        for size in SIZES:
            painter.drawImage(x, top + gap + max(SIZES) - size, render(size))
            x += size + gap
    painter.end()
    image.save(str(path))


def main(argv: list[str] | None = None) -> int:
    """Write, check or show the PNG renders."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare, write nothing")
    parser.add_argument("--sheet", type=Path, help="also write a contact sheet PNG here")
    args = parser.parse_args(argv)
    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    if args.check:
        problems = stale()
        for line in problems:
            print(line, file=sys.stderr)
        return 1 if problems else 0
    for size in SIZES:
        if not render(size).save(str(png_path(size))):
            raise SystemExit(f"cannot write {png_path(size)}")
        print(png_path(size))
    if args.sheet:
        sheet(args.sheet)
        print(args.sheet)
    return 0


if __name__ == "__main__":
    sys.exit(main())
