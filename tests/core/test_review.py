"""The review queue core: proposals from the real updater, only accepted ones appended."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING

import orjson
import pytest

from core.compaction.extract import extract_knowledge
from core.demo.build import write_demo
from core.knowledge.review import (
    KnowledgeFileChanged,
    ReviewItem,
    apply_review,
    catch_up,
    counts,
    plan_review,
    preview_review,
    review_items,
)
from core.recall.updater import Candidate, propose
from core.store.knowledge import load_knowledge
from core.transcript.loader import load_transcript

if TYPE_CHECKING:
    from pathlib import Path

    from core.store.knowledge import KnowledgeLog

NOW = 1_760_000_000_000
AT = 1_760_000_123_456
SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


@dataclass
class Queue:
    path: Path
    original: bytes
    log: KnowledgeLog
    items: list[ReviewItem]

    def by_op(self, op):
        return [i for i in self.items if i.op == op and i.depends_on is None]

    def first(self, op):
        return self.by_op(op)[0]


@pytest.fixture(scope="session")
def demo_knowledge(tmp_path_factory):
    summary = write_demo(tmp_path_factory.mktemp("review") / "home", now_ms=NOW, segments=300)
    return summary.knowledge_file


def crafted(log):
    """Candidates that hit UPDATE, SUPERSEDE and NONE against the demo facts."""
    active = log.by_status("active")
    decisions = [f for f in active if f.type == "decision"]
    refine, replace_ = decisions[0], decisions[1]
    dup = next(f for f in active if f.type == "config")
    old_words = list(dict.fromkeys(replace_.content.lower().split()))
    # Half the old words and one new one: similarity in (0.2, 0.5], not a refinement.
    kept = old_words[: len(old_words) // 2]
    return [
        Candidate("decision", refine.content + ", as agreed in the design review on Monday"),
        Candidate("decision", " ".join([*kept, "instead"])),
        Candidate("config", dup.content.upper()),
    ]


def build_queue(tmp_path, fixtures_dir, demo_knowledge) -> Queue:
    """A copy of the demo log and review items for the fixture extraction + crafted facts."""
    path = tmp_path / "knowledge.jsonl"
    shutil.copyfile(demo_knowledge, path)
    log = load_knowledge(path)
    session = load_transcript(fixtures_dir / "before-compaction.jsonl")
    messages = [e.message for e in session.messages()]
    extracted = extract_knowledge(messages, log)
    assert extracted.skipped is None and extracted.operations
    items = review_items(extracted.operations, log, source="extraction (offline)")
    ops = propose(log, crafted(log))
    items += review_items(ops, log, source="updater")
    return Queue(path, path.read_bytes(), log, items)


@pytest.fixture
def queue(tmp_path, fixtures_dir, demo_knowledge):
    return build_queue(tmp_path, fixtures_dir, demo_knowledge)


def decide(items, accept=(), reject=(), edits=None):
    edits = edits or {}
    out = []
    for it in items:
        if it.key in edits:
            out.append(it.edited(*edits[it.key]))
        elif it.key in accept:
            out.append(it.accepted())
        elif it.key in reject:
            out.append(it.rejected())
        else:
            out.append(it)
    return out


def appended(q: Queue) -> list[dict]:
    data = q.path.read_bytes()
    assert data.startswith(q.original), "the existing bytes were rewritten"
    return [orjson.loads(line) for line in data[len(q.original) :].splitlines()]


def test_proposals_show_every_kind_with_compared_facts(queue):
    kinds = {i.op for i in queue.items}
    assert {"ADD", "UPDATE", "SUPERSEDE", "NONE"} <= kinds
    for op in ("UPDATE", "SUPERSEDE", "NONE"):
        item = queue.first(op)
        target = item.compared[0]
        assert target.is_target and target.fact is item.target
        assert target.similarity == item.similarity and item.reason
    sup = queue.first("SUPERSEDE")
    assert 0.2 < sup.similarity <= 0.5
    # Other close same-type facts are listed after the target, best first.
    rest = [c.similarity for c in sup.compared[1:]]
    assert rest == sorted(rest, reverse=True)
    assert all(c.type == sup.candidate.type for c in sup.compared)
    # An ADD lists what it was compared with: its best similarity is the first one's.
    for add in queue.by_op("ADD"):
        if add.similarity:
            assert add.compared[0].similarity == pytest.approx(add.similarity)
            assert not add.compared[0].is_target
        else:
            assert add.compared == ()
    assert any(c.proposal is not None for a in queue.by_op("ADD") for c in a.compared)
    # A proposal acting on an earlier proposal's pending fact names it.
    dep = next(i for i in queue.items if i.depends_on)
    assert dep.compared[0].proposal is not None and dep.compared[0].fact is None
    assert all(i.state == "pending" for i in queue.items)
    assert counts(queue.items)["pending"] == len(queue.items)
    assert len({i.key for i in queue.items}) == len(queue.items)


def test_nothing_accepted_writes_nothing(queue):
    assert plan_review(queue.items, queue.log, at=AT).writes == ()
    assert apply_review(queue.items, queue.log, at=AT) == []
    rejected = [i.rejected() for i in queue.items]
    assert apply_review(rejected, queue.log, at=AT) == []
    assert queue.path.read_bytes() == queue.original


def test_only_accepted_are_appended_exactly_as_planned(queue):
    add, upd, sup, none = (queue.first(op) for op in ("ADD", "UPDATE", "SUPERSEDE", "NONE"))
    others = [i.key for i in queue.items if i.key not in {add.key, upd.key, sup.key, none.key}]
    items = decide(queue.items, accept={add.key, upd.key, sup.key, none.key}, reject=others[:3])
    writes = plan_review(items, queue.log, at=AT).writes
    assert queue.path.read_bytes() == queue.original  # planning writes nothing
    [w] = writes
    assert w.path == str(queue.path) and w.action == "append"
    assert "1 ADD" in w.summary and "1 UPDATE" in w.summary and "1 SUPERSEDE" in w.summary

    results = apply_review(items, queue.log, at=AT)
    assert [r.outcome for r in results] == ["written"] * 3  # NONE: shown, never written
    tail = queue.path.read_bytes()[len(queue.original) :]
    assert tail == b"".join(line.encode() + b"\n" for line in w.lines)  # byte for byte
    lines = appended(queue)
    assert len(lines) == 4  # ADD 1, UPDATE 1, SUPERSEDE 2
    assert lines[0] == {
        "id": add.new_id,
        "type": add.candidate.type,
        "content": add.candidate.content,
        **({"context": add.candidate.context} if add.candidate.context else {}),
        "timestamp": AT,
    }
    assert lines[1]["id"] == upd.target.id and lines[1]["content"] == upd.candidate.content
    assert lines[2]["id"] == sup.new_id and lines[3]["id"] == sup.target.id
    assert lines[3]["supersededBy"] == sup.new_id
    # Positions name the line and byte offset of each appended line.
    offsets = [p[1] for r in results for p in r.positions]
    assert offsets[0] == len(queue.original)
    # The log, reloaded from disk, agrees; nothing rejected or pending is there.
    again = load_knowledge(queue.path)
    assert again.facts[add.new_id].status == "active"
    assert again.facts[sup.target.id].status == "superseded"
    written = {line["content"] for line in lines}
    for it in items:
        if not it.will_write:
            assert it.candidate.content not in written or it.op == "NONE"


def test_edit_changes_what_is_written_and_is_redacted(queue):
    add = queue.first("ADD")
    sup = queue.first("SUPERSEDE")
    text = f"Deploy key for staging is {SECRET} (rotate monthly)"
    items = decide(
        queue.items,
        edits={add.key: (text, "config"), sup.key: ("Eviction is a CLOCK sweep", "architecture")},
    )
    edited = next(i for i in items if i.key == add.key)
    assert edited.state == "edited" and SECRET not in edited.candidate.content
    [w] = plan_review(items, queue.log, at=AT).writes
    assert all(SECRET not in line for line in w.lines)
    apply_review(items, queue.log, at=AT)
    lines = appended(queue)
    assert lines[0]["type"] == "config" and "rotate monthly" in lines[0]["content"]
    assert SECRET not in queue.path.read_text()
    assert lines[1]["content"] == "Eviction is a CLOCK sweep"
    assert lines[1]["type"] == "architecture"
    assert lines[2]["supersededBy"] == lines[1]["id"]


def test_edit_states_and_validation(queue):
    add = queue.first("ADD")
    none = queue.first("NONE")
    same = add.edited(add.candidate.content)
    assert same.state == "accepted" and same.edit is None
    ed = add.edited("something new", "issue")
    assert ed.state == "edited" and ed.candidate == Candidate(
        "issue", "something new", add.candidate.context
    )
    assert ed.rejected().state == "rejected" and ed.rejected().edit == ed.edit
    assert ed.rejected().accepted().state == "edited"
    assert ed.reset().state == "pending" and ed.reset().edit is None
    with pytest.raises(ValueError, match="nothing to edit"):
        none.edited("x")
    with pytest.raises(ValueError, match="fact type"):
        add.edited("x", "opinion")
    with pytest.raises(ValueError, match="content"):
        add.edited("   ")
    assert none.accepted().is_accepted and not none.accepted().will_write


def test_target_deleted_meanwhile_is_reported_not_written(queue):
    upd, sup, add = queue.first("UPDATE"), queue.first("SUPERSEDE"), queue.first("ADD")
    items = decide(queue.items, accept={upd.key, sup.key, add.key})
    # Planned while the targets were live: three writes.
    assert len([r for r in preview_review(items, queue.log, at=AT) if r.outcome == "written"]) == 3
    # The running agent (another reader/writer of the same file) deletes one, supersedes the other.
    agent = load_knowledge(queue.path)
    agent.delete(upd.target.id)
    agent.supersede(sup.target.id, "Eviction policy moved to a separate crate")
    before = queue.path.read_bytes()
    results = apply_review(items, queue.log, at=AT)
    by_key = {r.item.key: r for r in results}
    assert by_key[upd.key].outcome == "stale" and "deleted" in by_key[upd.key].message
    assert by_key[sup.key].outcome == "stale" and "superseded" in by_key[sup.key].message
    assert by_key[add.key].outcome == "written"
    after = queue.path.read_bytes()
    assert after.startswith(before)
    new = [orjson.loads(x) for x in after[len(before) :].splitlines()]
    assert [x["id"] for x in new] == [add.new_id]
    # The log caught up with the agent's lines before writing.
    assert queue.log.facts[upd.target.id].status == "deleted"
    assert queue.log.lines == len(after.splitlines())


def test_target_edited_meanwhile_and_content_now_present(queue):
    upd, add = queue.first("UPDATE"), queue.first("ADD")
    items = decide(queue.items, accept={upd.key, add.key})
    agent = load_knowledge(queue.path)
    agent.update(upd.target.id, content="Tiles are never cached at all")
    agent.add(add.candidate.type, add.candidate.content)
    results = apply_review(items, queue.log, at=AT)
    assert [r.outcome for r in results] == ["stale", "stale"]
    assert "edited meanwhile" in results[0].message or "edited meanwhile" in results[1].message
    assert any("already holds" in r.message for r in results)


def test_dependent_proposal_needs_its_parent(queue):
    dep = next(i for i in queue.items if i.depends_on)
    parent = next(i for i in queue.items if i.key == dep.depends_on)
    items = decide(queue.items, accept={dep.key}, reject={parent.key})
    [r] = apply_review(items, queue.log, at=AT)
    assert r.outcome == "blocked" and "rejected" in r.message
    assert queue.path.read_bytes() == queue.original
    items = decide(queue.items, accept={dep.key, parent.key})
    results = apply_review(items, queue.log, at=AT)
    assert [r.outcome for r in results] == ["written", "written"]
    lines = appended(queue)
    # The dependent acts on the fact its parent wrote.
    target = parent.new_id if parent.op in ("ADD", "SUPERSEDE") else parent.target.id
    assert lines[-1]["id"] == target and lines[-1]["content"] == dep.candidate.content


def test_plan_reports_what_will_not_be_written(queue):
    upd, add = queue.first("UPDATE"), queue.first("ADD")
    items = decide(queue.items, accept={upd.key, add.key})
    load_knowledge(queue.path).delete(upd.target.id)
    catch_up(queue.log)
    rp = plan_review(items, queue.log, at=AT)
    assert [r.item.key for r in rp.skipped] == [upd.key]
    [w] = rp.writes
    assert "1 accepted not written" in w.summary and "deleted" in w.summary
    assert len(w.lines) == 1


def test_catch_up_leaves_a_partial_line_and_refuses_a_shrunk_file(queue):
    agent = load_knowledge(queue.path)
    agent.add("issue", "Agent wrote this while memlens was open")
    with open(queue.path, "ab") as fh:
        fh.write(b'{"id":"half","type":"issue","content":"not fin')
    assert catch_up(queue.log) == 1
    assert "half" not in queue.log.facts
    with open(queue.path, "ab") as fh:
        fh.write(b'ished"}\n')
    assert catch_up(queue.log) == 1
    assert queue.log.facts["half"].content == "not finished"
    assert catch_up(queue.log) == 0
    items = decide(queue.items, accept={queue.first("ADD").key})
    queue.path.write_bytes(queue.original[:100])
    size = queue.path.stat().st_size
    with pytest.raises(KnowledgeFileChanged, match="shorter"):
        apply_review(items, queue.log, at=AT)
    assert queue.path.stat().st_size == size


def test_failed_append_is_reported(queue, tmp_path):
    add = queue.first("ADD")
    items = decide(queue.items, accept={add.key})
    queue.log.path = str(tmp_path / "missing-dir" / "knowledge.jsonl")
    queue.log.size = queue.log.lines = 0
    [r] = apply_review(items, queue.log, at=AT)
    assert r.outcome == "failed" and "missing-dir" in r.message


def test_two_batches_acting_on_one_fact_write_once(queue):
    upd = queue.first("UPDATE")
    again = review_items(propose(queue.log, [upd.operation.candidate]), queue.log, source="again")
    assert again[0].op == "UPDATE" and again[0].target.id == upd.target.id
    assert again[0].key != upd.key
    items = decide([*queue.items, *again], accept={upd.key, again[0].key})
    results = apply_review(items, queue.log, at=AT)
    assert [r.outcome for r in results] == ["written", "stale"]
    assert "already changed by proposal " + upd.label in results[1].message
    assert len(appended(queue)) == 1
