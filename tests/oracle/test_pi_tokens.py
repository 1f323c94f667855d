"""The oracle tier: memlens's token estimate equals pi's ``estimateTokens``, message by message.

For every message of the shared fixtures (real pi v1 files, read-only) and of
sessions pi writes itself (its ``SessionManager`` with awkward contents: UTF-16
surrogate pairs, lone surrogates, control characters, numbers JavaScript prints
its own way in tool-call arguments, images, thinking, string contents; and the
real pi's CLI run against the fake LLM), memlens's per-message estimate
(``core.transcript.tokens.estimate_message``, ``ContextItem.tokens``) equals pi 0.73.1's.

A fixture line pi cannot parse is dropped by pi (memlens recovers its
entries), so fixtures are compared per message, matched by entry id where
pi's ids are memlens's, else by role, message timestamp and occurrence; the
counts are reported. Whole-context equality for such files is another test's.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from core.transcript import context_at, load_transcript
from core.transcript.tokens import estimate_message
from tests.oracle import pi_agent
from tests.oracle.fake_llm import FakeLLM, ToolCall, Usage

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "pi-v1"
if not FIXTURES.is_dir():  # the shared folder beside the working tree
    FIXTURES = Path("/work/shared/fixtures/pi-v1")
FIXTURE_FILES = sorted(FIXTURES.glob("*.jsonl")) if FIXTURES.is_dir() else []
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
T0 = 1_795_000_000_000
AWKWARD = "emoji 😀👍🏽, CJK 漢字, combining é, clef 𝄞, ctl \u0001\b\t, seps \u2028\u2029 end"
LONE = "lone \ud83d surrogate and \udc00 low"
NUMBERS = {
    "float": 1.5,
    "third": 0.30000000000000004,
    "big": 1e21,
    "bigint": 123456789012345680000,
    "tiny": 1e-7,
    "whole": 100.0,
    "neg": -2.5e-8,
    "max": 9007199254740993,
    "list": [0.1, 2e-6, 1e300, -0.0],
    "nested": {"k": [True, False, None, 's"q\\']},
}


def assistant(content: list[dict[str, Any]], ts: int) -> dict[str, Any]:
    msg = {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": "fake",
        "model": "m1",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "stopReason": "toolUse",
        "timestamp": ts,
    }
    return {"call": "appendMessage", "args": [msg]}


def message(ts: int, **fields: Any) -> dict[str, Any]:
    return {"call": "appendMessage", "args": [{**fields, "timestamp": ts}]}


OPS: list[dict[str, Any]] = [
    message(T0, role="user", content=AWKWARD),
    message(T0 + 1, role="user", content=[{"type": "text", "text": LONE}, {"type": "image", "data": PNG, "mimeType": "image/png"}]),
    assistant(
        [
            {"type": "thinking", "thinking": "hmm " + AWKWARD},
            {"type": "text", "text": ""},
            {"type": "text", "text": AWKWARD},
            {"type": "toolCall", "id": "c1", "name": "edit", "arguments": {"path": "é.txt", "x": AWKWARD}},
            {"type": "toolCall", "id": "c2", "name": "calc", "arguments": NUMBERS},
            {"type": "toolCall", "id": "c3", "name": "paired", "arguments": {"s": "😀" + LONE.replace("\ud83d", "").replace("\udc00", "")}},
            {"type": "toolCall", "id": "c4", "name": "empty", "arguments": {}},
        ],
        T0 + 2,
    ),
    message(T0 + 3, role="toolResult", toolCallId="c1", toolName="edit", isError=False, content=[{"type": "text", "text": AWKWARD}, {"type": "image", "data": PNG, "mimeType": "image/png"}, {"type": "image", "data": PNG, "mimeType": "image/png"}]),
    message(T0 + 4, role="toolResult", toolCallId="c2", toolName="calc", isError=True, content="a plain string result 😀"),
    message(T0 + 5, role="toolResult", toolCallId="c3", toolName="lone", isError=False, content=[{"type": "text", "text": LONE}]),
    message(T0 + 6, role="toolResult", toolCallId="c4", toolName="empty", isError=False, content=[]),
    message(T0 + 7, role="bashExecution", command="grep 😀 ☕", output=AWKWARD, exitCode=0, cancelled=False, truncated=False),
    message(T0 + 8, role="custom", customType="n", content=[{"type": "text", "text": AWKWARD}, {"type": "image", "data": PNG, "mimeType": "image/png"}], display=True),
    {"call": "appendCustomMessageEntry", "args": ["ext", AWKWARD, True]},
    {"call": "appendCustomMessageEntry", "args": ["ext", [{"type": "image", "data": PNG, "mimeType": "image/png"}], False]},
    {"call": "appendCompaction", "args": ["summary " + AWKWARD, "$0", 10]},
    {"call": "branchWithSummary", "args": ["$2", "branch " + LONE]},
    message(T0 + 9, role="user", content=""),
]  # fmt: skip


def memlens_messages(path: Path) -> list[dict[str, Any]]:
    session = load_transcript(path)
    return [
        {
            "entry": e.id,
            "synthetic": e.synthetic_id or e.recovered,
            "role": e.message.role,
            "timestamp": e.message.timestamp,
            "tokens": estimate_message(e.message),
        }
        for e in session.entries
        if e.message is not None
    ]


def match(mine: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> list[tuple[dict, dict]]:
    """Pairs of the same message: by entry id when memlens has pi's ids, else by key."""
    if not any(m["synthetic"] for m in mine):
        by_id = {m["entry"]: m for m in mine}
        return [(by_id[t["entry"]], t) for t in theirs if t["entry"] in by_id]

    def keyed(items: list[dict[str, Any]]) -> dict[tuple, dict]:
        seen: Counter[tuple] = Counter()
        out = {}
        for it in items:
            k = (it["role"], it["timestamp"])
            out[(*k, seen[k])] = it
            seen[k] += 1
        return out

    a, b = keyed(mine), keyed(theirs)
    return [(a[k], b[k]) for k in b if k in a]


def compare(pkg: Path, path: Path) -> dict[str, Any]:
    theirs = pi_agent.pi_messages(pkg, path)["messages"]
    mine = memlens_messages(path)
    pairs = match(mine, theirs)
    diff = [
        (m["entry"], t["entry"], m["role"], m["tokens"], t["tokens"])
        for m, t in pairs
        if m["tokens"] != t["tokens"]
    ]
    return {"memlens": len(mine), "pi": len(theirs), "matched": len(pairs), "differ": diff}


@pytest.fixture(scope="module")
def stress(pi_package, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("pi-tokens")
    (root / "work").mkdir()
    done = pi_agent.pi_session_ops(
        pi_package,
        {"create": {"cwd": str(root / "work"), "sessionDir": str(root / "sessions")}, "ops": OPS},
        root / "ops",
    )
    return Path(done["file"])


def test_every_message_pi_wrote_has_pi_s_estimate(pi_package, stress):
    got = compare(pi_package, stress)
    assert got["differ"] == []
    assert got["matched"] == got["pi"] == got["memlens"] == 14


def test_replayed_tokens_equal_pi_at_every_entry(pi_package, stress):
    theirs = pi_agent.pi_entries(pi_package, stress)
    assert pi_agent.replay_mismatches(load_transcript(stress), theirs) == []


def test_lone_surrogate_in_tool_arguments(pi_package, tmp_path):
    ops = [
        message(T0, role="user", content="x"),
        assistant(
            [{"type": "toolCall", "id": "c1", "name": "t", "arguments": {"s": LONE}}], T0 + 1
        ),
    ]
    done = pi_agent.pi_session_ops(
        pi_package,
        {"create": {"cwd": str(tmp_path), "sessionDir": str(tmp_path / "s")}, "ops": ops},
        tmp_path / "ops",
    )
    got = compare(pi_package, Path(done["file"]))
    assert got["differ"] == []


def test_real_pi_run_with_awkward_text(pi_package, tmp_path):
    with FakeLLM() as llm:
        home = pi_agent.make_home(pi_package, tmp_path, llm.base_url, context_window=100_000)
        (home.cwd / "u.txt").write_text(AWKWARD + "\n")
        llm.reply(
            AWKWARD,
            tool_calls=[
                ToolCall("c1", "read", {"path": "u.txt", "offset": 1, "limit": 10}),
                ToolCall("c2", "bash", {"command": "printf '%s' '漢字 😀'"}),
            ],
            thinking="thinking 😀",
        )
        llm.reply("Done: " + AWKWARD, usage=Usage(500, 20))
        pi_agent.run_print(home, "go: " + AWKWARD)
        (path,) = home.sessions()
    got = compare(pi_package, path)
    assert got["differ"] == [] and got["matched"] == got["pi"] == 5
    assert (
        pi_agent.replay_mismatches(load_transcript(path), pi_agent.pi_entries(pi_package, path))
        == []
    )


@pytest.mark.skipif(not FIXTURE_FILES, reason="shared fixtures not present")
@pytest.mark.parametrize("path", FIXTURE_FILES, ids=[p.stem for p in FIXTURE_FILES])
def test_fixture_messages_have_pi_s_estimate(pi_package, path):
    got = compare(pi_package, path)
    print(f"{path.name}: {got['memlens']} memlens, {got['pi']} pi, {got['matched']} matched")
    assert got["differ"] == []
    # pi drops what it cannot parse; everything it read, memlens read too.
    assert got["matched"] == got["pi"] and got["memlens"] >= got["pi"]


@pytest.mark.skipif(not FIXTURE_FILES, reason="shared fixtures not present")
@pytest.mark.parametrize("path", FIXTURE_FILES, ids=[p.stem for p in FIXTURE_FILES])
def test_fixture_leaf_context_tokens_match_per_message(pi_package, path):
    theirs = pi_agent.pi_leaf(pi_package, path)["leafContext"]
    items = context_at(load_transcript(path), None)
    mine = [
        {"role": i.message.role, "timestamp": i.message.timestamp, "tokens": i.tokens}
        for i in items
    ]
    seen: Counter[tuple] = Counter()
    keyed = {}
    for m in mine:
        k = (m["role"], m["timestamp"])
        keyed[(*k, seen[k])] = m["tokens"]
        seen[k] += 1
    seen.clear()
    matched = differ = 0
    for t in theirs:
        k = (t["role"], t["timestamp"])
        key = (*k, seen[k])
        seen[k] += 1
        if key in keyed:
            matched += 1
            differ += keyed[key] != t["tokens"]
    print(f"{path.name}: leaf context {len(mine)} memlens, {len(theirs)} pi, {matched} matched")
    assert differ == 0
    assert matched == len(theirs)
