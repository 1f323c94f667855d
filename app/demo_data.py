"""The built-in demo data: generated into the user cache folder on first use."""

from __future__ import annotations

from pathlib import Path

import platformdirs

from core.demo import write_demo

DEMO_VERSION = "1"


def demo_dir() -> Path:
    """Where the demo data lives (generated if missing or out of date)."""
    root = Path(platformdirs.user_cache_dir("memlens")) / f"demo-v{DEMO_VERSION}"
    marker = root / ".complete"
    if not marker.exists():
        write_demo(root, force=True)
        marker.write_text(DEMO_VERSION)
    return root
