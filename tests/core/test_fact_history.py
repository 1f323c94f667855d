"""A fact's story: what each log line changed, and its chain both ways."""

from __future__ import annotations

import orjson

from core.knowledge.history import describe_change, fact_chain, fact_history
from core.store.knowledge import load_knowledge

BASE = {"id": "a", "type": "decision", "content": "x", "timestamp": 1}


def test_describe_change():
    assert describe_change(None, BASE) == "added"
    assert describe_change(BASE, {**BASE, "_deleted": True}) == "deleted"
    assert describe_change({**BASE, "_deleted": True}, BASE) == "restored"
    assert (
        describe_change(BASE, {**BASE, "supersededBy": "bbbbbbbbbbbb"}) == "superseded by bbbbbbbb…"
    )
    assert describe_change({**BASE, "supersededBy": "b"}, BASE) == "no longer superseded"
    assert describe_change(BASE, {**BASE, "type": "config", "content": "y", "timestamp": 2}) == (
        "type decision → config; content"
    )
    assert describe_change(BASE, {**BASE, "context": "c", "source": "s"}) == "context; source"
    assert describe_change(BASE, dict(BASE)) == "same again"
    assert describe_change(BASE, {**BASE, "timestamp": 9}) == "re-dated"


def test_history_and_chain(tmp_path):
    p = tmp_path / "knowledge.jsonl"
    lines = [
        BASE,
        {**BASE, "id": "b", "content": "x2"},
        {**BASE, "supersededBy": "b"},
        {**BASE, "id": "c", "content": "x3"},
        {**BASE, "id": "b", "content": "x2", "supersededBy": "c"},
    ]
    p.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    log = load_knowledge(p)
    rows = fact_history(log, "b")
    assert [(r.version, r.line, r.change) for r in rows] == [
        (1, 2, "added"),
        (2, 5, "superseded by c"),
    ]
    assert rows[1].offset == sum(len(orjson.dumps(x)) + 1 for x in lines[:4])
    chain = fact_chain(log, "b")
    assert [(c.fact_id, c.distance, c.relation) for c in chain] == [
        ("a", -1, "supersedes"),
        ("b", 0, "this fact"),
        ("c", 1, "superseded by"),
    ]
    assert [c.relation for c in fact_chain(log, "a")][-1] == "superseded by (2 steps)"
    assert [c.fact_id for c in fact_chain(log, "zzz")] == ["zzz"]
