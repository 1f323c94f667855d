"""Compaction numbers and caps are measured in JavaScript string units, as the agent does."""

from __future__ import annotations

import math

from core.compaction.extract import MAX_CHARS, TRUNCATED, conversation_text
from core.compaction.plan import CompactionPlan, plan_compaction
from core.compaction.prompts import REQUIRED_HEADINGS
from core.compaction.run import compaction_entry
from core.compaction.safeguard import MAX_SUMMARY_CHARS, safeguard
from core.compaction.summarize import SummaryRun, _Runner
from core.compaction.summarizers import OfflineSummarizer
from core.io.jsstr import js_len
from core.transcript import load_transcript
from core.transcript.message import Block, Message

from .build import assistant, entry, lines, user, write_file


def test_tokens_after_counts_utf16_units():
    plan = CompactionPlan("s", "leaf0001", True, "")
    summary = "## Decisions\n" + "决定😀" * 2000  # 8,013 units, 6,013 code points
    e = compaction_entry(plan, SummaryRun(summary, "offline"), taken=set())
    assert e["tokensAfter"] == math.ceil(js_len(summary) / 4) == 2004


def test_summary_cap_is_16000_javascript_units():
    plan = CompactionPlan("s", "leaf0001", True, "")
    body = "\n\n".join(f"{h}\n" + "😀" * 3000 for h in REQUIRED_HEADINGS)
    text, truncated = safeguard(body, plan, None, [])
    assert truncated and js_len(text) <= MAX_SUMMARY_CHARS
    assert js_len(text) > MAX_SUMMARY_CHARS - 100  # cut to the cap, not to half of it
    assert all(h in text for h in REQUIRED_HEADINGS)
    text.encode("utf-8")  # no pair cut in half


def test_extraction_conversation_cut_at_8000_units():
    msgs = [Message(role="user", blocks=(Block("text", text="😀" * 6000),), raw={})]
    out = conversation_text(msgs)
    assert out.endswith(TRUNCATED)
    assert js_len(out.removesuffix(TRUNCATED)) == MAX_CHARS  # "User: " + 3,997 emoji... = 8,000
    assert js_len(out) == MAX_CHARS + len(TRUNCATED)


class _FailFirst(OfflineSummarizer):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def summarize(self, messages, **kw):
        self.calls += 1
        if self.calls == 1:
            raise RuntimeError("context overflow")
        return super().summarize(messages, **kw)


def test_oversized_note_rounds_like_math_round(tmp_path):
    objs, parent = [], None
    for i, n in enumerate([400, 10_000, 400, 400, 400, 400], 1):  # 10,000 chars: 2,500 tokens
        objs.append(entry(i, parent, user("u" * n) if i % 2 else assistant("a" * n)))
        parent = f"{i:08x}"
    p = tmp_path / "s.jsonl"
    write_file(p, lines(objs))
    plan = plan_compaction(load_transcript(p), window=4000, keep_recent_tokens=100)
    assert any(i.tokens == 2500 for i in plan.summarize)
    runner = _Runner(plan, _FailFirst(), None, None)
    text = runner.with_fallback(plan.summarize, plan.chunks, None)
    assert "[Large assistant (~3K tokens) omitted]" in text  # Math.round(2.5) = 3
