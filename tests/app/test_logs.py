"""The app's log: job failures with their traceback, secrets masked, Help > Open Log."""

from __future__ import annotations

import logging
import sys

import pytest

from app import actions as actions_module
from app.logs import RedactFilter, log_file, setup_logging
from app.main_window import MainWindow

SECRET = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6"


@pytest.fixture
def logged(tmp_path):
    """Logging to a file in tmp_path; the handler and the excepthook are undone afterwards."""
    hook = sys.excepthook
    path = setup_logging(tmp_path / "logs" / "memlens.log")
    yield path
    sys.excepthook = hook
    _remove_handlers()


def _remove_handlers() -> None:
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, "memlens", False)]:
        root.removeHandler(handler)
        handler.close()


def _text(path):  # type: ignore[no-untyped-def]
    for handler in logging.getLogger().handlers:
        handler.flush()
    return path.read_text(encoding="utf-8")


def test_the_log_lives_in_the_data_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMLENS_DATA_DIR", str(tmp_path))
    assert log_file() == tmp_path / "logs" / "memlens.log"


def test_the_filter_masks_secrets_in_messages_arguments_and_tracebacks():
    try:
        raise RuntimeError(f"provider said no to {SECRET}")
    except RuntimeError as exc:
        record = logging.LogRecord(
            "memlens.jobs", logging.ERROR, __file__, 1, "key %s", (SECRET,), (type(exc), exc, None)
        )
    assert RedactFilter().filter(record)
    assert SECRET not in record.getMessage() and "key " in record.getMessage()
    assert record.exc_text is not None and "RuntimeError" in record.exc_text
    assert SECRET not in record.exc_text
    assert SECRET not in logging.Formatter().format(record)


def test_a_failing_job_reaches_the_log_with_its_traceback_and_no_secret(qtbot, logged):
    window = MainWindow()
    qtbot.addWidget(window)

    def job(**_: object) -> None:
        raise ValueError(f"bad key {SECRET}")

    with qtbot.waitSignal(window.runner.error, timeout=10_000) as got:
        window.runner.submit("checking the key", job)
    assert got.args[0] == "checking the key"
    text = _text(logged)
    assert "job 'checking the key' failed" in text
    assert "Traceback (most recent call last)" in text and "ValueError" in text
    assert SECRET not in text


def test_job_errors_are_shown_in_activity(qtbot):
    window = MainWindow()
    qtbot.addWidget(window)
    before = window.activity_view.model.rowCount()

    def job(**_: object) -> None:
        raise OSError(f"disk full while using {SECRET}")

    with qtbot.waitSignal(window.runner.error, timeout=10_000):
        window.runner.submit("writing the cache", job)
    model = window.activity_view.model
    assert model.rowCount() == before + 1
    row = model.record(model.rowCount() - 1)
    assert row.label == "job failed" and row.path == "writing the cache"
    assert "disk full" in row.summary and SECRET not in row.summary
    assert "writing the cache failed" in window.statusBar().currentMessage()


def test_help_open_log_opens_the_log_file(qtbot, monkeypatch, tmp_path):
    monkeypatch.setenv("MEMLENS_DATA_DIR", str(tmp_path))
    opened = []
    monkeypatch.setattr(
        actions_module.QDesktopServices, "openUrl", lambda url: opened.append(url) or True
    )
    window = MainWindow()
    qtbot.addWidget(window)
    action = window.menu_actions.by_name["open_log"]
    help_menu = next(
        a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "Help"
    )
    assert action in help_menu.actions()
    assert "&L" in action.text()  # Alt+H, L from the keyboard
    action.trigger()
    assert [u.toLocalFile() for u in opened] == [str(tmp_path / "logs" / "memlens.log")]
    assert (tmp_path / "logs" / "memlens.log").exists()


def test_an_uncaught_exception_is_logged_masked(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "excepthook", lambda kind, *_: seen.append(kind))  # restored after
    path = setup_logging(tmp_path / "memlens.log")
    try:
        raise KeyError(f"no provider for {SECRET}")
    except KeyError as exc:
        sys.excepthook(type(exc), exc, exc.__traceback__)  # what Qt does for a failing slot
    finally:
        text = _text(path)
        _remove_handlers()
    assert "uncaught exception" in text and "KeyError" in text and SECRET not in text
    assert seen == [KeyError]  # the hook before still runs
