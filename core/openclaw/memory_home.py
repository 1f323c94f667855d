"""Where an OpenClaw agent's memory index is, and OpenClaw's search of it with its config.

``resolve_home(HOME, agent)`` finds one agent's memory index (an agent database
``agents/<id>/agent/openclaw-agent.sqlite`` first, else ``memory/<id>.sqlite``), its
``openclaw.json`` and its workspace as OpenClaw resolves them; ``run_search`` runs
:func:`core.openclaw.memsearch.memory_search` with that config, the way ``openclaw
memory search`` does. The CLI (``memlens memory``), the app's memory view and the MCP
server (``memlens mcp``) share them. Nothing here writes.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.io.problems import FormatError, Problem
from core.openclaw.config import load_openclaw_config
from core.openclaw.memindex import open_memory_index
from core.openclaw.memindex_identity import VALID, IndexIdentity, index_identity
from core.openclaw.memsearch import memory_search
from core.openclaw.memsearch_embed import (
    SearchSettings,
    agent_entry,
    embedder_for,
    settings_from_config,
)
from core.openclaw.memsearch_records import MemorySearchResult

if TYPE_CHECKING:
    from core.openclaw.memindex import MemoryIndex
    from core.openclaw.memsearch_embed import QueryEmbedder

AGENT_DB = "openclaw-agent.sqlite"


class MemoryCliError(ValueError):
    """A user-facing error of ``memlens memory`` (one line, exit status 1)."""


@dataclass(frozen=True, slots=True)
class MemoryHome:
    """Where one agent's memory index, config and workspace are."""

    agent: str
    index: Path
    config: Path | None
    workspace: Path | None
    agents: tuple[str, ...]
    """Every agent found with a memory index."""


def _state_dir(home: Path) -> Path:
    if (home / ".openclaw").is_dir() and not (home / "agents").is_dir():
        return home / ".openclaw"
    return home


def _has_memory_tables(path: Path) -> bool:
    try:
        with open_memory_index(path) as idx:
            return idx.layout.name == "canonical" and idx.layout.chunks is not None
    except FormatError:
        return True  # let the open say what is wrong with it


def find_indexes(state: Path) -> dict[str, Path]:
    """Agent id -> memory index in an OpenClaw state folder (agent databases first)."""
    found: dict[str, Path] = {}
    memory = state / "memory"
    if memory.is_dir():
        for p in sorted(memory.glob("*.sqlite")):
            found[p.stem] = p
    agents = state / "agents"
    if agents.is_dir():
        for p in sorted(agents.glob(f"*/agent/{AGENT_DB}")):
            if _has_memory_tables(p) or p.parent.parent.name not in found:
                found[p.parent.parent.name] = p
    return found


def _workspace(raw: dict[str, Any], agent: str, state: Path) -> Path | None:
    """``resolveAgentWorkspaceDir``: the entry's workspace, else the defaults', else the state's."""
    entry = agent_entry(raw, agent) or {}
    space = entry.get("workspace")
    if isinstance(space, str) and space.strip():
        return Path(os.path.expanduser(space.strip()))
    agents = raw.get("agents")
    defaults = agents.get("defaults") if isinstance(agents, dict) else None
    fallback = defaults.get("workspace") if isinstance(defaults, dict) else None
    if isinstance(fallback, str) and fallback.strip():
        base = Path(os.path.expanduser(fallback.strip()))
        return base if agent == "main" else base / agent
    return state / ("workspace" if agent == "main" else f"workspace-{agent}")


NO_OPENCLAW_INDEX = f"no OpenClaw memory index (agents/<id>/agent/{AGENT_DB} or memory/<id>.sqlite)"


def resolve_home(home: str | os.PathLike[str], agent: str | None = None) -> MemoryHome:
    """Find the memory index of *agent* (default ``main`` or the only one) under *home*.

    Raises
    ------
    MemoryCliError
        When nothing is there, or the agent is unknown or ambiguous.
    """
    path = Path(home)
    if path.is_file():
        full = path.absolute()
        agent_db = path.name == AGENT_DB and len(full.parents) > 3
        state = full.parents[3] if agent_db else full.parent.parent
        name = agent or (path.parent.parent.name if path.name == AGENT_DB else path.stem)
        config = state / "openclaw.json"
        return _with_config(MemoryHome(name, path, None, None, (name,)), config, state)
    if not path.is_dir():
        raise MemoryCliError(f"{path}: no such file or folder")
    state = _state_dir(path)
    found = find_indexes(state)
    if not found:
        raise MemoryCliError(f"{path}: {NO_OPENCLAW_INDEX}")
    if agent is None:
        agent = "main" if "main" in found or len(found) != 1 else next(iter(found))
    if agent not in found:
        raise MemoryCliError(
            f"{path}: no memory index for agent {agent!r} (found: {', '.join(found)})"
        )
    return _with_config(
        MemoryHome(agent, found[agent], None, None, tuple(found)), state / "openclaw.json", state
    )


def _with_config(home: MemoryHome, config: Path, state: Path) -> MemoryHome:
    raw: dict[str, Any] = {}
    if config.is_file():
        try:
            raw = load_openclaw_config(config).raw
        except FormatError as exc:
            print(f"memlens: {exc}; searching with OpenClaw's defaults", file=sys.stderr)
    return MemoryHome(
        home.agent,
        home.index,
        config if config.is_file() else None,
        _workspace(raw, home.agent, state),
        home.agents,
    )


def agent_workspace(
    config: str | os.PathLike[str] | None, agent: str, state_dir: str | os.PathLike[str] | None
) -> Path | None:
    """*agent*'s workspace as OpenClaw resolves it from ``openclaw.json`` (None: unknown).

    The agent entry's ``workspace``, else ``agents.defaults.workspace`` (``/<id>``
    for agents other than main), else ``<state>/workspace[-<id>]``.
    """
    raw: dict[str, Any] = {}
    if config is not None and Path(config).is_file():
        try:
            raw = load_openclaw_config(config).raw
        except FormatError:
            raw = {}
    state = Path(state_dir) if state_dir is not None else None
    if state is None and config is not None:
        state = Path(config).parent
    if state is None:
        return None
    return _workspace(raw, agent, state)


def workspace_on_disk(home: MemoryHome) -> Path | None:
    """The agent's workspace as OpenClaw resolves it, found on disk for a copied home.

    A copied home (a backup, the demo) keeps a config naming the workspace where the
    home used to be (``~/.openclaw/workspace``); when that folder is missing, the copy's
    own folder of that name beside ``openclaw.json`` is the workspace. None: unknown.
    """
    workspace = home.workspace
    if workspace is None or workspace.is_dir() or home.config is None:
        return workspace
    moved = home.config.parent / workspace.name
    return moved if moved.is_dir() else workspace


def load_settings(home: MemoryHome) -> SearchSettings:
    """The memory-search settings of the home's ``openclaw.json`` (defaults without one)."""
    if home.config is None:
        return SearchSettings()
    try:
        raw = load_openclaw_config(home.config).raw
    except FormatError:
        return SearchSettings()
    return settings_from_config(raw, home.agent)


def parse_now(text: str | None, environ: dict[str, str] | None = None) -> int:
    """The search clock: ``--now`` (ISO time or epoch ms), else ``MEMLENS_NOW``, else now."""
    env = os.environ if environ is None else environ
    value = text if text else env.get("MEMLENS_NOW", "")
    if not value.strip():
        return int(time.time() * 1000)
    value = value.strip()
    if value.lstrip("-").isdigit():
        return int(value)
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise MemoryCliError(f"--now {value!r}: not an ISO time or epoch milliseconds") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def check_identity(home: MemoryHome, index: MemoryIndex, settings: SearchSettings) -> IndexIdentity:
    """OpenClaw's index identity check of the home's index under *settings*.

    Only an agent database (the canonical layout, the one OpenClaw 2026.9.6 reads)
    with an ``openclaw.json`` is checked: without a config memlens searches with the
    index's own provider and model, and OpenClaw does not read a legacy
    ``memory/<id>.sqlite``.
    """
    if index.layout.name != "canonical" or not settings.from_config:
        return VALID
    raw = index.meta()
    return index_identity(
        raw if isinstance(raw, dict) else None,
        settings,
        workspace=home.workspace,
        has_chunks=index.has_memory(),
        fts_available=index.layout.fts is not None,
    )


def paused_message(identity: IndexIdentity) -> str:
    """One line saying why OpenClaw would not search the index, and what it would do."""
    head = (
        f"memory search is paused: {identity.reason}"
        f" (owner: {identity.owner}, code: {identity.code})"
    )
    if identity.owner == "configuration":
        return f"{head}; OpenClaw answers nothing until `openclaw memory index` rebuilds it"
    if identity.version_order == "newer":
        return f"{head}; OpenClaw answers nothing until it is upgraded or the index rebuilt"
    return (
        f"{head}; OpenClaw would rebuild the index before searching (memlens never writes),"
        " and answers nothing while it cannot"
    )


def run_search(
    home: MemoryHome,
    query: str,
    *,
    now_ms: int,
    max_results: int | None = None,
    min_score: float | None = None,
    embedder: QueryEmbedder | None = None,
    settings: SearchSettings | None = None,
    index: MemoryIndex | None = None,
    identity: IndexIdentity | None = None,
    check: bool = False,
    rank_all: bool = True,
) -> MemorySearchResult:
    """Search the home's index with its config (the embedder is built from it unless given).

    *index* is the home's index already open (a long-lived caller keeps it open and
    refreshes it); without it the index is opened for this search and closed.
    With *check* (or *identity*, :func:`check_identity`'s answer when the caller has
    it) the index is searched only as OpenClaw would: a paused index is not searched
    (mode ``empty``, the reason and a warning say why), one whose chunking
    implementation only is older is searched keyword-only, as OpenClaw serves it
    until its rebuild. Without, the index is searched whatever its identity.
    *rank_all*: as :func:`~core.openclaw.memsearch.memory_search`'s.
    """
    if identity is None and not check:
        identity = VALID
    cfg = settings or load_settings(home)
    if index is None:
        with open_memory_index(home.index) as opened:
            return _search(
                home, opened, cfg, query, now_ms, max_results, min_score, embedder, identity,
                rank_all,
            )  # fmt: skip
    return _search(
        home, index, cfg, query, now_ms, max_results, min_score, embedder, identity, rank_all
    )


def _search(
    home: MemoryHome, index: MemoryIndex, cfg: SearchSettings, query: str, now_ms: int,
    max_results: int | None, min_score: float | None, embedder: QueryEmbedder | None,
    identity: IndexIdentity | None, rank_all: bool,
) -> MemorySearchResult:  # fmt: skip
    state = identity if identity is not None else check_identity(home, index, cfg)
    if state.paused:
        return _paused(index, cfg, query, now_ms, max_results, min_score, state)
    meta = index.meta_dict()
    if not cfg.from_config and isinstance(meta.get("provider"), str):
        # no openclaw.json: the index says which provider and model made it
        model = meta.get("model")
        cfg = replace(cfg, provider=meta["provider"], model=model if isinstance(model, str) else "")
    reason = None
    if state.keyword_only:
        embedder, reason = (
            None,
            (f"{state.reason}: OpenClaw serves the existing keyword index until it is rebuilt"),
        )
    if embedder is None and reason is None:
        embedder, reason = embedder_for(cfg)
        if reason and not cfg.from_config and not cfg.keyword_only:
            reason = f"no openclaw.json beside the index; {reason}"
    return memory_search(
        index,
        query,
        now_ms=now_ms,
        embedder=embedder,
        no_embed_reason=reason,
        max_results=cfg.max_results if max_results is None else max_results,
        min_score=cfg.min_score if min_score is None else min_score,
        sources=cfg.sources,
        workspace=home.workspace,
        rank_all=rank_all,
    )


def _paused(
    index: MemoryIndex, cfg: SearchSettings, query: str, now_ms: int,
    max_results: int | None, min_score: float | None, identity: IndexIdentity,
) -> MemorySearchResult:  # fmt: skip
    meta = index.meta_dict()
    model = meta.get("model")
    message = paused_message(identity)
    result = MemorySearchResult(
        query.strip(),
        "empty",
        message,
        now_ms,
        cfg.max_results if max_results is None else max_results,
        cfg.min_score if min_score is None else min_score,
        index.path,
        model if isinstance(model, str) else None,
    )
    result.problems.extend(index.problems)
    result.problems.append(Problem(index.path, 0, message, "warning"))
    return result
