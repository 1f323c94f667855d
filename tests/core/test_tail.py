"""core.io.tail: complete lines only, in order, once; resets on truncation and replacement."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from core.io.tail import GUARD, Tail


def lines_of(event):
    return event.data.splitlines()


def test_missing_file_then_created_is_read_from_the_start(tmp_path):
    p = tmp_path / "f.jsonl"
    tail = Tail(p)
    assert tail.poll().kind == "none"  # never existed: nothing to say
    p.write_bytes(b"a\nb\n")
    ev = tail.poll()
    assert (ev.kind, ev.first_line, ev.offset, ev.lines) == ("append", 1, 0, 2)
    assert lines_of(ev) == [b"a", b"b"]
    assert tail.poll().kind == "none"


def test_partial_last_line_waits_for_its_newline(tmp_path):
    p = tmp_path / "f.jsonl"
    p.write_bytes(b'{"a":1}\n{"b":')
    tail = Tail(p)
    ev = tail.poll()
    assert lines_of(ev) == [b'{"a":1}'] and ev.first_line == 1
    assert tail.pending == b'{"b":'
    assert tail.poll().kind == "none"
    with open(p, "ab") as fh:
        fh.write(b"2")
    assert tail.poll().kind == "none"  # still no newline
    with open(p, "ab") as fh:
        fh.write(b'}\n{"c":3}\n{"d"')
    ev = tail.poll()
    assert lines_of(ev) == [b'{"b":2}', b'{"c":3}']
    assert (ev.first_line, ev.offset, ev.lines) == (2, 8, 2)
    assert tail.pending == b'{"d"' and tail.position == p.stat().st_size


def test_file_ending_without_newline_then_completed(tmp_path):
    p = tmp_path / "f.jsonl"
    p.write_bytes(b"one\ntwo")
    tail = Tail(p)
    assert lines_of(tail.poll()) == [b"one"]
    with open(p, "ab") as fh:
        fh.write(b"\n")
    ev = tail.poll()
    assert lines_of(ev) == [b"two"] and ev.first_line == 2 and ev.offset == 4


def test_start_offset_inside_a_line_moves_back_and_counts_lines(tmp_path):
    p = tmp_path / "f.jsonl"
    p.write_bytes(b"l1\nl2\nl3-partial")
    size = p.stat().st_size
    tail = Tail(p, size)  # a loader read everything, the last line was partial
    assert tail.offset == 6 and tail.line == 3
    with open(p, "ab") as fh:
        fh.write(b"\nl4\n")
    ev = tail.poll()
    assert lines_of(ev) == [b"l3-partial", b"l4"] and ev.first_line == 3 and ev.offset == 6
    # Counting from an anchor gives the same line number.
    again = Tail(p, 17, anchor=(2, 3))
    assert (again.offset, again.line) == (17, 4)
    inside = Tail(p, 9, anchor=(2, 3))  # inside line 3: back to its start
    assert (inside.offset, inside.line) == (6, 3)


def test_truncation_resets_with_the_whole_new_content(tmp_path):
    p = tmp_path / "f.jsonl"
    p.write_bytes(b"a\nb\nc\n")
    tail = Tail(p)
    tail.poll()
    p.write_bytes(b"x\n")  # truncated and rewritten shorter
    ev = tail.poll()
    assert ev.kind == "reset" and ev.reason == "truncated"
    assert lines_of(ev) == [b"x"] and ev.offset == 0 and ev.first_line == 1
    with open(p, "ab") as fh:
        fh.write(b"y\n")
    ev = tail.poll()
    assert ev.kind == "append" and lines_of(ev) == [b"y"] and ev.first_line == 2


def test_in_place_rewrite_to_a_longer_file_is_a_reset(tmp_path):
    p = tmp_path / "f.jsonl"
    p.write_bytes(b"first line\n")
    tail = Tail(p)
    tail.poll()
    with open(p, "r+b") as fh:  # same inode, bytes before the offset changed, file longer
        fh.write(b"FIRST LINE\nand more\n")
    ev = tail.poll()
    assert ev.kind == "reset" and ev.reason == "rewritten"
    assert lines_of(ev) == [b"FIRST LINE", b"and more"]


def test_replacement_by_rename_rotation(tmp_path):
    p = tmp_path / "f.jsonl"
    p.write_bytes(b"old 1\nold 2\n")
    tail = Tail(p)
    tail.poll()
    # Rotation: the old file moves away, a new one takes its name (longer than the old).
    os.rename(p, tmp_path / "f.jsonl.1")
    p.write_bytes(b"new 1\nnew 2\nnew 3\nnew 4 partial")
    ev = tail.poll()
    assert ev.kind == "reset" and ev.reason == "replaced"
    assert lines_of(ev) == [b"new 1", b"new 2", b"new 3"]
    assert tail.pending == b"new 4 partial"
    # Atomic rewrite (temp + rename) with the same size is seen too.
    tmp = tmp_path / "tmp"
    tmp.write_bytes(p.read_bytes().replace(b"new", b"NEW"))
    os.replace(tmp, p)
    ev = tail.poll()
    assert ev.kind == "reset" and lines_of(ev)[0] == b"NEW 1"


def test_missing_then_reappearing(tmp_path):
    p = tmp_path / "f.jsonl"
    p.write_bytes(b"a\n")
    tail = Tail(p)
    tail.poll()
    p.unlink()
    assert tail.poll().kind == "missing"
    assert tail.poll().kind == "none"  # reported once
    p.write_bytes(b"b\n")
    ev = tail.poll()
    assert ev.kind == "reset" and ev.reason in (
        "reappeared",
        "rewritten",
    )  # inode numbers may be reused
    assert lines_of(ev) == [b"b"]


def test_poll_reads_only_new_bytes(tmp_path, monkeypatch):
    p = tmp_path / "f.jsonl"
    p.write_bytes(b"x" * 1_000_000 + b"\n")
    tail = Tail(p, p.stat().st_size)
    read: list[int] = []
    real = os.pread

    def counting(fd, n, off):
        read.append(n)
        return real(fd, n, off)

    monkeypatch.setattr(os, "pread", counting)
    with open(p, "ab") as fh:
        fh.write(b"new\n")
    ev = tail.poll()
    assert lines_of(ev) == [b"new"] and ev.first_line == 2
    assert sum(read) <= 4 + GUARD  # the new bytes and the guard, never the whole file
    read.clear()
    assert tail.poll().kind == "none" and read == []  # unchanged: only a stat


WRITER = textwrap.dedent(
    """
    import os, random, sys, time
    path, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    for i in range(count):
        line = ('{"n":%d,"pad":"%s"}\\n' % (i, "p" * rng.randint(0, 300))).encode()
        # Split each line into random pieces written separately, as a slow writer would.
        pos = 0
        while pos < len(line):
            step = rng.randint(1, max(1, len(line) - pos))
            os.write(fd, line[pos:pos + step])
            pos += step
            if rng.random() < 0.3:
                time.sleep(0.0005)
        if i % 20 == 0:
            time.sleep(0.002)
    os.close(fd)
    """
)


@pytest.mark.parametrize("seed", [1, 2])
def test_concurrent_appends_from_another_process(tmp_path, seed):
    p = tmp_path / "live.jsonl"
    p.write_bytes(b"")
    tail = Tail(p)
    count = 1500
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(p), str(count), str(seed)])
    seen: list[int] = []
    next_line = 1
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done = proc.poll() is not None
        ev = tail.poll()
        if ev.kind == "append":
            assert ev.first_line == next_line
            assert ev.data.endswith(b"\n")
            for raw in ev.data.splitlines():
                assert raw.startswith(b'{"n":') and raw.endswith(b'"}'), raw[:40]
                seen.append(int(raw[5 : raw.index(b",")]))
            next_line += ev.lines
        else:
            assert ev.kind == "none"
        if done and ev.kind == "none" and tail.position == p.stat().st_size:
            break
        time.sleep(0.001)
    assert proc.wait(10) == 0
    assert seen == list(range(count))  # every line once, in order, none duplicated
    assert tail.pending == b"" and tail.offset == p.stat().st_size


def test_a_line_over_the_limit_written_slowly_is_counted_never_kept(tmp_path):
    from core.io.limits import set_max_line_bytes

    set_max_line_bytes(100)
    try:
        p = tmp_path / "f.jsonl"
        p.write_bytes(b"a\n")
        tail = Tail(p)
        assert lines_of(tail.poll()) == [b"a"]
        for _ in range(5):  # 250 bytes of one line, in five writes
            with open(p, "ab") as fh:
                fh.write(b"x" * 50)
            assert tail.poll().kind == "none"
            assert len(tail.pending) <= 100  # never more than the limit held
        with open(p, "ab") as fh:
            fh.write(b"x\nb\nc")
        ev = tail.poll()
        assert ev.skipped == ((2, 2, 251),)
        assert (lines_of(ev), ev.first_line, ev.offset) == ([b"b"], 3, 2 + 252)
        assert tail.pending == b"c"
    finally:
        set_max_line_bytes(None)


def test_a_line_over_the_limit_inside_one_append_splits_the_event(tmp_path):
    from core.io.limits import set_max_line_bytes

    set_max_line_bytes(100)
    try:
        p = tmp_path / "f.jsonl"
        p.write_bytes(b"")
        tail = Tail(p)
        p.write_bytes(b"a\nb\n" + b"y" * 500 + b"\nc\nd\n")
        ev = tail.poll()
        assert lines_of(ev) == [b"a", b"b"] and ev.skipped == () and tail.more
        ev = tail.poll()  # nothing changed on disk: the rest comes anyway
        assert ev.skipped == ((3, 4, 500),)
        assert (lines_of(ev), ev.first_line, ev.offset) == ([b"c", b"d"], 4, 505)
        assert not tail.more and tail.poll().kind == "none"
        with open(p, "ab") as fh:  # the guard after a skip still sees appends as appends
            fh.write(b"e\n")
        ev = tail.poll()
        assert (ev.kind, lines_of(ev), ev.first_line) == ("append", [b"e"], 6)
    finally:
        set_max_line_bytes(None)


def test_a_fifo_in_place_of_the_file_is_never_opened(tmp_path):
    p = tmp_path / "f.jsonl"
    p.write_bytes(b"a\n")
    tail = Tail(p, 2)
    p.unlink()
    os.mkfifo(p)  # opening it for reading would block forever
    assert tail.poll().kind == "missing"
    assert Tail(p).poll().kind == "none"
