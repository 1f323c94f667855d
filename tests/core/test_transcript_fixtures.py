"""The real pi v1 transcripts of shared/fixtures, with real figures."""

from __future__ import annotations

import hashlib
import re
from collections import Counter

from core.transcript import compactions, context_at, context_size, load_transcript


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_before_compaction_counts(fixtures_dir):
    path = fixtures_dir / "before-compaction.jsonl"
    before = _sha(path)
    s = load_transcript(path)
    assert _sha(path) == before  # migration is in memory only
    assert s.version == 1
    assert s.id == "ffae836b-9420-4060-ac13-7745215f90ff"
    assert len(s.entries) == 1002
    assert s.role_counts() == {"assistant": 484, "bashExecution": 3, "toolResult": 448, "user": 55}
    types = Counter(e.type for e in s.entries)
    assert types == {"message": 990, "thinking_level_change": 5, "model_change": 5, "compaction": 2}
    assert [p for p in s.problems if p.severity == "error"] == []


def test_before_compaction_two_compactions(fixtures_dir):
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    comps = compactions(s)
    assert [c.entry.index for c in comps] == [359, 628]
    assert [c.entry.line for c in comps] == [360, 629]
    assert [c.tokens_before for c in comps] == [175004, 185014]
    # v1 firstKeptEntryIndex (header = 0) resolved to the ids of objects #293 and #551
    assert [s.by_id[c.first_kept_entry_id].index for c in comps] == [293, 551]
    assert comps[0].summary.startswith("# Context Checkpoint: Coding Agent Refactoring")
    assert len(comps[0].summary) == 4291
    # what the first compaction replaced: every message before #293
    assert {i.entry.index for i in comps[0].replaced} == {
        e.index for e in s.entries if e.index < 293 and e.type == "message"
    }
    # the second replaced the first summary and #293..#550
    assert comps[1].replaced[0].message.role == "compactionSummary"
    assert min(i.entry.index for i in comps[1].replaced[1:]) == 293
    assert max(i.entry.index for i in comps[1].replaced[1:]) < 551
    assert all(c.tokens_after_estimated for c in comps)  # v1 files record no tokensAfter


def test_measured_context_equals_tokens_before(fixtures_dir):
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    # Just before each compaction, the measured context is the tokensBefore pi recorded.
    assert context_size(context_at(s, "#358")).measured == 175004
    assert context_size(context_at(s, "#627")).measured == 185014


def test_context_at_leaf_starts_with_last_summary(fixtures_dir):
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    items = context_at(s)
    assert items[0].message.role == "compactionSummary"
    assert items[0].entry.index == 628
    assert items[1].entry.index == 551
    assert len(items) == 446
    assert Counter(i.message.role for i in items) == {
        "assistant": 219,
        "toolResult": 192,
        "user": 31,
        "bashExecution": 3,
        "compactionSummary": 1,
    }
    # non-message entries never become messages
    assert all(i.entry.type in ("message", "compaction") for i in items)


def test_context_before_any_compaction_is_everything(fixtures_dir):
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    items = context_at(s, "#100")
    assert [i.entry.index for i in items] == [
        e.index for e in s.entries if e.index <= 100 and e.type == "message"
    ]


def test_large_session(fixtures_dir):
    s = load_transcript(fixtures_dir / "large-session.jsonl")
    assert s.version == 1
    assert len(s.entries) == 1018
    assert s.role_counts() == {"assistant": 453, "toolResult": 373, "user": 88}
    assert Counter(e.type for e in s.entries)["thinking_level_change"] == 103
    assert compactions(s) == []
    assert len(context_at(s)) == 914


def test_tool_pairing_on_real_file(fixtures_dir):
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    pairs = s.tool_pairs()
    assert len(pairs) == 454
    assert all(p.call_entry is not None for p in pairs.values())  # no orphan results
    unanswered = [p for p in pairs.values() if not p.result_entries]
    assert len(unanswered) == 6
    paired = [p for p in pairs.values() if p.result_entries]
    for p in paired[:50]:
        call = s.by_id[p.call_entry]
        result = s.by_id[p.result_entries[0]]
        assert result.index > call.index
        assert result.message.tool_call_id == p.call_id


def test_v1_ids_are_stable_and_well_formed(fixtures_dir):
    a = load_transcript(fixtures_dir / "large-session.jsonl")
    b = load_transcript(fixtures_dir / "large-session.jsonl")
    assert [e.id for e in a.entries] == [e.id for e in b.entries]
    assert all(re.fullmatch("[0-9a-f]{8}", e.id) for e in a.entries)
    assert len({e.id for e in a.entries}) == len(a.entries)
    # v1 entries chain in file order
    assert a.entries[0].parent_id is None
    assert all(e.parent_id == p.id for p, e in zip(a.entries, a.entries[1:], strict=False))
    assert a.entry("#1") is a.entries[0]
    assert a.leaf is a.entries[-1]
