"""Worker helpers: throttled progress, workers kept alive until they end."""

from __future__ import annotations

from app import workers
from app.workers import TaskWorker, throttled


def test_progress_is_throttled_but_first_last_and_new_labels_pass(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(workers.time, "monotonic", lambda: now[0])
    seen = []
    progress = throttled(lambda *a: seen.append(a))
    for i in range(1000):  # a thousand reports within 10 ms
        now[0] += 0.00001
        progress(i, 1000, "segments")
    progress(3, 10, "vectors")  # a new stage always shows
    now[0] += 0.06
    progress(4, 10, "vectors")  # 60 ms later: shown
    progress(5, 10, "vectors")  # at once: dropped
    progress(10, 10, "vectors")  # done: always shown
    assert seen == [
        (0, 1000, "segments"),
        (3, 10, "vectors"),
        (4, 10, "vectors"),
        (10, 10, "vectors"),
    ]


def test_started_workers_stay_alive_until_they_report(qtbot):
    def task(*, progress, cancelled):  # type: ignore[no-untyped-def]
        return 42

    worker = TaskWorker(task)
    with qtbot.waitSignal(worker.signals.finished, timeout=5000) as got:
        workers.start(worker)
        del worker  # the caller forgets it; the keeper does not
    assert got.args == [42]
    qtbot.waitUntil(lambda: workers.running() == 0, timeout=5000)


def test_the_window_shares_the_gil_and_freezes_loads_while_open(qtbot, tmp_path):
    import gc
    import sys

    from app.main_window import MainWindow
    from core.demo.build import write_demo
    from core.io import jsonio

    default = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    try:
        window = MainWindow()
        qtbot.addWidget(window)
        assert sys.getswitchinterval() == workers.GIL_SWITCH_INTERVAL_S == 0.0005
        write_demo(tmp_path / "home", segments=50)
        window.open_path(str(tmp_path / "home"))
        qtbot.waitUntil(lambda: window.data is not None and window.settled(), timeout=60_000)
        assert gc.get_freeze_count() > 0  # what the load built is out of the collector's way
        window.open_path(str(tmp_path / "home"))  # another place: the old data is released
        assert gc.get_freeze_count() == 0
        qtbot.waitUntil(window.settled, timeout=60_000)
        window.close()
        assert gc.get_freeze_count() == 0 and not jsonio._freeze_after_pauses
    finally:
        sys.setswitchinterval(default)
