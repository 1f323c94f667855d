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
