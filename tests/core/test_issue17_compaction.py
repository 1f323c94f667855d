"""Issue 17: a compaction of a compacted session keeps what the previous summary said.

Defect 11: the offline summariser parsed only its own five headings out of the
previous summary, so a session compacted a second time lost the first summary's
goal and progress (pi's checkpoints carry ``## Goal`` and ``## Progress``). Defect 7
(core side): the backup a compaction's preview names is the file written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.compaction.offline import offline_merge, offline_summary
from core.compaction.refusals import CompactionRefused
from core.compaction.run import compact
from core.compaction.write import planned_writes, write_compaction
from core.io import fsutil
from core.io.writes import planned_backup
from core.transcript import load_transcript

from .build import STAMP, chain, entry, lines, user, write_file

PI_SUMMARY = """# Context Checkpoint: billing service

## Goal
Move the billing service to PostgreSQL 16 without downtime.

## Constraints & Preferences
- Never drop the legacy invoices table

## Progress
### Done
- [x] Wrote the migration script `db/migrate_0042.sql`
### In Progress
- [ ] Dual-write from the API workers
### Blocked
- Waiting on the DBA for replica access

## Key Decisions
- **Logical replication**: fewer locks than a dump and restore

## Next Steps
1. Switch the reads after a week of dual writes

<read-files>
db/old.sql
</read-files>
"""


def _section(text: str, title: str) -> str:
    """The body under ``## title``, its ``###`` subsections included."""
    found = re.search(rf"(?ms)^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text)
    assert found, f"no {title!r} section in:\n{text}"
    return found.group(1)


def _compacted_once(tmp_path, summary: str = PI_SUMMARY):
    """A transcript whose last compaction (by pi) said *summary*, with more work after it."""
    objs = chain(10)
    objs.append(
        {
            "type": "compaction",
            "id": "c0000001",
            "parentId": "0000000a",
            "timestamp": STAMP,
            "summary": summary,
            "firstKeptEntryId": "00000009",
            "tokensBefore": 10_000,
        }
    )
    objs += chain(10, start=11, parent="c0000001")
    path = tmp_path / "s.jsonl"
    write_file(path, lines(objs))
    return path


def test_offline_summary_keeps_the_previous_goal_and_progress():
    text = offline_summary([], previous_summary=PI_SUMMARY)
    assert "Move the billing service to PostgreSQL 16" in _section(text, "Goal")
    progress = _section(text, "Progress")
    assert "`db/migrate_0042.sql`" in progress and "Dual-write" in progress
    assert "### In Progress" in progress and "replica access" in progress
    assert "Switch the reads" in _section(text, "Next Steps")
    # pi's names of two of the five headings feed them; the file lists are not carried
    assert "legacy invoices" in _section(text, "Constraints/Rules")
    assert "Logical replication" in _section(text, "Decisions")
    assert "<read-files>" not in text and "Context Checkpoint" not in text
    # carrying a summary into itself changes nothing; merging keeps the sections once
    assert offline_summary([], previous_summary=text) == text
    merged = offline_merge([text, offline_summary([])])
    assert merged.count("## Goal") == 1 and "Dual-write" in merged


def test_a_second_compaction_carries_the_first_summary_forward(tmp_path):
    path = _compacted_once(tmp_path)
    session = load_transcript(path)
    first = compact(session, keep_recent_tokens=2_000)
    assert first.plan.ok and first.plan.previous_summary == PI_SUMMARY
    assert first.summary is not None
    text = first.summary.summary
    assert "PostgreSQL 16 without downtime" in _section(text, "Goal")
    assert "Dual-write from the API workers" in _section(text, "Progress")
    write_compaction(first, session, force=True)
    # more work, then compact again: the goal and the progress survive a second time
    with open(path, "a", encoding="utf-8") as fh:
        parent = first.entry["id"] if first.entry else ""
        for i in range(30, 40):
            msg = user(f"step {i}: we decided to go with pgbouncer " + "and more text " * 200)
            fh.write(
                json.dumps(
                    {
                        "type": "message",
                        "id": f"{i:08x}",
                        "parentId": parent,
                        "timestamp": STAMP,
                        "message": msg,
                    }
                )
                + "\n"
            )
            parent = f"{i:08x}"
    again = load_transcript(path)
    second = compact(again, keep_recent_tokens=2_000)
    assert second.plan.previous_summary == text
    assert second.summary is not None
    text2 = second.summary.summary
    assert "PostgreSQL 16 without downtime" in _section(text2, "Goal")
    assert "Dual-write from the API workers" in _section(text2, "Progress")
    assert "Logical replication" in _section(text2, "Decisions")
    assert text2.count("## Goal") == 1  # carried once, not once per compaction


def test_a_chunked_summary_keeps_the_previous_goal(tmp_path):
    """Several chunks (and partial summaries merged) still carry the previous sections."""
    path = _compacted_once(tmp_path)
    session = load_transcript(path)
    run = compact(session, window=12_000, reserve_tokens=2_000, keep_recent_tokens=1_000)
    assert run.plan.ok and run.plan.calls > 1, run.plan.reason
    assert run.summary is not None
    text = run.summary.summary
    assert "PostgreSQL 16 without downtime" in _section(text, "Goal")
    assert "Dual-write" in _section(text, "Progress")
    assert planned_writes(run, session)  # a plan that writes


# -- defect 7: the backup a preview names is the file written ---------------------------------


def test_a_planned_backup_name_is_the_name_made(tmp_path):
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"one\n")
    planned = fsutil.next_backup_path(src)
    assert fsutil.make_backup(src, name=planned) == planned and planned.read_bytes() == b"one\n"
    # the next name planned follows it; a planned name taken meanwhile is never overwritten
    again = fsutil.next_backup_path(src)
    assert again != planned and again.name.startswith(src.name + fsutil.BACKUP_INFIX)
    made = fsutil.make_backup(src, name=planned)
    assert made != planned and planned.read_bytes() == b"one\n" and made.exists()
    with pytest.raises(ValueError, match="not the name of a backup"):
        fsutil.make_backup(src, name=tmp_path / "elsewhere.txt")


def test_the_compaction_preview_and_the_write_name_one_backup(tmp_path):
    path = _compacted_once(tmp_path)
    session = load_transcript(path)
    run = compact(session, keep_recent_tokens=2_000)
    writes = planned_writes(run, session)
    planned = planned_backup(writes, session.path)
    assert planned is not None and [w.path for w in writes if w.action == "backup"] == [planned]
    write_compaction(run, session, force=True, backup_to=planned)
    assert str(run.backup) == planned and Path(planned).exists()


# -- defect 6 (core side): a summary made before the session grew is not written -------------


def test_a_run_for_an_older_leaf_is_refused(tmp_path):
    path = _compacted_once(tmp_path)
    session = load_transcript(path)
    run = compact(session, keep_recent_tokens=2_000)
    before = path.read_bytes()
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry(99, run.plan.leaf_id, user("one more"))) + "\n")
    grown = load_transcript(path)
    with pytest.raises(CompactionRefused, match="the session grew since this compaction"):
        write_compaction(run, grown, force=True)
    assert path.read_bytes().startswith(before)
    assert load_transcript(path).leaf.id == grown.leaf.id  # nothing appended


def test_a_rewrite_keeps_its_backup_under_the_planned_name(tmp_path):
    target = tmp_path / "sessions.json"
    target.write_bytes(b"{}\n")
    planned = fsutil.next_backup_path(target)
    saved = fsutil.atomic_write(target, b'{"a": 1}\n', backup_name=planned)
    assert saved == planned and planned.read_bytes() == b"{}\n"
    assert target.read_bytes() == b'{"a": 1}\n'
