from __future__ import annotations

import orjson
import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QColor, QPalette

from core.dataset.load import load_dataset
from core.demo.build import write_demo
from core.transcript import load_transcript
from tests.core.test_message_parts import synthetic_session
from widgets.session.message_view import MessageView


@pytest.fixture(scope="module")
def before(fixtures_dir):
    return load_transcript(fixtures_dir / "before-compaction.jsonl")


@pytest.fixture
def view(qtbot):
    v = MessageView()
    qtbot.addWidget(v)
    v.resize(900, 700)
    return v


def test_assistant_turn_with_folded_thinking_and_paired_results(view, before):
    view.show_entry(before, "#31")
    msg = before.entry("#31").message
    thinking = msg.blocks[0].text
    text = view.browser.toPlainText()
    assert view.entry_id == before.entry("#31").id
    assert "▸ Thinking" in text
    assert thinking.splitlines()[-1] not in text  # folded: only a one-line preview
    assert "Good catch. Let me check what types we're dealing with:" in text
    pairs = before.tool_pairs()
    for call in msg.tool_calls():
        assert call.tool_id in text
        for result_id in pairs[call.tool_id].result_entries:
            assert result_id in text
            first_line = before.by_id[result_id].message.text().splitlines()[0]
            assert first_line in text
    assert "≈ 176 tok" in text  # the thinking block's estimate
    assert "assistant" in view.header.text() and "cache read 66,986" in view.header.text()
    view.browser.anchorClicked.emit(QUrl("fold:0"))  # the thinking title is the first fold link
    text = view.browser.toPlainText()
    assert "▾ Thinking" in text and thinking.splitlines()[-1] in text
    view.toggle_fold("thinking-0")
    assert thinking.splitlines()[-1] not in view.browser.toPlainText()


def test_links_open_paired_entries(view, qtbot, before):
    view.show_entry(before, "#2")
    with qtbot.waitSignal(view.entry_activated) as blocker:
        view.browser.anchorClicked.emit(QUrl("entry:0"))
    assert blocker.args == [before.entry("#3").id]
    view.show_entry(before, "#3")  # a result shows the call it answers, linked
    assert "call: read" in view.browser.toPlainText()
    assert (
        "/Users/badlogic/workspaces/pi-mono/packages/coding-agent/src/main.ts"
        in view.browser.toPlainText()
    )
    with qtbot.waitSignal(view.entry_activated) as blocker:
        view.browser.anchorClicked.emit(QUrl("entry:0"))
    assert blocker.args == [before.entry("#2").id]


def test_html_in_content_is_shown_literally(view):
    s = synthetic_session()
    view.show_entry(s, "e1")
    assert "Look at <b>x</b> & 'quotes'" in view.browser.toPlainText()
    view.show_entry(s, "e2")
    text = view.browser.toPlainText()
    assert "secret plan <i>hmm</i>" in text
    assert "/src/a<b>.py" in text
    view.show_entry(s, "e6")
    assert "Summary with <script>alert(1)</script>" in view.browser.toPlainText()
    view.show_entry(s, "e11")
    assert "<u>raw</u>" in view.browser.toPlainText()


def test_images_errors_missing_results_and_clipping(view):
    s = synthetic_session()
    view.show_entry(s, "e1")
    assert "[image placeholder] image/png · 2.9 KB" in view.browser.toPlainText()
    view.show_entry(s, "e2")
    text = view.browser.toPlainText()
    assert "↳ error result" in text and "make: *** boom" in text
    assert "1 image(s)" in text  # the read result carries an image
    view.show_entry(s, "e5")
    assert "no result in this transcript" in view.browser.toPlainText()
    view.show_entry(s, "e3")
    text = view.browser.toPlainText()
    assert "image/jpeg · 1.2 KB" in text and "≈ 1,200 tok" in text
    assert "line 30 <tag>" in text and "line 31 <tag>" not in text
    assert "show 70 more lines" in text
    view.toggle_fold("text-0")
    assert (
        "line 100 <tag>" in view.browser.toPlainText() and "show less" in view.browser.toPlainText()
    )


def test_compaction_and_other_entries(view, before):
    comp = before.entry("#628")
    view.show_entry(before, "#628")
    text = view.browser.toPlainText()
    assert "tokensBefore" in text and "185,014" in text
    assert "tokensAfter" in text and "not recorded" in text
    assert f"{comp.raw['firstKeptEntryId']} (#551)" in text
    assert comp.raw["summary"].splitlines()[0] in text
    assert "compactionSummary" in view.header.text()
    view.show_entry(before, "#8")
    text = view.browser.toPlainText()
    assert "thinking_level_change entry" in text and "not part of the model's context" in text
    assert '"thinkingLevel": "minimal"' in text
    s = synthetic_session()
    view.show_entry(s, "e11")  # an unknown type shows raw
    assert '"payload": {' in view.browser.toPlainText() and "weird_thing" in view.header.text()


def test_raw_json_toggle_and_shortcut(view, qtbot, before):
    with qtbot.waitActive(view):
        view.show()
        view.activateWindow()
    view.show_entry(before, "#31")
    assert view.stack.currentWidget() is view.browser
    view.browser.setFocus()
    qtbot.keyClick(
        view.browser,
        Qt.Key.Key_J,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert view.is_raw()
    assert view.stack.currentWidget() is view.raw_edit
    raw = view.raw_edit.toPlainText()
    assert orjson.loads(raw) == before.entry("#31").raw
    assert '\n  "message": {' in raw  # pretty-printed
    view.show_entry(before, "#3")  # follows the selection while raw
    assert orjson.loads(view.raw_edit.toPlainText()) == before.entry("#3").raw
    view.raw_action.setChecked(False)
    assert view.stack.currentWidget() is view.browser


def test_clear_and_unknown_entry(view, before):
    view.show_entry(before, "#31")
    view.clear()
    assert view.entry_id is None and view.browser.toPlainText() == "No entry selected."
    assert view.header.text() == ""
    view.show_entry(before, "nope")
    assert "no entry with id 'nope'" in view.browser.toPlainText()


def test_dark_palette_recolours(view, before):
    view.show_entry(before, "#31")
    assert "#8250df" in view.header.text()
    dark = QPalette()
    for role, colour in (
        (QPalette.ColorRole.Window, "#1e1f22"),
        (QPalette.ColorRole.Base, "#16171a"),
        (QPalette.ColorRole.Text, "#dcdcdc"),
    ):
        dark.setColor(role, QColor(colour))
    view.setPalette(dark)
    assert "#bc8cff" in view.header.text() and "#8250df" not in view.header.text()


def test_demo_tool_calls_show_their_results(view, tmp_path):
    write_demo(tmp_path / "home", now_ms=1_760_000_000_000, segments=300)
    data = load_dataset(tmp_path / "home")
    session = max(data.sessions, key=lambda s: len(s.entries))
    pairs = session.tool_pairs()
    checked = thinking = 0
    for e in session.entries:
        m = e.message
        if m is None or m.role != "assistant" or not m.tool_calls():
            continue
        view.show_entry(session, e.id)
        text = view.browser.toPlainText()
        for call in m.tool_calls():
            for result_id in pairs[call.tool_id].result_entries:
                assert result_id in text
        if any(b.kind == "thinking" for b in m.blocks):
            assert "▸ Thinking" in text
            thinking += 1
        checked += 1
        if checked == 40:
            break
    assert checked == 40 and thinking > 0


def test_an_entry_the_agent_cannot_parse_is_marked_never_seen(view):
    from core.transcript.loader import parse_transcript

    head = {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"}

    def user(i: str, parent: str | None) -> bytes:
        msg = {"role": "user", "content": f"text {i}", "timestamp": 1}
        obj = {"type": "message", "id": i, "parentId": parent, "timestamp": "t", "message": msg}
        return orjson.dumps(obj)

    data = b"\n".join([orjson.dumps(head), user("a", None), user("b", "a") + user("c", "b")])
    s = parse_transcript(data + b"\n", "run-together.jsonl")
    view.show_entry(s, "b")
    assert "Never seen by the agent: it cannot parse line 3" in view.header.text()
    assert "text b" in view.browser.toPlainText()
    view.show_entry(s, "a")
    assert "Never seen" not in view.header.text()
