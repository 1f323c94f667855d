"""``memlens export`` through the command line: registered, written once, never replaced unasked."""

from __future__ import annotations

import json
from html.parser import HTMLParser

from core.cli.main import run_cli


def test_memlens_export_writes_one_page_and_keeps_an_existing_file(tmp_path, fixtures_dir, capsys):
    session = fixtures_dir / "before-compaction.jsonl"
    out = tmp_path / "timeline.html"
    assert run_cli(["export", str(session), "-o", str(out), "--json"]) == 0
    written = json.loads(capsys.readouterr().out)
    page = out.read_text(encoding="utf-8")
    assert written["bytes"] == len(page.encode("utf-8")) and "<svg" in page
    HTMLParser().feed(page)
    out.write_text("mine\n")
    assert run_cli(["export", str(session), "-o", str(out)]) != 0
    assert "--force" in capsys.readouterr().err
    assert out.read_text() == "mine\n"
    report = tmp_path / "compaction.html"
    assert run_cli(["export", str(session), "-o", str(report), "--compaction"]) == 0
    assert "compaction" in report.read_text(encoding="utf-8").lower()


def test_memlens_info_never_adds_up_context_sizes(fixtures_dir, capsys):
    """Issue 17, defect 10: the largest context at a leaf, not a sum over sessions."""
    assert run_cli(["info", str(fixtures_dir), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    sizes = {s["id"]: s["tokens_estimated"] for s in info["sessions"]}
    assert "tokens" not in info and len(sizes) == 2
    assert info["largest_context"] == {
        "session": max(sizes, key=sizes.__getitem__),
        "tokens_estimated": max(sizes.values()),
    }


def test_budget_and_plan_name_the_context_tokens_as_the_app_does(fixtures_dir, capsys):
    """Issue 17, defect 3: one name and source tag in the CLI too, never "measured"."""
    session = str(fixtures_dir / "before-compaction.jsonl")
    assert run_cli(["budget", session]) == 0
    assert run_cli(["plan", session]) == 0
    out = capsys.readouterr().out
    assert "180,820 context tokens (reported)" in out
    assert "context tokens before 180,820 (reported)" in out
    assert "measured" not in out
