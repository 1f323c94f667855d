"""``memlens memory``: OpenClaw's memory index (status, files, chunks, search).

``memlens memory search HOME QUERY`` answers what ``openclaw memory search
--query QUERY --json`` answers for the same index, config and clock, with every
component of every score; ``status`` is ``openclaw memory status --json`` as far
as a reader can tell; ``files`` and ``chunks`` browse the index. HOME is an
OpenClaw state folder (``~/.openclaw``, or a folder holding ``.openclaw``) or one
``.sqlite`` file. Nothing is ever written to OpenClaw's files.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.io import jsonio
from core.io.problems import FormatError
from core.openclaw.config import load_openclaw_config
from core.openclaw.memindex import open_memory_index
from core.openclaw.memsearch import memory_search
from core.openclaw.memsearch_embed import (
    SearchSettings,
    agent_entry,
    embedder_for,
    settings_from_config,
)

if TYPE_CHECKING:
    import argparse

    from core.openclaw.memsearch_embed import QueryEmbedder
    from core.openclaw.memsearch_records import MemorySearchResult

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
        raise MemoryCliError(
            f"{path}: no OpenClaw memory index (agents/<id>/agent/{AGENT_DB} or memory/<id>.sqlite)"
        )
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


def run_search(
    home: MemoryHome,
    query: str,
    *,
    now_ms: int,
    max_results: int | None = None,
    min_score: float | None = None,
    embedder: QueryEmbedder | None = None,
    settings: SearchSettings | None = None,
) -> MemorySearchResult:
    """Search the home's index with its config (the embedder is built from it unless given)."""
    cfg = settings or load_settings(home)
    with open_memory_index(home.index) as index:
        meta = index.meta_dict()
        if not cfg.from_config and isinstance(meta.get("provider"), str):
            # no openclaw.json: the index says which provider and model made it
            model = meta.get("model")
            cfg = replace(
                cfg, provider=meta["provider"], model=model if isinstance(model, str) else ""
            )
        reason = None
        if embedder is None:
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
        )


# -- summaries ----------------------------------------------------------------------


def index_summary(path: str | os.PathLike[str]) -> dict[str, Any]:
    """``{path, sources: [{source, files, chunks, models}], problems}`` for ``memlens info``.

    Never raises: a file that cannot be read gives no sources and one problem.
    """
    try:
        with open_memory_index(path) as index:
            return {
                "path": os.fspath(path),
                "layout": index.layout.name,
                "schemaVersion": index.schema_version,
                "sources": [
                    {
                        "source": s.source,
                        "files": s.files,
                        "chunks": s.chunks,
                        "models": list(s.models),
                    }
                    for s in index.sources()
                ],
                "problems": [
                    p.to_json() for p in (*index.problems, *index.embedding_problems(deep=False))
                ],
            }
    except FormatError as exc:
        return {
            "path": os.fspath(path),
            "sources": [],
            "problems": [
                {"file": exc.file, "line": exc.line, "message": exc.detail, "severity": "error"}
            ],
        }


def status(home: MemoryHome, settings: SearchSettings | None = None) -> dict[str, Any]:
    """One agent's entry of ``openclaw memory status --json``: ``{agentId, status}``.

    The fields OpenClaw reports that a reader can know (``dirty`` and the
    provider's live state cannot be known without running OpenClaw); memlens's
    own findings are under ``status.memlens``.
    """
    cfg = settings or load_settings(home)
    with open_memory_index(home.index) as idx:
        meta = idx.meta_dict()
        by_source = {s.source: s for s in idx.sources()}
        names = [str(n) for n in meta.get("sources") or []] or ["memory"]
        names += [n for n in by_source if n not in names]
        counts: list[dict[str, Any]] = [
            {
                "source": n,
                "files": by_source[n].files if n in by_source else 0,
                "chunks": by_source[n].chunks if n in by_source else 0,
            }
            for n in names
        ]
        fts_rows = idx.fts_rows()
        vector = idx.vector_state()
        provider = cfg.provider if cfg.from_config else meta.get("provider")
        model = cfg.model if cfg.from_config else meta.get("model")
        keyword_only = provider == "none"
        model = None if keyword_only else model
        db_bytes = _size(home.index)
        cache = idx.cache_entries()
        state = {
            "backend": "builtin",
            "files": sum(c["files"] for c in counts),
            "chunks": sum(c["chunks"] for c in counts),
            "workspaceDir": None if home.workspace is None else str(home.workspace),
            "dbPath": str(home.index),
            "storage": {
                "databaseBytes": db_bytes or 0,
                "walBytes": _size(Path(f"{home.index}-wal")) or 0,
                "embeddingCacheBytes": sum(e.bytes for e in cache),
                "embeddingCacheEntries": len(cache),
            },
            # resolveStatusProviderInfo before a provider is initialised: the requested ones
            "provider": provider,
            **({"model": model} if model else {}),
            "requestedProvider": provider,
            "sources": names,
            "sourceCounts": counts,
            "cache": {"enabled": idx.layout.embedding_cache is not None, "entries": len(cache)},
            "fts": {"enabled": True, "available": fts_rows is not None},
            "vector": {
                "enabled": not keyword_only,
                "index": {"state": vector["state"]},
                **({"dims": meta["vectorDims"]} if meta.get("vectorDims") else {}),
            },
            "memlens": {
                "layout": idx.layout.name,
                "schemaVersion": idx.schema_version,
                "meta": meta,
                "ftsTokenizer": idx.fts_tokenizer(),
                "ftsRows": fts_rows,
                "vector": vector,
                "searchSources": list(cfg.sources),
                "searchMode": "fts-only" if keyword_only or meta.get("provider") == "none"
                else "hybrid",
                "agents": list(home.agents),
                "problems": [p.to_json() for p in (*idx.problems, *idx.embedding_problems())],
            },
        }  # fmt: skip
        return {"agentId": home.agent, "status": state}


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


# -- the commands ---------------------------------------------------------------------


def _print(args: argparse.Namespace, payload: Any, text: Any) -> None:
    if args.json:
        sys.stdout.buffer.write(jsonio.dumps(payload, pretty=args.pretty) + b"\n")
    else:
        sys.stdout.write(text() + "\n")
    sys.stdout.flush()


def cmd_memory_search(args: argparse.Namespace) -> int:
    """``memlens memory search``: OpenClaw's search of the index, every score explained."""
    home = resolve_home(args.home, args.agent)
    result = run_search(
        home,
        args.query,
        now_ms=parse_now(args.now),
        max_results=args.max_results,
        min_score=args.min_score,
    )
    payload = result.to_json()
    if not args.candidates:
        payload.pop("candidates")

    def text() -> str:
        head = f"{result.mode} search of {home.index} at {payload['nowIso']}"
        lines = [head + (f" ({result.reason})" if result.reason else "")]
        for c in result.results:
            h = c.hit
            flat = " ".join(h.snippet.split())[:80]
            lines.append(
                f"{c.score:.4f}  {h.path}:{h.start_line}-{h.end_line}  v={c.vector_score:.3f}"
                f" t={c.text_score:.3g} kw={c.keyword_score:.3f} decay={c.decay:.3f}  {flat}"
            )
        if not result.results:
            lines.append("no results")
        return "\n".join(lines)

    _print(args, payload, text)
    return 0


def cmd_memory_status(args: argparse.Namespace) -> int:
    """``memlens memory status``: what the index holds, as ``openclaw memory status`` says."""
    home = resolve_home(args.home, args.agent)
    entry = status(home)
    payload = [entry]  # openclaw memory status --json lists one entry per agent
    st, ml = entry["status"], entry["status"]["memlens"]

    def text() -> str:
        lines = [
            f"agent {entry['agentId']}: {st['dbPath']} ({ml['layout']}, schema"
            f" {ml['schemaVersion']})",
            f"provider {st['provider']} model {st['model']}; {st['files']} files,"
            f" {st['chunks']} chunks, {st['cache']['entries']} cache entries",
        ]
        lines += [
            f"  {s['source']}: {s['files']} files / {s['chunks']} chunks"
            for s in st["sourceCounts"]
        ]
        vector = st["vector"]["index"]["state"]
        lines.append(f"fts available: {st['fts']['available']}; vector: {vector}")
        lines += [f"  {p['message']}" for p in ml["problems"]]
        return "\n".join(lines)

    _print(args, payload, text)
    return 0


def cmd_memory_files(args: argparse.Namespace) -> int:
    """``memlens memory files``: the indexed files and whether the workspace changed."""
    home = resolve_home(args.home, args.agent)
    with open_memory_index(home.index) as idx:
        states = idx.file_states(home.workspace)
    rows = [
        {
            "path": s.path,
            "source": s.source,
            "state": s.state,
            "size": s.indexed.size if s.indexed else None,
            "mtime": s.indexed.mtime_ms if s.indexed else None,
            "hash": s.indexed.hash if s.indexed else None,
            "diskSize": s.disk_size,
            "diskMtime": s.disk_mtime_ms,
        }
        for s in states
    ]
    payload = {
        "index": str(home.index),
        "workspace": str(home.workspace) if home.workspace else None,
        "files": rows,
    }
    _print(
        args,
        payload,
        lambda: (
            "\n".join(f"{r['state']:<14} {r['source']:<9} {r['path']}" for r in rows) or "no files"
        ),
    )
    return 0


def cmd_memory_chunks(args: argparse.Namespace) -> int:
    """``memlens memory chunks``: the indexed chunks (path, lines, model, text)."""
    home = resolve_home(args.home, args.agent)
    with open_memory_index(home.index) as idx:
        chunks = idx.chunks(path=args.path, limit=args.limit, with_embedding=True)
    rows = [
        {
            "id": c.id,
            "path": c.path,
            "source": c.source,
            "startLine": c.start_line,
            "endLine": c.end_line,
            "model": c.model,
            "dims": None if c.embedding is None else int(c.embedding.size),
            "embedding": c.embedding_state,
            "text": c.text,
        }
        for c in chunks
    ]
    payload = {"index": str(home.index), "chunks": rows}

    def text() -> str:
        lines = [
            f"{c.path}:{c.start_line}-{c.end_line}  {c.model}  {' '.join(c.text.split())[:70]}"
            for c in chunks
        ]
        return "\n".join(lines) or "no chunks"

    _print(args, payload, text)
    return 0
