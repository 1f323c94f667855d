"""Issue 17, defect 10: an agent's figures add up counts, never sessions' context sizes."""

from __future__ import annotations

from dataclasses import dataclass

from core.openclaw.agentdb_stats import agent_figures


@dataclass(frozen=True)
class _S:
    agent: str
    id: str
    messages: int
    tokens_estimated: int
    modified: float
    compactions: int = 0
    name: str = ""
    loaded: bool = True


def test_counts_add_up_context_is_the_largest_and_the_latest():
    rows = [
        _S("main", "a", 10, 50_000, 1.0, 1),
        _S("main", "b", 5, 120_000, 2.0, 2, name="refactor"),
        _S("main", "c", 7, 0, 3.0, loaded=False),  # listed from SQL counts, not read yet
        _S("ops", "d", 3, 9_000, 5.0),
    ]
    main, ops = agent_figures(rows)
    assert (main.agent, main.sessions, main.messages, main.compactions) == ("main", 3, 22, 3)
    assert (main.largest_context, main.largest_session) == (120_000, "refactor")
    assert (main.latest_context, main.latest_session, main.last_active) == (None, "c", 3.0)
    assert 170_000 not in (main.largest_context, main.latest_context)  # no sum of snapshots
    assert (ops.sessions, ops.largest_context, ops.latest_context) == (1, 9_000, 9_000)
