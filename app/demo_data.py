"""The built-in demo data: generated into the user cache folder on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.paths import cache_dir
from core.demo import write_demo

if TYPE_CHECKING:
    from pathlib import Path

DEMO_VERSION = "1"


def demo_dir() -> Path:
    """Where the demo data lives (generated if missing or out of date)."""
    root = cache_dir() / f"demo-v{DEMO_VERSION}"
    marker = root / ".complete"
    if not marker.exists():
        write_demo(root, force=True)
        marker.write_text(DEMO_VERSION)
    return root
