"""Fact provenance in the app: fact -> message -> compaction -> summary line, and back."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt

from app.main_window import MainWindow
from tests.core.test_provenance import COMPACTION, CONTENT, small_home
from widgets.session.message_html import SUMMARY_ANCHOR, Theme


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory):
    return small_home(tmp_path_factory.mktemp("prov") / "home")


def _settled(qtbot, window):
    qtbot.waitUntil(window.settled, timeout=30_000)
    qtbot.waitUntil(lambda: window.navigation._going is None, timeout=30_000)


def _activate(qtbot, table, row):
    """Make *row* current and press Enter on it, as a user would."""
    table.setFocus()
    table.setCurrentIndex(table.model().index(row, 0))
    qtbot.keyClick(table, Qt.Key.Key_Return)


def _block_of_line(view, line):
    doc = view.browser.document()
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        if not it.atEnd() and f"{SUMMARY_ANCHOR}{line}" in it.fragment().charFormat().anchorNames():
            return block
        block = block.next()
    return None


def test_a_fact_leads_to_its_message_compaction_and_summary_line_and_back(qtbot, demo_home):
    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1366, 768)
    window.open_path(str(demo_home))
    window.show()
    qtbot.waitUntil(lambda: window.inspector.session is not None, timeout=30_000)
    _settled(qtbot, window)
    fact = next((f for f in window.data.knowledge.facts.values() if f.content == CONTENT), None)
    assert fact is not None
    facts = window.facts_view
    window.show_view("facts")
    assert facts.select_fact(fact.id)
    detail = facts.detail
    qtbot.waitUntil(lambda: bool(detail.provenance.rows()), timeout=20_000)
    assert facts.wait_for_sources()
    rows = detail.provenance.rows()
    assert rows[0].what == "message" and not rows[0].message.recorded
    assert "inferred" in detail.tabs.tabText(3) and "Inferred" in detail.provenance.note.text()
    at = next(i for i, r in enumerate(rows) if r.what == "line")
    line_row = rows[at]
    message = line_row.message
    assert (message.entry_id, line_row.line.number, line_row.line.status) == ("00000003", 4, "kept")
    # traced in the Sources tab's message index (the transcripts are indexed once), and
    # kept while the sessions do not change
    index = window.manager.provenance_index()
    assert index is window.manager.provenance_index() and index is not None
    assert index.messages is window.manager._messages

    # the source message
    detail.tabs.setCurrentIndex(3)
    table = detail.provenance.table
    msg_row = rows.index(next(r for r in rows if r.what == "message" and r.message is message))
    with qtbot.waitSignal(facts.message_requested):
        _activate(qtbot, table, msg_row)
    _settled(qtbot, window)
    assert window.message_view.entry_id == message.entry_id
    assert window.current_view() is window.message_view
    # Back: the fact again
    window.menu_actions.by_name["back"].trigger()
    _settled(qtbot, window)
    assert facts.current_id() == fact.id and window.current_view() is facts

    # the compaction that summarised it, the line that keeps the fact marked
    with qtbot.waitSignal(facts.compaction_requested):
        _activate(qtbot, table, at)
    _settled(qtbot, window)
    view = window.message_view
    comp = message.compaction
    assert view.entry_id == comp.entry_id == COMPACTION and window.current_view() is view
    assert view.highlighted_line() == line_row.line.number
    block = _block_of_line(view, line_row.line.number)
    assert block is not None and block.text().strip() == line_row.line.text.strip()
    marked = Theme.from_palette(view.palette()).highlight()
    assert block.blockFormat().background().color().name() == marked
    assert _block_of_line(view, line_row.line.number + 1).blockFormat().background().color(
    ).name() != marked  # fmt: skip
    # the line under the pointer is the one the context menu offers
    rect = view.browser.document().documentLayout().blockBoundingRect(block)
    scroll = view.browser.verticalScrollBar().value()
    point = QPoint(int(rect.left()) + 4, int(rect.center().y()) - scroll)
    assert view.summary_line_at(point) == line_row.line.number

    # back from the summary line to the facts of the same messages (keyboard route)
    assert view.facts_action.isEnabled()
    view.setFocus()
    qtbot.keyClick(view.browser, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier
                   | Qt.KeyboardModifier.ShiftModifier)  # fmt: skip
    qtbot.waitUntil(
        lambda: (
            window.navigation.facts_dialog is not None
            and window.navigation.facts_dialog.isVisible()
        ),
        timeout=20_000,
    )
    dialog = window.navigation.facts_dialog
    links = dialog.links()
    assert links[0].fact.id == fact.id and links[0].line_status in ("kept", "normalised")
    assert "summary line" in dialog.note.text()
    _activate(qtbot, dialog.table, 0)
    _settled(qtbot, window)
    assert not dialog.isVisible()
    assert facts.current_id() == fact.id and window.current_view() is facts
    window.menu_actions.by_name["back"].trigger()
    _settled(qtbot, window)
    assert window.message_view.entry_id == comp.entry_id
