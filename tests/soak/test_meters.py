"""The soak run's meters catch what they must: errors of every kind, stalls from ticks."""

from __future__ import annotations

import logging
import sys
import threading

import pytest
from PySide6.QtCore import qWarning

from tests.soak.meters import ErrorCapture, StallMeter, rss_bytes


@pytest.mark.qt_log_ignore("soak: a Qt warning")
def test_error_capture_catches_logs_hooks_and_qt_warnings(qapp):
    hooks = (sys.excepthook, threading.excepthook)
    with ErrorCapture() as errors:
        logging.getLogger("memlens.jobs").warning("a warning is kept, not a failure")
        try:
            raise ValueError("job failed")
        except ValueError:
            logging.getLogger("memlens.jobs").exception("building the timeline failed")
        try:
            raise KeyError("slot")
        except KeyError:
            sys.excepthook(*sys.exc_info())  # what PySide6 does with a slot's exception
        thread = threading.Thread(target=lambda: 1 / 0, name="worker")
        thread.start()
        thread.join()
        qWarning("soak: a Qt warning")
    failures = errors.failures
    assert len(failures) == 4, failures
    assert "building the timeline failed" in failures[0] and "ValueError" in failures[0]
    assert "KeyError: 'slot'" in failures[1]
    assert "in thread worker" in failures[2] and "ZeroDivisionError" in failures[2]
    assert "soak: a Qt warning" in failures[3]
    assert [r["level"] for r in errors.records] == ["WARNING", "ERROR"]
    # everything is put back
    assert (sys.excepthook, threading.excepthook) == hooks
    assert errors._handler not in logging.getLogger().handlers


def test_stall_meter_reports_the_gaps_between_ticks(qapp):
    meter = StallMeter(tick_ms=5)
    meter.stamps = [10.0, 10.005, 10.010, 10.215, 10.220]
    meter.wall = [100.0, 100.005, 100.010, 100.215, 100.220]
    summary = meter.summary()
    assert summary["ticks"] == 4 and summary["stalls_over_100ms"] == 1
    assert round(summary["max_stall_ms"]) == 200
    ((worst, began, ended),) = meter.worst(1)
    assert round(worst) == 200 and (began, ended) == (100.010, 100.215)


def test_rss_is_read_from_proc():
    assert rss_bytes() > 1 << 20


def test_the_app_log_is_read_for_errors_and_put_back(tmp_path):
    from tests.soak.harness import AppLog

    root = logging.getLogger()
    handlers, hook = list(root.handlers), sys.excepthook
    app_log = AppLog(tmp_path)
    try:
        logging.getLogger("memlens.jobs").info("a job started")
        try:
            raise RuntimeError("dictionary changed size during iteration")
        except RuntimeError:
            logging.getLogger("memlens.jobs").exception("job 'building the timeline' failed")
        for handler in root.handlers:
            handler.flush()
        problems = app_log.problems()
    finally:
        app_log.close()
    assert len(problems) == 1 and "job 'building the timeline' failed" in problems[0]
    assert (root.handlers, sys.excepthook) == (handlers, hook)
