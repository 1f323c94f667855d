"""A backup that cannot be made whole stops the compaction before the transcript is touched.

Real faults: a file-size limit (``RLIMIT_FSIZE``: the disk refuses the bytes, as a
full disk does) on ``memlens compact --write``, and an agent appending to the
transcript during every copy.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from core.compaction.run import compact
from core.compaction.write import write_compaction
from core.io import fsutil
from core.safety.backups import list_backups
from core.transcript import load_transcript

from .build import chain, lines, write_file

ROOT = Path(__file__).resolve().parents[2]


def _session(tmp_path: Path, n: int = 40) -> tuple[Path, bytes]:
    sessions = tmp_path / "home" / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    path = sessions / "s.jsonl"
    return path, write_file(path, lines(chain(n)))


def _leftovers(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p != path)


def _limit_file_size(limit: int):
    def apply() -> None:
        import resource

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails: EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="needs RLIMIT_FSIZE")
def test_a_backup_the_disk_refuses_means_no_compaction(tmp_path):
    path, before = _session(tmp_path)
    assert len(before) > 100_000
    proc = subprocess.run(
        [sys.executable, "-m", "core.cli.main", "compact", str(path), "--write", "--force"],
        cwd=ROOT,
        capture_output=True,
        preexec_fn=_limit_file_size(len(before) // 2),  # the copy fails halfway
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr.decode()
    assert b"File too large" in proc.stderr and b"Traceback" not in proc.stderr
    assert path.read_bytes() == before
    assert _leftovers(path) == []  # no backup, no temp copy
    # the same run without the limit writes: the limit was the only fault
    ok = subprocess.run(
        [sys.executable, "-m", "core.cli.main", "compact", str(path), "--write", "--force"],
        cwd=ROOT,
        capture_output=True,
        timeout=120,
    )
    assert ok.returncode == 0, ok.stderr.decode()
    assert len(list_backups(path)) == 1 and path.read_bytes().startswith(before)


def test_a_transcript_changing_during_every_copy_is_not_compacted(tmp_path, monkeypatch):
    path, before = _session(tmp_path)
    session = load_transcript(path)
    run = compact(session, keep_recent_tokens=4000)
    assert run.entry is not None
    agent_line = orjson.dumps({"type": "custom", "customType": "agent", "data": 1}) + b"\n"
    real_fsync = os.fsync

    def agent_appends(fd: int) -> None:  # the backup copy's fsync, after the read
        with open(path, "ab") as fh:
            fh.write(agent_line)
        real_fsync(fd)

    monkeypatch.setattr(fsutil.os, "fsync", agent_appends)
    with pytest.raises(fsutil.BackupChanged):
        write_compaction(run, session, force=True)
    monkeypatch.undo()
    assert path.read_bytes() == before + agent_line * fsutil.COPY_ATTEMPTS  # the agent's only
    assert not run.written and run.appended is None
    assert _leftovers(path) == []


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes anyway")
def test_a_read_only_folder_means_no_compaction(tmp_path):
    path, before = _session(tmp_path)
    session = load_transcript(path)
    run = compact(session, keep_recent_tokens=4000)
    path.parent.chmod(0o555)
    try:
        with pytest.raises(PermissionError):
            write_compaction(run, session, force=True)
    finally:
        path.parent.chmod(0o755)
    assert path.read_bytes() == before and _leftovers(path) == []
