"""Regenerate the real OpenClaw 2026.9.6 home committed in ``tests/data/openclaw-2026.9.6``.

Why: memlens reads OpenClaw's per-agent SQLite store
(``$STATE/agents/<agentId>/agent/openclaw-agent.sqlite``) and reproduces its memory
search. The fast tests must compare memlens with what OpenClaw itself wrote and
reported, without Node. So this script runs the *real* OpenClaw (the pinned
2026.9.6 of :mod:`tests.oracle.agents`, Node 24) fully offline against
:class:`tests.oracle.fake_llm.FakeLLM` on 127.0.0.1, and records OpenClaw's own
outputs (``sessions --json``, ``memory status --json``, ``memory search --json``,
the ``sessions compact`` reply, the gateway's ``sessions.search``) next to the home.

How::

    python -m tests.oracle.make_openclaw_home OUTDIR            # whole fixture (8-12 min)
    python -m tests.oracle.make_openclaw_home OUTDIR --work DIR  # run in DIR (default below)

OUTDIR receives ``home/.openclaw`` (the hybrid home: agents ``main`` and ``ops``),
``fts-home/.openclaw`` (an FTS-only home, ``memory.search.provider: "none"``),
``expected.json`` (every command: argv, times, rc, parsed JSON or raw stdout);
``README.md`` there is written by hand and left alone. OpenClaw runs with ``HOME`` = ``WORK/home`` and
``WORK/fts-home``; the default WORK is the fixed ``/tmp/memlens-openclaw-fixture`` so
that the paths OpenClaw records (workspace ``cwd`` in session headers, config
paths, ``sessions --json`` ``path``) are the same at every regeneration. The
environment is reduced to HOME, PATH (Node 24 first), TZ=UTC, LANG and NO_COLOR, so
nothing of the machine's environment reaches the databases (OpenClaw still records
the kernel release, Node version and its own command line in trajectory rows).
With two agents OpenClaw needs ``agents.ownership: "explicit"`` and an explicit
``--agent`` for ``agent``, ``memory search`` and ``sessions``.

What the hybrid home gets, in this order (each command is a real OpenClaw run):

1. ``agent --local --agent main --session-id alpha``: a short turn; a turn in which
   the fake model calls OpenClaw's ``read`` tool on ``deploy-checklist.md`` and then
   answers; a turn with a ~4.4 kB message (stored zstd: event_json NULL).
2. ``--session-id beta`` in ``main``: two short turns; ``--agent ops --session-id
   gamma``: one turn.
3. ``gateway run`` on a loopback port (token auth, fake token), then
   ``sessions compact agent:main:explicit:alpha`` through it (OpenClaw writes the
   compaction entry itself; the summary comes from the fake model), and the
   ``gateway call sessions.search`` of :data:`SESSION_SEARCHES` (session transcript
   FTS; the CLI has no other route to it). The gateway's process
   group is killed afterwards.
4. One more ``alpha`` turn after the compaction.
5. ``memory index --force`` (both agents; embeddings from the fake server, 8 dims),
   ``memory status --json`` per agent, ``memory search --json`` for the queries in
   :data:`SEARCHES`, ``sessions --json`` per agent and ``--all-agents``.
6. The FTS-only home: ``memory index --force`` and :data:`FTS_SEARCHES`.

Not deterministic (OpenClaw does not allow it): entry ids (UUIDs), run ids, every
timestamp (so decay of the dated notes depends on the run date, which
``expected.json`` records per command), the loopback ports in ``openclaw.json``, and
the compaction summary's wording around the fake text. The fake model's answers and
embeddings are deterministic (see fake_llm). The memory files' mtimes are pinned
(:data:`MTIMES`).

Clean-up after OpenClaw exits: OpenClaw checkpoints its WAL with TRUNCATE when it
closes, so the ``-wal`` files are empty; empty ``-wal`` and ``-shm`` files are left
out of the copy, as are runtime droppings (``tmp``, ``cache``, ``media``) and the
generated key material: the global ``state/openclaw.sqlite`` (gateway device private
key, config HMAC key; its ``agent_databases`` registry goes to expected.json) and
``config-journal-fingerprint.key`` (see :func:`_copy_state`). The databases themselves are copied byte for
byte, never opened for writing. A ``-wal`` that is not empty makes the script fail.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.oracle.agents import OPENCLAW_VERSION, OpenClaw, openclaw
from tests.oracle.fake_llm import Answer, FakeLLM, ToolCall, Usage

DEFAULT_WORK = Path("/tmp/memlens-openclaw-fixture")
GATEWAY_TOKEN = "fixture-gateway-token-not-a-secret"
API_KEY = "fixture-api-key-not-a-secret"

MAIN_FILES = {
    "MEMORY.md": (
        "# Memory\n\n"
        "## Deploys\n\n"
        "Production deploys happen on Thursday afternoons; nothing ships on Friday.\n"
        "The release captain is Priya Raman. Rollbacks go through `make rollback`.\n\n"
        "## Databases\n\n"
        "The orders service uses the Postgres database `orders_prod` on host pg-east-2.\n"
        "Analytics reads from the ClickHouse cluster `clicks_warehouse`.\n\n"
        "## People\n\n"
        "Marco Bellini owns billing. Aiko Tanaka is the on-call lead for payments.\n"
    ),
    "memory/2026-11-01.md": (
        "# 2026-11-01\n\n"
        "Moved the weekly deploy from Friday to Thursday after the October incident.\n"
        "Priya Raman agreed to be release captain until the end of the year.\n\n"
        "The `orders_prod` database ran out of connections at 14:05; raised the pool "
        "limit to 200 on pg-east-2.\n"
    ),
    "memory/2026-11-20.md": (
        "# 2026-11-20\n\n"
        "Aiko Tanaka rotated the payments API keys; the old keys stop working on "
        "December 1.\n\n"
        "Deploy freeze for the holiday season starts on December 15. The database "
        "migration for invoices must land before it.\n"
    ),
    "memory/projects.md": (
        "# Projects\n\n"
        "## Atlas\n\n"
        "Atlas is the new search service. Repository `atlas-search`, owner Marco Bellini.\n"
        "It indexes product listings into OpenSearch every ten minutes.\n\n"
        "## Heron\n\n"
        "Heron migrates invoices from the legacy MySQL database `billing_legacy` to "
        "`orders_prod`. Target date: December 10.\n"
    ),
    "deploy-checklist.md": (
        "# Deploy checklist\n\n"
        "1. Announce in #releases.\n2. Run `make deploy`.\n3. Watch the dashboards for 15 minutes.\n"
    ),
}
OPS_FILES = {
    "MEMORY.md": (
        "# Ops memory\n\n"
        "Pager rotation changes every Monday at 09:00 UTC.\n"
        "The staging cluster is `k8s-staging-west`; production is `k8s-prod-east`.\n"
    ),
}
FTS_FILES = {
    "MEMORY.md": (
        "# Memory\n\n"
        "The deploy runs every Thursday via `make deploy`.\n"
        "Backups of `orders_prod` run nightly at 02:00 UTC.\n"
    ),
}
# Pinned file mtimes (seconds): OpenClaw records them (memory_index_sources.mtime,
# provenance observedAt); dated notes take their date from the path anyway.
MTIMES = {
    "MEMORY.md": 1_795_500_000,
    "memory/2026-11-01.md": 1_793_534_400,  # 2026-11-01T10:00Z
    "memory/2026-11-20.md": 1_795_176_000,  # 2026-11-20T10:00Z
    "memory/projects.md": 1_795_000_000,
    "deploy-checklist.md": 1_795_000_000,
}

LONG_MESSAGE = (
    "Here is the incident write-up for the orders outage; please keep it in mind.\n\n"
    + "\n".join(
        f"{i:02d}. At 14:{i:02d} the orders_prod pool on pg-east-2 reported "
        f"{180 + i} active connections while the checkout service retried "
        f"payment {1000 + i} for customer account ACME-{i:03d}."
        for i in range(1, 26)
    )
    + "\n\nThe fix was to raise the pool limit to 200 and add a circuit breaker.\n"
)

ALPHA = "alpha"
BETA = "beta"
GAMMA = "gamma"
ALPHA_KEY = f"agent:main:explicit:{ALPHA}"
BETA_KEY = f"agent:main:explicit:{BETA}"
GAMMA_KEY = f"agent:ops:explicit:{GAMMA}"

TURNS: list[dict[str, Any]] = [
    # agent, session id, message, the fake model's answer(s)
    {
        "agent": "main",
        "session": ALPHA,
        "message": "Remember: deploys are on Thursday.",
        "reply": "Noted: deploys are on Thursday.",
    },
    {
        "agent": "main",
        "session": ALPHA,
        "message": "TOOLTURN please read deploy-checklist.md and tell me step 2.",
        "tool": {"id": "call_read_1", "name": "read", "arguments": {"path": "deploy-checklist.md"}},
        "reply": "Step 2 of the checklist is: run `make deploy`.",
    },
    {
        "agent": "main",
        "session": ALPHA,
        "message_file": LONG_MESSAGE,
        "reply": "Got the incident write-up: pool limit raised to 200, circuit breaker added.",
    },
    {
        "agent": "main",
        "session": BETA,
        "message": "Who owns billing?",
        "reply": "Marco Bellini owns billing.",
    },
    {
        "agent": "main",
        "session": BETA,
        "message": "And who is on call for payments?",
        "reply": "Aiko Tanaka is the on-call lead for payments.",
    },
    {
        "agent": "ops",
        "session": GAMMA,
        "message": "Which cluster is staging?",
        "reply": "Staging is k8s-staging-west.",
    },
]
AFTER_COMPACTION = {
    "agent": "main",
    "session": ALPHA,
    "message": "After the compaction: what is the deploy day?",
    "reply": "Deploys are on Thursday; nothing ships on Friday.",
}
SUMMARY_TEXT = (
    "## Goal\nKeep deploy facts.\n\n## Progress\n- Deploys are on Thursday.\n"
    "- Checklist step 2 is `make deploy`.\n- Orders incident: pool limit 200."
)

# (label, extra argv after ``memory search``); each runs with --json.
SEARCHES: list[tuple[str, list[str]]] = [
    ("keyword", ["--query", "deploy"]),
    ("and_words", ["--query", "orders_prod database"]),
    ("person", ["--query", "Priya Raman release captain"]),
    ("partial_words", ["--query", "Heron kubernetes zebra"]),
    ("path_projects", ["--query", "projects.md"]),
    ("path_memory", ["--query", "MEMORY"]),
    ("dated_notes", ["--query", "Thursday Friday deploy"]),
    ("no_match", ["--query", "xylophone quasar"]),
    ("max_results_2", ["--query", "deploy", "--max-results", "2"]),
    ("min_score_0", ["--query", "December", "--min-score", "0"]),
    ("ops_agent", ["--query", "staging cluster", "--agent", "ops"]),
]
FTS_SEARCHES: list[tuple[str, list[str]]] = [
    ("keyword", ["--query", "deploy"]),
    ("and_words", ["--query", "orders_prod backups"]),
    ("no_match", ["--query", "xylophone"]),
]
SESSION_SEARCHES: list[tuple[str, dict[str, Any]]] = [
    # sessions.search: one agent per call; agentId alone needs sessionKeys
    ("deploy", {"query": "deploy", "sessionKeys": [ALPHA_KEY, BETA_KEY]}),
    ("pool_limit", {"query": "pool limit", "sessionKeys": [ALPHA_KEY, BETA_KEY], "limit": 5}),
    ("billing", {"query": "billing", "sessionKeys": [BETA_KEY]}),
    ("ops_staging", {"query": "staging", "sessionKeys": [GAMMA_KEY]}),
    ("default_agent", {"query": "deploy"}),
]


def _now() -> tuple[int, str]:
    ms = int(time.time() * 1000)
    return ms, datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Runner:
    """Runs OpenClaw commands in one HOME and records them."""

    def __init__(self, oc: OpenClaw, home: Path, log: list[dict[str, Any]]) -> None:
        self.oc = oc
        self.home = home
        self.log = log
        self.env = {
            "HOME": str(home),
            "PATH": f"{oc.node.parent}{os.pathsep}/usr/local/bin:/usr/bin:/bin",
            "TZ": "UTC",
            "LANG": "C.UTF-8",
            "NO_COLOR": "1",
        }

    def run(
        self,
        label: str,
        *args: str,
        check: bool = True,
        timeout: float = 600,
        cwd: Path | None = None,
        parse: bool = True,
    ) -> dict[str, Any]:
        t0, iso0 = _now()
        done = subprocess.run(
            [*self.oc.cli, *args],
            env=self.env,
            cwd=cwd or self.home,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        t1, iso1 = _now()
        rec: dict[str, Any] = {
            "label": label,
            "argv": ["openclaw", *args],
            "started_ms": t0,
            "started": iso0,
            "finished_ms": t1,
            "finished": iso1,
            "rc": done.returncode,
            "stdout": done.stdout,
        }
        if parse:
            # the parsed JSON replaces stdout (Python's json round-trips OpenClaw's numbers)
            try:
                rec["json"] = json.loads(done.stdout)
                del rec["stdout"]
            except ValueError:
                rec["json"] = None
        self.log.append(rec)
        print(f"[{iso1}] {label}: rc {done.returncode} in {(t1 - t0) / 1000:.1f}s", flush=True)
        if check and done.returncode != 0:
            raise RuntimeError(f"{label} failed: {(done.stdout + done.stderr)[-3000:]}")
        return rec


def _write_files(workspace: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if rel in MTIMES:
            os.utime(path, (MTIMES[rel], MTIMES[rel]))


def _config(llm: FakeLLM, state: Path, gateway_port: int) -> dict[str, Any]:
    model = {
        "id": "m",
        "name": "fake m",
        "contextWindow": 16000,
        "maxTokens": 1000,
        "input": ["text"],
        "reasoning": False,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
    }
    return {
        "models": {
            "providers": {
                "fake": {
                    "baseUrl": llm.base_url,
                    "apiKey": API_KEY,
                    "api": "openai-completions",
                    "models": [model],
                }
            }
        },
        "agents": {
            "ownership": "explicit",
            "defaults": {"model": {"primary": "fake/m"}},
            "entries": {
                "main": {"name": "Main", "workspace": str(state / "workspace")},
                "ops": {"name": "Ops", "workspace": str(state / "workspace-ops")},
            },
        },
        "memory": {
            "search": {
                "provider": "openai-compatible",
                "model": "fake-embed",
                "remote": {"baseUrl": llm.base_url, "apiKey": API_KEY},
            }
        },
        "gateway": {
            "mode": "local",
            "port": gateway_port,
            "bind": "loopback",
            "auth": {"mode": "token", "token": GATEWAY_TOKEN},
        },
    }


INTERNAL = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)


def _last_user(body: Any) -> tuple[str, bool]:
    """The last real user message (OpenClaw appends an internal-context one) and
    whether a tool result follows it."""
    msgs = body.get("messages", [])
    tool_after = False
    for msg in reversed(msgs):
        if msg.get("role") == "tool":
            tool_after = True
        if msg.get("role") == "user":
            text = _text(msg.get("content"))
            if INTERNAL not in text:
                return text, tool_after
    return "", tool_after


def _last_user_text(body: Any) -> str:
    return _last_user(body)[0]


def _script(llm: FakeLLM, turns: list[dict[str, Any]]) -> None:
    """Answer by content: summaries, tool follow-ups, then each turn's message."""

    def is_summary(body: Any) -> bool:
        return "context summarization assistant" in json.dumps(body.get("messages", [])[:1])

    llm.when(is_summary, Answer(SUMMARY_TEXT, usage=Usage(prompt=900, completion=60)))
    for turn in turns:
        marker = (turn.get("message") or turn.get("message_file") or "")[:40]
        tool = turn.get("tool")
        if tool:

            def after_tool(body: Any, marker: str = marker) -> bool:
                text, tool_after = _last_user(body)
                return marker in text and tool_after

            def wants_tool(body: Any, marker: str = marker) -> bool:
                return marker in _last_user_text(body)

            llm.when(after_tool, Answer(turn["reply"], usage=Usage(prompt=1400, completion=14)))
            llm.when(
                wants_tool,
                Answer(
                    tool_calls=(ToolCall(tool["id"], tool["name"], tool["arguments"]),),
                    usage=Usage(prompt=1300, completion=20),
                ),
            )
        else:

            def says(body: Any, marker: str = marker) -> bool:
                return marker in _last_user_text(body)

            llm.when(says, Answer(turn["reply"], usage=Usage(prompt=1200, completion=12)))


def _turn(r: Runner, i: int, turn: dict[str, Any], work: Path) -> None:
    args = ["agent", "--local", "--agent", turn["agent"], "--session-id", turn["session"], "--json"]
    if "message_file" in turn:
        msg = work / f"message-{i}.txt"
        msg.write_text(turn["message_file"])
        args += ["--message-file", str(msg)]
    else:
        args += ["-m", turn["message"]]
    ws = r.home / ".openclaw" / ("workspace" if turn["agent"] == "main" else "workspace-ops")
    r.run(f"turn {i} {turn['agent']}/{turn['session']}", *args, cwd=ws)


def _wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"gateway exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(1)
    raise RuntimeError(f"gateway did not listen on {port} within {timeout}s")


def _gateway_phase(r: Runner, port: int, work: Path, *, quick: bool = False) -> None:
    """Start the loopback gateway, compact alpha, search transcripts, stop it."""
    url = f"ws://127.0.0.1:{port}"
    log = (work / "gateway.log").open("wb")
    t0, iso0 = _now()
    proc = subprocess.Popen(
        [*r.oc.cli, "gateway", "run", "--port", str(port)],
        env=r.env,
        cwd=r.home,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        _wait_port(port, proc, 240)
        r.log.append(
            {
                "label": "gateway run",
                "argv": ["openclaw", "gateway", "run", "--port", str(port)],
                "started_ms": t0,
                "started": iso0,
                "listening_ms": _now()[0],
            }
        )
        auth = ["--token", GATEWAY_TOKEN, "--url", url]
        r.run(
            "sessions compact",
            "sessions",
            "compact",
            ALPHA_KEY,
            "--agent",
            "main",
            *auth,
            "--json",
            "--timeout",
            "180000",
        )
        for label, params in [] if quick else SESSION_SEARCHES:
            r.run(
                f"sessions.search {label}",
                "gateway",
                "call",
                "sessions.search",
                "--params",
                json.dumps(params),
                *auth,
                "--json",
                "--timeout",
                "60000",
                check=False,
            )
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        log.close()


def _requests_summary(llm: FakeLLM) -> dict[str, Any]:
    kinds: dict[str, int] = {}
    for req in llm.requests:
        if req.path.endswith("/embeddings"):
            kind = "embeddings"
        elif req.path.endswith("/chat/completions"):
            body = req.body if isinstance(req.body, dict) else {}
            if req.answer is not None and req.answer.text == SUMMARY_TEXT:
                kind = "chat:summary"
            elif req.answer is not None and req.answer.tool_calls:
                kind = "chat:tool_call"
            elif _last_user(body)[1]:
                kind = "chat:after_tool"
            elif req.answer is not None and req.answer.text == "(nothing scripted)":
                kind = "chat:unscripted"
            else:
                kind = "chat:turn"
        else:
            kind = f"other:{req.path}"
        kinds[kind] = kinds.get(kind, 0) + 1
    return {"count": len(llm.requests), "by_kind": kinds}


# runtime droppings; plugin-skills holds symlinks into the installed OpenClaw package
SKIP_DIRS = {
    "logs",
    "identity",
    "devices",
    "tmp",
    "cache",
    "media",
    "canvas",
    "completions",
    "plugin-skills",
}
# Generated key material: the global state DB holds the gateway's device identity
# (an Ed25519 private key) and the config-revision HMAC key; the fingerprint key is
# another random secret. They are not needed to read the agent stores; the
# agent_databases registry of the global DB is recorded in expected.json instead.
SKIP_FILES = {
    "config-journal-fingerprint.key",
    "state/openclaw.sqlite",
    "state/openclaw.sqlite-wal",
    "state/openclaw.sqlite-shm",
}


def _copy_state(src: Path, dst: Path) -> list[str]:
    """Copy the state dir; leave out empty -wal/-shm and runtime droppings. Returns what was left out."""
    left_out: list[str] = []
    if dst.exists():
        shutil.rmtree(dst)
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if rel.parts[0] in SKIP_DIRS:
            if len(rel.parts) == 1:
                left_out.append(f"{rel}/")
            continue
        if str(rel) in SKIP_FILES:
            left_out.append(str(rel))
            continue
        if path.is_dir():
            continue
        name = path.name
        if name.endswith("-wal"):
            if path.stat().st_size:
                raise RuntimeError(f"{path}: WAL not checkpointed ({path.stat().st_size} B)")
            left_out.append(str(rel))
            continue
        if name.endswith("-shm") or name.endswith(".lock") or name.endswith("-journal"):
            left_out.append(str(rel))
            continue
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    return left_out


def _registry(state: Path) -> dict[str, Any]:
    """The global state DB's agent_databases rows and schema version (read-only, immutable)."""
    db = state / "state" / "openclaw.sqlite"
    if not db.exists():
        return {}
    con = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        cols = ["agent_id", "path", "schema_version", "last_seen_at", "size_bytes"]
        rows = con.execute(f"select {', '.join(cols)} from agent_databases order by agent_id")
        return {
            "user_version": con.execute("pragma user_version").fetchone()[0],
            "agent_databases": [dict(zip(cols, r, strict=True)) for r in rows],
        }
    finally:
        con.close()


def make_hybrid(
    oc: OpenClaw, work: Path, log: list[dict[str, Any]], *, quick: bool = False
) -> dict[str, Any]:
    home = work / "home"
    state = home / ".openclaw"
    state.mkdir(parents=True)
    _write_files(state / "workspace", MAIN_FILES)
    _write_files(state / "workspace-ops", OPS_FILES)
    extra: dict[str, Any] = {}
    with FakeLLM(model="m", embedding_dim=8) as llm:
        port = _free_port()
        (state / "openclaw.json").write_text(json.dumps(_config(llm, state, port), indent=2) + "\n")
        _script(llm, [*TURNS, AFTER_COMPACTION])
        r = Runner(oc, home, log)
        r.run("version", "--version", parse=False)
        for i, turn in enumerate(TURNS, 1):
            _turn(r, i, turn, work)
        _gateway_phase(r, port, work, quick=quick)
        _turn(r, len(TURNS) + 1, AFTER_COMPACTION, work)
        r.run("memory index", "memory", "index", "--force", parse=False)
        for agent in [] if quick else ["main", "ops"]:
            r.run(f"memory status {agent}", "memory", "status", "--agent", agent, "--json")
        if not quick:
            for label, argv in SEARCHES:
                agent = [] if "--agent" in argv else ["--agent", "main"]
                r.run(f"memory search {label}", "memory", "search", *argv, *agent, "--json")
        for agent in [] if quick else ["main", "ops"]:
            r.run(f"sessions {agent}", "sessions", "--agent", agent, "--json")
        if not quick:
            r.run("sessions all", "sessions", "--all-agents", "--json")
        extra["fake_llm"] = _requests_summary(llm)
        # every request, for debugging (not part of the fixture)
        dump = [{"path": q.path, "body": q.body} for q in llm.requests]
        (work / "fake-llm-requests.json").write_text(json.dumps(dump, indent=1) + "\n")
    return extra


def make_fts(oc: OpenClaw, work: Path, log: list[dict[str, Any]], *, quick: bool = False) -> None:
    home = work / "fts-home"
    state = home / ".openclaw"
    state.mkdir(parents=True)
    _write_files(state / "workspace", FTS_FILES)
    config = {
        "agents": {"defaults": {"workspace": str(state / "workspace")}},
        "memory": {"search": {"provider": "none"}},
    }
    (state / "openclaw.json").write_text(json.dumps(config, indent=2) + "\n")
    r = Runner(oc, home, log)
    r.run("fts memory index", "memory", "index", "--force", parse=False)
    if not quick:
        r.run("fts memory status", "memory", "status", "--json")
    for label, argv in [] if quick else FTS_SEARCHES:
        r.run(f"fts memory search {label}", "memory", "search", *argv, "--json")


def generate(out: Path, work: Path = DEFAULT_WORK, *, quick: bool = False) -> dict[str, Any]:
    """Run everything in *work* and write the fixture into *out*; return expected.json's data.

    *quick* (for the fixture test) leaves out the memory searches and status, the
    gateway's transcript searches and the ``sessions`` listings, and builds the
    FTS-only home in a thread beside the hybrid one: the homes are the same.
    """
    oc = openclaw()
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    hybrid_log: list[dict[str, Any]] = []
    fts_log: list[dict[str, Any]] = []
    if quick:  # the FTS-only home is independent: build it beside the hybrid one
        fts = threading.Thread(target=make_fts, args=(oc, work, fts_log), kwargs={"quick": True})
        fts.start()
        try:
            extra = make_hybrid(oc, work, hybrid_log, quick=True)
        finally:
            fts.join()
        if not any(c["label"] == "fts memory index" and c["rc"] == 0 for c in fts_log):
            raise RuntimeError("the FTS-only home failed")
    else:
        extra = make_hybrid(oc, work, hybrid_log)
        make_fts(oc, work, fts_log)
    out.mkdir(parents=True, exist_ok=True)
    left_out = {
        name: _copy_state(work / name / ".openclaw", out / name / ".openclaw")
        for name in ("home", "fts-home")
    }
    registry = {name: _registry(work / name / ".openclaw") for name in ("home", "fts-home")}
    data = {
        "openclaw_version": OPENCLAW_VERSION,
        "version_output": hybrid_log[0]["stdout"].strip(),
        "work_dir": str(work),
        "homes": {"home": str(work / "home"), "fts-home": str(work / "fts-home")},
        "sessions": {
            "alpha": ALPHA_KEY,
            "beta": BETA_KEY,
            "gamma": GAMMA_KEY,
        },
        "commands": hybrid_log,
        "fts_commands": fts_log,
        "left_out_of_copy": left_out,
        "global_state_db": registry,
        **extra,
    }
    (out / "expected.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return data


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    args = parser.parse_args(argv)
    generate(args.out.resolve(), args.work.resolve())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
