"""Compaction through a real OpenAI-compatible endpoint on 127.0.0.1 (scripted answers)."""

from __future__ import annotations

from core.compaction.plan import plan_compaction
from core.compaction.prompts import REQUIRED_HEADINGS
from core.compaction.summarize import summarize_plan
from core.compaction.summarizers import LLMSummarizer
from core.llm import OpenAICompatibleClient
from core.transcript import load_transcript
from tests.llm_server import Reply

CHECKPOINT = "\n\n".join(f"{h}\n- item from the model" for h in REQUIRED_HEADINGS)


def answer(text):
    return Reply(
        200,
        {
            "model": "m",
            "choices": [{"message": {"content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5},
        },
    )


def test_summary_calls_the_model_with_the_checkpoint_prompt(server, fixtures_dir):
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    plan = plan_compaction(s, at="#358")
    server.add(*[answer(CHECKPOINT)] * plan.calls)
    client = OpenAICompatibleClient(f"{server.url}/v1", "m", timeout=5, sleep=lambda _s: None)
    run = summarize_plan(plan, LLMSummarizer(client))
    assert run.fallback == 0 and run.calls == plan.calls == len(server.seen)
    body = server.seen[0].body
    prompt = body["messages"][-1]["content"]
    assert body["messages"][0]["role"] == "system"
    assert "<conversation>" in prompt and all(h in prompt for h in REQUIRED_HEADINGS)
    assert "copied exactly as written" in prompt
    assert body["max_tokens"] == int(0.8 * plan.reserve_tokens)
    assert run.summary.startswith(CHECKPOINT)
    if plan.previous_summary or plan.history_dropped:
        assert (
            "<previous-summary>"
            in server.seen[-2 if plan.turn_prefix else -1].body["messages"][-1]["content"]
        )


def test_overflowing_model_walks_the_ladder(server, fixtures_dir):
    s = load_transcript(fixtures_dir / "large-session.jsonl")
    plan = plan_compaction(s)
    overflow = Reply(
        400, {"error": {"message": "This model's maximum context length is 8192 tokens"}}
    )
    server.add(*[overflow] * 50)
    client = OpenAICompatibleClient(f"{server.url}/v1", "m", timeout=5, sleep=lambda _s: None)
    run = summarize_plan(plan, LLMSummarizer(client))
    assert run.fallback == 2
    assert "Summary unavailable due to size limits." in run.summary
    assert any("maximum context length" in n for n in run.notes)


def test_the_ladder_is_walked_as_before_and_logged(server, fixtures_dir):
    """OpenClaw's ladder is unchanged; each step's call is in the log and the run is degraded."""
    s = load_transcript(fixtures_dir / "large-session.jsonl")
    plan = plan_compaction(s)
    overflow = Reply(
        400, {"error": {"message": "This model's maximum context length is 8192 tokens"}}
    )
    server.add(*[overflow] * 50)
    client = OpenAICompatibleClient(f"{server.url}/v1", "m", timeout=5, sleep=lambda _s: None)
    run = summarize_plan(plan, LLMSummarizer(client))
    assert run.degraded and run.failure is not None and run.failure.kind == "overflow"
    assert len(run.call_log) == run.calls == len(server.seen)
    assert all(not c.ok and c.status == 400 for c in run.call_log)
    assert any("(fallback: small messages)" in c.step for c in run.call_log)
    lines = run.summary.splitlines()
    assert lines[0].startswith("[memlens fallback summary:") and "HTTP 400" in lines[0]
    assert "Summary unavailable due to size limits." in run.summary  # the agent's own note
