"""memlens's MCP ``memory_search`` / ``memory_get`` against OpenClaw's OWN tools (2026.9.6).

Not OpenClaw's CLI: the tools an OpenClaw agent calls. ``openclaw_memory_tool.mjs``
imports ``createMemorySearchTool`` / ``createMemoryGetTool`` from OpenClaw's bundle
(``extensions/memory-core/src/tools.ts``), makes them with the options an agent run
passes (OpenClaw's own loaded config, agent ``main``, no session key: a direct chat, so
citations "auto" are on) and calls ``execute(toolCallId, params)``; the JSON the model
would read is compared with :class:`core.mcp.tools.MemoryTools`'s answer to the same
arguments.

The home is the hybrid one of :mod:`tests.oracle.test_openclaw_memory_search`
(MEMORY.md, USER.md, dated and undated notes), indexed by the real
``openclaw memory index --force`` with FakeLLM's embeddings; memlens embeds its query
through the same FakeLLM server, as the home's config says. OpenClaw's clock is pinned
to :data:`NOW` by the preloaded clock module and memlens's by ``MEMLENS_NOW``, so the
decay of dated notes is the same on both sides. One Node run answers every call
(about 12 s), the index about 25 s more.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from core.mcp.data import ToolError
from core.mcp.schemas import TOOLS
from core.mcp.tools import MemoryTools
from tests.oracle.fake_llm import FakeLLM
from tests.oracle.test_openclaw_memory_search import NOW, Home

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).with_name("openclaw_memory_tool.mjs")
TOLERANCE = 1e-6
"""OpenClaw scores vectors at float32 (sqlite-vec), memlens at float64: about 1e-7 apart."""

SEARCHES: dict[str, dict[str, Any]] = {
    # a dated note two days old (decay 0.96) ranked against an undated one
    "dated": {"query": "what did we decide about billing"},
    # a note dated two months back: decay well below 1
    "old-dated": {"query": "deploy freeze during the audit"},
    "corpus-memory": {"query": "deploy", "corpus": "memory"},
    "limits": {"query": "deploy checklist", "maxResults": 2, "minScore": 0.2},
    "everything": {"query": "database", "minScore": 0},
}
GETS: dict[str, dict[str, Any]] = {
    "whole-file": {"path": "MEMORY.md"},
    "continuation": {"path": "memory/deploy.md", "from": 2, "lines": 2},
    "to-the-end": {"path": "memory/deploy.md", "from": 3},
    "past-the-end": {"path": "MEMORY.md", "from": 99},
    "nested": {"path": "memory/projects/billing.md", "lines": 1},
    "outside": {"path": "../outside.md"},
    "not-markdown-memory": {"path": "notes.txt"},
    "missing": {"path": "memory/missing.md"},
}
REFUSED: dict[str, tuple[str, dict[str, Any]]] = {
    "empty-query": ("memory_search", {"query": ""}),
    "bad-corpus": ("memory_search", {"query": "deploy", "corpus": "bogus"}),
    "empty-path": ("memory_get", {"path": ""}),
}


@dataclass
class Oracle:
    """The home, OpenClaw's tool schemas and its answer to every call."""

    home: Home
    schemas: dict[str, Any]
    searches: dict[str, Any]
    gets: dict[str, Any]
    refused: dict[str, Any]

    def tools(self) -> MemoryTools:
        return MemoryTools(self.home.root / ".openclaw", environ={"MEMLENS_NOW": str(NOW)})


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(embedding_dim=8) as server:
        yield server


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory, openclaw: Any, llm: FakeLLM) -> Oracle:
    home = Home(tmp_path_factory.mktemp("mcp-tool"), openclaw, llm, "openai-compatible")
    (home.root / "outside.md").write_text("# Not memory\n")
    (home.ws / "notes.txt").write_text("not a memory file\n")
    home.openclaw_cli("memory", "index", "--force")
    calls = [
        *({"tool": "memory_search", "params": p} for p in SEARCHES.values()),
        *({"tool": "memory_get", "params": p} for p in GETS.values()),
        *({"tool": tool, "params": p} for tool, p in REFUSED.values()),
    ]
    out = openclaw.run(SCRIPT, env=home.env, stdin=calls)
    answers = iter(out["answers"])
    return Oracle(
        home,
        out["schemas"],
        {label: next(answers) for label in SEARCHES},
        {label: next(answers) for label in GETS},
        {label: next(answers) for label in REFUSED},
    )


@pytest.fixture(scope="module")
def moved(
    tmp_path_factory: pytest.TempPathFactory, oracle: Oracle, openclaw: Any
) -> Iterator[tuple[Path, dict[str, Any]]]:
    """A copy of the home whose embedding endpoint moved after indexing (another FakeLLM,
    the same vectors), and OpenClaw's tool answer there."""
    root = tmp_path_factory.mktemp("moved")
    state = root / ".openclaw"
    shutil.copytree(oracle.home.root / ".openclaw", state)
    with FakeLLM(embedding_dim=8) as other:
        config = json.loads((state / "openclaw.json").read_text())
        config["memory"]["search"]["remote"]["baseUrl"] = other.base_url
        (state / "openclaw.json").write_text(json.dumps(config))
        env = {**oracle.home.env, **openclaw.env(root)}
        call = {"tool": "memory_search", "params": SEARCHES["dated"]}
        out = openclaw.run(SCRIPT, env=env, stdin=[call])
        yield state, out["answers"][0]


def _snapshot(root: Path) -> dict[str, tuple[str, int]]:
    """Every file's hash and mtime, but SQLite's shared-memory index of a WAL database
    (``-shm``), which any reader of the database updates."""
    return {
        str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.endswith("-shm")
    }


@pytest.mark.parametrize("label", list(SEARCHES))
def test_memory_search_gives_what_openclaws_tool_gives(oracle: Oracle, label: str) -> None:
    theirs = oracle.searches[label]
    assert "error" not in theirs and not theirs.get("disabled"), theirs
    assert theirs["results"], f"OpenClaw's tool found nothing for {label}: an empty comparison"
    before = _snapshot(oracle.home.root)
    mine = oracle.tools().call("memory_search", SEARCHES[label])
    assert _snapshot(oracle.home.root) == before  # nothing written
    assert (mine["model"], mine["citations"]) == (theirs["model"], theirs["citations"])
    key = ("path", "startLine", "endLine", "source")
    assert [tuple(r[k] for k in key) for r in mine["results"]] == [
        tuple(r[k] for k in key) for r in theirs["results"]
    ]
    worst = 0.0
    for a, b in zip(theirs["results"], mine["results"], strict=True):
        assert set(a) <= set(b), f"memlens lacks {set(a) - set(b)}"
        for field in ("corpus", "citation", "snippet", "provenance"):
            assert b[field] == a[field], field
        for field in ("score", "vectorScore", "textScore"):
            assert (field in b) == (field in a), field
            if field in a:
                worst = max(worst, abs(b[field] - a[field]))
                assert b[field] == pytest.approx(a[field], abs=TOLERANCE), field
        assert b["memlens"]["store"] == "openclaw-index"
    print(f"{label}: {len(mine['results'])} results, max score difference {worst:.1e}")


def test_decay_of_dated_notes_is_part_of_the_comparison(oracle: Oracle) -> None:
    tools = oracle.tools()
    factors = {
        hit["path"]: hit["memlens"]["decayFactor"]
        for label in ("dated", "old-dated", "everything")
        for hit in tools.call("memory_search", SEARCHES[label])["results"]
    }
    assert 0.9 < factors["memory/2026-11-25.md"] < 1.0
    assert factors["memory/2026-10-01.md"] < 0.5
    assert factors["MEMORY.md"] == 1.0  # evergreen


def test_corpus_memory_and_limits_are_honoured(oracle: Oracle) -> None:
    assert {r["source"] for r in oracle.searches["corpus-memory"]["results"]} == {"memory"}
    limited = oracle.searches["limits"]["results"]
    assert 0 < len(limited) <= 2 and all(r["score"] >= 0.2 for r in limited)
    everything = oracle.searches["everything"]["results"]
    assert len(everything) > len(limited)


@pytest.mark.parametrize("label", list(GETS))
def test_memory_get_gives_what_openclaws_tool_gives(oracle: Oracle, label: str) -> None:
    theirs = oracle.gets[label]
    before = _snapshot(oracle.home.root)
    mine = oracle.tools().call("memory_get", GETS[label])
    assert _snapshot(oracle.home.root) == before
    assert {k: mine.get(k) for k in theirs} == theirs
    assert set(mine) - set(theirs) == {"memlens"}


def test_memory_get_cases_cover_every_outcome(oracle: Oracle) -> None:
    statuses = {label: answer["status"] for label, answer in oracle.gets.items()}
    assert statuses["continuation"] == "ok" and oracle.gets["continuation"]["nextFrom"] == 4
    assert "[More content available. Use from=4" in oracle.gets["continuation"]["text"]
    assert "truncated" not in oracle.gets["to-the-end"]
    assert statuses["outside"] == statuses["not-markdown-memory"] == "error"
    assert oracle.gets["outside"]["code"] == "MEMORY_PATH_NOT_ALLOWED"
    assert statuses["missing"] == "not_found"


@pytest.mark.parametrize("label", list(REFUSED))
def test_what_openclaws_tool_refuses_memlens_refuses(oracle: Oracle, label: str) -> None:
    tool, params = REFUSED[label]
    theirs = oracle.refused[label]["thrown"]
    with pytest.raises(ToolError) as refused:
        oracle.tools().call(tool, params)
    if label == "bad-corpus":
        assert theirs == "corpus must be one of: memory, wiki, all, sessions"
        assert "'corpus' must be one of: memory, wiki, all, sessions" in str(refused.value)
    else:
        name = next(iter(params))
        assert theirs == f"{name} required"
        assert f"{name!r} must not be empty" in str(refused.value)


@pytest.mark.parametrize("tool", ["memory_search", "memory_get"])
def test_openclaws_input_schema_is_in_memlens_tools_list(oracle: Oracle, tool: str) -> None:
    """Each OpenClaw property with every keyword as OpenClaw has it; memlens adds only
    descriptions, ``minLength: 1`` where OpenClaw refuses an empty string at run time
    (test above), and properties of its own (store, session, channel, agent)."""
    theirs = oracle.schemas[tool]
    mine = next(t.input_schema for t in TOOLS if t.name == tool)
    assert mine["required"] == theirs["required"]
    assert mine["type"] == theirs["type"]
    assert mine["additionalProperties"] == theirs["additionalProperties"] is False
    for name, prop in theirs["properties"].items():
        assert name in mine["properties"], name
        ours = mine["properties"][name]
        assert {k: ours.get(k) for k in prop} == prop, name
        extra = set(ours) - set(prop)
        assert extra <= {"description", "minLength"}, (name, extra)
        if "minLength" in extra:
            assert name in theirs["required"] and ours["minLength"] == 1
    assert set(mine["properties"]) - set(theirs["properties"]) <= {
        "store", "session", "channel", "agent",
    }  # fmt: skip


def test_an_index_whose_provider_settings_changed_is_paused_as_openclaw_pauses_it(
    moved: tuple[Path, dict[str, Any]],
) -> None:
    state, theirs = moved
    assert theirs["results"] == [] and theirs["disabled"] is True and theirs["unavailable"]
    assert theirs["error"] == "index provider settings changed"
    mine = MemoryTools(state, environ={"MEMLENS_NOW": str(NOW)}).call(
        "memory_search", SEARCHES["dated"]
    )
    # OpenClaw's whole answer (results, disabled, unavailable, error, warning, action,
    # debug), word for word; memlens adds why under ``stores``
    assert {k: mine.get(k) for k in theirs} == theirs
    assert set(mine) - set(theirs) == {"query", "now", "stores"}
    (store,) = mine["stores"]
    assert store["mode"] == "paused" and store["results"] == 0
    assert store["indexIdentity"] == {
        "status": "mismatched",
        "reason": "index provider settings changed",
        "code": "provider_settings",
        "owner": "configuration",
    }


def test_memory_search_has_openclaws_top_level_fields(oracle: Oracle) -> None:
    theirs = oracle.searches["dated"]
    mine = oracle.tools().call("memory_search", SEARCHES["dated"])
    shown = {k: v for k, v in theirs.items() if k not in ("results", "debug")}
    assert {k: mine.get(k) for k in shown} == shown
