"""Appends are whole lines in one write; rewrites are atomic with a backup."""

from __future__ import annotations

import errno
import hashlib
import os

import pytest

from core.io import fsutil
from core.io.fsutil import (
    BACKUP_INFIX,
    BackupChanged,
    add_write_observer,
    append_lines,
    atomic_write,
    file_digest,
    make_backup,
    remove_write_observer,
)


def test_append_whole_lines(tmp_path):
    p = tmp_path / "f.jsonl"
    r1 = append_lines(p, b'{"a":1}\n')
    r2 = append_lines(p, b'{"b":2}\n{"c":3}\n')
    assert p.read_bytes() == b'{"a":1}\n{"b":2}\n{"c":3}\n'
    assert (r1.offset, r2.offset, r2.length) == (0, 8, 16)
    with pytest.raises(ValueError, match="whole lines"):
        append_lines(p, b'{"d":4}')
    assert p.read_bytes().endswith(b'{"c":3}\n')


def test_append_never_glues_to_a_partial_line(tmp_path):
    p = tmp_path / "f.jsonl"
    p.write_bytes(b'{"a":1}\n{"partial')
    r = append_lines(p, b'{"b":2}\n')
    assert p.read_bytes() == b'{"a":1}\n{"partial\n{"b":2}\n'
    assert r.offset == 17 and r.length == 9


def test_atomic_write_keeps_backup_and_mode(tmp_path):
    p = tmp_path / "sessions.json"
    p.write_bytes(b"old")
    p.chmod(0o600)
    backup = atomic_write(p, b"new")
    assert p.read_bytes() == b"new" and backup.read_bytes() == b"old"
    assert p.stat().st_mode & 0o777 == 0o600
    second = atomic_write(p, b"newer")
    assert second != backup and second.read_bytes() == b"new"
    assert sorted(x.name for x in tmp_path.iterdir() if x.name.endswith(".tmp")) == []


def test_atomic_write_failure_leaves_file(tmp_path, monkeypatch):
    p = tmp_path / "x.json"
    p.write_bytes(b"keep me")

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr("core.io.fsutil.os.replace", boom)
    with pytest.raises(OSError, match="disk full"):
        atomic_write(p, b"lost")
    assert p.read_bytes() == b"keep me"
    assert not [x for x in tmp_path.iterdir() if x.name.endswith(".tmp")]


# --- backups: always whole -------------------------------------------------------------


def _leftovers(folder, name):
    """Every backup or temp file of *name* in *folder*."""
    return sorted(p.name for p in folder.iterdir() if p.name != name and name in p.name)


def test_backup_is_a_verified_copy_under_its_name_only(tmp_path):
    p = tmp_path / "s.jsonl"
    data = b'{"a":1}\n' * 50_000 + b'{"partial'
    p.write_bytes(data)
    p.chmod(0o640)
    seen = []
    add_write_observer(seen.append)
    try:
        made = make_backup(p)
    finally:
        remove_write_observer(seen.append)
    assert made.read_bytes() == data and made.stat().st_mode & 0o777 == 0o640
    assert made.name.startswith("s.jsonl" + BACKUP_INFIX)
    assert _leftovers(tmp_path, "s.jsonl") == [made.name]  # no temp file left
    (record,) = seen
    assert record.sha256 == hashlib.sha256(data).hexdigest()
    assert (record.length, record.lines, record.backup) == (len(data), 50_001, str(made))
    assert file_digest(made) == (len(data), record.sha256)


def test_a_file_that_keeps_changing_gets_no_backup(tmp_path, monkeypatch):
    """An agent appending during every copy: no backup, no temp file, an error."""
    p = tmp_path / "s.jsonl"
    p.write_bytes(b'{"a":1}\n' * 1000)
    real_fsync = os.fsync

    def agent_appends(fd):  # called on the copy, after the original was read
        with open(p, "ab") as fh:
            fh.write(b'{"agent":"line"}\n')
        real_fsync(fd)

    monkeypatch.setattr(fsutil.os, "fsync", agent_appends)
    with pytest.raises(BackupChanged, match="changed during each of 3 copies"):
        make_backup(p)
    monkeypatch.undo()
    assert _leftovers(tmp_path, "s.jsonl") == []
    assert p.read_bytes().count(b"agent") == fsutil.COPY_ATTEMPTS


def test_a_file_that_changed_once_is_copied_again(tmp_path, monkeypatch):
    p = tmp_path / "s.jsonl"
    p.write_bytes(b'{"a":1}\n')
    real_fsync, calls = os.fsync, []

    def agent_appends_once(fd):
        calls.append(fd)
        if len(calls) == 1:
            with open(p, "ab") as fh:
                fh.write(b'{"agent":"line"}\n')
        real_fsync(fd)

    monkeypatch.setattr(fsutil.os, "fsync", agent_appends_once)
    made = make_backup(p)
    monkeypatch.undo()
    assert made.read_bytes() == p.read_bytes() == b'{"a":1}\n{"agent":"line"}\n'
    assert _leftovers(tmp_path, "s.jsonl") == [made.name]


def test_a_failed_copy_leaves_nothing(tmp_path, monkeypatch):
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"{}\n")

    def disk_full(*_a, **_k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fsutil.shutil, "copystat", disk_full)
    with pytest.raises(OSError, match="No space"):
        make_backup(p)
    monkeypatch.undo()
    assert _leftovers(tmp_path, "s.jsonl") == []
    with pytest.raises(FileNotFoundError):
        make_backup(tmp_path / "gone.jsonl")
    assert _leftovers(tmp_path, "gone.jsonl") == []


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes anyway")
def test_a_read_only_folder_gets_no_backup_and_no_rewrite(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    p = folder / "sessions.json"
    p.write_bytes(b"old")
    folder.chmod(0o555)
    try:
        with pytest.raises(PermissionError):
            atomic_write(p, b"new")
        assert p.read_bytes() == b"old" and _leftovers(folder, "sessions.json") == []
    finally:
        folder.chmod(0o755)


def test_a_backup_never_replaces_a_name_claimed_meanwhile(tmp_path):
    """Two backups in the same second, from two callers: both kept, neither replaced."""
    p = tmp_path / "f.json"
    p.write_bytes(b"v1")
    first = make_backup(p)
    p.write_bytes(b"v2")
    second = make_backup(p)
    if second.name == first.name + ".1":  # same second: the second took the next name
        assert first.read_bytes() == b"v1"
    assert second.read_bytes() == b"v2" and first != second


def test_a_pruned_name_is_not_reused(tmp_path):
    """Backups of one second keep their order by ``.N`` even when older ones are removed."""
    base = tmp_path / "f.json.memlens-backup-20260101T000000"
    (tmp_path / (base.name + ".2")).write_bytes(b"newest so far")  # base and .1 were pruned
    (tmp_path / (base.name + ".x")).write_bytes(b"not a backup name")

    def claim():
        tmp = tmp_path / ".f.json.memlens-copying-1.tmp"
        tmp.write_bytes(b"copy")
        return fsutil._claim(str(tmp), base)

    assert claim().name == base.name + ".3"
    assert claim().name == base.name + ".4"
    (tmp_path / (base.name + ".4")).unlink()
    assert claim().name == base.name + ".4"  # the newest may go; the order still holds
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_copy_that_is_not_what_was_read_is_never_a_backup(tmp_path, monkeypatch):
    """The copy is read back and hashed: bytes the disk stored wrongly are caught."""
    p = tmp_path / "s.jsonl"
    p.write_bytes(b'{"a":1}\n' * 1000)
    real_fsync = os.fsync

    def disk_flips_a_byte(fd):  # the copy's fsync: its bytes on disk differ from those read
        os.pwrite(fd, b"X", 100)
        real_fsync(fd)

    monkeypatch.setattr(fsutil.os, "fsync", disk_flips_a_byte)
    with pytest.raises(OSError, match="does not match") as err:
        make_backup(p)
    monkeypatch.undo()
    assert err.value.errno == errno.EIO
    assert _leftovers(tmp_path, "s.jsonl") == []
    assert p.read_bytes() == b'{"a":1}\n' * 1000
