"""Concurrency proof: an agent process appends while the app edits facts and follows live.

A separate process (tests/live_writer.py) appends transcript entries, segments and
facts at a steady rate for several seconds; meanwhile the window edits facts through
the facts view (add, edit, supersede, delete). At the end every line either side
wrote is in its file exactly once, every line of every file parses, and the app's
models hold all of it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import orjson

from app.main_window import MainWindow
from core.demo.build import write_demo
from core.io.writes import always
from core.knowledge.ops import FactOp
from tests.qt_read import shown_fact_ids

WRITER = Path(__file__).resolve().parent.parent / "live_writer.py"


def _lines(path: Path) -> list[bytes]:
    data = path.read_bytes()
    assert data.endswith(b"\n"), f"{path} ends in a partial line"
    return [line for line in data.split(b"\n")[:-1] if line.strip()]


def test_agent_and_app_write_at_once_and_nothing_is_lost_or_doubled(qtbot, tmp_path):
    root = write_demo(tmp_path / "home", segments=120).root
    window = MainWindow(confirm=always)
    qtbot.addWidget(window)
    window.open_path(str(root))
    qtbot.waitUntil(lambda: window.recall_data is not None, timeout=60000)
    assert window.live.controller.state == "live"
    store = root / "memory" / "context"
    writer = subprocess.Popen(
        [sys.executable, str(WRITER), str(root), "--seconds", "4", "--rate", "24",
         "--kinds", "transcript,segment,fact", "--split", "transcript,segment", "--seed", "5"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    log = window.data.knowledge
    editing = window.facts_view.editing
    ours: list[str] = []
    written: list[object] = []
    window.facts_view.written.connect(written.extend)
    step = 0
    while writer.poll() is None:
        active = [f for f in log.facts.values() if f.status == "active"]
        target = active[step % len(active)].id
        op = [
            FactOp.add("decision", f"App fact {step}: ship the live mode"),
            FactOp.edit(target, content=f"Edited by the app, round {step}"),
            FactOp.supersede(target, f"App supersedes, round {step}"),
            FactOp.delete(target),
        ][step % 4]
        plan = editing.run([op], f"concurrency step {step}")
        if plan is not None:
            ours.extend(json.dumps(r, sort_keys=True) for r in plan.records)
        step += 1
        qtbot.wait(150)
    out, _ = writer.communicate(timeout=30)
    assert writer.returncode == 0
    emitted_ids = [json.loads(line)["id"] for line in out.splitlines() if line.strip()]

    def caught_up() -> bool:
        # live mode reads in its jobs: the last lines arrive with the next batches
        recall = window.recall_data
        known = set(log.facts) | {e.id for s in window.data.sessions for e in s.entries}
        if recall is not None and recall.store is not None:
            known |= {s.id for s in recall.store.live()}
        knowledge = store / "knowledge.jsonl"
        return log.lines == len(_lines(knowledge)) and all(i in known for i in emitted_ids)

    qtbot.waitUntil(caught_up, timeout=15_000)

    emitted = [json.loads(line) for line in out.splitlines() if line.strip()]
    kinds = {k: [e for e in emitted if e["kind"] == k] for k in ("transcript", "segment", "fact")}
    assert all(kinds.values()), "the writer wrote every kind"
    assert step >= 8 and len(written) >= 8, "the app wrote while the agent wrote"

    # Every line of every file is whole and parses.
    facts_lines = [orjson.loads(line) for line in _lines(store / "knowledge.jsonl")]
    seg_lines = [orjson.loads(line) for line in _lines(store / "segments.jsonl")]
    session_path = Path(kinds["transcript"][0]["path"])
    entries = [orjson.loads(line) for line in _lines(session_path)]

    # The agent's lines: each exactly once in its file ...
    fact_ids = [r.get("id") for r in facts_lines]
    for e in kinds["fact"]:
        assert fact_ids.count(e["id"]) == 1, e
    seg_ids = [r.get("id") for r in seg_lines]
    for e in kinds["segment"]:
        assert seg_ids.count(e["id"]) == 1, e
    entry_ids = [r.get("id") for r in entries[1:]]
    assert len(entry_ids) == len(set(entry_ids)), "no transcript entry doubled"
    for e in kinds["transcript"]:
        assert entry_ids.count(e["id"]) == 1, e
    # ... and the app's lines too.
    on_disk = [json.dumps(r, sort_keys=True) for r in facts_lines]
    for line in ours:
        assert on_disk.count(line) == 1, line

    # The app's models hold all of it, once.
    assert log.lines == len(facts_lines)
    for e in kinds["fact"]:
        assert e["id"] in log.facts
    session = next(s for s in window.data.sessions if s.path == str(session_path))
    assert [e.id for e in session.entries] == entry_ids
    recall = window.recall_data
    assert recall is not None and recall.store is not None
    for e in kinds["segment"]:
        assert recall.store.get(e["id"]) is not None, e
    shown = set(shown_fact_ids(window.facts_view)) | {f.id for f in log.facts.values()}
    for e in kinds["fact"]:
        assert e["id"] in shown
