"""The oracle tier: pi itself (npm, pinned) reads what memlens writes.

pi's own ``parseSessionEntries``, ``migrateSessionEntries``, ``buildSessionContext``
and ``estimateTokens`` replay a transcript after ``memlens compact --write``:
the context pi would send starts with memlens's summary and holds exactly the
messages (and the token estimate) memlens says the model sees. The fallback
written on request (``--allow-fallback``) is read by pi with its notice first;
a failed summary leaves pi's context exactly as it was.

The package is installed once by ``tests/oracle/agents.py`` (pinned, into a cache
outside the repository); Node 20 is enough for pi.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import orjson
import pytest

from core.cli.main import run_cli
from core.compaction.plan import plan_compaction
from core.transcript import context_at, load_transcript
from tests.core.summary_fault_server import Fault, running
from tests.demo_copy import demo_copy
from tests.oracle.agents import run_node

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).with_name("pi_context.mjs")
SESSION = (
    "57b355d7-a4ad-4175-b7cd-8c1338e69d98"  # v3, compactable (tests/core/test_summary_faults.py)
)
NOW = 1_795_305_600_000


def pi_context(pkg: Path, transcript: Path) -> dict:
    return dict(run_node(SCRIPT, str(pkg), str(transcript), timeout=120))


@pytest.fixture
def transcript(tmp_path) -> Path:
    home = demo_copy(tmp_path / "home", now_ms=NOW, segments=40)  # written once, copied
    path = home / "agents" / "main" / "sessions" / f"{SESSION}.jsonl"
    old = time.time() - 3600
    os.utime(path, (old, old))  # not "modified in the last few seconds"
    return path


def memlens_view(path: Path) -> dict:
    items = context_at(load_transcript(path), None)
    return {
        "messages": len(items),
        "roles": [i.message.role for i in items],
        "tokens": sum(i.tokens for i in items),
    }


def test_pi_reads_memlens_compaction_with_its_summary_first(pi_package, transcript):
    before = pi_context(pi_package, transcript)
    assert before["messages"] == memlens_view(transcript)["messages"]
    assert run_cli(["compact", str(transcript), "--write", "--json"]) == 0
    entry = orjson.loads(transcript.read_bytes().splitlines()[-1])
    assert entry["type"] == "compaction"
    after = pi_context(pi_package, transcript)
    assert after["leaf"] == entry["id"] and after["leafType"] == "compaction"
    assert after["first"] == {"role": "compactionSummary", "summary": entry["summary"]}
    assert after["messages"] < before["messages"]
    mine = memlens_view(transcript)
    assert (after["messages"], after["roles"]) == (mine["messages"], mine["roles"])
    assert after["tokens"] == mine["tokens"]  # pi's estimateTokens, message for message


def test_pi_reads_the_fallback_written_on_request_with_its_notice_first(
    pi_package, transcript, capsys
):
    with running() as server:
        server.set(Fault(status=500, body={"error": {"message": "boom"}}))
        url = f"openai:{server.url}/v1:m"
        untouched = transcript.read_bytes()
        before = pi_context(pi_package, transcript)
        # a failure never turns into a write: pi's context is exactly as it was
        assert (
            run_cli(["compact", str(transcript), "--write", "--llm", url, "--timeout", "20"]) == 1
        )
        assert transcript.read_bytes() == untouched
        assert pi_context(pi_package, transcript) == before
        # only when the user asks for it
        argv = ["compact", str(transcript), "--write", "--llm", url, "--allow-fallback"]
        assert run_cli([*argv, "--timeout", "20"]) == 0
    capsys.readouterr()
    after = pi_context(pi_package, transcript)
    assert after["first"]["role"] == "compactionSummary"
    assert after["first"]["summary"].startswith("[memlens fallback summary:")
    assert "this is not a real summary" in after["first"]["summary"].splitlines()[0]
    mine = memlens_view(transcript)
    assert (after["messages"], after["tokens"]) == (mine["messages"], mine["tokens"])


def _run_together(src: Path, dst: Path, line_no: int) -> None:
    """Copy *src* with line *line_no* (1-based) and the next written as one line."""
    lines = src.read_bytes().splitlines()
    lines[line_no - 1 : line_no + 1] = [lines[line_no - 1] + lines[line_no]]
    dst.write_bytes(b"\n".join(lines) + b"\n")


@pytest.mark.parametrize("line_no", [2, 40, -2])
def test_a_line_pi_cannot_parse_is_out_of_memlens_context_too(
    pi_package, transcript, fixtures_dir, tmp_path, line_no
):
    for src in (transcript, fixtures_dir / "large-session.jsonl"):
        n = len(src.read_bytes().splitlines())
        dst = tmp_path / f"joined-{src.name}"
        _run_together(src, dst, line_no % n)
        session = load_transcript(dst)
        recovered = [e for e in session.entries if e.recovered]
        assert len(recovered) == 2  # still shown, marked
        theirs = pi_context(pi_package, dst)
        mine = memlens_view(dst)
        assert (mine["messages"], mine["roles"]) == (theirs["messages"], theirs["roles"])
        assert mine["tokens"] == theirs["tokens"]
        if src == transcript:  # v3: real ids (pi gives v1 entries random ones)
            assert session.leaf is not None and session.leaf.id == theirs["leaf"]
        assert not any(i.entry.recovered for i in context_at(session, None))
        plan = plan_compaction(session, window=64_000, keep_recent_tokens=2_000)
        planned = [*plan.summarize, *plan.kept, *plan.turn_prefix, *plan.history_dropped]
        assert (planned or not plan.ok) and not any(i.entry.recovered for i in planned), plan.reason
