"""Regenerate docs/screenshots/*.png from the demo data (offscreen Qt).

python docs/make_screenshots.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QEventLoop, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.demo_data import demo_dir  # noqa: E402
from app.main_window import MainWindow  # noqa: E402

OUT = ROOT / "docs" / "screenshots"


def _wait_for(predicate, timeout_ms: int = 30000) -> None:
    loop = QEventLoop()
    timer = QTimer(interval=20)
    waited = 0

    def tick() -> None:
        nonlocal waited
        waited += 20
        if predicate() or waited > timeout_ms:
            loop.quit()

    timer.timeout.connect(tick)
    timer.start()
    loop.exec()
    timer.stop()


def main() -> int:
    """Render every view and save it under docs/screenshots."""
    app = QApplication.instance() or QApplication(sys.argv[:1])
    OUT.mkdir(parents=True, exist_ok=True)
    window = MainWindow()
    window.resize(1280, 800)
    window.show()
    window.open_path(str(demo_dir()))
    _wait_for(lambda: window.data is not None)
    app.processEvents()
    window.grab().save(str(OUT / "main-window.png"))
    print(OUT / "main-window.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
