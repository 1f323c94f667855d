"""What-if replay (issue 20 item 3): the agent's own algorithms replayed under other settings."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.compaction.plan import plan_compaction
from core.compaction.settings import compaction_settings
from core.compaction.whatif import WhatIfSettings, replay_whatif
from core.compaction.whatif_report import preset_window, whatif_settings
from core.openclaw.config import MemoryFlushConfig
from core.timeline.arrays import build_timeline
from core.transcript import load_transcript, parse_transcript
from tests.conftest import ROOT
from tests.core.build import STAMP, chain, entry, lines, user

OPENCLAW_HOME = ROOT / "tests" / "data" / "openclaw-2026.9.6" / "home" / ".openclaw"


def _session(objs):
    return parse_transcript("\n".join(lines(objs)).encode() + b"\n", "<built>")


def _with_real_compaction(n_before=200, n_after=200):
    """A chain whose compaction sits where pi puts it: after the first answer over the
    trigger (usage 1,000 x i against 200,000 - 20,000), cut as plan_compaction cuts."""
    first = chain(n_before)
    s = _session(first)
    own = compaction_settings(s)
    at = next(o for o in first if o["message"]["role"] == "assistant"
              and o["message"]["usage"]["totalTokens"] > 180_000)  # fmt: skip
    prefix = first[: first.index(at) + 1]
    plan = plan_compaction(_session(prefix), **own.kwargs())
    comp = {
        "type": "compaction", "id": "c0mpact1", "parentId": at["id"], "timestamp": STAMP,
        "summary": "the summary " * 400, "firstKeptEntryId": plan.first_kept_entry_id,
        "tokensBefore": plan.tokens_before,
    }  # fmt: skip
    after = chain(n_after, start=len(prefix) + 1, parent="c0mpact1", usage_step=100)
    return _session([*prefix, comp, *after]), at["id"], plan


def test_replay_compacts_where_the_agent_did_with_its_cut():
    s, at, plan = _with_real_compaction()
    settings, own = whatif_settings(s)
    r = replay_whatif(s, settings, own=own.compaction)
    assert [c.reason for c in r.real] == ["threshold"]
    real, sim = r.real[0], r.simulated[0]
    assert real.entry_id == sim.entry_id == at
    assert sim.tokens_before == real.tokens_before == plan.tokens_before
    assert sim.first_kept_entry_id == real.first_kept_entry_id == plan.first_kept_entry_id
    assert sim.tokens_after == plan.expected_tokens_after()
    assert sim.summary_tokens == 16_000 and "threshold" in sim.detail


def test_smaller_window_compacts_earlier_and_more_often():
    s, _at, _plan = _with_real_compaction()
    own = compaction_settings(s)
    r = replay_whatif(s, WhatIfSettings(own.__class__(window=100_000)))
    assert len(r.simulated) >= 2
    assert r.simulated[0].position < r.real[0].position
    assert all(c.tokens_before > 80_000 for c in r.simulated if c.reason == "threshold")
    # after each compaction the replayed context drops: summary + kept, not the real usage
    after = r.simulated_context[r.simulated[0].position]
    assert after < r.real_context[r.simulated[0].position]


def test_real_curve_is_the_timelines(fixtures_dir):
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    settings, own = whatif_settings(s)
    r = replay_whatif(s, settings, own=own.compaction)
    tl = build_timeline(s)
    pos = [tl.position(e) for e in r.entry_ids]
    assert None not in pos
    assert np.array_equal(tl.context[pos], np.asarray(r.real_context, dtype=np.float64))
    # before the first compaction (real or simulated) both curves are the agent's figures
    first = min(r.real[0].position, r.simulated[0].position)
    assert r.simulated_context[:first] == r.real_context[:first]


def test_own_settings_find_the_fixtures_compactions(fixtures_dir):
    """docs/notes/whatif.md: the first real compaction was asked for below the
    trigger (manual); the replay compacts 6 entries later, when the context passes
    200,000 within one run (an overflow). The second lands near the real one when a
    simulated summary is as large as the real ones."""
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    settings, own = whatif_settings(s)
    r = replay_whatif(s, settings, own=own.compaction)
    assert [(c.index, c.reason) for c in r.real] == [(358, "manual"), (627, "threshold")]
    assert [c.tokens_before for c in r.real] == [175_004, 185_014]
    first = r.simulated[0]
    assert 0 < first.index - 358 <= 10 and first.reason == "overflow"
    assert r.overflows[0].recovered
    size = round(sum(c.summary_tokens for c in r.real) / len(r.real))
    r2 = replay_whatif(s, WhatIfSettings(settings.compaction, summary_size=size))
    near = min(abs(c.index - 627) for c in r2.simulated)
    assert near <= 40
    assert all(c.tokens_before > settings.trigger for c in r2.simulated)


def test_128k_preset_on_the_fixture(fixtures_dir):
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    settings, own = whatif_settings(s, model="gpt-4o")
    assert settings.compaction.window == 128_000 and settings.trigger == 108_000
    r = replay_whatif(s, settings, own=own.compaction)
    assert len(r.simulated) > len(r.real)
    assert max(r.simulated_context) < max(r.real_context)
    assert all(c.tokens_after < c.tokens_before for c in r.simulated)


def test_openclaw_and_openclaudecode_fixtures():
    from core.dataset.load import load_dataset

    alpha = load_dataset(OPENCLAW_HOME).session("alpha")
    data = load_dataset(OPENCLAW_HOME)
    settings, own = whatif_settings(alpha, data.config)
    # OpenClaw caps the reserve at a quarter of the 16,000 window
    assert settings.compaction.reserve_tokens == 4000 and settings.memory_flush is not None
    r = replay_whatif(alpha, settings, own=own.compaction)
    assert [c.reason for c in r.real] == ["hook"]  # the gateway's sessions.compact
    assert r.simulated == () and r.flushes == ()
    tg = load_transcript(ROOT / "tests/data/openclaudecode/home/sessions/tg-0001.jsonl")
    settings, own = whatif_settings(tg)
    r = replay_whatif(tg, settings, own=own.compaction)
    assert [c.reason for c in r.real] == ["manual"] and r.simulated == ()


def test_memory_flush_once_a_cycle_before_the_compaction():
    s, _at, _plan = _with_real_compaction(300, 0)
    own = compaction_settings(s)
    r = replay_whatif(s, WhatIfSettings(own, MemoryFlushConfig()))
    assert r.flush_threshold == 200_000 - 20_000 - 4000
    assert r.flushes and r.simulated
    assert r.flushes[0].position < r.simulated[0].position
    assert r.flushes[0].tokens >= r.flush_threshold
    cycles = [sum(c.position < f.position for c in r.simulated) for f in r.flushes]
    assert len(cycles) == len(set(cycles))  # at most one flush a compaction cycle


def test_an_overflow_that_cannot_recover_fails_the_run():
    objs = chain(4)
    big = entry(5, objs[-1]["id"], user("read this " * 30_000))  # ~75,000 tokens
    objs += [big, *chain(3, start=6, parent=big["id"])]
    s = _session(objs)
    c = compaction_settings(s)
    r = replay_whatif(s, WhatIfSettings(c.__class__(window=50_000, reserve_tokens=5000)))
    assert len(r.overflows) == 1  # one per run: the rest of it never happened
    o = r.overflows[0]
    assert not o.recovered and o.steps[-1].kind == "give_up" and o.tokens > 50_000


def test_presets():
    assert preset_window("gpt-4o") == 128_000
    assert preset_window("openai/gpt-4o-2024-08-06") == 128_000
    assert preset_window("claude-sonnet-4-5-20250929") == 200_000
    assert preset_window("1M") == 1_000_000
    with pytest.raises(ValueError, match=r"unknown model preset 'llama'.*gpt-4o"):
        preset_window("llama")


def test_settings_validation():
    s = _session(chain(4))
    with pytest.raises(ValueError, match="max-history-share 2"):
        whatif_settings(s, max_history_share=2.0)
    with pytest.raises(ValueError, match="leaves nothing"):
        whatif_settings(s, window=10_000, reserve=20_000)
    settings, own = whatif_settings(s, reserve=8000, keep_recent=5000, window=64_000)
    assert (settings.compaction.reserve_tokens, settings.compaction.keep_recent_tokens) == (
        8000,
        5000,
    )  # a pi transcript: no reserve floor
    assert own.compaction.window == 200_000 and settings.label == "--window"
    assert json.dumps(settings.compaction.kwargs())  # plain values
