"""Navigation (issue 17, item 13): search everywhere, Back/Forward, references, drops."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from app.main_window import MainWindow
from core.refs.reference import Reference, format_reference, parse_reference
from widgets.common.record_model import RecordRole


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory):
    from core.demo.build import write_demo

    return write_demo(tmp_path_factory.mktemp("nav") / "home", segments=200).root


def _window(qtbot):
    window = MainWindow()
    qtbot.addWidget(window)
    return window


def _open(qtbot, path):
    window = _window(qtbot)
    window.open_path(str(path))
    qtbot.waitUntil(lambda: window.inspector.session is not None, timeout=30_000)
    return window


def _results(window):
    model = window.navigation.popup.results
    return [model.index(r, 0).data(RecordRole) for r in range(model.rowCount())]


def _search(qtbot, window, text):
    window.menu_actions.by_name["search"].trigger()
    popup = window.navigation.popup
    assert popup.isVisible()
    qtbot.keyClicks(popup.query_box, text)
    qtbot.waitUntil(lambda: not popup._timer.isActive(), timeout=5000)
    return popup


def _settled(qtbot, window):
    qtbot.waitUntil(window.settled, timeout=30_000)
    qtbot.waitUntil(lambda: window.navigation._going is None, timeout=30_000)


def test_the_go_menu_sits_before_help_with_free_shortcuts(qtbot):
    window = _window(qtbot)
    titles = [a.text() for a in window.menuBar().actions()]
    assert titles.index("&Go") == titles.index("&Help") - 1
    keys = {
        name: window.menu_actions.by_name[name].shortcut().toString()
        for name in ("search", "back", "forward", "copy_reference")
    }
    assert keys == {
        "search": "Ctrl+K",
        "back": "Alt+Left",
        "forward": "Alt+Right",
        "copy_reference": "Ctrl+Shift+C",
    }
    rows = [k for where, _a, k in window.menu_actions.shortcut_table() if where == "Window"]
    assert len(set(rows)) == len(rows)  # none of them taken twice
    back, forward = window.menu_actions.by_name["back"], window.menu_actions.by_name["forward"]
    assert not back.isEnabled() and not forward.isEnabled()  # nowhere visited yet


def test_search_everywhere_goes_to_a_session_an_entry_a_fact_and_a_segment(qtbot, demo_home):
    window = _open(qtbot, demo_home)
    window.show()
    qtbot.waitUntil(lambda: window.recall_data is not None, timeout=30_000)
    data = window.data
    # a session by the start of its id
    other = next(s for s in data.sessions if s.path != window.inspector.session.path)
    popup = _search(qtbot, window, other.id[:8])
    qtbot.waitUntil(lambda: "indexing" not in popup.count_label.text(), timeout=30_000)
    assert _results(window)[0].reference.session == other.id
    qtbot.keyClick(popup.query_box, Qt.Key.Key_Return)
    assert not popup.isVisible()
    _settled(qtbot, window)
    assert window.navigator.current().path == other.path == window.inspector.session.path
    # an entry by words of its text; Down moves to the next result, Up back
    entry = next(e for e in other.messages()[5:] if len(e.message.text().split()) > 8)
    phrase = " ".join(entry.message.text().split()[2:7])
    popup = _search(qtbot, window, phrase)
    hits = _results(window)
    assert hits and any(h.reference.entry == entry.id for h in hits)
    row = next(i for i, h in enumerate(hits) if h.reference.entry == entry.id)
    for _ in range(row):
        qtbot.keyClick(popup.query_box, Qt.Key.Key_Down)
    assert popup.result_view.currentIndex().row() == row
    qtbot.keyClick(popup.query_box, Qt.Key.Key_Return)
    _settled(qtbot, window)
    assert window.message_view.entry_id == entry.id == window.state.entry
    assert window.timeline.selected_entry() == entry.id or window.timeline.timeline() is None
    assert window.current_view() is window.message_view
    # a fact by its text
    fact = next(f for f in data.knowledge.facts.values() if f.status == "active")
    popup = _search(qtbot, window, " ".join(fact.content.split()[:4]))
    item = next(h for h in _results(window) if h.reference.fact == fact.id)
    popup.item_chosen.emit(item)
    _settled(qtbot, window)
    assert window.facts_view.current_id() == fact.id
    assert window.current_view() is window.facts_view
    # a segment by its text
    seg = window.recall_data.store.live()[7]
    popup = _search(qtbot, window, " ".join(seg.content.split()[:5]))
    item = next(h for h in _results(window) if h.reference.segment == seg.id)
    popup.item_chosen.emit(item)
    _settled(qtbot, window)
    assert window.current_view() is window.recall_view
    assert window.recall_view.why_box.edit.text() == seg.id
    assert seg.id[:8] in window.recall_view.why_box.label.text()


def test_escape_closes_the_popup_and_nothing_changes(qtbot, demo_home):
    window = _open(qtbot, demo_home)
    window.show()
    before = window.state.entry
    popup = _search(qtbot, window, "the")
    assert _results(window)
    qtbot.keyClick(popup.query_box, Qt.Key.Key_Escape)
    assert not popup.isVisible() and window.state.entry == before


def test_back_and_forward_restore_the_places_visited(qtbot, demo_home):
    window = _open(qtbot, demo_home)
    window.show()
    _settled(qtbot, window)
    session = window.inspector.session
    first, second = session.messages()[3], session.messages()[9]
    window.timeline.entry_activated.emit(first.id)
    window.show_view("context")
    window.timeline.entry_activated.emit(second.id)
    actions = window.menu_actions.by_name
    assert actions["back"].isEnabled() and not actions["forward"].isEnabled()
    actions["back"].trigger()
    _settled(qtbot, window)
    assert window.state.entry == first.id and window.message_view.entry_id == first.id
    assert actions["forward"].isEnabled()
    actions["forward"].trigger()
    _settled(qtbot, window)
    assert window.state.entry == second.id
    assert window.current_view() is window.context_view  # the tab it was seen in
    assert not actions["forward"].isEnabled()
    # another session, then the mouse's back button returns to the entry before
    other = next(s for s in window.data.summaries if s.path != session.path)
    window.navigator.select_session(other.path)
    qtbot.waitUntil(lambda: window.inspector.session.path == other.path, timeout=10_000)
    # a click as the system delivers it: to the window, which hands it to the widget under it
    tree = window.navigator.tree.viewport()
    where = tree.mapTo(window, tree.rect().center())
    qtbot.mouseClick(window.windowHandle(), Qt.MouseButton.BackButton, pos=where)
    _settled(qtbot, window)
    assert window.inspector.session.path == session.path and window.state.entry == second.id
    qtbot.mouseClick(window.windowHandle(), Qt.MouseButton.ForwardButton, pos=where)
    _settled(qtbot, window)
    assert window.inspector.session.path == other.path


def test_a_copied_reference_opens_the_same_entry_in_a_new_window(qtbot, demo_home):
    window = _open(qtbot, demo_home)
    _settled(qtbot, window)
    session = window.inspector.session
    entry = session.messages()[4]
    window.inspector.show_entry(entry.id)
    text = window.navigation.copy_reference()
    assert QApplication.clipboard().text() == text
    assert parse_reference(text) == Reference(str(demo_home), session.id, entry=entry.id)
    # as `memlens open REF` starts it: app.main's --open
    from app.main import build_window

    second = build_window(["--open", text])
    qtbot.addWidget(second)
    qtbot.waitUntil(lambda: second.state.entry == entry.id, timeout=30_000)
    assert second.inspector.session.path == session.path
    assert second.message_view.entry_id == entry.id
    assert second.current_view() is second.message_view


def test_a_fact_or_segment_reference_opens_its_place(qtbot, demo_home):
    window = _open(qtbot, demo_home)
    _settled(qtbot, window)
    data = window.data
    fact = list(data.knowledge.facts.values())[5]
    window.show_view("facts")
    window.facts_view.select_fact(fact.id)
    ref = window.navigation.copy_reference()
    assert parse_reference(ref).fact == fact.id
    seg = window.recall_data.store.live()[3]
    window.show_view("sessions")
    assert window.navigation.open_reference(
        format_reference(Reference(str(demo_home), segment=seg.id[:8]))
    )
    _settled(qtbot, window)
    assert window.recall_view.why_box.edit.text() == seg.id
    assert window.navigation.open_reference(ref)
    _settled(qtbot, window)
    assert window.facts_view.current_id() == fact.id and window.current_view() is window.facts_view


def test_a_reference_to_what_is_not_there_says_so(qtbot, demo_home):
    window = _open(qtbot, demo_home)
    _settled(qtbot, window)
    assert not window.navigation.open_reference("memlens://open?session=x")
    assert "no path" in window.status.place_label.text()
    window.navigation.open_reference(format_reference(Reference(str(demo_home), "nope")))
    _settled(qtbot, window)
    assert "Session nope is not in" in window.status.place_label.text()
    session = window.inspector.session
    window.navigation.open_reference(
        format_reference(Reference(str(demo_home), session.id, entry="#99999"))
    )
    _settled(qtbot, window)
    assert "no object #99999" in window.status.place_label.text()


def test_a_reference_into_an_unread_database_session(qtbot, tmp_path):
    from core.openclaw.agentdb import session_path
    from tests.openclaw_db import add_session, conversation, create_agent_db

    home = tmp_path / ".openclaw"
    db = home / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    con = create_agent_db(db)
    for i in range(3):
        add_session(con, f"s{i}", conversation(f"s{i}", 20 + i), created_at=1_795_600_000_000 + i)
    con.close()
    window = _window(qtbot)
    window.navigation.open_reference(format_reference(Reference(str(home), "s0", entry="#5")))
    qtbot.waitUntil(lambda: window.state.session == session_path(db, "s0"), timeout=30_000)
    _settled(qtbot, window)
    assert window.inspector.session.entry("#5").id == window.state.entry


def _drop(window, mime):
    pos = QPointF(10, 10)
    args = (
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    enter = QDragEnterEvent(pos.toPoint(), *args)
    window.dragEnterEvent(enter)
    drop = QDropEvent(pos, *args)
    window.dropEvent(drop)
    return enter.isAccepted(), drop.isAccepted()


def _urls(*paths):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    return mime


@pytest.mark.parametrize("what", ["folder", "transcript", "database"])
def test_dropping_a_folder_a_transcript_or_an_agent_database_opens_it(qtbot, tmp_path, demo_home,
                                                                      what):  # fmt: skip
    if what == "database":
        from tests.openclaw_db import add_session, conversation, create_agent_db

        target = tmp_path / "openclaw-agent.sqlite"
        con = create_agent_db(target)
        add_session(con, "s0", conversation("s0", 6), created_at=1_795_600_000_000)
        con.close()
    elif what == "transcript":
        target = next((demo_home / "agents" / "main" / "sessions").glob("*.jsonl"))
    else:
        target = demo_home
    window = _window(qtbot)
    assert _drop(window, _urls(target)) == (True, True)
    qtbot.waitUntil(lambda: window.inspector.session is not None, timeout=30_000)
    assert window.place == str(target) and window.data.summaries


def test_dropping_a_reference_goes_there(qtbot, demo_home):
    window = _window(qtbot)
    session = next((demo_home / "agents" / "main" / "sessions").glob("*.jsonl")).stem
    mime = QMimeData()
    mime.setText(format_reference(Reference(str(demo_home), session, entry="#6")))
    assert _drop(window, mime) == (True, True)
    qtbot.waitUntil(lambda: window.inspector.session is not None, timeout=30_000)
    _settled(qtbot, window)
    assert window.inspector.session.id == session
    assert window.inspector.session.entry("#6").id == window.state.entry


def test_an_unsupported_drop_is_refused_with_a_message(qtbot, tmp_path):
    window = _window(qtbot)
    note = tmp_path / "notes.txt"
    note.write_text("hello")
    assert _drop(window, _urls(note)) == (False, False)
    assert "Cannot open" in window.status.place_label.text()
    assert str(note) in window.status.place_label.text()
    mime = QMimeData()
    mime.setUrls([QUrl("https://example.com/x.jsonl")])
    assert _drop(window, mime) == (False, False)
    assert "Only local files" in window.status.place_label.text()
    text = QMimeData()
    text.setText("just words")
    assert _drop(window, text) == (False, False)
    assert "memlens:// reference" in window.status.place_label.text()
    assert window.data is None and window.load_job is None


def test_the_app_takes_a_reference_as_its_argument_or_with_open():
    from app.main import parse_args

    ref = "memlens://open?path=/d&fact=f1"
    args = parse_args([ref])
    assert (args.reference, args.path) == (ref, None)
    assert parse_args(["--open", ref]).reference == ref
    assert parse_args(["/some/dir"]).reference is None


def test_memlens_open_starts_the_app_on_the_checked_reference(demo_home, monkeypatch, capsys):
    import app.main
    from app.launcher import main

    started = []
    monkeypatch.setattr(app.main, "run_gui", lambda argv: started.append(argv) or 0)
    fact = format_reference(Reference(str(demo_home), fact="nope"))
    assert main(["open", fact]) == 2 and started == []  # not there: the app is not started
    session = next((demo_home / "agents" / "main" / "sessions").glob("*.jsonl")).stem
    ref = format_reference(Reference(str(demo_home), session, entry="#3"))
    assert main(["open", ref]) == 0
    assert started == [["--open", ref]] and "entry #3" in capsys.readouterr().out
