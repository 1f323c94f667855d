"""The window's jobs: the GIL shared with the GUI, loads frozen out of the collector."""

from __future__ import annotations

from app import gil


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
        assert sys.getswitchinterval() == gil.GIL_SWITCH_INTERVAL_S == 0.0005
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
