"""Backups are listed, checked, pruned by retention and restored (core and ``memlens backups``)."""

from __future__ import annotations

import hashlib
import os
import time

import orjson
import pytest

from core.cli.main import run_cli
from core.io import fsutil
from core.safety.activity import ActivityLog
from core.safety.backups import (
    Backup,
    RestoreRefused,
    check_backup,
    list_backups,
    parse_name,
    plan_restore,
    prune,
    prune_plan,
    recorded_hashes,
    restore,
)

DAY = 86_400.0
T0 = 1_790_000_000.0  # 2026-09-21


def _name(of: str, t: float, seq: int = 0) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(t))
    return f"{of}.memlens-backup-{stamp}" + (f".{seq}" if seq else "")


def _backup(folder, of: str, t: float, data: bytes = b"{}\n", seq: int = 0):
    p = folder / _name(of, t, seq)
    p.write_bytes(data)
    return p


def test_names(tmp_path):
    assert parse_name(_name("s.jsonl", T0)) == ("s.jsonl", T0, 0)
    assert parse_name("s.jsonl.memlens-backup-20260921T140000.3")[2] == 3
    for name in (
        "s.jsonl",
        ".s.jsonl.memlens-copying-abc123.tmp",  # a copy in progress or killed
        "s.jsonl.memlens-backup-notadate",
        "s.jsonl.memlens-backup-20261399T000000",  # digits, but no date
        "s.jsonl.memlens-backup-20260921T140000.0",
        "s.jsonl.memlens-backup-20260921T140000.x",
    ):
        assert parse_name(name) is None, name


def test_list_in_a_data_directory_beside_a_file_and_one_backup(tmp_path):
    sessions = tmp_path / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    s = sessions / "a.jsonl"
    s.write_bytes(b"{}\n")
    (tmp_path / "sessions.json").write_bytes(b"{}")
    b1 = _backup(sessions, "a.jsonl", T0)
    b2 = _backup(sessions, "a.jsonl", T0, seq=1)
    b0 = _backup(sessions, "a.jsonl", T0 - DAY)
    other = _backup(tmp_path, "sessions.json", T0)
    (sessions / ".a.jsonl.memlens-copying-xyz.tmp").write_bytes(b"{")  # killed copy
    (sessions / "a.jsonl.memlens-backup-notes.txt").write_bytes(b"mine")
    (sessions / "b.jsonl.memlens-backup-20260921T140000").mkdir()  # a folder: not a backup
    os.symlink(b1, sessions / _name("a.jsonl", T0 + 5))  # a link: not a backup
    (tmp_path / "node_modules").mkdir()
    _backup(tmp_path / "node_modules", "x.js", T0)
    found = list_backups(tmp_path)
    assert [b.path for b in found] == [str(b0), str(b1), str(b2), str(other)]
    assert found[1] == Backup(str(b1), str(s), T0, 0, 3)
    assert [b.path for b in list_backups(s)] == [str(b0), str(b1), str(b2)]
    assert [b.path for b in list_backups(b2)] == [str(b2)]
    with pytest.raises(FileNotFoundError):
        list_backups(tmp_path / "nope")


def test_check_hash_lines_and_the_recorded_hash(tmp_path):
    s = tmp_path / "s.jsonl"
    s.write_bytes(b'{"a":1}\n{"b":2}\n')
    log = ActivityLog(tmp_path / "activity.jsonl")
    fsutil.add_write_observer(log.record)
    try:
        made = fsutil.make_backup(s)
    finally:
        fsutil.remove_write_observer(log.record)
    recorded = recorded_hashes(log.load().records)
    (b,) = list_backups(s)
    c = check_backup(b, recorded=recorded)
    assert c.sha256 == hashlib.sha256(s.read_bytes()).hexdigest() == c.recorded
    assert (c.lines, c.size, c.complete, c.grown_from, c.current_size) == (2, 16, True, True, 16)
    with open(s, "ab") as fh:  # the agent appends: the backup is a prefix of the file
        fh.write(b'{"c":3}\n')
    assert check_backup(b).grown_from is True and check_backup(b).current_size == 24
    made.write_bytes(b'{"a":1}\n{"b":3}\n')  # same size, other bytes: not the copy made
    c = check_backup(list_backups(s)[0], recorded=recorded)
    assert not c.complete and c.grown_from is False
    assert check_backup(list_backups(s)[0]).complete  # without the log, only the size tells
    s.unlink()
    assert check_backup(list_backups(made)[0]).grown_from is None


def test_retention_keeps_the_newest_per_file_and_what_is_protected(tmp_path):
    a = [_backup(tmp_path, "a.jsonl", T0 - n * DAY) for n in range(5)]  # a[0] newest
    b = [_backup(tmp_path, "b.json", T0 - 100 * DAY)]  # alone and old: kept anyway
    found = list_backups(tmp_path)

    def removed(**kw):
        return sorted(x.name for x in prune_plan(found, now=T0 + 60, **kw))

    assert removed(keep=0, days=0) == []
    assert removed(keep=3, days=0) == sorted(p.name for p in a[3:])
    assert removed(keep=0, days=3) == sorted(p.name for p in a[3:])  # over 3 days old
    assert removed(keep=0, days=1) == sorted(p.name for p in a[1:])
    assert removed(keep=1, days=0) == sorted(p.name for p in a[1:])
    assert removed(keep=1, days=0, protect=[str(a[4])]) == sorted(p.name for p in a[1:4])
    assert b[0].name not in removed(keep=1, days=1)
    with pytest.raises(ValueError):
        prune_plan(found, keep=-1, days=0)


def test_prune_removes_only_backups_and_stale_temps(tmp_path):
    s = tmp_path / "s.jsonl"
    s.write_bytes(b"{}\n")
    old = [_backup(tmp_path, "s.jsonl", T0 - n * DAY) for n in range(1, 4)]
    new = fsutil.make_backup(s)
    temp = tmp_path / ".s.jsonl.memlens-copying-abc.tmp"
    temp.write_bytes(b"{")
    keep_me = [tmp_path / "s.jsonl.bak", tmp_path / "notes.memlens-backup-x", tmp_path / ".x.tmp"]
    for p in keep_me:
        p.write_bytes(b"not memlens's")
    dry = prune(tmp_path, keep=2, days=0, dry_run=True)
    assert [b.path for b in dry.removed] == [str(old[2]), str(old[1])] and dry.dry_run
    assert all(p.exists() for p in old)
    done = prune(tmp_path, keep=2, days=0, now=time.time() + 7200)
    assert sorted(b.name for b in done.removed) == sorted(p.name for p in old[1:])
    assert done.temps == [str(temp)] and done.failed == []
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(["s.jsonl", new.name, old[0].name, *(p.name for p in keep_me)])


def test_restore_keeps_a_backup_of_the_file_it_replaces(tmp_path):
    s = tmp_path / "s.jsonl"
    s.write_bytes(b'{"v":1}\n')
    s.chmod(0o640)
    first = fsutil.make_backup(s)
    s.write_bytes(b'{"v":1}\n{"broken"\n')
    seen = []
    fsutil.add_write_observer(seen.append)
    try:
        plan = plan_restore(list_backups(first)[0])
        assert "replace" in plan.describe() and "8 bytes" in plan.describe()
        done = restore(plan, expected_sha256=hashlib.sha256(b'{"v":1}\n').hexdigest())
    finally:
        fsutil.remove_write_observer(seen.append)
    assert s.read_bytes() == b'{"v":1}\n' and s.stat().st_mode & 0o777 == 0o640
    assert done.saved is not None and open(done.saved, "rb").read() == b'{"v":1}\n{"broken"\n'
    assert [r.action for r in seen] == ["backup", "rewrite"]
    assert seen[1].path == str(s) and seen[1].backup == done.saved
    # and the restore itself can be undone the same way
    restore(plan_restore(list_backups(done.saved)[0]))
    assert s.read_bytes() == b'{"v":1}\n{"broken"\n'


def test_an_append_between_the_backup_and_the_replace_is_never_lost(tmp_path):
    """The agent appends right after restore's backup: the restore stops, the line stays."""
    s = tmp_path / "s.jsonl"
    s.write_bytes(b'{"v":1}\n')
    first = fsutil.make_backup(s)
    s.write_bytes(b'{"v":1}\n{"v":2}\n')
    plan = plan_restore(list_backups(first)[0])

    def agent_appends(record: fsutil.WriteRecord) -> None:
        if record.action == "backup":
            with open(s, "ab") as fh:
                fh.write(b'{"agent":"line"}\n')

    fsutil.add_write_observer(agent_appends)
    try:
        with pytest.raises(fsutil.FileChangedError, match="nothing was replaced"):
            restore(plan)
    finally:
        fsutil.remove_write_observer(agent_appends)
    assert s.read_bytes() == b'{"v":1}\n{"v":2}\n{"agent":"line"}\n'
    assert not list(tmp_path.glob(".s.jsonl.*.tmp"))  # no temp file left behind


def test_restore_refuses_a_changed_file_or_a_changed_backup(tmp_path):
    s = tmp_path / "s.jsonl"
    s.write_bytes(b"{}\n")
    made = fsutil.make_backup(s)
    plan = plan_restore(list_backups(made)[0])
    with open(s, "ab") as fh:
        fh.write(b'{"agent":1}\n')
    with pytest.raises(RestoreRefused, match="changed since"):
        restore(plan)
    assert s.read_bytes() == b'{}\n{"agent":1}\n'
    plan = plan_restore(list_backups(made)[0])
    with pytest.raises(RestoreRefused, match="SHA-256"):
        restore(plan, expected_sha256="0" * 64)
    made.write_bytes(b"{}\n{}\n")
    with pytest.raises(RestoreRefused, match="not the 3 listed"):
        restore(plan)
    assert s.read_bytes() == b'{}\n{"agent":1}\n'
    assert len(list_backups(s)) == 1  # no backup of a restore that did not happen


def test_restore_a_file_that_is_gone(tmp_path):
    s = tmp_path / "s.jsonl"
    s.write_bytes(b"{}\n")
    s.chmod(0o604)
    made = fsutil.make_backup(s)
    s.unlink()
    done = restore(plan_restore(list_backups(made)[0]))
    assert s.read_bytes() == b"{}\n" and done.saved is None
    assert s.stat().st_mode & 0o777 == 0o604


# --- memlens backups ----------------------------------------------------------------


def _json(capsys, *argv, code=0):
    assert run_cli([*argv, "--json"]) == code
    return orjson.loads(capsys.readouterr().out)


def test_cli_lists_prunes_and_restores(tmp_path, capsys):
    home = tmp_path / "home"
    sessions = home / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    s = sessions / "s.jsonl"
    s.write_bytes(b'{"a":1}\n')
    log = ActivityLog(tmp_path / "activity.jsonl")
    fsutil.add_write_observer(log.record)
    try:
        made = [fsutil.make_backup(s)]
        s.write_bytes(b'{"a":1}\n{"b":2}\n')
        made.append(fsutil.make_backup(s))
    finally:
        fsutil.remove_write_observer(log.record)
    out = _json(capsys, "backups", str(home), "--activity", str(log.path))
    assert [b["path"] for b in out["backups"]] == [str(p) for p in made]
    first = out["backups"][0]
    assert first["of"] == str(s) and first["size"] == 8 and first["lines"] == 1
    assert first["complete"] and first["sha256"] == first["recorded_sha256"]
    assert first["of_grown_from_backup"] is True

    assert run_cli(["backups", str(s)]) == 0
    text = capsys.readouterr().out
    assert "2 backup(s)" in text and "complete, hash as recorded" not in text
    assert made[1].name in text

    made[0].write_bytes(b'{"a":9}\n')  # damaged since: the log's hash says so
    out = _json(capsys, "backups", str(home), "--activity", str(log.path), code=1)
    assert [b["complete"] for b in out["backups"]] == [False, True]

    dry = _json(capsys, "backups", str(home), "--prune", "--keep", "1")
    assert dry["dry_run"] and [b["path"] for b in dry["removed"]] == [str(made[0])]
    assert made[0].exists()
    done = _json(capsys, "backups", str(home), "--prune", "--keep", "1", "--write")
    assert not done["dry_run"] and not made[0].exists() and made[1].exists()

    s.write_bytes(b"damaged by hand\n")
    assert run_cli(["backups", str(made[1]), "--restore"]) == 0
    assert "would replace" in capsys.readouterr().out and s.read_bytes() == b"damaged by hand\n"
    done = _json(capsys, "backups", str(made[1]), "--restore", "--write")
    assert s.read_bytes() == b'{"a":1}\n{"b":2}\n' and done["restored"] == str(s)
    assert open(done["backup_of_replaced"], "rb").read() == b"damaged by hand\n"


def test_cli_errors(tmp_path, capsys):
    s = tmp_path / "s.jsonl"
    s.write_bytes(b"{}\n")
    assert run_cli(["backups", str(tmp_path / "nope")]) == 1
    assert run_cli(["backups", str(s), "--restore", "--write"]) == 1
    assert "not a memlens backup" in capsys.readouterr().err
    assert run_cli(["backups", str(s), "--write"]) == 1
    assert "--write goes with" in capsys.readouterr().err
    assert run_cli(["backups", str(tmp_path), "--prune", "--keep", "-1"]) == 1
    assert run_cli(["backups", str(tmp_path)]) == 0
    assert "no memlens backups" in capsys.readouterr().out
    made = fsutil.make_backup(s)
    with open(s, "ab") as fh:
        fh.write(b"{}\n")
    assert run_cli(["backups", str(made), "--restore", "--write"]) == 0  # planned and done now
    assert s.read_bytes() == b"{}\n"
