"""Fixes from a code review: a second place, stale fact sources, the compacted session reloaded."""

from __future__ import annotations

import os
import shutil
import time

import orjson
import pytest

from app.main_window import MainWindow
from core.demo.build import write_demo
from core.io.writes import always
from tests.demo_copy import demo_copy
from tests.qt_read import shown_fact_ids

NOW = int(time.time() * 1000)  # live segments must not be older than evictionDays


@pytest.fixture
def home(tmp_path):
    return demo_copy(tmp_path / "home", now_ms=NOW, segments=150)


def _window(qtbot, confirm=always):
    window = MainWindow(confirm=confirm)
    qtbot.addWidget(window)
    return window


def _open(qtbot, window, path):
    """Open *path* and wait until it is loaded, a session is shown and recall is ready."""
    old = window.data
    window.open_path(str(path))
    qtbot.waitUntil(
        lambda: (
            window.data is not None
            and window.data is not old
            and window.inspector.session is not None
        ),
        timeout=30000,
    )
    qtbot.waitUntil(window.settled, timeout=30000)
    return window


def _show_facts(qtbot, window):
    window.show()
    qtbot.waitExposed(window)
    window.show_view("facts")
    assert window.facts_view.isVisible()


# -- 1. a second place ----------------------------------------------------------------------------
def _second_place(tmp_path, first, which):
    """A place whose facts are none of *first*'s: another demo, an empty log, no log at all."""
    if which == "other demo":
        return write_demo(tmp_path / "other", seed=11, now_ms=NOW - 86_400_000, segments=120).root
    if which == "empty log":
        empty = tmp_path / "empty"
        shutil.copytree(first, empty)
        (empty / "memory" / "context" / "knowledge.jsonl").write_bytes(b"")
        return empty
    single = tmp_path / "single"
    single.mkdir()
    transcript = max(first.glob("agents/*/sessions/*.jsonl"), key=lambda p: p.stat().st_size)
    shutil.copy(transcript, single / transcript.name)
    return single / transcript.name


@pytest.mark.parametrize("second", ["other demo", "empty log", "no knowledge"])
def test_opening_a_place_with_other_facts_drops_the_selection(qtbot, home, tmp_path, second):
    place = _second_place(tmp_path, home, second)
    window = _open(qtbot, _window(qtbot), home)
    _show_facts(qtbot, window)
    view = window.facts_view
    old = window.data.knowledge
    ids = [f.id for f in old.facts.values() if f.status == "active"]
    assert view.select_ids(ids[:3], ids[1])
    assert view.selected_ids() and view.current_id() == ids[1]
    with qtbot.captureExceptions() as raised:
        _open(qtbot, window, place)
    assert raised == []
    new = window.data.knowledge
    assert view.log() is new
    known = set(new.facts) if new is not None else set()
    assert not set(ids[:3]) & known  # the places share no fact
    assert set(view.selected_ids()) <= known
    assert {f.id for f in view.selected_facts()} <= known
    assert view.current_id() in known | {""}
    view.wait_for_sources()


# -- 2. fact sources follow the transcripts -------------------------------------------------------
def _append_message(path, text):
    """Append one user message to a transcript, chained to its last entry (as an agent does)."""
    lines = [ln for ln in open(path, "rb").read().splitlines() if ln.strip()]
    leaf = orjson.loads(lines[-1])["id"]
    entry_id = "fe11a9e0"
    obj = {
        "type": "message",
        "id": entry_id,
        "parentId": leaf,
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        "message": {"role": "user", "content": text, "timestamp": int(time.time() * 1000)},
    }
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, orjson.dumps(obj) + b"\n")
    finally:
        os.close(fd)
    return entry_id


def _sources_of_current(qtbot, view):
    """Search the current fact's sources again (select another fact and come back)."""
    fid = view.current_id()
    other = next(i for i in shown_fact_ids(view) if i != fid)
    view.select_fact(other)
    with qtbot.waitSignal(view.sources_ready, timeout=20000) as got:
        view.select_fact(fid)
    return got.args[0]


def _fact_and_first_search(qtbot, window):
    """An active fact made current, and its sources (the first search builds the index)."""
    fact = next(f for f in window.data.knowledge.facts.values() if f.status == "active")
    window.facts_view.select_fact(fact.id)
    return fact, _sources_of_current(qtbot, window.facts_view)


def test_sources_find_a_message_that_live_mode_appended(qtbot, home):
    window = _open(qtbot, _window(qtbot), home)
    _show_facts(qtbot, window)
    fact, first = _fact_and_first_search(qtbot, window)
    session = window.data.sessions[0]
    entry = _append_message(session.path, f"{fact.content} zyxquorbl")
    qtbot.waitUntil(lambda: entry in session.by_id, timeout=10000)  # live mode read it
    assert entry not in {h.id for h in first}
    hits = _sources_of_current(qtbot, window.facts_view)
    assert entry in {h.id for h in hits if h.kind == "message"}
    window.facts_view.wait_for_sources()


def test_sources_find_a_message_of_a_reloaded_session(qtbot, home):
    window = _open(qtbot, _window(qtbot), home)
    window.live.detach()  # only the manager's reload reads the file
    _show_facts(qtbot, window)
    fact, _first = _fact_and_first_search(qtbot, window)
    path = window.data.sessions[-1].path
    entry = _append_message(path, f"{fact.content} zyxquorbl")
    reloaded = window.manager.reload_session(path)
    assert reloaded is not None and entry in reloaded.by_id
    hits = _sources_of_current(qtbot, window.facts_view)
    assert entry in {h.id for h in hits if h.kind == "message"}
    window.facts_view.wait_for_sources()


def test_the_index_is_built_from_copies_of_the_transcripts(qtbot, home):
    """The worker never iterates a list that live mode appends to on the GUI thread."""
    window = _open(qtbot, _window(qtbot), home)
    _show_facts(qtbot, window)
    _fact_and_first_search(qtbot, window)
    index = window.manager._messages
    assert index is not None
    live_lists = {id(s.entries) for s in window.data.sessions}
    assert not live_lists & {id(s.entries) for s in index._sessions}
    window.facts_view.wait_for_sources()


def test_no_sources_search_while_the_facts_tab_is_hidden(qtbot, home):
    window = _open(qtbot, _window(qtbot), home)
    window.show()
    qtbot.waitExposed(window)
    window.show_view("message")
    view = window.facts_view
    assert not view.isVisible()
    calls: list[str] = []
    search = view._sources
    assert search is not None

    def counted(content):
        calls.append(content)
        return search(content)

    view._sources = counted
    ids = [f.id for f in window.data.knowledge.facts.values() if f.status == "active"]
    view.select_fact(ids[1])
    view.select_fact(ids[0])
    qtbot.wait(400)  # well past the debounce
    view.wait_for_sources()
    assert calls == []
    with qtbot.waitSignal(view.sources_ready, timeout=20000):
        window.show_view("facts")
    assert calls == [window.data.knowledge.facts[ids[0]].content]
    view.wait_for_sources()


# -- 3. the compacted session is the one reloaded -------------------------------------------------
def test_the_session_compacted_is_reloaded_not_the_one_shown(qtbot, home):
    switch_to: list[str] = []

    def confirm(_writes):
        # The user looks at another session while the write runs.
        window.navigator.select_session(switch_to[0])
        return True

    window = _open(qtbot, _window(qtbot, confirm), home)
    by_size = sorted(window.data.summaries, key=lambda s: s.messages)
    a_summary, b_summary = by_size[-1], by_size[0]
    window.navigator.select_session(a_summary.id)
    a = window.data.session(a_summary.path)
    b = window.data.session(b_summary.path)
    b_entries = list(b.entries)
    switch_to.append(b.id)
    panel = window.compaction_panel
    qtbot.waitUntil(lambda: panel.plan() is not None and not panel.is_busy(), timeout=30000)
    past = time.time() - 60
    os.utime(a.path, (past, past))  # not "modified just now"
    panel.run()
    qtbot.waitUntil(lambda: panel.result() is not None and not panel.is_busy(), timeout=60000)
    compactions = len(a.compaction_entries())
    with qtbot.waitSignal(panel.written, timeout=60000) as got:
        panel.write()
    run = got.args[0]
    assert window.inspector.session is b
    reloaded = window.data.session(a.path)
    assert reloaded is not a
    assert len(reloaded.compaction_entries()) == compactions + 1
    assert reloaded.leaf.id == run.entry["id"]
    assert window.data.session(b.path) is b and b.entries == b_entries
    assert window.navigator.current().path == b.path
    assert a.path in window.status.place_label.text()
    qtbot.waitUntil(lambda: not panel.is_busy(), timeout=30000)
