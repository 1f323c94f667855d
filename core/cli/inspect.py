"""The read-only commands: info, sessions, show, compactions, facts, segments, embed, demo.

Each ``cmd_*`` takes the parsed arguments, prints through
:func:`core.cli.output.emit_result` and returns the exit status.
"""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.cli.memory import index_summary
from core.cli.output import (
    CliError,
    emit_result,
    message_preview_text,
    one_line_preview,
    print_error,
)
from core.dataset.load import DataSet, load_dataset
from core.embed import hashembed
from core.io.timefmt import utc_minute, utc_minute_ms
from core.openclaw.agentdb import load_session_ref, split_session_path
from core.transcript import compactions, context_at, context_size

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from core.dataset.load import SessionSummary
    from core.transcript.model import Session


# -- info / sessions ---------------------------------------------------------
def _load(path: str) -> DataSet:
    return load_dataset(path)


def cmd_info(args: argparse.Namespace) -> int:
    """``memlens info PATH``: what a path holds, its sessions and stores."""
    data = _load(args.path)
    facts = (
        data.knowledge.counts() if data.knowledge else {"active": 0, "superseded": 0, "deleted": 0}
    )
    seg = data.segments
    payload: dict[str, Any] = {
        "path": str(data.discovery.path),
        "kind": data.discovery.kind,
        "found": data.discovery.describe(),
        "agents": [a.name for a in data.discovery.agents],
        "sessions": [s.to_json() for s in data.summaries],
        "segments": len(seg.segments) if seg else 0,
        "segments_file": {
            "lines": seg.lines,
            "valid": seg.valid,
            "duplicates": seg.duplicates,
            "evicted_age": seg.evicted_age,
            "evicted_count": seg.evicted_count,
        }
        if seg
        else None,
        "vectors": len(data.vectors.ids) if data.vectors else 0,
        "vector_dim": data.vectors.dim if data.vectors else None,
        "facts": facts,
        "stores": _stores(data),
        "memory_indexes": [index_summary(p) for p in data.discovery.memory_indexes],
        "config": str(data.discovery.config) if data.discovery.config else None,
        # A context size is one session's snapshot: the largest, never a sum of them.
        "largest_context": _largest_context(data.summaries),
        "problems": [p.to_json() for p in data.problems],
    }

    def text() -> str:
        lines = [data.discovery.describe()]
        lines.append(
            f"sessions: {len(data.summaries)}  messages: {sum(s.messages for s in data.summaries)}"
            f"  compactions: {sum(s.compactions for s in data.summaries)}"
        )
        largest = payload["largest_context"]
        if largest is not None:
            lines.append(
                f"largest context at a leaf: {largest['tokens_estimated']:,} tokens "
                f"(chars/4 estimate) in {largest['session']}"
            )
        if seg is not None:
            lines.append(
                f"segments: {len(seg.segments)} warm of {seg.valid} valid lines"
                f" ({seg.duplicates} duplicate, {seg.evicted_age} older than evictionDays,"
                f" {seg.evicted_count} over maxSegments)  vectors: {payload['vectors']}"
            )
        lines.append("facts: " + ", ".join(f"{v} {k}" for k, v in facts.items()))
        lines.extend(f"store {s['agent']}: {s['era']} at {s['path']}" for s in payload["stores"])
        for index in payload["memory_indexes"]:
            parts = [
                f"{s['source']} {s['files']} files/{s['chunks']} chunks" for s in index["sources"]
            ]
            errors = [p["message"] for p in index["problems"] if p.get("severity") == "error"]
            what = ", ".join(parts) or (errors[0] if errors else "empty")
            lines.append(f"memory index {_under(Path(index['path']), data.discovery.path)}: {what}")
        errors = [p for p in data.problems if p.severity != "info"]
        lines.append(
            f"problems: {len(errors)}"
            + (
                f" (+{len(data.problems) - len(errors)} notes)"
                if len(errors) != len(data.problems)
                else ""
            )
        )
        lines.extend(f"  {p}" for p in errors[:20])
        if len(errors) > 20:
            lines.append(f"  ... and {len(errors) - 20} more (use --json)")
        return "\n".join(lines)

    emit_result(args, payload, text)
    return 0


def _stores(data: DataSet) -> list[dict[str, Any]]:
    """Where each agent's sessions live and which era of OpenClaw wrote them."""
    out: list[dict[str, Any]] = [
        {**db.to_json(), "era": f"SQLite agent database, {db.describe()}"} for db in data.databases
    ]
    for agent in data.discovery.agents:
        if agent.transcripts or agent.sessions_json is not None:
            out.append(
                {
                    "agent": agent.name,
                    "path": str(agent.sessions_dir),
                    "kind": "jsonl",
                    "era": f"JSONL transcripts ({len(agent.transcripts)})"
                    + (" and sessions.json" if agent.sessions_json is not None else ""),
                    "sessions": len(agent.transcripts),
                }
            )
        if agent.archives:
            out.append(
                {
                    "agent": agent.name,
                    "path": str(agent.sessions_dir),
                    "kind": "archive",
                    "era": f"archived transcripts ({len(agent.archives)})",
                    "sessions": len(agent.archives),
                }
            )
    return out


def _fmt_time(ts: float) -> str:
    return utc_minute(ts)


def _config_notes(data: DataSet) -> None:
    """Tell, on stderr, why openclaw.json was not used: a listing goes on without it."""
    config = data.discovery.config
    if config is None:
        return
    for p in data.problems:
        if p.file == str(config) and p.severity == "error":
            print_error(str(p), kind="note")


def cmd_sessions(args: argparse.Namespace) -> int:
    """``memlens sessions PATH``: one line per session."""
    data = _load(args.path)
    _config_notes(data)
    rows = sorted(data.summaries, key=lambda s: s.modified, reverse=True)

    def text() -> str:
        head = (
            f"{'agent':<10} {'session':<36} {'v':>1} {'msgs':>6} {'comp':>4} "
            f"{'tokens':>8} {'modified':<16} {'store':<7} where"
        )
        lines = [head]
        for s in rows:
            lines.append(
                f"{s.agent[:10]:<10} {s.id[:36]:<36} {s.version:>1} {s.messages:>6} "
                f"{s.compactions:>4} {s.tokens_estimated:>8} {_fmt_time(s.modified):<16} "
                f"{s.storage:<7} {s.path}" + (f"  [{s.key}]" if s.key else "")
            )
        return "\n".join(lines)

    emit_result(args, {"sessions": [s.to_json() for s in rows]}, text)
    return 0


# -- show ----------------------------------------------------------------------
def _open_session(ref: str, data_dir: str | None) -> Session:
    if data_dir:
        return load_dataset(data_dir).session(ref)
    if not Path(ref).exists() and split_session_path(ref) is None:
        raise CliError(f"{ref}: no such transcript (give a path, or --data DIR with a session id)")
    if Path(ref).is_dir():
        raise CliError(f"{ref}: is a folder; give a transcript, or --data {ref} SESSION_ID")
    return load_session_ref(ref)


def cmd_show(args: argparse.Namespace) -> int:
    """``memlens show SESSION``: a session's context at an entry."""
    session = _open_session(args.session, args.data)
    items = context_at(session, args.at)
    size = context_size(items)
    at = session.entry(args.at) if args.at else session.leaf
    messages = []
    for item in items:
        e, m = item.entry, item.message
        messages.append(
            {
                "role": m.role,
                "tokens": item.tokens,
                "entry_id": e.id,
                "index": e.index,
                "line": e.line,
                "type": e.type,
                "timestamp": m.timestamp,
                "text": message_preview_text(m)
                if args.full
                else one_line_preview(message_preview_text(m), 300),
                "tool_calls": [{"id": b.tool_id, "name": b.name} for b in m.tool_calls()],
                "tool_call_id": m.tool_call_id or None,
            }
        )
    payload: dict[str, Any] = {
        "session": session.id,
        "path": session.path,
        "at": {"id": at.id, "index": at.index, "line": at.line} if at else None,
        "tokens_estimated": size.estimated,
        "tokens_measured": size.measured,
        "messages": messages,
    }

    def text() -> str:
        where = f"#{at.index} ({at.id}, line {at.line})" if at else "(empty)"
        lines = [
            f"{session.path}: context at {where}: {len(items)} messages, "
            f"~{size.estimated:,} tokens estimated"
            + (f", {size.measured:,} measured" if size.measured else "")
        ]
        for msg in messages:
            lines.append(
                f"#{msg['index']:<6} {msg['role']:<17} {msg['tokens']:>6}  "
                f"{one_line_preview(str(msg['text']), 90)}"
            )
        return "\n".join(lines)

    emit_result(args, payload, text)
    return 0


def cmd_compactions(args: argparse.Namespace) -> int:
    """``memlens compactions SESSION``: the compactions of a session."""
    session = _open_session(args.session, args.data)
    infos = compactions(session)
    payload: dict[str, Any] = {
        "session": session.id,
        "path": session.path,
        "compactions": [
            {
                "entry_id": c.entry.id,
                "index": c.entry.index,
                "line": c.entry.line,
                "timestamp": c.entry.timestamp,
                "tokens_before": c.tokens_before,
                "tokens_after": c.tokens_after,
                "tokens_after_estimated": c.tokens_after_estimated,
                "first_kept_entry_id": c.first_kept_entry_id,
                "first_kept_index": session.by_id[c.first_kept_entry_id].index
                if c.first_kept_entry_id in session.by_id
                else None,
                "summary": c.summary,
                "replaced": [
                    {
                        "entry_id": i.entry.id,
                        "index": i.entry.index,
                        "role": i.message.role,
                        "tokens": i.tokens,
                    }
                    for i in c.replaced
                ],
                "replaced_tokens": sum(i.tokens for i in c.replaced),
                "kept": len(c.kept),
            }
            for c in infos
        ],
    }

    def text() -> str:
        lines = [f"{session.path}: {len(infos)} compaction(s)"]
        for c in payload["compactions"]:
            after = f"{'~' if c['tokens_after_estimated'] else ''}{c['tokens_after']:,}"
            before = f"{c['tokens_before']:,}" if c["tokens_before"] is not None else "?"
            lines.append(
                f"#{c['index']} (line {c['line']}) {before} -> {after} tokens: replaced "
                f"{len(c['replaced'])} messages (~{c['replaced_tokens']:,} tokens), kept "
                f"{c['kept']} from #{c['first_kept_index']}"
            )
            lines.append("  " + one_line_preview(str(c["summary"]), 110))
        return "\n".join(lines)

    emit_result(args, payload, text)
    return 0


# -- facts / segments ------------------------------------------------------------
def _store_missing(data: DataSet, path: str, name: str) -> str:
    """Why there is no *name* to show: no store, or the file's own problem."""
    folder = data.discovery.memory_context
    if folder is not None:
        file = str(folder / name)
        for p in data.problems:
            if p.file == file and p.severity != "info":
                return str(p)
    return f"{path}: no memory-context store ({name}) found"


def cmd_facts(args: argparse.Namespace) -> int:
    """``memlens facts DATA``: the facts of knowledge.jsonl."""
    data = _load(args.path)
    _config_notes(data)
    if data.knowledge is None:
        raise CliError(_store_missing(data, args.path, "knowledge.jsonl"))
    log = data.knowledge
    statuses = ("active", "superseded", "deleted") if args.all else ("active",)
    facts = [f for s in statuses for f in log.by_status(s)]  # type: ignore[arg-type]
    payload: dict[str, Any] = {
        "path": log.path,
        "counts": log.counts(),
        "facts": [
            {**f.to_json(), "status": f.status, "line": f.line, "versions": len(log.history[f.id])}
            for f in facts
        ],
    }

    def text() -> str:
        lines = [f"{log.path}: " + ", ".join(f"{v} {k}" for k, v in log.counts().items())]
        for f in facts:
            lines.append(f"{f.id[:8]} {f.status:<10} [{f.type}] {one_line_preview(f.content, 90)}")
        return "\n".join(lines)

    emit_result(args, payload, text)
    return 0


def cmd_segments(args: argparse.Namespace) -> int:
    """``memlens segments DATA``: the segments of segments.jsonl."""
    data = _load(args.path)
    _config_notes(data)
    seg = data.segments
    if seg is None:
        raise CliError(_store_missing(data, args.path, "segments.jsonl"))
    rows = [s for s in seg.segments if not args.session or s.session_id.startswith(args.session)]
    with_vec = set(data.vectors.ids) if data.vectors else set()
    shown = rows[-args.limit :] if args.limit else rows
    payload: dict[str, Any] = {
        "path": seg.path,
        "lines": seg.lines,
        "valid": seg.valid,
        "warm": len(seg.segments),
        "duplicates": seg.duplicates,
        "evicted_age": seg.evicted_age,
        "evicted_count": seg.evicted_count,
        "matching": len(rows),
        "without_vector": sum(1 for s in rows if s.id not in with_vec),
        "segments": [
            {**s.to_json(), "line": s.line, "has_vector": s.id in with_vec} for s in shown
        ],
    }

    def text() -> str:
        lines = [
            f"{seg.path}: {len(seg.segments)} warm segments ({payload['without_vector']} without "
            f"a vector), {seg.duplicates} duplicates, {seg.evicted_age + seg.evicted_count} evicted"
        ]
        for s in shown:
            when = utc_minute_ms(s.timestamp)
            lines.append(f"{s.id[:8]} {when} {s.role:<9} {one_line_preview(s.content, 80)}")
        return "\n".join(lines)

    emit_result(args, payload, text)
    return 0


# -- embed / demo -------------------------------------------------------------------
def cmd_embed(args: argparse.Namespace) -> int:
    """``memlens embed TEXT``: the hash embedding of a text."""
    if args.model != "hash":
        raise CliError(f"embedding model {args.model!r} is not available here; use --model hash")
    vec = hashembed.embed(args.text)
    payload = {"model": "hash", "dim": int(vec.shape[0]), "vector": [float(x) for x in vec]}

    def text() -> str:
        nz = [(i, float(v)) for i, v in enumerate(vec) if v != 0]
        shown = ", ".join(f"{i}:{v:+.4f}" for i, v in nz[:12])
        return f"hash dim {vec.shape[0]}, {len(nz)} non-zero: {shown}{' …' if len(nz) > 12 else ''}"

    emit_result(args, payload, text)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """``memlens demo DIR``: write a demo data directory."""
    from core.demo.build import write_demo

    now_ms = None
    if args.now:
        try:
            now_ms = int(datetime.fromisoformat(args.now.replace("Z", "+00:00")).timestamp() * 1000)
        except ValueError:
            raise CliError(f"--now {args.now!r}: not an ISO date or time") from None
    started = time.perf_counter()
    summary = write_demo(
        Path(args.dir), seed=args.seed, now_ms=now_ms, segments=args.segments, force=args.force
    )
    payload: dict[str, Any] = {
        "path": str(Path(args.dir)),
        **summary.to_json(),
        "seconds": round(time.perf_counter() - started, 3),
    }
    emit_result(args, payload, lambda: f"demo data written to {args.dir}: {summary.describe()}")
    return 0


def _largest_context(summaries: Sequence[SessionSummary]) -> dict[str, Any] | None:
    """The session with the largest context at its leaf (chars/4), or None."""
    loaded = [s for s in summaries if s.loaded]
    if not loaded:
        return None
    top = max(loaded, key=lambda s: s.tokens_estimated)
    return {"session": top.id, "tokens_estimated": top.tokens_estimated}


def _under(path: Path, root: Path) -> str:
    """*path* relative to *root* when inside it (agents' databases share a file name)."""
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
