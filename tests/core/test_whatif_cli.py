"""``memlens whatif``: its JSON for scripts, its text, bad input, and that it writes nothing."""

from __future__ import annotations

import shutil

from core.cli.main import run_cli
from core.transcript import load_transcript
from tests.conftest import ROOT
from tests.core.build import run_json

OPENCLAW_HOME = ROOT / "tests" / "data" / "openclaw-2026.9.6" / "home" / ".openclaw"


def _snapshot(folder):
    return {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()}


def test_json_has_compactions_with_entry_and_tokens(capsys, fixtures_dir, tmp_path):
    path = tmp_path / "s.jsonl"
    shutil.copy(fixtures_dir / "before-compaction.jsonl", path)
    before = _snapshot(tmp_path)
    out = run_json(capsys, "whatif", str(path), "--model", "gpt-4o", "--keep-recent", "10000")
    assert _snapshot(tmp_path) == before  # read-only: no backup, no lock, no change
    assert out["settings"]["window"] == 128_000 and out["settings"]["keep_recent_tokens"] == 10_000
    assert out["settings"]["summary_tokens"] == 16_000
    assert out["own_settings"]["window"] == 200_000
    assert out["compactions"]
    for c in out["compactions"]:
        assert {"entry", "tokens_before", "tokens_after", "reason"} <= c.keys()
        assert "loss" not in c  # only with --audit
        assert c["tokens_after"] < c["tokens_before"]
    real = [(c["compaction_entry"], c["entry"], c["index"]) for c in out["real_compactions"]]
    assert real == [("2b9a9701", "3e8fa030", 358), ("dc2335c4", "eab13c1c", 627)]
    curve = out["curve"]
    assert len(curve["entry"]) == len(curve["real"]) == len(curve["simulated"]) == 990


def test_data_then_session_id_and_text(capsys):
    out = run_json(capsys, "whatif", str(OPENCLAW_HOME), "alpha")
    assert out["session"] == "alpha" and out["real_compactions"][0]["reason"] == "hook"
    assert out["settings"]["memory_flush"] is True
    code = run_cli(["whatif", "alpha", "--data", str(OPENCLAW_HOME), "--window", "64000"])
    text = capsys.readouterr().out
    assert code == 0
    assert "what-if: window 64,000 (--window)" in text and "real (transcript)" in text


def test_bad_input_is_named_and_writes_nothing(capsys, tmp_path):
    missing = tmp_path / "nope.jsonl"
    assert run_cli(["whatif", str(missing)]) == 1
    assert f"{missing}: no such transcript" in capsys.readouterr().err
    good = tmp_path / "s.jsonl"
    good.write_text(
        '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}\n'
    )
    before = _snapshot(tmp_path)
    for args, said in (
        (["--model", "llama"], "unknown model preset 'llama'"),
        (["--max-history-share", "1.5"], "--max-history-share 1.5 must be in (0, 1]"),
        (["--window", "1000", "--reserve", "5000"], "leaves nothing"),
        (["--at", "#9"], "no object #9"),
    ):
        assert run_cli(["whatif", str(good), *args]) == 1
        assert said in capsys.readouterr().err
    assert run_cli(["whatif", str(OPENCLAW_HOME), "alpha", "--data", str(OPENCLAW_HOME)]) == 1
    assert "not both" in capsys.readouterr().err
    assert _snapshot(tmp_path) == before


def test_audit_adds_each_compactions_loss(capsys, fixtures_dir):
    path = fixtures_dir / "large-session.jsonl"
    out = run_json(capsys, "whatif", str(path), "--model", "128k", "--audit")
    assert len(out["compactions"]) == 2 and out["real_compactions"] == []
    session = load_transcript(path)
    for c in out["compactions"]:
        loss = c["loss"]
        assert {"items", "missing", "lost", "loss", "categories", "lost_items"} <= loss.keys()
        assert loss["summariser"] == "memlens offline" and loss["items"] >= loss["lost"] > 0
        assert loss["loss"] == round((loss["missing"] + loss["lost"]) / loss["items"], 4)
        assert set(loss["categories"]) and all(0 <= v <= 1 for v in loss["categories"].values())
        for item in loss["lost_items"]:
            assert {"text", "category", "source"} <= item.keys()
            assert item["entry"] in session.by_id
