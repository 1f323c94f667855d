"""OpenClaw 2026.9.6 reads the sessions.json memlens updates after a written compaction.

memlens's update is checked against OpenClaw's own code three ways:

* the gateway's ``projectCompactionAccountingPatch`` (what ``sessions.compact``
  applies to the session entry after its own compaction,
  ``dist/session-accessor.sqlite-transcript-write-*.mjs``), run by Node on the
  entry as it was: memlens's entry must equal ``{...entry, ...patch}`` as
  ``JSON.stringify`` writes it (fields, values and key order; ``updatedAt`` is
  "now" on both sides);
* the legacy store loader ``loadLegacySessionStore``
  (``dist/state-migrations.legacy-session-store-*.mjs``), which 2026.9.6 uses to
  read a pre-SQLite ``sessions.json``, reads memlens's file;
* ``openclaw doctor --session-sqlite import`` imports the compacted session
  (store and transcript, with memlens's compaction entry) without an issue:
  its SQLite session row has memlens's counters, and ``openclaw sessions
  --json`` shows memlens's token count.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import subprocess
import time
from typing import TYPE_CHECKING, Any

import orjson
import pytest

from core.cli.main import run_cli
from tests.core.build import chain, lines, write_file

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow

KEY = "agent:main:main"

BEFORE = {
    "sessionId": "sess-1",
    "updatedAt": 1_790_000_000_000,
    "compactionCount": 2,
    "memoryFlushCompactionCount": 2,
    "totalTokens": 150_000,
    "totalTokensFresh": True,
    "inputTokens": 140_000,
    "outputTokens": 2_000,
    "cacheRead": 90_000,
    "cacheWrite": 1_000,
    "estimatedCostUsd": 0.42,
    "contextTokens": 200_000,
    "contextBudgetStatus": {"state": "near-limit"},
    "transcriptByteCompactionLatch": {"bytes": 123},
    "thinkingLevel": "low",
}

_FIND = """
import { readdirSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
async function load(pkg, pattern) {
  const dist = path.join(pkg, "dist");
  const name = readdirSync(dist).find((f) => pattern.test(f));
  if (!name) throw new Error(`no ${pattern} in ${dist}`);
  return { name, mod: await import(pathToFileURL(path.join(dist, name)).href) };
}
"""

PATCH_JS = (
    _FIND
    + """
const { name, mod } = await load(process.argv[2], /^session-accessor\\.sqlite-transcript-write-.*\\.mjs$/);
const fn = mod._;
if (fn.name !== "projectCompactionAccountingPatch") throw new Error(`export _ is ${fn.name}`);
const entry = JSON.parse(process.argv[3]);
const patch = fn(entry, { compactionKind: "embedded", tokensAfter: Number(process.argv[4]) });
process.stdout.write(JSON.stringify({ module: name, entry: { ...entry, ...patch } }));
"""
)

LOAD_JS = (
    _FIND
    + """
const { name, mod } = await load(process.argv[2], /^state-migrations\\.legacy-session-store-.*\\.mjs$/);
const fn = mod.t;
if (fn.name !== "loadLegacySessionStore") throw new Error(`export t is ${fn.name}`);
process.stdout.write(JSON.stringify({ module: name, store: fn(process.argv[3], { hydrateSkillPromptRefs: false }) }));
"""
)


def _node(openclaw: Any, home: Path, source: str, *args: str) -> Any:
    script = home.parent / "script.mjs"
    script.write_text(source)
    return openclaw.run(script, *args, env=openclaw.env(home), timeout=120)


def _openclaw(openclaw: Any, home: Path, *args: str) -> str:
    done = subprocess.run(
        [*openclaw.cli, *args],
        env=openclaw.env(home),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return done.stdout


@pytest.fixture
def compacted(tmp_path, capsys):
    """A legacy OpenClaw home whose session memlens compacted (``compact --write``)."""
    home = tmp_path / "home"
    sessions = home / ".openclaw" / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    transcript = sessions / "sess-1.jsonl"
    write_file(transcript, lines(chain(40)))
    old = time.time() - 60
    os.utime(transcript, (old, old))
    entry = {**BEFORE, "sessionFile": str(transcript)}
    store = {KEY: entry, "agent:main:other": {"sessionId": "other", "updatedAt": 1}}
    path = sessions / "sessions.json"
    path.write_text(json.dumps(store, indent=2) + "\n")
    t0 = int(time.time() * 1000)
    assert run_cli(["compact", str(transcript), "--write", "--json"]) == 0
    out = orjson.loads(capsys.readouterr().out)
    t1 = int(time.time() * 1000)
    assert out["written"] and out["sessions_store"]["updated"], out["sessions_store"]
    return home, transcript, path, entry, out, (t0, t1)


def test_the_entry_is_what_the_gateways_patch_makes(openclaw, compacted):
    home, _transcript, path, entry, out, (t0, t1) = compacted
    tokens_after = out["entry"]["tokensAfter"]
    expected = _node(openclaw, home, PATCH_JS, json.dumps(entry), str(tokens_after))["entry"]
    written = orjson.loads(path.read_bytes())[KEY]
    assert t0 <= written["updatedAt"] <= t1
    expected["updatedAt"] = written["updatedAt"]
    assert written == expected
    assert list(written) == list(expected)  # key order as JSON.stringify writes it
    assert written["compactionCount"] == 3 and written["totalTokens"] == tokens_after


def test_openclaw_reads_the_store_memlens_wrote(openclaw, compacted):
    home, _transcript, path, _entry, out, _times = compacted
    loaded = _node(openclaw, home, LOAD_JS, str(path))["store"]
    assert set(loaded) == {KEY, "agent:main:other"}
    e = loaded[KEY]
    assert e["compactionCount"] == 3 and e["totalTokens"] == out["entry"]["tokensAfter"]
    assert e["totalTokensFresh"] is True and e["totalTokensVersion"] == 1
    # the loader moves the flat flush counter into memoryFlush; memlens left it as it was
    assert e["memoryFlush"]["compactionCount"] == 2 and e["thinkingLevel"] == "low"
    for gone in ("inputTokens", "outputTokens", "cacheRead", "cacheWrite", "estimatedCostUsd"):
        assert gone not in e
    assert path.read_bytes().endswith(b"}\n")  # as persistLegacySessionStore writes it


def test_openclaw_imports_the_compacted_session(openclaw, compacted):
    home, transcript, _path, _entry, out, _times = compacted
    n = len(transcript.read_bytes().splitlines())  # with memlens's compaction entry
    report = _openclaw(openclaw, home, "doctor", "--session-sqlite", "import", "--non-interactive")
    assert "0 issue(s)" in report and re.search(rf"imported=\d+/{n} events", report), report
    db = home / ".openclaw" / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    with contextlib.closing(sqlite3.connect(db)) as con:
        (raw,) = con.execute(
            "select entry_json from session_nodes where session_key = ?", (KEY,)
        ).fetchone()
        (events,) = con.execute(
            "select count(*) from transcript_events where session_id = 'sess-1'"
        ).fetchone()
    imported = json.loads(raw)
    assert imported["compactionCount"] == 3
    assert imported["totalTokens"] == out["entry"]["tokensAfter"]
    assert imported["totalTokensFresh"] is True and "inputTokens" not in imported
    assert events == n
    listed = json.loads(_openclaw(openclaw, home, "sessions", "--json"))
    (row,) = [s for s in listed["sessions"] if s["key"] == KEY]
    assert row["sessionId"] == "sess-1"
    assert row["totalTokens"] == out["entry"]["tokensAfter"] and row["totalTokensFresh"] is True
