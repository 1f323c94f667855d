"""Fact provenance: the record memlens writes, carried by edits, read back; where a fact came from."""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING

import orjson
import pytest

from core.cli.main import run_cli
from core.compaction.extract import summary_lines_keeping
from core.compaction.run import compact
from core.dataset.load import load_dataset
from core.io import jsonio
from core.knowledge.ops import FactOp, apply_fact_plan, plan_fact_ops
from core.knowledge.provenance import ProvenanceIndex
from core.knowledge.review import apply_review, review_items
from core.llm import OpenAICompatibleClient
from core.recall.updater import apply_operations
from core.store.knowledge import SOURCE_KEY, load_knowledge
from core.store.segments import make_segment
from core.transcript import load_transcript
from tests.core.build import STAMP, assistant, entry, lines, user, write_file
from tests.llm_server import Reply

if TYPE_CHECKING:
    from pathlib import Path

FILLER = " check the build and run the tests" * 118
CONTENT = "Use PostgreSQL 16 for the billing service"
COMPACTION = "0000000c"
DECISION = "We decided to use PostgreSQL 16 for the billing service."


def _session_file(path):
    out, parent = [], None
    for i in range(1, 13):
        text = f"step {i}:" + (f" {DECISION}" if i == 3 else "") + FILLER
        out.append(entry(i, parent, user(text) if i % 2 else assistant(text, 1000 * i)))
        parent = f"{i:08x}"
    write_file(path, lines(out))
    old = time.time() - 60
    os.utime(path, (old, old))
    return path


def _answer(facts):
    body = {"facts": facts}
    return Reply(
        200,
        {
            "model": "m",
            "choices": [{"message": {"content": json.dumps(body)}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5},
        },
    )


@pytest.fixture
def extraction(server, tmp_path):
    """A dry run whose knowledge extraction asked a scripted model (two facts)."""
    session = load_transcript(_session_file(tmp_path / "s.jsonl"))
    store = tmp_path / "store"
    store.mkdir()
    # the decision's message is archived already, under another id: its id is the one named
    third = session.by_id["00000003"].message
    archived = make_segment(session.id, "user", third.text().strip(), new_id=lambda: "seg-old")
    (store / "segments.jsonl").write_bytes(jsonio.dumps_line(archived.to_json()))
    (store / "knowledge.jsonl").write_bytes(b"")
    server.add(
        _answer(
            [
                {"type": "decision", "content": "Use PostgreSQL 16 for the billing service"},
                {"type": "issue", "content": "Deploys on Fridays are forbidden"},
            ]
        )
    )
    client = OpenAICompatibleClient(f"{server.url}/v1", "m", timeout=5, sleep=lambda _s: None)
    run = compact(session, keep_recent_tokens=2000, store_dir=store, extract_client=client)
    return session, store, run, client.name


def test_an_extraction_run_writes_its_provenance(extraction):
    session, store, run, extractor = extraction
    log = load_knowledge(store / "knowledge.jsonl")
    items = [i.accepted() for i in review_items(run.facts, log, provenance=run.fact_sources)]
    results = apply_review(items, log)
    assert [r.outcome for r in results] == ["written", "written"]
    facts = {f.content: f for f in load_knowledge(store / "knowledge.jsonl").facts.values()}
    narrowed = facts["Use PostgreSQL 16 for the billing service"].source
    assert narrowed is not None and run.entry is not None
    assert narrowed["by"] == "extraction" and narrowed["run"] == run.run_id and run.run_id
    assert narrowed["sessionId"] == session.id and narrowed["compaction"] == run.entry["id"]
    assert narrowed["entryIds"] == ["00000003"] and narrowed["narrowed"] is True
    assert narrowed["segmentIds"] == ["seg-old"]
    assert narrowed["extractor"] == extractor
    # no supporting message: every summarised one is named
    wide = facts["Deploys on Fridays are forbidden"].source
    assert wide is not None and wide["narrowed"] is False
    summarised = [i.entry.id for i in (*run.plan.history_dropped, *run.plan.summarize)]
    assert wide["entryIds"] == summarised and len(summarised) >= 5
    raw = (store / "knowledge.jsonl").read_text()
    assert "check the build" not in raw  # ids only, never message text


def test_the_updater_writes_it_inside_sourced(extraction):
    _, store, run, _ = extraction
    log = load_knowledge(store / "knowledge.jsonl")
    with log.sourced(run.fact_sources):
        apply_operations(log, [o for o in run.facts if o.op == "ADD"])
    again = load_knowledge(store / "knowledge.jsonl")
    assert all(f.source and f.source["run"] == run.run_id for f in again.facts.values())
    assert log.sources == {}  # only inside the block


def _log_with_sourced_fact(tmp_path):
    path = tmp_path / "knowledge.jsonl"
    source = {"by": "extraction", "run": "r1", "sessionId": "s1", "entryIds": ["e1"]}
    line = {"id": "f1", "type": "decision", "content": "Use tabs", "timestamp": 1000,
            SOURCE_KEY: source, "sessionKey": "agent:main"}  # fmt: skip
    agent = {"id": "f2", "type": "config", "content": "Port is 8080", "timestamp": 1000}
    path.write_bytes(jsonio.dumps_line(line) + jsonio.dumps_line(agent))
    return path, source


def test_the_reader_keeps_the_key_and_agent_lines_still_read(tmp_path):
    path, source = _log_with_sourced_fact(tmp_path)
    log = load_knowledge(path)
    assert log.problems == []
    assert log.facts["f1"].source == source and log.facts["f2"].source is None
    assert log.last_record("f1")[SOURCE_KEY] == source  # round-trips with the agent's keys
    assert log.last_record("f1")["sessionKey"] == "agent:main"
    with path.open("ab") as fh:
        fh.write(b'{"id":"f3","type":"issue","content":"odd","memlensSource":"x"}\n')
    odd = load_knowledge(path)
    assert "f3" in odd.facts and odd.facts["f3"].source is None
    assert [(p.line, p.severity) for p in odd.problems] == [(3, "info")]


def test_edit_and_supersede_carry_the_provenance(tmp_path):
    path, source = _log_with_sourced_fact(tmp_path)
    log = load_knowledge(path)
    apply_fact_plan(log, plan_fact_ops(log, FactOp.edit("f1", content="Use tabs, width 4")))
    assert load_knowledge(path).facts["f1"].source == source
    done = apply_fact_plan(log, plan_fact_ops(log, FactOp.supersede("f1", "Use spaces")))
    new = load_knowledge(path).facts[done.plan.id]
    assert new.source == {**source, "by": "user", "supersedes": "f1"}
    # an agent's fact superseded by the user: the line stays the agent's shape
    plain = apply_fact_plan(log, plan_fact_ops(log, FactOp.supersede("f2", "Port is 9090")))
    assert SOURCE_KEY not in load_knowledge(path).last_record(plain.plan.id)


SUMMARY = """## Goal
Ship the billing service.
## Decisions
- Use PostgreSQL 16 for the billing service
- Tests run with pytest -n 0
## Next
- deploy on Monday"""


def small_home(dest: Path) -> Path:
    """An OpenClaw-style home: one session with a compaction, facts, one archived segment.

    Message 3 says the agent's fact (no provenance), message 5 the fact memlens
    recorded; the compaction after message 11 summarised messages 1 to 9 and its
    summary keeps both facts on lines 4 and 5.
    """
    says = {3: f"We decided to use {CONTENT[4:]} after the load test.",
            5: "From now on the tests run with pytest -n 0 in CI."}  # fmt: skip
    objs, parent = [], None
    for i in range(1, 12):
        text = f"step {i}: " + says.get(i, "check the build and run the tests")
        objs.append(entry(i, parent, user(text) if i % 2 else assistant(text, 1000 * i)))
        parent = f"{i:08x}"
    comp = {"type": "compaction", "id": COMPACTION, "parentId": parent, "timestamp": STAMP,
            "summary": SUMMARY, "firstKeptEntryId": "0000000a", "tokensBefore": 5000}  # fmt: skip
    objs += [comp, entry(13, COMPACTION, user("step 13: carry on"))]
    sessions = dest / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    write_file(sessions / "sess-1.jsonl", lines(objs))
    store = dest / "memory" / "context"
    store.mkdir(parents=True)
    seg = make_segment("sess-1", "user", f"step 3: {says[3]}", new_id=lambda: "seg-3")
    (store / "segments.jsonl").write_bytes(jsonio.dumps_line(seg.to_json()))
    recorded = {"by": "extraction", "run": "r1", "sessionId": "sess-1",
                "compaction": COMPACTION, "entryIds": ["00000005"]}  # fmt: skip
    facts = [
        {"id": "f-agent", "type": "decision", "content": CONTENT, "timestamp": 1000},
        {"id": "f-memlens", "type": "config", "content": "Tests run with pytest -n 0",
         "timestamp": 2000, SOURCE_KEY: recorded},
        {"id": "f-other", "type": "config", "content": "Port is 8080", "timestamp": 3000},
    ]  # fmt: skip
    (store / "knowledge.jsonl").write_bytes(b"".join(jsonio.dumps_line(f) for f in facts))
    return dest


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    home = small_home(tmp_path_factory.mktemp("prov") / "home")
    data = load_dataset(home, max_segments=-1, eviction_days=0)
    assert data.knowledge is not None and data.segments is not None
    index = ProvenanceIndex(
        data.sessions, segments=data.segments.segments, keeps=summary_lines_keeping
    )
    return home, data.knowledge, index


def test_inferred_provenance_names_the_compaction_and_its_summary_line(home):
    _, log, index = home
    prov = index.of_fact(log.facts["f-agent"])
    assert prov.kind == "inferred" and prov.record is None
    first = prov.messages[0]
    assert (first.entry_id, first.recorded, first.segment_id) == ("00000003", False, "seg-3")
    assert first.score >= 0.8 and prov.segments == ("seg-3",)  # word for word
    assert first.compaction is not None and first.compaction.entry_id == COMPACTION
    lines = [(s.number, s.status) for s in first.compaction.lines]
    assert lines == [(4, "kept"), (2, "normalised")]  # "Ship the billing service."
    assert first.compaction.lines[0].text == SUMMARY.splitlines()[3]


def test_recorded_provenance_comes_from_the_record(home):
    _, log, index = home
    prov = index.of_fact(log.facts["f-memlens"])
    assert prov.kind == "recorded" and prov.record == log.facts["f-memlens"].source
    assert [(m.entry_id, m.recorded, m.score) for m in prov.messages] == [("00000005", True, 1.0)]
    link = prov.messages[0].compaction
    assert link is not None and [s.number for s in link.lines] == [5]
    assert index.of_fact(log.facts["f-other"]).kind == "none"


def test_facts_from_a_compaction_and_a_summary_line(home):
    _, log, index = home
    facts = list(log.facts.values())
    by_line = index.from_compaction(facts, "sess-1", COMPACTION, line=4)
    assert [(k.fact.id, k.line_status) for k in by_line] == [
        ("f-agent", "kept"), ("f-memlens", None)
    ]  # fmt: skip
    assert by_line[0].entries[0] == "00000003" and by_line[0].kind == "inferred"
    whole = index.from_compaction(facts, "sess-1", COMPACTION)
    assert [(k.fact.id, k.kind) for k in whole] == [
        ("f-memlens", "recorded"),
        ("f-agent", "inferred"),
    ]
    with pytest.raises(KeyError):
        index.from_compaction(facts, "sess-1", "00000003")


def test_the_cli_json(home, capsys):
    path = str(home[0])
    assert run_cli(["fact", "source", path, "f-agent", "--json"]) == 0
    out = orjson.loads(capsys.readouterr().out)
    assert set(out) == {"fact", "kind", "record", "messages", "segments", "missing"}
    assert out["fact"] == "f-agent" and out["kind"] == "inferred"
    first = out["messages"][0]
    assert set(first) == {"session", "entry", "role", "score", "recorded", "path", "line",
                          "segment", "compaction"}  # fmt: skip
    assert first["compaction"]["entry"] == COMPACTION
    kept = {"line": 4, "text": SUMMARY.splitlines()[3], "status": "kept"}
    assert first["compaction"]["lines"][0] == kept
    args = ["fact", "from", path, "--compaction", COMPACTION, "--line", "4", "--json"]
    assert run_cli(args) == 0
    listed = orjson.loads(capsys.readouterr().out)
    assert (listed["session"], listed["compaction"], listed["line"]) == ("sess-1", COMPACTION, 4)
    assert [f["fact"] for f in listed["facts"]] == ["f-agent", "f-memlens"]
    assert set(listed["facts"][0]) == {
        "fact", "type", "status", "content", "kind", "score", "entries", "line_status"
    }  # fmt: skip
    assert run_cli(["fact", "from", path, "--compaction", "nope"]) == 1
    assert "no compaction entry 'nope'" in capsys.readouterr().err


def test_fact_add_records_where_the_user_took_it_from(tmp_path, capsys):
    store = tmp_path / "context"
    store.mkdir()
    (store / "knowledge.jsonl").write_bytes(b"")
    args = ["fact", "add", str(store / "knowledge.jsonl"), "Use tabs", "--type", "decision"]
    assert run_cli([*args, "--from-session", "s1", "--from-entry", "e1", "--json"]) == 0
    done = orjson.loads(capsys.readouterr().out)
    record = done["lines"][0]["record"]
    assert record[SOURCE_KEY] == {"by": "user", "sessionId": "s1", "entryIds": ["e1"]}


def test_an_accepted_edit_holding_a_secret_keeps_its_provenance(extraction):
    """The log redacts the edit as it writes it; the record still goes with the fact."""
    _session, store, run, _extractor = extraction
    log = load_knowledge(store / "knowledge.jsonl")
    item = review_items(run.facts, log, provenance=run.fact_sources)[0]
    secret = "sk-ant-api03-" + "x" * 40
    edited = item.edited(f"Billing calls the API with key {secret}", redaction=False)
    (result,) = apply_review([edited], log)
    assert result.outcome == "written"
    (fact,) = [
        f for f in load_knowledge(store / "knowledge.jsonl").facts.values() if "key" in f.content
    ]
    assert secret not in fact.content
    assert fact.source is not None and fact.source["run"] == run.run_id and fact.source["edited"]
