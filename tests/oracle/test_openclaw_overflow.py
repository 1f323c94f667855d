"""The oracle tier: OpenClaw's own overflow-recovery helpers against memlens's.

``openclaw_overflow.mjs`` imports OpenClaw's bundled ``tool-result-truncation-*.mjs``
and ``src-*.mjs`` (found at run time by their ``export {...}`` lines) and runs:

- ``resolveLiveToolResultMaxChars`` / ``resolveLiveToolResultAggregateMaxChars``:
  the char limits of the truncation step of the run loop;
- ``sessionLikelyHasOversizedToolResults`` (whether the run loop tries it) and
  ``truncateOversizedToolResultsInMessages`` (the recovery's replacement plan:
  oversized results cut to the limit, then the aggregate budget), message by message;
- ``retryAsync`` with the options of the compaction summary call (``attempts: 3,
  minDelayMs: 500, maxDelayMs: 5e3, jitter: .2``) and given ``Math.random()`` draws.

The overflow loop itself is a closure of the run loop with no export; it is
tested against its quoted source in ``tests/core/test_overflow_recovery.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.compaction.overflow import (
    aggregate_tool_result_chars,
    live_tool_result_max_chars,
    truncate_tool_results,
)
from core.llm.retry import RetryPolicy

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).with_name("openclaw_overflow.mjs")


def run(openclaw, cases: dict[str, Any]) -> dict[str, Any]:
    return dict(openclaw.run(SCRIPT, stdin=cases))


def _call(cid: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": cid, "name": "bash", "arguments": {"cmd": "ls"}}],
        "stopReason": "toolUse",
        "timestamp": 1,
    }


def _result(cid: str, *texts: str, image: bool = False) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": t} for t in texts]
    if image:
        content.insert(1, {"type": "image", "data": "AAAA", "mimeType": "image/png"})
    return {
        "role": "toolResult",
        "toolCallId": cid,
        "toolName": "bash",
        "content": content,
        "isError": False,
        "timestamp": 1,
    }


def _turns(*results: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": "go", "timestamp": 1}]
    for r in results:
        out += [_call(r["toolCallId"]), r]
    out.append({"role": "assistant", "content": [{"type": "text", "text": "ok"}], "timestamp": 1})
    return out


def _lines(n: int, word: str = "line") -> str:
    return "".join(f"{word} {k:05d} of the build output\n" for k in range(n))


CASES: list[tuple[int, list[dict[str, Any]]]] = [
    # one result far over the limit, one under it
    (8_000, _turns(_result("a", _lines(1500)), _result("b", "x" * 5000))),
    # a diagnostic tail kept (head, marker, tail), and a JSON tail
    (
        8_000,
        _turns(_result("a", _lines(900) + "Traceback (most recent call last):\nError: boom\n")),
    ),
    (250_000, _turns(_result("a", '{"rows": [' + "1, " * 30_000 + "2]}"))),
    # two text blocks and an image; CJK weighs more than its length; astral characters
    (8_000, _turns(_result("a", _lines(400), "y" * 9000, image=True))),
    (8_000, _turns(_result("a", "构建输出日志" * 2500), _result("b", "𠀀𠀁😀" * 3000))),
    # every result under the limit, all together over the aggregate budget
    (50_000, _turns(*[_result(f"r{k}", _lines(500, f"r{k}")) for k in range(10)])),
    (3_000, _turns(*[_result(f"r{k}", "z" * 3000) for k in range(6)])),
    # a tiny window: the compact notice, then clearing
    (100, _turns(*[_result(f"r{k}", "w" * 100) for k in range(8)])),
    (100, _turns(*[_result(f"r{k}", "w" * 90) for k in range(30)])),
    # nothing to truncate
    (200_000, _turns(_result("a", "short"))),
    (8_000, [{"role": "user", "content": "x" * 50_000, "timestamp": 1}]),
]

DRAWS = [[0.0, 0.0], [0.999999, 0.999999], [0.5, 0.5], [0.1234, 0.8765], [0.975, 0.025]]


class Draws:
    """``Math.random()`` answers given in advance (``RetryPolicy`` asks ``uniform(0, 1)``)."""

    def __init__(self, values: list[float]) -> None:
        self.left = list(values)

    def uniform(self, a: float, b: float) -> float:
        assert (a, b) == (0.0, 1.0)
        return self.left.pop(0)


@pytest.fixture(scope="module")
def answers(openclaw) -> dict[str, Any]:
    cases = {
        "truncation": [{"window": w, "messages": m} for w, m in CASES],
        "retries": DRAWS,
    }
    return run(openclaw, cases)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_tool_result_truncation_matches(answers, case):
    window, messages = CASES[case]
    theirs = answers["truncation"][case]
    assert live_tool_result_max_chars(window) == theirs["maxChars"]
    assert aggregate_tool_result_chars(window, theirs["maxChars"]) == theirs["aggregateChars"]
    mine = truncate_tool_results(messages, window)
    assert theirs["likely"] == any(m is not None for m in mine)
    assert theirs["truncatedCount"] == sum(m is not None for m in mine)
    for k, (a, b) in enumerate(zip(mine, theirs["messages"], strict=True)):
        if a is None or b is None:
            assert a == b, k
        else:
            assert [x.get("text") for x in a["content"]] == [x.get("text") for x in b["content"]], k
            assert a == b, k


def test_the_cases_cover_both_phases(answers):
    pot = [t["potential"] for t in answers["truncation"]]
    assert any(p["oversizedCount"] for p in pot)
    assert any(p["aggregateReducibleChars"] and not p["oversizedCount"] for p in pot)
    assert any(not t["likely"] for t in answers["truncation"])


def test_summary_retries_match(answers):
    policy = RetryPolicy()
    for draws, theirs in zip(DRAWS, answers["retries"], strict=True):
        assert theirs["calls"] == policy.retries + 1 == 3

        rng = Draws(draws)
        mine = [policy.delay(k, rng) for k in range(policy.retries)]  # type: ignore[arg-type]
        assert mine == [ms / 1000 for ms in theirs["sleeps"]]
