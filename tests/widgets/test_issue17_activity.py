"""Issue 17, defect 8: the Writes view lists the agent's data apart from memlens's own files."""

from __future__ import annotations

from PySide6.QtCore import Qt

from core.safety.activity import ActivityEvent, ActivityLog, LoggedWrite
from core.safety.activity_owner import MEMLENS, OwnFiles
from tests.qt_read import shown_records
from widgets.activity.view import ActivityView


def _write(t: float, path: str, owner: str = "") -> LoggedWrite:
    return LoggedWrite(t, path, "append", 0, 10, 1, 1, owner=owner)


AGENT_WRITE = _write(1, "/home/u/.openclaw/agents/main/sessions/s.jsonl")
DEMO_WRITE = _write(2, "/home/u/.cache/memlens/demo-v1/memory/context/knowledge.jsonl", MEMLENS)
OLD_CACHE_WRITE = _write(3, "/home/u/.cache/memlens/vectors-hash-ab.bin")  # logged before owners
JOB_FAILED = ActivityEvent(4, "indexing memory", "failed", summary="disk full", kind="job")


def test_the_agent_data_list_is_the_default_and_counts_only_its_writes(
    qtbot, qtmodeltester, tmp_path
):
    view = ActivityView()
    qtbot.addWidget(view)
    view.set_records([AGENT_WRITE, DEMO_WRITE, OLD_CACHE_WRITE, JOB_FAILED])
    qtmodeltester.check(view.model)
    # an older line's owner is decided by its place once the app says which places are its own
    own = OwnFiles.of(["/home/u/.cache/memlens"], places=["/home/u/.cache/memlens/demo-v1"])
    view.set_owner_rule(ActivityLog(tmp_path / "activity.jsonl", own_files=own).owner)
    assert view.owner_box.currentText() == "The agent's data"
    assert shown_records(view.proxy) == [AGENT_WRITE]
    assert view.count_label.text() == "1 write to the agent's data · 2 to memlens's own files"
    tip = view.proxy.index(0, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert "the agent's data" in tip
    view.owner_box.setCurrentIndex(view.owner_box.findData("memlens"))
    assert shown_records(view.proxy) == [JOB_FAILED, OLD_CACHE_WRITE, DEMO_WRITE]
    assert view.count_label.text() == "2 writes to memlens's own files, 1 event"
    assert "memlens's own file" in view.proxy.index(1, 0).data(Qt.ItemDataRole.ToolTipRole)
    view.owner_box.setCurrentIndex(view.owner_box.findData(""))
    assert len(shown_records(view.proxy)) == 4
    assert view.count_label.text() == "3 writes, 1 event"
    # memlens's own rows are set apart (dimmed) when both lists are shown
    colours = [view.proxy.index(r, 0).data(Qt.ItemDataRole.ForegroundRole) for r in range(4)]
    assert [c is not None for c in colours] == [True, True, True, False]


def test_a_posted_own_write_updates_the_count_though_it_is_not_shown(qtbot):
    view = ActivityView()
    qtbot.addWidget(view)
    view.set_records([AGENT_WRITE])
    assert view.count_label.text() == "1 write"  # one list only: nothing to tell apart
    view.add(DEMO_WRITE)
    assert shown_records(view.proxy) == [AGENT_WRITE]
    assert view.count_label.text() == "1 write to the agent's data · 1 to memlens's own files"
