"""memlens on the committed home the real OpenClaw 2026.9.6 wrote (issue 15).

``tests/data/openclaw-2026.9.6`` holds the state folder and what OpenClaw itself
reported about it (``expected.json``): ``openclaw sessions --all-agents --json`` and
its gateway's ``sessions.search`` (the transcript full-text search). memlens must
list the same sessions with the same row fields and find the same messages, without
Node and without leaving a file in the repository.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli.main import run_cli
from core.dataset.load import load_dataset
from core.openclaw.agentdb import AgentDb

FIXTURE = Path(__file__).parents[1] / "data" / "openclaw-2026.9.6"
STATE = FIXTURE / "home" / ".openclaw"
EXPECTED = json.loads((FIXTURE / "expected.json").read_text(encoding="utf-8"))
ROW_FIELDS = ("model", "modelProvider", "inputTokens", "outputTokens", "totalTokens",
              "contextTokens", "updatedAt", "sessionStartedAt", "lastInteractionAt")  # fmt: skip


def _command(label: str) -> dict:
    return next(c for c in EXPECTED["commands"] if c["label"] == label)


def _listing() -> list[str]:
    return sorted(str(p.relative_to(FIXTURE)) for p in FIXTURE.rglob("*"))


@pytest.fixture(autouse=True)
def untouched():
    """Reading the fixture never creates a -wal, -shm or any other file in it."""
    before = _listing()
    yield
    assert _listing() == before


def test_sessions_are_openclaws(capsys):
    theirs = _command("sessions all")["json"]["sessions"]
    assert run_cli(["sessions", str(STATE), "--json"]) == 0
    ours = [s for s in json.loads(capsys.readouterr().out)["sessions"] if s["storage"] == "sqlite"]
    assert sorted((s["agent"], s["key"], s["id"]) for s in ours) == sorted(
        (s["agentId"], s["key"], s["sessionId"]) for s in theirs
    )
    data = load_dataset(STATE)
    for row in theirs:
        store = data.stores[f"{row['agentId']} (sqlite)"]
        entry = store.entries[row["key"]].raw
        for field in ROW_FIELDS:
            if field in row:
                assert entry.get(field) == row[field], (row["key"], field)


def test_info_names_the_era_and_the_indexes(capsys):
    assert run_cli(["info", str(STATE), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    stores = {s["agent"]: s for s in info["stores"] if s["kind"] == "openclaw-agent-sqlite"}
    assert set(stores) == {"main", "ops"}
    assert {s["schema"] for s in stores.values()} == {23}
    assert {s["app_version"] for s in stores.values()} == {EXPECTED["openclaw_version"]}
    indexed = {Path(i["path"]).parent.parent.name for i in info["memory_indexes"]}
    assert {"main", "ops"} <= indexed
    assert info["problems"] == [] or all(p["severity"] != "error" for p in info["problems"])


SEARCHES = [c for c in EXPECTED["commands"] if c["label"].startswith("sessions.search")]


@pytest.mark.parametrize("command", SEARCHES, ids=[c["label"] for c in SEARCHES])
def test_transcript_search_finds_what_openclaw_found(command):
    params = json.loads(command["argv"][command["argv"].index("--params") + 1])
    reply = command["json"]
    if not params.get("sessionKeys"):
        # with two agents OpenClaw refuses a search without keys; memlens searches each
        assert reply.get("ok") is False and "Multiple agents" in reply["error"]["message"]
        return
    keys = params["sessionKeys"]
    agent = keys[0].split(":")[1]
    data = load_dataset(STATE)
    ids = {e.session_id for e in data.stores[f"{agent} (sqlite)"].entries.values() if e.key in keys}
    with AgentDb(STATE / "agents" / agent / "agent" / "openclaw-agent.sqlite") as db:
        hits = db.search_transcripts(params["query"], limit=100)
    # the fixture's later turns were written after this search ran: leave them out
    hits = [h for h in hits if h.session_id in ids and (h.timestamp or 0) <= command["finished_ms"]]
    hits = hits[: params.get("limit", 10)]
    theirs = reply["results"]
    assert [(h.message_id, h.role, h.snippet) for h in hits] == [
        (r["messageId"], r["role"], r["snippet"]) for r in theirs
    ]
    # bm25 moves a little with the rows written since; the order and sign hold
    assert all(h.score > 0 for h in hits)


def test_budget_uses_the_model_window_and_the_session_row(capsys):
    db = STATE / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    assert run_cli(["budget", f"{db}#alpha", "--json"]) == 0
    budget = json.loads(capsys.readouterr().out)
    # the config's model (fake/m, contextWindow 16000), as the app's gauge shows it
    assert (budget["window"], budget["window_source"]) == (16000, "config")
