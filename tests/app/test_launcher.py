from __future__ import annotations

import pytest

from app import demo_data
from app.launcher import main
from app.main import build_window


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(tmp_path / "memlens"))
    return tmp_path


def test_demo_is_generated_once_into_the_cache(cache):
    root = demo_data.demo_dir()
    assert root.parent == cache / "memlens"
    assert (root / ".complete").exists() and (root / "openclaw.json").exists()
    stamp = (root / "openclaw.json").stat().st_mtime_ns
    assert demo_data.demo_dir() == root
    assert (root / "openclaw.json").stat().st_mtime_ns == stamp  # reused, not rewritten


def test_memlens_demo_opens_the_demo_data(qtbot, cache):
    window = build_window(["--demo"])
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: window.data is not None, timeout=30000)
    assert len(window.navigator.model.sessions()) == 12
    assert window.data.knowledge is not None and window.data.segments is not None


def test_memlens_path_opens_it(qtbot, fixtures_dir):
    window = build_window([str(fixtures_dir / "large-session.jsonl")])
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: window.data is not None, timeout=20000)
    assert len(window.navigator.model.sessions()) == 1


def test_cli_commands_do_not_start_the_gui(capsys):
    assert main(["embed", "x", "--json"]) == 0
    assert '"dim":384' in capsys.readouterr().out


def test_paths_names_where_memlens_finds_and_keeps_its_files(capsys, tmp_path, monkeypatch):
    import json

    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["--paths"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["resources"].endswith("resources") and found["resources_missing"] == []
    assert found["cache"] == str(tmp_path / "cache")
    assert found["frozen"] is False


def test_paths_names_the_settings_file_qt_uses(tmp_path):
    import json
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    # A fresh process: this one's QSettings paths point into the tests' own folder.
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "conf"), "HOME": str(tmp_path)}
    code = (
        "import json; from app.launcher import paths; from app.settings import default_settings; "
        "print(json.dumps([paths()['settings'], default_settings().fileName()]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, check=True, text=True
    ).stdout
    said, qt = json.loads(out)
    assert said == qt == str(tmp_path / "conf" / "memlens" / "memlens.ini")


def test_paths_fails_when_resources_are_missing(capsys, monkeypatch, tmp_path):
    from app import resources

    monkeypatch.setattr(resources, "candidate_dirs", lambda: [tmp_path / "nowhere"])
    assert main(["--paths"]) == 1
    assert '"resources": null' in capsys.readouterr().out


def test_the_demo_is_written_in_the_worker_not_the_gui_thread(qtbot, cache, monkeypatch):
    import threading

    from app import demo_data as module

    threads = []
    real = module.write_demo

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "write_demo", spy)
    window = build_window(["--demo"])
    qtbot.addWidget(window)
    assert window.load_job is not None  # returned at once, the load is running
    qtbot.waitUntil(lambda: window.data is not None, timeout=60000)
    assert len(threads) == 1 and threads[0] is not threading.main_thread()
    assert len(window.navigator.model.sessions()) == 12
