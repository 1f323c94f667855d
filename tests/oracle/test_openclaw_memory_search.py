"""memlens's memory search against OpenClaw 2026.9.6's own, on one home OpenClaw indexed.

A real home (MEMORY.md, USER.md, dated and undated notes under memory/) is indexed
once by the real ``openclaw memory index --force`` through FakeLLM's embeddings. Each
OpenClaw run below starts from its own copy of that freshly indexed state (the
workspace, which OpenClaw and memlens only read, is shared):

* OpenClaw's CLI: for each query, ``openclaw memory search --json`` and ``memlens
  memory search`` must name the same chunks in the same order with scores within 1e-6;
* the tools an OpenClaw agent calls: ``openclaw_memory_tool.mjs`` imports
  ``createMemorySearchTool`` / ``createMemoryGetTool`` from OpenClaw's bundle
  (``extensions/memory-core/src/tools.ts``), makes them with the options an agent run
  passes (OpenClaw's own loaded config, agent ``main``, no session key: a direct chat,
  so citations "auto" are on) and calls ``execute(toolCallId, params)``; the JSON the
  model would read is compared with :class:`core.mcp.tools.MemoryTools`'s answer to the
  same arguments (memlens embeds its query through the same FakeLLM server, as the
  home's config says);
* a copy whose embedding endpoint moved after indexing: both pause it.

OpenClaw scores vectors through sqlite-vec at float32 precision, memlens at float64:
that is the only expected difference (about 1e-7). The decay of dated notes depends on
the clock: OpenClaw's is pinned to :data:`NOW` by a preloaded module (``Date`` runs
1000 times slower from there), memlens's by ``--now NOW`` / ``MEMLENS_NOW``.

The CLI and the tools share this module so that one pytest-xdist worker (``--dist
loadfile``) indexes the home once: each OpenClaw start costs 7-20 s of CPU (the index
about 20, a CLI search 10, the tool run 7).
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from core.cli.main import run_cli
from core.mcp.data import ToolError
from core.mcp.schemas import TOOLS
from core.mcp.tools import MemoryTools
from tests.oracle.fake_llm import FakeLLM

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.slow

NOW = 1_795_700_000_000  # 2026-11-26T13:33:20Z
CLOCK_JS = """
// Pins the wall clock near OPENCLAW_TEST_NOW_MS; from there it runs 1000x slower.
const fixed = Number(process.env.OPENCLAW_TEST_NOW_MS);
if (Number.isFinite(fixed)) {
  const RealDate = Date;
  const start = performance.now();
  const now = () => Math.floor(fixed + (performance.now() - start) / 1000);
  class PinnedDate extends RealDate {
    constructor(...args) { if (args.length === 0) super(now()); else super(...args); }
    static now() { return now(); }
  }
  globalThis.Date = PinnedDate;
}
"""
NOTES = {
    "MEMORY.md": "# Memory\n\nThe deploy runs every Friday via `make deploy`.\n"
    "Keep the staging database small.\n",
    "USER.md": "# User\n\nName: Sam. Prefers short answers about the database.\n",
    "memory/2026-11-25.md": "# 2026-11-25\n\n- Decided to deploy the billing service on Friday.\n"
    "- Alice owns the database migration.\n",
    "memory/2026-10-01.md": "# 2026-10-01\n\nDeploy freeze during the audit. The database backup"
    " runs nightly.\n",
    "memory/projects/billing.md": "# Billing\n\nThe billing service talks to Stripe. Deploy with"
    " the blue-green script.\n",
    "memory/deploy.md": "# Deploy checklist\n\n1. run tests\n2. make deploy\n3. watch the"
    " dashboards\n",
}
# Each OpenClaw search costs ~12 s of Node start-up: two here, the keyword fallback and a
# path match (every note decays or not against OpenClaw's pinned clock in both). The
# recorded real fixture adds 14 more, dated notes among them,
# and the FTS-only home's (tests/core/test_memsearch_fixture.py, no Node): a second live
# home would cost the suite ~50 s more.
HYBRID_QUERIES = ("what did we decide about billing", "MEMORY.md")
TOLERANCE = 1e-6
"""OpenClaw scores vectors at float32 (sqlite-vec), memlens at float64: about 1e-7 apart."""

SCRIPT = Path(__file__).with_name("openclaw_memory_tool.mjs")
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


class Home:
    """An OpenClaw state folder, ``root/.openclaw``, whose config names the workspace *ws*."""

    def __init__(self, root: Path, openclaw: Any, ws: Path, clock: Path) -> None:
        self.root, self.openclaw, self.ws, self.clock = root, openclaw, ws, clock
        self.state = root / ".openclaw"
        self.env = openclaw.env(root)
        self.env["NODE_OPTIONS"] = f"--import={clock.as_uri()}"
        self.env["OPENCLAW_TEST_NOW_MS"] = str(NOW)
        self.db = self.state / "agents" / "main" / "agent" / "openclaw-agent.sqlite"

    @classmethod
    def create(cls, root: Path, openclaw: Any, llm: FakeLLM, provider: str) -> Home:
        """The workspace ``root/ws`` with :data:`NOTES`, and a state whose config names it."""
        ws = root / "ws"
        for name, text in NOTES.items():
            (ws / name).parent.mkdir(parents=True, exist_ok=True)
            (ws / name).write_text(text)
        search: dict[str, Any] = {"provider": provider}
        if provider != "none":
            search |= {"model": "fake-embed", "remote": {"baseUrl": llm.base_url, "apiKey": "k"}}
        (root / ".openclaw").mkdir()
        (root / ".openclaw" / "openclaw.json").write_text(
            json.dumps(
                {"agents": {"defaults": {"workspace": str(ws)}}, "memory": {"search": search}}
            )
        )
        clock = root.parent / f"clock-{root.name}.mjs"
        clock.write_text(CLOCK_JS)
        return cls(root, openclaw, ws, clock)

    def copy(self, dest: Path) -> Home:
        """This state copied to ``dest/.openclaw`` (SQLite's ``-shm`` left out), same workspace."""
        shutil.copytree(self.state, dest / ".openclaw", ignore=shutil.ignore_patterns("*-shm"))
        return Home(dest, self.openclaw, self.ws, self.clock)

    def snapshot(self) -> tuple[dict[str, tuple[str, int]], ...]:
        """Every file of the state and of the workspace's folder (``outside.md`` beside it)."""
        return _snapshot(self.root), _snapshot(self.ws.parent)

    def openclaw_cli(self, *args: str) -> str:
        done = subprocess.run(
            [*self.openclaw.cli, *args], env=self.env, cwd=self.ws, capture_output=True,
            text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
        return done.stdout

    def openclaw_search(self, query: str) -> dict[str, Any]:
        out = self.openclaw_cli("memory", "search", "--query", query, "--json")
        answer: dict[str, Any] = json.loads(out[out.index("{") :])
        return answer

    def memlens_search(self, query: str) -> dict[str, Any]:
        buf = io.BytesIO()
        old = sys.stdout
        sys.stdout = io.TextIOWrapper(buf, encoding="utf-8", write_through=True)
        try:
            code = run_cli(["memory", "search", str(self.root), query, "--now", str(NOW), "--json"])
        finally:
            sys.stdout.flush()
            out = buf.getvalue()
            sys.stdout = old
        assert code == 0
        answer: dict[str, Any] = json.loads(out)
        return answer


def _snapshot(root: Path) -> dict[str, tuple[str, int]]:
    """Every file's hash and mtime, but SQLite's shared-memory index of a WAL database
    (``-shm``), which any reader of the database updates."""
    return {
        str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.endswith("-shm")
    }


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(embedding_dim=8) as server:
        yield server


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory, openclaw: Any, llm: FakeLLM) -> Home:
    """The hybrid home, indexed by OpenClaw; never run again: each user takes a copy.

    ``outside.md`` (beside the workspace) and ``notes.txt`` (in it, not memory) are
    what the tools' ``memory_get`` refuses; neither is indexed.
    """
    home = Home.create(tmp_path_factory.mktemp("indexed"), openclaw, llm, "openai-compatible")
    (home.root / "outside.md").write_text("# Not memory\n")
    (home.ws / "notes.txt").write_text("not a memory file\n")
    home.openclaw_cli("memory", "index", "--force")
    return home


# -- OpenClaw's CLI: openclaw memory search vs memlens memory search -----------------------


@pytest.fixture(scope="module")
def hybrid(tmp_path_factory: pytest.TempPathFactory, indexed: Home) -> Any:
    home = indexed.copy(tmp_path_factory.mktemp("cli"))
    answers = {q: home.openclaw_search(q) for q in HYBRID_QUERIES}
    return home, answers


def compare(theirs: dict[str, Any], mine: dict[str, Any]) -> float:
    """Same chunks in the same order, same fields; returns the largest score difference."""
    key = ("path", "startLine", "endLine", "source")
    assert [tuple(r[k] for k in key) for r in mine["results"]] == [
        tuple(r[k] for k in key) for r in theirs["results"]
    ]
    worst = 0.0
    for a, b in zip(mine["results"], theirs["results"], strict=True):
        assert set(b) <= set(a), f"memlens lacks {set(b) - set(a)}"
        assert a["snippet"] == b["snippet"]
        assert a["textScore"] == pytest.approx(b["textScore"], abs=1e-12)
        for field in ("score", "vectorScore"):
            if field in b:
                worst = max(worst, abs(a[field] - b[field]))
                assert a[field] == pytest.approx(b[field], abs=TOLERANCE), field
        assert a.get("provenance") == b.get("provenance")
    return worst


@pytest.mark.parametrize("query", HYBRID_QUERIES)
def test_hybrid_search_matches_openclaw(hybrid: Any, query: str) -> None:
    home, answers = hybrid
    before = sorted(p.name for p in home.db.parent.iterdir())
    mine = home.memlens_search(query)
    assert mine["mode"] == "hybrid", mine["reason"]
    assert answers[query]["results"], "OpenClaw found nothing: the comparison would be empty"
    worst = compare(answers[query], mine)
    print(f"{query!r}: {len(mine['results'])} results, max score difference {worst:.2e}")
    assert sorted(p.name for p in home.db.parent.iterdir()) == before


# -- OpenClaw's own memory_search / memory_get tools vs memlens mcp's ----------------------


@dataclass
class Oracle:
    """The home, OpenClaw's tool schemas and its answer to every call."""

    home: Home
    schemas: dict[str, Any]
    searches: dict[str, Any]
    gets: dict[str, Any]
    refused: dict[str, Any]

    def tools(self) -> MemoryTools:
        return MemoryTools(self.home.state, environ={"MEMLENS_NOW": str(NOW)})


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory, openclaw: Any, indexed: Home) -> Oracle:
    """OpenClaw's tools' answers to every call, in one Node run on a copy of the home."""
    home = indexed.copy(tmp_path_factory.mktemp("mcp-tool"))
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
    tmp_path_factory: pytest.TempPathFactory, indexed: Home, openclaw: Any
) -> Iterator[tuple[Path, dict[str, Any]]]:
    """A copy of the home whose embedding endpoint moved after indexing (another FakeLLM,
    the same vectors), and OpenClaw's tool answer there."""
    home = indexed.copy(tmp_path_factory.mktemp("moved"))
    with FakeLLM(embedding_dim=8) as other:
        config = json.loads((home.state / "openclaw.json").read_text())
        config["memory"]["search"]["remote"]["baseUrl"] = other.base_url
        (home.state / "openclaw.json").write_text(json.dumps(config))
        call = {"tool": "memory_search", "params": SEARCHES["dated"]}
        out = openclaw.run(SCRIPT, env=home.env, stdin=[call])
        yield home.state, out["answers"][0]


@pytest.mark.parametrize("label", list(SEARCHES))
def test_memory_search_gives_what_openclaws_tool_gives(oracle: Oracle, label: str) -> None:
    theirs = oracle.searches[label]
    assert "error" not in theirs and not theirs.get("disabled"), theirs
    assert theirs["results"], f"OpenClaw's tool found nothing for {label}: an empty comparison"
    before = oracle.home.snapshot()
    mine = oracle.tools().call("memory_search", SEARCHES[label])
    assert oracle.home.snapshot() == before  # nothing written
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
    before = oracle.home.snapshot()
    mine = oracle.tools().call("memory_get", GETS[label])
    assert oracle.home.snapshot() == before
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
