"""Write observers see every write with its offset and line; the activity log keeps them."""

from __future__ import annotations

import hashlib
import threading

import orjson
import pytest

from core.io import fsutil
from core.io.fsutil import (
    WriteRecord,
    add_write_observer,
    append_lines,
    atomic_write,
    make_backup,
    remove_write_observer,
)
from core.io.writes import PlannedWrite
from core.safety.activity import ActivityLog, load_activity, short_summary


@pytest.fixture
def seen():
    got: list[WriteRecord] = []
    add_write_observer(got.append)
    yield got
    remove_write_observer(got.append)


def _lines_at(data: bytes, line: int) -> bytes:
    return data.split(b"\n")[line - 1]


def test_append_records_offset_and_line(tmp_path, seen):
    p = tmp_path / "knowledge.jsonl"
    r1 = append_lines(p, b'{"a":1}\n{"b":2}\n')
    r2 = append_lines(p, b'{"c":3}\n')
    assert [r.action for r in seen] == ["append", "append"]
    first, second = seen
    assert (first.path, first.offset, first.length, first.first_line, first.lines) == (
        str(p),
        0,
        16,
        1,
        2,
    )
    assert (second.offset, second.length, second.first_line, second.lines) == (16, 8, 3, 1)
    assert (second.offset, second.length) == (r2.offset, r2.length) and r1.offset == 0
    data = p.read_bytes()
    assert data[second.offset : second.offset + second.length] == b'{"c":3}\n'
    assert _lines_at(data, second.first_line) == b'{"c":3}'
    assert second.backup is None and second.time > 0


def test_append_after_a_partial_line_counts_the_glue_newline(tmp_path, seen):
    p = tmp_path / "t.jsonl"
    p.write_bytes(b'{"x":1}\n{"x":2}\n{"partial')
    append_lines(p, b'{"y":1}\n')
    (rec,) = seen
    assert (rec.offset, rec.length) == (25, 9)  # the newline ending the partial line, then ours
    assert rec.first_line == 4 and rec.lines == 1
    assert _lines_at(p.read_bytes(), rec.first_line) == b'{"y":1}'


def test_line_numbers_follow_other_writers(tmp_path, seen):
    # Another process (the agent) appends between our writes: our line numbers stay true.
    p = tmp_path / "t.jsonl"
    append_lines(p, b'{"m":1}\n')
    with open(p, "ab") as fh:
        fh.write(b"".join(b'{"agent":%d}\n' % i for i in range(1000)))
    append_lines(p, b'{"m":2}\n')
    assert seen[-1].first_line == 1002
    assert _lines_at(p.read_bytes(), 1002) == b'{"m":2}'
    assert seen[-1].offset == p.stat().st_size - 8


def test_line_count_over_several_chunks(tmp_path):
    p = tmp_path / "big.jsonl"
    p.write_bytes(b"x\n" * 5000)
    assert fsutil.line_at(p, 0) == 1
    assert fsutil.line_at(p, 2 * 4321, chunk=1000) == 4322
    assert fsutil.line_at(tmp_path / "gone", 10) == 0


def test_rewrite_create_and_backup_records(tmp_path, seen):
    p = tmp_path / "sessions.json"
    atomic_write(p, b'{"a":1}\n{"b":2}')
    assert seen[-1].action == "create" and seen[-1].backup is None
    assert (seen[-1].offset, seen[-1].length, seen[-1].first_line, seen[-1].lines) == (0, 15, 1, 2)
    seen.clear()
    saved = atomic_write(p, b"{}\n")
    backup, rewrite = seen
    assert backup.action == "backup" and backup.path == str(p) and backup.backup == str(saved)
    assert (backup.length, backup.lines) == (15, 2)
    assert backup.sha256 == hashlib.sha256(b'{"a":1}\n{"b":2}').hexdigest()
    assert rewrite.sha256 is None
    assert rewrite.action == "rewrite" and rewrite.backup == str(saved)
    assert (rewrite.length, rewrite.lines) == (3, 1)
    seen.clear()
    copy = make_backup(p)
    assert [(r.action, r.backup) for r in seen] == [("backup", str(copy))]


def test_no_record_for_a_failed_write(tmp_path, seen):
    with pytest.raises(OSError):
        append_lines(tmp_path / "missing-dir" / "x.jsonl", b"{}\n")
    with pytest.raises(ValueError):
        append_lines(tmp_path / "x.jsonl", b"{}")
    assert seen == []


def test_a_failing_observer_never_breaks_the_write(tmp_path, seen):
    def boom(_record):
        raise RuntimeError("observer bug")

    add_write_observer(boom)
    try:
        append_lines(tmp_path / "x.jsonl", b"{}\n")
    finally:
        remove_write_observer(boom)
    assert (tmp_path / "x.jsonl").read_bytes() == b"{}\n" and len(seen) == 1
    append_lines(tmp_path / "x.jsonl", b"{}\n")  # removed: no error either
    assert len(seen) == 2


def test_appends_from_threads_are_all_recorded(tmp_path, seen):
    p = tmp_path / "x.jsonl"

    def work(n):
        for i in range(20):
            append_lines(p, b'{"t":%d,"i":%d}\n' % (n, i))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    data = p.read_bytes()
    assert len(seen) == 80 and data.count(b"\n") == 80
    assert sorted(r.first_line for r in seen) == list(range(1, 81))
    for r in seen:
        line = data[r.offset : r.offset + r.length]
        assert line.endswith(b"\n") and orjson.loads(line)
        assert _lines_at(data, r.first_line) == line[:-1]


# --- the activity file -----------------------------------------------------------


def test_activity_round_trip_and_no_content(tmp_path):
    log = ActivityLog(tmp_path / "data" / "activity.jsonl")
    got: list[WriteRecord] = []
    log.subscribe(got.append)
    add_write_observer(log.record)
    try:
        target = tmp_path / "knowledge.jsonl"
        secret_line = b'{"content":"password: hunter2hunter2 and a long unique phrase"}\n'
        log.expect([PlannedWrite(str(target), "append", "append 1 fact line (ADD of k1)")])
        append_lines(target, secret_line)
        append_lines(target, b'{"content":"second"}\n')
        atomic_write(tmp_path / "sessions.json", b"{}")
    finally:
        remove_write_observer(log.record)
    read = load_activity(log.path)
    assert read.problems == []
    assert read.records == got
    assert [r.action for r in read.records] == ["append", "append", "create"]
    assert read.records[0].summary == "append 1 fact line (ADD of k1)"
    assert read.records[1].summary == "appended 1 line"  # the expectation was used once
    assert (read.records[1].offset, read.records[1].first_line) == (len(secret_line), 2)
    text = log.path.read_text()
    assert "hunter2" not in text and "unique phrase" not in text and "second" not in text
    assert "sha256" not in orjson.loads(text.splitlines()[0])  # only backups have one
    assert set(orjson.loads(text.splitlines()[0])) == {
        "time",
        "file",
        "action",
        "offset",
        "length",
        "line",
        "lines",
        "backup",
        "summary",
    }


def test_summaries_are_redacted_and_short(tmp_path):
    log = ActivityLog(tmp_path / "a.jsonl")
    rec = WriteRecord(1.0, str(tmp_path / "k.jsonl"), "append", 0, 10, 1, 1)
    log.expect(
        [
            PlannedWrite(
                rec.path, "append", "edit: OPENAI_API_KEY=sk-abcdefghijklmnopqrstuv " + "word " * 80
            )
        ]
    )
    out = log.record(rec)
    assert "sk-abcdefghijklmnopqrstuv" not in out.summary and "[REDACTED]" in out.summary
    assert len(out.summary) <= 160 and out.summary.endswith("…")
    assert short_summary("a\nb\tc") == "a b c"


def test_expectations_expire_and_match_path_and_action(tmp_path):
    now = [1000.0]
    log = ActivityLog(tmp_path / "a.jsonl", clock=lambda: now[0])
    k = str(tmp_path / "k.jsonl")
    log.expect([PlannedWrite(k, "rewrite", "rewrite sessions")])
    log.expect([PlannedWrite(str(tmp_path / "other.jsonl"), "append", "other file")])
    append = WriteRecord(1.0, k, "append", 0, 3, 1, 1)
    assert log.record(append).summary == "appended 1 line"  # wrong action: not taken
    assert log.record(WriteRecord(1.0, k, "create", 0, 3, 1, 1)).summary == "rewrite sessions"
    log.expect([PlannedWrite(k, "append", "stale")])
    now[0] += 1000
    assert log.record(append).summary == "appended 1 line"


def test_a_planned_backup_matches_the_backup_made(tmp_path):
    log = ActivityLog(tmp_path / "a.jsonl")
    src = tmp_path / "session.jsonl"
    src.write_bytes(b"{}\n")
    planned = fsutil.backup_path(src)
    log.expect([PlannedWrite(str(planned), "backup", "copy session.jsonl before appending")])
    log.expect([PlannedWrite(str(src), "append", "append 1 compaction entry")])
    add_write_observer(log.record)
    try:
        make_backup(src)
        made = make_backup(src)  # a second one in the same second: a ".1" name
        append_lines(src, b"{}\n")
    finally:
        remove_write_observer(log.record)
    records = log.load().records
    assert records[1].sha256 == hashlib.sha256(b"{}\n").hexdigest()  # kept in the file
    assert b'"sha256"' in log.path.read_bytes().splitlines()[1]
    summaries = [r.summary for r in records]
    assert summaries == [
        "copy session.jsonl before appending",
        f"backup copy to {made.name}",
        "append 1 compaction entry",
    ]


def test_bad_lines_are_tolerated(tmp_path):
    path = tmp_path / "activity.jsonl"
    good = ActivityLog(path)
    good.record(WriteRecord(5.0, "/a/k.jsonl", "append", 7, 9, 2, 1))
    with open(path, "ab") as fh:
        fh.write(b"not json\n")
        fh.write(b'{"time":1,"file":"/x","action":"explode","offset":0}\n')
        fh.write(b'{"time":"noon","file":"/x","action":"append"}\n')
        fh.write(b"[1,2]\n\n")
        fh.write(b'{"time":6,"file":"/a/k.jsonl","action":"append","offset":-1}\n')
    good.record(WriteRecord(8.0, "/a/k.jsonl", "backup", 0, 9, 1, 1, backup="/a/k.bak"))
    with open(path, "ab") as fh:
        fh.write(b'{"time":9,"file":"/a/k.jsonl","act')  # cut short
    read = good.load()
    assert [(r.time, r.action, r.offset) for r in read.records] == [
        (5.0, "append", 7),
        (8.0, "backup", 0),
    ]
    assert read.records[1].backup == "/a/k.bak"
    assert [p.line for p in read.problems] == [2, 3, 4, 5, 7, 9]
    assert all(p.file == str(path) for p in read.problems)
    assert load_activity(tmp_path / "none.jsonl").records == []


def test_log_rotates_and_survives_an_unwritable_file(tmp_path):
    path = tmp_path / "activity.jsonl"
    log = ActivityLog(path, max_bytes=400)
    rec = WriteRecord(5.0, "/a/k.jsonl", "append", 7, 9, 2, 1)
    for _ in range(5):
        log.record(rec)
    assert (tmp_path / "activity.jsonl.1").exists()
    assert 1 <= len(log.load().records) < 5
    blocked = ActivityLog(tmp_path / "file-not-dir" / "activity.jsonl")
    (tmp_path / "file-not-dir").write_text("x")
    got: list[WriteRecord] = []
    blocked.subscribe(got.append)
    assert blocked.record(rec).summary == "appended 1 line"
    assert blocked.last_error and "file-not-dir" in blocked.last_error and len(got) == 1
