"""Fact operations: exact planned lines, appends only, undo and redo as appended lines."""

from __future__ import annotations

import itertools
from pathlib import Path

import orjson
import pytest

from core.knowledge.ops import (
    FactOp,
    FactOpError,
    StaleError,
    apply_fact_plan,
    inverse,
    plan_fact_ops,
)
from core.knowledge.review_log import catch_up
from core.store.knowledge import load_knowledge
from tests.demo_copy import demo_copy

NOW = 1_760_000_000_000
KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"


def write(path: Path, *objs: dict) -> None:
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))


def fact(i: int, **over: object) -> dict:
    return {
        "id": f"f{i}",
        "type": "decision",
        "content": f"fact {i}",
        "timestamp": 1000 + i,
        **over,
    }


def pin(log):
    ids = (f"new{i}" for i in itertools.count())
    clock = itertools.count(5000)
    log.new_id = lambda: next(ids)
    log.clock = lambda: next(clock)
    return log


@pytest.fixture
def small(tmp_path):
    p = tmp_path / "knowledge.jsonl"
    write(p, fact(1), fact(2), fact(3, context="ctx 3", sessionKey="agent:main"))
    return pin(load_knowledge(p))


@pytest.fixture
def demo(tmp_path):
    home = tmp_path / "home"
    demo_copy(home, now_ms=NOW, segments=300)
    return pin(load_knowledge(home / "memory" / "context" / "knowledge.jsonl"))


class Appends:
    """Asserts that every step only appends: the old bytes are a prefix of the new."""

    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self.data = self.path.read_bytes()

    def step(self) -> bytes:
        new = self.path.read_bytes()
        assert new.startswith(self.data), "the file was rewritten, not appended to"
        assert len(new) > len(self.data)
        added, self.data = new[len(self.data) :], new
        return added

    def unchanged(self) -> None:
        assert self.path.read_bytes() == self.data


def records(added: bytes) -> list[dict]:
    return [orjson.loads(line) for line in added.splitlines()]


def same_as_reload(log) -> None:
    """The log in memory is what replaying the file gives."""
    fresh = load_knowledge(log.path)
    assert fresh.facts == log.facts
    assert fresh.history == log.history
    assert (fresh.size, fresh.lines) == (log.size, log.lines)


def run(log, ops):
    planned = plan_fact_ops(log, ops)
    done = apply_fact_plan(log, planned)
    return planned, done


def test_edit_undo_redo_on_demo_data(demo):
    files = Appends(demo.path)
    fid = next(f.id for f in demo.facts.values() if f.status == "active")
    before = demo.last_record(fid)
    planned, done = run(
        demo, FactOp.edit(fid, content="Tiles above zoom 19 are cached", type="config")
    )
    added = files.step()
    assert added == planned.payload  # exactly the confirmed bytes
    assert records(added) == [{**before, "content": "Tiles above zoom 19 are cached",
                               "type": "config", "timestamp": 5000}]  # fmt: skip
    assert [ln.line for ln in done.lines] == [demo.lines]
    assert done.lines[0].offset == len(files.data) - len(added)
    assert planned.write.action == "append" and planned.write.lines == planned.lines
    assert planned.id == fid and planned.label.startswith("UPDATE of ")

    undo = inverse(demo, planned)
    apply_fact_plan(demo, undo)
    assert records(files.step()) == [before]  # the previous record again
    assert demo.facts[fid].content == before["content"] and demo.facts[fid].type == before["type"]
    assert undo.label.startswith("undo UPDATE")

    redo = inverse(demo, undo)
    assert redo.label.startswith("redo UPDATE")
    apply_fact_plan(demo, redo)
    assert files.step() == planned.payload
    assert demo.facts[fid].content == "Tiles above zoom 19 are cached"
    assert [ln.record for ln in demo.history[fid]][-4:] == [
        before,
        records(planned.payload)[0],
        before,
        records(planned.payload)[0],
    ][-4:]
    same_as_reload(demo)


def test_add_supersede_delete_restore_and_their_undos(small):
    files = Appends(small.path)
    add, _ = run(small, FactOp.add("config", "Port is 8080", "dev server"))
    assert add.id == "new0" and add.new_ids == ("new0",)
    assert records(files.step()) == [
        {"id": "new0", "type": "config", "content": "Port is 8080", "context": "dev server",
         "timestamp": 5000}]  # fmt: skip
    apply_fact_plan(small, inverse(small, add))
    assert records(files.step()) == [
        {"id": "new0", "type": "config", "content": "Port is 8080", "context": "dev server",
         "timestamp": 5000, "_deleted": True}]  # fmt: skip
    assert small.facts["new0"].status == "deleted"

    sup, _ = run(small, FactOp.supersede("f3", "fact 3, corrected"))
    new_id = sup.id
    lines = records(files.step())
    assert lines[0] == {"id": new_id, "type": "decision", "content": "fact 3, corrected",
                        "context": "ctx 3", "timestamp": lines[0]["timestamp"]}  # fmt: skip
    assert lines[1] == {**fact(3, context="ctx 3", sessionKey="agent:main"), "supersededBy": new_id}
    assert small.chain("f3") == ["f3", new_id]
    assert small.chain_around(new_id) == (["f3"], [])
    assert small.chain_around("f3") == ([], [new_id])
    undo = inverse(small, sup)
    apply_fact_plan(small, undo)
    lines = records(files.step())
    # the old record without supersededBy, then a _deleted line for the new fact
    assert lines == [fact(3, context="ctx 3", sessionKey="agent:main"),
                     {**records(sup.payload)[0], "_deleted": True}]  # fmt: skip
    assert small.facts["f3"].status == "active" and small.facts[new_id].status == "deleted"
    apply_fact_plan(small, inverse(small, undo))  # redo
    assert files.step() == sup.payload
    assert small.facts["f3"].superseded_by == new_id and small.facts[new_id].status == "active"

    dele, _ = run(small, FactOp.delete("f1"))
    assert records(files.step()) == [{**fact(1), "_deleted": True}]
    apply_fact_plan(small, inverse(small, dele))
    assert records(files.step()) == [fact(1)]  # a restore
    assert small.facts["f1"].status == "active"

    rest, _ = run(small, FactOp.restore("f3"))  # a superseded fact active again
    assert records(files.step()) == [fact(3, context="ctx 3", sessionKey="agent:main")]
    assert small.facts["f3"].status == "active"
    apply_fact_plan(small, inverse(small, rest))
    assert records(files.step())[0]["supersededBy"] == new_id
    same_as_reload(small)


def test_bulk_is_one_write_and_one_undo(demo):
    files = Appends(demo.path)
    active = [f.id for f in demo.facts.values() if f.status == "active"][:4]
    planned, done = run(demo, [FactOp.delete(i) for i in active])
    added = files.step()
    assert len(done.lines) == 4 and added == planned.payload
    assert planned.label == "DELETE of 4 facts" and set(planned.ids) == set(active)
    assert all(demo.facts[i].status == "deleted" for i in active)
    apply_fact_plan(demo, inverse(demo, planned))
    assert len(records(files.step())) == 4
    assert all(demo.facts[i].status == "active" for i in active)
    same_as_reload(demo)


def test_redaction_of_typed_and_copied_text(small, tmp_path):
    files = Appends(small.path)
    planned, _ = run(small, FactOp.edit("f1", content=f"the key is OPENAI_API_KEY={KEY}"))
    assert KEY not in "".join(planned.lines)
    assert KEY.encode() not in files.step()
    # A secret the agent left in a line is not copied by an edit of the type alone.
    with open(small.path, "ab") as fh:
        fh.write(orjson.dumps(fact(2, content=f"call with Bearer {KEY}")) + b"\n")
    files.data = Path(small.path).read_bytes()
    catch_up(small)  # what the view does before it plans
    _, done = run(small, FactOp.edit("f2", type="issue"))
    added = files.step()
    assert KEY.encode() not in added and b"Bearer [REDACTED]" in added
    assert done.lines[0].record["type"] == "issue"
    run(small, FactOp.add("config", f"api_key: {KEY}", context=f"token={KEY}"))
    assert KEY.encode() not in files.step()


def test_agent_lines_meanwhile_are_read_first(small):
    files = Appends(small.path)
    agent = fact(9, content="the agent wrote this meanwhile")
    with open(small.path, "ab") as fh:
        fh.write(orjson.dumps(agent) + b"\n")
    _, done = run(small, FactOp.edit("f1", content="edited by memlens"))
    files.step()
    assert small.facts["f9"].content == "the agent wrote this meanwhile"
    assert done.lines[0].line == 5
    same_as_reload(small)
    # Without the catch-up of apply, a direct KnowledgeLog write also keeps the log whole.
    with open(small.path, "ab") as fh:
        fh.write(orjson.dumps(fact(10)) + b"\n")
    small.add("task_state", "next: ship it")
    files.step()
    same_as_reload(small)


def test_partial_last_line_of_the_agent(small):
    with open(small.path, "ab") as fh:
        fh.write(b'{"id":"f7","type":"issue","content":"half')
    files = Appends(small.path)
    _, done = run(small, FactOp.delete("f2"))
    added = files.step()
    assert added.startswith(b"\n")  # our line starts on a line of its own
    assert done.lines[0].line == 5
    fresh = load_knowledge(small.path)
    assert fresh.facts["f2"].status == "deleted"
    assert any("line 4" in str(p) or p.line == 4 for p in fresh.problems)


def test_stale_plans_write_nothing(small):
    planned = plan_fact_ops(small, FactOp.edit("f1", content="mine"))
    with open(small.path, "ab") as fh:
        fh.write(orjson.dumps(fact(1, content="the agent's")) + b"\n")
    files = Appends(small.path)
    with pytest.raises(StaleError, match="f1 changed since"):
        apply_fact_plan(small, planned)
    files.unchanged()
    # An undo that would overwrite a later change by the agent is refused too.
    done_plan, _ = run(small, FactOp.edit("f2", content="mine"))
    files = Appends(small.path)
    with open(small.path, "ab") as fh:
        fh.write(orjson.dumps(fact(2, content="the agent again")) + b"\n")
    catch_up(small)
    with pytest.raises(StaleError, match="was changed after this edit"):
        inverse(small, done_plan)


@pytest.mark.parametrize(
    ("op", "message"),
    [
        (FactOp.edit("nope", content="x"), "no fact with id 'nope'"),
        (FactOp.add("opinion", "x"), "unknown fact type 'opinion'"),
        (FactOp("add", None, None, "x"), "needs a type"),
        (FactOp.add("config", "   "), "needs content"),
        (FactOp.edit("f1", content="fact 1"), "nothing to change"),
        (FactOp.edit("f1", content=""), "needs content"),
        (FactOp.restore("f1"), "is active: nothing to restore"),
        (FactOp.supersede("f1", "fact 2"), "already says this"),
        (FactOp.add("decision", "FACT 2 "), "already says this"),
    ],
)
def test_bad_operations_are_clear_errors(small, op, message):
    files = Appends(small.path)
    with pytest.raises(FactOpError, match=message):
        plan_fact_ops(small, op)
    files.unchanged()


def test_deleted_facts_must_be_restored_first(small):
    run(small, FactOp.delete("f1"))
    files = Appends(small.path)
    with pytest.raises(FactOpError, match="already deleted"):
        plan_fact_ops(small, FactOp.delete("f1"))
    with pytest.raises(FactOpError, match="restore it before you update it"):
        plan_fact_ops(small, FactOp.edit("f1", content="x"))
    with pytest.raises(FactOpError, match="restore it before you supersede it"):
        plan_fact_ops(small, FactOp.supersede("f1", "x"))
    files.unchanged()


def test_resolve_prefixes(demo):
    fid = next(iter(demo.facts))
    assert demo.resolve(fid[:8]) == fid
    with pytest.raises(KeyError, match="no fact with id"):
        demo.resolve("zz")
    firsts = [i[0] for i in demo.facts]
    shared = next(c for c in firsts if firsts.count(c) > 1)
    with pytest.raises(KeyError, match="facts have ids starting with"):
        demo.resolve(shared)
