"""The oracle tier: the real pi (npm, pinned) runs a session; memlens reads what it wrote.

pi's CLI runs from its package against the loopback fake LLM server
(:mod:`tests.oracle.fake_llm`), in RPC and print mode, with an isolated agent
dir whose ``models.json`` names two models of a fake OpenAI-compatible provider
with a tiny context window, so that pi's own auto-compaction fires. The session
goes through a read, an edit, a write, a bash call, a failed tool call, a user
``!`` bash run, a read of an image, an answer aborted mid-stream, an HTTP error,
a model change, an auto-compaction (the fake
server answers pi's summary request), a session name, a label, a branch with a
summary (pi's own ``SessionManager.branchWithSummary``; no CLI mode branches in
place) continued by the CLI, and an RPC ``fork`` into a second file.

Then memlens reads every file pi wrote with no problems, and for every entry
its replayed context equals pi's ``buildSessionContext`` (role, text, tool call
ids, tool result ids, error flags, and pi's ``estimateTokens`` per message);
the request pi sent after its compaction starts with the summary.
"""

from __future__ import annotations

import base64
import struct
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import pytest

from core.compaction.plan import plan_compaction
from core.transcript import context_at, load_transcript
from tests.oracle import pi_agent
from tests.oracle.fake_llm import Answer, FakeLLM, ToolCall, Usage
from tests.oracle.pi_agent import (
    BRANCH_PREFIX,
    BRANCH_SUFFIX,
    COMPACTION_PREFIX,
    COMPACTION_SUFFIX,
    expected_roles,
    llm_text,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.slow

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
SUMMARY = "## Goal\nFix the notes (fake summary)."
BRANCH_SUMMARY = "Tried a long answer on another branch; came back."


def is_summary_request(body: Any) -> bool:
    """pi's compaction (and turn-prefix) summary requests carry this system prompt."""
    return "context summarization assistant" in str(body["messages"][0]["content"])


@dataclass
class Run:
    home: pi_agent.PiHome
    llm: FakeLLM
    main: Path
    fork: Path
    after_compaction: dict[str, Any]
    """The request pi sent for the first prompt after its auto-compaction."""
    on_branch: dict[str, Any]
    """The request pi sent for the first prompt after the branch."""
    ids: dict[str, str]


def entry_ids(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]


def last_user(path: Path, text: str) -> str:
    for e in reversed(entry_ids(path)):
        m = e.get("message") or {}
        if m.get("role") == "user" and m["content"][0]["text"] == text:
            return str(e["id"])
    raise AssertionError(f"no user message {text!r} in {path}")


@pytest.fixture(scope="module")
def run(pi_package, tmp_path_factory) -> Iterator[Run]:
    root = tmp_path_factory.mktemp("pi-real")
    llm = FakeLLM().start()
    try:
        llm.when(is_summary_request, Answer(SUMMARY, usage=Usage(300, 40)))
        home = pi_agent.make_home(pi_package, root, llm.base_url)
        (home.cwd / "notes.txt").write_text("hello notes\nteh typo\n")
        (home.cwd / "dot.png").write_bytes(base64.b64decode(PNG))
        ids: dict[str, str] = {}
        # Run 1 (RPC): tools, a failure, an HTTP error, model change, auto-compaction.
        with pi_agent.Rpc(home) as rpc:
            llm.reply(tool_calls=[ToolCall("call_read1", "read", {"path": "notes.txt"})])
            llm.reply("The notes say hello.", usage=Usage(600, 5))
            rpc.prompt("read notes.txt")
            edit = {"path": "notes.txt", "edits": [{"oldText": "teh", "newText": "the"}]}
            llm.reply("Fixing it.", tool_calls=[ToolCall("call_edit1", "edit", edit)])
            llm.reply("Fixed.", usage=Usage(800, 5), thinking="The typo was teh.")
            rpc.prompt("fix the typo")
            llm.reply(tool_calls=[ToolCall("call_bash1", "bash", {"command": "echo built"})])
            llm.reply("Built.", usage=Usage(900, 5))
            rpc.prompt("run the build")
            llm.reply(tool_calls=[ToolCall("call_read2", "read", {"path": "missing.txt"})])
            llm.reply("That file does not exist.", usage=Usage(1000, 5))
            rpc.prompt("read missing.txt")
            rpc.call({"type": "bash", "command": "echo from the user"})
            llm.reply(tool_calls=[ToolCall("call_png", "read", {"path": "dot.png"})])
            llm.reply("A dot.", usage=Usage(1100, 5))
            rpc.prompt("look at dot.png")
            llm.reply("slow " * 10, delay=0.3)  # aborted after its first chunk
            start = len(rpc.events)
            rpc.call({"type": "prompt", "message": "talk slowly"})
            rpc.wait_for(start, lambda e: e.get("type") == "message_update")
            rpc.call({"type": "abort"})
            rpc.wait_for(start, lambda e: e.get("type") == "agent_end")
            llm.fail(400, "bad request (scripted)")
            rpc.prompt("this one fails")
            rpc.call({"type": "set_model", "provider": "fake", "modelId": "fake-large"})
            llm.reply("A long answer. " * 20, usage=Usage(3500, 50))
            events = rpc.prompt("write a long answer")
            ends = [e for e in events if e.get("type") == "compaction_end"]
            assert ends and ends[0].get("result"), f"pi did not compact: {ends}"
            n = len(llm.chat_requests())
            llm.reply("After compaction.", usage=Usage(400, 5))
            rpc.prompt("what now?")
            after_compaction = llm.chat_requests()[n]
            rpc.call({"type": "set_session_name", "name": "oracle run"})
            main = Path(rpc.state()["sessionFile"])
        ids["fixed"] = next(
            e["id"]
            for e in entry_ids(main)
            if e.get("message", {}).get("role") == "assistant"
            and any(b.get("text") == "Fixed." for b in e["message"]["content"])
        )
        # A label and a branch with a summary, by pi's own SessionManager.
        done = pi_agent.pi_session_ops(
            pi_package,
            {
                "open": str(main),
                "ops": [
                    {"call": "appendLabelChange", "args": [ids["fixed"], "checkpoint"]},
                    {"call": "branchWithSummary", "args": [ids["fixed"], BRANCH_SUMMARY]},
                ],
            },
            root / "ops",
        )
        ids["branch"] = done["results"][1]
        # Run 2 (print mode, resumed, another model): continue on the branch.
        n = len(llm.chat_requests())
        llm.reply(
            tool_calls=[ToolCall("call_write1", "write", {"path": "out.txt", "content": "x"})]
        )
        llm.reply("Wrote out.txt.", usage=Usage(700, 5))
        pi_agent.run_print(home, "continue here", session=main, model="fake-small")
        on_branch = llm.chat_requests()[n]
        # Run 3 (RPC, resumed): fork from a user message into a new file.
        with pi_agent.Rpc(home, session=main) as rpc:
            fork_from = last_user(main, "run the build")
            rpc.call({"type": "fork", "entryId": fork_from})
            llm.reply("In the fork.", usage=Usage(500, 5))
            rpc.prompt("try it differently")
            fork = Path(rpc.state()["sessionFile"])
        assert fork != main
        yield Run(home, llm, main, fork, after_compaction, on_branch, ids)
    finally:
        llm.stop()


def test_pi_wrote_every_kind_of_entry(run):
    entries = entry_ids(run.main)
    types = {e["type"] for e in entries}
    assert {
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "label",
        "session_info",
    } <= types
    messages = [e["message"] for e in entries if e["type"] == "message"]
    assert {m["role"] for m in messages} == {"user", "assistant", "toolResult", "bashExecution"}
    tools = {m["toolName"] for m in messages if m["role"] == "toolResult"}
    assert tools == {"read", "edit", "bash", "write"}
    assert any(m.get("isError") for m in messages if m["role"] == "toolResult")
    stops = {m.get("stopReason") for m in messages if m["role"] == "assistant"}
    assert stops == {"toolUse", "stop", "error", "aborted"}
    assert any(
        b.get("type") == "image"
        for m in messages
        if m["role"] == "toolResult"
        for b in m["content"]
    )
    assert any(
        b.get("type") == "thinking"
        for m in messages
        if m["role"] == "assistant"
        for b in m["content"]
    )
    assert {m.get("model") for m in messages if m["role"] == "assistant"} == set(pi_agent.MODELS)
    assert [e["modelId"] for e in entries if e["type"] == "model_change"][:2] == list(
        pi_agent.MODELS
    )
    header = orjson.loads(run.fork.read_bytes().splitlines()[0])
    assert header["parentSession"] == str(run.main)


def test_memlens_reads_every_file_pi_wrote_without_problems(run):
    files = run.home.sessions()
    assert sorted(files) == sorted([run.main, run.fork])
    for path in files:
        session = load_transcript(path)
        assert session.problems == [], (path.name, session.problems)
        assert [e.id for e in session.entries] == [e["id"] for e in entry_ids(path)]


@pytest.mark.parametrize("which", ["main", "fork"])
def test_replay_equals_pi_at_every_entry(run, which):
    path = getattr(run, which)
    theirs = pi_agent.pi_entries(run.home.pkg, path)
    assert len(theirs["contexts"]) == len(entry_ids(path))
    assert pi_agent.replay_mismatches(load_transcript(path), theirs) == []


def test_request_after_compaction_starts_with_the_summary(run):
    body = run.after_compaction
    session = load_transcript(run.main)
    comp = session.compaction_entries()[0]
    assert SUMMARY in comp.raw["summary"]
    first = body["messages"][1]
    assert body["messages"][0]["role"] == "system"
    assert first["role"] == "user"
    assert llm_text(first) == COMPACTION_PREFIX + comp.raw["summary"] + COMPACTION_SUFFIX
    items = context_at(session, last_user(run.main, "what now?"))
    assert items[0].message.role == "compactionSummary"
    assert [m["role"] for m in body["messages"][1:]] == expected_roles(items)
    assert llm_text(body["messages"][-1]) == "what now?"


def test_request_on_the_branch_holds_the_branch_summary(run):
    body = run.on_branch
    texts = [llm_text(m) for m in body["messages"][1:]]
    assert BRANCH_PREFIX + BRANCH_SUMMARY + BRANCH_SUFFIX in texts
    assert not any(t.startswith(COMPACTION_PREFIX) for t in texts)
    assert body["model"] == "fake-small"
    session = load_transcript(run.main)
    items = context_at(session, last_user(run.main, "continue here"))
    assert [m["role"] for m in body["messages"][1:]] == expected_roles(items)
    assert [i.entry.id for i in items if i.message.role == "branchSummary"] == [run.ids["branch"]]


def test_fake_server_saw_every_scripted_answer(run):
    assert run.llm.pending() == 0
    summaries = [b for b in run.llm.chat_requests() if is_summary_request(b)]
    assert summaries and all(b["stream"] for b in run.llm.chat_requests())


def post(url: str, body: dict[str, Any]) -> tuple[int, bytes]:
    req = urllib.request.Request(
        url, data=orjson.dumps(body), headers={"Content-Type": "application/json"}
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback only
    try:
        with opener.open(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_fake_llm_scripts_streams_and_records():
    """The fake server itself (no agent): rules, queue, default, errors, SSE, embeddings."""
    with FakeLLM(embedding_dim=4) as llm:
        url = llm.base_url
        llm.when(lambda b: b.get("tag") == "rule", Answer("from the rule"))
        llm.reply("plain", usage=Usage(7, 3, cached=2))
        llm.reply(tool_calls=[ToolCall("c1", "read", {"path": "é.txt"})], thinking="hm")
        llm.fail(429, "slow down")
        status, raw = post(f"{url}/chat/completions", {"messages": [], "tag": "rule"})
        assert status == 200
        assert orjson.loads(raw)["choices"][0]["message"]["content"] == "from the rule"
        status, raw = post(f"{url}/chat/completions", {"messages": [], "model": "m"})
        done = orjson.loads(raw)
        assert done["choices"][0]["message"]["content"] == "plain"
        assert done["usage"] == {
            "prompt_tokens": 7,
            "completion_tokens": 3,
            "total_tokens": 10,
            "prompt_tokens_details": {"cached_tokens": 2},
        }
        status, raw = post(f"{url}/chat/completions", {"messages": [], "stream": True})
        assert status == 200
        lines = [ln for ln in raw.decode().split("\n\n") if ln]
        assert lines[-1] == "data: [DONE]"
        chunks = [orjson.loads(ln.removeprefix("data: ")) for ln in lines[:-1]]
        args = "".join(
            tc["function"].get("arguments", "")
            for c in chunks
            for ch in c["choices"]
            for tc in ch["delta"].get("tool_calls", [])
        )
        assert orjson.loads(args) == {"path": "é.txt"}
        assert (
            "".join(ch["delta"].get("reasoning_content", "") for c in chunks for ch in c["choices"])
            == "hm"
        )
        assert [ch["finish_reason"] for c in chunks for ch in c["choices"]][-1] == "tool_calls"
        assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] == 110
        status, raw = post(f"{url}/chat/completions", {"messages": [], "stream": True})
        assert status == 429 and orjson.loads(raw)["error"]["message"] == "slow down"
        status, raw = post(f"{url}/chat/completions", {"messages": []})
        assert orjson.loads(raw)["choices"][0]["message"]["content"] == "(nothing scripted)"
        status, raw = post(f"{url}/embeddings", {"input": ["a", "b"], "model": "e"})
        data = orjson.loads(raw)["data"]
        assert [d["index"] for d in data] == [0, 1] and len(data[0]["embedding"]) == 4
        assert data[0]["embedding"] != data[1]["embedding"]
        status, raw = post(f"{url}/embeddings", {"input": "a", "encoding_format": "base64"})
        packed = base64.b64decode(orjson.loads(raw)["data"][0]["embedding"])
        assert struct.unpack("<4f", packed) == pytest.approx(data[0]["embedding"])
        assert len(llm.chat_requests()) == 5 and llm.pending() == 0
        assert len(llm.requests) == 7
        assert llm.requests[0].answer is not None and llm.requests[0].answer.text == "from the rule"
        assert llm.requests[-1].path == "/v1/embeddings"


def test_memlens_plans_the_compaction_pi_made(run):
    """memlens's plan at the entry pi compacted, with pi's settings, is pi's compaction."""
    session = load_transcript(run.main)
    (comp,) = session.compaction_entries()
    raw = comp.raw
    assert comp.parent_id is not None
    plan = plan_compaction(
        session, at=comp.parent_id, window=4000, reserve_tokens=1000, keep_recent_tokens=200
    )
    assert plan.ok, plan.reason
    assert plan.first_kept_entry_id == raw["firstKeptEntryId"]
    assert plan.is_split_turn == ("**Turn Context (split turn):**" in raw["summary"])
    assert plan.tokens_before == raw["tokensBefore"]
    assert plan.read_files == raw["details"]["readFiles"]
    assert plan.modified_files == raw["details"]["modifiedFiles"]


def test_the_loss_audit_of_every_compaction_pi_wrote(run):
    """Issue 20: every compaction audited, by pi's summary and by memlens's of the same cut."""
    from core.compaction.audit import audit_compaction, audit_dry_run
    from core.transcript.replay import compactions

    audited = []
    for path in (run.main, run.fork):
        session = load_transcript(path)
        for n in range(1, len(compactions(session)) + 1):
            agent = audit_compaction(session, str(n))
            ours = audit_dry_run(session, at=str(n), same_cut=True)
            audited.append((agent, ours))
    assert len(audited) == 1  # pi's auto-compaction; the fork starts before it
    agent, ours = audited[0]
    assert agent.summary.startswith("## Goal\nFix the notes (fake summary).")
    items = {i.text: i for i in agent.items}
    # pi appends its file lists to the summary: every file it read or changed is kept
    assert (items["notes.txt"].category, items["notes.txt"].detail) == ("file", "modified")
    assert (items["dot.png"].detail, items["missing.txt"].detail) == ("read", "read")
    assert {items[f].status for f in ("notes.txt", "dot.png", "missing.txt")} == {"kept"}
    # the fake summary says nothing else: the build and the user's bash run are gone
    assert items["echo built"].status == "lost"
    assert items["echo from the user"].category == "command"
    assert any(i.category == "error" and i.text.startswith("ENOENT") for i in agent.items)
    # memlens's planner reproduces pi's cut: the same items, another summary
    assert ours.notes == [] and ours.first_kept_entry_id == agent.first_kept_entry_id
    assert {(i.category, i.text) for i in ours.items} == {(i.category, i.text) for i in agent.items}
    assert ours.summary.startswith("_Offline summary")
