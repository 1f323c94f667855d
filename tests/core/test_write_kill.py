"""A writer killed at a random moment never leaves half a line, nor a half-written file.

A separate process writes as fast as it can through core.io.fsutil; the test SIGKILLs
it many times at random moments and checks the file after each kill. The files
live on tmpfs when there is one: no fsync wait there, so the writer spends its
time copying bytes into the file and the kills land in the middle of writes.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
import pytest

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")

ROOT = Path(__file__).resolve().parents[2]
KILLS = 25

APPENDER = """
import os, sys
sys.path.insert(0, sys.argv[1])
import orjson
from core.io import fsutil
if sys.argv[3] != "helper":
    sys.frozen = True  # a frozen app starts no helper: its appends are made in-process
path = sys.argv[2]
lines = [
    orjson.dumps({"n": n, "pad": "x" * (8000 + n * 45_000)}) + b"\\n"  # 8 KB .. 700 KB
    for n in range(16)
]
i = 0
while True:
    fsutil.append_lines(path, lines[i % 16])
    if i == 0:
        os.write(1, b"ready\\n")
    i += 1
"""

REWRITER = """
import os, sys
sys.path.insert(0, sys.argv[1])
import orjson
from core.io import fsutil
path = sys.argv[2]
versions = [orjson.dumps({"v": v, "pad": "y" * (50_000 + v * 150_000)}) for v in range(8)]
i = 0
while True:
    fsutil.atomic_write(path, versions[i % 8], backup=False)
    if i == 0:
        os.write(1, b"ready\\n")
    i += 1
"""


@pytest.fixture
def fast_dir(tmp_path):
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        folder = Path(tempfile.mkdtemp(prefix="memlens-kill-", dir=shm))
        yield folder
        shutil.rmtree(folder, ignore_errors=True)
    else:
        yield tmp_path


def _run_and_kill(script: str, *args: str, rng: random.Random) -> None:
    """Start *script*, wait until it has written once, SIGKILL it at a random moment.

    Returns once the writer *and anything it started* are gone: they all hold the
    stderr pipe, so its end of file means nobody can still be writing.
    """
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(ROOT), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    ready = proc.stdout.readline()
    if ready != b"ready\n":
        _, err = proc.communicate(timeout=30)
        pytest.fail(f"writer did not start: {err.decode(errors='replace')}")
    time.sleep(rng.uniform(0, 0.03))
    proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert b"Traceback" not in err, err.decode(errors="replace")


def _check_appended(path: Path, before: bytes) -> int:
    """The file is *before* plus whole JSON lines; returns how many were appended."""
    data = path.read_bytes()
    assert data.startswith(before), "the existing content was changed"
    added = data[len(before) :]
    if not added:
        return 0
    assert added.endswith(b"\n"), f"half a line at the end ({len(added)} bytes appended)"
    lines = added.split(b"\n")[:-1]
    for number, line in enumerate(lines, start=1):
        obj = orjson.loads(line)  # raises on a cut or glued line
        assert set(obj) == {"n", "pad"} and len(obj["pad"]) == 8000 + obj["n"] * 45_000, number
    return len(lines)


def _appends_under_kill(folder: Path, mode: str, kills: int, rng: random.Random):
    path = folder / "knowledge.jsonl"
    for k in range(kills):
        # Each round starts from an agent-like file: whole lines and a final newline.
        before = b'{"n":-1,"agent":"line"}\n' * (k % 3)
        path.write_bytes(before)
        _run_and_kill(APPENDER, str(path), mode, rng=rng)
        yield path, before


def test_killed_appender_leaves_only_whole_lines(fast_dir):
    rng = random.Random(6)
    appended = 0
    for path, before in _appends_under_kill(fast_dir, "helper", KILLS, rng):
        appended += _check_appended(path, before)
    assert appended > KILLS  # the writer did write between kills


def test_killed_rewriter_leaves_old_or_new_content(fast_dir):
    rng = random.Random(7)
    path = fast_dir / "sessions.json"
    old = orjson.dumps({"v": -1, "pad": "old"})
    path.write_bytes(old)
    seen: set[int] = set()
    for _ in range(KILLS):
        _run_and_kill(REWRITER, str(path), rng=rng)
        obj = orjson.loads(path.read_bytes())  # never a partial document
        if obj["v"] == -1:
            assert obj == {"v": -1, "pad": "old"}
        else:
            assert len(obj["pad"]) == 50_000 + obj["v"] * 150_000
        seen.add(obj["v"])
    assert len(seen) > 1  # the target really was replaced while being killed
    # A kill can leave a temp file behind; never a file under the target's name.
    assert all(p.name == "sessions.json" or p.name.endswith(".tmp") for p in fast_dir.iterdir())


def test_inline_append_can_be_cut_by_a_kill(fast_dir):
    """Why the helper exists: an in-process write of several pages can be cut short."""
    rng = random.Random(8)
    for path, before in _appends_under_kill(fast_dir, "inline", 40, rng):
        if not path.read_bytes().endswith(b"\n"):
            return  # reproduced: a SIGKILL cut a write, which the helper prevents
        _check_appended(path, before)
    pytest.skip("no write was cut in 40 kills on this kernel and filesystem")


def test_a_dead_helper_is_replaced(tmp_path):
    from core.io import fsutil
    from core.io.append_client import helper

    path = tmp_path / "k.jsonl"
    fsutil.append_lines(path, b'{"a":1}\n')
    proc = helper.proc
    if proc is None:
        pytest.skip("no helper process on this platform")
    proc.kill()
    proc.wait()
    result = fsutil.append_lines(path, b'{"b":2}\n')
    assert helper.proc is not proc and helper.proc.poll() is None
    assert path.read_bytes() == b'{"a":1}\n{"b":2}\n' and result.offset == 8


def test_helper_errors_keep_their_type_and_file(tmp_path):
    from core.io import fsutil

    target = tmp_path / "no-such-dir" / "k.jsonl"
    with pytest.raises(FileNotFoundError) as err:
        fsutil.append_lines(target, b"{}\n")
    assert err.value.filename == str(target)
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro" / "k.jsonl").write_bytes(b"{}\n")
    (tmp_path / "ro" / "k.jsonl").chmod(0o444)
    if os.geteuid() != 0:  # root may write anyway
        with pytest.raises(PermissionError):
            fsutil.append_lines(tmp_path / "ro" / "k.jsonl", b"{}\n")


def test_inline_mode_appends_the_same_way(tmp_path, monkeypatch):
    from core.io import fsutil
    from core.io.append_client import helper

    path = tmp_path / "k.jsonl"
    path.write_bytes(b'{"partial')
    monkeypatch.setattr(sys, "frozen", True, raising=False)  # a frozen app has no helper
    assert not helper.available()
    before = helper.proc
    result = fsutil.append_lines(path, b'{"a":1}\n')
    assert helper.proc is before  # the helper was neither started nor asked
    assert path.read_bytes() == b'{"partial\n{"a":1}\n'
    assert (result.offset, result.length) == (9, 9)
    assert fsutil.append_lines(path, b'{"b":2}\n').offset == 18
