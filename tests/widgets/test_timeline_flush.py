"""TimelineView draws the memory flush sessions.json records, with its tooltip."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLabel

from core.context.budget import budget_for
from core.openclaw.sessions_store import SessionEntry
from core.timeline.arrays import build_timeline
from core.transcript import load_transcript
from tests.qt_read import plot_items
from widgets.timeline.style import FLUSH_COLOR, FLUSH_FAILED_COLOR
from widgets.timeline.view import TimelineView


def _entry(session, flush):
    raw = {"sessionId": session.id, "compactionCount": 2, "memoryFlush": flush}
    return SessionEntry("agent:main:main", raw)


@pytest.fixture(scope="module")
def session(fixtures_dir):
    return load_transcript(fixtures_dir / "before-compaction.jsonl")


@pytest.fixture
def view(qtbot):
    w = TimelineView()
    qtbot.addWidget(w)
    w.resize(1400, 700)
    w.show()
    qtbot.waitExposed(w)
    return w


def test_the_view_shows_the_flush_marker_with_its_tooltip(view, session):
    budget = budget_for(
        session, store_entry=_entry(session, {"kind": "succeeded", "compactionCount": 1})
    )
    tl = build_timeline(session, budget)
    view.set_timeline(tl, budget)
    items = plot_items(view)
    points = items["flush_points"].points()
    assert len(points) == 1
    (flush,) = tl.flushes
    assert points[0].pos().x() == pytest.approx(flush.x)
    assert points[0].pos().y() == pytest.approx(flush.context)
    assert points[0].brush().color().name() == FLUSH_COLOR
    (label,) = [lab for lab in items["flush_labels"] if lab.isVisible()]
    assert label.toPlainText().strip() == "memory flush"
    assert "compaction cycle 1" in label.toolTip() and "time not recorded" in label.toolTip()
    assert "memory flush" in view.findChild(QLabel, "timeline-legend").text()
    assert (
        "last memory flush in compaction cycle 1" in view.findChild(QLabel, "timeline-info").text()
    )


def test_a_failed_flush_is_hollow_and_red(view, session):
    budget = budget_for(session, store_entry=_entry(session, {"kind": "failed", "failureCount": 3}))
    view.set_timeline(build_timeline(session, budget), budget)
    (point,) = plot_items(view)["flush_points"].points()
    assert point.pen().color().name() == FLUSH_FAILED_COLOR
    assert point.brush().style().name == "NoBrush"


def test_no_record_no_marker(view, session):
    budget = budget_for(
        session, store_entry=_entry(session, {"kind": "succeeded", "compactionCount": 1})
    )
    view.set_timeline(build_timeline(session, budget), budget)
    view.set_timeline(build_timeline(session), budget_for(session))
    items = plot_items(view)
    assert len(items["flush_points"].points()) == 0
    assert not any(lab.isVisible() for lab in items["flush_labels"])
    view.clear()
    assert len(plot_items(view)["flush_points"].points()) == 0
