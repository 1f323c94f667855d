"""The per-session lane: one compaction at a time, stale locks taken over, OpenClaw's lock honoured."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.safety import session_lock
from core.safety.session_lock import (
    SessionBusy,
    acquire,
    agent_lock_holder,
    lock_path_for,
    read_holder,
    stale_reason,
)


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _now_iso() -> str:
    """A lock's ``createdAt`` of now (a lock from before the boot is stale)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


@pytest.fixture
def transcript(tmp_path):
    p = tmp_path / "agents" / "main" / "sessions" / "s1.jsonl"
    p.parent.mkdir(parents=True)
    p.write_text('{"type":"session","version":3,"id":"s1"}\n')
    return p


@pytest.fixture
def folder(tmp_path):
    return tmp_path / "locks"


def test_one_holder_at_a_time_and_released_after(transcript, folder):
    before = time.time()
    lock = acquire(transcript, tool="memlens compact", folder=folder)
    after = time.time()
    assert lock.held and lock.path.parent == folder and lock.stale_taken is None
    holder = read_holder(lock.path)
    assert holder is not None and holder.pid == os.getpid()
    assert holder.host == socket.gethostname() and holder.tool == "memlens compact"
    assert round(before, 3) <= (holder.created or 0) <= round(after, 3)  # stored to the ms
    with pytest.raises(SessionBusy) as err:
        acquire(transcript, tool="memlens app", folder=folder)
    text = str(err.value)
    assert f"pid {os.getpid()}" in text and "memlens compact" in text and str(transcript) in text
    assert err.value.holder.pid == os.getpid() and not err.value.agent
    lock.release()
    assert not lock.path.exists() and not lock.held
    lock.release()  # twice is harmless
    with acquire(transcript, folder=folder) as again:
        assert again.held
    assert not again.path.exists()


def test_the_lock_lives_outside_the_agent_folder_and_keys_the_real_path(transcript, folder):
    link = transcript.parent / "alias.jsonl"
    link.symlink_to(transcript)
    assert lock_path_for(link, folder) == lock_path_for(transcript, folder)
    with acquire(transcript, folder=folder):
        with pytest.raises(SessionBusy):
            acquire(link, folder=folder)
        assert sorted(p.name for p in transcript.parent.iterdir()) == ["alias.jsonl", "s1.jsonl"]
    other = transcript.with_name("s2.jsonl")
    other.write_text("")
    with acquire(transcript, folder=folder), acquire(other, folder=folder):
        pass  # different sessions run side by side


def test_default_folder_is_memlens_data_dir(transcript, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMLENS_DATA_DIR", str(tmp_path / "data"))
    with acquire(transcript) as lock:
        assert lock.path.parent == tmp_path / "data" / "locks"


def _write_lock(path, **fields):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(fields))


def test_a_dead_holder_is_stale_and_taken_over(transcript, folder):
    path = lock_path_for(transcript, folder)
    pid = _dead_pid()
    _write_lock(path, pid=pid, host=socket.gethostname(), time=time.time(), tool="x", token="t")
    lock = acquire(transcript, folder=folder)
    assert lock.stale_taken is not None and f"process {pid} is gone" in lock.stale_taken
    holder = read_holder(path)
    assert holder is not None and holder.pid == os.getpid() and holder.token == lock.token
    lock.release()
    assert not path.exists()
    assert not any(p.name.startswith(".") for p in folder.iterdir())  # no leftovers


def test_a_reused_pid_is_stale_when_its_start_time_changed(transcript, folder):
    if session_lock.process_start_time(os.getpid()) is None:
        pytest.skip("process start times are read on Linux only")
    path = lock_path_for(transcript, folder)
    start = session_lock.process_start_time(os.getpid())
    _write_lock(path, pid=os.getpid(), time=time.time(), starttime=start + 1, token="t")
    holder = read_holder(path)
    assert holder is not None and "another process" in (stale_reason(holder) or "")
    _write_lock(path, pid=os.getpid(), time=time.time(), starttime=start, token="t")
    holder = read_holder(path)
    assert holder is not None and stale_reason(holder) is None


def test_other_hosts_and_garbled_locks_go_stale_with_age(transcript, folder):
    path = lock_path_for(transcript, folder)
    now = time.time()
    _write_lock(path, pid=1, host="elsewhere.example", time=now - 60, token="t")
    with pytest.raises(SessionBusy, match=r"pid 1 on elsewhere\.example"):
        acquire(transcript, folder=folder)
    _write_lock(path, pid=1, host="elsewhere.example", time=now - 3600, token="t")
    with acquire(transcript, folder=folder) as lock:
        assert "older than 30 minutes" in (lock.stale_taken or "")
    path.write_bytes(b"{not json")
    with pytest.raises(SessionBusy, match="unreadable lock file"):
        acquire(transcript, folder=folder)
    os.utime(path, (now - 60, now - 60))
    with acquire(transcript, folder=folder) as lock:
        assert "unreadable" in (lock.stale_taken or "")


_HOLD = """
import sys, time
from core.safety.session_lock import acquire
lock = acquire(sys.argv[1], tool="memlens compact", folder=__import__("pathlib").Path(sys.argv[2]))
print("held", flush=True)
time.sleep(60)
"""


def test_a_lock_held_by_another_process_then_left_by_a_kill(transcript, folder):
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(transcript), str(folder)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=os.getcwd(),
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        with pytest.raises(SessionBusy) as err:
            acquire(transcript, tool="memlens app", folder=folder)
        assert err.value.holder.pid == proc.pid and f"pid {proc.pid}" in str(err.value)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    # the holder died without releasing: its lock is stale, never a lock forever
    assert lock_path_for(transcript, folder).exists()
    with acquire(transcript, folder=folder) as lock:
        assert f"process {proc.pid} is gone" in (lock.stale_taken or "")


def test_release_never_removes_someone_elses_lock(transcript, folder):
    lock = acquire(transcript, folder=folder)
    lock.path.unlink()  # broken as stale by another memlens, which took it
    with acquire(transcript, folder=folder) as theirs:
        lock.release()
        assert theirs.held and theirs.path.exists()


def test_openclaw_write_lock_is_honoured_read_only(transcript, folder):
    sidecar = transcript.with_name(transcript.name + ".lock")
    # OpenClaw's file-lock payload: {pid, createdAt, starttime?}
    sidecar.write_text(json.dumps({"pid": os.getpid(), "createdAt": _now_iso()}))
    holder = agent_lock_holder(transcript)
    assert holder is not None and holder.pid == os.getpid()
    with pytest.raises(SessionBusy) as err:
        acquire(transcript, folder=folder)
    assert err.value.agent and "the agent is writing it" in str(err.value)
    assert not lock_path_for(transcript, folder).exists()
    # a dead owner: OpenClaw would reclaim it; memlens ignores it and leaves it alone
    before = json.dumps({"pid": _dead_pid(), "createdAt": _now_iso()})
    sidecar.write_text(before)
    assert agent_lock_holder(transcript) is None
    with acquire(transcript, folder=folder):
        pass
    assert sidecar.read_text() == before
    # no pid: its age decides (OpenClaw's shouldRemoveDeadOwnerOrExpiredLock)
    sidecar.write_text(json.dumps({"createdAt": "2000-01-01T00:00:00.000Z"}))
    assert agent_lock_holder(transcript) is None
    fresh = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    sidecar.write_text(json.dumps({"createdAt": fresh}))
    assert agent_lock_holder(transcript) is not None


@pytest.mark.parametrize("pid", [2**40, 2**31, 2**63])
def test_a_pid_no_process_can_have_is_dead(transcript, folder, pid):
    assert session_lock.pid_dead(pid)
    assert session_lock.process_start_time(pid) is None
    # a garbage OpenClaw lock beside the transcript: ignored, never a crash
    sidecar = session_lock.agent_lock_path(transcript)
    sidecar.write_text(json.dumps({"pid": pid, "createdAt": _now_iso()}))
    assert agent_lock_holder(transcript) is None
    session_lock.check_agent_lock(transcript)
    # and a garbage lane lock is taken over
    path = lock_path_for(transcript, folder)
    folder.mkdir(exist_ok=True)
    path.write_text(json.dumps({"pid": pid, "host": socket.gethostname(), "time": time.time()}))
    with acquire(transcript, folder=folder) as lock:
        assert lock.stale_taken is not None and "is gone" in lock.stale_taken


def test_a_lock_taken_before_the_boot_is_stale(monkeypatch):
    """Off Linux no start time tells a reused pid: a lock older than the boot is stale."""
    monkeypatch.setattr(session_lock, "process_start_time", lambda pid: None)  # as on macOS
    boot = time.time() - 3600
    monkeypatch.setattr(session_lock, "boot_time", lambda: boot)
    here = socket.gethostname()
    live = os.getpid()  # the pid is alive now: after a reboot, some other process's
    old = session_lock.LockHolder(Path("x.lock"), live, here, boot - 86_400, starttime=5)
    reason = stale_reason(old)
    assert reason is not None and "before the system started" in reason
    assert stale_reason(session_lock.LockHolder(Path("x.lock"), live, None, boot - 600)) is not None
    # taken after the boot (or within the clock's margin): its live pid is respected
    assert stale_reason(session_lock.LockHolder(Path("x.lock"), live, here, boot + 10)) is None
    assert stale_reason(session_lock.LockHolder(Path("x.lock"), live, here, boot - 30)) is None
    # unknown boot time: as before
    monkeypatch.setattr(session_lock, "boot_time", lambda: None)
    assert stale_reason(old) is None


def test_the_boot_time_is_in_the_past():
    boot = session_lock.boot_time()
    if sys.platform.startswith("linux") or sys.platform == "darwin":
        assert boot is not None and 0 < boot < time.time()
