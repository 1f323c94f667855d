"""The command line: --json shapes scripts rely on, exit codes, one-line errors."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from core.cli.main import run_cli
from core.store.knowledge import load_knowledge
from core.store.segments import append_segments, make_segment
from tests.conftest import ROOT

from .build import SESSION_KEYS, run_json


@pytest.fixture
def home(fixtures_dir, tmp_path):
    h = tmp_path / "home"
    sessions = h / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    shutil.copy(fixtures_dir / "before-compaction.jsonl", sessions)
    store = h / "memory" / "context"
    store.mkdir(parents=True)
    append_segments(
        store / "segments.jsonl",
        [
            make_segment(
                "s1", "user", f"question {i} about the parser", timestamp=4_000_000_000_000 - i
            )
            for i in range(5)
        ],
    )
    log = load_knowledge(store / "knowledge.jsonl")
    a = log.add("decision", "Use orjson")
    log.supersede(a.id, "Use orjson for all JSON")
    b = log.add("issue", "Flaky test")
    log.delete(b.id)
    return h


def test_info_json_keys(capsys, home):
    info = run_json(capsys, "info", str(home))
    assert info["kind"] == "openclaw-home"
    (s,) = info["sessions"]
    assert set(s) == SESSION_KEYS
    assert s["messages"] == 990 and s["compactions"] == 2 and s["version"] == 1
    assert s["roles"] == {"assistant": 484, "bashExecution": 3, "toolResult": 448, "user": 55}
    assert info["segments"] == 5 and info["vectors"] == 0
    assert info["facts"] == {"active": 1, "superseded": 1, "deleted": 1}
    assert isinstance(info["problems"], list)


def test_info_reports_problems_with_file_and_line(capsys, fixtures_dir, tmp_path):
    lines = (fixtures_dir / "large-session.jsonl").read_bytes().split(b"\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\n".join([*lines[:5], b"{nope", *lines[5:9]]) + b"\n")
    info = run_json(capsys, "info", str(bad))
    assert {"file": str(bad), "line": 6}.items() <= next(
        p for p in info["problems"] if p["line"] == 6
    ).items()
    assert run_cli(["info", str(bad)]) == 0
    assert "invalid JSON" in capsys.readouterr().out


def test_show_at_entry(capsys, fixtures_dir):
    path = str(fixtures_dir / "before-compaction.jsonl")
    shown = run_json(capsys, "show", path, "--at", "#360")
    assert shown["session"] == "ffae836b-9420-4060-ac13-7745215f90ff"
    assert shown["at"]["index"] == 360
    assert shown["messages"][0]["role"] == "compactionSummary"
    assert shown["messages"][1]["index"] == 293
    assert all({"role", "tokens"} <= m.keys() for m in shown["messages"])
    by_id = run_json(capsys, "show", path, "--at", shown["at"]["id"])
    assert by_id["messages"] == shown["messages"]
    leaf = run_json(capsys, "show", path)
    assert len(leaf["messages"]) == 446


def test_show_by_session_id_in_data_dir(capsys, home, fixtures_dir):
    shown = run_json(capsys, "show", "ffae836b", "--data", str(home), "--at", "#10")
    direct = run_json(capsys, "show", str(fixtures_dir / "before-compaction.jsonl"), "--at", "#10")
    assert [m["index"] for m in shown["messages"]] == [m["index"] for m in direct["messages"]]
    assert shown["messages"][-1]["index"] <= 10


def test_facts_and_segments(capsys, home):
    assert [f["status"] for f in run_json(capsys, "facts", str(home))["facts"]] == ["active"]
    every = run_json(capsys, "facts", str(home), "--all")["facts"]
    assert sorted(f["status"] for f in every) == ["active", "deleted", "superseded"]
    segs = run_json(capsys, "segments", str(home), "--limit", "2")
    assert segs["warm"] == 5 and len(segs["segments"]) == 2 and segs["without_vector"] == 5


def test_embed_json(capsys):
    out = run_json(capsys, "embed", "hello world")
    assert out["model"] == "hash" and out["dim"] == 384 and len(out["vector"]) == 384
    assert abs(sum(x * x for x in out["vector"]) - 1) < 1e-6


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["info", "/no/such/place"], "no such file or folder"),
        (["show", "/no/such.jsonl"], "no such transcript"),
        (["show", "FIX", "--at", "#99999"], "no object #99999"),
        (["show", "FIX", "--at", "zzzz"], "no entry with id 'zzzz'"),
        (["embed", "x", "--model", "bert"], "not available"),
    ],
)
def test_bad_input_one_line_error(capsys, fixtures_dir, args, needle):
    args = [str(fixtures_dir / "large-session.jsonl") if a == "FIX" else a for a in args]
    assert run_cli(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("memlens: error: ") and needle in err
    assert err.count("\n") == 1


def test_entry_point_runs_without_qt():
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from app.launcher import main; r = main(['embed', 'x', '--json']);"
            "assert not [k for k in sys.modules if k.startswith('PySide6')]; sys.exit(r)",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


def test_compactions_command(capsys, fixtures_dir):
    out = run_json(capsys, "compactions", str(fixtures_dir / "before-compaction.jsonl"))
    comps = out["compactions"]
    assert [c["tokens_before"] for c in comps] == [175004, 185014]
    assert [c["first_kept_index"] for c in comps] == [293, 551]
    assert [c["line"] for c in comps] == [360, 629]
    assert comps[0]["replaced"][0]["index"] == 1
    assert comps[1]["replaced"][0]["role"] == "compactionSummary"
    assert comps[0]["summary"].startswith("# Context Checkpoint")
