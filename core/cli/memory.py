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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.io import jsonio
from core.io.problems import FormatError
from core.openclaw.memindex import open_memory_index
from core.openclaw.memindex_identity import staleness
from core.openclaw.memory_home import (
    MemoryCliError,
    MemoryHome,
    check_identity,
    load_settings,
    parse_now,
    resolve_home,
    run_search,
)

if TYPE_CHECKING:
    import argparse

    from core.openclaw.memsearch_embed import SearchSettings

__all__ = ["MemoryCliError", "MemoryHome", "parse_now", "resolve_home", "run_search"]

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
    """``memlens memory search``: OpenClaw's search of the index, every score explained.

    An index OpenClaw would not search (its identity check: another provider, model,
    provider settings, sources, scope, chunking or tokenizer than the config's, or an
    older or newer index format) is not searched either: no results, and the warning
    and action ``openclaw memory search`` prints (``stale``, ``warning``, ``action``
    in the JSON, as OpenClaw's), on stderr in text mode.
    """
    home = resolve_home(args.home, args.agent)
    settings = load_settings(home)
    with open_memory_index(home.index) as index:
        identity = check_identity(home, index, settings)
        result = run_search(
            home,
            args.query,
            now_ms=parse_now(args.now),
            max_results=args.max_results,
            min_score=args.min_score,
            settings=settings,
            index=index,
            identity=identity,
        )
    payload = result.to_json()
    if not args.candidates:
        payload.pop("candidates")
    stale = None if identity.valid else staleness(identity, settings, home.agent)
    if stale is not None:
        payload.update(stale)
        if not args.json:
            sys.stderr.write(f"memlens: {stale['warning']} {stale['action']}\n")

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
