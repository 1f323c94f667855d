"""The loss audit (issue 20 #1, #5, #6): statuses, sources, the JSON, every compaction we have.

A built session where each status is known by construction; the real pi fixtures
(``shared/fixtures``), the demo home and the OpenClaudeCode fixture audited at
every compaction, by the agent's summary and by memlens's offline summary of the
same cut; ``memlens audit`` in JSON and text.
"""

from __future__ import annotations

import json

import pytest

from core.cli.main import run_cli
from core.compaction.audit import (
    AuditError,
    audit_compaction,
    audit_dry_run,
    pick_compaction,
)
from core.compaction.audit_extract import extract
from core.dataset.load import load_dataset
from core.transcript import load_transcript
from core.transcript.normalize import normalize_message
from core.transcript.replay import compactions

from .build import STAMP, assistant, lines, run_json, user, write_file

NOW = 1_795_305_600_000


def _e(i, parent, msg):
    return {"type": "message", "id": f"e{i:07d}", "parentId": parent, "timestamp": STAMP,
            "message": msg}  # fmt: skip


def _call(text, name, call_id, args):
    return {
        "role": "assistant",
        "content": [
            *([{"type": "text", "text": text}] if text else []),
            {"type": "toolCall", "id": call_id, "name": name, "arguments": args},
        ],
        "stopReason": "toolUse",
    }


def _result(call_id, name, text, *, error=False):
    return {"role": "toolResult", "toolCallId": call_id, "toolName": name,
            "content": [{"type": "text", "text": text}], "isError": error}  # fmt: skip


SECRET = "sk-ant-api03-" + "x" * 40

SUMMARY = (
    "## Decisions\n- use dict.get() instead of indexing\n"
    "## Files\n- SRC/APP/LOADER.PY\n## Errors\nKeyError: 'model'\n"
)


def _session_objects():
    msgs = [
        user(
            "Please fix the crash in src/app/loader.py; the error is `KeyError: 'model'`. "
            "Remember to bump the version to v1.2.3 later."
        ),
        _call("Reading the loader first.", "read", "r1", {"path": "src/app/loader.py"}),
        _result("r1", "read", "def load(path):\n    return parse(path)['model']\n"),
        _call(
            "Let's use `dict.get()` instead of indexing. TODO: add a test for the empty config.",
            "edit",
            "w1",
            {"path": "src/app/loader.py", "oldText": "['model']", "newText": ".get('model')"},
        ),
        _result("w1", "edit", "Edited src/app/loader.py"),
        _call("", "bash", "b1", {"command": "pytest tests/test_loader.py -q"}),
        _result(
            "b1",
            "bash",
            "FAILED tests/test_loader.py::test_empty\nAssertionError: expected 3 items",
            error=True,
        ),
        user(f"Also check https://example.com/docs/config?key={SECRET} before you go on."),
        assistant("The docs say the loader must accept an empty file; 40 ms budget."),
    ]
    objs = []
    parent = None
    for i, m in enumerate(msgs, 1):
        objs.append(_e(i, parent, m))
        parent = objs[-1]["id"]
    comp = {"type": "compaction", "id": "c0000001", "parentId": parent, "timestamp": STAMP,
            "summary": SUMMARY, "firstKeptEntryId": "e0000008", "tokensBefore": 5000}  # fmt: skip
    objs.append(comp)
    objs.append(_e(11, "c0000001", user("did the pytest tests/test_loader.py -q run pass?")))
    return objs


@pytest.fixture
def built(tmp_path):
    path = tmp_path / "s.jsonl"
    write_file(path, lines(_session_objects()))
    return path


def _by_text(audit):
    return {i.text: i for i in audit.items}


def test_each_status_on_a_built_session(built):
    audit = audit_compaction(load_transcript(built))
    items = _by_text(audit)
    assert audit.entry_id == "c0000001" and audit.summariser == "agent"
    assert audit.summarised_messages == 7 and audit.kept_messages == 2
    # exact in the summary
    assert items["KeyError: 'model'"].status == "kept"
    assert items["dict.get()"].status == "kept"
    # case (a path), and a decision the summary rephrases
    assert items["src/app/loader.py"].category == "file"
    assert items["src/app/loader.py"].detail == "modified"
    assert items["src/app/loader.py"].status == "normalised"
    assert items["src/app/loader.py"].source == ("e0000001", "e0000002", "e0000004")
    decision = items["Let's use `dict.get()` instead of indexing."]
    assert (decision.category, decision.status) == ("decision", "normalised")
    # missing from the summary, but a later message says it again
    assert items["pytest tests/test_loader.py -q"].category == "command"
    assert items["pytest tests/test_loader.py -q"].status == "missing"
    assert items["tests/test_loader.py"].status == "missing"
    # said nowhere after the cut: lost for good
    assert items["add a test for the empty config."].status == "lost"
    assert items["add a test for the empty config."].category == "todo"
    assert items["v1.2.3"].status == "lost"
    assert items["AssertionError: expected 3 items"].status == "lost"
    assert items["AssertionError: expected 3 items"].source == ("e0000007",)
    request = items["Remember to bump the version to v1.2.3 later."]
    assert (request.category, request.status) == ("request", "lost")
    # the kept messages are not audited (the URL, 40 ms)
    assert not any("example.com" in t or "40 ms" in t for t in items)


def test_scores_per_category_and_group(built):
    out = audit_compaction(load_transcript(built)).to_json()
    assert out["scores"]["file"] == {"items": 1, "kept": 0, "normalised": 1, "missing": 0,
                                     "lost": 0, "loss": 0.0, "lost_for_good": 0.0}  # fmt: skip
    todo = out["scores"]["todo"]
    assert (todo["items"], todo["lost"], todo["loss"], todo["lost_for_good"]) == (1, 1, 1.0, 1.0)
    assert set(out["groups"]) == {"identifier", "file", "decision", "todo", "request"}
    total = out["total"]
    assert total["items"] == len(out["items"])
    assert total["kept"] + total["normalised"] + total["missing"] + total["lost"] == total["items"]


def test_audit_json_shape_for_scripts(built, capsys):
    out = run_json(capsys, "audit", str(built))
    assert out["compaction"]["entry_id"] == "c0000001"
    assert out["compaction"]["number"] == 1 and out["compaction"]["summariser"] == "agent"
    assert out["items"]
    for item in out["items"]:
        assert {"text", "category", "status", "source"} <= set(item)
        assert item["status"] in ("kept", "normalised", "missing", "lost")
        assert isinstance(item["source"], list) and item["source"]
        assert all(isinstance(s, str) for s in item["source"])


def test_secrets_in_audited_messages_are_redacted(tmp_path, capsys):
    objs = _session_objects()
    # the secret is in a summarised message now: the cut moves to the last message
    objs[-2]["firstKeptEntryId"] = "e0000009"
    path = tmp_path / "s.jsonl"
    write_file(path, lines(objs))
    out = run_json(capsys, "audit", str(path))
    text = json.dumps(out)
    assert SECRET not in text
    assert any("example.com/docs/config" in i["text"] for i in out["items"])
    assert run_cli(["audit", str(path)]) == 0
    assert SECRET not in capsys.readouterr().out


def test_text_output_names_the_lost_and_the_missing(built, capsys):
    assert run_cli(["audit", str(built)]) == 0
    out = capsys.readouterr().out
    assert "compaction c0000001" in out
    assert "lost for good (" in out and "add a test for the empty config." in out
    assert "missing from the summary (" in out and "pytest tests/test_loader.py -q" in out
    assert "todo" in out and "100%" in out


def test_pick_compaction_by_number_id_index_and_later_entry(fixtures_dir):
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    first, second = (c.entry.id for c in compactions(s))
    assert pick_compaction(s)[1].entry.id == second  # the last on the current branch
    assert pick_compaction(s, "1")[1].entry.id == first
    assert pick_compaction(s, first)[0] == 1
    assert pick_compaction(s, "#628")[1].entry.id == second
    assert pick_compaction(s, "#500")[1].entry.id == first  # an entry between the two
    with pytest.raises(AuditError, match="no number 3"):
        pick_compaction(s, "3")
    with pytest.raises(AuditError, match="no compaction at or before"):
        pick_compaction(s, "#10")
    with pytest.raises(AuditError, match="no entry"):
        pick_compaction(s, "nope")


def test_no_compaction_is_a_clear_error(fixtures_dir, capsys):
    path = str(fixtures_dir / "large-session.jsonl")
    assert run_cli(["audit", path]) == 1
    err = capsys.readouterr().err
    assert "has no compaction" in err and "--dry-run-summary" in err


def test_dry_run_summary_of_the_next_cut_is_compacts_cut(fixtures_dir, capsys):
    path = str(fixtures_dir / "large-session.jsonl")
    plan = run_json(capsys, "plan", path)
    out = run_json(capsys, "audit", path, "--dry-run-summary")
    assert out["compaction"]["summariser"] == "memlens offline"
    assert out["compaction"]["entry_id"] is None and out["compaction"]["dry_run"] is True
    assert out["compaction"]["first_kept_entry_id"] == plan["first_kept_entry_id"]
    assert (
        out["compaction"]["summarised_messages"]
        == plan["messages_to_summarize"] + plan["turn_prefix_messages"]
    )
    assert out["items"] and out["scores"]["file"]["items"] > 0


@pytest.fixture(scope="module")
def fixture_audits(fixtures_dir):
    """Every compaction of the real pi fixtures: (agent's audit, memlens's on the same cut)."""
    out = []
    for name in ("before-compaction.jsonl", "large-session.jsonl"):
        s = load_transcript(fixtures_dir / name)
        for n in range(1, len(compactions(s)) + 1):
            out.append((audit_compaction(s, str(n)), audit_dry_run(s, at=str(n), same_cut=True)))
    return out


def test_every_compaction_of_the_real_pi_fixtures(fixture_audits):
    assert [a.entry_id for a, _ in fixture_audits] == ["2b9a9701", "dc2335c4"]
    for agent, ours in fixture_audits:
        assert agent.items and not agent.notes
        groups = agent.group_scores()
        assert groups["identifier"].items > 100 and groups["file"].items >= 8
        # the same cut: the same messages, the same items, two summaries
        assert ours.notes == [] and ours.first_kept_entry_id == agent.first_kept_entry_id
        assert ours.summarised_messages == agent.summarised_messages
        assert {(i.category, i.text) for i in ours.items} == {
            (i.category, i.text) for i in agent.items
        }
        assert ours.summary != agent.summary and ours.summary.startswith("_Offline summary")
        # an item lost for good is lost whoever summarised, unless the summary has it
        agent_lost = {i.text for i in agent.lost()}
        ours_by_text = {i.text: i.status for i in ours.items}
        assert all(ours_by_text[t] in ("lost", "kept", "normalised") for t in agent_lost)


def test_the_agents_summary_of_the_first_fixture_compaction(fixture_audits):
    agent, _ours = fixture_audits[0]
    items = _by_text(agent)
    p = "/Users/badlogic/workspaces/pi-mono/packages/coding-agent/"
    assert items[p + "src/core/agent-session.ts"].status == "kept"
    assert items[p + "src/core/agent-session.ts"].detail == "modified"
    assert items[p + "src/messages.ts"].status == "missing"
    assert items["885 lines"].status == "kept"
    assert items["AgentSession"].status == "kept" and len(items["AgentSession"].source) > 5
    err = "error TS2339: Property 'tokensAfter' does not exist on type 'CompactionEntry'."
    assert items[err].status == "lost"
    assert agent.scores()["file"].kept == 9


def test_every_compaction_of_the_demo_home_and_openclaudecode(tmp_path):
    from tests.core.test_audit_labels import LABELS
    from tests.demo_copy import demo_copy

    home = demo_copy(tmp_path / "home", now_ms=NOW, segments=150)
    audited = 0
    for root in (home, LABELS.parent / "openclaudecode" / "home"):
        for s in load_dataset(root).sessions:
            for n in range(1, len(compactions(s)) + 1):
                audit = audit_compaction(s, str(n))
                assert audit.number == n
                assert all(i.source for i in audit.items)
                audited += 1
    assert audited == 7


def test_extraction_of_tool_calls_failures_and_pending_asks():
    msgs = [
        ("u1", user("please rename the module")),
        ("a1", assistant("Starting")),
        ("u2", user("and then run the suite")),
    ]
    msgs = [(i, normalize_message(m)) for i, m in msgs]
    aborted = normalize_message({**assistant("Sta"), "stopReason": "aborted"})
    found = {f.text: f for f in extract([*msgs, ("a2", aborted)])}
    # the first ask was answered; the last one was cut short
    assert "please rename the module" not in found
    assert found["and then run the suite"].category == "request"
    bash = normalize_message(
        {
            "role": "bashExecution",
            "command": "make lint",
            "output": "> lint\nE501 line too long",
            "exitCode": 2,
        }
    )
    ticked = normalize_message(assistant("- [x] done already\n- [ ] still open item"))
    found = {f.text: f for f in extract([("b1", bash), ("a3", ticked)])}
    assert found["make lint"].category == "command"
    assert found["E501 line too long"].category == "error"
    assert found["still open item"].category == "todo"
    assert "done already" not in found
