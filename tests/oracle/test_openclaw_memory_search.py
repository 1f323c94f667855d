"""``memlens memory search`` against ``openclaw memory search`` (OpenClaw 2026.9.6).

A real home (MEMORY.md, USER.md, dated and undated notes under memory/) is
indexed by the real ``openclaw memory index --force`` through FakeLLM's
embeddings; then, for each query, OpenClaw's own ``memory search --json`` and
memlens's must name the same chunks in the same order with scores within 1e-6.
OpenClaw scores vectors through sqlite-vec at float32 precision, memlens at
float64: that is the only expected difference (about 1e-7).

The decay of dated notes depends on the clock, and one OpenClaw run takes 10-25 s:
OpenClaw's clock is pinned to :data:`NOW` by a preloaded module (``Date`` runs
1000 times slower from there), and memlens searches with ``--now NOW``.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest

from core.cli.main import run_cli
from tests.oracle.fake_llm import FakeLLM

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

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


class Home:
    """An OpenClaw home indexed by OpenClaw, with its own search answers."""

    def __init__(self, root: Path, openclaw: Any, llm: FakeLLM, provider: str) -> None:
        self.root, self.openclaw, self.llm = root, openclaw, llm
        self.ws = root / "ws"
        for name, text in NOTES.items():
            (self.ws / name).parent.mkdir(parents=True, exist_ok=True)
            (self.ws / name).write_text(text)
        search: dict[str, Any] = {"provider": provider}
        if provider != "none":
            search |= {"model": "fake-embed", "remote": {"baseUrl": llm.base_url, "apiKey": "k"}}
        state = root / ".openclaw"
        state.mkdir()
        (state / "openclaw.json").write_text(
            json.dumps(
                {"agents": {"defaults": {"workspace": str(self.ws)}}, "memory": {"search": search}}
            )
        )
        clock = root.parent / f"clock-{root.name}.mjs"
        clock.write_text(CLOCK_JS)
        self.env = openclaw.env(root)
        self.env["NODE_OPTIONS"] = f"--import={clock.as_uri()}"
        self.env["OPENCLAW_TEST_NOW_MS"] = str(NOW)
        self.db = state / "agents" / "main" / "agent" / "openclaw-agent.sqlite"

    def openclaw_cli(self, *args: str) -> str:
        done = subprocess.run(
            [*self.openclaw.cli, *args], env=self.env, cwd=self.ws, capture_output=True,
            text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
        return done.stdout

    def openclaw_search(self, query: str) -> dict[str, Any]:
        out = self.openclaw_cli("memory", "search", "--query", query, "--json")
        return json.loads(out[out.index("{") :])

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
        return json.loads(out)


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(embedding_dim=8) as server:
        yield server


def _home(tmp_path_factory: Any, openclaw: Any, llm: FakeLLM, provider: str, queries: Any) -> Any:
    home = Home(tmp_path_factory.mktemp(provider), openclaw, llm, provider)
    home.openclaw_cli("memory", "index", "--force")
    answers = {q: home.openclaw_search(q) for q in queries}
    return home, answers


@pytest.fixture(scope="module")
def hybrid(tmp_path_factory: Any, openclaw: Any, llm: FakeLLM) -> Any:
    return _home(tmp_path_factory, openclaw, llm, "openai-compatible", HYBRID_QUERIES)


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
