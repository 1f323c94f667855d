"""``memlens memory search|status|files|chunks`` on OpenClaw homes built in tmp_path."""

from __future__ import annotations

import io
import json
import sqlite3
import sys
from typing import TYPE_CHECKING, Any

import pytest

from core.cli.main import run_cli
from core.cli.memory import index_summary
from core.openclaw.memindex_identity import expected_model, provider_key, scope_hash
from core.openclaw.memory_home import parse_now, resolve_home
from core.openclaw.memsearch_embed import settings_from_config
from tests.core.test_memindex import V23_META, f64, make_v23
from tests.llm_server import Reply

if TYPE_CHECKING:
    from pathlib import Path

NOW_ISO = "2026-11-26T13:33:20Z"
NOW = 1_795_700_000_000


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.BytesIO(), io.BytesIO()
    old = sys.stdout, sys.stderr
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    try:
        code = run_cli(list(argv))
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        got = out.getvalue(), err.getvalue()
        sys.stdout, sys.stderr = old
    return code, got[0].decode("utf-8"), got[1].decode("utf-8")


def make_home(
    tmp_path: Path,
    search: dict[str, Any] | None = None,
    agent: str = "main",
    built_with: dict[str, Any] | None = None,
) -> Path:
    """``<tmp>/.openclaw`` with one agent database, a workspace and openclaw.json.

    The index's meta is what OpenClaw writes when it indexes with *built_with* (default:
    the config's *search*), so its identity check passes unless they differ.
    """
    state = tmp_path / ".openclaw"
    folder = state / "agents" / agent / "agent"
    folder.mkdir(parents=True)
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\nThe deploy runs on Friday.\n")
    (ws / "memory" / "2026-11-25.md").write_text("deploy notes\n")
    cfg: dict[str, Any] = {"agents": {"defaults": {"workspace": str(ws)}}}
    if search is not None:
        cfg["memory"] = {"search": search}
    built = dict(
        cfg,
        memory={
            "search": built_with
            or search
            or {"provider": "openai-compatible", "model": "fake-embed"}
        },
    )
    settings = settings_from_config(built, agent)
    meta = dict(
        V23_META,
        provider=settings.provider,
        model=expected_model(settings) or V23_META["model"],
        providerKey=provider_key(settings),
        scopeHash=scope_hash(settings, ws),
        sources=list(settings.indexed_sources),
    )
    make_v23(
        folder / "openclaw-agent.sqlite",
        [
            {"id": "m", "path": "MEMORY.md", "text": "# Memory\nThe deploy runs on Friday.",
             "embedding": f64(0.6, 0.8, 0.0)},
            {"id": "d", "path": "memory/2026-11-25.md", "text": "deploy notes",
             "embedding": f64(1.0, 0.0, 0.0)},
            *({"id": f"f{i}", "path": f"memory/t{i}.md", "text": f"tea {i}",
               "embedding": f64(0.0, 0.0, 1.0)} for i in range(6)),
        ],
        meta=meta,
    )  # fmt: skip
    (state / "openclaw.json").write_text(json.dumps(cfg))
    return tmp_path


def test_search_hybrid_through_the_configured_endpoint(tmp_path: Path, server: Any) -> None:
    server.add(Reply(200, {"data": [{"index": 0, "embedding": [1.0, 0.0, 0.0]}]}))
    home = make_home(
        tmp_path,
        {"provider": "openai-compatible", "model": "fake-embed",
         "remote": {"baseUrl": server.url + "/v1", "apiKey": "test-key"}},
    )  # fmt: skip
    code, out, err = _run("memory", "search", str(home), "deploy", "--now", NOW_ISO, "--json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert data["mode"] == "hybrid" and data["reason"] is None
    assert data["now"] == NOW
    assert data["index"].endswith("agents/main/agent/openclaw-agent.sqlite")
    first = data["results"][0]
    assert {"path", "startLine", "endLine", "score", "vectorScore", "textScore", "snippet",
            "source", "memlens"} <= set(first)  # fmt: skip
    assert {"keywordScore", "pathScore", "decayFactor", "ageDays", "importanceMultiplier",
            "rank", "belowMinScore"} <= set(first["memlens"])  # fmt: skip
    dated = next(r for r in data["results"] if r["path"] == "memory/2026-11-25.md")
    assert dated["vectorScore"] == 1.0
    assert dated["memlens"]["ageDays"] == pytest.approx(1 + 13.5556 / 24, abs=1e-3)
    assert "candidates" not in data
    assert server.seen[0].body == {"model": "fake-embed", "input": ["deploy"]}


def test_search_says_when_it_ran_keyword_only(tmp_path: Path) -> None:
    home = make_home(
        tmp_path,
        {"provider": "openai-compatible", "model": "fake-embed",
         "remote": {"baseUrl": "http://127.0.0.1:9/v1", "apiKey": "k"}},
    )  # fmt: skip
    code, out, _ = _run("memory", "search", str(home), "deploy", "--json", "--candidates")
    data = json.loads(out)
    assert code == 0 and data["mode"] == "fts-only"
    assert data["reason"].startswith("the query could not be embedded: cannot reach")
    assert data["results"] and "vectorScore" not in data["results"][0]
    assert len(data["candidates"]) >= len(data["results"])
    code, out, _ = _run("memory", "search", str(home), "deploy")
    assert code == 0 and out.startswith("fts-only search of ") and "could not be embedded" in out


def test_workspace_from_either_roster(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    cfg = {"agents": {"entries": {"main": {"workspace": str(tmp_path / "elsewhere")}}}}
    (home / ".openclaw" / "openclaw.json").write_text(json.dumps(cfg))
    assert resolve_home(home).workspace == tmp_path / "elsewhere"
    cfg = {"agents": {"list": [{"id": "main", "workspace": "/x/y"}]}}
    (home / ".openclaw" / "openclaw.json").write_text(json.dumps(cfg))
    assert str(resolve_home(home).workspace) == "/x/y"
    (home / ".openclaw" / "openclaw.json").write_text("{}")
    assert resolve_home(home).workspace == home / ".openclaw" / "workspace"


def test_now_from_option_env_or_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_now(NOW_ISO) == NOW
    assert parse_now(str(NOW)) == NOW
    assert parse_now("2026-11-26T13:33:20") == NOW  # naive means UTC
    assert parse_now(None, {"MEMLENS_NOW": NOW_ISO}) == NOW
    assert abs(parse_now(None, {}) - parse_now(None, {})) < 1000
    with pytest.raises(ValueError, match="not an ISO time"):
        parse_now("next tuesday")


def test_status_files_chunks(tmp_path: Path) -> None:
    built = {"provider": "openai-compatible", "model": "fake-embed"}
    home = make_home(tmp_path, {"provider": "none"}, built_with=built)
    (tmp_path / "ws" / "memory" / "2026-11-25.md").write_text("changed\n")
    (tmp_path / "ws" / "memory" / "new.md").write_text("new\n")
    code, out, _ = _run("memory", "status", str(home), "--json")
    [entry] = json.loads(out)
    st = entry["status"]
    assert code == 0 and entry["agentId"] == "main"
    # the provider OpenClaw is asked for (the config's), not the one that built the index
    assert (st["files"], st["chunks"], st["provider"], st.get("model")) == (8, 8, "none", None)
    assert st["memlens"]["meta"]["provider"] == "openai-compatible"
    assert st["requestedProvider"] == "none" and st["memlens"]["searchMode"] == "fts-only"
    assert st["sourceCounts"][0] == {"source": "memory", "files": 8, "chunks": 8}
    assert st["fts"]["available"] and st["vector"]["index"]["state"] == "complete"
    assert st["vector"]["dims"] == 3 and st["cache"]["entries"] == 0
    assert st["vector"]["enabled"] is False  # provider none
    code, out, _ = _run("memory", "files", str(home), "--json")
    states = {f["path"]: f["state"] for f in json.loads(out)["files"]}
    assert states["MEMORY.md"] == "stale"  # the test indexed a different hash
    assert states["memory/new.md"] == "new-unindexed"
    code, out, _ = _run("memory", "chunks", str(home), "--path", "MEMORY.md", "--json")
    (chunk,) = json.loads(out)["chunks"]
    assert (chunk["startLine"], chunk["dims"], chunk["embedding"]) == (1, 3, "ok")
    # built for another provider than the config asks: OpenClaw pauses the search
    code, out, _ = _run("memory", "search", str(home), "deploy", "--json")
    paused = json.loads(out)
    assert paused["results"] == [] and paused["stale"] is True
    assert "index was built for model fake-embed, expected fts-only" in paused["reason"]


def test_homes_agents_and_single_files(tmp_path: Path) -> None:
    home = make_home(tmp_path, agent="ops")
    assert resolve_home(home).agent == "ops"  # the only one
    db = home / ".openclaw" / "agents" / "ops" / "agent" / "openclaw-agent.sqlite"
    found = resolve_home(db)
    assert (found.agent, found.index) == ("ops", db)
    assert found.workspace == tmp_path / "ws" / "ops"  # defaults.workspace/<id> for others
    code, _, err = _run("memory", "status", str(home), "--agent", "main")
    assert code == 1 and "no memory index for agent 'main' (found: ops)" in err
    legacy = home / ".openclaw" / "memory"
    legacy.mkdir()
    db2 = sqlite3.connect(legacy / "main.sqlite")
    db2.execute(
        "CREATE TABLE chunks (id TEXT, path TEXT, source TEXT, start_line INT,"
        " end_line INT, hash TEXT, model TEXT, text TEXT, embedding TEXT, updated_at INT)"
    )
    db2.execute("INSERT INTO chunks VALUES ('x', 'MEMORY.md', 'memory', 1, 2, 'h', 'm',"
                " 'legacy deploy', '[1, 0, 0]', 1)")  # fmt: skip
    db2.commit()
    db2.close()
    code, out, _ = _run("memory", "chunks", str(home), "--agent", "main", "--json")
    assert code == 0 and json.loads(out)["chunks"][0]["text"] == "legacy deploy"


def test_damaged_database_is_named(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    db = home / ".openclaw" / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])
    code, _, err = _run("memory", "search", str(db), "deploy", "--json")
    assert code == 1 and str(db) in err
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not sqlite at all" * 10)
    code, _, err = _run("memory", "status", str(bad))
    assert code == 1 and f"{bad}: not an SQLite database" in err
    summary = index_summary(bad)
    assert summary["sources"] == [] and summary["problems"][0]["file"] == str(bad)


def test_index_summary_shape(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    db = home / ".openclaw" / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    listing = sorted(p.name for p in db.parent.iterdir())
    summary = index_summary(db)
    assert summary["path"] == str(db)
    assert summary["sources"] == [
        {"source": "memory", "files": 8, "chunks": 8, "models": ["fake-embed"]}
    ]
    assert sorted(p.name for p in db.parent.iterdir()) == listing  # no -wal, no -shm


def test_without_openclaw_json_the_index_names_its_provider(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    (home / ".openclaw" / "openclaw.json").unlink()
    code, out, _ = _run("memory", "search", str(home), "deploy", "--json")
    data = json.loads(out)
    assert code == 0 and data["mode"] == "fts-only"
    assert data["reason"] == (
        "no openclaw.json beside the index; memory.search.remote.baseUrl is not set for the"
        " openai-compatible provider"
    )
