"""What each compaction of a what-if replay would have lost (issue 20 item 3, the loss audit)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.cli.whatif import render_text
from core.compaction.audit import audit_compaction
from core.compaction.whatif import replay_whatif
from core.compaction.whatif_audit import audit_whatif
from core.compaction.whatif_report import whatif_settings
from core.io.jobs import Cancelled
from core.transcript import load_transcript


@pytest.fixture(scope="module")
def large(fixtures_dir):
    """The large fixture (no real compaction) on a 128k model: two simulated ones."""
    s = load_transcript(fixtures_dir / "large-session.jsonl")
    settings, own = whatif_settings(s, model="128k")
    result = replay_whatif(s, settings, own=own.compaction)
    return s, result, audit_whatif(result, s), own


def test_each_simulated_compaction_loses_items_of_the_messages_it_summarised(large):
    s, result, audit, _own = large
    assert len(result.simulated) == len(audit.simulated) == 2 and audit.real == ()
    for n, (c, loss) in enumerate(zip(result.simulated, audit.simulated, strict=True)):
        assert c.plan is not None and loss.entry_id == c.entry_id and loss.number == n
        assert audit.of("simulated", n) is loss
        summarised = {i.entry.id for i in (*c.plan.history_dropped, *c.plan.summarize,
                                           *c.plan.turn_prefix)}  # fmt: skip
        # the previous simulated summary, folded in, is the n-th compaction "whatif-n"
        folded = {f"whatif-{n}"} if c.plan.previous_summary is not None else set()
        assert loss.audit.summariser == "memlens offline" and loss.audit.summary
        assert loss.audit.items
        for item in loss.audit.items:
            assert set(item.source) <= summarised | folded
        total = loss.total
        assert total.items == len(loss.audit.items) and total.lost == len(loss.audit.lost())
        out = loss.to_json()
        assert {"items", "missing", "lost", "loss", "categories", "lost_items"} <= out.keys()
        assert out["lost"] > 0 and 0 < out["loss"] <= 1
        assert 0 < len(out["lost_items"]) <= 5
        assert all(x["source"] and x["category"] in out["categories"] for x in out["lost_items"])
        # lost for good: no message the model still sees mentions it again
        later = [s.by_id[e].message.text() for e in result.entry_ids[c.position :]]
        kept = [i.message.text() for i in c.plan.kept]
        for item in loss.lost_items(None):
            assert not any(item.text in t for t in (*kept, *later))
            assert loss.entry_of(item) in (*summarised, loss.previous_entry_id)
    # the second folds in the first's offline summary (not the replay's placeholder)
    second = audit.simulated[1]
    assert second.previous_entry_id == result.simulated[0].entry_id
    assert "sssss" not in second.audit.summary
    assert result.simulated[1].plan.previous_summary is not None
    folded = [i for i in second.audit.items if i.source[0] == "whatif-1"]
    assert folded and second.entry_of(folded[0]) == result.simulated[0].entry_id


def test_a_real_compactions_loss_is_the_audit_of_the_agents_summary(fixtures_dir):
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    settings, own = whatif_settings(s)
    result = replay_whatif(s, settings, own=own.compaction)
    one = replace(result, real=result.real[1:], simulated=())  # one audit keeps this quick
    audit = audit_whatif(one, s)
    (loss,) = audit.real
    assert loss.kind == "real" and loss.entry_id == result.real[1].entry_id
    expected = audit_compaction(s, result.real[1].compaction_id)
    assert loss.audit.to_json() == expected.to_json()
    assert loss.audit.summariser == "agent" and loss.total.lost == len(expected.lost())
    # the real audits do not depend on the settings: a second replay's audit reuses them
    progress: list[tuple[int, int]] = []
    again = audit_whatif(one, s, reuse=audit, progress=lambda d, t, _: progress.append((d, t)))
    assert again.real[0].audit is loss.audit and progress[-1] == (1, 1)
    with pytest.raises(Cancelled):
        audit_whatif(one, s, cancelled=lambda: True)


def test_the_text_gives_each_compactions_loss_and_what_it_lost(large):
    s, result, audit, own = large
    plain = render_text(s.path, result, own)
    assert "loss" not in plain and "lost" not in plain
    text = render_text(s.path, result, own, audit)
    first = audit.simulated[0].total
    assert f"loss {first.loss:.0%} ({first.lost} lost)" in text
    head = f"lost for good by the what-if compaction after #{result.simulated[0].index}:"
    lines = text.splitlines()
    at = lines.index(head)
    assert lines[at + 1].startswith("  " + audit.simulated[0].lost_items()[0].category + ": ")
