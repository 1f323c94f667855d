"""The loss audit tab's "Probe with model…" (issue 20 #2, in the app).

The compaction layout (its provider picker and its Loss audit tab), a built
session, and a real HTTP server on 127.0.0.1 that answers or fails: the button is
disabled without a model, the probe runs in the job runner, and the tables show
the questions, answers and grades the core computes; a failed call shows why.
"""

from __future__ import annotations

import orjson
import pytest
from PySide6.QtCore import Qt

from core.compaction.audit import audit_compaction
from core.compaction.probe_questions import Conversation, generate
from core.compaction.provider import OFFLINE, ProviderChoice
from core.transcript import load_transcript
from tests.core.build import lines, write_file
from tests.core.test_probe import session_objects
from tests.llm_server import Reply
from widgets.common.jobs import default_runner
from widgets.common.view_jobs import wait_idle
from widgets.compaction.layout import CompactionLayout
from widgets.compaction.probe_models import NO_MODEL_TIP


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    path = tmp_path_factory.mktemp("probe-view") / "s.jsonl"
    write_file(path, lines(session_objects()))
    return load_transcript(path)


@pytest.fixture(scope="module")
def probes(session):
    messages = [(e.id, e.message) for e in session.entries if e.message is not None]
    return generate(audit_compaction(session).items, Conversation(messages))


@pytest.fixture
def tab(qtbot, session):
    layout = CompactionLayout()
    qtbot.addWidget(layout)
    layout.resize(1366, 768)
    layout.show()
    view = layout.audit_view
    layout.tabs.setCurrentWidget(view)
    view.set_session(session)
    assert wait_idle(default_runner(), view._key, 30_000)
    return layout, view


def _answers(texts):
    content = orjson.dumps({"answers": [{"n": n, "answer": t} for n, t in enumerate(texts, 1)]})
    return Reply(200, {"choices": [{"message": {"content": content.decode()}}]})


def _cells(model):
    return [
        [model.index(r, c).data() for c in range(model.columnCount())]
        for r in range(model.rowCount())
    ]


def test_without_a_model_the_probe_is_disabled_and_says_why(tab):
    layout, view = tab
    layout.picker.set_providers([OFFLINE])
    button = view.probe_pane.probe_button
    assert view.outcome is not None and view.outcome.primary is not None
    assert not button.isEnabled() and button.toolTip() == NO_MODEL_TIP
    view.probe_action.trigger()  # the shortcut's action does nothing either
    assert not view.probe_pane.busy() and not view.probe_pane.isVisible()


def test_probe_with_the_panels_model_shows_questions_answers_and_grades(
    qtbot, qtmodeltester, tab, server, probes
):
    layout, view = tab
    answers = [p.expected if n % 3 else "unknown" for n, p in enumerate(probes)]
    server.add(_answers(answers))
    spec = f"openai:{server.url}/v1:probe-model"
    layout.picker.set_providers([ProviderChoice("Loopback", spec)])  # offline stays chosen
    button = view.probe_pane.probe_button
    assert button.isEnabled() and "Loopback" in button.toolTip()
    assert [a.shortcut().toString() for a in view.actions()] == ["Ctrl+Shift+P"]
    with qtbot.waitSignal(view.probe_pane.probed, timeout=10_000) as ended:
        view.probe_action.trigger()
    assert ended.args[0].model == spec
    pane = view.probe_pane
    rows = _cells(pane.questions_model)
    assert [r[2] for r in rows] == [p.question for p in probes]
    assert [r[3] for r in rows] == [p.expected for p in probes]
    assert [r[0] for r in rows] == ["exact" if n % 3 else "unknown" for n in range(len(probes))]
    assert [r[4] for r in rows] == answers
    assert pane.questions_model.index(0, 0).data(Qt.ItemDataRole.ForegroundRole) is not None
    scores = {r[0]: r[1:] for r in _cells(pane.score_model)}
    right = sum(1 for n in range(len(probes)) if n % 3)
    assert scores["total"][:4] == [str(n) for n in (len(probes), right, 0, len(probes) - right)]
    assert {"identifier", "file", "decision", "continuation"} <= set(scores)
    assert f"answered {right} of {len(probes)}" in pane.headline.text()
    assert pane.isVisible() and not pane.progress.isVisible() and button.isEnabled()
    qtmodeltester.check(pane.questions_model)
    qtmodeltester.check(pane.score_model)
    sent = server.seen[0].body["messages"][1]["content"]
    assert "Looking at the exporter" not in sent  # the summary alone, not the messages


def test_a_failed_probe_shows_why(qtbot, tab, server):
    layout, view = tab
    server.add(Reply(401, {"error": {"message": "invalid api key"}}))
    layout.picker.set_providers([ProviderChoice("Loopback", f"openai:{server.url}/v1:m")])
    with qtbot.waitSignal(view.probe_pane.probed, timeout=10_000) as ended:
        view.probe_pane.probe_button.click()
    pane = view.probe_pane
    assert isinstance(ended.args[0], str)
    assert pane.error_label.isVisible() and "invalid api key" in pane.error_label.text()
    assert "nothing was written" in pane.headline.text()
    assert pane.questions_model.rowCount() == 0


def test_cancel_stops_a_slow_probe_at_once(qtbot, tab, server):
    layout, view = tab
    server.add(Reply(200, {"choices": []}, delay=8.0))
    layout.picker.set_providers([ProviderChoice("Slow", f"openai:{server.url}/v1:slow")])
    pane = view.probe_pane
    view.probe_action.trigger()
    qtbot.waitUntil(lambda: len(server.seen) == 1, timeout=5_000)  # the request is in flight
    assert pane.busy() and pane.progress.isVisible() and pane.cancel_button.isVisible()
    assert not pane.probe_button.isEnabled()
    pane.cancel_button.click()
    assert not pane.busy() and not pane.progress.isVisible()
    assert pane.headline.text() == "Probe cancelled." and pane.questions_model.rowCount() == 0
    assert pane.probe_button.isEnabled()


def test_a_probe_keeps_to_the_panels_time_limits(qtbot, server, session):
    """The Settings' time limits reach the probe: a slow model is cut at the total limit."""
    from core.compaction.provider import Timeouts
    from widgets.compaction.panel import CompactionPanel

    panel = CompactionPanel()
    qtbot.addWidget(panel)
    panel.show()
    panel.tabs.setCurrentWidget(panel.audit_view)
    limits = Timeouts(connect=2.0, read=30.0, total=1.0)
    panel.set_timeouts(limits)
    pane = panel.audit_view.probe_pane
    assert pane.timeouts is limits
    server.add(Reply(200, {"choices": []}, delay=8.0))
    panel.picker.set_providers([ProviderChoice("Slow", f"openai:{server.url}/v1:slow")])
    panel.audit_view.set_session(session)
    assert wait_idle(default_runner(), panel.audit_view._key, 30_000)
    with qtbot.waitSignal(pane.probed, timeout=6_000) as ended:  # the default limit: 120 s
        assert pane.probe_button.isEnabled()
        pane.probe_button.click()
    assert isinstance(ended.args[0], str)  # cut at the 1 s total limit, not after 8 s
