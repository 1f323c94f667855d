"""The oracle tier: the model context OpenClaw 2026.9.6 builds from its SQLite store.

A real session is made by running the real OpenClaw offline (``agent --local``
against :class:`~tests.oracle.fake_llm.FakeLLM`): a plain turn, then a turn whose
user message is past 1 kB, so that it is stored zstd-compressed, answered with a
tool call (``read``). Compaction, reset, branch and leaf-control entries are
then appended to *copies* of that database by OpenClaw's own transcript writer
(``SessionManager.appendCompaction`` / ``appendResetBoundary`` / ``branch`` /
``appendLeafControl`` ..., ``WRITE_JS``), so their rows, zstd payloads and
projections are OpenClaw's.

``tests/oracle/openclaw_context.mjs`` runs OpenClaw's own readers on a copy of
the database and prints the context at the leaf and at every entry; memlens's
``AgentDb.load_session`` + ``context_at`` must give the same messages (source
entry, role, text, tool calls) at every entry. See docs/notes/openclaw-context.md.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.oracle.fake_llm import FakeLLM, ToolCall, Usage

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).with_name("openclaw_context.mjs")
AGENT = "main"
SESSION = "s1"
KEY = f"agent:{AGENT}:explicit:{SESSION}"
LONG = (
    "When does the train leave? Read notes.txt. Please keep this long note in mind. "
    + "All work and no play makes Jack a dull boy. " * 40
)

# OpenClaw's own transcript writer on databases: node WRITE_JS PKG AGENT SESSION KEY JOBS_JSON,
# JOBS_JSON = [{"state": STATE_DIR, "ops": [...]}, ...] (one Node run for all: most of a run
# is loading OpenClaw's bundle); prints [{"ids": [...], "leaf": ...}, ...]
WRITE_JS = """
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
const [pkg, agentId, sessionId, sessionKey, jobsJson] = process.argv.slice(2);
const dist = join(pkg, "dist");
async function bundled(pattern, wanted) {
  for (const f of readdirSync(dist).filter((n) => pattern.test(n)).sort()) {
    const line = readFileSync(join(dist, f), "utf8").match(/export \\{([^}]*)\\};?\\s*$/m);
    if (!line) continue;
    const names = Object.fromEntries(line[1].split(",").map((p) => p.trim().split(/\\s+as\\s+/))
      .map(([n, as]) => [n, as ?? n]));
    if (!wanted.every((n) => n in names)) continue;
    const m = await import(pathToFileURL(join(dist, f)).href);
    return Object.fromEntries(wanted.map((n) => [n, m[names[n]]]));
  }
  throw new Error(`no ${pattern} exports ${wanted}`);
}
const { SessionManager } = await bundled(/^session-manager-.*\\.mjs$/, ["SessionManager"]);
const results = [];
for (const { state: stateDir, ops } of JSON.parse(jobsJson)) {
process.env.OPENCLAW_STATE_DIR = stateDir;
const storePath = join(stateDir, "agents", agentId, "agent", "openclaw-agent.sqlite");
const m = await SessionManager.openAsync({ agentId, sessionId, sessionKey, storePath });
const ids = [];
for (const op of ops) {
  if (op.op === "compaction") ids.push(m.appendCompaction(op.summary, op.firstKeptEntryId,
    op.tokensBefore ?? 100, op.details, op.fromHook));
  else if (op.op === "reset") ids.push(m.appendResetBoundary(op.reason, op.firstKeptEntryId));
  else if (op.op === "branch") { m.branch(op.id); ids.push(null); }
  else if (op.op === "leaf") ids.push(m.appendLeafControl({ targetId: op.targetId,
    appendParentId: op.appendParentId ?? op.targetId }).id);
  else if (op.op === "label") ids.push(m.appendLabelChange(op.targetId, op.label));
  else if (op.op === "session_info") ids.push(m.appendSessionInfo(op.name));
  else if (op.op === "custom_message") ids.push(m.appendCustomMessageEntry(op.customType,
    op.content, op.display ?? true));
  else if (op.op === "message") ids.push(m.appendMessage(op.message));
  else throw new Error(`unknown op ${op.op}`);
}
m.flushPendingPersistence();
results.push({ ids, leaf: m.getLeafId() });
}
process.stdout.write(JSON.stringify(results));
"""


def _user(text: str, ts: int) -> dict[str, Any]:
    return {"op": "message", "message": {"role": "user", "content": text, "timestamp": ts}}


def _assistant(text: str, ts: int) -> dict[str, Any]:
    zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    usage = {"input": 10, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 12}
    return {
        "op": "message",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "api": "openai-completions",
            "provider": "fake",
            "model": "m",
            "usage": {**usage, "cost": zero},
            "stopReason": "stop",
            "timestamp": ts,
        },
    }


# -- the real session ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def built(openclaw: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A home where the real OpenClaw ran two turns of session s1 (~50 s).

    memlens's live follower polls the database while the second turn runs
    (``test_memlens_follows_while_openclaw_writes`` checks what it saw).
    """
    root = tmp_path_factory.mktemp("occtx")
    home = root / "home"
    ws = home / "ws"
    ws.mkdir(parents=True)
    (ws / "notes.txt").write_text("The release train leaves at 10:00.\n")
    (root / "long.txt").write_text(LONG)
    with FakeLLM() as llm:
        (home / ".openclaw").mkdir()
        model = {
            "id": "m",
            "name": "fake m",
            "contextWindow": 16000,
            "maxTokens": 1000,
            "input": ["text"],
            "reasoning": False,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        }
        provider = {
            "baseUrl": llm.base_url,
            "apiKey": "test-key",
            "api": "openai-completions",
            "models": [model],
        }
        cfg = {
            "models": {"providers": {"fake": provider}},
            "agents": {"defaults": {"model": {"primary": "fake/m"}, "workspace": str(ws)}},
            "memory": {"search": {"provider": "none"}},
        }
        (home / ".openclaw" / "openclaw.json").write_text(json.dumps(cfg))

        follow: dict[str, Any] = {}

        def run(*args: str) -> None:
            proc = subprocess.Popen(
                [*openclaw.cli, "agent", "--local", *args, "--session-id", SESSION, "--json"],
                cwd=ws,
                env=openclaw.env(home),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            if follow:
                follow_while(proc, follow)
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, (out + err).decode("utf-8", "replace")[-3000:]

        llm.reply("Hello! I noted that.", usage=Usage(prompt=1200, completion=12))
        run("-m", "Remember: deploy on Friday")
        follow.update(start_following(home / ".openclaw"))
        # one turn: a user message past 1 kB (stored zstd) answered with a tool call
        # (every agent run costs 15-60 s of the suite's budget)
        call = ToolCall("call_1", "read", {"path": str(ws / "notes.txt")})
        llm.reply(tool_calls=[call], usage=Usage(prompt=1300, completion=20))
        llm.reply("The train leaves at 10:00.", usage=Usage(prompt=1400, completion=12))
        run("--message-file", str(root / "long.txt"))
        requests = llm.chat_requests()
    follow["follower"].poll()
    follow["follower"].close()
    return {"root": root, "state": home / ".openclaw", "requests": requests, "live": follow}


@pytest.fixture(scope="module")
def real(openclaw: Any, built: dict[str, Any]) -> dict[str, Any]:
    """OpenClaw's reading of the real session, at the leaf and at every entry (one run).

    With ``all`` the script's output is the leaf's, plus ``contexts``: every test that
    reads the untouched session (or a copy of it) starts from this one run.
    """
    return _oracle(openclaw, built["state"], "all")


def start_following(state: Path) -> dict[str, Any]:
    """memlens opens the home and follows it (live mode, no Qt)."""
    from core.dataset.load import load_dataset
    from core.live.follow import LiveFollower

    data = load_dataset(state)
    return {"data": data, "follower": LiveFollower(data), "seen": [], "errors": []}


def follow_while(proc: subprocess.Popen[bytes], follow: dict[str, Any]) -> None:
    """Poll memlens's follower every 100 ms while OpenClaw runs a turn."""
    import time

    data, follower = follow["data"], follow["follower"]
    while proc.poll() is None:
        try:
            changes = follower.poll()
        except Exception as exc:  # the follower must never raise
            follow["errors"].append(repr(exc))
            return
        follow["errors"] += [str(p) for p in changes.problems if p.severity == "error"]
        session = next((s for s in data.sessions if s.id == SESSION), None)
        follow["seen"].append(len(session.entries) if session is not None else 0)
        time.sleep(0.1)


def _db(state: Path) -> Path:
    return state / "agents" / AGENT / "agent" / "openclaw-agent.sqlite"


def _rows(state: Path, sql: str, *args: Any) -> list[Any]:
    uri = f"file:{_db(state)}?mode=ro&immutable=1"
    with sqlite3.connect(uri, uri=True) as con:
        return con.execute(sql, args).fetchall()


def _copy(state: Path, dest: Path) -> Path:
    """A copy of the state dir's agent database (its -wal too) under *dest*/.openclaw."""
    target = dest / ".openclaw"
    agent = _db(target).parent
    agent.mkdir(parents=True)
    for suffix in ("", "-wal"):
        src = Path(f"{_db(state)}{suffix}")
        if src.exists():
            shutil.copy2(src, f"{_db(target)}{suffix}")
    return target


def _write(openclaw: Any, folder: Path, jobs: list[tuple[Path, Any]]) -> list[dict[str, Any]]:
    """OpenClaw's writer appends each job's ops to its state dir's database (one run)."""
    script = folder / "write.mjs"
    script.write_text(WRITE_JS)
    spec = [{"state": str(state), "ops": ops} for state, ops in jobs]
    out: list[dict[str, Any]] = openclaw.run(
        script, AGENT, SESSION, KEY, json.dumps(spec), timeout=120
    )
    return out


def _oracle(openclaw: Any, state: Path, entry: str | None = None) -> dict[str, Any]:
    args = [str(state), AGENT, SESSION] + ([entry] if entry else [])
    out: dict[str, Any] = openclaw.run(SCRIPT, *args, timeout=300)
    return out


def _oracles(
    openclaw: Any, jobs: dict[str, tuple[Path, str | None, int | None]]
) -> dict[str, dict[str, Any]]:
    """:func:`_oracle` of each ``name: (state, entry, budget)`` in one Node run (``--jobs``;
    the budget in tokens stands for MEMLENS_OPENCLAW_CONTEXT_TOKENS)."""
    spec = [
        {"state": str(state), "agent": AGENT, "session": SESSION, "entry": entry,
         "contextTokens": tokens}
        for state, entry, tokens in jobs.values()
    ]  # fmt: skip
    outs: list[dict[str, Any]] = openclaw.run(SCRIPT, "--jobs", stdin=spec, timeout=300)
    return dict(zip(jobs, outs, strict=True))


# -- comparing ------------------------------------------------------------------------------


def _oc_text(message: dict[str, Any]) -> str:
    if message["role"] in ("compactionSummary", "branchSummary"):
        return str(message.get("summary") or "")
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = [b.get("text") for b in content or [] if b.get("type") == "text" and b.get("text")]
    return "\n".join(parts)


def _oc_calls(message: dict[str, Any]) -> list[tuple[str, str]]:
    content = message.get("content")
    if message["role"] != "assistant" or not isinstance(content, list):
        return []
    return [(b.get("id"), b.get("name")) for b in content if b.get("type") == "toolCall"]


def _openclaw_view(context: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (src["entryId"], msg["role"], _oc_text(msg), _oc_calls(msg))
        for src, msg in zip(context["sources"], context["messages"], strict=True)
    ]


def _memlens_view(session: Any, entry: str) -> list[tuple[Any, ...]]:
    from core.transcript import context_at

    return [
        (
            item.entry.id,
            item.message.role,
            item.message.text(),
            [(b.tool_id, b.name) for b in item.message.tool_calls()],
        )
        for item in context_at(session, entry)
    ]


def _compare_everywhere(state: Path, oracle: dict[str, Any]) -> int:
    """memlens's context at every entry equals OpenClaw's; returns how many were compared."""
    agentdb = pytest.importorskip("core.openclaw.agentdb")
    with agentdb.AgentDb(_db(state)) as db:
        session = db.load_session(SESSION)
    n = 0
    for context in oracle["contexts"]:
        if context["type"] == "session":
            continue
        ours = _memlens_view(session, context["entryId"])
        theirs = _openclaw_view(context)
        assert ours == theirs, (
            f"context at #{context['seq']} {context['type']} {context['entryId']}"
        )
        n += 1
    leaf = session.leaf
    assert leaf is not None and leaf.id == oracle["leafId"]
    return n


# -- the tests ------------------------------------------------------------------------------


def test_the_oracle_reads_the_real_session(built, real):
    """Sanity of openclaw_context.mjs on the session the real OpenClaw wrote."""
    state = built["state"]
    out = real
    assert out["package"] == "2026.9.6"
    assert out["notes"] == []
    assert out["header"]["version"] == 4
    roles = [m["role"] for m in out["messages"]]
    assert roles == ["user", "assistant", "user", "assistant", "toolResult", "assistant"]
    assert [m["role"] for m in out["llm"]] == roles
    assert out["messages"][0]["content"] == "Remember: deploy on Friday"
    assert out["messages"][2]["content"] == LONG  # read through the zstd payload
    # the long message is stored zstd; the others as plain JSON
    zstd = _rows(state, "SELECT seq FROM transcript_events WHERE event_json IS NULL")
    assert len(zstd) == 1
    # the leaf and the active branch are those of OpenClaw's projection tables
    ((leaf,),) = _rows(state, "SELECT leaf_event_id FROM session_transcript_index_state")
    assert out["leafId"] == out["treeLeafId"] == leaf
    active = _rows(
        state,
        "SELECT i.event_id FROM session_transcript_active_events a JOIN transcript_event_identities i "
        "ON i.session_id = a.session_id AND i.seq = a.event_seq ORDER BY a.active_position",
    )
    assert out["activeEntryIds"] == [r[0] for r in active]
    for reader in ("runner", "model", "snapshot"):
        assert out["readers"][reader]["activeEntryIds"] == out["activeEntryIds"]
    # only the documented difference: the model projection drops a toolResult's details
    assert out["readerDifferences"] == [{"index": 4, "keys": ["details"]}]
    assert "details" in out["messages"][4]


def test_the_oracle_matches_what_the_model_was_sent(built, real):
    """The context at the last user message is the history of the last chat request."""
    oracle = real
    last_user = [
        c
        for c in oracle["contexts"]
        if c["type"] == "message" and c["messages"] and c["messages"][-1].get("content") == LONG
    ]
    assert len(last_user) == 1
    context = last_user[0]["llm"]
    # the turn's first request (the second answers the tool call)
    sent = [m for m in built["requests"][-2]["messages"] if m["role"] != "system"]
    # OpenClaw adds its runtime-context carrier as a last user message at request time
    assert "OPENCLAW_INTERNAL_CONTEXT" in json.dumps(sent[-1])
    sent = sent[:-1]
    wire = {"user": "user", "assistant": "assistant", "toolResult": "tool"}
    assert [wire[m["role"]] for m in context] == [m["role"] for m in sent]
    for ours, theirs in zip(context, sent, strict=True):
        text = _oc_text(ours)
        body = theirs.get("content") or ""
        body = body if isinstance(body, str) else "".join(b.get("text", "") for b in body)
        # user text is stamped "[Wed 2026-11-25 17:14 UTC] ..." (and the first one gets the
        # runtime line) at the LLM boundary; assistant and tool text go as stored
        assert text in body, (ours, theirs)
        if ours["role"] != "user":
            assert text == body


def test_plain_and_zstd_session_matches_memlens(built, real):
    oracle = real
    assert _compare_everywhere(built["state"], oracle) == len(oracle["contexts"]) - 1


# -- copies of the real database, entries appended by OpenClaw's own writer ----------------
# (``before`` is OpenClaw's reading of the real session: each copy reads the same)


def _compaction_ops(before: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "op": "compaction",
            "summary": "We talked about deploys. " * 50,  # > 1 kB: stored zstd
            "firstKeptEntryId": before["sources"][2]["entryId"],
            "tokensBefore": 5000,
            "details": {"readFiles": [], "modifiedFiles": []},
            "fromHook": True,
        },
        _user("After the compaction", 1_795_627_100_000),
        _assistant("Noted.", 1_795_627_100_001),
    ]


def _reset_kept_ops(before: dict[str, Any]) -> list[dict[str, Any]]:
    """compaction, reset keeping the tail, two messages, then an append on a pre-reset branch."""
    src = before["sources"]
    return [
        {"op": "compaction", "summary": "Deploys.", "firstKeptEntryId": src[2]["entryId"]},
        # keeps from the assistant's "The train leaves at 10:00."
        {"op": "reset", "reason": "reset", "firstKeptEntryId": src[5]["entryId"]},
        _user("After the reset", 1_795_627_100_000),
        _assistant("ok", 1_795_627_100_001),
        {"op": "branch", "id": src[1]["entryId"]},
        _user("Side question", 1_795_627_200_000),
    ]


def _reset_new_ops(_before: dict[str, Any]) -> list[dict[str, Any]]:
    """A reset without kept entries (/new), then one message."""
    return [{"op": "reset", "reason": "new"}, _user("Fresh start", 1_795_627_100_000)]


def _leaf_controls_ops(before: dict[str, Any]) -> list[dict[str, Any]]:
    """A side branch, a leaf control back to the main leaf, label, session_info, custom_message."""
    src = before["sources"]
    return [
        {"op": "branch", "id": src[1]["entryId"]},
        _user("Side question", 1_795_627_200_000),
        {"op": "leaf", "targetId": src[-1]["entryId"]},
        _user("Back on main", 1_795_627_300_000),
        {"op": "label", "targetId": src[0]["entryId"], "label": "start"},
        {"op": "session_info", "name": "My session"},
        {"op": "custom_message", "customType": "note", "content": "An injected note"},
    ]


def _bounded_ops(before: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"op": "compaction", "summary": "S.", "firstKeptEntryId": before["sources"][2]["entryId"]}
    ]


SCENARIOS = {
    "compaction": _compaction_ops,
    "reset_kept": _reset_kept_ops,
    "reset_new": _reset_new_ops,
    "leaf_controls": _leaf_controls_ops,
    "bounded": _bounded_ops,
}


@pytest.fixture(scope="module")
def written(openclaw: Any, built: dict[str, Any], real: dict[str, Any]) -> dict[str, Any]:
    """Each scenario's copy of the real database with its entries written (one Node run)."""
    states = {name: _copy(built["state"], built["root"] / name) for name in SCENARIOS}
    jobs = [(states[name], make_ops(real)) for name, make_ops in SCENARIOS.items()]
    results = _write(openclaw, built["root"], jobs)
    return {
        name: {"state": states[name], "before": real, "ids": result["ids"]}
        for name, result in zip(SCENARIOS, results, strict=True)
    }


BOUNDED_TOKENS = 500
"""The runner's budget in test_the_runner_reads_a_bounded_suffix (each budget costs a job)."""


@pytest.fixture(scope="module")
def read_back(openclaw: Any, written: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """OpenClaw's reading of each scenario's copy, in one Node run: at every entry, and the
    bounded one at its leaf under :data:`BOUNDED_TOKENS` (the run's bundle load is most of
    its cost)."""
    jobs: dict[str, tuple[Path, str | None, int | None]] = {
        name: (written[name]["state"], "all", None)
        for name in ("compaction", "reset_kept", "reset_new", "leaf_controls")
    }
    jobs["bounded"] = (written["bounded"]["state"], None, BOUNDED_TOKENS)
    return _oracles(openclaw, jobs)


def test_compaction_matches_memlens(real, written, read_back):
    state, ids = written["compaction"]["state"], written["compaction"]["ids"]
    user2 = real["sources"][2]["entryId"]
    oracle = read_back["compaction"]
    assert oracle["notes"] == []
    first = oracle["sources"][0]
    assert first["entryId"] == ids[0] and first["type"] == "compaction"
    assert oracle["sources"][1]["entryId"] == user2
    assert oracle["llm"][0]["content"][0]["text"].startswith(
        "The conversation history before this point was compacted into the following summary:"
    )
    _compare_everywhere(state, oracle)


def _scenario(written: dict[str, Any], read_back: dict[str, Any], name: str) -> dict[str, Any]:
    return {**written[name], "oracle": read_back[name]}


@pytest.fixture(scope="module")
def reset_kept(written: dict[str, Any], read_back: dict[str, Any]) -> dict[str, Any]:
    return _scenario(written, read_back, "reset_kept")


@pytest.fixture(scope="module")
def reset_new(written: dict[str, Any], read_back: dict[str, Any]) -> dict[str, Any]:
    return _scenario(written, read_back, "reset_new")


@pytest.fixture(scope="module")
def leaf_controls(written: dict[str, Any], read_back: dict[str, Any]) -> dict[str, Any]:
    return _scenario(written, read_back, "leaf_controls")


def test_a_reset_keeps_a_prelude_and_captures_later_branches(reset_kept):
    """OpenClaw's side: the reset wins over the compaction; no summary; the append on a
    pre-reset branch is re-parented onto the post-reset chain."""
    oracle, ids, before = reset_kept["oracle"], reset_kept["ids"], reset_kept["before"]
    assert oracle["notes"] == []
    got = [(s["entryId"], s["prelude"]) for s in oracle["sources"]]
    retained = [(s["entryId"], True) for s in before["sources"][5:]]
    assert got == [*retained, (ids[2], False), (ids[3], False), (ids[5], False)]
    assert oracle["leafId"] == ids[5]
    assert all(m["role"] != "compactionSummary" for m in oracle["messages"])
    at = {c["entryId"]: c for c in oracle["contexts"]}
    # at the compaction (before the reset) the summary comes first; at the reset, the prelude
    assert at[ids[0]]["sources"][0]["entryId"] == ids[0]
    kept = [s["entryId"] for s in before["sources"][5:]]
    assert [s["entryId"] for s in at[ids[1]]["sources"]] == kept


def test_reset_matches_memlens(reset_kept):
    _compare_everywhere(reset_kept["state"], reset_kept["oracle"])


def test_a_new_reset_empties_the_context(reset_new):
    oracle, ids = reset_new["oracle"], reset_new["ids"]
    assert oracle["notes"] == []
    assert [s["entryId"] for s in oracle["sources"]] == [ids[1]]
    at = {c["entryId"]: c for c in oracle["contexts"]}
    assert at[ids[0]]["sources"] == []


def test_new_reset_matches_memlens(reset_new):
    _compare_everywhere(reset_new["state"], reset_new["oracle"])


def test_leaf_controls_select_the_branch(leaf_controls):
    oracle, ids, before = leaf_controls["oracle"], leaf_controls["ids"], leaf_controls["before"]
    assert oracle["notes"] == []
    got = [s["entryId"] for s in oracle["sources"]]
    assert got == [s["entryId"] for s in before["sources"]] + [ids[3], ids[6]]
    assert ids[1] not in got  # the side branch is out
    assert oracle["llm"][-1] == {
        "role": "user",
        "content": [{"type": "text", "text": "An injected note"}],
        "timestamp": oracle["messages"][-1]["timestamp"],
    }
    at = {c["entryId"]: c for c in oracle["contexts"]}
    assert at[ids[2]]["leafId"] == before["sources"][-1]["entryId"]  # at the leaf row: its target
    assert at[ids[2]]["sources"] == before["sources"]


def test_leaf_controls_and_metadata_match_memlens(leaf_controls):
    oracle = leaf_controls["oracle"]
    others = {**oracle, "contexts": [c for c in oracle["contexts"] if c["type"] != "leaf"]}
    _compare_everywhere(leaf_controls["state"], others)


def test_context_at_a_leaf_row_matches_memlens(leaf_controls):
    oracle = leaf_controls["oracle"]
    rows = {**oracle, "contexts": [c for c in oracle["contexts"] if c["type"] == "leaf"]}
    _compare_everywhere(leaf_controls["state"], rows)


def test_the_runner_reads_a_bounded_suffix(written, read_back):
    """The embedded run reads at most max(1024, 8 x context tokens) bytes of the branch.

    Checks rule 8 of docs/notes/openclaw-context.md against OpenClaw's bounded reader:
    newest active rows (event_utf8_bytes + 1 each, the header counted first) while they
    fit, plus the latest compaction/reset row when it was not among them.
    """
    state, ids = written["bounded"]["state"], written["bounded"]["ids"]
    rows = _rows(
        state,
        "SELECT i.event_id, e.event_utf8_bytes, i.event_type FROM session_transcript_active_events a "
        "JOIN transcript_events e ON e.session_id = a.session_id AND e.seq = a.event_seq "
        "JOIN transcript_event_identities i ON i.session_id = a.session_id AND i.seq = a.event_seq "
        "WHERE a.context_eligible = 1 ORDER BY a.active_position DESC",
    )
    ((header,),) = _rows(state, "SELECT event_utf8_bytes FROM transcript_events WHERE seq = 0")
    for tokens in (BOUNDED_TOKENS,):
        budget = max(1024, tokens * 8)
        used, picked = header + 1, []
        for event_id, size, _type in rows:
            if used + size + 1 > budget:
                break
            picked.append(event_id)
            used += size + 1
        boundary = next(r for r in rows if r[2] in ("compaction", "reset"))
        if boundary[0] not in picked and used + boundary[1] + 1 <= budget:
            picked.append(boundary[0])
        out = read_back["bounded"]
        assert out["limits"]["maxBytes"] == budget and out["limits"]["truncated"]
        runner = out["readers"]["runner"]
        assert set(runner["activeEntryIds"]) == set(picked)
        assert runner["sources"][0]["entryId"] == ids[0]
        # memlens's replay of the run applies the same bound (core.transcript.run_bound)
        from core.openclaw.agentdb import AgentDb
        from core.transcript.run_bound import run_bound

        with AgentDb(_db(state)) as db:
            session = db.load_session(SESSION)
        assert session.leaf is not None
        bound = run_bound(session, session.path_to(session.leaf.id), tokens)
        assert bound.max_bytes == budget and bound.truncated
        assert {e.id for e in bound.read} == set(runner["activeEntryIds"])
        session.run_context_tokens = tokens
        ours = [row[0] for row in _memlens_view(session, session.leaf.id)]
        assert ours == [src["entryId"] for src in runner["sources"]]


# -- memlens beside the real OpenClaw: live reads, session rows, compaction on demand ------
# (issue 15; here to share the real session above: every OpenClaw run costs 15-60 s)

GATEWAY_TOKEN = "t0k-memlens-test"  # a loopback gateway's fake token


def test_memlens_follows_while_openclaw_writes(built):
    """The live follower polled while turn 2 ran: no failure, every row, a fresh read."""
    from core.openclaw.agentdb import AgentDb
    from core.transcript import context_at

    live = built["live"]
    assert live["errors"] == []
    assert len(set(live["seen"])) >= 2  # rows arrived while the agent ran
    session = next(s for s in live["data"].sessions if s.id == SESSION)
    with AgentDb(_db(built["state"])) as db:
        fresh = db.load_session(SESSION)
        top = db.max_seqs()[SESSION]
    assert session.db_seq == fresh.db_seq == top
    assert [(e.id, e.type, e.parent_id) for e in session.entries] == [
        (e.id, e.type, e.parent_id) for e in fresh.entries
    ]
    assert [i.message.text() for i in context_at(session)] == [
        i.message.text() for i in context_at(fresh)
    ]


def test_reading_leaves_no_file_and_changes_nothing(built):
    import hashlib

    from core.dataset.load import load_dataset
    from core.openclaw.agentdb import AgentDb

    db_path = _db(built["state"])
    before = sorted(p.name for p in db_path.parent.iterdir())
    digest = hashlib.sha256(db_path.read_bytes()).hexdigest()
    data = load_dataset(built["state"], defer_db=True)
    data.adopt(data.load_pending())
    assert any(s.id == SESSION for s in data.sessions)
    with AgentDb(db_path) as db:
        assert db.search_transcripts("deploy")
        db.stats()
    assert sorted(p.name for p in db_path.parent.iterdir()) == before
    assert hashlib.sha256(db_path.read_bytes()).hexdigest() == digest


def _home_copy(built: dict[str, Any], dest: Path) -> Path:
    """The whole state folder (config included) copied under *dest*/.openclaw."""
    target = dest / ".openclaw"
    shutil.copytree(built["state"], target, ignore=shutil.ignore_patterns("*-shm"))
    return target


def test_sessions_agree_with_openclaw(openclaw, built, tmp_path, capsys):
    from core.cli.main import run_cli
    from core.dataset.load import load_dataset
    from core.openclaw.agentdb import session_path

    state = _home_copy(built, tmp_path)
    done = subprocess.run(
        [*openclaw.cli, "sessions", "--json"],
        env=openclaw.env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    theirs = json.loads(done.stdout[done.stdout.index("{") :])["sessions"]
    assert run_cli(["sessions", str(state), "--json"]) == 0
    ours = json.loads(capsys.readouterr().out)["sessions"]
    assert [s["key"] for s in ours] == [s["key"] for s in theirs] == [KEY]
    assert ours[0]["id"] == theirs[0]["sessionId"] == SESSION
    assert ours[0]["path"] == session_path(_db(state), SESSION)
    assert ours[0]["storage"] == "sqlite"
    row = load_dataset(state).stores["main (sqlite)"].entries[KEY].raw
    for field in ("model", "modelProvider", "inputTokens", "outputTokens", "totalTokens",
                  "contextTokens", "updatedAt"):  # fmt: skip
        assert row.get(field) == theirs[0].get(field), field


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_compaction_on_demand_runs_through_openclaw(openclaw, built, tmp_path, capsys, monkeypatch):
    """``memlens compact --via-openclaw`` drives ``openclaw sessions compact`` (a loopback
    gateway): OpenClaw writes the compaction, memlens reads it; memlens alone refuses."""
    import signal
    import socket
    import time

    from core.cli.main import run_cli
    from core.openclaw.agentdb import AgentDb, session_path
    from core.transcript import context_at

    state = _home_copy(built, tmp_path)
    ref = session_path(_db(state), SESSION)
    assert run_cli(["compact", ref, "--write"]) == 1
    assert "never writes" in capsys.readouterr().err
    with AgentDb(_db(state)) as db:
        before = db.load_session(SESSION)
    port = _free_port()
    with FakeLLM() as llm:
        cfg = json.loads((state / "openclaw.json").read_text())
        cfg["models"]["providers"]["fake"]["baseUrl"] = llm.base_url
        cfg["gateway"] = {"mode": "local", "port": port, "bind": "loopback",
                          "auth": {"mode": "token", "token": GATEWAY_TOKEN}}  # fmt: skip
        (state / "openclaw.json").write_text(json.dumps(cfg))
        llm.reply("## Decisions\nDeploy on Friday.", usage=Usage(prompt=900, completion=30))
        gateway = subprocess.Popen(
            [*openclaw.cli, "gateway", "run", "--port", str(port)],
            env=openclaw.env(tmp_path),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline and gateway.poll() is None:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(1)
            else:
                pytest.fail("the loopback gateway did not start")
            monkeypatch.setenv("OPENCLAW_GATEWAY_TOKEN", GATEWAY_TOKEN)
            code = run_cli(["compact", ref, "--via-openclaw", "--openclaw", " ".join(openclaw.cli),
                         "--json", "--timeout", "240"])  # fmt: skip
            out = capsys.readouterr()
            assert code == 0, out.err
        finally:
            os.killpg(gateway.pid, signal.SIGKILL)
            gateway.wait(timeout=30)
    payload = json.loads(out.out)
    assert payload["via"] == "openclaw" and payload["compacted"] is True
    assert payload["key"] == KEY
    (new,) = payload["new_compactions"]
    with AgentDb(_db(state)) as db:
        after = db.load_session(SESSION)
    entry = after.by_id[new["id"]]
    assert entry.type == "compaction" and entry.id not in before.by_id
    assert entry.raw["firstKeptEntryId"] == payload["result"]["firstKeptEntryId"]
    items = context_at(after)
    assert items[0].entry.id == entry.id  # the summary first, as OpenClaw replays it
    assert "Deploy on Friday" in items[0].message.text()
