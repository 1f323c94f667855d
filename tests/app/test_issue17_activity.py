"""Issue 17, defect 8: memlens's own writes (demo data, vector cache) are not agent writes."""

from __future__ import annotations

from pathlib import Path

import orjson

from app.main_window import MainWindow
from core.io import fsutil
from tests.qt_read import shown_records


def _under(path: str, root: Path) -> bool:
    return Path(path).resolve().is_relative_to(root.resolve())


def test_demo_generation_and_vector_cache_are_listed_as_memlens_own_files(
    qtbot, tmp_path, monkeypatch
):
    cache = tmp_path / "cache"
    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(cache))
    monkeypatch.setenv("MEMLENS_DATA_DIR", str(tmp_path / "data"))
    window = MainWindow()
    qtbot.addWidget(window)
    window.open_demo()  # generates the demo data into the cache folder
    qtbot.waitUntil(lambda: window.data is not None, timeout=60_000)
    view = window.activity_view
    everything = view.model

    def logged() -> list:
        return [everything.record(r) for r in range(everything.rowCount())]

    # the demo's generation wrote its knowledge log, and recall indexing the vector cache
    qtbot.waitUntil(lambda: any(Path(r.path).name == "knowledge.jsonl" for r in logged()))
    qtbot.waitUntil(
        lambda: any(Path(r.path).name.startswith("vectors-") for r in logged()), timeout=60_000
    )
    own = [r for r in logged() if _under(r.path, cache)]
    assert own
    # The Writes view shows the agent's data by default: none of memlens's own writes
    assert not [r for r in shown_records(view.table.model()) if _under(r.path, cache)]
    assert view.owner_box.currentData() == "agent"
    assert view.count_label.text().startswith("No writes to the agent's data")
    # ...and memlens's own files are a separate list that has them all
    view.owner_box.setCurrentIndex(view.owner_box.findData("memlens"))
    shown = shown_records(view.table.model())
    assert {id(r) for r in own} <= {id(r) for r in shown}
    assert all(r.owner == "memlens" for r in shown)
    tip = view.table.model().index(0, 0).data(0x0003)  # ToolTipRole
    assert "memlens's own file" in tip
    # a write to the demo's agent data made by the user is the agent's data again
    knowledge = next(Path(window.data.discovery.path).rglob("knowledge.jsonl"))
    fsutil.append_lines(knowledge, b'{"id":"x","type":"note","content":"mine","timestamp":1}\n')
    view.owner_box.setCurrentIndex(view.owner_box.findData("agent"))
    qtbot.waitUntil(lambda: len(shown_records(view.table.model())) == 1)
    assert shown_records(view.table.model())[0].path == str(knowledge)
    assert view.count_label.text().startswith("1 write to the agent's data")
    # the log itself says whose file each line touched (a line that does not is the agent's)
    lines = [orjson.loads(x) for x in window.manager.activity.path.read_bytes().splitlines()]
    assert {x.get("owner") for x in lines if _under(x["file"], cache)} >= {"memlens"}
    assert [x.get("owner") for x in lines if x["file"] == str(knowledge)][-1] is None
    assert any(x["summary"].startswith("demo data: ") for x in lines)
