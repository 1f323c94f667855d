"""The oracle tier, round trip: the real pi resumes a session memlens compacted.

The real pi (npm, pinned) writes a session long enough for memlens to plan a
compaction (its default keeps the 20,000 most recent tokens; the fake LLM's
answers are long). ``memlens compact --write`` (offline summary) appends the
compaction; the real pi then resumes the file with one more prompt. The request
it sends starts, after the system prompt, with memlens's summary, then exactly
the messages from the compaction's ``firstKeptEntryId`` on, then the new
prompt; pi appends after memlens's entry, and memlens still reads the file with
no problems and replays every entry as pi does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import pytest

from core.cli.main import run_cli
from core.compaction.plan import plan_compaction
from core.transcript import load_transcript
from tests.oracle import pi_agent
from tests.oracle.fake_llm import FakeLLM, ToolCall, Usage
from tests.oracle.pi_agent import COMPACTION_PREFIX, COMPACTION_SUFFIX, llm_text
from tests.oracle.test_pi_formats import OPS as FORMAT_OPS

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.slow

WINDOW = 200_000


def long_text(n: int, words: int) -> str:
    return " ".join(f"step{n}-word{i}" for i in range(words))


@dataclass
class Trip:
    home: pi_agent.PiHome
    path: Path
    before: list[dict[str, Any]]
    """The file's entries before memlens compacted it."""
    compaction: dict[str, Any]
    request: dict[str, Any]
    """What pi sent for the prompt after memlens's compaction."""
    answer: str


def raw_entries(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]


@pytest.fixture(scope="module")
def trip(pi_package, tmp_path_factory) -> Iterator[Trip]:
    root = tmp_path_factory.mktemp("pi-roundtrip")
    with FakeLLM() as llm:
        home = pi_agent.make_home(
            pi_package, root, llm.base_url, context_window=WINDOW, compaction=False
        )
        (home.cwd / "plan.md").write_text("# Plan\n" + long_text(0, 400) + "\n")
        with pi_agent.Rpc(home) as rpc:
            llm.reply(tool_calls=[ToolCall("call_plan", "read", {"path": "plan.md"})])
            llm.reply(long_text(1, 3000), usage=Usage(9000, 4000))
            rpc.prompt("read plan.md and explain it")
            for n in range(2, 6):
                llm.reply(long_text(n, 2500), usage=Usage(9000 + 4000 * n, 3000))
                rpc.prompt(f"go on with step {n}")
            path = Path(rpc.state()["sessionFile"])
        before = raw_entries(path)
        code = run_cli(["compact", str(path), "--write", "--force", "--window", str(WINDOW)])
        assert code == 0
        compaction = raw_entries(path)[-1]
        assert compaction["type"] == "compaction"
        n = len(llm.chat_requests())
        llm.reply("Resumed after memlens's compaction.", usage=Usage(3000, 10))
        done = pi_agent.run_print(home, "what is next?", session=path)
        yield Trip(home, path, before, compaction, llm.chat_requests()[n], done.stdout.strip())


def test_memlens_compacted_the_real_session(trip):
    ids = [e["id"] for e in trip.before]
    assert trip.compaction["parentId"] == ids[-1]
    first_kept = ids.index(trip.compaction["firstKeptEntryId"])
    assert 0 < first_kept < len(ids) - 1
    assert trip.compaction["summary"]


def test_pi_sends_memlens_summary_then_the_kept_messages(trip):
    body = trip.request
    messages = body["messages"]
    assert messages[0]["role"] == "system"
    assert messages[1]["role"] == "user"
    assert (
        llm_text(messages[1]) == COMPACTION_PREFIX + trip.compaction["summary"] + COMPACTION_SUFFIX
    )
    ids = [e["id"] for e in trip.before]
    kept = [
        e["message"]
        for e in trip.before[ids.index(trip.compaction["firstKeptEntryId"]) :]
        if e["type"] == "message"
    ]
    want = [(pi_agent.OPENAI_ROLE[m["role"]], kept_text(m)) for m in kept]
    want.append(("user", "what is next?"))
    got = [(m["role"], llm_text(m)) for m in messages[2:]]
    assert got == want


def kept_text(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in content if b.get("type") == "text")


def test_pi_appends_after_memlens_compaction(trip):
    after = raw_entries(trip.path)
    n = len(trip.before)
    assert after[:n] == trip.before
    assert after[n] == trip.compaction
    tail = after[n + 1 :]
    assert [e["message"]["role"] for e in tail if e["type"] == "message"] == ["user", "assistant"]
    assert tail[0]["parentId"] == trip.compaction["id"] or any(
        e["parentId"] == trip.compaction["id"] for e in tail
    )
    assert trip.answer == "Resumed after memlens's compaction."


def test_memlens_reads_the_result_and_replays_it_as_pi(trip):
    session = load_transcript(trip.path)
    assert session.problems == []
    theirs = pi_agent.pi_entries(trip.home.pkg, trip.path)
    assert pi_agent.replay_mismatches(session, theirs) == []
    assert theirs["contexts"][theirs["leaf"]][0]["role"] == "compactionSummary"


KEEPS = (0, 50, 2_000, 20_000)
CUT = ("firstKeptEntryId", "isSplitTurn", "turnPrefix", "summarize", "previousSummary")
"""What pi's ``prepareCompaction`` decides that memlens's plan must decide the same."""


def memlens_plan(session: Any, entry_id: str, keep: int) -> dict[str, Any] | None:
    plan = plan_compaction(
        session, at=entry_id, window=WINDOW, reserve_tokens=16_384, keep_recent_tokens=keep
    )
    if not plan.ok and plan.reason == "the last entry is already a compaction":
        return None
    out = {
        "firstKeptEntryId": plan.first_kept_entry_id,
        "isSplitTurn": plan.is_split_turn,
        "summarize": len(plan.summarize) + len(plan.history_dropped),
        "turnPrefix": len(plan.turn_prefix),
        "tokensBefore": plan.tokens_before,
        "previousSummary": plan.previous_summary,
    }
    if plan.ok:  # memlens lists the files only for a compaction it would write
        out["readFiles"], out["modifiedFiles"] = plan.read_files, plan.modified_files
    return out


def plan_mismatches(pkg: Path, path: Path, fields: tuple[str, ...]) -> list[str]:
    """Where memlens's plan differs from pi's ``prepareCompaction`` in *fields*.

    Every entry of *path*, for each keepRecentTokens of :data:`KEEPS`.
    """
    theirs = pi_agent.node_json(
        "pi_prepare.mjs", str(pkg), str(path), ",".join(str(k) for k in KEEPS)
    )
    session = load_transcript(path)
    out = []
    for entry_id, by_keep in theirs.items():
        for keep, want in by_keep.items():
            got = memlens_plan(session, entry_id, int(keep))
            if got is None or want is None:
                if got != want:
                    out.append(f"{path.name} at {entry_id}, keep {keep}: {got} vs pi {want}")
                continue
            diff = {k: (got[k], want[k]) for k in fields if k in got and got[k] != want[k]}
            if diff:
                out.append(f"{path.name} at {entry_id}, keep {keep}: (memlens, pi) {diff}")
    return out


@pytest.fixture(scope="module")
def every_type(pi_package, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("pi-plan")
    done = pi_agent.pi_session_ops(
        pi_package,
        {"create": {"cwd": str(root), "sessionDir": str(root / "s")}, "ops": FORMAT_OPS},
        root / "ops",
    )
    return Path(done["file"])


def test_memlens_cuts_where_pi_would_on_the_real_session(trip):
    fields = (*CUT, "readFiles", "modifiedFiles")
    assert plan_mismatches(trip.home.pkg, trip.path, fields) == []


def test_memlens_cuts_where_pi_would_on_every_entry_type(pi_package, every_type):
    fields = tuple(f for f in CUT if f != "summarize")  # summarize: its own test below
    assert plan_mismatches(pi_package, every_type, (*fields, "readFiles", "modifiedFiles")) == []


def test_an_empty_branch_summary_is_summarised_as_pi(pi_package, every_type):
    assert plan_mismatches(pi_package, every_type, ("summarize",)) == []


def test_tokens_before_after_a_compaction_are_pi_s(trip):
    assert plan_mismatches(trip.home.pkg, trip.path, ("tokensBefore",)) == []
