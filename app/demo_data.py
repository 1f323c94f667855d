"""The built-in demo data: generated into the user cache folder on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.paths import cache_dir
from core.dataset.load import load_dataset
from core.demo.build import write_demo
from core.safety.activity_owner import own_writes

if TYPE_CHECKING:
    from pathlib import Path

    from core.dataset.load import DataSet

DEMO_VERSION = "1"


def demo_path() -> Path:
    """Where the demo data lives (whether or not it has been generated yet)."""
    return cache_dir() / f"demo-v{DEMO_VERSION}"


def demo_dir() -> Path:
    """Where the demo data lives (generated if missing or out of date).

    Generating it writes memlens's own files, not an agent's: the activity log
    lists those writes apart (:func:`core.safety.activity_owner.own_writes`).
    """
    root = demo_path()
    marker = root / ".complete"
    if not marker.exists():
        with own_writes("demo data"):
            write_demo(root, force=True)
        marker.write_text(DEMO_VERSION)
    return root


def load_demo(path: str, *, progress: Any, cancelled: Any) -> DataSet:
    """A loader for :meth:`MainWindow.open_path`: generate the demo if needed, then load it.

    Generating takes a few seconds the first time; in a job the window stays alive.
    """
    if not (demo_path() / ".complete").exists():
        progress(0, 1, "writing the demo data")
    demo_dir()
    return load_dataset(path, progress=progress, cancelled=cancelled)
