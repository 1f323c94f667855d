"""The wheel: built with ``python -m build``, installed into a fresh venv, run from there.

The fresh venv gets the wheel with ``--no-deps``; memlens's dependencies (PySide6, numpy, ...)
are made importable by a ``.pth`` file naming the running interpreter's site-packages, which
saves installing PySide6 again. The repo itself is never on the fresh venv's path, and every
run checks (``python -v``) that ``core`` and ``app`` were imported from the wheel's files.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import core
from app.resources import DESKTOP_FILE, ICON_SIZES, MARKER, icon_file
from core.dataset.load import load_dataset

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis"
)
RESOURCE_FILES = {MARKER, DESKTOP_FILE, *(icon_file(s) for s in ICON_SIZES)}
LOADED_FROM = re.compile(r"(\S+)/(core|app)/__init__\.py\b")


def run(cmd: list[str], env: dict[str, str], cwd: Path, timeout: float = 300) -> str:
    """Run *cmd*; its stdout, or a test failure showing both streams."""
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        pytest.fail(
            f"{' '.join(cmd)} exited {proc.returncode}\n"
            f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
        )
    return proc.stdout


def dependency_dirs() -> list[str]:
    """The running interpreter's site-packages folders (memlens's dependencies live there)."""
    found = []
    for entry in sys.path:
        path = Path(entry or ".").resolve()
        if path.name in ("site-packages", "dist-packages") and path.is_dir():
            if not path.is_relative_to(ROOT) or ".venv" in path.parts:
                found.append(str(path))
    return list(dict.fromkeys(found))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sdist and the wheel built from a copy of the source tree (the repo stays clean)."""
    tmp = tmp_path_factory.mktemp("packaging")
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=NOT_SOURCE)
    dist = tmp / "dist"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    run([sys.executable, "-m", "build", "--outdir", str(dist), str(src)], env, tmp, timeout=600)
    wheels = list(dist.glob("memlens-*.whl"))
    sdists = list(dist.glob("memlens-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in dist.iterdir())
    return {"tmp": tmp, "wheel": wheels[0], "sdist": sdists[0]}


@pytest.fixture(scope="module")
def venv(built: dict[str, Path]) -> dict[str, object]:
    """A fresh venv with the wheel installed (no deps); its python, bin folder and env."""
    tmp = built["tmp"]
    home = tmp / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(home)], dict(os.environ), tmp)
    python = home / "bin" / "python"
    site = Path(
        run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            dict(os.environ), tmp).strip()
    )  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(QT_QPA_PLATFORM="offscreen", PYTHONNOUSERSITE="1")
    run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", "-q", str(built["wheel"])],
        env, tmp,
    )  # fmt: skip
    (site / "_memlens_test_dependencies.pth").write_text("\n".join(dependency_dirs()) + "\n")
    return {"python": python, "bin": home / "bin", "site": site, "env": env, "cwd": tmp}


def assert_wheel_code(stderr: str, site: Path) -> None:
    """Every ``core``/``app`` package a ``python -v`` run imported came from *site*."""
    roots = {Path(m[1]) for m in LOADED_FROM.finditer(stderr)}
    assert roots, "python -v showed no import of core or app"
    assert roots == {site}, f"imported from {roots}, expected only the wheel in {site}"


def test_wheel_and_sdist_carry_the_resources(built):
    names = set(zipfile.ZipFile(built["wheel"]).namelist())
    assert {f"resources/{name}" for name in RESOURCE_FILES} <= names
    assert {"app/resources.py", "app/launcher.py", "core/cli/main.py", "core/py.typed"} <= names
    assert not any(n.startswith(("tests/", "packaging/", "bench/")) for n in names)
    entry_points = zipfile.ZipFile(built["wheel"]).read(
        f"memlens-{core.__version__}.dist-info/entry_points.txt"
    )
    assert b"memlens = app.launcher:main" in entry_points
    with tarfile.open(built["sdist"]) as sdist:
        members = {Path(*Path(n).parts[1:]).as_posix() for n in sdist.getnames()}
    assert {f"resources/{name}" for name in RESOURCE_FILES} <= members


def test_installed_memlens_runs_from_the_wheel(venv, tmp_path):
    memlens, env, site = str(venv["bin"] / "memlens"), venv["env"], venv["site"]
    verbose = subprocess.run(
        [memlens, "--version"], env={**env, "PYTHONVERBOSE": "1"}, cwd=tmp_path,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert verbose.returncode == 0, verbose.stderr[-3000:]
    assert verbose.stdout.strip() == f"memlens {core.__version__}"
    assert_wheel_code(verbose.stderr, site)
    assert str(ROOT) not in verbose.stderr.replace(str(ROOT / ".venv"), "")

    home = tmp_path / "home"
    run([memlens, "demo", str(home), "--segments", "200"], env, tmp_path)
    info = json.loads(run([memlens, "info", str(home), "--json"], env, tmp_path))
    data = load_dataset(home)  # the same data read by this (source) checkout
    assert info["kind"] == data.discovery.kind
    assert info["agents"] == [a.name for a in data.discovery.agents] and info["agents"]
    assert len(info["sessions"]) == len(data.summaries) > 0
    assert info["segments"] == len(data.segments.segments) > 0
    assert info["facts"] == data.knowledge.counts() and info["facts"]["active"] > 0
    assert len(info["problems"]) == len(data.problems)  # the demo holds one bad line on purpose


PROBE = """
import json, sys
from PySide6.QtGui import QGuiApplication
import app.resources as r
qt = QGuiApplication(sys.argv[:1])
icon = r.app_icon()
print(json.dumps({
    "module": r.__file__,
    "dir": str(r.resources_dir()),
    "desktop": str(r.resources_dir() / r.DESKTOP_FILE),
    "sizes": [s.width() for s in icon.availableSizes()],
    "pixels16": icon.pixmap(16, 16).toImage().pixelColor(8, 8).alpha(),
}))
"""


def test_installed_app_finds_its_resources(venv, tmp_path):
    found = json.loads(run([str(venv["python"]), "-c", PROBE], venv["env"], tmp_path))
    site = venv["site"]
    assert Path(found["module"]) == site / "app" / "resources.py"
    assert Path(found["dir"]) == site / "resources"
    assert Path(found["desktop"]) == site / "resources" / DESKTOP_FILE
    assert found["sizes"] == list(ICON_SIZES)
    assert found["pixels16"] == 255  # the icon's centre is opaque: a real image was loaded
