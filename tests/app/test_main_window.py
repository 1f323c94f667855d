from __future__ import annotations

import shutil

from app.main_window import MainWindow
from app.workers import LoadWorker


def test_opens_a_folder_in_a_worker(qtbot, fixtures_dir):
    window = MainWindow()
    qtbot.addWidget(window)
    window.open_path(str(fixtures_dir))
    qtbot.waitUntil(lambda: window.data is not None, timeout=20000)
    assert window.sessions.rowCount() == 2
    assert "2 sessions" in window.state.text()
    assert not window.progress.isVisible()
    window.filter_box.setText("before")  # filter on any column
    assert window.session_proxy.rowCount() == 0 or window.session_proxy.rowCount() == 1


def test_bad_path_is_reported_not_raised(qtbot, tmp_path):
    window = MainWindow()
    qtbot.addWidget(window)
    window.open_path(str(tmp_path / "missing"))
    qtbot.waitUntil(lambda: "Could not open" in window.state.text(), timeout=10000)
    assert "no such file or folder" in window.state.text()
    assert window.data is None


def test_problems_are_listed_with_file_and_line(qtbot, fixtures_dir, tmp_path):
    lines = (fixtures_dir / "large-session.jsonl").read_bytes().split(b"\n")
    (tmp_path / "s.jsonl").write_bytes(b"\n".join([*lines[:4], b"{broken", *lines[4:8]]) + b"\n")
    shutil.copy(fixtures_dir / "large-session.jsonl", tmp_path / "ok.jsonl")
    window = MainWindow()
    qtbot.addWidget(window)
    window.open_path(str(tmp_path))
    qtbot.waitUntil(lambda: window.data is not None, timeout=20000)
    rows = [window.problems.record(r) for r in range(window.problems.rowCount())]
    assert any(p.line == 5 and p.file.endswith("s.jsonl") for p in rows)


def test_load_can_be_cancelled(qtbot, fixtures_dir):
    worker = LoadWorker(str(fixtures_dir))
    worker.cancel()
    with qtbot.waitSignal(worker.signals.cancelled, timeout=5000):
        worker.run()
