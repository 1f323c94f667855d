"""Where live mode looks for new agents and transcripts, and how they join the discovery.

The listing runs in the read phase (see :mod:`core.live.follow`); the discovery's
agents change only in steps run by the apply phase.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from core.dataset.discovery import AgentDir

if TYPE_CHECKING:
    from pathlib import Path

    from core.dataset.discovery import Discovery
    from core.live.changes import LiveRead


def agent_dirs(found: Discovery, joined: list[AgentDir], out: LiveRead) -> list[AgentDir]:
    """The agents' session folders, with those that appeared (joined by a step)."""
    known = {a.sessions_dir for a in (*found.agents, *joined)}
    fresh: list[AgentDir] = []
    if found.kind == "openclaw-home":
        root = found.path / "agents"
        subs = sorted(p / "sessions" for p in subdirs(root))
        fresh = [AgentDir(p.parent.name, p, ()) for p in subs if p.is_dir() and p not in known]
    elif found.kind == "pi-sessions":
        for sub in subdirs(found.path):
            if sub in known:
                continue
            name = sub.name.strip("-").replace("-", "/") if sub.name.startswith("--") else sub.name
            fresh.append(AgentDir(name or sub.name, sub, ()))
    if fresh:
        out.then(lambda _c: found.agents.extend(fresh))
    return [*found.agents, *joined, *fresh]


def join_step(found: Discovery, agent: AgentDir, path: Path, out: LiveRead) -> None:
    """Queue the record of an agent database that appeared (an agent or its upgrade)."""
    out.then(lambda _c: join_database(found, agent, path))


def join_database(found: Discovery, agent: AgentDir, path: Path) -> None:
    """Record an agent database that appeared: a new agent, or an agent's upgrade."""
    for i, a in enumerate(found.agents):
        if a.name == agent.name:
            found.agents[i] = replace(a, database=path)
            break
    else:
        found.agents.append(agent)
    if path not in found.memory_indexes:
        found.memory_indexes.insert(0, path)


def add_to_discovery(agents: list[AgentDir], agent: str, path: Path) -> None:
    """Record a transcript that appeared in *agent*'s folder."""
    for i, a in enumerate(agents):
        if a.sessions_dir == path.parent:
            agents[i] = replace(a, transcripts=(*a.transcripts, path))
            return
    agents.append(AgentDir(agent, path.parent, (path,)))


def subdirs(folder: Path) -> list[Path]:
    """The folders in *folder* (none when it cannot be listed)."""
    try:
        return [p for p in folder.iterdir() if p.is_dir()]
    except OSError:
        return []
