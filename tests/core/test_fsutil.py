"""Appends are whole lines in one write; rewrites are atomic with a backup."""

from __future__ import annotations

import pytest

from core.fsutil import append_lines, atomic_write


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

    monkeypatch.setattr("core.fsutil.os.replace", boom)
    with pytest.raises(OSError, match="disk full"):
        atomic_write(p, b"lost")
    assert p.read_bytes() == b"keep me"
    assert not [x for x in tmp_path.iterdir() if x.name.endswith(".tmp")]
