"""knowledge.jsonl as a log: replay rules and append-only edits."""

from __future__ import annotations

import hashlib
import itertools

import orjson
import pytest

from core.store.knowledge import FactDeletedError, content_hash, load_knowledge


def write(path, *objs):
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))


def fact(i, **over):
    return {
        "id": f"f{i}",
        "type": "decision",
        "content": f"fact {i}",
        "timestamp": 1000 + i,
        **over,
    }


def test_replay_last_line_wins_and_deleted_removes(tmp_path):
    p = tmp_path / "knowledge.jsonl"
    write(
        p,
        fact(1),
        fact(2),
        fact(1, content="fact 1 v2"),
        fact(2, _deleted=True),
        fact(3),
        fact(3, supersededBy="f1"),
        {"id": "f4", "type": "config"},
        {"id": "f5", "type": "issue", "content": "no timestamp"},
    )
    log = load_knowledge(p)
    assert log.facts["f1"].content == "fact 1 v2" and log.facts["f1"].status == "active"
    assert log.facts["f2"].status == "deleted"
    assert log.facts["f3"].status == "superseded" and log.facts["f3"].superseded_by == "f1"
    assert "f4" not in log.facts  # needs content
    assert any(pr.line == 7 and "needs id, type and content" in pr.message for pr in log.problems)
    assert log.facts["f5"].timestamp > 1_600_000_000_000  # missing timestamp means now
    assert log.counts() == {"active": 2, "superseded": 1, "deleted": 1}
    assert [h.line for h in log.history["f1"]] == [1, 3]


def test_content_hash():
    assert content_hash("  Use ORJSON \n") == hashlib.sha256(b"use orjson").hexdigest()[:16]


@pytest.fixture
def log(tmp_path):
    p = tmp_path / "knowledge.jsonl"
    write(p, fact(1))
    ids = (f"new{i}" for i in itertools.count())
    clock = itertools.count(5000)
    lg = load_knowledge(p)
    lg.new_id = lambda: next(ids)
    lg.clock = lambda: next(clock)
    return lg


def _lines(log):
    with open(log.path, "rb") as fh:
        return [orjson.loads(line) for line in fh.read().splitlines()]


def test_edits_only_append(log):
    original = open(log.path, "rb").read()
    log.add("config", "Port is 8080", context="dev server")
    log.update("f1", content="fact 1 edited")
    new = log.supersede("f1", "fact 1 replaced", context="why")
    log.delete("new0")
    log.restore("new0")
    after = open(log.path, "rb").read()
    assert after.startswith(original)
    lines = _lines(log)
    assert [ln["id"] for ln in lines] == ["f1", "new0", "f1", "new1", "f1", "new0", "new0"]
    assert lines[4]["supersededBy"] == new.id
    assert lines[5]["_deleted"] is True and "_deleted" not in lines[6]
    # in-memory state equals a fresh replay of the file
    fresh = load_knowledge(log.path)
    assert fresh.facts == log.facts
    assert {k: [h.offset for h in v] for k, v in fresh.history.items()} == {
        k: [h.offset for h in v] for k, v in log.history.items()
    }
    assert log.chain("new1") == ["f1", "new1"]
    assert log.facts["f1"].status == "superseded"


def test_edits_are_redacted(log):
    f = log.add(
        "config", "token = abcdefghijklmnopqrstuvwxyz0", context="Bearer abcdefghijklmnopqrstuvwxyz"
    )
    assert f.content == "token = [REDACTED]" and f.context == "Bearer [REDACTED]"
    assert b"abcdefghijklmnopqrst" not in open(log.path, "rb").read()


def test_bad_edits_write_nothing(log):
    before = open(log.path, "rb").read()
    with pytest.raises(KeyError, match="no fact with id"):
        log.update("nope", content="x")
    with pytest.raises(ValueError, match="fact type must be one of"):
        log.add("opinion", "x")
    with pytest.raises(ValueError, match="needs content"):
        log.add("config", "  ")
    assert open(log.path, "rb").read() == before


def test_append_after_partial_line_keeps_both(tmp_path):
    p = tmp_path / "knowledge.jsonl"
    p.write_bytes(orjson.dumps(fact(1)) + b"\n" + b'{"id":"f2","ty')  # agent mid-write
    lg = load_knowledge(p)
    assert any("partial last line" in pr.message for pr in lg.problems)
    f = lg.add("decision", "after the partial line")
    raw = p.read_bytes().split(b"\n")
    assert raw[1] == b'{"id":"f2","ty'
    assert orjson.loads(raw[2])["id"] == f.id
    assert load_knowledge(p).facts[f.id].line == 3 == lg.facts[f.id].line


def test_edits_start_from_the_last_line_and_keep_unknown_fields(log):
    extra = {"sessionKey": "agent:main:x", "source": "extraction", "confidence": 0.9}
    with open(log.path, "ab") as fh:
        fh.write(orjson.dumps(fact(7, content="Use Postgres 16", **extra)) + b"\n")
    lg = load_knowledge(log.path)
    lg.clock = lambda: 9000
    lg.update("f7", context="chosen for JSONB")
    new = lg.supersede("f7", "Use Postgres 17")
    lg.delete(new.id)
    lg.restore(new.id)
    lines = _lines(lg)
    updated, created, marked = lines[-5], lines[-4], lines[-3]
    assert updated == {
        **fact(7, content="Use Postgres 16", **extra),
        "context": "chosen for JSONB",
        "timestamp": 9000,
    }
    assert marked == {**updated, "supersededBy": new.id}
    assert "sessionKey" not in created  # a new fact is memlens's own
    assert lines[-2]["_deleted"] is True and "_deleted" not in lines[-1]


def test_an_edit_never_undeletes(log):
    log.delete("f1")
    before = open(log.path, "rb").read()
    with pytest.raises(FactDeletedError, match="is deleted: restore it"):
        log.update("f1", content="fact 1 edited")
    with pytest.raises(FactDeletedError, match="is deleted"):
        log.supersede("f1", "fact 1 replaced")
    assert open(log.path, "rb").read() == before
    assert log.facts["f1"].status == "deleted"
    restored = log.restore("f1")
    assert restored.status == "active" and restored.content == "fact 1"
    assert log.update("f1", content="fact 1 edited").status == "active"
    assert load_knowledge(log.path).facts == log.facts
