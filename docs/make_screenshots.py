"""Regenerate docs/screenshots/*.png from the demo data (offscreen Qt).

python docs/make_screenshots.py
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QEventLoop, QSettings, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.demo_data import demo_dir  # noqa: E402
from app.main_window import MainWindow  # noqa: E402
from app.theme import apply_theme  # noqa: E402

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


def _settle(app: QApplication, ms: int = 400) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()
    app.processEvents()


def _busiest(window: MainWindow) -> str:
    """The demo session with the most compactions (then messages): the richest timeline."""
    assert window.data is not None
    best = max(window.data.summaries, key=lambda s: (s.compactions, s.messages))
    return best.id


def main() -> int:
    """Render every view and save it under docs/screenshots."""
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    # Never read or change the user's own settings while rendering.
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tempfile.mkdtemp())
    apply_theme(app, "light")
    OUT.mkdir(parents=True, exist_ok=True)
    window = MainWindow()
    window.resize(1700, 1100)
    window.show()
    window.open_path(str(demo_dir()))
    _wait_for(lambda: window.data is not None and window.recall_data is not None)
    window.navigator.select_session(_busiest(window))
    _settle(app, 800)
    shots = [("main-window.png", "message"), ("context.png", "context"),
             ("recall.png", "recall"), ("trim.png", "trim")]  # fmt: skip
    for name, view in shots:
        window.show_view(view)
        if view == "trim":  # a small window so the simulation has something to trim
            params = window.trim_view.parameters()
            window.trim_view.set_parameters(replace(params, window=48_000))
            window.trim_view.run()
            _settle(app, 1500)
        _settle(app)
        window.grab().save(str(OUT / name))
        print(OUT / name)
    apply_theme(app, "dark")
    window.inspector.refresh()
    window.show_view("message")
    _settle(app, 600)
    window.grab().save(str(OUT / "main-window-dark.png"))
    print(OUT / "main-window-dark.png")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
