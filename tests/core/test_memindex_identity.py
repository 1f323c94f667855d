"""OpenClaw's memory index identity check, on copies of the recorded OpenClaw homes.

``tests/data/openclaw-2026.9.6`` holds homes written by the real OpenClaw 2026.9.6:
``home`` (openai-compatible ``fake-embed``, two agents) and ``fts-home`` (provider
``none``). Their indexes are what OpenClaw searches; each test copies one, changes
its ``openclaw.json`` (or, for what no config sets, the index's meta) and checks the
code, reason and owner OpenClaw's ``resolveMemoryIndexIdentityState`` gives, and
what ``memlens mcp``'s ``memory_search`` and ``memlens memory search`` answer. No
Node: the oracle tier (tests/oracle/test_openclaw_memory_search.py) runs OpenClaw's own
tool on a moved embedding endpoint.
"""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from core.cli.main import run_cli
from core.mcp.tools import MemoryTools
from core.openclaw.memindex import open_memory_index
from core.openclaw.memindex_identity import (
    IndexIdentity,
    index_identity,
    provider_key,
    scope_hash,
    unavailable_answer,
)
from core.openclaw.memory_home import check_identity, load_settings, resolve_home, run_search
from core.openclaw.memsearch_embed import SearchSettings, settings_from_config

RECORDED = Path(__file__).resolve().parents[1] / "data" / "openclaw-2026.9.6"
NOW = 1_795_700_000_000
AGENT_DB = Path("agents/main/agent/openclaw-agent.sqlite")
PAUSED_ACTION = (
    "Tell the user to run: openclaw memory status --index --agent main. Rebuilding may call"
    " the configured embedding provider and can incur provider cost."
)


def _copy(tmp_path: Path, name: str = "home") -> Path:
    """A copy of a recorded home's state folder, its workspaces pointed at the copy."""
    shutil.copytree(RECORDED / name, tmp_path / name)
    state = tmp_path / name / ".openclaw"
    raw = _config(state)
    agents = raw["agents"]
    if "entries" in agents:
        agents["entries"]["main"]["workspace"] = str(state / "workspace")
        agents["entries"]["ops"]["workspace"] = str(state / "workspace-ops")
    else:
        agents["defaults"]["workspace"] = str(state / "workspace")
    _write_config(state, raw)
    return state


def _config(state: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((state / "openclaw.json").read_text(encoding="utf-8"))
    return data


def _write_config(state: Path, raw: dict[str, Any]) -> None:
    (state / "openclaw.json").write_text(json.dumps(raw), encoding="utf-8")


def _search_config(state: Path, **changes: Any) -> None:
    raw = _config(state)
    raw["memory"]["search"].update(changes)
    _write_config(state, raw)


def _meta(state: Path) -> dict[str, Any]:
    with closing(sqlite3.connect(state / AGENT_DB)) as db:
        (value,) = db.execute(
            "SELECT value FROM memory_index_meta WHERE key = 'memory_index_meta_v1'"
        ).fetchone()
    data: dict[str, Any] = json.loads(value)
    return data


def _set_meta(state: Path, meta: dict[str, Any] | None) -> None:
    with closing(sqlite3.connect(state / AGENT_DB)) as db, db:
        if meta is None:
            db.execute("DELETE FROM memory_index_meta WHERE key = 'memory_index_meta_v1'")
        else:
            db.execute(
                "UPDATE memory_index_meta SET value = ? WHERE key = 'memory_index_meta_v1'",
                (json.dumps(meta),),
            )


def _identity(state: Path, agent: str = "main") -> IndexIdentity:
    home = resolve_home(state, agent)
    with open_memory_index(home.index) as index:
        return check_identity(home, index, load_settings(home))


def _search(state: Path, query: str = "billing") -> dict[str, Any]:
    tools = MemoryTools(state, environ={"MEMLENS_NOW": str(NOW)})
    answer: dict[str, Any] = tools.call("memory_search", {"query": query})
    return answer


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


# -- the recorded homes are what OpenClaw searches ----------------------------------------


def test_the_recorded_homes_pass_and_their_keys_are_reproduced(tmp_path: Path) -> None:
    state = _copy(tmp_path)
    fts = _copy(tmp_path, "fts-home")
    for where, agent in ((state, "main"), (state, "ops"), (fts, "main")):
        assert _identity(where, agent).valid, (where, agent)
    settings = load_settings(resolve_home(state))
    meta = _meta(state)
    assert provider_key(settings) == meta["providerKey"]
    assert scope_hash(settings, None) == meta["scopeHash"]
    assert settings.indexed_sources == ("memory", "sessions")  # rememberAcrossConversations
    assert provider_key(load_settings(resolve_home(fts))) == _meta(fts)["providerKey"]


def test_a_valid_keyword_only_home_searches_with_provider_none_and_no_model(
    tmp_path: Path,
) -> None:
    answer = _search(_copy(tmp_path, "fts-home"), "memory")
    assert answer["results"] and answer["provider"] == "none" and "model" not in answer
    assert "disabled" not in answer and "error" not in answer
    (store,) = answer["stores"]
    assert store["mode"] == "fts-only" and "indexIdentity" not in store


# -- each mismatch the config can make --------------------------------------------------

CONFIG_MISMATCHES: dict[str, tuple[dict[str, Any], str]] = {
    "model": (
        {"model": "other-embed"},
        "index was built for model fake-embed, expected other-embed",
    ),
    "provider": (
        {"provider": "openai", "model": "fake-embed"},
        "index was built for provider openai-compatible, expected openai",
    ),
    "provider_settings": (
        {"remote": {"baseUrl": "http://127.0.0.1:1/v1", "apiKey": "k"}},
        "index provider settings changed",
    ),
    "sources": ({"rememberAcrossConversations": False}, "index sources changed"),
    "scope": ({"extraPaths": ["../notes"]}, "index scope changed"),
    "fts_tokenizer": ({"store": {"fts": {"tokenizer": "trigram"}}}, "index FTS tokenizer changed"),
}


@pytest.mark.parametrize("code", list(CONFIG_MISMATCHES))
def test_a_config_mismatch_pauses_the_search_as_openclaws_tool_does(
    tmp_path: Path, code: str
) -> None:
    changes, reason = CONFIG_MISMATCHES[code]
    state = _copy(tmp_path)
    _search_config(state, **changes)
    identity = _identity(state)
    assert (identity.status, identity.code, identity.reason, identity.owner) == (
        "mismatched", code, reason, "configuration",
    )  # fmt: skip
    assert identity.paused and not identity.keyword_only
    answer = _search(state)
    warning = (
        "Tell the user: memory search is paused because the current memory configuration"
        f" no longer matches the index ({reason})."
    )
    assert answer["results"] == [] and answer["disabled"] is True and answer["unavailable"]
    assert (answer["error"], answer["warning"], answer["action"]) == (
        reason, warning, PAUSED_ACTION,
    )  # fmt: skip
    assert answer["debug"] == {"warning": warning, "action": PAUSED_ACTION, "error": reason}
    (store,) = answer["stores"]
    assert store["mode"] == "paused" and store["indexIdentity"]["code"] == code
    assert "openclaw memory index" in store["reason"]


def test_a_header_changes_the_provider_key_but_a_secret_one_does_not(tmp_path: Path) -> None:
    state = _copy(tmp_path)
    _search_config(state, remote={**_config(state)["memory"]["search"]["remote"],
                                  "headers": {"X-Api-Key": "secret", "Authorization": "x"}})  # fmt: skip
    assert _identity(state).valid  # secret headers stay out of the key
    _search_config(state, remote={**_config(state)["memory"]["search"]["remote"],
                                  "headers": {"X-Team": "memory"}})  # fmt: skip
    assert _identity(state).code == "provider_settings"
    _search_config(state, remote={**_config(state)["memory"]["search"]["remote"],
                                  "headers": {"X-Team": {"source": "env", "id": "TEAM"}}})  # fmt: skip
    assert _identity(state).valid  # a secret reference: the key is not known, not compared


def test_the_provider_none_home_pauses_for_an_embedding_config(tmp_path: Path) -> None:
    state = _copy(tmp_path, "fts-home")
    raw = _config(state)
    raw["memory"]["search"] = {"provider": "openai-compatible", "model": "fake-embed",
                               "remote": {"baseUrl": "http://127.0.0.1:1/v1"}}  # fmt: skip
    _write_config(state, raw)
    identity = _identity(state)
    assert (identity.code, identity.reason) == (
        "model", "index was built for model fts-only, expected fake-embed",
    )  # fmt: skip


# -- what only the index's meta can change ----------------------------------------------


def test_other_chunking_and_missing_vector_dims_are_configuration_mismatches(
    tmp_path: Path,
) -> None:
    state = _copy(tmp_path)
    meta = _meta(state)
    _set_meta(state, {**meta, "chunkTokens": 200})
    assert (_identity(state).code, _identity(state).reason) == (
        "chunking", "index chunking changed",
    )  # fmt: skip
    _set_meta(state, {k: v for k, v in meta.items() if k != "vectorDims"})
    assert (_identity(state).code, _identity(state).owner) == ("vector_dims", "configuration")
    assert _identity(state).reason == "index vector dimensions are missing"
    fts = _copy(tmp_path, "fts-home")  # no vectors without a provider: no dims wanted
    assert "vectorDims" not in _meta(fts) and _identity(fts).valid


def test_missing_metadata_is_openclaws_own_and_pauses(tmp_path: Path) -> None:
    state = _copy(tmp_path)
    _set_meta(state, None)
    identity = _identity(state)
    assert (identity.status, identity.code, identity.owner) == (
        "missing", "metadata_missing", "openclaw",
    )  # fmt: skip
    answer = _search(state)
    assert answer["error"] == "index metadata is missing"
    assert answer["warning"] == (
        "Tell the user: memory search is paused because the memory index metadata is missing"
        " (index metadata is missing); no configuration change is needed."
    )
    assert "would rebuild the index" in answer["stores"][0]["reason"]


@pytest.mark.parametrize(
    ("change", "code", "order"),
    [
        ({"provenanceVersion": 0}, "provenance_version", "older"),
        ({"provenanceVersion": 2}, "provenance_version", "newer"),
        ({"chunkingVersion": 6}, "chunking_version", "newer"),
    ],
)
def test_another_index_format_pauses(
    tmp_path: Path, change: dict[str, Any], code: str, order: str
) -> None:
    state = _copy(tmp_path)
    _set_meta(state, {**_meta(state), **change})
    identity = _identity(state)
    assert (identity.code, identity.owner, identity.version_order) == (code, "openclaw", order)
    assert identity.paused
    answer = _search(state)
    if order == "newer":
        assert answer["error"] == (
            "the index was written by a newer OpenClaw version; upgrade OpenClaw or reindex"
            " explicitly"
        )
        assert (
            answer["warning"]
            == f"Tell the user: memory search is paused because {answer['error']}."
        )
        assert answer["action"].startswith(
            "Tell the user to upgrade OpenClaw or reindex explicitly:"
        )
    else:
        assert answer["error"] == "index provenance classifier changed"
        assert "this OpenClaw version changed the memory index format" in answer["warning"]
        assert answer["action"] == PAUSED_ACTION


def test_an_older_chunking_only_is_searched_keyword_only(tmp_path: Path) -> None:
    state = _copy(tmp_path)
    _set_meta(state, {**_meta(state), "chunkingVersion": 4})
    identity = _identity(state)
    assert identity.code == "chunking_version" and identity.chunking_version_only
    assert identity.keyword_only and not identity.paused
    answer = _search(state)  # no embedding endpoint is reached: keyword-only
    assert answer["results"] and "disabled" not in answer
    assert {r["source"] for r in answer["results"]} == {"memory"}
    assert all("vectorScore" not in r for r in answer["results"])
    (store,) = answer["stores"]
    assert store["mode"] == "fts-only" and store["indexIdentity"]["chunkingVersionOnly"]
    assert "keyword index until it is rebuilt" in store["reason"]


def test_an_older_chunking_with_another_config_pauses(tmp_path: Path) -> None:
    state = _copy(tmp_path)
    _set_meta(state, {**_meta(state), "chunkingVersion": 4})
    _search_config(state, rememberAcrossConversations=False)
    identity = _identity(state)
    assert identity.code == "chunking_version" and not identity.chunking_version_only
    assert identity.paused and _search(state)["disabled"] is True


def test_the_keyword_exception_needs_the_fts_table() -> None:
    meta = {"provenanceVersion": 1, "chunkingVersion": 4, "sources": ["memory"],
            "chunkTokens": 400, "chunkOverlap": 80}  # fmt: skip
    settings = SearchSettings(provider="none", indexed_sources=("memory",), from_config=True)
    meta["scopeHash"] = scope_hash(settings, None)
    assert index_identity(meta, settings).keyword_only
    without = index_identity(meta, settings, fts_available=False)
    assert without.chunking_version_only and without.paused


# -- memlens memory search and the settings --------------------------------------------


def test_memlens_memory_search_pauses_as_openclaw_memory_search(tmp_path: Path) -> None:
    state = _copy(tmp_path)
    _search_config(state, model="other-embed")
    code, out, err = _run("memory", "search", str(state), "billing", "--json")
    data = json.loads(out)
    assert (code, err, data["results"], data["mode"]) == (0, "", [], "empty")
    assert data["stale"] is True
    assert data["warning"] == (
        "Memory index is stale: index was built for model fake-embed, expected other-embed"
        " (owner: configuration, code: model). Search results may be incomplete."
    )
    assert data["action"] == PAUSED_ACTION.replace("Tell the user to run", "Run")
    code, out, err = _run("memory", "search", str(state), "billing")
    assert code == 0 and "no results" in out and "memory search is paused" in out
    assert err.startswith("memlens: Memory index is stale: index was built for model")


def test_run_search_checks_only_when_asked(tmp_path: Path) -> None:
    state = _copy(tmp_path)
    _search_config(state, model="other-embed", remote={"baseUrl": "http://127.0.0.1:9/v1"})
    home = resolve_home(state)
    checked = run_search(home, "billing", now_ms=NOW, check=True)
    assert checked.mode == "empty" and checked.results == []
    assert any("memory search is paused" in p.message for p in checked.problems)
    unchecked = run_search(home, "billing", now_ms=NOW)
    assert unchecked.mode == "fts-only" and unchecked.results  # the endpoint is not there
    # an older chunking is found before the config: OpenClaw serves the keyword index
    _set_meta(state, {**_meta(state), "chunkingVersion": 4})
    older = run_search(home, "billing", now_ms=NOW, check=True)
    assert older.mode == "fts-only" and "until it is rebuilt" in (older.reason or "")


def test_settings_carry_what_the_identity_compares() -> None:
    raw = {
        "session": {"dmScope": "per-peer"},
        "memory": {"search": {
            "sources": ["memory", "sessions"], "extraPaths": ["a", {"path": "b", "pattern": "*.md"}, "a"],
            "multimodal": {"enabled": True}, "store": {"fts": {"tokenizer": "trigram"}},
            "inputType": " search ",
        }},
        "agents": {"list": [{"id": "main", "memory": {"search": {"extraPaths": ["c"]}}}]},
    }  # fmt: skip
    s = settings_from_config(raw)
    assert s.indexed_sources == ("memory",)  # per-peer DMs: no remembering, no sessionMemory
    assert s.extra_paths == ("a", ("b", "*.md"), "c")
    assert (s.multimodal_enabled, s.multimodal_modalities) == (True, ("image", "audio"))
    assert (s.fts_tokenizer, s.input_type, s.chunk_tokens, s.chunk_overlap) == (
        "trigram", "search", 400, 80,
    )  # fmt: skip
    remembered = settings_from_config({"memory": {"search": {"provider": "none"}}})
    assert remembered.indexed_sources == ("memory", "sessions")
    assert scope_hash(s, None) is None  # relative extra paths need the workspace


def test_the_unavailable_answer_for_keyword_indexing() -> None:
    identity = IndexIdentity("mismatched", "index sources changed", "sources", "configuration")
    answer = unavailable_answer(identity, SearchSettings(provider="none"), "ops")
    assert answer["action"] == (
        "Tell the user to run: openclaw memory status --index --agent ops. Rebuilding uses"
        " keyword indexing only and does not call an embedding provider."
    )
    assert list(answer) == [
        "results", "disabled", "unavailable", "error", "warning", "action", "debug",
    ]  # fmt: skip
