"""Every view's background work goes through the job runner.

For each view: a late result for an old request is never shown (the first job is
held on an event until the second has been shown), and a failure is shown in the
view, logged with its traceback on ``memlens.jobs`` and reported by the runner.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import pytest
from PySide6.QtCore import QThreadPool

import widgets.compaction.jobs as compaction_jobs
import widgets.openclaw.memory_index_view as memory_index_view
import widgets.openclaw.view as openclaw_view
import widgets.recall.preview_models as recall_models
import widgets.session.context_view as context_view
import widgets.trim.model as trim_model
from core.compaction.target import target_for
from core.dataset.load import load_dataset
from core.demo.build import write_demo
from core.embed import load_embedder
from core.recall.engine import RecallSettings
from core.recall.knowledge_search import KnowledgeIndex
from core.recall.warm_store import WarmStore
from core.store.knowledge import load_knowledge
from core.transcript import context_at
from core.transcript.loader import load_transcript
from tests.core.test_message_parts import synthetic_session
from tests.openclaw_db import add_session, conversation, create_agent_db
from widgets.common.jobs import JobRunner
from widgets.compaction.panel import CompactionPanel
from widgets.facts.view import FactsView
from widgets.openclaw.memory_index_view import MemoryIndexView
from widgets.openclaw.view import OpenClawView
from widgets.recall.preview import RecallPreview
from widgets.session.context_view import ContextView
from widgets.trim.view import TrimView

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

NOW = 1_760_000_000_000


class Gate:
    """Wraps a function: its first call waits for :meth:`release`; *fail* makes calls raise."""

    def __init__(self, real: Callable[..., Any]) -> None:
        self.real = real
        self.event = threading.Event()
        self.calls: list[tuple[Any, ...]] = []
        self.fail = False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append(args)
        if self.fail:
            raise RuntimeError("boom in the job")
        if len(self.calls) == 1:
            assert self.event.wait(10), "the test never released the first job"
        return self.real(*args, **kwargs)

    def release(self) -> None:
        self.event.set()


@pytest.fixture
def runner(qtbot) -> Iterator[JobRunner]:
    pool = QThreadPool()
    pool.setMaxThreadCount(4)  # the held job must not keep the second one waiting
    job_runner = JobRunner(pool)
    yield job_runner
    assert job_runner.shutdown(10_000)


def _release_and_settle(qtbot, runner: JobRunner, gate: Gate) -> None:
    """Let the held first job end, and wait until the runner has dealt with it."""
    gate.release()
    qtbot.waitUntil(lambda: not runner.running(), timeout=10_000)


def _assert_failure_reported(qtbot, runner: JobRunner, caplog, errors: list[Any]) -> None:
    qtbot.waitUntil(lambda: bool(errors), timeout=10_000)
    assert "boom in the job" in errors[0][1]
    logged = [r for r in caplog.records if r.name == "memlens.jobs" and r.exc_info]
    assert logged and "boom in the job" in str(logged[0].exc_info[1])


@pytest.fixture
def errors(runner: JobRunner) -> list[Any]:
    got: list[Any] = []
    runner.error.connect(lambda name, message: got.append((name, message)))
    return got


# -- facts: likely sources ------------------------------------------------------------------


@pytest.fixture(scope="module")
def knowledge_file(tmp_path_factory):
    return write_demo(
        tmp_path_factory.mktemp("facts") / "home", seed=7, now_ms=NOW, segments=40
    ).knowledge_file


def _facts_view(qtbot, runner, knowledge_file, tmp_path, sources):
    copy = tmp_path / "k.jsonl"
    copy.write_bytes(knowledge_file.read_bytes())
    view = FactsView(runner=runner)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    view.attach(load_knowledge(copy), lambda _writes: True, sources)
    return view


def test_facts_sources_late_result_dropped(qtbot, runner, knowledge_file, tmp_path):
    gate = Gate(lambda content: [content])
    view = _facts_view(qtbot, runner, knowledge_file, tmp_path, gate)
    qtbot.waitUntil(lambda: len(gate.calls) == 1, timeout=5000)  # the first fact's search
    second = view.model.fact(1)
    with qtbot.waitSignal(view.sources_ready, timeout=5000) as shown:
        view.select_fact(second.id)
    assert shown.args == [[second.content]]
    _release_and_settle(qtbot, runner, gate)
    assert view.detail.sources() == [second.content]


def test_facts_sources_failure(qtbot, runner, errors, caplog, knowledge_file, tmp_path):
    gate = Gate(lambda content: [])
    gate.fail = True
    view = _facts_view(qtbot, runner, knowledge_file, tmp_path, gate)
    _assert_failure_reported(qtbot, runner, caplog, errors)
    assert "Search failed: boom in the job" in view.detail.sources_note.text()


# -- context rows ---------------------------------------------------------------------------


def _context_view(qtbot, runner):
    view = ContextView(runner=runner)
    qtbot.addWidget(view)
    view.sync_limit = 0  # every session replays in the runner
    return view


def test_context_late_replay_dropped(qtbot, runner, monkeypatch):
    gate = Gate(context_view.replay_rows)
    monkeypatch.setattr(context_view, "replay_rows", gate)
    view = _context_view(qtbot, runner)
    session = synthetic_session()
    view.show_context(session, "e3")
    qtbot.waitUntil(lambda: len(gate.calls) == 1, timeout=5000)
    with qtbot.waitSignal(view.context_shown, timeout=5000):
        view.show_context(session, "e9")
    _release_and_settle(qtbot, runner, gate)
    assert "e9" in view.title.text()
    assert view.model.target_entry == "e9"


def test_context_replay_failure(qtbot, runner, errors, caplog, monkeypatch):
    gate = Gate(context_view.replay_rows)
    gate.fail = True
    monkeypatch.setattr(context_view, "replay_rows", gate)
    view = _context_view(qtbot, runner)
    with qtbot.waitSignal(view.context_shown, timeout=5000):
        view.show_context(synthetic_session(), "e9")
    _assert_failure_reported(qtbot, runner, caplog, errors)
    assert "boom in the job" in view.footer.text()


def test_a_destroyed_view_gets_nothing(qtbot, runner, errors, caplog, monkeypatch):
    gate = Gate(context_view.replay_rows)
    monkeypatch.setattr(context_view, "replay_rows", gate)
    view = ContextView(runner=runner)  # not given to qtbot: the test deletes it
    view.sync_limit = 0
    view.show_context(synthetic_session(), "e9")
    qtbot.waitUntil(lambda: len(gate.calls) == 1, timeout=5000)
    gone: list[object] = []
    view.destroyed.connect(lambda *_: gone.append(True))
    view.deleteLater()
    qtbot.waitUntil(lambda: bool(gone), timeout=5000)
    _release_and_settle(qtbot, runner, gate)
    assert errors == []
    assert not [r for r in caplog.records if r.name == "memlens.jobs" and r.levelname == "ERROR"]


# -- trim -----------------------------------------------------------------------------------


def _trim_view(qtbot, runner):
    view = TrimView(runner=runner)
    qtbot.addWidget(view)
    return view


def _messages():
    return [item.message for item in context_at(synthetic_session())]


def test_trim_late_run_dropped(qtbot, runner, monkeypatch):
    gate = Gate(trim_model.compute_run)
    monkeypatch.setattr(trim_model, "compute_run", gate)
    view = _trim_view(qtbot, runner)
    messages = _messages()
    view.set_context(messages, "first query", 1000, 0, 0)
    qtbot.waitUntil(lambda: len(gate.calls) == 1, timeout=5000)
    with qtbot.waitSignal(view.result_ready, timeout=5000):
        view.set_context(messages, "second query", 900, 0, 0)
        view.run()
    _release_and_settle(qtbot, runner, gate)
    assert view.result() is not None
    assert view.parameters().window == 900
    assert view.export_bytes()  # the shown run is the second one's (window 900)
    assert gate.calls[-1][1].window == 900


def test_trim_failure(qtbot, runner, errors, caplog, monkeypatch):
    gate = Gate(trim_model.compute_run)
    gate.fail = True
    monkeypatch.setattr(trim_model, "compute_run", gate)
    view = _trim_view(qtbot, runner)
    with qtbot.waitSignal(view.trim_failed, timeout=5000) as failed:
        view.set_context(_messages(), "query", 1000, 0, 0)
    assert "RuntimeError: boom in the job" in failed.args[0]
    _assert_failure_reported(qtbot, runner, caplog, errors)
    assert view.summary_label.text() == "Trim failed"


# -- OpenClaw transcript search -------------------------------------------------------------


def _openclaw_view(qtbot, runner, monkeypatch, gate, tmp_path):
    monkeypatch.setattr(openclaw_view, "search_databases", gate)
    path = tmp_path / ".openclaw" / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    path.parent.mkdir(parents=True)
    db = create_agent_db(path)
    add_session(db, "s1", conversation("s1", 2), key="agent:main:main")
    db.close()
    view = OpenClawView(runner=runner)
    qtbot.addWidget(view)
    view.set_data(load_dataset(tmp_path / ".openclaw"))
    return view


def test_openclaw_search_late_result_dropped(qtbot, runner, monkeypatch, tmp_path):
    gate = Gate(lambda dbs, text, sid: (text, [], []))
    view = _openclaw_view(qtbot, runner, monkeypatch, gate, tmp_path)
    view.query.setText("first")
    view.search()
    qtbot.waitUntil(lambda: len(gate.calls) == 1, timeout=5000)
    view.query.setText("second")
    with qtbot.waitSignal(view.searched, timeout=5000):
        view.search()
    _release_and_settle(qtbot, runner, gate)
    assert "'second'" in view.search_note.text()


def test_openclaw_search_failure(qtbot, runner, errors, caplog, monkeypatch, tmp_path):
    gate = Gate(lambda dbs, text, sid: (text, [], []))
    gate.fail = True
    view = _openclaw_view(qtbot, runner, monkeypatch, gate, tmp_path)
    view.query.setText("anything")
    with qtbot.waitSignal(view.searched, timeout=5000):
        view.search()
    _assert_failure_reported(qtbot, runner, caplog, errors)
    assert "Transcript search failed: boom in the job" in view.search_note.text()


# -- OpenClaw memory index ------------------------------------------------------------------


def _index_view(qtbot, runner, monkeypatch, gate):
    monkeypatch.setattr(memory_index_view, "load_snapshot", gate)
    view = MemoryIndexView(runner=runner)
    qtbot.addWidget(view)
    return view


def _snapshot(path, _workspace):
    return memory_index_view.Snapshot(path, [], [], [], [("path", str(path))], [])


def test_memory_index_late_load_dropped(qtbot, runner, monkeypatch, tmp_path):
    gate = Gate(_snapshot)
    view = _index_view(qtbot, runner, monkeypatch, gate)
    first, second = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    view.set_home(tmp_path, [first, second], None, tmp_path)
    qtbot.waitUntil(lambda: len(gate.calls) == 1, timeout=5000)
    with qtbot.waitSignal(view.loaded, timeout=5000):
        view.index_combo.setCurrentIndex(1)
    _release_and_settle(qtbot, runner, gate)
    assert view.snapshot is not None and view.snapshot.path == second


def test_memory_index_load_failure(qtbot, runner, errors, caplog, monkeypatch, tmp_path):
    gate = Gate(_snapshot)
    gate.fail = True
    view = _index_view(qtbot, runner, monkeypatch, gate)
    with qtbot.waitSignal(view.failed, timeout=5000):
        view.set_home(tmp_path, [tmp_path / "a.sqlite"], None, tmp_path)
    _assert_failure_reported(qtbot, runner, caplog, errors)
    assert "boom in the job" in view.status_label.text()


# -- compaction plan ------------------------------------------------------------------------


def _panel(qtbot, runner):
    panel = CompactionPanel(runner=runner)
    qtbot.addWidget(panel)
    return panel


def test_compaction_late_plan_dropped(qtbot, runner, monkeypatch, fixtures_dir):
    gate = Gate(compaction_jobs.plan_compaction)
    monkeypatch.setattr(compaction_jobs, "plan_compaction", gate)
    panel = _panel(qtbot, runner)
    first = target_for(load_transcript(fixtures_dir / "before-compaction.jsonl"))
    second = target_for(synthetic_session())
    panel.set_target(first)
    qtbot.waitUntil(lambda: len(gate.calls) == 1, timeout=5000)
    with qtbot.waitSignal(panel.cut_point_changed, timeout=5000):
        panel.set_target(second)
    _release_and_settle(qtbot, runner, gate)
    assert panel.target() is second
    # the job plans on a snapshot of the session (live mode may extend the session itself)
    planned = gate.calls[-1][0]
    assert panel.plan() is not None
    assert planned.id == second.session.id and len(planned.entries) == len(second.session.entries)
    assert panel.plan() == compaction_jobs.plan_compaction.real(  # type: ignore[attr-defined]
        second.session, **second.settings.kwargs()
    )


def test_compaction_plan_failure(qtbot, runner, errors, caplog, monkeypatch):
    gate = Gate(compaction_jobs.plan_compaction)
    gate.fail = True
    monkeypatch.setattr(compaction_jobs, "plan_compaction", gate)
    panel = _panel(qtbot, runner)
    with qtbot.waitSignal(panel.failed, timeout=5000) as failed:
        panel.set_target(target_for(synthetic_session()))
    assert failed.args == ["Planning failed: boom in the job"]
    _assert_failure_reported(qtbot, runner, caplog, errors)
    assert panel.plan_title.text() == "Planning failed"


# -- recall ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def recall_data(tmp_path_factory):
    root = tmp_path_factory.mktemp("recall")
    write_demo(root / "home", now_ms=NOW, segments=60)
    folder = root / "home" / "memory" / "context"
    embedder, _note = load_embedder("hash")
    store = WarmStore.open(folder, embedder, cache_dir=root / "cache", now_ms=NOW)
    store.embed_missing()
    return store, KnowledgeIndex(load_knowledge(folder / "knowledge.jsonl"))


def _recall_view(qtbot, runner, monkeypatch, gate, recall_data):
    monkeypatch.setattr(recall_models, "recall", gate)
    view = RecallPreview(runner=runner)
    qtbot.addWidget(view)
    store, knowledge = recall_data
    view.attach(store, knowledge, RecallSettings(), now_ms=NOW)
    return view


def test_recall_new_query_drops_the_old_result(qtbot, runner, monkeypatch, recall_data):
    gate = Gate(recall_models.recall)
    view = _recall_view(qtbot, runner, monkeypatch, gate, recall_data)
    qtbot.waitUntil(lambda: len(gate.calls) == 1, timeout=5000)  # attach's recall, held
    view.query_box.setText("invoice number sequence table")
    with qtbot.waitSignal(view.preview_changed, timeout=5000):
        view.refresh()
    _release_and_settle(qtbot, runner, gate)
    assert view.preview() is not None and view.preview().search is not None
    shown = view.preview().search
    assert gate.calls[0][0] != shown.query == "invoice number sequence table"
    assert view.detail_box.title().startswith("Detail hits (")


def test_recall_failure(qtbot, runner, errors, caplog, monkeypatch, recall_data):
    gate = Gate(recall_models.recall)
    gate.fail = True
    view = _recall_view(qtbot, runner, monkeypatch, gate, recall_data)
    _assert_failure_reported(qtbot, runner, caplog, errors)
    assert view.status_label.text() == "Recall failed: boom in the job"
