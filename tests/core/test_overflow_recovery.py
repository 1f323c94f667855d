"""The overflow recovery as OpenClaw's run loop makes it (no export to call: quoted here).

OpenClaw 2026.9.6, ``dist/embedded-agent-BaH7wGBd.mjs`` (the overflow branch, from line
3351)::

    if (!isCompactionFailure && input.attemptCompactionCount === 0
        && input.state.overflowCompactionAttempts < 3) {
        input.state.overflowCompactionAttempts += 1;
        const compaction = await compactEmbeddedRunForRecovery(input, {...
            attempt: input.state.overflowCompactionAttempts, maxAttempts: 3, ...});
        ...
        if (compactResult.compacted) { ... return { action: "retry" }; }
        else { failedCompactionReason = formatErrorMessage(compactResult.reason
                                                           ?? "nothing to compact"); ... }
    }
    if (!parkedWorkBlocksContinuation && !input.state.toolResultTruncationAttempted) {
        const toolResultMaxChars = resolveLiveToolResultMaxChars({
            contextWindowTokens: input.contextTokenBudget });
        if (... sessionLikelyHasOversizedToolResults({ messages: ..., maxCharsOverride:
                                                     toolResultMaxChars }) ...) {
            input.state.toolResultTruncationAttempted = true;
            const truncResult = await truncateToolResults();
            if (truncResult.truncated) { ... return { action: "retry" }; }
        }
    }
    ... return { action: "surface", kind, errorText: failureText, userText };

and the counters (``context-recovery-state.ts``, line 4105)::

    overflowCompactionAttempts: 0, ... toolResultTruncationAttempted: false,
    observeContextAccounting(event) { ...
        } else if (event.successful) {
            state.overflowCompactionAttempts = 0;
            state.toolResultTruncationAttempted = false;

Each compaction is a fresh ``prepareCompaction`` of the transcript as it then is,
which (unlike pi's) accepts a compaction as the last entry unless it came from a hook.
"""

from __future__ import annotations

import itertools

import pytest

from core.compaction.overflow import max_tool_result_chars, simulate_overflow
from core.compaction.plan import plan_compaction
from core.transcript import load_transcript

from .build import STAMP, assistant, entry, lines, user, write_file


def _session(tmp_path, msgs, extra=()):
    objs, parent = [], None
    for k, m in enumerate(msgs, 1):
        objs.append(entry(k, parent, m))
        parent = f"{k:08x}"
    objs += [{**e, "parentId": parent, "timestamp": STAMP} for e in extra]
    p = tmp_path / "s.jsonl"
    write_file(p, lines(objs))
    return load_transcript(p)


def _call(cid):
    return {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": cid, "name": "bash", "arguments": {"c": "ls"}}],
        "stopReason": "toolUse",
        "timestamp": 1,
    }


def _result(cid, chars):
    text = "".join(f"output line {k:06d}\n" for k in range(chars // 19 + 1))[:chars]
    return {
        "role": "toolResult",
        "toolCallId": cid,
        "toolName": "bash",
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 1,
    }


def kinds(steps):
    return [s.kind for s in steps]


def test_the_char_limit_is_openclaws():
    # resolveLiveToolResultMaxChars: floor(window * 0.3) * 4, at most 16k / 32k / 64k chars
    assert max_tool_result_chars(8_000) == 9_600
    assert max_tool_result_chars(99_999) == 16_000
    assert max_tool_result_chars(100_000) == 32_000
    assert max_tool_result_chars(200_000) == 64_000
    assert max_tool_result_chars(1_000) == 1_200  # no 2,000 floor
    assert max_tool_result_chars(3) == 0


def test_fits_and_one_compaction(fixtures_dir):
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    assert kinds(simulate_overflow(s, 200_000, at="#358")) == ["fits"]
    steps = simulate_overflow(s, 128_000, at="#358")
    assert kinds(steps) == ["overflow", "compact", "recovered"]
    assert "attempt 1/3" in steps[1].detail and steps[1].tokens_after < 128_000


def test_a_fresh_plan_per_attempt_then_truncation_once_then_give_up(fixtures_dir):
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    steps = simulate_overflow(s, 8_000, at="#358")
    assert kinds(steps) == [
        "overflow",
        "compact",  # 1/3 compacts
        "overflow",
        "compact",  # 2/3: a fresh plan after the compaction: nothing left to summarise
        "truncate",  # the compaction failed: tool results, once
        "overflow",
        "compact",  # 3/3 fails again
        "give_up",  # truncation was tried: the overflow error surfaces
    ]
    assert "attempt 2/3: auto-compaction failed" in steps[3].detail
    assert "attempt 3/3" in steps[6].detail
    assert steps[4].tokens_after < steps[4].tokens_before


def test_nothing_to_compact_then_truncation_recovers(tmp_path):
    s = _session(tmp_path, [user("go"), _call("a"), _result("a", 100_000), assistant("done")])
    steps = simulate_overflow(s, 20_000, keep_recent_tokens=10**6)
    assert kinds(steps) == ["overflow", "compact", "truncate", "recovered"]
    assert "auto-compaction failed" in steps[1].detail
    assert "limit 16,000 chars" in steps[2].detail
    assert steps[2].tokens_before == 25_006 and 4_000 < steps[3].tokens_after <= 4_100


def test_after_truncation_a_failed_compaction_surfaces_the_error(tmp_path):
    msgs = [user("go")]
    for k in range(6):
        msgs += [_call(f"c{k}"), _result(f"c{k}", 20_000)]
    msgs.append(assistant("done " * 2000))
    s = _session(tmp_path, msgs)
    steps = simulate_overflow(s, 3_000, keep_recent_tokens=10**6)
    # the 2nd attempt fails too and truncation was tried: no 3rd attempt
    assert kinds(steps) == ["overflow", "compact", "truncate", "overflow", "compact", "give_up"]
    assert [s.detail.split(":")[0] for s in steps if s.kind == "compact"] == [
        "attempt 1/3",
        "attempt 2/3",
    ]
    assert "truncate 6 tool result(s) (limit 3,600 chars each)" == steps[2].detail


def test_no_oversized_tool_result_no_truncation(tmp_path):
    s = _session(tmp_path, [user("x" * 80_000), assistant("ok")])
    steps = simulate_overflow(s, 10_000, keep_recent_tokens=10**6)
    assert kinds(steps) == ["overflow", "compact", "give_up"]


def test_plans_after_a_compaction_as_openclaw_does(tmp_path):
    msgs = [
        user(f"q{k} " + "w " * 3000) if k % 2 == 0 else assistant("a " * 3000) for k in range(10)
    ]
    comp = {
        "type": "compaction",
        "id": "0000000b",
        "summary": "before",
        "firstKeptEntryId": "00000003",
    }
    s = _session(tmp_path, msgs, [comp])
    assert not plan_compaction(s, keep_recent_tokens=3_000).ok  # pi: never at a compaction
    plan = plan_compaction(s, keep_recent_tokens=3_000, compaction_leaf=True)
    assert plan.ok and plan.previous_summary == "before"
    assert plan.summarize[0].entry.id == "00000003"
    hook = _session(tmp_path, msgs, [{**comp, "fromHook": True}])
    assert not plan_compaction(hook, keep_recent_tokens=3_000, compaction_leaf=True).ok


@pytest.mark.parametrize("window", [2_000, 9_000, 40_000])
def test_steps_are_consistent(fixtures_dir, window):
    s = load_transcript(fixtures_dir / "large-session.jsonl")
    steps = simulate_overflow(s, window, keep_recent_tokens=2_000)
    assert steps[0].kind == "overflow" and steps[-1].kind in ("recovered", "give_up")
    assert kinds(steps).count("compact") <= 3 and kinds(steps).count("truncate") <= 1
    for a, b in itertools.pairwise(steps):
        assert b.tokens_before == a.tokens_after
