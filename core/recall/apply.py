"""What of a recall configuration the agent can be told: memoryContext settings.

The lab and the Recall view tune a ranking, minScore, the weights, the decay and
cross-session. The seed agent reads only some of them from ``openclaw.json``
(``agents.defaults.memoryContext``): ``autoRecallMinScore`` and ``crossSession``.
Its weights (0.7 / 0.3) and its decay (0.995 a day) are constants of its code, and
it ranks with the seed formula only; :func:`agent_changes` says so instead of
writing keys its strict validation would reject (:mod:`core.openclaw.config_edit`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.recall.hybrid import SearchConfig
from core.recall.rankings import SEED

AGENT = SearchConfig()
"""The agent's constants: weights 0.7 / 0.3, decay 0.995."""


@dataclass(slots=True)
class AgentChanges:
    """The settings to write (key, value), and what the agent cannot be told."""

    writes: list[tuple[str, Any]] = field(default_factory=list)
    cannot: list[str] = field(default_factory=list)


def agent_changes(chosen: SearchConfig, ranking: str, agent: SearchConfig) -> AgentChanges:
    """What writing *chosen* (ranked by *ranking*) into a config read as *agent* means."""
    out = AgentChanges()
    if chosen.min_score != agent.min_score:
        out.writes.append(("autoRecallMinScore", chosen.min_score))
    if chosen.cross_session != agent.cross_session:
        out.writes.append(("crossSession", chosen.cross_session))
    if ranking != SEED.name:
        out.cannot.append(f"the {ranking} ranking: the agent ranks with its own formula (seed)")
    weights = (chosen.vector_weight, chosen.bm25_weight)
    if weights != (AGENT.vector_weight, AGENT.bm25_weight):
        out.cannot.append(
            f"weights {weights[0]:g} / {weights[1]:g}: the agent's are fixed at"
            f" {AGENT.vector_weight:g} / {AGENT.bm25_weight:g} in its code"
        )
    if chosen.decay != AGENT.decay:
        out.cannot.append(f"decay {chosen.decay:g}: the agent's is fixed at {AGENT.decay:g}")
    return out
