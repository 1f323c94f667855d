"""memlens on a home the real OpenClaw 2026.9.6 is writing (issue 15).

* While ``openclaw agent --local`` runs turns, memlens's live follower polls the agent
  database: it never fails, never writes, and ends with every row OpenClaw wrote,
  equal to a fresh read.
* ``openclaw sessions --json`` and memlens's session rows agree (key, session id,
  model, token counters, context window).
* A compaction asked of memlens for a database session runs through OpenClaw's own
  path: ``memlens compact SESSION --via-openclaw`` drives ``openclaw sessions compact``
  against a loopback gateway; OpenClaw writes the compaction, memlens reads it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import subprocess
import time
from typing import TYPE_CHECKING, Any

import pytest

from core.cli import main
from core.dataset import load_dataset
from core.live import LiveFollower
from core.openclaw.agentdb import AgentDb, session_path
from core.transcript import context_at
from tests.oracle.fake_llm import FakeLLM, Usage

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow

SESSION = "s1"
KEY = f"agent:main:explicit:{SESSION}"
TOKEN = "t0k-memlens-test"  # a loopback gateway's fake token


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def world(openclaw: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A home with the fake LLM running for the whole module."""
    root = tmp_path_factory.mktemp("ocstore")
    home = root / "home"
    ws = home / "ws"
    ws.mkdir(parents=True)
    state = home / ".openclaw"
    state.mkdir()
    with FakeLLM() as llm:
        model = {
            "id": "m", "name": "fake m", "contextWindow": 16000, "maxTokens": 1000,
            "input": ["text"], "reasoning": False,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        }  # fmt: skip
        port = _free_port()
        cfg = {
            "models": {"providers": {"fake": {"baseUrl": llm.base_url, "apiKey": "test-key",
                                              "api": "openai-completions", "models": [model]}}},
            "agents": {"defaults": {"model": {"primary": "fake/m"}, "workspace": str(ws)}},
            "memory": {"search": {"provider": "none"}},
            "gateway": {"mode": "local", "port": port, "bind": "loopback",
                        "auth": {"mode": "token", "token": TOKEN}},
        }  # fmt: skip
        (state / "openclaw.json").write_text(json.dumps(cfg))
        yield {"root": root, "home": home, "state": state, "ws": ws, "llm": llm, "port": port}


def _turn(openclaw: Any, world: Any, text: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*openclaw.cli, "agent", "--local", "-m", text, "--session-id", SESSION, "--json"],
        cwd=world["ws"],
        env=openclaw.env(world["home"]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _db(world: Any) -> Path:
    return world["state"] / "agents" / "main" / "agent" / "openclaw-agent.sqlite"


@pytest.fixture(scope="module")
def written(openclaw: Any, world: Any) -> Any:
    """Three turns by the real OpenClaw, the last two while memlens follows (~60 s)."""
    llm = world["llm"]
    llm.reply("Noted: deploy on Friday.", usage=Usage(prompt=1200, completion=12))
    first = _turn(openclaw, world, "Remember: deploy on Friday")
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, (out + err)[-3000:]
    data = load_dataset(world["state"])
    follower = LiveFollower(data)
    seen: list[tuple[int, float]] = []  # (rows memlens had, when)
    errors: list[str] = []
    long_text = "The deploy pipeline caches layers per branch. " * 60  # > 1 kB: zstd
    for text, reply in (
        ("Which day do we deploy?", "Friday."),
        (long_text, "Got the long message."),
    ):
        llm.reply(reply, usage=Usage(prompt=1400, completion=10))
        proc = _turn(openclaw, world, text)
        while proc.poll() is None:
            try:
                changes = follower.poll()
            except Exception as exc:  # the follower must never raise
                errors.append(repr(exc))
                break
            errors += [str(p) for p in changes.problems if p.severity == "error"]
            session = next(s for s in data.sessions if s.id == SESSION)
            seen.append((len(session.entries), time.monotonic()))
            time.sleep(0.1)
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, (out + err)[-3000:]
    follower.poll()
    follower.close()
    return {"data": data, "seen": seen, "errors": errors}


def test_memlens_follows_while_openclaw_writes(written, world):
    assert written["errors"] == []
    data = written["data"]
    live = next(s for s in data.sessions if s.id == SESSION)
    with AgentDb(_db(world)) as db:
        fresh = db.load_session(SESSION)
        rows = db.max_seqs()[SESSION]
    # every row OpenClaw wrote, and the same session as a fresh read
    assert live.db_seq == fresh.db_seq == rows
    assert [(e.id, e.type, e.parent_id) for e in live.entries] == [
        (e.id, e.type, e.parent_id) for e in fresh.entries
    ]
    assert [i.message.text() for i in context_at(live)] == [
        i.message.text() for i in context_at(fresh)
    ]
    # rows arrived while the agent ran (not only at the end)
    counts = [n for n, _ in written["seen"]]
    assert len(set(counts)) >= 2
    # the long message is stored zstd, and reads back whole
    zstd = [e for e in fresh.entries if fresh.db_bytes.get(e.line, 0) >= 1024]
    assert any("caches layers per branch" in (e.message.text() if e.message else "") for e in zstd)


def test_reading_leaves_no_file_and_changes_nothing(written, world):
    folder = _db(world).parent
    before = sorted(p.name for p in folder.iterdir())
    digest = hashlib.sha256(_db(world).read_bytes()).hexdigest()
    data = load_dataset(world["state"])
    assert any(s.id == SESSION for s in data.sessions)
    with AgentDb(_db(world)) as db:
        db.search_transcripts("deploy")
        db.stats()
    assert sorted(p.name for p in folder.iterdir()) == before
    assert hashlib.sha256(_db(world).read_bytes()).hexdigest() == digest


def test_sessions_agree_with_openclaw(openclaw, written, world, capsys):
    done = subprocess.run(
        [*openclaw.cli, "sessions", "--json"],
        cwd=world["ws"],
        env=openclaw.env(world["home"]),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    theirs = json.loads(done.stdout[done.stdout.index("{") :])
    assert main(["sessions", str(world["state"]), "--json"]) == 0
    ours = json.loads(capsys.readouterr().out)["sessions"]
    assert [s["key"] for s in ours] == [s["key"] for s in theirs["sessions"]] == [KEY]
    assert ours[0]["id"] == theirs["sessions"][0]["sessionId"] == SESSION
    assert ours[0]["path"] == session_path(_db(world), SESSION)
    assert ours[0]["storage"] == "sqlite"
    data = load_dataset(world["state"])
    row = data.stores["main (sqlite)"].entries[KEY].raw
    for field in ("model", "modelProvider", "inputTokens", "outputTokens", "totalTokens",
                  "contextTokens", "updatedAt"):  # fmt: skip
        assert row.get(field) == theirs["sessions"][0].get(field), field


def _gateway(openclaw: Any, world: Any) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [*openclaw.cli, "gateway", "run", "--port", str(world["port"])],
        cwd=world["ws"],
        env=openclaw.env(world["home"]),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(
            ("127.0.0.1", world["port"]), timeout=1
        ):
            return proc
        if proc.poll() is not None:
            break
        time.sleep(1)
    os.killpg(proc.pid, signal.SIGKILL)
    pytest.fail("the loopback gateway did not start")


def test_compaction_on_demand_runs_through_openclaw(openclaw, written, world, capsys, monkeypatch):
    ref = session_path(_db(world), SESSION)
    # memlens itself refuses to write into the database
    assert main(["compact", ref, "--write"]) == 1
    assert "never writes" in capsys.readouterr().err
    with AgentDb(_db(world)) as db:
        before = db.load_session(SESSION)
    world["llm"].reply("## Decisions\nDeploy on Friday.", usage=Usage(prompt=900, completion=30))
    gateway = _gateway(openclaw, world)
    try:
        monkeypatch.setenv("OPENCLAW_GATEWAY_TOKEN", TOKEN)
        monkeypatch.setenv("PATH", f"{openclaw.node.parent}{os.pathsep}{os.environ['PATH']}")
        command = " ".join(openclaw.cli)
        code = main(["compact", ref, "--via-openclaw", "--openclaw", command, "--json",
                     "--timeout", "240"])  # fmt: skip
        out = capsys.readouterr()
        assert code == 0, out.err
    finally:
        os.killpg(gateway.pid, signal.SIGKILL)
        gateway.wait(timeout=30)
    payload = json.loads(out.out)
    assert payload["via"] == "openclaw" and payload["compacted"] is True
    assert payload["key"] == KEY
    (new,) = payload["new_compactions"]
    with AgentDb(_db(world)) as db:
        after = db.load_session(SESSION)
    entry = after.by_id[new["id"]]
    assert entry.type == "compaction" and entry.id not in before.by_id
    assert entry.raw["firstKeptEntryId"] == payload["result"]["firstKeptEntryId"]
    items = context_at(after)
    assert items[0].entry.id == entry.id  # the summary first, as OpenClaw replays it
    assert "Deploy on Friday" in items[0].message.text()
