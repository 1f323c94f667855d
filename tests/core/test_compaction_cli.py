"""memlens plan / compact / budget / trim / overflow: JSON shapes and exit codes."""

from __future__ import annotations

import os
import shutil
import time

import orjson
import pytest

from core.cli.main import run_cli
from core.demo.build import write_demo

from .build import run_json

NOW = 1_795_305_600_000


run = run_json


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli") / "home"
    write_demo(root, now_ms=NOW, segments=150)
    return root


def _longest(home):
    return max(
        (home / "agents" / "main" / "sessions").glob("*.jsonl"), key=lambda p: p.stat().st_size
    )


def test_plan_json(capsys, fixtures_dir):
    out = run(capsys, "plan", str(fixtures_dir / "before-compaction.jsonl"), "--at", "#358")
    for key in ("first_kept_entry_id", "messages_to_summarize", "chunks", "tokens_before"):
        assert key in out
    assert out["tokens_before"] == 175004 and out["ok"]


def test_budget_json(capsys, fixtures_dir):
    out = run(
        capsys,
        "budget",
        str(fixtures_dir / "before-compaction.jsonl"),
        "--at",
        "#358",
        "--window",
        "128000",
    )
    assert out["window"] == 128000 and out["should_compact"] is True
    assert {t["key"] for t in out["thresholds"]} >= {"window", "compaction", "flush", "safe_limit"}


def test_trim_json(capsys, fixtures_dir):
    out = run(capsys, "trim", str(fixtures_dir / "before-compaction.jsonl"), "--window", "100000")
    assert out["tokens_after"] <= out["safe_limit"] < out["tokens_before"]
    # the leaf's 446 messages as pi sends them: aborted turns out, missing results in
    assert len(out["decisions"]) == 440
    assert {"index", "role", "decision", "layer", "reason"} <= out["decisions"][0].keys()
    kept = [d for d in out["decisions"] if d["decision"] in ("protected", "kept")]
    assert len(out["messages"]) == len(kept)
    assert out["messages"][0]["role"] in ("user", "assistant", "toolResult", "compactionSummary")
    assert run_cli(["trim", str(fixtures_dir / "before-compaction.jsonl")]) == 1
    assert "--window" in capsys.readouterr().err


def test_overflow_json(capsys, fixtures_dir):
    out = run(
        capsys,
        "overflow",
        str(fixtures_dir / "before-compaction.jsonl"),
        "--at",
        "#358",
        "--window",
        "128000",
    )
    assert [s["kind"] for s in out["steps"]] == ["overflow", "compact", "recovered"]


def test_compact_dry_run_then_write(capsys, home):
    path = _longest(home)
    before = path.read_bytes()
    out = run(capsys, "compact", str(path))
    assert path.read_bytes() == before and out["written"] is False
    for key in ("first_kept_entry_id", "messages_to_summarize", "chunks", "tokens_before"):
        assert key in out["plan"]
    assert out["summary"].startswith("_Offline summary") and out["entry"]["type"] == "compaction"
    assert isinstance(out["segments"], list) and isinstance(out["facts"], list)
    os.utime(path, None)
    assert run_cli(["compact", str(path), "--write"]) == 1
    assert "mid-turn" in capsys.readouterr().err
    old = time.time() - 60
    os.utime(path, (old, old))
    wrote = run(capsys, "compact", str(path), "--write")
    assert wrote["written"] and path.read_bytes().startswith(before)
    assert orjson.loads(path.read_bytes()[len(before) :])["id"] == wrote["entry"]["id"]


def test_compact_errors(capsys, home, tmp_path):
    assert run_cli(["compact", str(tmp_path / "nope.jsonl")]) == 1
    assert "no such transcript" in capsys.readouterr().err
    copy = tmp_path / "s.jsonl"
    shutil.copy(_longest(home), copy)
    assert run_cli(["compact", str(copy), "--llm", "gopher:x"]) == 1
    assert "openai:" in capsys.readouterr().err


def test_compact_offline_is_never_a_failure(capsys, fixtures_dir):
    """The extractive summariser is an explicit choice, not a failed model call."""
    path = str(fixtures_dir / "before-compaction.jsonl")
    out = run(capsys, "compact", path, "--at", "#358", "--timeout", "1", "--read-timeout", "1")
    assert out["degraded"] is False and out["failure"] is None
    assert out["attempts"] and all(c["ok"] and c["client"] == "offline" for c in out["attempts"])
    assert not out["summary"].startswith("[memlens fallback summary:")
