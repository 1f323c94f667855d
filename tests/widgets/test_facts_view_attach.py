"""The facts view attached to another log."""

from __future__ import annotations

import pytest

from core.demo import write_demo
from core.store.knowledge import load_knowledge
from widgets.facts_view import FactsView

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
