"""The timeline marks where a missing or cyclic parentId cuts the context (issue 13)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.timeline.arrays import build_timeline
from core.transcript import parse_transcript
from tests.qt_read import plot_items
from widgets.timeline.view import TimelineView

STAMP = "2026-01-01T00:00:00.000Z"


def _session(broken=True):
    head = {"type": "session", "version": 3, "id": "s", "timestamp": STAMP, "cwd": "/w"}
    rows = [head]
    parent = None
    for i in range(1, 9):
        role = "user" if i % 2 else "assistant"
        content = "hello there " * 40 if role == "user" else [{"type": "text", "text": "ok " * 80}]
        rows.append(
            {"type": "message", "id": f"{i:08x}", "parentId": parent, "timestamp": STAMP,
             "message": {"role": role, "content": content, "timestamp": 1}}
        )  # fmt: skip
        parent = f"{i:08x}"
    if broken:
        rows[5]["parentId"] = "deadbeef"  # entry 5: its parent is not in the file
        rows[7]["parentId"] = "00000008"  # 7 -> 8 -> 7: a cycle
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    return parse_transcript(data, "/data/s.jsonl")


@pytest.fixture
def view(qtbot):
    w = TimelineView()
    qtbot.addWidget(w)
    w.resize(1200, 600)
    w.show()
    qtbot.waitExposed(w)
    return w


def test_broken_parents_are_marked_and_explained(view):
    session = _session()
    tl = build_timeline(session)
    assert {(b.entry_id, b.kind) for b in tl.breaks} == {
        ("00000005", "missing"),
        ("00000008", "cycle"),
    }
    view.set_timeline(tl)
    items = plot_items(view)
    x, _ = items["break_points"].getData()
    assert sorted(np.asarray(x).tolist()) == sorted(b.x for b in tl.breaks)
    labels = [lab for lab in items["break_labels"] if lab.isVisible()]
    assert sorted(lab.toPlainText().strip() for lab in labels) == ["parent cycle", "parent missing"]
    tips = {lab.toolTip() for lab in labels}
    assert any("(line 6): parentId 'deadbeef' is not in the file" in t for t in tips)
    assert "broken parent link(s)" in view._info.text()


def test_a_sound_session_has_no_break_markers(view):
    view.set_timeline(build_timeline(_session()))
    tl = build_timeline(_session(broken=False))
    assert tl.breaks == ()
    view.set_timeline(tl)
    x, _ = plot_items(view)["break_points"].getData()
    assert x is None or len(x) == 0
    assert not any(lab.isVisible() for lab in plot_items(view)["break_labels"])
    assert "broken parent" not in view._info.text()
