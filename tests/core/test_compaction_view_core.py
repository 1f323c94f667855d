"""The core half of the compaction view: settings, target, providers, sections, diff, writes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.compaction.breakdown import plan_groups
from core.compaction.checks import check_before_write
from core.compaction.plan import plan_compaction
from core.compaction.prompts import REQUIRED_HEADINGS
from core.compaction.provider import (
    OFFLINE,
    InterruptibleClient,
    ProviderChoice,
    check_spec,
    open_provider,
    provider_key_status,
    with_offline_first,
)
from core.compaction.refusals import CompactionRefused, RecentlyModified
from core.compaction.run import compact
from core.compaction.sections import missing_headings, summary_sections
from core.compaction.settings import compaction_settings
from core.compaction.summarizers import LLMSummarizer, OfflineSummarizer
from core.compaction.target import target_from_dataset
from core.compaction.textdiff import changed_spans, diff_stats, side_by_side
from core.compaction.write import planned_writes, write_compaction
from core.dataset.load import load_dataset
from core.io.jobs import Cancelled
from core.llm import ChatMessage, LLMError, OpenAICompatibleClient
from core.openclaw.config import parse_openclaw_config
from core.transcript import load_transcript
from tests.demo_copy import demo_copy
from tests.llm_server import Reply

NOW = 1_760_000_000_000
OLD = time.time() - 3600


@pytest.fixture
def demo(tmp_path):
    home = tmp_path / "home"
    demo_copy(home, now_ms=NOW, segments=300)
    data = load_dataset(home)
    session = data.session("128b2f33")
    os.utime(session.path, (OLD, OLD))
    return data, session


# -- settings and target --------------------------------------------------------------------------


def test_settings_follow_the_config(fixtures_dir):
    session = load_transcript(fixtures_dir / "before-compaction.jsonl")
    plain = compaction_settings(session)
    assert (plain.window, plain.reserve_tokens, plain.keep_recent_tokens) == (
        200_000,
        20_000,
        20_000,
    )
    assert plain.model == "claude-opus-4-5" and plain.window_source == "registry"
    config = parse_openclaw_config(
        "{agents: {defaults: {contextTokens: 100000, compaction: {reserveTokens: 30000,"
        " keepRecentTokens: 8000, maxHistoryShare: 0.3}}}}"
    )
    s = compaction_settings(session, config)
    assert (s.window, s.window_source) == (100_000, "cap")
    assert (s.reserve_tokens, s.keep_recent_tokens, s.max_history_share) == (30_000, 8000, 0.3)
    assert compaction_settings(session, config, window=50_000).window == 50_000
    plan = plan_compaction(session, **s.kwargs())
    assert plan.window == 100_000 and plan.keep_recent_tokens == 8000


def test_target_from_dataset_knows_the_store(demo):
    data, session = demo
    target = target_from_dataset(data, session)
    assert target.session is session
    assert target.store_dir == data.discovery.memory_context
    assert (target.store_dir / "segments.jsonl").exists()


# -- plan breakdown -------------------------------------------------------------------------------


def test_plan_groups_add_up(fixtures_dir):
    session = load_transcript(fixtures_dir / "before-compaction.jsonl")
    plan = plan_compaction(session)
    groups = {g.fate: g for g in plan_groups(plan)}
    assert sum(g.calls for g in groups.values()) == plan.calls
    assert sum(g.tokens for g in groups.values()) == plan.tokens_summarized + plan.tokens_kept
    assert groups["kept"].first_entry_id == plan.first_kept_entry_id
    assert groups["kept"].range_text == f"#{plan.first_kept_index} to #{plan.kept[-1].entry.index}"
    assert groups["turn prefix"].messages == len(plan.turn_prefix)


# -- sections ---------------------------------------------------------------------------------------


def test_sections_of_an_offline_summary(fixtures_dir):
    session = load_transcript(fixtures_dir / "before-compaction.jsonl")
    run = compact(session)
    text = run.summary.summary
    sections = summary_sections(text)
    titles = [s.title for s in sections if not s.part]
    for h in REQUIRED_HEADINGS:
        assert h[3:] in titles
    turn = [s for s in sections if s.part]
    assert [s.title for s in turn] == [h[3:] for h in REQUIRED_HEADINGS]  # the split turn's own
    assert missing_headings(text) == []
    lines = text.splitlines()
    for s in sections:
        if s.title:
            assert lines[s.line].lstrip("#").strip() == s.title


def test_sections_count_items_and_missing_headings():
    text = "intro\n\n## Decisions\n- a\n- b\n\n## Open TODOs\n(none)\n\n### Deep\nx"
    sections = summary_sections(text)
    assert [(s.title, s.level, s.items) for s in sections] == [
        ("", 0, 1),
        ("Decisions", 2, 2),
        ("Open TODOs", 2, 0),
        ("Deep", 3, 1),
    ]
    assert sections[2].empty
    assert missing_headings(text) == list(REQUIRED_HEADINGS[2:])


# -- diff -------------------------------------------------------------------------------------------


@given(
    st.lists(st.sampled_from(["a", "b", "c", "## H", ""]), max_size=12),
    st.lists(st.sampled_from(["a", "b", "d", "## H", ""]), max_size=12),
)
def test_side_by_side_keeps_both_texts_in_order(a, b):
    left, right = "\n".join(a), "\n".join(b)
    rows = side_by_side(left, right)
    assert [r.left for r in rows if r.left is not None] == left.splitlines()
    assert [r.right for r in rows if r.right is not None] == right.splitlines()
    for r in rows:
        if r.kind == "equal":
            assert r.left == r.right
        assert (r.left is None) == (r.kind == "insert")
        assert (r.right is None) == (r.kind == "delete")
    stats = diff_stats(rows)
    assert stats.identical == (left.splitlines() == right.splitlines())


def test_changed_spans_mark_the_changed_words():
    left, right = "keep Python 3.11 compatibility", "keep Python 3.12 compatibility now"
    a, b = changed_spans(left, right)
    assert [left[s:e] for s, e in a] == ["3.11"]
    assert [right[s:e] for s, e in b] == ["3.12", "now"]


# -- providers --------------------------------------------------------------------------------------


def test_provider_choices_and_key_status():
    claude = ProviderChoice("Claude", "anthropic:claude-sonnet-4-5")
    local = ProviderChoice("Local", "openai:http://127.0.0.1:9/v1:m")
    cloud = ProviderChoice("Cloud", "openai:https://api.example.com/v1:m", "EXAMPLE_KEY")
    assert with_offline_first([claude, local]) == [OFFLINE, claude, local]
    mine = ProviderChoice("No model", "offline")
    assert with_offline_first([claude, mine]) == [mine, claude]
    assert claude.effective_key_env == "ANTHROPIC_API_KEY"
    assert provider_key_status(claude, {"ANTHROPIC_API_KEY": "x"}) == "set"
    assert provider_key_status(claude, {"ANTHROPIC_API_KEY": "  "}) == "missing"
    assert provider_key_status(local, {}) == "not needed"
    assert provider_key_status(cloud, {}) == "missing"
    assert provider_key_status(OFFLINE, {}) == "not needed"
    assert check_spec(cloud) is None
    assert "unknown LLM spec" in (check_spec(ProviderChoice("x", "gemini:y")) or "")
    assert isinstance(open_provider(OFFLINE).summarizer, OfflineSummarizer)
    opened = open_provider(local)
    assert isinstance(opened.summarizer, LLMSummarizer)
    assert isinstance(opened.client, InterruptibleClient)
    opened.close()


def test_interruptible_client_answers_fails_and_cancels(server):
    ok = {"choices": [{"message": {"content": "hello"}, "finish_reason": "stop"}]}
    server.add(
        Reply(200, ok), Reply(401, {"error": {"message": "bad key"}}), Reply(200, ok, delay=6)
    )
    inner = OpenAICompatibleClient(server.url, "m", retries=0, timeout=30)
    client = InterruptibleClient(inner)
    msgs = [ChatMessage("user", "hi")]
    assert client.complete(msgs, cancelled=lambda: False).text == "hello"
    with pytest.raises(LLMError) as err:
        client.complete(msgs, cancelled=lambda: False)
    assert err.value.kind == "auth"
    stop_at = time.monotonic() + 0.3
    with pytest.raises(Cancelled):
        client.complete(msgs, cancelled=lambda: time.monotonic() > stop_at)
    assert client.abandoned == 1  # the call in flight was left, not waited for (6 s)
    assert len(server.seen) == 3
    client.close()


# -- writes -----------------------------------------------------------------------------------------


def test_planned_writes_are_what_is_written(demo):
    data, session = demo
    store = data.discovery.memory_context
    transcript = Path(session.path)
    seen: list[str] = []
    run = compact(session, store_dir=store, progress=lambda d, t, label: seen.append(label))
    assert "extracting knowledge" in seen
    writes = planned_writes(run, session, store_dir=store)
    assert [w.action for w in writes] == ["backup", "append", "append"]
    before = {
        p: p.read_bytes() for p in (transcript, store / "segments.jsonl", store / "knowledge.jsonl")
    }
    write_compaction(run, session, store_dir=store, accept_facts=False)
    assert (store / "knowledge.jsonl").read_bytes() == before[store / "knowledge.jsonl"]
    for w in writes[1:]:
        path = Path(w.path)
        added = path.read_bytes()[len(before[path]) :].decode()
        assert added.splitlines() == list(w.lines)
    assert orjson.loads(writes[1].lines[0])["id"] == run.entry["id"]
    assert Path(writes[0].path).name.startswith(transcript.name + ".memlens-backup-")
    assert run.backup is not None and run.backup.read_bytes() == before[transcript]
    with pytest.raises(CompactionRefused, match="already written"):
        check_before_write(run, session)


def test_recent_modification_is_the_only_override(demo):
    _data, session = demo
    run = compact(session)
    os.utime(session.path)
    with pytest.raises(RecentlyModified, match="mid-turn"):
        check_before_write(run, session)
    check_before_write(run, session, allow_recent=True)
    with Path(session.path).open("ab") as fh:  # the agent appended meanwhile
        fh.write(b'{"type":"custom","id":"zz","parentId":null}\n')
    with pytest.raises(CompactionRefused, match="changed since it was read") as err:
        check_before_write(run, session, allow_recent=True)
    assert not isinstance(err.value, RecentlyModified)
