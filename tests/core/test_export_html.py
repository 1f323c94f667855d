"""Issue 17 item 14: the timeline and a compaction report as self-contained HTML pages."""

from __future__ import annotations

import argparse
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from html.parser import HTMLParser

import orjson
import pytest

from core.cli.export import cmd_export
from core.cli.main import run_cli
from core.cli.output import CliError
from core.compaction.plan import plan_compaction
from core.context.budget import budget_for
from core.demo.build import write_demo
from core.export.report import compaction_report, timeline_report
from core.export.svg import timeline_svg
from core.timeline.arrays import build_timeline
from core.transcript.loader import load_transcript

SECRET = "sk-ant-api03-FAKEfakeFAKEfake0123456789abcdefFAKE"
WHEN = datetime(2026, 11, 28, 9, 30, tzinfo=UTC)


@pytest.fixture(scope="module")
def demo_session(tmp_path_factory):
    """The demo session with the most compactions, a secret planted in its last message."""
    root = tmp_path_factory.mktemp("demo")
    summary = write_demo(root, segments=20, now_ms=1_795_000_000_000)
    path = max(summary.transcripts, key=lambda p: p.read_text().count('"type":"compaction"'))
    session = load_transcript(path)
    leaf = session.leaf
    line = {
        "type": "message",
        "id": "planted1",
        "parentId": leaf.id,
        "timestamp": "2026-11-18T12:00:00.000Z",
        "message": {
            "role": "user",
            "content": [{"type": "text", "text": f"my key is {SECRET} <b>bold</b> & more"}],
            "timestamp": 1795002600000,
        },
    }
    with path.open("ab") as f:
        f.write(orjson.dumps(line) + b"\n")
    return load_transcript(path)


class _Page(HTMLParser):
    """Tags, resource references and text of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.refs: list[tuple[str, str, str]] = []
        self.text: list[str] = []
        self.rows = 0

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        self.tags.append(tag)
        self.rows += tag == "tr"
        for name, value in attrs:
            if name in ("src", "href", "xlink:href", "data", "action", "poster"):
                self.refs.append((tag, name, value or ""))

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        self.text.append(data)


def _parse(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    parser.close()
    return parser


def _self_contained(parsed: _Page, page: str) -> None:
    assert "script" not in parsed.tags and "link" not in parsed.tags
    assert "iframe" not in parsed.tags
    for tag, name, value in parsed.refs:
        assert value.startswith("data:"), (tag, name, value)
    assert "url(" not in page  # nothing fetched from the CSS either
    assert "@import" not in page


def test_timeline_html_is_one_self_contained_page(demo_session):
    timeline = build_timeline(demo_session, budget_for(demo_session))
    page = timeline_report(demo_session, timeline, generated=WHEN, screenshot_png=b"\x89PNG fake")
    parsed = _parse(page)
    assert page.startswith("<!DOCTYPE html>")
    assert parsed.tags.count("svg") == 1
    _self_contained(parsed, page)
    assert [r for r in parsed.refs if r[0] == "img"] == [
        ("img", "src", "data:image/png;base64,iVBORyBmYWtl")
    ]
    text = "".join(parsed.text)
    # the session, the version and the time
    assert demo_session.id in text and demo_session.path in text
    assert "memlens 0.1.0" in text and "2026-11-28T09:30:00+00:00" in text
    # every message a row (#N, role, tokens, context tokens), every compaction before -> after
    messages = demo_session.messages()
    first, last = messages[0], messages[-1]
    assert f"#{first.index}" in text and f"#{last.index}" in text
    assert len(timeline.compactions) >= 2
    for marker in timeline.compactions:
        assert f"{marker.tokens_before:,} → {marker.tokens_after:,}" in text
    assert parsed.rows >= len(messages) + len(timeline.compactions)
    # the planted secret is gone; the message's markup is shown as text, not markup
    assert SECRET not in page and "sk-ant-api03" not in page
    assert "my key is [REDACTED]" in text
    assert "<b>bold</b>" in text and "<b>" not in page.replace("&lt;b&gt;", "")


def test_the_chart_is_drawn_from_the_arrays(demo_session):
    timeline = build_timeline(demo_session, budget_for(demo_session))
    svg = timeline_svg(timeline)
    root = ET.fromstring(svg)  # well-formed XML
    ns = "{http://www.w3.org/2000/svg}"
    labels = ["".join(t.itertext()) for t in root.iter(f"{ns}text")]
    for marker in timeline.compactions:  # the last one too: never clipped away
        assert marker.label.replace(" -> ", " → ") in labels
    for line in timeline.thresholds:
        assert f"{line.label} {line.tokens:,}" in labels
    ticks = [label for label in labels if label.startswith("#")]
    assert len(ticks) >= 4  # the x axis speaks of entries: #250, #500, ...
    assert all(int(t[1:].replace(",", "")) % 50 == 0 for t in ticks)
    assert "entry #N" in labels
    paths = [p.get("d", "") for p in root.iter(f"{ns}path")]
    assert sum(p.count("Z") for p in paths) >= 100  # the bars


def test_compaction_report_has_the_plan_the_cut_and_no_secret(demo_session):
    timeline = build_timeline(demo_session, budget_for(demo_session))
    plan = plan_compaction(demo_session, keep_recent_tokens=2_000)
    assert plan.ok, plan.reason
    page = compaction_report(plan, demo_session, generated=WHEN, timeline=timeline)
    parsed = _parse(page)
    _self_contained(parsed, page)
    assert parsed.tags.count("svg") == 1
    text = "".join(parsed.text)
    first = demo_session.by_id[plan.first_kept_entry_id]
    assert f"cut point: first kept #{first.index}" in text
    assert f"{plan.tokens_before:,} → {plan.expected_tokens_after():,}" in text
    assert f"#{plan.kept[-1].entry.index}" in text  # the planted message is kept
    assert SECRET not in page and "[REDACTED]" in text
    assert plan.previous_summary and "Previous summary" in text


@pytest.mark.parametrize("messages", [0, 1, 2])
def test_small_sessions_give_a_well_formed_page(tmp_path, messages):
    path = tmp_path / "small.jsonl"
    lines = [{"type": "session", "version": 3, "id": "small", "timestamp": "2026-11-18T12:00:00Z"}]
    parent = None
    for i in range(messages):
        lines.append(
            {
                "type": "message",
                "id": f"m{i}",
                "parentId": parent,
                "timestamp": "2026-11-18T12:00:00.000Z",
                "message": {"role": "user", "content": "hello & <goodbye>", "timestamp": 1},
            }
        )
        parent = f"m{i}"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    session = load_transcript(path)
    timeline = build_timeline(session)
    ET.fromstring(timeline_svg(timeline))
    page = timeline_report(session, timeline, generated=WHEN)
    text = "".join(_parse(page).text)
    assert ("no message in this session" in text) == (messages == 0)
    assert "no compaction in this session" in text
    assert text.count("hello & <goodbye>") == messages


def _cli_args(session, output, **kw):  # type: ignore[no-untyped-def]
    values = {"data": None, "at": None, "window": None, "compaction": False, "force": False}
    values |= {"json": True, "pretty": False, **kw}
    return argparse.Namespace(session=str(session), output=str(output), **values)


@pytest.mark.parametrize("compaction", [False, True])
def test_cli_writes_the_page_and_never_replaces_a_file_unasked(
    demo_session, tmp_path, capsys, compaction
):
    out = tmp_path / "report.html"
    assert cmd_export(_cli_args(demo_session.path, out, compaction=compaction)) == 0
    said = orjson.loads(capsys.readouterr().out)
    page = out.read_text(encoding="utf-8")
    assert said == {
        "session": demo_session.id,
        "path": demo_session.path,
        "output": str(out),
        "bytes": len(page.encode("utf-8")),
    }
    parsed = _parse(page)
    _self_contained(parsed, page)
    assert SECRET not in page
    title = "Compaction report for session" if compaction else "Timeline of session"
    assert f"{title} {demo_session.id}" in "".join(parsed.text)
    out.write_text("mine")
    with pytest.raises(CliError, match="exists; pass --force"):
        cmd_export(_cli_args(demo_session.path, out, compaction=compaction))
    assert out.read_text() == "mine"
    assert cmd_export(_cli_args(demo_session.path, out, compaction=compaction, force=True)) == 0
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_cli_names_a_missing_folder(demo_session, tmp_path):
    out = tmp_path / "nowhere" / "report.html"
    with pytest.raises(CliError, match=f"{out}: no such folder"):
        cmd_export(_cli_args(demo_session.path, out))
    assert not out.parent.exists()


def test_memlens_export_from_the_command_line(demo_session, tmp_path, capsys):
    out = tmp_path / "plan.html"
    argv = ["export", demo_session.path, "-o", str(out), "--compaction", "--json"]
    assert run_cli(argv) == 0
    assert orjson.loads(capsys.readouterr().out)["output"] == str(out)
    assert "Compaction report for session" in out.read_text(encoding="utf-8")
    assert run_cli(argv) == 1  # the file exists: not replaced
    assert "exists; pass --force" in capsys.readouterr().err
