"""The one job runner: results on the GUI thread, stale results dropped, failures logged."""

from __future__ import annotations

import logging
import threading

from PySide6.QtCore import QThread, QThreadPool

from core.io.jobs import Cancelled
from widgets.common.jobs import JobRunner


def _wait_idle(qtbot, runner: JobRunner) -> None:
    qtbot.waitUntil(lambda: not runner.running(), timeout=5000)


def test_result_arrives_on_the_gui_thread_with_progress(qtbot):
    runner = JobRunner(QThreadPool())
    seen: list[tuple[str, object]] = []
    gui = QThread.currentThread()

    def fn(*, progress, cancelled):
        progress(1, 2, "half")
        progress(2, 2, "all")
        return threading.current_thread().name

    def done(result):
        seen.append(("done", result))
        assert QThread.currentThread() is gui

    job = runner.submit("add", fn, done=done, progress=lambda d, t, label: seen.append((label, d)))
    _wait_idle(qtbot, runner)
    assert job.outcome == "done"
    assert seen[-1][0] == "done" and seen[-1][1] != threading.current_thread().name
    assert ("all", 2) in seen


def test_a_late_result_for_an_old_request_is_dropped(qtbot):
    runner = JobRunner(QThreadPool())
    gate = threading.Event()
    delivered: list[str] = []

    def slow(*, progress, cancelled):
        gate.wait(5)
        return "old"  # ignores its cancel flag on purpose: a late result

    first = runner.submit("q", slow, key="query", done=delivered.append)
    second = runner.submit("q", lambda **_: "new", key="query", done=delivered.append)
    qtbot.waitUntil(lambda: second.outcome == "done", timeout=5000)
    gate.set()
    _wait_idle(qtbot, runner)
    assert delivered == ["new"]
    assert first.outcome == "stale"
    assert first.stop.is_set()


def test_failure_is_logged_with_traceback_and_reported(qtbot, caplog):
    runner = JobRunner(QThreadPool())
    errors: list[tuple[str, str]] = []
    runner.error.connect(lambda name, message: errors.append((name, message)))
    failed: list[str] = []

    def boom(*, progress, cancelled):
        raise IndexError("segment 7 evicted")

    with caplog.at_level(logging.ERROR, logger="memlens.jobs"):
        job = runner.submit("embed", boom, failed=failed.append)
        _wait_idle(qtbot, runner)
    assert job.outcome == "failed"
    assert failed == ["segment 7 evicted"]
    assert errors == [("embed", "segment 7 evicted")]
    record = next(r for r in caplog.records if r.name == "memlens.jobs")
    assert record.exc_info is not None and record.exc_info[0] is IndexError


def test_cancel_reaches_the_job_and_its_cancelled_callback(qtbot):
    runner = JobRunner(QThreadPool())
    started = threading.Event()
    ends: list[str] = []

    def loop(*, progress, cancelled):
        started.set()
        while not cancelled():
            threading.Event().wait(0.005)
        raise Cancelled("stopped")

    job = runner.submit("load", loop, cancelled=lambda: ends.append("cancelled"))
    assert started.wait(5)
    job.cancel()
    _wait_idle(qtbot, runner)
    assert ends == ["cancelled"] and job.outcome == "cancelled"


def test_a_failing_callback_is_logged_not_raised(qtbot, caplog):
    runner = JobRunner(QThreadPool())
    errors: list[str] = []
    runner.error.connect(lambda _name, message: errors.append(message))

    def bad_done(_result):
        raise ValueError("view gone")

    with caplog.at_level(logging.ERROR, logger="memlens.jobs"):
        runner.submit("x", lambda **_: 1, done=bad_done)
        _wait_idle(qtbot, runner)
    assert errors == ["view gone"]
    assert any(r.exc_info and r.exc_info[0] is ValueError for r in caplog.records)


def test_what_a_job_captured_is_released_on_the_gui_thread(qtbot):
    """A closure holding the last reference to a QObject must not free it in a pool thread.

    (A QObject destroyed there stops its timers from the wrong thread: Qt warns, and
    crashes follow.)
    """
    from PySide6.QtCore import QObject, Qt

    runner = JobRunner(QThreadPool())
    freed_on: list[str] = []
    jobs = []
    for _ in range(20):
        holder = QObject()
        holder.destroyed.connect(
            lambda *_: freed_on.append(threading.current_thread().name),
            Qt.ConnectionType.DirectConnection,
        )
        jobs.append(runner.submit("hold", lambda *, progress, cancelled, h=holder: h.objectName()))
        del holder
    _wait_idle(qtbot, runner)
    jobs.clear()
    qtbot.waitUntil(lambda: len(freed_on) == 20, timeout=5000)
    assert set(freed_on) == {threading.main_thread().name}
