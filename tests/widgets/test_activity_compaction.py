"""Compaction started/finished rows in the Activity view, from the compaction panel's write."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import orjson
import pytest
from PySide6.QtCore import Qt

from core.compaction.target import target_from_dataset
from core.dataset.load import load_dataset
from core.io.fsutil import WriteRecord
from core.openclaw.sessions_store import entries_for_transcript, load_sessions_store
from core.safety.activity import ActivityEvent, ActivityLog, load_activity
from core.safety.session_lock import acquire, lock_path_for
from tests.demo_copy import demo_copy
from widgets.activity.view import ACTION, LENGTH, LINE, OFFSET, SUMMARY, ActivityView
from widgets.common.record_model import RecordRole
from widgets.compaction.panel import CompactionPanel

NOW = 1_760_000_000_000
DEMO_SESSION = "128b2f33"
OLD = time.time() - 3600


def _shown(view):
    """The records the table shows, in display order (through the proxy, as drawn)."""
    return [view.proxy.index(r, 0).data(RecordRole) for r in range(view.proxy.rowCount())]


def _write(t: float, action: str = "append") -> WriteRecord:
    return WriteRecord(t, "/h/agents/main/sessions/s.jsonl", action, 10, 20, 3, 1, None, "w")  # type: ignore[arg-type]


def _event(t: float, phase: str, after: int | None = None) -> ActivityEvent:
    return ActivityEvent(
        t,
        "/h/agents/main/sessions/s.jsonl",
        phase,
        "sess-42",
        120_000,
        after,
        f"compaction {phase}: session sess-42",
        "memlens app",
    )


def _cells(view: ActivityView, row: int) -> list[str]:
    return [
        str(view.proxy.index(row, c).data(Qt.ItemDataRole.DisplayRole) or "")
        for c in range(view.proxy.columnCount())
    ]


def test_events_are_rows_beside_the_writes(qtbot):
    view = ActivityView()
    qtbot.addWidget(view)
    view.set_records(
        [_event(1, "started"), _write(2, "backup"), _write(3), _event(4, "finished", 41_000)]
    )
    assert view.count_label.text() == "2 writes, 2 events"
    rows = _shown(view)  # newest first
    assert [getattr(r, "phase", r.action) for r in rows] == [
        "finished",
        "append",
        "backup",
        "started",
    ]
    cells = _cells(view, 0)
    assert cells[ACTION] == "compaction finished"
    assert cells[OFFSET] == cells[LINE] == cells[LENGTH] == ""
    assert "sess-42" in cells[SUMMARY]
    tip = view.proxy.index(0, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert (
        "session sess-42" in tip and "120,000" in tip and "41,000" in tip and "memlens app" in tip
    )
    started_tip = view.proxy.index(3, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert "before 120,000" in started_tip and "after" not in started_tip
    view.action_box.setCurrentIndex(view.action_box.findData("compaction"))
    assert [r.phase for r in _shown(view)] == ["finished", "started"]
    assert view.count_label.text() == "2 of 4 rows"
    view.action_box.setCurrentIndex(0)
    view.filter_edit.setText("sess-42")
    assert len(_shown(view)) == 2
    view.filter_edit.setText("")
    with qtbot.waitSignal(view.event_activated) as got:
        view.table.activated.emit(view.proxy.index(0, 0))
    assert got.args[0].phase == "finished"


def test_events_posted_from_a_worker_thread(qtbot):
    view = ActivityView()
    qtbot.addWidget(view)
    worker = threading.Thread(target=lambda: view.post(_event(5, "failed")))
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: view.model.rowCount() == 1)
    assert _cells(view, 0)[ACTION] == "compaction failed"
    assert view.count_label.text() == "0 writes, 1 event"


@pytest.fixture
def demo(tmp_path):
    home = tmp_path / "home"
    demo_copy(home, now_ms=NOW, segments=300)
    data = load_dataset(home)
    session = data.session(DEMO_SESSION)
    os.utime(session.path, (OLD, OLD))
    return data, session


def _panel(qtbot, log: ActivityLog) -> CompactionPanel:  # type: ignore[no-untyped-def]
    panel = CompactionPanel(confirm=lambda writes: True)
    qtbot.addWidget(panel)
    panel.set_activity(log)
    return panel


def _ready(qtbot, panel, target):  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(panel.cut_point_changed, timeout=10_000):
        panel.set_target(target)
    with qtbot.waitSignal(panel.summary_ready, timeout=20_000) as blocker:
        panel.run()
    return blocker.args[0]


def test_panel_write_records_the_pair_and_counts_it_in_sessions_json(qtbot, demo, tmp_path):
    data, session = demo
    transcript = Path(session.path)
    store_path = transcript.parent / "sessions.json"
    (entry,) = entries_for_transcript(load_sessions_store(store_path), transcript, session.id)
    count = entry.compaction_count or 0
    log = ActivityLog(tmp_path / "activity.jsonl")
    view = ActivityView()
    qtbot.addWidget(view)
    log.subscribe_events(view.post)
    panel = _panel(qtbot, log)
    result = _ready(qtbot, panel, target_from_dataset(data, session))
    assert load_activity(log.path).items == []  # the dry run is not a compaction job
    with qtbot.waitSignal(panel.written, timeout=10_000) as done:
        panel.write()
    run = done.args[0]
    assert run.written and run.store_update is not None and run.store_update.updated
    qtbot.waitUntil(lambda: view.model.rowCount() == 2)
    started, finished = (view.model.record(r) for r in range(2))
    assert (started.phase, finished.phase) == ("started", "finished")
    assert started.session == finished.session == session.id
    assert started.tokens_before == result.plan.tokens_before
    assert finished.tokens_after == result.entry["tokensAfter"]
    assert finished.source == "memlens app" and result.entry["id"] in finished.summary
    raw = orjson.loads(store_path.read_bytes())[entry.key]
    assert raw["compactionCount"] == count + 1
    assert raw["totalTokens"] == result.entry["tokensAfter"] and raw["totalTokensFresh"] is True
    assert "sessions.json updated" in panel.message_label.text()
    assert not lock_path_for(transcript).exists()
    assert [e.phase for e in load_activity(log.path).events] == ["started", "finished"]


def test_panel_write_is_refused_while_the_cli_compacts(qtbot, demo, tmp_path):
    data, session = demo
    transcript = Path(session.path)
    before = transcript.read_bytes()
    store_before = (transcript.parent / "sessions.json").read_bytes()
    log = ActivityLog(tmp_path / "activity.jsonl")
    panel = _panel(qtbot, log)
    _ready(qtbot, panel, target_from_dataset(data, session))
    with acquire(transcript, tool="memlens compact"):
        panel.write()
        qtbot.waitUntil(lambda: "Not written" in panel.message_label.text(), timeout=10_000)
    text = panel.message_label.text()
    assert "another compaction" in text and f"memlens compact (pid {os.getpid()}" in text
    assert transcript.read_bytes() == before
    assert (transcript.parent / "sessions.json").read_bytes() == store_before
    assert load_activity(log.path).items == []
    assert panel.write_button.isEnabled()  # it may be written once the other one is done
