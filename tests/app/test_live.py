"""Live mode in the app: a separate process writes, the controller's signals follow within 1 s."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMainWindow

from app.live import LiveController, bind_indicator, describe
from core.dataset.load import load_dataset
from core.dataset.open_recall import open_recall
from tests.demo_copy import demo_copy
from widgets.live.indicator import LiveIndicator

NOW = int(time.time() * 1000)  # segments must not be older than evictionDays
WRITER = Path(__file__).resolve().parent.parent / "live_writer.py"


@pytest.fixture
def demo(tmp_path):
    root = tmp_path / "home"
    demo_copy(root, now_ms=NOW, segments=200)
    data = load_dataset(root)
    recall = open_recall(data, cache_dir=None)
    return root, data, recall


def start_writer(root, *args):
    return subprocess.Popen(
        [sys.executable, str(WRITER), str(root), *map(str, args)],
        stdout=subprocess.PIPE,
        text=True,
    )


def written(proc):
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    return [json.loads(line) for line in out.splitlines()]


class Recorder:
    """Every batch the controller applied, with the time it arrived."""

    def __init__(self, controller):
        self.batches = []
        controller.batch_applied.connect(self.on_batch)

    def on_batch(self, changes):
        self.batches.append((time.time(), changes))

    def seen(self):
        """When each transcript entry, segment and fact id first arrived."""
        out = {}
        for t, c in self.batches:
            ids = [e.id for v in c.entries.values() for e in v] + c.segment_ids + c.facts_changed
            for i in ids:
                out.setdefault(i, t)
        return out


def follow_and_measure(qtbot, controller, root, *writer_args):
    rec = Recorder(controller)
    proc = start_writer(root, *writer_args)
    # Keep the event loop running while the writer writes.
    qtbot.waitUntil(lambda: proc.poll() is not None, timeout=30_000)
    lines = written(proc)
    ids = [w["id"] for w in lines]
    qtbot.waitUntil(lambda: all(i in rec.seen() for i in ids), timeout=5_000)
    seen = rec.seen()
    return lines, [seen[w["id"]] - w["t"] for w in lines], rec


def test_signals_arrive_within_one_second_of_the_agent_s_write(qtbot, demo):
    root, data, recall = demo
    controller = LiveController()
    controller.attach(data, recall)
    assert controller.state == "live"
    session = max(data.sessions, key=lambda s: s.size)
    before = len(session.entries)
    changed = []
    controller.sessions_changed.connect(changed.append)
    segs, facts = [], []
    controller.segments_added.connect(segs.append)
    controller.knowledge_changed.connect(facts.append)
    lines, delays, rec = follow_and_measure(
        qtbot,
        controller,
        root,
        "--count",
        30,
        "--rate",
        15,
        "--start-delay",
        0.3,
        "--session",
        session.path,
    )
    assert max(delays) < 1.0, sorted(delays)[-5:]
    kinds = {
        k: [w["id"] for w in lines if w["kind"] == k] for k in ("transcript", "segment", "fact")
    }
    assert [e.id for e in session.entries[before:]] == kinds["transcript"]
    assert [s.id for s in data.segments.segments[-10:]] == kinds["segment"]
    assert all(recall.store.get(i) is not None for i in kinds["segment"])
    assert all(data.knowledge.facts[i].status == "active" for i in kinds["fact"])
    assert all(session.id in ids for ids in changed) and sum(segs) == 10
    assert {i for ids in facts for i in ids} == set(kinds["fact"])
    # Batches, not one signal per line.
    assert len(rec.batches) < len(lines)
    qtbot.waitUntil(lambda: recall.store.missing_vector_slots() == [], timeout=5_000)


def test_polling_fallback_when_the_watcher_is_off(qtbot, demo):
    root, data, recall = demo
    controller = LiveController(use_watcher=False)
    controller.attach(data, recall)
    _lines, delays, _rec = follow_and_measure(
        qtbot,
        controller,
        root,
        "--count",
        9,
        "--rate",
        10,
        "--start-delay",
        0.2,
        "--kinds",
        "transcript,segment,fact",
    )
    assert max(delays) < 1.0, sorted(delays)


def test_pause_stops_processing_and_resume_catches_up_without_loss(qtbot, demo):
    root, data, recall = demo
    controller = LiveController()
    controller.attach(data, recall)
    states = []
    controller.state_changed.connect(states.append)
    qtbot.wait(300)  # the catch-up drain after attach
    controller.pause()
    assert controller.state == "paused"
    session = max(data.sessions, key=lambda s: s.size)
    n_entries, n_segments, n_facts = (
        len(session.entries),
        len(data.segments.segments),
        len(data.knowledge.facts),
    )
    rec = Recorder(controller)
    proc = start_writer(root, "--count", 24, "--rate", 40, "--session", session.path)
    qtbot.waitUntil(lambda: proc.poll() is not None, timeout=30_000)
    lines = written(proc)
    qtbot.wait(900)  # watcher events and polls come and go: nothing is applied
    assert rec.batches == []
    assert (len(session.entries), len(data.segments.segments), len(data.knowledge.facts)) == (
        n_entries,
        n_segments,
        n_facts,
    )
    controller.resume()
    assert states == ["paused", "live"]
    qtbot.waitUntil(lambda: len(rec.batches) == 1, timeout=5_000)  # read in a job
    kinds = {
        k: [w["id"] for w in lines if w["kind"] == k] for k in ("transcript", "segment", "fact")
    }
    assert [e.id for e in session.entries[n_entries:]] == kinds["transcript"]
    assert [s.id for s in data.segments.segments[n_segments:]] == kinds["segment"]
    assert len(data.knowledge.facts) == n_facts + 8
    assert len(rec.batches) == 1  # all of it in one batch
    qtbot.wait(400)
    assert len(rec.batches) == 1  # and nothing twice


def test_announcements_problems_and_resets(qtbot, demo):
    root, data, recall = demo
    controller = LiveController()
    controller.attach(data, recall)
    qtbot.wait(300)
    session = max(data.sessions, key=lambda s: s.size)
    compactions, flushes, problems, resets = [], [], [], []
    controller.compaction_announced.connect(lambda sid, msg: compactions.append((sid, msg)))
    controller.memory_flush_announced.connect(lambda sid, msg: flushes.append((sid, msg)))
    controller.problem.connect(problems.append)
    controller.file_reset.connect(resets.append)
    proc = start_writer(
        root, "--count", 4, "--rate", 20, "--kinds", "transcript", "--session", session.path,
        "--compaction-every", 4, "--flush-every", 3,
    )  # fmt: skip
    qtbot.waitUntil(lambda: proc.poll() is not None, timeout=30_000)
    written(proc)
    qtbot.waitUntil(lambda: bool(compactions and flushes), timeout=2_000)
    assert compactions[0][0] == session.id and "120,004 tokens before" in compactions[0][1]
    assert flushes[0][0] == session.id and "Memory flush" in flushes[0][1]
    line_no = Path(session.path).read_bytes().count(b"\n") + 1
    with open(session.path, "ab") as fh:
        fh.write(b'{"type":"message","id":"x", oops\n')
    qtbot.waitUntil(lambda: bool(problems), timeout=2_000)
    assert (problems[0].file, problems[0].line) == (session.path, line_no)
    # knowledge.jsonl replaced by a rename: reloaded whole, the same log object.
    log = data.knowledge
    tmp = Path(log.path).with_suffix(".tmp")
    tmp.write_bytes(b"".join(Path(log.path).read_bytes().splitlines(keepends=True)[:5]))
    os.replace(tmp, log.path)
    qtbot.waitUntil(lambda: log.path in resets, timeout=2_000)
    assert log is data.knowledge and log.lines == 5


def test_detach_and_reattach(qtbot, demo):
    _root, data, recall = demo
    controller = LiveController()
    states = []
    controller.state_changed.connect(states.append)
    controller.attach(data, None)
    controller.set_recall(recall)
    controller.detach()
    assert states == ["live", "off"] and controller.follower is None
    controller.toggle()  # off: nothing to toggle
    assert controller.state == "off"


def test_indicator_shows_the_state_and_toggles(qtbot, demo, tmp_path):
    _root, data, recall = demo
    window = QMainWindow()
    qtbot.addWidget(window)
    indicator = LiveIndicator()
    window.statusBar().addPermanentWidget(indicator)
    window.resize(420, 80)
    controller = LiveController(window)
    bind_indicator(controller, indicator)
    assert indicator.text() == "Off" and not indicator.toggle_action.isEnabled()
    controller.attach(data, recall)
    assert indicator.text() == "Live" and "Ctrl+L to pause" in indicator.toolTip()
    window.show()
    qtbot.waitExposed(window)
    window.windowHandle().requestActivate()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.mouseClick(indicator, Qt.MouseButton.LeftButton)
    assert controller.state == "paused" and indicator.text() == "Paused"
    assert (
        "resume" in indicator.toolTip() and indicator.toggle_action.text() == "Resume Live Updates"
    )
    indicator.toggle_action.trigger()  # what Ctrl+L does
    assert controller.state == "live"
    qtbot.keyClick(window, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    assert controller.state == "paused"
    indicator.setFocus()
    qtbot.keyClick(indicator, Qt.Key.Key_Space)  # keyboard access without the shortcut
    assert controller.state == "live"
    session = data.sessions[0]
    with open(session.path, "ab") as fh:
        fh.write(
            orjson.dumps(
                {
                    "type": "label",
                    "id": "lbl00001",
                    "parentId": session.leaf.id,
                    "targetId": session.leaf.id,
                    "label": "here",
                    "timestamp": "2025-10-09T10:00:00.000Z",
                }
            )
            + b"\n"
        )
    qtbot.waitUntil(lambda: "Last change at" in indicator.toolTip(), timeout=2_000)
    assert "1 new entry" in indicator.toolTip()
    indicator.grab().save(str(tmp_path / "live_indicator.png"))
    window.grab().save(str(tmp_path / "live_indicator_window.png"))
    controller.detach()
    assert indicator.text() == "Off"


def test_describe_says_what_came():
    from core.live.follow import LiveChanges

    assert describe(LiveChanges()) == "files touched, nothing new"
    text = describe(LiveChanges(segments_added=2, facts_changed=["a", "a", "b"]))
    assert text == "2 new segment(s), 2 fact(s) changed"


def test_kept_view_keeps_the_selection_of_a_tree_and_of_a_table(qtbot, demo):
    """kept_view (for model resets) finds rows in a tree and in a table model alike.

    It asked ``hasChildren``, which QAbstractTableModel makes private: PySide6 raised.
    """
    from PySide6.QtWidgets import QTableView

    from app.live import kept_view
    from core.io.problems import Problem
    from widgets.common.record_model import Column, RecordRole, RecordTableModel
    from widgets.session.navigator import Navigator

    _root, data, _recall = demo
    nav = Navigator()
    qtbot.addWidget(nav)
    nav.set_sessions(data.summaries)
    target = data.summaries[-3]
    assert nav.select_session(target.id)

    def key(index):
        return getattr(index.siblingAtColumn(0).data(RecordRole), "path", None)

    with kept_view(nav.tree, key):
        nav.set_sessions(data.summaries)
    assert nav.current().path == target.path
    model = RecordTableModel([Column("File", lambda p: p.file), Column("Line", lambda p: p.line)])
    rows = [Problem(f"f{i}", i, "bad") for i in range(30)]
    model.set_records(rows)
    table = QTableView()
    qtbot.addWidget(table)
    table.setModel(model)
    table.setCurrentIndex(model.index(20, 0))
    with kept_view(table, lambda i: i.data(RecordRole)):
        model.set_records(list(reversed(rows)))
    assert table.currentIndex().row() == 9


def test_a_failing_batch_is_a_problem_not_a_crash(qtbot, demo, monkeypatch, caplog):
    _root, data, recall = demo
    controller = LiveController()
    controller.attach(data, recall)
    problems, failures, batches = [], [], []
    controller.problem.connect(problems.append)
    controller.read_failed.connect(failures.append)
    controller.batch_applied.connect(batches.append)
    real = controller.follower.read

    def broken(*_a, **_kw):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(controller.follower, "read", broken)  # before the catch-up read
    qtbot.waitUntil(lambda: bool(problems), timeout=5_000)
    assert "disk on fire" in problems[0].message and controller.state == "live"
    assert failures and "disk on fire" in failures[0]
    assert problems[0] in data.problems
    assert any("disk on fire" in r.getMessage() or r.exc_info for r in caplog.records)
    monkeypatch.setattr(controller.follower, "read", real)
    session = data.sessions[0]
    with open(session.path, "ab") as fh:
        fh.write(
            orjson.dumps(
                {
                    "type": "label",
                    "id": "lbl00002",
                    "parentId": session.leaf.id,
                    "targetId": session.leaf.id,
                    "label": "after the failure",
                    "timestamp": "2025-10-09T10:00:00.000Z",
                }
            )
            + b"\n"
        )
    qtbot.waitUntil(lambda: any(c.entries for c in batches), timeout=5_000)
    assert session.entries[-1].id == "lbl00002"  # live mode went on


def test_a_late_read_after_detach_is_dropped_and_reattach_follows(qtbot, demo):
    import threading

    from PySide6.QtCore import QThreadPool

    from widgets.common.jobs import JobRunner

    _root, data, recall = demo
    pool = QThreadPool()
    runner = JobRunner(pool)
    controller = LiveController(drain_ms=0, runner=runner)
    controller.attach(data, recall)
    session = data.sessions[0]
    n = len(session.entries)
    first = controller.follower
    release = threading.Event()
    real = first.read

    def slow(dirty, *, everything=False):
        release.wait(10)
        return real(dirty, everything=everything)

    first.read = slow  # the catch-up read waits in its pool thread
    entry = {
        "type": "label",
        "id": "lbl00003",
        "parentId": session.leaf.id,
        "targetId": session.leaf.id,
        "label": "late",
        "timestamp": "2025-10-09T10:00:00.000Z",
    }
    with open(session.path, "ab") as fh:
        fh.write(orjson.dumps(entry) + b"\n")
    qtbot.waitUntil(lambda: bool(runner.running()), timeout=2_000)
    controller.detach()
    batches = []
    controller.batch_applied.connect(batches.append)
    release.set()  # the old read reads the new line now, too late
    qtbot.waitUntil(lambda: not runner.running(), timeout=5_000)
    qtbot.wait(50)
    assert batches == [] and len(session.entries) == n  # its result was dropped
    controller.attach(data, recall)
    assert controller.follower is not first
    qtbot.waitUntil(lambda: bool(batches), timeout=5_000)
    assert [e.id for e in session.entries[n:]] == ["lbl00003"]  # applied once
    controller.detach()
    assert pool.waitForDone(5_000)


def test_a_read_that_ends_while_paused_is_applied_on_resume(qtbot, demo):
    """A read in flight at pause is held; resume applies it before reading again.

    Its new session must join the data set: a read before it would stop following it.
    """
    import threading

    from PySide6.QtCore import QThreadPool

    from widgets.common.jobs import JobRunner

    _root, data, recall = demo
    first = data.sessions[0]
    fresh = Path(first.path).with_name("held-while-paused.jsonl")
    header = orjson.loads(Path(first.path).read_bytes().splitlines()[0])
    fresh.write_bytes(orjson.dumps({**header, "id": "held-session"}) + b"\n")
    pool = QThreadPool()
    runner = JobRunner(pool)
    controller = LiveController(drain_ms=0, runner=runner)
    controller.attach(data, recall)
    release = threading.Event()
    real = controller.follower.read

    def slow(dirty, *, everything=False):
        release.wait(10)
        return real(dirty, everything=everything)

    controller.follower.read = slow
    batches = []
    controller.batch_applied.connect(batches.append)
    qtbot.waitUntil(lambda: bool(runner.running()), timeout=2_000)
    controller.pause()
    release.set()
    qtbot.waitUntil(lambda: not runner.running(), timeout=5_000)
    assert batches == [] and all(s.path != str(fresh) for s in data.sessions)
    controller.resume()
    qtbot.waitUntil(lambda: any(s.path == str(fresh) for s in data.sessions), timeout=5_000)
    assert any("held-session" in c.sessions_added for c in batches)
    qtbot.wait(300)  # the resume's read, and the next ones, keep it
    assert sum(s.path == str(fresh) for s in data.sessions) == 1
    assert str(fresh) in controller.follower.files()
    controller.detach()
    assert pool.waitForDone(5_000)


def test_reads_run_in_a_pool_thread_and_steps_on_the_gui_thread(qtbot, demo):
    import threading

    _root, data, recall = demo
    controller = LiveController(drain_ms=0)
    controller.attach(data, recall)
    follower = controller.follower
    threads = {"read": [], "step": []}
    real = follower.read

    def read(dirty, *, everything=False):
        threads["read"].append(threading.current_thread())
        out = real(dirty, everything=everything)
        out.then(lambda _c: threads["step"].append(threading.current_thread()))
        return out

    follower.read = read
    session = data.sessions[0]
    with open(session.path, "ab") as fh:
        fh.write(
            orjson.dumps(
                {
                    "type": "label",
                    "id": "lbl00004",
                    "parentId": session.leaf.id,
                    "targetId": session.leaf.id,
                    "label": "threads",
                    "timestamp": "2025-10-09T10:00:00.000Z",
                }
            )
            + b"\n"
        )
    qtbot.waitUntil(lambda: session.entries[-1].id == "lbl00004", timeout=5_000)
    qtbot.waitUntil(lambda: bool(threads["step"]), timeout=5_000)
    main = threading.main_thread()
    assert threads["read"] and all(t is not main for t in threads["read"])
    assert all(t is main for t in threads["step"])
    controller.detach()
