"""The MCP tools in process: OpenClaw's answers, the app's answers, clear errors, no writes.

``memory_search`` over an index that the real OpenClaw 2026.9.6 indexed and searched
(``tests/data/openclaw-2026.9.6/fts-home``, recorded with its answers) must give
OpenClaw's results as its ``memory_search`` tool presents them (citations on for a
caller without a session key); the other tools must give what the CLI (and so the app)
computes from the same files.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from core.cli.main import run_cli
from core.mcp.data import ToolError
from core.mcp.schemas import RANKING_NAMES
from core.mcp.search import citation, merge_streams, strip_annotations
from core.mcp.tools import MemoryTools, check_arguments
from core.recall.rankings import RANKINGS
from tests.demo_copy import demo_copy

RECORDED = Path(__file__).resolve().parents[1] / "data" / "openclaw-2026.9.6"
EXPECTED = json.loads((RECORDED / "expected.json").read_text(encoding="utf-8"))
NOW = 1_795_700_000_000


def _fts_home(tmp_path: Path) -> Path:
    """A copy of the FTS-only home, its workspace path pointed at the copy."""
    shutil.copytree(RECORDED / "fts-home", tmp_path / "fts-home")
    home = tmp_path / "fts-home" / ".openclaw"
    config = home / "openclaw.json"
    raw = json.loads(config.read_text(encoding="utf-8"))
    raw["agents"]["defaults"]["workspace"] = str(home / "workspace")
    config.write_text(json.dumps(raw), encoding="utf-8")
    return home


def _snapshot(root: Path) -> dict[str, tuple[str, int]]:
    return {
        str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    assert run_cli([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    return demo_copy(tmp_path / "demo", now_ms=NOW, segments=300)


@pytest.mark.parametrize(
    "label", [c["label"] for c in EXPECTED["fts_commands"] if " search " in c["label"]]
)
def test_memory_search_gives_openclaws_results_as_its_tool_presents_them(
    tmp_path: Path, label: str
) -> None:
    recorded = next(c for c in EXPECTED["fts_commands"] if c["label"] == label)
    query = recorded["argv"][recorded["argv"].index("--query") + 1]
    theirs = recorded["json"]["results"]
    tools = MemoryTools(_fts_home(tmp_path), environ={"MEMLENS_NOW": str(recorded["started_ms"])})
    mine = tools.call("memory_search", {"query": query})
    assert mine["now"] == recorded["started_ms"]
    assert len(mine["results"]) == len(theirs)
    for a, b in zip(theirs, mine["results"], strict=True):
        assert (b["path"], b["startLine"], b["endLine"], b["source"]) == (
            a["path"], a["startLine"], a["endLine"], a["source"],
        )  # fmt: skip
        assert b["score"] == pytest.approx(a["score"], abs=1e-6)
        assert b["textScore"] == pytest.approx(a["textScore"], abs=1e-9)
        assert "vectorScore" not in b  # OpenClaw's FTS-only results carry none
        assert b["provenance"] == a["provenance"]
        assert b["corpus"] == a["source"]
        assert b["citation"] == f"{a['path']}#L{a['startLine']}-L{a['endLine']}"
        assert b["snippet"] == f"{a['snippet'].rstrip()}\n\nSource: {b['citation']}"
        assert b["memlens"]["store"] == "openclaw-index"
        assert {"keywordScore", "decayFactor", "rankingScore"} <= b["memlens"].keys()
    assert mine["mode"] == "fts-only"


def test_memory_search_filters_and_limits(tmp_path: Path) -> None:
    tools = MemoryTools(_fts_home(tmp_path), environ={"MEMLENS_NOW": str(NOW)})
    assert tools.call("memory_search", {"query": "deploy", "corpus": "memory"})["results"]
    # keyword-only, OpenClaw relaxes minScore to 0 when nothing passes it (mr.js:4518-4537)
    relaxed = tools.call("memory_search", {"query": "deploy", "minScore": 0.99})["results"]
    assert [r["path"] for r in relaxed] == ["MEMORY.md"]
    wiki = tools.call("memory_search", {"query": "deploy", "corpus": "wiki"})
    assert wiki["results"] == [] and "wiki" in wiki["stores"][0]["note"]
    with pytest.raises(ToolError, match="no memory-context store found"):
        tools.call("memory_search", {"query": "deploy", "store": "memory-context"})
    with pytest.raises(ToolError, match="no memory index for agent 'ops'"):
        tools.call("memory_search", {"query": "deploy", "agent": "ops"})
    # OpenClaw's chunks name no session or channel: not searched rather than unfiltered
    shutil.copytree(RECORDED / "home", tmp_path / "hybrid")
    tools = MemoryTools(tmp_path / "hybrid" / ".openclaw", environ={"MEMLENS_NOW": str(NOW)})
    for arg, value in (("session", "alpha"), ("channel", "telegram")):
        filtered = tools.call("memory_search", {"query": "deploy", arg: value})
        (store,) = filtered["stores"]
        assert filtered["results"] == [] and store["store"] == "openclaw-index"
        assert store["note"].startswith("not searched: ") and f"no {arg}" in store["note"]


def test_memory_search_filters_apply_to_the_stores_that_name_them(demo: Path) -> None:
    tools = MemoryTools(demo, environ={"MEMLENS_NOW": str(NOW)})
    sid = tools.call("memory_search", {"query": "test", "store": "memory-context"})["results"][0][
        "session"
    ]
    by_session = tools.call("memory_search", {"query": "test", "session": sid[:8], "minScore": 0})
    assert by_session["results"] and {r["session"] for r in by_session["results"]} == {sid}
    assert [s.get("note", "")[:13] for s in by_session["stores"]] == ["not searched:", ""]
    by_channel = tools.call("memory_search", {"query": "test", "channel": "telegram"})
    assert by_channel["results"] == [] and all(
        s["note"].startswith("not searched: ") for s in by_channel["stores"]
    )
    with pytest.raises(ToolError, match="no session matches 'zzzz'"):  # not a store's failure
        tools.call("memory_search", {"query": "test", "session": "zzzz"})


def test_memory_search_merges_openclaw_and_memory_context(
    demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = MemoryTools(demo, environ={})
    out = tools.call(
        "memory_search", {"query": "deploy hook token", "maxResults": 4, "minScore": 0}
    )
    assert [s["store"] for s in out["stores"]] == ["openclaw-index", "memory-context"]
    assert 0 < len(out["results"]) <= 4
    hit = next(r for r in out["results"] if r["memlens"]["store"] == "memory-context")
    assert hit["entryIds"] and hit["session"] and hit["path"].endswith("segments.jsonl")
    assert {"vectorScore", "bm25Norm", "decayFactor", "effectiveScore"} <= hit["memlens"].keys()
    assert hit["score"] == hit["memlens"]["effectiveScore"]
    # the same hits as `memlens recall` (and so the app's recall view) for that query
    cli = _cli_json(
        capsys, "recall", str(demo), "deploy hook token", "--limit", "4", "--min-score", "0",
        "--ranking", "seed",
    )  # fmt: skip
    mine = tools.call(
        "memory_search",
        {"query": "deploy hook token", "store": "memory-context", "maxResults": 4, "minScore": 0},
    )
    assert [r["entryIds"][0] for r in mine["results"]] == [h["id"] for h in cli["hits"]]


def test_memory_search_clock_comes_from_memlens_now(demo: Path) -> None:
    args = {"query": "deploy hook token", "store": "memory-context", "minScore": 0}
    early = MemoryTools(demo, environ={"MEMLENS_NOW": str(NOW)}).call("memory_search", args)
    late = MemoryTools(demo, environ={"MEMLENS_NOW": str(NOW + 20 * 86_400_000)}).call(
        "memory_search", args
    )
    assert late["now"] > early["now"]
    assert (
        late["results"][0]["memlens"]["decayFactor"] < early["results"][0]["memlens"]["decayFactor"]
    )
    with pytest.raises(ToolError, match="MEMLENS_NOW='soon'"):
        MemoryTools(demo, environ={"MEMLENS_NOW": "soon"})


def test_memory_get_reads_lines_as_openclaw_does(tmp_path: Path) -> None:
    home = _fts_home(tmp_path)
    tools = MemoryTools(home, environ={})
    text = (home / "workspace" / "MEMORY.md").read_text(encoding="utf-8")
    whole = tools.call("memory_get", {"path": "MEMORY.md"})
    assert whole.pop("memlens") == {"workspace": str(home / "workspace"), "agent": "main"}
    assert whole == {"status": "ok", "text": text.rstrip("\n"), "path": "MEMORY.md", "from": 1,
                     "lines": len(text.rstrip("\n").split("\n"))}  # fmt: skip
    part = tools.call("memory_get", {"path": "MEMORY.md", "from": 3, "lines": 1})
    assert part["lines"] == 1 and part["truncated"] is True and part["nextFrom"] == 4
    assert part["text"] == (
        "The deploy runs every Thursday via `make deploy`.\n\n"
        "[More content available. Use from=4 to continue.]"
    )
    missing = tools.call("memory_get", {"path": "memory/2020-01-01.md"})
    assert missing["status"] == "not_found" and missing["text"] == ""
    for outside in ("../openclaw.json", "notes.txt", "/etc/passwd"):
        refused = tools.call("memory_get", {"path": outside})
        assert refused["status"] == "error" and refused["code"] == "MEMORY_PATH_NOT_ALLOWED"


def test_knowledge_and_recall_preview_match_the_cli(
    demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = MemoryTools(demo, environ={})
    query = "alembic migration for invoices"
    facts = tools.call("knowledge_search", {"query": query, "minScore": 0.1})
    cli = _cli_json(capsys, "knowledge", str(demo), query, "--min-score", "0.1")
    assert [h["id"] for h in facts["results"]] == [h["id"] for h in cli["hits"]]
    assert facts["results"] and {"matched", "missing", "idf"} <= facts["results"][0].keys()
    preview = tools.call("recall_preview", {"query": query})
    cli = _cli_json(capsys, "recall", str(demo), query, "--ranking", "seed")
    assert preview["ranking"] == "seed"  # by default, the agent's own ranking
    assert preview["block"] == cli["block"] and preview["block"]
    assert preview["blockTokens"] == cli["block_tokens"] > 0
    assert [h["id"] for h in preview["hits"]] == [h["id"] for h in cli["hits"]]
    ranked = tools.call("recall_preview", {"query": query, "ranking": "context"})
    cli = _cli_json(capsys, "recall", str(demo), query, "--ranking", "context")
    assert ranked["ranking"] == "context" and ranked["block"] == cli["block"]
    assert [h["id"] for h in ranked["hits"]] == [h["id"] for h in cli["hits"]]
    assert RANKING_NAMES == tuple(RANKINGS)  # the schema's enum is every ranking


def test_sessions_list_and_session_context(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tools = MemoryTools(demo, environ={})
    listed = tools.call("sessions_list", {})
    cli = _cli_json(capsys, "sessions", str(demo))
    assert listed["total"] == len(cli["sessions"]) == len(listed["sessions"])
    times = [s["modified"] for s in listed["sessions"]]
    assert times == sorted(times, reverse=True)
    page = tools.call("sessions_list", {"limit": 2, "offset": 1})
    assert [s["id"] for s in page["sessions"]] == [s["id"] for s in listed["sessions"][1:3]]
    main = tools.call("sessions_list", {"agent": "main"})["sessions"]
    assert main and all(s["agent"] == "main" for s in main)

    sid = max(listed["sessions"], key=lambda s: s["messages"])["id"]
    full = tools.call("session_context", {"session": sid[:8], "maxTokens": 10**9})
    assert full["omitted"] == 0 and full["keptTokens"] == full["contextTokens"]
    assert [i["index"] for i in full["items"]] == list(range(full["messages"]))
    small = tools.call("session_context", {"session": sid, "maxTokens": 500})
    assert small["keptTokens"] <= 500 or len(small["items"]) == 1
    assert small["omitted"] == full["messages"] - len(small["items"]) > 0
    assert small["items"] == full["items"][-len(small["items"]) :]  # the newest, in order
    tiny = tools.call("session_context", {"session": sid, "maxTokens": 1})
    assert tiny["items"] == full["items"][-1:]  # the newest is kept whatever its size
    early = tools.call("session_context", {"session": sid, "entry": "#3", "maxTokens": 10**9})
    assert early["messages"] < full["messages"]


def test_bad_arguments_and_bad_data_are_clear_errors(tmp_path: Path, demo: Path) -> None:
    with pytest.raises(ToolError, match="no such file or folder"):
        MemoryTools(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ToolError, match="not a data directory memlens reads") as err:
        MemoryTools(tmp_path / "empty")
    assert str(err.value).count(str(tmp_path / "empty")) == 1  # the path named once
    tools = MemoryTools(demo, environ={})
    cases = [
        ("nope", {}, "unknown tool 'nope'"),
        ("memory_search", {}, "missing required argument 'query'"),
        ("memory_search", {"query": "x", "limit": 3}, "unknown argument 'limit'"),
        ("memory_search", {"query": 3}, "'query' must be a string"),
        ("memory_search", {"query": "  "}, "query must not be blank"),
        ("memory_search", {"query": "x", "maxResults": 0}, "'maxResults' must be at least 1"),
        ("memory_search", {"query": "x", "maxResults": 2.5}, "must be a whole number"),
        ("memory_search", {"query": "x", "corpus": "web"}, "must be one of: memory, wiki"),
        ("memory_search", {"query": "x", "minScore": "high"}, "must be a finite number"),
        ("session_context", {"session": "zzzz"}, "no session matches 'zzzz'"),
        ("sessions_list", {"offset": -1}, "'offset' must be at least 0"),
    ]
    for tool, args, message in cases:
        with pytest.raises(ToolError, match=message):
            tools.call(tool, args)
    assert check_arguments("memory_get", {"path": "MEMORY.md"}) == {"path": "MEMORY.md"}


def test_no_tool_writes_anything(demo: Path) -> None:
    before = _snapshot(demo)
    tools = MemoryTools(demo, environ={"MEMLENS_NOW": str(NOW)})
    sid = tools.call("sessions_list", {})["sessions"][0]["id"]
    for tool, args in (
        ("memory_search", {"query": "deploy"}),
        ("memory_get", {"path": "memory/2026-11-16.md"}),
        ("knowledge_search", {"query": "migration"}),
        ("recall_preview", {"query": "deploy hook", "session": sid}),
        ("session_context", {"session": sid}),
    ):
        tools.call(tool, args)
    assert _snapshot(demo) == before


def test_merge_keeps_each_stream_in_order() -> None:
    a = [{"score": 0.9, "id": "a1"}, {"score": 0.95, "id": "a2"}, {"score": 0.1, "id": "a3"}]
    b = [{"score": 0.92, "id": "b1"}, {"score": 0.5, "id": "b2"}]
    assert [h["id"] for h in merge_streams([a, b], 10)] == ["b1", "a1", "a2", "b2", "a3"]
    assert [h["id"] for h in merge_streams([a, b], 2)] == ["b1", "a1"]
    assert [
        h["id"] for h in merge_streams([[{"score": 1, "id": "x"}], [{"score": 1, "id": "y"}]], 5)
    ] == ["x", "y"]


def test_annotation_carriers_and_citations() -> None:
    text = "Deploy on Fridays <!-- importance: 9 -->\nkeep <!-- not: this -->\n<!-- trigger:\nx -->"
    assert (
        strip_annotations(text)
        == "Deploy on Fridays\nkeep <!-- not: this -->\n<!-- trigger:\nx -->"
    )
    assert strip_annotations("plain") == "plain"
    assert citation({"path": "MEMORY.md", "startLine": 3, "endLine": 3}) == "MEMORY.md#L3"
    assert citation({"path": "a.md", "startLine": 1, "endLine": 4}) == "a.md#L1-L4"


OCC = Path(__file__).resolve().parents[1] / "data" / "openclaudecode" / "home"


def test_openclaudecode_memory_by_the_designs_scoring(tmp_path: Path) -> None:
    home = tmp_path / "occ"
    shutil.copytree(OCC, home)
    before = _snapshot(home)
    tools = MemoryTools(home, environ={})
    out = tools.call("memory_search", {"query": "deploy window", "maxResults": 20})
    assert [s["store"] for s in out["stores"]] == ["openclaudecode"]
    assert out["stores"][0]["match"] == '"deploy" AND "window"'
    # the design's query through SQLite alone: same chunks, same order, scores from its rank
    with sqlite3.connect(f"file:{home / 'openclaudecode.db'}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT id, rank FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rank",
            ('"deploy" AND "window"',),
        ).fetchall()
    assert [r["entryIds"][0] for r in out["results"]] == [cid for cid, _ in rows]
    for hit, (_cid, rank) in zip(out["results"], rows, strict=True):
        assert hit["memlens"]["bm25Rank"] == rank < 0
        assert hit["score"] == pytest.approx(-rank / (1 - rank))  # OpenClaw's bm25RankToScore
        assert hit["session"].count(":") == 1 and hit["path"].endswith("openclaudecode.db")
    telegram = tools.call("memory_search", {"query": "deploy", "channel": "telegram"})
    assert telegram["results"] and all(
        r["session"].startswith("telegram:") for r in telegram["results"]
    )
    by_key = tools.call("memory_search", {"query": "deploy", "session": "telegram:5054873275"})
    by_id = tools.call("memory_search", {"query": "deploy", "session": "tg-0001"})
    assert [r["entryIds"] for r in by_key["results"]] == [r["entryIds"] for r in by_id["results"]]
    assert tools.call("memory_search", {"query": "deploy", "minScore": 0.99})["results"] == []
    compacted = next(
        s for s in tools.call("sessions_list", {})["sessions"] if s["compactions"] == 1
    )
    context = tools.call("session_context", {"session": compacted["id"], "maxTokens": 10**6})
    assert context["items"][0]["type"] == "compaction" and context["items"][0]["text"]
    newest = tools.call("session_context", {"session": "telegram:5054873275"})
    assert newest["session"] == "tg-0004"  # a key (as sessions_list gives it): its newest
    assert _snapshot(home) == before


def test_secrets_are_redacted_before_they_are_sent(tmp_path: Path) -> None:
    home = _fts_home(tmp_path)
    key = "sk-proj-" + "FAKE0123456789abcdefFAKE0123456789"
    note = home / "workspace" / "memory" / "keys.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text(f"# Keys\n\nOPENAI_API_KEY={key}\n", encoding="utf-8")
    tools = MemoryTools(home, environ={})
    got = tools.call("memory_get", {"path": "memory/keys.md"})
    assert key not in json.dumps(got) and "[REDACTED]" in got["text"]
    assert got["redacted"] == 1
    chunk_id = "c50662b938cb22066b7fe93f6c38b743bc3b7349a9507eb1ba0d8454c0266e19"
    found = tools.call("memory_search", {"query": "deploy"})
    assert found["results"][0]["memlens"]["id"] == chunk_id  # ids are not secrets
    assert "redacted" not in found  # nothing secret in that answer


def test_what_the_agent_writes_meanwhile_shows_up(demo: Path, monkeypatch) -> None:
    import core.mcp.data

    monkeypatch.setattr(core.mcp.data, "RECHECK_S", 0.0)
    tools = MemoryTools(demo, environ={})
    path = next((demo / "agents" / "main" / "sessions").glob("4079021e-*.jsonl"))
    before = tools.call("session_context", {"session": "4079021e", "maxTokens": 10**9})
    line = {
        "type": "message", "id": "feedbeef", "parentId": "960c5e15",
        "timestamp": "2026-11-25T19:30:00.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": "ship it on Friday"}],
                    "timestamp": 1795635000000},
    }  # fmt: skip
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n" + '{"type":"message","id":"half')  # a partial line
    after = tools.call("session_context", {"session": "4079021e", "maxTokens": 10**9})
    assert after["messages"] == before["messages"] + 1
    assert after["items"][-1]["text"] == "ship it on Friday"


def test_an_open_index_sees_what_openclaw_writes_next(tmp_path: Path) -> None:
    home = _fts_home(tmp_path)
    tools = MemoryTools(home, environ={"MEMLENS_NOW": str(NOW)})
    assert tools.call("memory_search", {"query": "deploy"})["results"]
    db = home / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    with sqlite3.connect(db) as writer:  # the agent re-indexing: the chunk is gone
        writer.execute("UPDATE memory_index_chunks_fts SET text = 'nothing here'")
    # within a second of the last look at DATA: only the open index notices the change
    assert tools.call("memory_search", {"query": "deploy"})["results"] == []


def test_the_vector_matrix_is_built_before_the_first_hybrid_search(tmp_path: Path) -> None:
    from core.openclaw.memsearch_vectors import DEFAULT_CACHE

    assert MemoryTools(_fts_home(tmp_path), environ={}).data.warm_search() is False  # none
    shutil.copytree(RECORDED / "home", tmp_path / "hybrid")
    tools = MemoryTools(tmp_path / "hybrid" / ".openclaw", environ={})
    before = DEFAULT_CACHE.builds
    assert tools.data.warm_search() is True
    assert DEFAULT_CACHE.builds == before + 1
    assert tools.data.warm_search() is True and DEFAULT_CACHE.builds == before + 1  # kept


def _hold(
    monkeypatch: pytest.MonkeyPatch, owner: object, name: str
) -> tuple[threading.Event, threading.Event, list[int]]:
    """*owner.name* patched to wait for a release: (started, release, its calls)."""
    started, release, calls = threading.Event(), threading.Event(), []
    real = getattr(owner, name)

    def held(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        started.set()
        assert release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, held)
    return started, release, calls


def _listed_meanwhile(tools: MemoryTools) -> list[dict[str, Any]]:
    """``sessions_list`` called from another thread, its answer if it came within 30 s."""
    listed: list[dict[str, Any]] = []
    call = threading.Thread(target=lambda: listed.append(tools.call("sessions_list", {})))
    call.start()
    call.join(30)
    return listed


def test_a_call_needing_no_vector_does_not_wait_for_the_matrix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The matrix is read through a connection of its own, outside the data's lock."""
    from core.openclaw import memsearch_vectors

    shutil.copytree(RECORDED / "home", tmp_path / "hybrid")
    tools = MemoryTools(tmp_path / "hybrid" / ".openclaw", environ={"MEMLENS_NOW": str(NOW)})
    building, release, _ = _hold(monkeypatch, memsearch_vectors, "build_matrix")
    warm = threading.Thread(target=tools.data.warm_search)
    warm.start()
    try:
        assert building.wait(30)
        listed = _listed_meanwhile(tools)
        assert listed and listed[0]["total"] >= 1  # answered while the matrix is read
    finally:
        release.set()
        warm.join(30)


def test_calls_go_on_while_the_warm_store_opens_and_wait_for_one_opening(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memory-context store is opened outside the data's lock, once for every caller."""
    from core.mcp import data as data_mod

    tools = MemoryTools(demo, environ={"MEMLENS_NOW": str(NOW)})
    opening, release, opened = _hold(monkeypatch, data_mod, "open_recall")
    first = threading.Thread(target=tools.data.recall)
    first.start()
    facts: list[dict[str, Any]] = []
    second = threading.Thread(
        target=lambda: facts.append(tools.call("knowledge_search", {"query": "alembic"}))
    )
    try:
        assert opening.wait(30)
        second.start()  # needs the store too: waits for this opening, starts none
        listed = _listed_meanwhile(tools)
        assert listed and listed[0]["total"] >= 1  # answered while the store opens
        assert not facts
    finally:
        release.set()
        first.join(30)
        second.join(30)
    assert facts and facts[0]["results"] and len(opened) == 1


def test_a_memory_index_search_goes_on_while_the_sessions_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sessions are loaded outside the data's lock, once for every caller."""
    from core.mcp import data as data_mod

    tools = MemoryTools(_fts_home(tmp_path), environ={"MEMLENS_NOW": str(NOW)})
    loading, release, loads = _hold(monkeypatch, data_mod, "load_dataset")
    first = threading.Thread(target=tools.data.dataset)
    first.start()
    listed: list[dict[str, Any]] = []
    second = threading.Thread(target=lambda: listed.append(tools.call("sessions_list", {})))
    try:
        assert loading.wait(30)
        second.start()  # needs the sessions: waits for this load, starts none
        found: list[dict[str, Any]] = []
        search = threading.Thread(
            target=lambda: found.append(tools.call("memory_search", {"query": "deploy"}))
        )
        search.start()
        search.join(30)
        assert found and found[0]["results"]  # answered while the sessions load
        assert not listed
    finally:
        release.set()
        first.join(30)
        second.join(30)
    assert listed and listed[0]["total"] == 0 and len(loads) == 1  # (this home has no session)


def test_an_open_openclaudecode_memory_sees_what_the_agent_writes_next(tmp_path: Path) -> None:
    home = tmp_path / "occ"
    shutil.copytree(OCC, home)
    with sqlite3.connect(home / "openclaudecode.db") as db:  # as better-sqlite3 runs it
        db.execute("PRAGMA journal_mode=WAL")
    # no writer now: memlens reads the file immutable, and must notice the next write
    tools = MemoryTools(home, environ={})
    assert len(tools.call("memory_search", {"query": "potions"})["results"]) == 2
    with sqlite3.connect(home / "openclaudecode.db") as writer:  # the agent re-indexes
        writer.execute("DELETE FROM memory_fts WHERE text LIKE '%potions%'")
    # within a second of the last look at DATA: only the open database notices
    assert tools.call("memory_search", {"query": "potions"})["results"] == []


def test_a_damaged_store_is_listed_with_its_error_beside_the_others(demo: Path) -> None:
    """The demo's OpenClaw index cut short: the memory-context store still answers, the
    index's error names its file; asked for by name, or alone, it is the call's error."""
    index = demo / "memory" / "main.sqlite"
    with index.open("r+b") as fh:
        fh.truncate(30_000)
    tools = MemoryTools(demo, environ={"MEMLENS_NOW": str(NOW)})
    out = tools.call("memory_search", {"query": "test"})
    assert out["results"] and {r["memlens"]["store"] for r in out["results"]} == {"memory-context"}
    damaged = out["stores"][0]
    assert damaged["store"] == "openclaw-index" and damaged["results"] == 0
    assert damaged["error"].startswith(f"{index}: ") and "malformed" in damaged["error"]
    with pytest.raises(ToolError, match="malformed") as err:
        tools.call("memory_search", {"query": "test", "store": "openclaw-index"})
    assert str(err.value) == damaged["error"]
    (demo / "memory" / "context" / "segments.jsonl").unlink()
    with pytest.raises(ToolError, match="malformed"):
        MemoryTools(demo, environ={}).call("memory_search", {"query": "test"})


def test_memory_get_needs_an_openclaw_index_whatever_data_is(
    tmp_path: Path, fixtures_dir: Path
) -> None:
    """A transcript or an OpenClaudeCode database as DATA was taken for an index file,
    and memory_get answered 'not_found' from a workspace that does not exist."""
    shutil.copytree(OCC, tmp_path / "occ")
    for data in (fixtures_dir / "before-compaction.jsonl", tmp_path / "occ" / "openclaudecode.db"):
        with pytest.raises(ToolError, match="no OpenClaw memory index") as err:
            MemoryTools(data, environ={}).call("memory_get", {"path": "MEMORY.md"})
        assert str(err.value).startswith(f"{data}: ")
