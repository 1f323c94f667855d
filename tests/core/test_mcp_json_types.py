"""Every tool's answer is made of JSON's own types, on every kind of data memlens reads.

A numpy scalar in an answer (``np.float64`` passes as a float, ``np.bool_`` does not)
breaks the call: the server's ``json.dumps`` refuses it and the host gets "Object of type
bool is not JSON serializable" instead of its results. It happened for ``memory_search``
over the real OpenClaw home when the embedder was unreachable (keyword-only, a chunk
whose text holds an underscore scored through the path boost's numpy array).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from core.mcp.tools import MemoryTools
from tests.demo_copy import demo_copy
from tests.oracle.fake_llm import FakeLLM, recorded_port

if TYPE_CHECKING:
    from collections.abc import Iterator

DATA = Path(__file__).resolve().parents[1] / "data"
PLAIN = (dict, list, str, int, float, bool, type(None))
QUERIES = ("deploy database orders_prod", "billing_legacy target date", "the")


def not_plain(value: Any, where: str = "$") -> Iterator[str]:
    """Where *value* holds anything but JSON's own Python types (subclasses too)."""
    kind = type(value)
    if kind not in PLAIN:
        yield f"{where}: {kind.__module__}.{kind.__qualname__}"
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                yield f"{where}: key {key!r}"
            yield from not_plain(item, f"{where}.{key}")
    elif kind is list:
        for i, item in enumerate(value):
            yield from not_plain(item, f"{where}[{i}]")


def answers(data: Path) -> dict[str, Any]:
    """Every tool's answer over *data* (the calls that succeed), by a label."""
    tools = MemoryTools(data, environ={"MEMLENS_NOW": "1795700000000"})
    calls: list[tuple[str, dict[str, Any]]] = [("sessions_list", {})]
    for query in QUERIES:
        calls += [
            ("memory_search", {"query": query, "maxResults": 50, "minScore": 0}),
            ("memory_search", {"query": query}),
            ("knowledge_search", {"query": query}),
            ("recall_preview", {"query": query}),
        ]
    calls.append(("memory_get", {"path": "MEMORY.md"}))
    out: dict[str, Any] = {}
    for name, args in calls:
        try:
            out[f"{name} {json.dumps(args)}"] = tools.call(name, args)
        except Exception as exc:  # a ToolError for what the data lacks
            assert type(exc).__name__ == "ToolError", f"{name} {args}: {exc!r}"
    for session in out["sessions_list {}"]["sessions"][:3]:
        label = f"session_context {session['id']}"
        out[label] = tools.call("session_context", {"session": session["id"]})
    return out


def assert_plain(found: dict[str, Any]) -> None:
    bad = {label: list(not_plain(answer))[:3] for label, answer in found.items()}
    assert not {label: b for label, b in bad.items() if b}
    for answer in found.values():
        json.dumps(answer, allow_nan=False)  # what the server sends


@pytest.fixture
def openclaw_home(tmp_path: Path) -> Path:
    shutil.copytree(DATA / "openclaw-2026.9.6" / "home", tmp_path / "home")
    return tmp_path / "home" / ".openclaw"


def test_openclaw_keyword_only_when_the_embedder_is_unreachable(openclaw_home: Path) -> None:
    found = answers(openclaw_home)
    searches = [a for label, a in found.items() if label.startswith("memory_search")]
    assert searches and all(a["mode"] == "fts-only" and a["results"] for a in searches[:2])
    assert_plain(found)


def test_openclaw_hybrid(openclaw_home: Path) -> None:
    port = recorded_port(openclaw_home / "openclaw.json")
    assert port  # (else the index's provider key would not match: keyword-only)
    with FakeLLM(model="m", embedding_dim=8, port=port):
        found = answers(openclaw_home)
    searches = [a for label, a in found.items() if label.startswith("memory_search")]
    assert searches and all(a["mode"] == "hybrid" for a in searches)
    assert any("vectorScore" in r for a in searches for r in a["results"])
    assert_plain(found)


@pytest.mark.parametrize(
    "home",
    ["openclaw-2026.9.6/fts-home/.openclaw", "openclaudecode/home", "demo"],
)
def test_other_kinds_of_data(tmp_path: Path, home: str) -> None:
    if home == "demo":  # sessions, memory-context store, knowledge, OpenClaw index
        data = demo_copy(tmp_path / "demo")
    else:
        data = shutil.copytree(DATA / home, tmp_path / "copy")
    found = answers(data)
    assert any(label.startswith("memory_search") for label in found)
    assert_plain(found)


ODD_QUERIES = (
    '"', "a\"b", "(", "*", "-x", "NOT", "AND OR", "NEAR(a b)", "col:val", "x" * 5000,
    "日本語 テスト", "emoji 🎉 deploy", "\x00null", "deploy\nnewline", "İstanbul", "{x}",
    "memory/2026-11-01.md", "%", "_", "\\", "\ud800", "deploy \udfff orders_prod",
)  # fmt: skip


@pytest.mark.parametrize(
    ("home", "word"),
    [("openclaw", "deploy"), ("openclaudecode/home", "test"), ("demo", "postgres")],
)
def test_odd_queries_are_answered(
    tmp_path: Path, openclaw_home: Path, home: str, word: str
) -> None:
    """FTS5 syntax, control characters, huge and non-ASCII queries, lone surrogates (JSON
    may carry ``"\\ud800"``; bound to SQLite as U+FFFD, as Node binds it): an answer,
    never an error naming the database."""
    if home == "openclaw":
        data = openclaw_home
    elif home == "demo":
        data = demo_copy(tmp_path / "demo")
    else:
        data = shutil.copytree(DATA / home, tmp_path / "copy")
    tools = MemoryTools(data, environ={"MEMLENS_NOW": "1795700000000"})
    for query in ODD_QUERIES:
        found = tools.call("memory_search", {"query": query})
        assert list(not_plain(found)) == [], query
    plain, odd = ({"query": word}, {"query": f"{word} \ud800"})
    same = [tools.call("memory_search", q)["results"] for q in (plain, odd)]
    assert same[0] and same[0] == same[1]  # the surrogate is no token


def test_a_lone_surrogate_is_bound_as_node_binds_it(tmp_path: Path) -> None:
    """As U+FFFD (a pair held as two code points: one character), not an error."""
    import sqlite3

    from core.openclaw.sqlite_ro import ReadOnlyDb

    path = tmp_path / "t.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE t (x TEXT)")
        db.executemany("INSERT INTO t VALUES (?)", [("a\ufffdb",), ("🎉",)])
    db.close()
    with ReadOnlyDb(path) as ro:
        assert ro.rows("SELECT x FROM t WHERE x = ?", ["a\ud800b"]) == [("a\ufffdb",)]
        assert ro.rows("SELECT x FROM t WHERE x = ?", ["\ud83c\udf89"]) == [("🎉",)]
        assert ro.rows("SELECT count(*) FROM t WHERE ? < 4", [3]) == [(2,)]
