"""The loss audit on the sessions the real pi writes (the oracle tier's run, issue 9).

The pinned pi 0.73.1 runs a session against the fake LLM (tests/oracle/test_pi_real.py:
tools, a failed read, a user ``!`` bash run, an image, an aborted answer, an HTTP
error, a model change, pi's own auto-compaction, a branch, a fork). Every compaction
in every file it wrote is audited, by pi's summary and by memlens's offline summary
of the same cut. Skipped where pi cannot be installed, a failure in CI.
"""

from __future__ import annotations

import pytest

from core.compaction.audit import audit_compaction, audit_dry_run
from core.transcript import load_transcript
from core.transcript.replay import compactions
from tests.oracle.conftest import pi_package  # noqa: F401  (the fixture `run` needs)
from tests.oracle.test_pi_real import run  # noqa: F401  (pi's session, one run a module)

pytestmark = pytest.mark.slow


def test_every_compaction_pi_wrote_is_audited(run):  # noqa: F811
    audited = []
    for path in (run.main, run.fork):
        session = load_transcript(path)
        for n in range(1, len(compactions(session)) + 1):
            agent = audit_compaction(session, str(n))
            ours = audit_dry_run(session, at=str(n), same_cut=True)
            audited.append((agent, ours))
    assert len(audited) == 1  # pi's auto-compaction; the fork starts before it
    agent, ours = audited[0]
    assert agent.summary.startswith("## Goal\nFix the notes (fake summary).")
    items = {i.text: i for i in agent.items}
    # pi appends its file lists to the summary: every file it read or changed is kept
    assert (items["notes.txt"].category, items["notes.txt"].detail) == ("file", "modified")
    assert (items["dot.png"].detail, items["missing.txt"].detail) == ("read", "read")
    assert {items[f].status for f in ("notes.txt", "dot.png", "missing.txt")} == {"kept"}
    # the fake summary says nothing else: the build and the user's bash run are gone
    assert items["echo built"].status == "lost"
    assert items["echo from the user"].category == "command"
    assert any(i.category == "error" and i.text.startswith("ENOENT") for i in agent.items)
    # memlens's planner reproduces pi's cut: the same items, another summary
    assert ours.notes == [] and ours.first_kept_entry_id == agent.first_kept_entry_id
    assert {(i.category, i.text) for i in ours.items} == {(i.category, i.text) for i in agent.items}
    assert ours.summary.startswith("_Offline summary")
