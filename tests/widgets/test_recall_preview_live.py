"""Recall preview under live mode: refreshes coalesce, wait while hidden, fit columns once."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from PySide6.QtCore import QThreadPool
from PySide6.QtWidgets import QLabel, QTabWidget

from core.demo.build import write_demo
from core.embed import load_embedder
from core.recall.engine import RecallSettings
from core.recall.knowledge_search import KnowledgeIndex
from core.recall.warm_store import WarmStore
from core.store.knowledge import load_knowledge
from widgets.common.jobs import JobRunner
from widgets.recall import preview as recall_preview
from widgets.recall import preview_models as recall_models
from widgets.recall.preview import RecallPreview
from widgets.recall.preview_models import FIT_SAMPLE_ROWS

NOW = 1_760_000_000_000
QUERY = "invoice number sequence table: next_invoice_number locks the year row"


@pytest.fixture(scope="module")
def recall_data(tmp_path_factory):
    root = tmp_path_factory.mktemp("recall-live")
    write_demo(root / "home", now_ms=NOW, segments=120)
    folder = root / "home" / "memory" / "context"
    embedder, _note = load_embedder("hash")
    store = WarmStore.open(folder, embedder, cache_dir=root / "cache", now_ms=NOW)
    store.embed_missing()
    return store, KnowledgeIndex(load_knowledge(folder / "knowledge.jsonl"))


class Calls:
    """Wraps recall: counts calls; with *hold*, the first call waits for :meth:`release`."""

    def __init__(self, *, hold: bool = False) -> None:
        self.real = recall_models.recall
        self.hold = hold
        self.event = threading.Event()
        self.count = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.count += 1
        if self.hold and self.count == 1:
            assert self.event.wait(10), "the test never released the first recall"
        return self.real(*args, **kwargs)

    def release(self) -> None:
        self.event.set()


@pytest.fixture
def runner(qtbot):
    pool = QThreadPool()
    pool.setMaxThreadCount(2)
    job_runner = JobRunner(pool)
    yield job_runner
    assert job_runner.shutdown(10_000)


def _settle(qtbot, runner: JobRunner) -> None:
    qtbot.waitUntil(lambda: not runner.running(), timeout=10_000)


def _view(qtbot, runner, recall_data) -> RecallPreview:
    view = RecallPreview(runner=runner)
    qtbot.addWidget(view)
    view.query_box.setText(QUERY)
    view.attach(*recall_data, RecallSettings(), now_ms=NOW)
    return view


def test_refreshes_while_a_recall_runs_make_exactly_one_more(
    qtbot, runner, monkeypatch, recall_data
):
    calls = Calls(hold=True)
    monkeypatch.setattr(recall_models, "recall", calls)
    view = _view(qtbot, runner, recall_data)
    qtbot.waitUntil(lambda: calls.count == 1, timeout=5000)  # attach's recall, held
    for _ in range(5):  # live batches while it runs
        view.refresh()
    assert calls.count == 1 and view.is_busy()
    shown: list[object] = []
    view.preview_changed.connect(shown.append)
    calls.release()
    qtbot.waitUntil(lambda: len(shown) == 2, timeout=10_000)
    _settle(qtbot, runner)
    assert calls.count == 2  # the held one, then one for all five refreshes
    assert view.preview() is shown[-1] and view.preview().search is not None


def test_another_query_replaces_the_running_recall(qtbot, runner, monkeypatch, recall_data):
    calls = Calls(hold=True)
    monkeypatch.setattr(recall_models, "recall", calls)
    view = _view(qtbot, runner, recall_data)
    qtbot.waitUntil(lambda: calls.count == 1, timeout=5000)
    view.query_box.setText("deploy staging database migration")
    with qtbot.waitSignal(view.preview_changed, timeout=5000):
        view.refresh()  # not the running job's query: runs now, the held result is dropped
    calls.release()
    _settle(qtbot, runner)
    assert calls.count == 2
    assert view.preview().search.query == "deploy staging database migration"


def test_a_hidden_view_recalls_when_shown(qtbot, runner, monkeypatch, recall_data):
    calls = Calls()
    monkeypatch.setattr(recall_models, "recall", calls)
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    view = RecallPreview(runner=runner)
    tabs.addTab(QLabel("another view"), "other")
    tabs.addTab(view, "recall")
    tabs.show()
    qtbot.waitExposed(tabs)
    assert not view.isVisible()
    view.query_box.setText(QUERY)
    with qtbot.waitSignal(view.preview_changed, timeout=5000):
        view.attach(*recall_data, RecallSettings(), now_ms=NOW)  # attach recalls anyway
    _settle(qtbot, runner)
    assert calls.count == 1
    for _ in range(3):  # live batches while another tab is shown
        view.refresh()
    assert not view.is_busy() and not runner.running()
    assert calls.count == 1
    with qtbot.waitSignal(view.preview_changed, timeout=5000):
        tabs.setCurrentWidget(view)
    _settle(qtbot, runner)
    assert calls.count == 2  # one recall for the three refreshes
    tabs.setCurrentIndex(0)
    tabs.setCurrentWidget(view)  # shown again with nothing pending: no recall
    _settle(qtbot, runner)
    assert calls.count == 2


def test_columns_fit_once_on_the_first_rows(qtbot, runner, monkeypatch, recall_data):
    fitted: list[object] = []
    real_fit = recall_preview.fit_columns
    monkeypatch.setattr(recall_preview, "fit_columns", lambda v: (fitted.append(v), real_fit(v)))
    view = RecallPreview(runner=runner)
    qtbot.addWidget(view)
    view.show_rejected.setChecked(True)  # every candidate: the detail table has rows
    view.query_box.setText(QUERY)
    with qtbot.waitSignal(view.preview_changed, timeout=5000):
        view.attach(*recall_data, RecallSettings(), now_ms=NOW)
    _settle(qtbot, runner)
    first = list(fitted)
    tables = (view.knowledge_view, view.detail_view, view.cut_view)
    assert first == [t for t in tables if t.model().rowCount()]  # each table with rows, once
    assert view.knowledge_view in first and view.detail_view in first
    for _ in range(3):
        with qtbot.waitSignal(view.preview_changed, timeout=5000):
            view.refresh()
    view.show_rejected.setChecked(False)  # other rows, same columns
    assert fitted == first
    for table in tables:
        assert table.horizontalHeader().resizeContentsPrecision() == FIT_SAMPLE_ROWS
    view.detach()
    with qtbot.waitSignal(view.preview_changed, timeout=5000):
        view.attach(*recall_data, RecallSettings(), now_ms=NOW)
    _settle(qtbot, runner)
    assert fitted.count(view.knowledge_view) == 2  # another store: fit again
