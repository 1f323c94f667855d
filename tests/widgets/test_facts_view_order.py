"""Facts that tie on the sorted column: one order after live updates and after a fresh open."""

from __future__ import annotations

import orjson
import pytest
from PySide6.QtCore import Qt

from core.store.knowledge import load_knowledge
from widgets.facts.model import (
    CONTENT_COL,
    STATUS_COL,
    TIME_COL,
    TYPE_COL,
    FactFilterProxy,
    FactTableModel,
)

MINUTE = 1_760_000_040_000  # every line in the same minute, most in the same millisecond


def _line(fid: str, content: str, *, ts: int = MINUTE, deleted: bool = False) -> bytes:
    obj = {"id": fid, "type": "decision", "content": content, "timestamp": ts}
    if deleted:
        obj["_deleted"] = True
    return orjson.dumps(obj) + b"\n"


FIRST = [_line(f"f{i}", f"fact {i % 2}") for i in range(6)]
# Later lines delete facts out of order, in the same minute, one a millisecond earlier.
LATER = [
    _line("f4", "fact 0", deleted=True),
    _line("f1", "fact 1", deleted=True),
    _line("f6", "fact 0"),
    _line("f3", "fact 1", ts=MINUTE - 1, deleted=True),
    _line("f0", "fact 0", deleted=True),
]


def _order(proxy: FactFilterProxy) -> list[str]:
    model = proxy.sourceModel()
    assert isinstance(model, FactTableModel)
    return [
        model.fact(proxy.mapToSource(proxy.index(r, 0)).row()).id for r in range(proxy.rowCount())
    ]


def _table(log, column: int, order: Qt.SortOrder) -> FactFilterProxy:
    model = FactTableModel()
    model.set_log(log)
    proxy = FactFilterProxy()
    proxy.setSourceModel(model)
    proxy.source = model  # the proxy does not own its source model: keep it alive
    proxy.sort(column, order)
    return proxy


@pytest.mark.parametrize("column", [TIME_COL, STATUS_COL, TYPE_COL, CONTENT_COL])
@pytest.mark.parametrize("order", [Qt.SortOrder.DescendingOrder, Qt.SortOrder.AscendingOrder])
def test_live_updates_and_a_fresh_open_give_one_order(qapp, tmp_path, column, order):
    path = tmp_path / "knowledge.jsonl"
    path.write_bytes(b"".join(FIRST))
    log = load_knowledge(path)
    live = _table(log, column, order)
    for line in LATER:  # the follower's way: one appended line at a time, then refresh
        with path.open("ab") as f:
            f.write(line)
        log.replay(line, first_line=log.lines + 1, base_offset=log.size)
        live.sourceModel().refresh()
    fresh = _table(load_knowledge(path), column, order)
    assert _order(live) == _order(fresh)
    assert len(_order(fresh)) == 7


def test_ties_fall_back_to_the_log_line_then_the_id(qapp, tmp_path):
    path = tmp_path / "knowledge.jsonl"
    path.write_bytes(b"".join(FIRST + LATER))
    proxy = _table(load_knowledge(path), TIME_COL, Qt.SortOrder.DescendingOrder)
    # newest last line first among equal times; f3's delete is a millisecond older
    assert _order(proxy) == ["f0", "f6", "f1", "f4", "f5", "f2", "f3"]
