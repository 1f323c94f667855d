"""Resource lookup: from the checkout, from a (simulated) frozen build; the files themselves."""

from __future__ import annotations

import configparser
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QImage

import core
from app import resources
from app.resources import (
    DESKTOP_FILE,
    ICON_SIZES,
    MARKER,
    app_icon,
    icon_file,
    resources_dir,
)

ROOT = Path(__file__).resolve().parents[2]
CHECKOUT = ROOT / "resources"
PACKAGING = ROOT / "packaging"


def test_icon_loads_from_the_checkout(qapp):
    assert resources_dir() == CHECKOUT
    assert (resources_dir() / icon_file(32)).is_file()
    icon = app_icon()
    assert not icon.isNull()
    assert [s.width() for s in icon.availableSizes()] == list(ICON_SIZES)
    for size in ICON_SIZES:
        image = icon.pixmap(size, size).toImage()
        assert image.width() == size
        assert image.pixelColor(size // 2, size // 2).alpha() == 255  # drawn, not blank
        assert image.pixelColor(0, 0).alpha() < 255  # rounded corners stay transparent


@pytest.fixture
def bundle(tmp_path, monkeypatch):
    """A PyInstaller-like one-folder layout: resources/ inside sys._MEIPASS, frozen set."""
    meipass = tmp_path / "dist" / "memlens" / "_internal"
    shutil.copytree(CHECKOUT, meipass / "resources")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(meipass), raising=False)
    return meipass / "resources"


def test_frozen_build_finds_its_bundled_resources(qapp, bundle):
    red = QImage(16, 16, QImage.Format.Format_ARGB32)
    red.fill(QColor("#ff0000"))
    assert red.save(str(bundle / icon_file(16)))  # tell the bundle's icon from the checkout's
    assert resources.is_frozen()
    assert resources_dir() == bundle
    assert (resources_dir() / DESKTOP_FILE).is_file()
    assert app_icon().pixmap(16, 16).toImage().pixelColor(8, 8) == QColor("#ff0000")


def test_frozen_build_without_bundled_resources_falls_back_beside_the_code(bundle):
    shutil.rmtree(bundle)
    assert resources.candidate_dirs()[0] == bundle
    assert resources_dir() == CHECKOUT  # in a real bundle app/ sits in _MEIPASS as well


def test_missing_resources_name_the_places_searched(qapp, tmp_path, monkeypatch):
    monkeypatch.setattr(resources, "__file__", str(tmp_path / "app" / "resources.py"))
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path / "resources"))):
        resources_dir()
    assert app_icon().isNull()  # the app still starts, without an icon


def load_script(name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(f"packaging_{name}", PACKAGING / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pngs_are_renders_of_the_svg(qapp, tmp_path):
    render_icons = load_script("render_icons")
    assert render_icons.SIZES == ICON_SIZES
    assert render_icons.stale() == []
    # a changed SVG is caught
    changed = tmp_path / "changed.svg"
    changed.write_text((CHECKOUT / MARKER).read_text().replace("#1f2b46", "#ff00ff"))
    assert len(render_icons.stale(CHECKOUT, changed)) == len(ICON_SIZES)


def test_desktop_entry():
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # keys are case-sensitive
    entry.read(CHECKOUT / DESKTOP_FILE, encoding="utf-8")
    section = entry["Desktop Entry"]
    assert section["Type"] == "Application"
    assert section["Name"] == "memlens"
    assert section["Exec"].split()[0] == "memlens" == section["TryExec"]
    assert section["Icon"] == "memlens"
    assert section["Terminal"] == "false"
    assert section["Categories"].endswith(";") and "Development" in section["Categories"]
    validate = shutil.which("desktop-file-validate")
    if validate:
        proc = subprocess.run([validate, str(CHECKOUT / DESKTOP_FILE)], capture_output=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr


class Recorder:
    """Stands in for one of PyInstaller's spec classes, keeping its arguments."""

    def __init__(self, name: str, made: dict[str, Recorder]):
        self.name, self.made = name, made

    def __call__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs
        self.made[self.name] = self
        return types.SimpleNamespace(pure=[], scripts=[], binaries=[], datas=[])


def test_pyinstaller_spec_bundles_the_resources_one_folder(monkeypatch):
    """The spec run with stand-ins for PyInstaller (which the tests do not need)."""
    hooks = types.ModuleType("PyInstaller.utils.hooks")
    hooks.copy_metadata = lambda dist: [(f"{dist}.dist-info", f"{dist}.dist-info")]
    hooks.collect_data_files = lambda package: []
    for name in ("PyInstaller", "PyInstaller.utils"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "PyInstaller.utils.hooks", hooks)
    monkeypatch.delenv("MEMLENS_FREEZE_TRANSFORMER", raising=False)
    made: dict[str, Recorder] = {}
    names = {n: Recorder(n, made) for n in ("Analysis", "PYZ", "EXE", "COLLECT")}
    spec = PACKAGING / "memlens.spec"
    exec(compile(spec.read_text(), str(spec), "exec"), {"SPECPATH": str(PACKAGING), **names})

    analysis = made["Analysis"]
    assert analysis.args[0] == [str(PACKAGING / "entry.py")]
    assert analysis.kwargs["pathex"] == [str(ROOT)]
    datas = analysis.kwargs["datas"]
    bundled = {Path(src).name for src, dest in datas if dest == "resources"}
    assert bundled == {MARKER, DESKTOP_FILE, *(icon_file(s) for s in ICON_SIZES)}
    assert all(Path(src).parent == CHECKOUT for src, dest in datas if dest == "resources")
    hidden = analysis.kwargs["hiddenimports"]
    # the CLI imports some command modules by name: every module of memlens is listed
    assert {"core.cli.main", "core.cli.recall", "core.cli.compaction", "app.resources"} <= set(
        hidden
    )
    assert "tokenizers" in analysis.kwargs["excludes"]
    assert made["EXE"].kwargs["exclude_binaries"] is True  # one folder, not one file
    assert made["COLLECT"].kwargs["name"] == "memlens"


def test_frozen_entry_script_runs_the_cli():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, str(PACKAGING / "entry.py"), "--version"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"memlens {core.__version__}"


def test_install_desktop_adds_and_removes_the_menu_entry(tmp_path):
    exe = tmp_path / "my apps" / "memlens"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    data = tmp_path / "share"
    env = {**os.environ, "XDG_DATA_HOME": str(data)}
    script = str(PACKAGING / "install-desktop.sh")
    proc = subprocess.run(["bash", script, str(exe)], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    desktop = (data / "applications" / DESKTOP_FILE).read_text()
    assert f'Exec="{exe}" %f' in desktop.splitlines()
    assert f"TryExec={exe}" in desktop.splitlines()
    for size in ICON_SIZES:
        installed = data / "icons" / "hicolor" / f"{size}x{size}" / "apps" / "memlens.png"
        assert installed.read_bytes() == (CHECKOUT / icon_file(size)).read_bytes()
    assert (data / "icons" / "hicolor" / "scalable" / "apps" / "memlens.svg").is_file()

    proc = subprocess.run(["bash", script, "--uninstall"], env=env, capture_output=True)
    assert proc.returncode == 0
    assert not list(data.rglob("memlens*"))

    missing = subprocess.run(
        ["bash", script, str(tmp_path / "nothing")], env=env, capture_output=True, text=True
    )
    assert missing.returncode == 1 and "no memlens executable" in missing.stderr
