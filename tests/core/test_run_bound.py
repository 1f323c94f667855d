"""OpenClaw's run reads a bounded suffix of a long database session (issue 15).

The rule (docs/notes/openclaw-context.md §4) is proved against OpenClaw's own reader in
tests/oracle/test_openclaw_context.py; here its arithmetic and its place in the replay.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from core.openclaw.agentdb import AgentDb
from core.transcript import context_at
from core.transcript.run_bound import limits, run_bound
from tests.openclaw_db import add_session, conversation, create_agent_db, message

if TYPE_CHECKING:
    from pathlib import Path


def test_limits_follow_openclaw():
    assert limits(16_000) == (128_000, 10_000)
    assert limits(100) == (1024, 10_000)  # never below 1 kB
    assert limits(None) == (1_024_000, 10_000)  # 128,000 tokens when unknown
    assert limits(10**9) == (64 * 1024 * 1024, 10_000)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "openclaw-agent.sqlite"
    con = create_agent_db(path)
    events = conversation("s1", 30, size=400)  # ~60 rows of ~600 bytes
    events.append(
        {"type": "compaction", "id": "c1", "parentId": events[-1]["id"],
         "timestamp": "2026-11-25T16:00:09.000Z", "summary": "S", "firstKeptEntryId": "s1-u25",
         "tokensBefore": 9000}
    )  # fmt: skip
    events += [message(f"after-{i}", "c1" if i == 0 else f"after-{i - 1}", "user", "x" * 900)
               for i in range(8)]  # fmt: skip
    add_session(con, "s1", events, entry={"contextTokens": 1000})
    con.close()
    return path


def test_the_newest_rows_that_fit_and_the_boundary(db):
    with AgentDb(db) as a:
        session = a.load_session("s1")
    assert session.run_context_tokens == 1000
    path = session.path_to(session.leaf.id)
    bound = run_bound(session, path, 1000)
    header = session.db_bytes[0] + 1
    costs = [session.db_bytes[e.line] + 1 for e in reversed(path)]
    expect, used = 0, header
    for c in costs:
        if used + c > 8000:
            break
        used, expect = used + c, expect + 1
    read_ids = [e.id for e in bound.read]
    assert read_ids[-expect:] == [e.id for e in path][-expect:]
    # the compaction was not among the newest rows, and it fits: it is added, first
    assert read_ids[0] == "c1" and len(read_ids) == expect + 1
    assert bound.used_bytes <= bound.max_bytes == 8000
    assert bound.truncated and bound.dropped == len(path) - len(read_ids)
    assert "not in what the model saw" in bound.describe()
    # the replay shows what was read: the summary, then the newest messages only
    items = context_at(session)
    assert items[0].entry.id == "c1"
    assert [i.entry.id for i in items[1:]] == read_ids[1:]


def test_no_bound_without_a_context_budget(db):
    with AgentDb(db) as a:
        session = a.load_session("s1")
    session.run_context_tokens = None
    items = context_at(session)
    assert [i.entry.id for i in items][:2] == ["c1", "s1-u25"]  # firstKept onwards
    bound = run_bound(session, session.path_to(session.leaf.id), 1_000_000)
    assert not bound.truncated and "whole branch" in bound.describe()
