"""memlens's memory search and status against OpenClaw 2026.9.6's own, recorded (no Node).

``tests/data/openclaw-2026.9.6`` holds homes indexed by the real OpenClaw and, in
``expected.json``, what its ``memory search --json`` and ``memory status --json``
answered (see tests/oracle/make_openclaw_home.py). The query embeddings are
FakeLLM's deterministic vectors, so memlens embeds the query the same way here.

OpenClaw's clock was not pinned for that recording: dated notes decay against the
moment of the search, somewhere between a command's ``started_ms`` and
``finished_ms``. memlens runs at both ends; OpenClaw's scores must lie between
the two (to 1e-6) and its order must be memlens's at one end at least.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.cli.memory import status
from core.openclaw.memory_home import MemoryHome, resolve_home, run_search
from tests.oracle.fake_llm import embedding

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "openclaw-2026.9.6"
TOLERANCE = 1e-6

if not (FIXTURE / "expected.json").is_file():
    pytest.skip(f"no recorded OpenClaw fixture at {FIXTURE}", allow_module_level=True)

EXPECTED = json.loads((FIXTURE / "expected.json").read_text(encoding="utf-8"))


class FakeEmbedder:
    """The query vector FakeLLM's ``/v1/embeddings`` answered OpenClaw."""

    provider = "openai-compatible"

    def __init__(self, model: str, dim: int) -> None:
        self.model, self.dim = model, dim

    def embed_query(self, text: str) -> list[float]:
        return embedding(text, self.dim)


def _searches(key: str) -> list[dict[str, Any]]:
    return [
        c for c in EXPECTED.get(key, []) if " memory search " in f" {c['label']} " and c["rc"] == 0
    ]


def _option(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def _home(name: str, agent: str) -> MemoryHome:
    home = resolve_home(FIXTURE / name, agent)
    space = home.workspace
    if space is not None and not space.is_dir():  # the recording's absolute path: use the copy
        local = FIXTURE / name / ".openclaw" / space.name
        space = local if local.is_dir() else None
    return MemoryHome(home.agent, home.index, home.config, space, home.agents)


def _listing() -> list[str]:
    return sorted(str(p.relative_to(FIXTURE)) for p in FIXTURE.rglob("*"))


@pytest.fixture(scope="module", autouse=True)
def nothing_written() -> Any:
    before = _listing()
    yield
    assert _listing() == before, "reading the fixture created or removed files"


def _run(name: str, command: dict[str, Any], fts: bool) -> tuple[Any, Any]:
    argv = command["argv"]
    agent = _option(argv, "--agent") or "main"
    home = _home(name, agent)
    max_results = _option(argv, "--max-results")
    min_score = _option(argv, "--min-score")
    with_model: Any = None if fts else FakeEmbedder("fake-embed", 8)
    out = []
    for now in (command["started_ms"], command["finished_ms"]):
        out.append(
            run_search(
                home,
                _option(argv, "--query") or "",
                now_ms=now,
                max_results=None if max_results is None else int(max_results),
                min_score=None if min_score is None else float(min_score),
                embedder=with_model,
            ).to_json()
        )
    return out[0], out[1]


def _check(theirs: dict[str, Any], early: dict[str, Any], late: dict[str, Any]) -> float:
    key = ("path", "startLine", "endLine", "source")
    want = [tuple(r[k] for k in key) for r in theirs["results"]]
    orders = [[tuple(r[k] for k in key) for r in run["results"]] for run in (early, late)]
    assert want in orders, (want, orders)
    mine = early if orders[0] == want else late
    other = late if mine is early else early
    worst = 0.0
    for i, b in enumerate(theirs["results"]):
        a = mine["results"][i]
        assert set(b) <= set(a), f"memlens lacks {set(b) - set(a)}"
        assert a["snippet"] == b["snippet"]
        assert a["textScore"] == pytest.approx(b["textScore"], abs=1e-12)
        if "vectorScore" in b:
            assert a["vectorScore"] == pytest.approx(b["vectorScore"], abs=TOLERANCE)
        same = next((r for r in other["results"] if tuple(r[k] for k in key) == want[i]), a)
        lo, hi = sorted((a["score"], same["score"]))
        assert lo - TOLERANCE <= b["score"] <= hi + TOLERANCE, (want[i], lo, b["score"], hi)
        worst = max(
            worst,
            0.0 if lo <= b["score"] <= hi else min(abs(b["score"] - lo), abs(b["score"] - hi)),
        )
        assert a.get("provenance") == b.get("provenance")
    return worst


@pytest.mark.parametrize("command", _searches("commands"), ids=lambda c: c["label"])
def test_hybrid_search_matches_the_recording(command: dict[str, Any]) -> None:
    early, late = _run("home", command, fts=False)
    assert early["mode"] == "hybrid", early["reason"]
    _check(command["json"], early, late)


@pytest.mark.parametrize("command", _searches("fts_commands"), ids=lambda c: c["label"])
def test_fts_only_search_matches_the_recording(command: dict[str, Any]) -> None:
    early, late = _run("fts-home", command, fts=True)
    assert early["mode"] == "fts-only" and "none" in early["reason"]
    _check(command["json"], early, late)


def _statuses() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for key, name in (("commands", "home"), ("fts_commands", "fts-home")):
        for c in EXPECTED.get(key, []):
            if "memory status" in c["label"] and c["rc"] == 0 and c.get("json"):
                out.append((name, c))
    return out


@pytest.mark.parametrize(
    ("name", "command"), _statuses(), ids=lambda v: v if isinstance(v, str) else v["label"]
)
def test_status_matches_the_recording(name: str, command: dict[str, Any]) -> None:
    agent = _option(command["argv"], "--agent") or "main"
    entries = command["json"] if isinstance(command["json"], list) else [command["json"]]
    (theirs,) = [e for e in entries if e.get("agentId", agent) == agent]
    want = theirs["status"]
    mine = status(_home(name, agent))["status"]
    for field in ("files", "chunks", "provider", "model", "requestedProvider", "sources"):
        assert mine.get(field) == want.get(field), field
    assert [(s["source"], s["files"], s["chunks"]) for s in mine["sourceCounts"]] == [
        (s["source"], s["files"], s["chunks"]) for s in want["sourceCounts"]
    ]
    assert mine["cache"]["entries"] == want["cache"]["entries"]
    assert mine["fts"]["available"] == want["fts"]["available"]
    assert mine["vector"]["index"]["state"] == want["vector"]["index"]["state"]
    assert mine["vector"]["enabled"] == want["vector"]["enabled"]
    assert mine["vector"].get("dims") == want["vector"].get("dims")
