"""The facts view attached to another log, and sources searched only while it is shown."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLabel, QTabWidget

from core.demo.build import write_demo
from core.store.knowledge import load_knowledge
from tests.widgets.test_facts_view import _shown_ids
from widgets.facts.view import SOURCES_DELAY_MS, FactsView

NOW = 1_760_000_000_000


@pytest.fixture(scope="module")
def knowledge_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("attach")
    first = write_demo(root / "a", seed=7, now_ms=NOW, segments=40).knowledge_file
    second = write_demo(root / "b", seed=11, now_ms=NOW, segments=40).knowledge_file
    return first, second


def _copy(path, tmp_path, name):
    out = tmp_path / name
    out.write_bytes(path.read_bytes())
    return load_knowledge(out)


def _always(_writes):
    return True


def test_another_log_drops_the_old_selection(qtbot, knowledge_files, tmp_path):
    first = _copy(knowledge_files[0], tmp_path, "a.jsonl")
    second = _copy(knowledge_files[1], tmp_path, "b.jsonl")
    assert not set(first.facts) & set(second.facts)
    (tmp_path / "empty.jsonl").write_bytes(b"")
    empty = load_knowledge(tmp_path / "empty.jsonl")
    view = FactsView()
    qtbot.addWidget(view)
    for other in (second, empty, None):
        view.attach(first, _always)
        view.table.selectAll()
        assert len(view.selected_ids()) == len(first.facts)
        with qtbot.captureExceptions() as raised:
            view.attach(other, _always)
        assert raised == []
        known = set(other.facts) if other is not None else set()
        assert set(view.selected_ids()) <= known
        assert {f.id for f in view.selected_facts()} <= known
        assert view.current_id() in known | {""}
        assert view.log() is other


def test_sources_wait_until_the_view_is_shown(qtbot, knowledge_files, tmp_path):
    log = _copy(knowledge_files[0], tmp_path, "a.jsonl")
    calls: list[str] = []

    def sources(content):
        calls.append(content)
        return []

    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    tabs.addTab(QLabel("another view"), "Other")
    view = FactsView()
    tabs.addTab(view, "Facts")
    tabs.show()
    qtbot.waitExposed(tabs)
    assert not view.isVisible()
    view.attach(log, _always, sources)
    qtbot.wait(SOURCES_DELAY_MS * 3)
    assert calls == []
    with qtbot.waitSignal(view.sources_ready, timeout=5000):
        tabs.setCurrentWidget(view)
    assert calls == [view.current_fact().content]
    # Hidden while the debounce runs: the search waits for the next show.
    view.select_fact(_shown_ids(view)[1])
    tabs.setCurrentIndex(0)
    qtbot.wait(SOURCES_DELAY_MS * 3)
    view.wait_for_sources()
    assert len(calls) == 1
    with qtbot.waitSignal(view.sources_ready, timeout=5000):
        tabs.setCurrentWidget(view)
    assert calls[1:] == [view.current_fact().content]
    view.wait_for_sources()
