"""docs/make_screenshots.py renders every view (into a temporary folder here)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from PySide6.QtGui import QImage

from tests.conftest import ROOT

pytestmark = pytest.mark.slow

SHOTS = (
    "first-run", "main-window", "context", "recall", "trim", "facts", "activity",
    "compaction", "review-queue", "write-preview", "settings-providers", "main-window-dark",
    "settings-safety", "compaction-failed", "backups", "openclaw-session-row", "openclaw-memory",
    "openclaudecode-memory", "recall-lab", "loss-audit", "whatif", "provenance",
)  # fmt: skip


@pytest.fixture(scope="module")
def demo_cache(tmp_path_factory):
    """One demo for both passes (the script's own home and settings stay its own)."""
    return tmp_path_factory.mktemp("shots-cache")


def test_every_screenshot_is_rendered(tmp_path, demo_cache):
    env = dict(os.environ, MEMLENS_SCREENSHOTS_DIR=str(tmp_path), QT_QPA_PLATFORM="offscreen")
    env["MEMLENS_CACHE_DIR"] = str(demo_cache)
    subprocess.run(
        [sys.executable, "docs/make_screenshots.py"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        timeout=600,
    )
    for name in SHOTS:
        image = QImage(str(tmp_path / f"{name}.png"))
        assert not image.isNull(), name
        assert image.width() >= 800 and image.height() >= 500, name
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name in SHOTS:
        assert f"docs/screenshots/{name}.png" in readme, f"{name}.png is not shown in the README"
        assert (ROOT / "docs" / "screenshots" / f"{name}.png").is_file()


LAPTOP_SHOTS = ("message", "context", "recall", "trim", "facts", "review", "compaction", "openclaw")


def test_the_laptop_screenshots_are_rendered_on_a_1366x768_screen(tmp_path, demo_cache):
    env = dict(os.environ, MEMLENS_SCREENSHOTS_DIR=str(tmp_path), QT_QPA_PLATFORM="offscreen")
    env["MEMLENS_CACHE_DIR"] = str(demo_cache)
    subprocess.run(
        [sys.executable, "docs/make_screenshots.py", "--laptop"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        timeout=600,
    )
    for name in LAPTOP_SHOTS:
        for theme in ("", "-dark"):
            image = QImage(str(tmp_path / "laptop" / f"{name}{theme}.png"))
            assert not image.isNull(), name
            # the window fitted to the screen: all of it, no wider or taller
            assert 1300 <= image.width() <= 1366 and 600 <= image.height() <= 768, name
            assert (ROOT / "docs" / "screenshots" / "laptop" / f"{name}{theme}.png").is_file()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/screenshots/laptop/recall.png" in readme
