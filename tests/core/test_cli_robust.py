"""The CLI never crashes on odd data or a closed pipe: a placeholder, or one line and exit 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import core.cli.inspect
import core.cli.parser
from core.cli.main import run_cli
from core.compaction.run import compact
from core.compaction.write import write_compaction
from core.io.timefmt import BAD_TIME, utc_minute, utc_minute_ms
from core.recall.block import Detail, build_block
from core.store.segments import Segment, load_segments
from core.transcript import load_transcript
from tests.conftest import ROOT

from .build import chain, lines, write_file

BAD = [1e300, -1e300, 10**30, -(10**20), 8.64e15 + 1]


def test_utc_minute_never_raises():
    assert utc_minute_ms(0) == "1970-01-01 00:00"
    assert utc_minute_ms(1_790_000_000_000) == "2026-09-21 14:13"
    for ms in [*BAD, float("nan"), float("inf"), 10**400]:
        assert utc_minute_ms(ms) == BAD_TIME
    assert utc_minute(float("-inf")) == BAD_TIME


def segment_lines(timestamps):
    return "".join(
        json.dumps(
            {
                "id": f"{i:08d}-1111-1111-1111-111111111111",
                "sessionId": "s",
                "role": "user",
                "content": f"hello world {i}",
                "timestamp": ts,
            }
        )
        + "\n"
        for i, ts in enumerate(timestamps)
    )


def test_segments_and_recall_show_a_placeholder_for_bad_times(capsys, tmp_path):
    store = tmp_path / "memory" / "context"
    store.mkdir(parents=True)
    future = [t for t in BAD if t > 0]  # the past ones are beyond evictionDays
    (store / "segments.jsonl").write_text(segment_lines([*future, 1_790_000_000_000]))
    assert run_cli(["segments", str(tmp_path), "--limit", "10"]) == 0
    out = capsys.readouterr()
    assert out.err == "" and out.out.count(BAD_TIME) == len(future)
    assert run_cli(["recall", str(tmp_path), "hello world", "--min-score", "0"]) == 0
    out = capsys.readouterr()
    assert out.err == "" and BAD_TIME in out.out


def test_recall_block_with_a_bad_time():
    seg = Segment("x", "s", "user", "hello", 10**30, 2, 1)
    block = build_block([], [Detail(seg, 1.0)], 4000)
    assert f"[{BAD_TIME} user] hello" in block.text


def test_message_times_outside_the_date_range_are_no_time(tmp_path):
    objs = chain(20)
    for o, ts in zip(objs[:6:2], (1e300, -5e15 * 2, 10**30), strict=True):
        o["message"]["timestamp"] = ts
    p = tmp_path / "s.jsonl"
    write_file(p, lines(objs))
    s = load_transcript(p)
    assert [e.message.timestamp for e in s.entries[:6:2]] == [None, None, None]
    store = tmp_path / "store"
    store.mkdir()
    run = write_compaction(compact(s, keep_recent_tokens=3000), s, store_dir=store, force=True)
    assert run.written and run.segments_appended
    for seg in load_segments(store / "segments.jsonl", eviction_days=0).segments:
        assert 0 < seg.timestamp < 8.64e15  # the archive time stood in
    assert run_cli(["show", str(p)]) == 0


def test_unexpected_exception_is_one_line_and_exit_1(capsys, monkeypatch, tmp_path):
    def boom(args):
        raise RuntimeError("something odd\nwith a second line")

    monkeypatch.setattr(core.cli.inspect, "cmd_sessions", boom)
    assert run_cli(["sessions", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    # The last resort still names what the command was reading.
    assert err == (
        f"memlens: error: {tmp_path}: unexpected RuntimeError: something odd with a second "
        "line (a bug in memlens; please report it)\n"
    )


@pytest.mark.parametrize("command", ["show", "sessions", "segments"])
def test_closed_pipe_is_not_an_error(tmp_path, command):
    sessions = tmp_path / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    write_file(sessions / "s0.jsonl", lines(chain(4)))
    (tmp_path / "memory" / "context").mkdir(parents=True)
    (tmp_path / "memory" / "context" / "segments.jsonl").write_text(segment_lines([1]))
    target = sessions / "s0.jsonl" if command == "show" else tmp_path
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `| head -0`: the reader is gone before the first write
    try:
        done = subprocess.run(
            [sys.executable, "-m", "core.cli.main", command, str(target)],
            cwd=ROOT,
            stdout=write_end,
            stderr=subprocess.PIPE,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (0, b"")


@pytest.mark.parametrize("command", ["plan", "compact", "budget", "overflow", "trim", "recall"])
@pytest.mark.parametrize("window", ["0", "-5", "x", "1.5"])
def test_a_window_below_one_token_is_refused_naming_the_argument(capsys, tmp_path, command, window):
    p = tmp_path / "s.jsonl"
    write_file(p, lines(chain(4)))
    argv = [command, str(tmp_path), "query"] if command == "recall" else [command, str(p)]
    with pytest.raises(SystemExit) as exc:
        run_cli([*argv, f"--window={window}"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "argument --window" in err and window in err
    assert "at least 1" in err or "whole number" in err


@pytest.mark.parametrize("command", ["plan", "budget", "overflow", "compact"])
def test_a_session_that_is_a_fifo_or_a_folder_is_named_not_opened(capsys, tmp_path, command):
    fifo = tmp_path / "s.jsonl"
    os.mkfifo(fifo)
    for target in (fifo, tmp_path):
        extra = ["--window", "1000"] if command == "overflow" else []
        assert run_cli([command, str(target), *extra]) == 1
        err = capsys.readouterr().err
        assert f"{target}: not a regular file" in err and "no such transcript" not in err
