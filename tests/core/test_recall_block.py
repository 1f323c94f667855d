"""The recalled-context block: exact format, budgets, hard cap, injection point."""

from __future__ import annotations

from dataclasses import dataclass

from core.recall.block import (
    Detail,
    build_block,
    extract_query,
    hard_cap,
    safe_limit,
    search_limit,
)
from core.store.segments import Segment
from core.transcript.recalled_block import MARKER, injection_index
from core.transcript.tokens import estimate_text


@dataclass(frozen=True)
class F:
    type: str
    content: str


def seg(i, content, ts, role="user"):
    return Segment(f"id{i}", "s", role, content, ts, 1, 0)


JAN1 = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def test_exact_format_details_oldest_first():
    facts = [F("decision", "Use orjson"), F("config", "Port 8080")]
    details = [
        Detail(seg(1, "newer", JAN1 + 3_600_000, "assistant"), 0.9),
        Detail(seg(2, "older\n  kept  as is", JAN1), 0.5),
    ]
    block = build_block(facts, details, 4000)
    assert block.text == (
        f"{MARKER}\n\n<knowledge>\n- [decision] Use orjson\n- [config] Port 8080\n</knowledge>"
        "\n\n<detail>\n[2026-01-01 00:00 user] older\n  kept  as is\n\n"
        "[2026-01-01 01:00 assistant] newer\n</detail>\n\n</recalled-context>"
    )
    assert block.tokens == estimate_text(block.text)
    assert block.cut_details == [] and block.cut_knowledge == []


def test_budgets_30_70_first_item_always_fits():
    facts = [F("issue", "k" * 300), F("issue", "short")]  # 30% of 100 = 30 tokens
    block = build_block(facts, [], 100)
    # the first knowledge line (over budget alone) still goes in; the second does not fit
    assert [f.content for f in block.knowledge] in (["k" * 300], [])
    assert block.text == "" or block.tokens <= 100


def test_lowest_score_details_dropped_to_fit_then_knowledge_only_then_nothing():
    details = [
        Detail(seg(i, "d" * 60, JAN1 + i), score) for i, score in enumerate([0.9, 0.8, 0.7, 0.6])
    ]
    block = build_block([F("task_state", "t")], details, 100)
    assert block.tokens <= 100
    kept_scores = sorted(d.score for d in block.details)
    assert kept_scores == sorted(kept_scores) and all(
        d.score >= max((c.score for c, _ in block.cut_details), default=0) for d in block.details
    )
    assert any("lowest score" in why or "budget" in why for _, why in block.cut_details)
    only_k = build_block([F("task_state", "t")], [Detail(seg(9, "x" * 900, JAN1), 1.0)], 45)
    assert "<detail>" not in only_k.text and "<knowledge>" in only_k.text
    nothing = build_block([F("task_state", "x" * 500)], [], 10)
    assert nothing.empty and nothing.cut_knowledge


def test_empty_inputs():
    assert build_block([], [], 4000).empty


def test_limits():
    assert hard_cap(4000, 200_000) == 4000
    assert hard_cap(4000, 32_000) == 3200
    assert search_limit(4000) == 8 and search_limit(5000) == 10
    assert safe_limit(200_000, 4000, 4000) == 192_000


def test_extract_query_last_three_user_messages_stripped():
    texts = [
        "first",
        f"{MARKER}\n...\n</recalled-context>",
        "System: [Mon 2026-01-05 10:00 UTC] second",
        'Conversation info (untrusted metadata):\n```json\n{"chat": 1}\n```\nthird',
        "fourth",
    ]
    assert extract_query(texts) == "second\nthird\nfourth"


def test_injection_after_system_and_summary():
    assert injection_index(["system", "compactionSummary", "user"]) == 2
    assert injection_index(["user", "assistant"]) == 0
