"""Issue 17: the docks after a failed first open, and the default layout on a laptop screen."""

from __future__ import annotations

import pytest

from app.main import build_window
from app.settings import AppSettings


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def _window(qtbot, argv=()):  # type: ignore[no-untyped-def]
    window = build_window(list(argv))
    qtbot.addWidget(window)
    return window


def _docks_shown(window) -> list[str]:  # type: ignore[no-untyped-def]
    docks = (window.nav_dock, window.activity_dock)  # toggle checked: shown, maybe tabbed
    return [d.objectName() for d in docks if d.toggleViewAction().isChecked()]


def test_a_failed_open_from_the_first_run_page_keeps_the_docks(qtbot, cache, tmp_path):
    """Defect 1: a folder that is not a data directory, then the demo: docks come back."""
    not_data = tmp_path / "photos"
    not_data.mkdir()
    (not_data / "cat.txt").write_text("meow\n")
    window = _window(qtbot)
    assert window.showing_first_run
    window.open_path(str(not_data))
    qtbot.waitUntil(lambda: window.load_job is None, timeout=30_000)
    assert window.showing_first_run and window.data is None
    window.open_demo()
    qtbot.waitUntil(lambda: window.data is not None and window.settled(), timeout=60_000)
    assert _docks_shown(window) == ["sessions-dock", "activity-dock"]
    window.close()
    # ... and after a restart
    again = _window(qtbot)
    qtbot.waitUntil(lambda: again.data is not None and again.settled(), timeout=60_000)
    assert _docks_shown(again) == ["sessions-dock", "activity-dock"]
    again.close()


def test_two_failed_opens_then_a_restart_on_the_first_run_page(qtbot, cache, tmp_path):
    """Hidden docks saved from the first-run page are never the user's layout."""
    window = _window(qtbot)
    for name in ("a", "b"):
        window.open_path(str(tmp_path / name))  # missing: fails
        qtbot.waitUntil(lambda: window.load_job is None, timeout=30_000)
    window.close()
    settings = AppSettings()
    again = _window(qtbot)
    assert again.settings.blob("state") == settings.blob("state")
    again.open_demo()
    qtbot.waitUntil(lambda: again.data is not None and again.settled(), timeout=60_000)
    assert _docks_shown(again) == ["sessions-dock", "activity-dock"]
