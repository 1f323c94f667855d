"""The frozen one-folder app, built for real by ``packaging/build.sh`` and run from ``dist/``.

The build runs PyInstaller in this interpreter (``PYTHON``) on a copy of the source tree, so the
repo stays clean. The frozen ``memlens`` must run its CLI and find its bundled resources (icons,
desktop entry) inside the bundle, never in the source tree it was built from. A bundle built
from the same inputs (the checkout's code and resources, the interpreter, every installed
package's version: :func:`build_key`) by an earlier run is reused, as a compiler cache
would: any change of them builds again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

import pytest

import core
from app.resources import DESKTOP_FILE, ICON_SIZES, icon_file
from tests.test_packaging import NOT_SOURCE, run

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


FROZEN_INPUTS = ("app", "core", "widgets", "resources", "packaging", "pyproject.toml")
"""What the build reads of the checkout (with the interpreter and its installed packages)."""


def build_key(tree: Path) -> str:
    """A digest of everything the frozen build of *tree* depends on: the same key, the same
    bundle (the build's options from the environment included)."""
    # the base interpreter, not the venv's path: a fresh clone's venv builds the same bundle
    options = os.environ.get("MEMLENS_FREEZE_TRANSFORMER", "")
    digest = hashlib.sha256(f"{sys.version}\n{sys.base_prefix}\n{options}\n".encode())
    for dist in sorted(f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions()):
        digest.update(f"{dist}\n".encode())
    for name in FROZEN_INPUTS:
        top = tree / name
        files = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file())
        for path in files:
            if "__pycache__" in path.parts:
                continue
            digest.update(f"{path.relative_to(tree).as_posix()}\n".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:24]


KEEP_BUNDLES = 2
"""Bundles kept (about 280 MB each), the last used: a developer's venv and a fresh clone's
may differ in a package version."""

IN_USE_SECONDS = 3600
"""A bundle used this recently is never removed (another run may be running it)."""

_KEY_NAME = re.compile(r"[0-9a-f]{24}")


def _age(path: Path) -> float:
    try:
        return time.time() - path.stat().st_mtime
    except OSError:
        return 0.0


def _clean(root: Path) -> None:
    """Room for one more bundle in *root*: the least recently used removed, past
    :data:`KEEP_BUNDLES`, unless in use; a copy left half made a day ago removed. Nothing
    but bundles (a key's name) and copies (``.partial-``) is ever touched."""
    entries = list(root.iterdir())
    for old in entries:
        if old.name.startswith(".partial-") and _age(old) > 86_400:
            shutil.rmtree(old, ignore_errors=True)
    done = sorted((p for p in entries if _KEY_NAME.fullmatch(p.name)), key=_age, reverse=True)
    for old in done[: max(0, len(done) - (KEEP_BUNDLES - 1))]:
        if _age(old) > IN_USE_SECONDS:
            shutil.rmtree(old, ignore_errors=True)


def cached_bundle(src: Path, env: dict[str, str]) -> Path:
    """``dist/memlens`` built by ``packaging/build.sh`` in *src*, or the bundle built from
    the same inputs by an earlier run (``MEMLENS_FROZEN_CACHE``, default
    ``~/.cache/memlens-frozen``; :data:`KEEP_BUNDLES` kept): the build takes one to two minutes
    of CPU."""
    root = Path(os.environ.get("MEMLENS_FROZEN_CACHE") or Path.home() / ".cache" / "memlens-frozen")
    kept = root / build_key(src) / "memlens"
    if (kept / "memlens").is_file():
        with contextlib.suppress(OSError):
            os.utime(kept.parent)  # the last used, for the next build's clean-up
        return kept
    run(["bash", "packaging/build.sh"], env, src, timeout=900)
    built = src / "dist" / "memlens"
    partial: Path | None = None
    try:  # kept whole or not at all: copied aside, then renamed into place
        root.mkdir(parents=True, exist_ok=True)
        _clean(root)
        partial = Path(tempfile.mkdtemp(prefix=".partial-", dir=root))
        partial.chmod(0o755)
        shutil.copytree(built, partial / "memlens", symlinks=True)
        partial.rename(kept.parent)
    except OSError:  # no room, or another run kept the same bundle first: use this build
        if partial is not None:
            shutil.rmtree(partial, ignore_errors=True)
        return kept if (kept / "memlens").is_file() else built
    return kept


@pytest.fixture(scope="module")
def frozen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    tmp = tmp_path_factory.mktemp("frozen")
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=NOT_SOURCE)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(PYTHON=sys.executable, QT_QPA_PLATFORM="offscreen")
    app = cached_bundle(src, env) / "memlens"  # run where it is: nothing writes into it
    assert app.is_file() and os.access(app, os.X_OK)
    shutil.rmtree(src / "resources")  # only the bundle's copy may be found from now on
    home = tmp / "home"
    home.mkdir()
    run_env = {k: v for k, v in env.items() if k != "PYTHON"}
    run_env.update(
        HOME=str(home), MEMLENS_CACHE_DIR=str(tmp / "cache"), MEMLENS_DATA_DIR=str(tmp / "data")
    )
    return {"app": app, "env": run_env, "cwd": tmp}


def test_frozen_app_runs_its_cli(frozen):
    app, env, cwd = frozen["app"], frozen["env"], frozen["cwd"]
    assert run([str(app), "--version"], env, cwd).strip() == f"memlens {core.__version__}"
    demo = Path(cwd) / "demo"
    run([str(app), "demo", str(demo), "--segments", "300"], env, cwd)
    info = json.loads(run([str(app), "info", str(demo), "--json"], env, cwd))
    assert len(info["sessions"]) == 12


def test_frozen_app_finds_its_bundled_resources(frozen):
    app, env, cwd = frozen["app"], frozen["env"], frozen["cwd"]
    found = json.loads(run([str(app), "--paths"], env, cwd))
    bundle = Path(app).parent
    assert found["frozen"] is True
    assert Path(found["resources"]).is_relative_to(bundle)
    assert found["resources_missing"] == []
    for name in (DESKTOP_FILE, *(icon_file(size) for size in ICON_SIZES)):
        assert (Path(found["resources"]) / name).is_file()


def test_frozen_app_serves_mcp(frozen):
    """``memlens mcp DATA`` from the bundle: the SDK and its models frozen with it."""
    import subprocess

    app, env, cwd = frozen["app"], frozen["env"], frozen["cwd"]
    demo = Path(cwd) / "mcp-demo"
    run([str(app), "demo", str(demo), "--segments", "300"], env, cwd)
    calls = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "sessions_list", "arguments": {"limit": 1}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",  # jsonschema, loaded when needed
         "params": {"name": "sessions_list", "arguments": {"bogus": 1}}},
    ]  # fmt: skip
    server = subprocess.Popen(
        [str(app), "mcp", str(demo)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env=env, cwd=cwd,
    )  # fmt: skip
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(b"".join(json.dumps(c).encode() + b"\n" for c in calls))
        server.stdin.flush()
        init = json.loads(server.stdout.readline())
        answers = [json.loads(server.stdout.readline()) for _ in range(2)]
        listed, refused = sorted(answers, key=lambda a: a["id"])  # (in the order they end)
    finally:
        server.kill()
        server.wait(timeout=30)
    assert init["result"]["serverInfo"]["name"] == "memlens"
    assert listed["result"]["isError"] is False
    assert listed["result"]["structuredContent"]["total"] == 12
    assert refused["result"]["isError"] is True
    assert refused["result"]["content"][0]["text"] == (
        "Input validation error: Additional properties are not allowed ('bogus' was unexpected)"
    )
