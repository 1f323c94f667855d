"""Issue 17 item 14: File > Export, driven on the real window over the demo data."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import orjson
import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QMenu

from app.export import Exporter
from app.main_window import MainWindow
from core.demo.build import write_demo
from widgets.common.export_image import redact_svg_text

SECRET = "sk-ant-api03-FAKEfakeFAKEfake0123456789abcdefFAKE"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """A demo home; its session with the most compactions has a secret in its last message."""
    root = tmp_path_factory.mktemp("demo")
    summary = write_demo(root, segments=40, now_ms=1_795_000_000_000)
    path = max(summary.transcripts, key=lambda p: p.read_text().count('"type":"compaction"'))
    last = orjson.loads(path.read_bytes().splitlines()[-1])
    line = {
        "type": "message",
        "id": "planted1",
        "parentId": last["id"],
        "timestamp": "2026-11-18T12:00:00.000Z",
        "message": {
            "role": "user",
            "content": [{"type": "text", "text": f"here is the key {SECRET} for the bug"}],
            "timestamp": 1795002600000,
        },
    }
    with path.open("ab") as f:
        f.write(orjson.dumps(line) + b"\n")
    return root, path.name.removesuffix(".jsonl")


@pytest.fixture
def window(qtbot, demo):
    root, session_id = demo
    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1366, 768)
    window.show()
    window.open_path(str(root))
    qtbot.waitUntil(lambda: window.data is not None and window.settled(), timeout=60_000)
    assert window.navigator.select_session(session_id)
    qtbot.waitUntil(lambda: _timeline_of(window) == session_id, timeout=30_000)
    return window


def _timeline_of(window: MainWindow) -> str | None:
    timeline = window.timeline.timeline()
    return timeline.session_id if timeline is not None else None


def _exporter(window: MainWindow, path) -> Exporter:
    exporter = window.findChild(Exporter)
    asked: list[str] = []

    def ask(_parent, _caption, suggested, _filters, _suffix):  # type: ignore[no-untyped-def]
        asked.append(suggested)
        return str(path)

    exporter.ask_path = ask
    exporter.asked = asked  # type: ignore[attr-defined]
    return exporter


def _finish(qtbot, window, job) -> str:  # type: ignore[no-untyped-def]
    assert job is not None
    qtbot.waitUntil(lambda: not job.running, timeout=30_000)
    assert job.outcome == "done"
    return window.status.place_label.text()


def _said(qtbot, window, out) -> str:  # type: ignore[no-untyped-def]
    """What the status bar says once a menu's export has written *out*."""
    label = window.status.place_label
    qtbot.waitUntil(lambda: out.exists() and label.text().startswith("Exported"), timeout=30_000)
    return label.text()


def test_file_menu_has_the_export_submenu(window):
    file_menu = window.menu_actions.menus["file"]
    submenus = [a.menu() for a in file_menu.actions() if a.menu() is not None]
    export = next(m for m in submenus if isinstance(m, QMenu) and m.objectName() == "export-menu")
    texts = [a.text().replace("&", "") for a in export.actions() if not a.isSeparator()]
    assert texts == [
        "Export Current View as PNG…",
        "Export Current View as SVG…",
        "Export Timeline as HTML…",
        "Export Compaction Report as HTML…",
    ]
    names = [a.text().replace("&", "") for a in file_menu.actions()]
    assert names.index("Export") == names.index("Reload") + 1


def test_the_focused_view_as_png_has_its_size(qtbot, window, tmp_path):
    out = tmp_path / "timeline.png"
    exporter = _exporter(window, out)
    window.show_view("timeline")
    assert exporter.current_view() == ("Timeline", window.timeline)
    window.menu_actions.by_name["export_view_png"].trigger()
    said = _said(qtbot, window, out)
    image = QImage(str(out))
    assert not image.isNull()
    ratio = window.timeline.devicePixelRatioF()
    assert (image.width(), image.height()) == (
        round(window.timeline.width() * ratio),
        round(window.timeline.height() * ratio),
    )
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert said.startswith("Exported the Timeline view") and str(out) in said
    assert exporter.asked[0].endswith("memlens-timeline.png")


def test_the_current_tab_as_svg_parses_and_is_redacted(qtbot, window, tmp_path):
    out = tmp_path / "message.svg"
    exporter = _exporter(window, out)
    window.show_view("message")  # the planted message is the selected (last) entry
    name, view = exporter.current_view()
    assert (name, view) == ("Message", window.message_view)
    said = _finish(qtbot, window, exporter.export_view("svg"))
    root = ET.fromstring(out.read_bytes())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.get("viewBox") == f"0 0 {view.width()} {view.height()}"
    text = "".join(root.itertext())
    assert "here is the key" in text and "[REDACTED]" in text
    assert SECRET not in out.read_text()
    assert "Message view" in said


class _Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.refs: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        self.tags.append(tag)
        self.refs += [v or "" for k, v in attrs if k in ("src", "href", "xlink:href", "data")]

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        self.text.append(data)


def _page(path) -> tuple[_Refs, str]:  # type: ignore[no-untyped-def]
    page = path.read_text(encoding="utf-8")
    parser = _Refs()
    parser.feed(page)
    parser.close()
    assert "script" not in parser.tags and "link" not in parser.tags
    assert all(ref.startswith("data:") for ref in parser.refs)
    assert SECRET not in page
    return parser, "".join(parser.text)


def test_timeline_as_html_from_the_menu(qtbot, window, tmp_path):
    out = tmp_path / "report.html"
    exporter = _exporter(window, out)
    action = window.menu_actions.by_name["export_timeline_html"]
    exporter.update_actions()
    assert action.isEnabled()
    action.trigger()
    said = _said(qtbot, window, out)
    parser, text = _page(out)
    timeline = window.timeline.timeline()
    session = window.inspector.session
    assert "svg" in parser.tags and "img" in parser.tags  # the chart, and the view as shown
    assert session.id in text and session.path in text
    for marker in timeline.compactions:
        assert f"{marker.tokens_before:,} → {marker.tokens_after:,}" in text
    assert "here is the key [REDACTED] for the bug" in text
    assert said.startswith(f"Exported the timeline of {session.id} to {out}")


def test_compaction_report_as_html(qtbot, window, tmp_path):
    panel = window.compaction_panel
    qtbot.waitUntil(lambda: panel.plan() is not None, timeout=30_000)
    out = tmp_path / "compaction.html"
    exporter = _exporter(window, out)
    said = _finish(qtbot, window, exporter.export_compaction_html())
    _parser, text = _page(out)
    plan = panel.plan()
    assert f"{plan.tokens_before:,} → {plan.expected_tokens_after():,}" in text
    assert said.startswith("Exported the compaction report")


def test_a_cancelled_dialog_writes_nothing(qtbot, window, tmp_path):
    exporter = _exporter(window, "")
    before = window.status.place_label.text()
    assert exporter.export_view("png") is None
    assert exporter.export_timeline_html() is None
    assert list(tmp_path.iterdir()) == []
    assert window.status.place_label.text() == before


def test_a_failed_write_is_said_not_raised(qtbot, window, tmp_path):
    out = tmp_path / "missing-folder" / "view.png"
    exporter = _exporter(window, out)
    job = exporter.export_view("png")
    qtbot.waitUntil(lambda: not job.running, timeout=30_000)
    assert job.outcome == "failed"
    assert window.status.place_label.text() == (
        f"Could not export to {out}: No such file or directory"
    )
    assert not out.parent.exists()


def test_nothing_open_nothing_to_export(qtbot, tmp_path):
    window = MainWindow()
    qtbot.addWidget(window)
    exporter = _exporter(window, tmp_path / "x.html")
    actions = window.menu_actions.by_name
    exporter.update_actions()  # what the menu shows
    assert not actions["export_timeline_html"].isEnabled()
    assert not actions["export_compaction_html"].isEnabled()
    assert exporter.export_timeline_html() is None
    assert window.status.place_label.text().startswith("No timeline to export")
    assert exporter.export_compaction_html() is None
    assert window.status.place_label.text().startswith("No compaction plan to export")
    assert exporter.asked == [] and list(tmp_path.iterdir()) == []


def test_a_key_wrapped_over_two_text_runs_is_redacted_in_both():
    svg = (
        '<svg><title>t</title><text x="1" y="2">here is the key sk-ant-api03-</text><g/>'
        "<text>FAKEfakeFAKEfake0123456789abcdefFAKE for</text><text> the bug &amp; more</text>"
        '<text>api_key=</text><text>abcdefghijabcdefghij0123</text><image href="data:,'
        + "A" * 80
        + '"/></svg>'
    )
    clean = redact_svg_text(svg)
    runs = ["".join(t.itertext()) for t in ET.fromstring(clean).iter("text")]
    assert runs == [
        "here is the key [REDACTED]",
        "[REDACTED] for",
        " the bug & more",
        "api_key=",
        "[REDACTED]",
    ]
    assert "A" * 80 in clean  # attributes (an embedded image) untouched
    assert redact_svg_text("<svg><text>nothing secret</text></svg>") == (
        "<svg><text>nothing secret</text></svg>"
    )
