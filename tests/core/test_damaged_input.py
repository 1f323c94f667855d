"""Damaged input never stops a command, and always names the file and line (issue 13, item 5).

Deep nesting, numbers out of range, lone surrogates, over-long lines, special
files, broken parent chains: each is a problem with its file and line, and every
read command still answers.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from core.cli.main import run_cli
from core.dataset.load import load_dataset
from core.io import jsonio
from core.io.limits import set_max_line_bytes
from core.io.problems import FormatError
from core.openclaw.sessions_store import load_sessions_store
from core.store.knowledge import load_knowledge
from core.store.segments import load_segments
from core.timeline.arrays import build_timeline
from core.transcript import context_at, load_transcript
from tests.conftest import ROOT

from .build import STAMP, assistant, chain, entry, lines, user, write_file

DEEP = "[" * 100_000 + "]" * 100_000
HUGE = ("1e400", "-1e400", "9" * 5000, "-" + "9" * 5000)


def _home(tmp_path: Path) -> Path:
    """A small OpenClaw home: one transcript, a memory-context store."""
    home = tmp_path / "home"
    sessions = home / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    write_file(sessions / "s1.jsonl", lines(chain(6)))
    store = home / "memory" / "context"
    store.mkdir(parents=True)
    seg = {
        "id": "11111111-1111-1111-1111-111111111111",
        "sessionId": "sess-1",
        "role": "user",
        "content": "the database config uses port 5432",
        "timestamp": 1_790_000_000_000,
    }
    (store / "segments.jsonl").write_text(json.dumps(seg) + "\n")
    fact = {"id": "f1", "type": "config", "content": "port 5432", "timestamp": 1_790_000_000_000}
    (store / "knowledge.jsonl").write_text(json.dumps(fact) + "\n")
    return home


def _run(*argv: str) -> tuple[int, str, str]:
    """``run_cli(argv)`` with stdout and stderr as a terminal's: strict UTF-8 byte streams."""
    out, err = io.BytesIO(), io.BytesIO()
    old = sys.stdout, sys.stderr
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    try:
        code = run_cli(list(argv))
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        got = out.getvalue(), err.getvalue()
        sys.stdout, sys.stderr = old
    return code, got[0].decode("utf-8"), got[1].decode("utf-8")


# -- deep nesting ------------------------------------------------------------------------
def test_nesting_deeper_than_the_parser_allows_is_a_problem_with_file_and_line(tmp_path):
    objs = chain(4)
    raw = lines(objs)
    raw.insert(2, DEEP)  # line 3: 100,000 levels, orjson's limit is 1,024
    raw.insert(4, '{"type":"message","id":"x"}' + DEEP)  # run together with a deep value
    raw.insert(5, json.dumps(entry(9, "00000004", user("x"))).replace('"x"', "[" * 600 + "]" * 600))
    p = tmp_path / "deep.jsonl"
    write_file(p, raw)
    s = load_transcript(p)
    by_line: dict[int, str] = {}
    for pr in s.problems:
        by_line[pr.line] = by_line.get(pr.line, "") + pr.message + " | "
    assert "nested" in by_line[3] or "depth" in by_line[3] or "invalid JSON" in by_line[3]
    assert "nested deeper than" in by_line[5]
    assert "nested deeper than 255" in by_line[6]
    assert len(s.messages()) == 4
    code, _out, err = _run("show", str(p))
    assert code == 0 and err == ""
    code, _, err = _run("info", str(p))
    assert code == 0 and f"{p}:6" in _run("info", str(p))[1]


def test_deep_values_in_every_store_file(tmp_path):
    home = _home(tmp_path)
    store = home / "memory" / "context"
    with open(store / "segments.jsonl", "a") as fh:
        fh.write(DEEP + "\n" + '{"id":' + "[" * 500 + "]" * 500 + "}\n")
    with open(store / "knowledge.jsonl", "a") as fh:
        fh.write('{"id":"f2","type":"config","content":' + DEEP + "}\n")
    segs = load_segments(store / "segments.jsonl", eviction_days=0)
    assert [p.line for p in segs.problems] == [2, 3] and len(segs.segments) == 1
    log = load_knowledge(store / "knowledge.jsonl")
    assert [p.line for p in log.problems] == [2] and len(log.facts) == 1
    sj = home / "agents" / "main" / "sessions" / "sessions.json"
    sj.write_text('{\n  "agent:main:x": ' + "[" * 400 + "]" * 400 + "\n}\n")
    with pytest.raises(FormatError, match="nested deeper than 255"):
        load_sessions_store(sj)
    for argv in (["info", str(home)], ["segments", str(home)], ["facts", str(home), "--all"]):
        code, _, err = _run(*argv)
        assert code == 0 and err == "", argv


def test_run_together_recovery_never_recurses_out():
    values, error = jsonio.split_run_together('{"a":1}' + DEEP)
    assert values == [{"a": 1}] and error is not None and "column 8" in error


# -- numbers out of range ------------------------------------------------------------------
@pytest.mark.parametrize("number", [*HUGE, "1e300", "-5", "1.5e12"])
def test_absurd_usage_is_reported_with_the_field_and_ignored(tmp_path, number):
    objs = chain(6)
    text = json.dumps(objs[3])  # an assistant entry with usage
    text = text.replace('"totalTokens": 4000', f'"totalTokens": {number}')
    text = text.replace('"input": 4000', f'"input": {number}')
    raw = lines(objs)
    raw[4] = text
    p = tmp_path / "usage.jsonl"
    write_file(p, raw)
    s = load_transcript(p)
    said = " | ".join(pr.message for pr in s.problems if pr.line == 5)
    if number in HUGE:  # not a double: the line is not JSON orjson or the agent reads
        assert "out of range" in said or "infinity" in said
    else:
        assert "usage.totalTokens" in said and "usage.input" in said and "ignored" in said
        msg = s.entries[3].message
        assert msg is not None and "totalTokens" not in (msg.usage or {})
    build_timeline(s)
    for argv in (
        ["show", str(p)],
        ["show", str(p), "--json"],
        ["budget", str(p)],
        ["plan", str(p)],
        ["trim", str(p), "--window", "8000"],
        ["overflow", str(p), "--window", "8000"],
        ["compact", str(p)],
        ["info", str(p), "--json"],
    ):
        code, _, err = _run(*argv)
        assert code == 0 and err == "", (argv, err)


@pytest.mark.parametrize("number", [*HUGE, "1e300", "-1e300", "18446744073709551617"])
def test_absurd_numbers_in_facts_and_segments(tmp_path, number):
    home = _home(tmp_path)
    store = home / "memory" / "context"
    with open(store / "segments.jsonl", "a") as fh:
        fh.write(
            '{"id":"22222222-2222-2222-2222-222222222222","sessionId":"sess-1","role":"user",'
            f'"content":"database config again","timestamp":{number},"tokens":{number}}}\n'
        )
    with open(store / "knowledge.jsonl", "a") as fh:
        fh.write(
            f'{{"id":"f2","type":"config","content":"database on 5433","timestamp":{number},'
            f'"confidence":{number}}}\n'
        )
    log = load_knowledge(store / "knowledge.jsonl")
    assert [p.line for p in log.problems] == [2], log.problems
    assert "timestamp" in log.problems[0].message or "range" in log.problems[0].message
    for f in log.facts.values():
        assert abs(f.timestamp) <= 8_640_000_000_000_000
    segs = load_segments(store / "segments.jsonl", eviction_days=0)
    assert [p.line for p in segs.problems] == [2], segs.problems
    for argv in (
        ["facts", str(home), "--all"],
        ["facts", str(home), "--all", "--json"],
        ["segments", str(home), "--limit", "0"],
        ["segments", str(home), "--json"],
        ["recall", str(home), "database config", "--min-score", "0"],
        ["knowledge", str(home), "database", "--mode", "adaptive"],
        ["info", str(home)],
    ):
        code, _, err = _run(*argv)
        assert code == 0 and err == "", (argv, err)


# -- lone surrogates ---------------------------------------------------------------------------
def test_lone_surrogates_print_in_text_and_json(tmp_path):
    home = _home(tmp_path)
    p = home / "agents" / "main" / "sessions" / "s1.jsonl"
    objs = chain(4)
    objs[0]["message"]["content"] = "before @@ after"
    objs.append(
        {"type": "session_info", "id": "0000000a", "parentId": "00000004", "timestamp": STAMP,
         "name": "@@"}
    )  # fmt: skip
    objs.append(
        {"type": "compaction", "id": "0000000b", "parentId": "0000000a", "timestamp": STAMP,
         "summary": "sum @@", "firstKeptEntryId": "00000003", "tokensBefore": 5000}
    )  # fmt: skip
    text = "\n".join(lines(objs)).replace("@@", "\\ud800 x \\udfff") + "\n"
    p.write_text(text)
    store = home / "memory" / "context"
    (store / "segments.jsonl").write_text(
        '{"id":"33333333-3333-3333-3333-333333333333","sessionId":"sess-1","role":"user",'
        '"content":"database \\ud800 config","timestamp":1790000000000}\n'
    )
    (store / "knowledge.jsonl").write_text(
        '{"id":"f\\udc00","type":"config","content":"database \\udbff config",'
        '"timestamp":1790000000000}\n'
    )
    for argv in (
        ["show", str(p), "--full"],
        ["compactions", str(p)],
        ["info", str(home)],
        ["sessions", str(home)],
        ["facts", str(home), "--all"],
        ["segments", str(home)],
        ["recall", str(home), "database config", "--min-score", "0"],
        ["knowledge", str(home), "database config", "--mode", "adaptive"],
    ):
        for extra in ([], ["--json"]):
            code, out, err = _run(*argv, *extra)
            assert code == 0 and err == "", (argv, extra, err)
            if extra:
                json.loads(out)  # valid JSON: the surrogate is an escape
            assert "\ud800" not in out
    assert "\ufffd" in _run("show", str(p), "--full")[1]
    assert "\\ud800" in _run("show", str(p), "--full", "--json")[1]


# -- over-long lines ----------------------------------------------------------------------------
def test_a_line_over_the_limit_is_reported_and_skipped(tmp_path):
    set_max_line_bytes(10_000)
    try:
        objs = chain(4)
        raw = lines(objs)
        raw[2] = raw[2].replace("check the build", "x" * 20_000)
        p = tmp_path / "long.jsonl"
        write_file(p, raw)
        s = load_transcript(p)
        [problem] = [pr for pr in s.problems if pr.line == 3]
        assert (
            "exceeds the 10,000-byte line limit" in problem.message and "skipped" in problem.message
        )
        assert [e.line for e in s.entries] == [2, 4, 5]
        assert s.size == p.stat().st_size
    finally:
        set_max_line_bytes(None)


def test_a_huge_line_is_never_held_in_memory(tmp_path):
    """A 1 GiB line (sparse: no disk) is skipped reading 16 MiB at a time."""
    set_max_line_bytes(1 << 20)
    p = tmp_path / "huge.jsonl"
    head = lines(chain(2))
    with open(p, "wb") as fh:
        fh.write(("\n".join(head) + "\n").encode())
        fh.write(b'{"type":"message","x":"')
        fh.truncate(fh.tell() + (1 << 30))  # NUL bytes, no newline, nothing on disk
        fh.seek(0, os.SEEK_END)
        fh.write(b'"}\n' + json.dumps(entry(3, "00000002", user("after"))).encode() + b"\n")
    try:
        tracemalloc.start()
        s = load_transcript(p)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        set_max_line_bytes(None)
    assert peak < 100 * (1 << 20), f"peak {peak:,} bytes"
    [problem] = [pr for pr in s.problems if pr.line == 4]
    assert (
        f"line of {(1 << 30) + 25:,} bytes exceeds the 1,048,576-byte line limit" in problem.message
    )
    assert [e.id for e in s.entries] == ["00000001", "00000002", "00000003"]


def test_the_line_limit_is_configurable_from_the_environment(tmp_path):
    objs = chain(2)
    p = tmp_path / "s.jsonl"
    write_file(p, lines(objs))
    env = {**os.environ, "MEMLENS_MAX_LINE_BYTES": "2000"}
    done = subprocess.run(
        [sys.executable, "-m", "core.cli.main", "info", str(p)],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"{p}:2: line of" in done.stdout and "2,000-byte line limit" in done.stdout


def test_bounded_lines_of_a_file(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"a\n" + b"b" * 50 + b"\nc\n" + b"d" * 50)
    with open(p, "rb") as fh:
        assert list(jsonio.iter_bounded_lines(fh, limit=10, chunk=7)) == [b"a", None, b"c", None]


# -- special files -------------------------------------------------------------------------------
SPECIAL_SCRIPT = """
import json, sys
from core.dataset.load import load_dataset
from core.dataset.home_scan import scan_home
data = load_dataset(sys.argv[1])
scan_home(sys.argv[1])
print(json.dumps([[p.file, p.message] for p in data.problems]))
"""


def _special_home(tmp_path: Path) -> tuple[Path, dict[str, str], socket.socket]:
    home = _home(tmp_path)
    sessions = home / "agents" / "main" / "sessions"
    store = home / "memory" / "context"
    made: dict[str, str] = {}

    def fifo(path: Path) -> None:
        path.unlink(missing_ok=True)
        os.mkfifo(path)
        made[str(path)] = "a FIFO"

    def link(path: Path, target: str, kind: str) -> None:
        path.unlink(missing_ok=True)
        path.symlink_to(target)
        made[str(path)] = kind

    fifo(sessions / "x.jsonl")
    link(sessions / "zero.jsonl", "/dev/zero", "a symlink to character device")
    fifo(sessions / "sessions.json")
    os.mkfifo(home / "fifo-target")
    link(store / "segments.jsonl", str(home / "fifo-target"), "a symlink to FIFO")
    link(store / "knowledge.jsonl", "/dev/urandom", "a symlink to character device")
    fifo(store / "vectors.bin")
    fifo(home / "openclaw.json")
    (home / "memory" / "main.sqlite").symlink_to("/dev/zero")
    made[str(home / "memory" / "main.sqlite")] = "a symlink to character device"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock_path = sessions / "sock.jsonl"
    if len(str(sock_path)) < 100:
        sock.bind(str(sock_path))
        made[str(sock_path)] = "a socket"
    return home, made, sock


def test_special_files_are_skipped_with_a_note_and_never_opened(tmp_path):
    home, made, sock = _special_home(tmp_path)
    try:
        # A FIFO opened for reading blocks forever: a subprocess with a timeout.
        done = subprocess.run(
            [sys.executable, "-c", SPECIAL_SCRIPT, str(home)],
            capture_output=True, text=True, cwd=ROOT, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        problems = json.loads(done.stdout)
        for path, kind in made.items():
            notes = [m for f, m in problems if f == path]
            assert len(notes) == 1, f"{path} ({kind}) not reported once: {problems}"
            assert notes[0].startswith("not a regular file (") and kind.split()[-1] in notes[0]
        for argv in (
            ["info", str(home)],
            ["sessions", str(home), "--json"],
            ["facts", str(home)],
            ["segments", str(home)],
            ["recall", str(home), "database"],
            ["knowledge", str(home), "database"],
            ["show", "s1", "--data", str(home)],
            ["show", str(home / "agents" / "main" / "sessions" / "x.jsonl")],
            ["backups", str(home)],
        ):
            done = subprocess.run(
                [sys.executable, "-m", "core.cli.main", *argv],
                capture_output=True, text=True, cwd=ROOT, timeout=120,
            )  # fmt: skip
            assert done.returncode in (0, 1), (argv, done.stderr)
            assert "bug in memlens" not in done.stderr and "Traceback" not in done.stderr, argv
            if done.returncode == 1:
                assert str(home) in done.stderr, (argv, done.stderr)
    finally:
        sock.close()


def test_a_special_file_given_directly_is_refused_naming_it(tmp_path):
    fifo = tmp_path / "t.jsonl"
    os.mkfifo(fifo)
    for argv in (["show", str(fifo)], ["info", str(fifo)], ["plan", str(fifo)]):
        done = subprocess.run(
            [sys.executable, "-m", "core.cli.main", *argv],
            capture_output=True, text=True, cwd=ROOT, timeout=120,
        )  # fmt: skip
        assert done.returncode == 1, (argv, done.stderr)
        assert str(fifo) in done.stderr, argv
        if argv[0] != "plan":  # compaction_cli's own check says "no such transcript"
            assert f"{fifo}: not a regular file (a FIFO); skipped" in done.stderr, argv


# -- parent chains -----------------------------------------------------------------------------
def _tree(tmp_path: Path) -> Path:
    objs = chain(6)
    objs[2]["parentId"] = "00000005"  # 3 -> 5 -> 4 -> 3: a cycle
    objs[4]["parentId"] = "gone0001"  # 5's parent is missing... (5 -> gone)
    objs[4]["parentId"] = "00000004"
    objs.append(entry(7, "deadbeef", user("orphan")))
    objs.append(entry(8, 42, assistant("odd parent")))
    objs.append(entry(9, "00000009", user("its own parent")))
    p = tmp_path / "tree.jsonl"
    write_file(p, lines(objs))
    return p


def test_cyclic_and_dangling_parents_are_problems_on_the_timeline(tmp_path):
    p = _tree(tmp_path)
    s = load_transcript(p)
    breaks = {b.line: b for b in s.parent_breaks()}
    assert (
        breaks[8].kind == "missing"
        and "parentId 'deadbeef' is not in the file" in breaks[8].message
    )
    assert breaks[9].kind == "invalid" and "parentId 42 is not a string" in breaks[9].message
    assert breaks[10].kind == "self" or breaks[10].kind == "cycle"
    cycle = [b for b in breaks.values() if b.kind == "cycle" and b.line != 10]
    assert len(cycle) == 1 and "makes a cycle of 3 entries" in cycle[0].message
    messages = {(pr.line, pr.message) for pr in s.problems}
    for b in breaks.values():
        assert (b.line, b.message) in messages  # the Problems list shows each one
    tl = build_timeline(s)
    assert {(m.entry_id, m.kind) for m in tl.breaks} == {
        (b.entry_id, b.kind) for b in breaks.values()
    }
    for m in tl.breaks:
        assert m.message.startswith(f"entry {m.entry_id} (line {m.line})")
    # pi stops at a missing parent and never loops on a cycle; memlens too.
    assert [i.entry.id for i in context_at(s, "00000007")] == ["00000007"]
    assert len(context_at(s, "00000005")) == 3
    code, out, _ = _run("info", str(p))
    assert code == 0 and f"{p}:8: entry 00000007 (line 8): parentId 'deadbeef'" in out
    for argv in (["show", str(p)], ["show", str(p), "--at", "#3"], ["compactions", str(p)]):
        assert _run(*argv)[0] == 0


def test_a_live_append_with_a_missing_parent_is_a_problem(tmp_path):
    from core.live.follow import LiveFollower

    home = _home(tmp_path)
    p = home / "agents" / "main" / "sessions" / "s1.jsonl"
    follower = LiveFollower(load_dataset(home))
    with open(p, "a") as fh:
        fh.write(json.dumps(entry(20, "cafebabe", user("late"))) + "\n")
    changes = follower.poll(everything=True)
    assert any(
        pr.file == str(p) and pr.line == 8 and "'cafebabe' is not in the file" in pr.message
        for pr in changes.problems
    ), changes.problems


# -- the app's loader -----------------------------------------------------------------------------
def test_the_app_loader_keeps_going_past_every_damage(tmp_path):
    home = _home(tmp_path)
    sessions = home / "agents" / "main" / "sessions"
    shutil.copy(_tree(tmp_path), sessions / "tree.jsonl")
    (sessions / "deep.jsonl").write_text(DEEP + "\n")
    (sessions / "sessions.json").write_text('{"a": 1e400}')
    (home / "memory" / "context" / "vectors.bin").write_bytes(b"VMEM\x01")
    data = load_dataset(home)
    files = {Path(pr.file).name for pr in data.problems}
    assert {"tree.jsonl", "deep.jsonl", "sessions.json", "vectors.bin"} <= files
    assert len(data.sessions) == 2
    for s in data.sessions:
        build_timeline(s)


def test_vectors_with_nan_or_absurd_values_are_ignored(tmp_path):
    import numpy as np

    from core.store.vectors import load_vectors, write_vectors

    ids = [f"{i:08d}-1111-1111-1111-111111111111" for i in range(4)]
    matrix = np.ones((4, 8), dtype=np.float32)
    matrix[1, 3] = np.nan
    matrix[2, 0] = 3e38
    p = tmp_path / "vectors.bin"
    write_vectors(p, ids, matrix, 8)
    vf = load_vectors(p)
    assert vf.ids == [ids[0], ids[3]] and vf.matrix.shape == (2, 8)
    [problem] = vf.problems
    assert (
        problem.file == str(p)
        and "2 vector(s) hold NaN, infinite or absurd values" in problem.message
    )


def test_live_mode_reports_a_line_over_the_limit(tmp_path):
    from core.live.follow import LiveFollower

    home = _home(tmp_path)
    p = home / "agents" / "main" / "sessions" / "s1.jsonl"
    set_max_line_bytes(50_000)
    try:
        follower = LiveFollower(load_dataset(home))
        with open(p, "a") as fh:
            fh.write('{"type":"message","x":"' + "z" * 60_000 + '"}\n')
            fh.write(json.dumps(entry(7, "00000006", user("after"))) + "\n")
        changes = follower.poll(everything=True)
    finally:
        set_max_line_bytes(None)
    assert any(
        pr.file == str(p) and pr.line == 8 and "exceeds the 50,000-byte line limit" in pr.message
        for pr in changes.problems
    ), changes.problems
    assert [e.id for e in changes.entries["sess-1"]] == ["00000007"]


def test_a_memory_index_with_bytes_that_are_not_utf8(tmp_path):
    import sqlite3

    from core.openclaw.memindex import open_memory_index

    home = _home(tmp_path)
    db_path = home / "memory" / "main.sqlite"
    db = sqlite3.connect(db_path)
    db.execute(
        "CREATE TABLE chunks (id TEXT, path TEXT, source TEXT, start_line INT, end_line INT,"
        " hash TEXT, model TEXT, text TEXT, embedding TEXT, updated_at INT)"
    )
    db.execute(
        "INSERT INTO chunks VALUES ('c1', CAST(x'2fff' AS TEXT), CAST(x'6dc3' AS TEXT), 1, 2,"
        " 'h', 'm', CAST(x'41ff42' AS TEXT), '[1,2]', 5)"
    )
    db.commit()
    db.close()
    with open_memory_index(db_path) as index:
        [chunk] = list(index.iter_chunks())
        assert chunk.text == "A\ufffdB"
        assert index.sources()
    code, out, err = _run("info", str(home))
    assert code == 0 and err == "" and "memory index memory/main.sqlite" in out


def test_a_broken_openclaw_json_does_not_stop_recall(tmp_path):
    home = _home(tmp_path)
    (home / "openclaw.json").write_text('{"agents": {"defaults": ' + "[" * 5000 + "\n")
    for argv in (
        ["recall", str(home), "database config", "--min-score", "0"],
        ["knowledge", str(home), "port"],
        ["facts", str(home)],
        ["segments", str(home)],
    ):
        code, out, err = _run(*argv)
        assert code == 0, (argv, err)
        # Listings go on and say why the config was not used, naming file and line.
        note = f"memlens: note: {home / 'openclaw.json'}:1: "
        assert err == "" or (err.startswith(note) and err.count("\n") == 1), err
    code, out, _ = _run("recall", str(home), "database config", "--min-score", "0")
    assert f"note: {home / 'openclaw.json'}" in out and "default memoryContext" in out


def test_a_flood_of_bad_lines_keeps_a_bounded_list_of_problems(tmp_path):
    p = tmp_path / "flood.jsonl"
    head = lines(chain(2))
    p.write_text("\n".join(head) + "\n" + "garbage\n" * 5000 + "\n" * 5000)
    s = load_transcript(p)
    assert len(s.problems) == jsonio.MAX_PROBLEMS + 1
    assert s.problems[-1].message.startswith("9,000 more problems in this file not listed")
    assert len(s.entries) == 2


def test_the_home_scan_counts_past_deep_values(tmp_path):
    from core.dataset.home_scan import scan_home

    home = _home(tmp_path)
    with open(home / "memory" / "context" / "knowledge.jsonl", "a") as fh:
        fh.write('{"id":' + "[" * 1000 + "]" * 1000 + ',"type":"config","content":"x"}\n')
    summary = scan_home(home)
    assert summary is not None and summary.facts == 1


def test_recall_goes_on_without_an_unreadable_knowledge_log(tmp_path):
    home = _home(tmp_path)
    knowledge = home / "memory" / "context" / "knowledge.jsonl"
    knowledge.unlink()
    os.mkfifo(knowledge)  # never opened: a FIFO would block the read forever
    code, out, err = _run("recall", str(home), "database config", "--min-score", "0")
    assert code == 0 and err == ""
    assert f"note: {knowledge}: not a regular file (a FIFO); skipped" in out


def test_info_says_a_damaged_memory_index_is_not_readable(tmp_path):
    """Not "empty": the index's own error, under the path that tells agents apart."""
    import sqlite3

    home = _home(tmp_path)
    db_path = home / "memory" / "main.sqlite"
    db = sqlite3.connect(db_path)
    db.execute("CREATE TABLE chunks (id TEXT, path TEXT, text TEXT)")
    db.executemany(
        "INSERT INTO chunks VALUES (?, 'MEMORY.md', ?)", [(str(i), "x" * 900) for i in range(200)]
    )
    db.commit()
    db.close()
    with db_path.open("r+b") as fh:
        fh.truncate(8192)
    code, out, err = _run("info", str(home))
    line = next(x for x in out.splitlines() if x.startswith("memory index "))
    assert code == 0 and err == ""
    assert line == "memory index memory/main.sqlite: cannot read: database disk image is malformed"
