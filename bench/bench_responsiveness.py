"""Benchmark: the GUI thread while the app opens the demo data and a 20,000-segment store.

A 10 ms ``QTimer`` ticks on the GUI thread for the whole time; the longest gap between two
ticks is the longest stall a user would feel (the tick interval included). Two phases, each
in a fresh main window, offscreen:

- ``demo``: ``open_path`` of the demo data (generated beforehand, not timed) until the
  first session's timeline has been painted (``open_to_painted_s``) and until memory
  recall is indexed (``open_to_ready_s``);
- ``store``: a memory-context folder with ``--segments`` segments (``segments.jsonl`` and
  ``vectors.bin``, hash embedding) until its recall index is ready.

Targets (2 cores): longest gap <= 100 ms in both phases; demo open to painted <= 3 s.
Prints one JSON object; never reads or changes the user's settings, cache or homes.

    python -m bench.bench_responsiveness [--segments 20000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

TICK_MS = 10
TIMEOUT_S = 300.0


def _isolate(tmp: Path) -> None:
    """Point every place memlens reads or writes into *tmp* (before Qt or app imports)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    for name, sub in (("MEMLENS_CACHE_DIR", "cache"), ("MEMLENS_DATA_DIR", "data")):
        os.environ[name] = str(tmp / sub)
    (tmp / "home").mkdir()
    os.environ["HOME"] = str(tmp / "home")  # the first-run scan looks here


class _Ticks:
    """Timestamps of a 10 ms timer on the GUI thread, and the paints of one widget."""

    def __init__(self) -> None:
        from PySide6.QtCore import QObject, QTimer

        self.stamps: list[float] = []
        self.timer = QTimer(interval=TICK_MS)
        self.timer.timeout.connect(lambda: self.stamps.append(time.perf_counter()))
        self.paints: list[float] = []

        class PaintSpy(QObject):
            def eventFilter(spy, watched: Any, event: Any) -> bool:
                from PySide6.QtCore import QEvent

                if event.type() == QEvent.Type.Paint:
                    self.paints.append(time.perf_counter())
                return False

        self.spy = PaintSpy()

    def start(self) -> float:
        self.stamps = [time.perf_counter()]
        self.timer.start()
        return self.stamps[0]

    def gaps_ms(self) -> list[float]:
        return [(b - a) * 1000 for a, b in zip(self.stamps, self.stamps[1:], strict=False)]


def _wait(app: Any, predicate: Any, what: str) -> None:
    """Run the event loop (as the app does) until *predicate* holds."""
    from PySide6.QtCore import QEventLoop, QTimer

    if predicate():
        return
    loop = QEventLoop()
    deadline = time.perf_counter() + TIMEOUT_S
    timed_out = False

    def check() -> None:
        nonlocal timed_out
        if predicate():
            loop.quit()
        elif time.perf_counter() > deadline:
            timed_out = True
            loop.quit()

    poll = QTimer(interval=2)
    poll.timeout.connect(check)
    poll.start()
    loop.exec()
    poll.stop()
    if timed_out:
        raise SystemExit(f"timed out waiting for {what}")


def _phase(app: Any, path: Path, *, timeline: bool) -> dict[str, Any]:
    from app.main_window import MainWindow

    window = MainWindow()
    window.resize(1600, 1000)
    window.show()
    ticks = _Ticks()
    viewport = window.timeline.graphics_view().viewport()
    viewport.installEventFilter(ticks.spy)
    set_at: list[float] = []  # when the first session's timeline reached the view
    set_timeline = window.timeline.set_timeline

    def stamped(*args: Any, **kwargs: Any) -> Any:
        done = set_timeline(*args, **kwargs)
        set_at.append(time.perf_counter())
        return done

    window.timeline.set_timeline = stamped  # type: ignore[method-assign]
    _wait(app, lambda: window.homes_scanned, "the first-run scan")
    t0 = ticks.start()
    window.open_path(str(path))
    _wait(app, lambda: window.data is not None, "the load")
    loaded = time.perf_counter()
    painted = None
    if timeline:
        _wait(app, lambda: set_at, "the timeline")
        _wait(app, lambda: bool(ticks.paints) and ticks.paints[-1] >= set_at[0], "a paint")
        painted = next(p for p in ticks.paints if p >= set_at[0])
    _wait(app, lambda: window.recall_data is not None, "recall")
    ready = time.perf_counter()
    ticks.stamps.append(ready)
    ticks.timer.stop()
    gaps = sorted(ticks.gaps_ms())
    data = window.data
    assert data is not None
    result: dict[str, Any] = {
        "sessions": len(data.summaries),
        "segments": len(data.segments.segments) if data.segments else 0,
        "open_to_loaded_s": round(loaded - t0, 3),
        "open_to_ready_s": round(ready - t0, 3),
        "ticks": len(gaps),
        "longest_gap_ms": round(gaps[-1], 1) if gaps else 0.0,
        "p99_gap_ms": round(gaps[int(len(gaps) * 0.99)], 1) if gaps else 0.0,
        "median_gap_ms": round(statistics.median(gaps), 1) if gaps else 0.0,
        "recall_ready": window.recall_data is not None,
    }
    if painted is not None:
        result["open_to_painted_s"] = round(painted - t0, 3)
    window.close()
    window.deleteLater()
    app.processEvents()
    return result


def run(segments: int) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="memlens-bench-resp-"))
    _isolate(tmp)
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp / "conf"))

    from app.demo_data import demo_dir
    from bench.corpus import write_store

    demo = demo_dir()  # generated here, not timed
    store = tmp / "store" / "memory" / "context"
    write_store(store, segments)
    return {
        "benchmark": "responsiveness",
        "tick_ms": TICK_MS,
        "cores": os.cpu_count(),
        "demo": _phase(app, demo, timeline=True),
        "store": _phase(app, store, timeline=False),
        "target_longest_gap_ms": 100,
        "target_demo_open_to_painted_s": 3.0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--segments", type=int, default=20_000)
    args = parser.parse_args(argv)
    result = run(max(args.segments, 1))
    sys.stdout.buffer.write(orjson.dumps(result) + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
