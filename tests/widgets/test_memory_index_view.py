"""Memory index view: tabs over a real v23 index, the search explained, keyword-only said."""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import closing
from typing import TYPE_CHECKING, Any

import pytest
from PySide6.QtCore import Qt

from core.openclaw.memindex import open_memory_index
from core.openclaw.memindex_identity import expected_model, provider_key, scope_hash
from core.openclaw.memsearch import memory_search
from core.openclaw.memsearch_embed import settings_from_config
from tests.core.test_memindex import V23_META, f64, make_v23
from tests.llm_server import Reply
from widgets.common.record_model import RecordRole
from widgets.openclaw.memory_index_view import MemoryIndexView

if TYPE_CHECKING:
    from pathlib import Path

NOW = 1_795_700_000_000  # 2026-11-26T13:33:20Z


class Unit:
    provider, model = "openai-compatible", "fake-embed"

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0, 0.0]


@pytest.fixture
def home(tmp_path: Path) -> dict[str, Any]:
    state = tmp_path / ".openclaw"
    agent = state / "agents" / "main" / "agent"
    agent.mkdir(parents=True)
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "new.md").write_text("not indexed yet\n")
    db = make_v23(
        agent / "openclaw-agent.sqlite",
        [
            {"id": "m", "path": "MEMORY.md", "text": "# Memory\nThe deploy runs on Friday.",
             "embedding": f64(0.6, 0.8, 0.0)},
            {"id": "d", "path": "memory/2026-10-27.md", "text": "deploy notes",
             "embedding": f64(1.0, 0.0, 0.0)},
            {"id": "d2", "path": "memory/2026-10-27.md", "start": 3, "end": 4, "text": "more",
             "embedding": f64(0.0, 1.0, 0.0)},
            *({"id": f"f{i}", "path": f"memory/t{i}.md", "text": f"tea {i}",
               "embedding": f64(0.0, 0.0, 1.0)} for i in range(5)),
        ],
        cache=[("openai-compatible", "fake-embed", "k", "h-m", f64(0.6, 0.8, 0.0), 7)],
    )  # fmt: skip
    config = state / "openclaw.json"
    return {"state": state, "db": db, "config": config, "ws": ws}


def write_config(home: dict[str, Any], search: dict[str, Any]) -> None:
    """The config, and the index's meta as OpenClaw writes it when it indexes with it."""
    raw = {"memory": {"search": search}}
    home["config"].write_text(json.dumps(raw))
    settings = settings_from_config(raw, "main")
    meta = dict(
        V23_META,
        provider=settings.provider,
        model=expected_model(settings) or V23_META["model"],
        providerKey=provider_key(settings),
        scopeHash=scope_hash(settings, home["state"] / "workspace"),
        sources=list(settings.indexed_sources),
    )
    with closing(sqlite3.connect(home["db"])) as db, db:
        db.execute(
            "UPDATE memory_index_meta SET value = ? WHERE key = 'memory_index_meta_v1'",
            (json.dumps(meta),),
        )


@pytest.fixture
def view(qtbot: Any) -> MemoryIndexView:
    w = MemoryIndexView()
    qtbot.addWidget(w)
    w.resize(1400, 800)
    return w


def show(view: MemoryIndexView, qtbot: Any, home: dict[str, Any]) -> None:
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        view.set_home(home["state"], [home["db"]], home["config"], home["ws"])


def run(view: MemoryIndexView, qtbot: Any, query: str) -> Any:
    view.set_now_ms(NOW)
    view.query_edit.setText(query)
    with qtbot.waitSignal(view.search_finished, timeout=10_000) as blocker:
        qtbot.keyClick(view.query_edit, Qt.Key.Key_Return)
    return blocker.args[0]


def column(model: Any, header: str) -> int:
    for c in range(model.columnCount()):
        if model.headerData(c, Qt.Orientation.Horizontal) == header:
            return c
    raise AssertionError(header)


def test_tabs_show_files_chunks_cache_meta(view: MemoryIndexView, qtbot: Any, home: dict) -> None:
    write_config(home, {"provider": "openai-compatible", "model": "fake-embed"})
    show(view, qtbot, home)
    assert view.index_combo.count() == 1 and view.index_combo.currentText().startswith("main")
    states = {
        view.files.record(r).path: view.files.record(r).state for r in range(view.files.rowCount())
    }
    assert states["MEMORY.md"] == "missing" and states["memory/new.md"] == "new-unindexed"
    assert view.chunks.rowCount() == 8
    view.file_filter.setCurrentIndex(view.file_filter.findData("memory/2026-10-27.md"))
    assert view.chunk_proxy.rowCount() == 2  # only that file's chunks
    assert view.chunk_proxy.index(1, 1).data() == "3-4"
    view.chunks_table.selectRow(0)
    assert view.chunk_text.toPlainText() == "deploy notes"
    view.file_filter.setCurrentIndex(0)
    assert view.chunk_proxy.rowCount() == 8
    assert view.cache.rowCount() == 1 and view.cache.record(0).dims == 3
    meta = dict(view.meta.record(r) for r in range(view.meta.rowCount()))
    assert (meta["Model"], meta["Vector dims"], meta["Chunk tokens"]) == ("fake-embed", "3", "400")
    assert (meta["Chunk overlap"], meta["FTS tokenizer"]) == ("80", "unicode61")


def test_keyword_only_search_says_why(view: MemoryIndexView, qtbot: Any, home: dict) -> None:
    write_config(home, {"provider": "none", "query": {"maxResults": 3}})
    show(view, qtbot, home)
    result = run(view, qtbot, "deploy")
    assert result.mode == "fts-only"
    text = view.mode_label.text()
    assert "FTS-ONLY" in text and 'memory.search.provider is "none"' in text
    assert result.max_results == 6  # the form's value wins over the config's


def test_an_index_built_for_another_config_is_paused_as_openclaw_pauses_it(
    view: MemoryIndexView, qtbot: Any, home: dict
) -> None:
    write_config(home, {"provider": "openai-compatible", "model": "fake-embed"})
    home["config"].write_text(json.dumps({"memory": {"search": {"provider": "none"}}}))
    show(view, qtbot, home)
    result = run(view, qtbot, "deploy")
    assert result.mode == "empty" and result.results == []
    assert "index was built for model fake-embed, expected fts-only" in (result.reason or "")
    assert "index was built for model fake-embed" in view.mode_label.text()


def test_hybrid_search_shows_every_component(
    view: MemoryIndexView, qtbot: Any, home: dict, server: Any
) -> None:
    server.add(*[Reply(200, {"data": [{"index": 0, "embedding": [1.0, 0.0, 0.0]}]})] * 2)
    write_config(
        home,
        {"provider": "openai-compatible", "model": "fake-embed",
         "remote": {"baseUrl": server.url + "/v1", "apiKey": "k"}},
    )  # fmt: skip
    show(view, qtbot, home)
    view.min_spin.setValue(0.5)
    result = run(view, qtbot, "deploy")
    assert result.mode == "hybrid" and "Hybrid" in view.mode_label.text()
    with open_memory_index(home["db"]) as idx:
        want = memory_search(
            idx, "deploy", now_ms=NOW, embedder=Unit(), min_score=0.5, workspace=home["ws"]
        )
    model = view.candidates
    assert [model.record(r).hit.path for r in range(model.rowCount())] == [
        c.hit.path for c in want.candidates
    ]
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    for name in ("Score", "Vector", "Text (bm25)", "Keyword", "Path score", "Exact path", "Decay",
                 "Age (days)", "Importance x", "#"):  # fmt: skip
        assert name in headers
    dated = next(
        r for r in range(model.rowCount()) if model.record(r).hit.path.startswith("memory/2026")
    )
    c = model.record(dated)
    assert model.index(dated, column(model, "Decay")).data() == f"{c.decay:.4f}"
    assert c.decay < 1 and c.age_days == pytest.approx(30.5648, abs=1e-3)
    below = [
        r
        for r in range(model.rowCount())
        if model.record(r).below_min_score and not model.record(r).selected
    ]
    assert below, "a candidate under minScore"
    grey = model.index(below[0], 1).data(Qt.ItemDataRole.ForegroundRole)
    assert grey is not None and grey.color().name() == "#8a8a8a"
    assert model.index(0, 1).data(Qt.ItemDataRole.ForegroundRole) is None
    view.only_results.setChecked(True)
    assert model.rowCount() == len(result.results)
    view.results_table.selectRow(0)
    assert (
        view.snippet_view.toPlainText()
        == view.candidate_proxy.index(0, 0).data(RecordRole).hit.snippet
    )


def test_no_index_and_a_damaged_one(view: MemoryIndexView, qtbot: Any, tmp_path: Path) -> None:
    view.set_home(None, [], None, None)
    assert not view.search_button.isEnabled()
    assert "No OpenClaw memory index" in view.status_label.text()
    bad = tmp_path / "openclaw-agent.sqlite"
    bad.write_bytes(b"garbage" * 50)
    with qtbot.waitSignal(view.failed, timeout=10_000) as blocker:
        view.set_home(tmp_path, [bad], None, None)
    assert str(bad) in blocker.args[0] and str(bad) in view.status_label.text()


def test_switching_agents_loads_the_other_index(
    view: MemoryIndexView, qtbot: Any, home: dict, tmp_path: Path
) -> None:
    write_config(home, {"provider": "none"})
    ops = tmp_path / ".openclaw" / "agents" / "ops" / "agent"
    ops.mkdir(parents=True)
    other = make_v23(
        ops / "openclaw-agent.sqlite", [{"id": "o", "path": "MEMORY.md", "text": "ops"}]
    )
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        view.set_home(home["state"], [home["db"], other], home["config"], home["ws"])
    assert [view.index_combo.itemText(i).split()[0] for i in range(2)] == ["main", "ops"]
    with qtbot.waitSignal(view.loaded, timeout=10_000) as blocker:
        view.index_combo.setCurrentIndex(1)
    assert blocker.args[0].path == other and view.chunks.rowCount() == 1
    before = time.time()
    fresh = MemoryIndexView()
    qtbot.addWidget(fresh)
    after = time.time()
    assert int(before * 1000) <= fresh.now_ms() <= int(after * 1000) + 1  # the clock starts at now


def test_workspace_resolved_from_the_config(view: MemoryIndexView, qtbot: Any, home: dict) -> None:
    cfg = {"agents": {"entries": {"main": {"workspace": str(home["ws"])}}}}
    home["config"].write_text(json.dumps(cfg))
    with qtbot.waitSignal(view.loaded, timeout=10_000) as blocker:
        view.set_home(home["state"], [home["db"]], home["config"], None)
    states = {s.path: s.state for s in blocker.args[0].files}
    assert states["memory/new.md"] == "new-unindexed"  # compared with the agent's workspace


def test_a_second_search_builds_the_index_tables_apart(
    view: MemoryIndexView, qtbot: Any, home: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index seen unchanged twice: its tables are built by the builder thread, while
    that search answers from SQLite (the same results), instead of in the search job."""
    from core.openclaw import memsearch_chunks
    from core.openclaw.memsearch_postings import POSTINGS

    tables = (POSTINGS, memsearch_chunks.TOKENS)

    queued: list[object] = []
    real = memsearch_chunks._apart
    monkeypatch.setattr(memsearch_chunks, "_apart", lambda job: (queued.append(job), real(job)))
    write_config(home, {"provider": "none"})
    show(view, qtbot, home)
    answers = [run(view, qtbot, "deploy").to_json()]
    assert not queued  # the first sighting builds nothing
    answers.append(run(view, qtbot, "deploy").to_json())
    built = len(queued)
    assert built and all(t.wait(30) for t in tables)
    answers.append(run(view, qtbot, "deploy").to_json())  # with them
    assert len(queued) == built and answers[0] == answers[1] == answers[2]
