"""Live mode in the window: batches become row inserts and updates, never resets.

The window follows a demo home while lines are appended; the navigator keeps its
selection, scroll position and expanded rows, the problems list gets each new problem
once (its cost grows with the new problems, not with all problems so far), and the app
state says what live mode does.
"""

from __future__ import annotations

import time

import orjson
import pytest

from app.main_window import MainWindow
from core.io.writes import always
from tests.demo_copy import demo_copy
from widgets.common.record_model import RecordRole

NOW = int(time.time() * 1000)


@pytest.fixture
def window(qtbot, tmp_path):
    root = demo_copy(tmp_path / "home", now_ms=NOW, segments=60)
    window = MainWindow(confirm=always)
    qtbot.addWidget(window)
    window.open_path(str(root))
    qtbot.waitUntil(lambda: window.recall_data is not None, timeout=60_000)
    qtbot.waitUntil(lambda: window.state.live.following, timeout=10_000)
    return window


def test_batches_insert_rows_and_keep_the_views_state(qtbot, window, monkeypatch, caplog):
    live = window.live.controller
    data = window.data
    nav = window.navigator
    session = max(data.sessions, key=lambda s: s.size)
    assert nav.select_session(session.path)
    chosen = nav.current()
    agents = [nav.proxy.index(r, 0) for r in range(nav.proxy.rowCount())]
    mine = nav.proxy.mapFromSource(nav.model.session_index(session.path)).parent()
    others = [a for a in agents if a != mine]
    assert others, "the demo has several agents"
    nav.tree.collapse(others[0])
    expanded = {a.data(): nav.tree.isExpanded(a) for a in agents}
    resets, inserted, handed = [], [], []
    nav.model.modelReset.connect(lambda: resets.append("navigator"))
    window.problems.modelReset.connect(lambda: resets.append("problems"))
    nav.model.rowsInserted.connect(lambda parent, first, last: inserted.append(first))
    real_append, real_set = window.problems.append_rows, window.problems.set_records
    window.problems.append_rows = lambda rows: (handed.append(len(rows)), real_append(rows))
    window.problems.set_records = lambda rows: (handed.append(len(rows)), real_set(rows))
    before = window.problems.rowCount()
    if before:
        window.problem_view.selectRow(0)
    batches = []
    live.batch_applied.connect(batches.append)
    rounds = 12
    for i in range(rounds):  # one bad line a batch: the old code reset the list each time
        with open(session.path, "ab") as fh:
            fh.write(b'{"type":"message","id":"bad%d", oops\n' % i)
        qtbot.waitUntil(lambda n=i: sum(len(c.problems) for c in batches) > n, timeout=5_000)
    assert window.problems.rowCount() == before + rounds
    assert sum(handed) == rounds, handed  # each new problem handed to the model once
    assert resets == []
    assert nav.current().path == chosen.path
    assert {a.data(): nav.tree.isExpanded(a) for a in agents} == expanded
    if before:
        assert window.problem_view.currentIndex().row() == 0
    # A new transcript in the agent's folder: one row inserted under its agent.
    fresh = session.path.replace(".jsonl", "-copy.jsonl")
    head = open(session.path, "rb").readline()
    header = orjson.loads(head)
    header["id"] = "live-new-session"
    with open(fresh, "wb") as fh:
        fh.write(orjson.dumps(header) + b"\n")
    qtbot.waitUntil(lambda: nav.model.session_index(fresh).isValid(), timeout=10_000)
    assert inserted and resets == []
    assert nav.current().path == chosen.path
    assert nav.model.session_index(fresh).data(RecordRole).path == fresh
    status = window.state.live
    assert status.following and status.path == str(data.discovery.path)
    assert status.last_change > 0 and status.error == ""
    # A failed read reaches the app state and the log (with its traceback).
    follower = live.follower

    def broken(*_a, **_kw):
        raise OSError("the disk went away")

    monkeypatch.setattr(follower, "read", broken)
    errors = []
    window.state.live_changed.connect(lambda s: errors.append(s.error))
    live.pause()
    live.resume()  # reads every file now
    qtbot.waitUntil(lambda: any("disk went away" in e for e in errors), timeout=5_000)
    assert any(r.exc_info and "disk went away" in str(r.exc_info[1]) for r in caplog.records)
    assert any("disk went away" in p.message for p in window.data.problems)
    monkeypatch.undo()
    live.pause()
    live.resume()
    qtbot.waitUntil(lambda: window.state.live.error == "", timeout=5_000)
    assert window.state.live.following
