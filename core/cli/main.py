"""The memlens command line: ``memlens <command> ... [--json]``.

Every command takes ``--json`` for machine-readable output; bad input gives a
non-zero exit and a one-line error naming the file (and line) on stderr.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core import __version__
from core.cli.compaction import CompactionCliError
from core.cli.memory import index_summary
from core.cli.recall import RecallCliError
from core.dataset.load import DataSet, load_dataset
from core.embed import hashembed
from core.io import jsonio
from core.io.problems import FormatError
from core.io.timefmt import utc_minute, utc_minute_ms
from core.openclaw.agentdb import load_session_ref, split_session_path
from core.transcript import compactions, context_at, context_size

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from core.transcript.model import Message, Session

PREVIEW = 100


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 1."""


def _out(args: argparse.Namespace, payload: Any, text: Callable[[], str]) -> None:
    if args.json:
        sys.stdout.buffer.write(jsonio.dumps(payload, pretty=args.pretty) + b"\n")
    else:
        write_text(text() + "\n")
    sys.stdout.flush()


def write_text(text: str) -> None:
    """Write *text* to stdout even when it holds what the stream cannot encode.

    Text from agent files may hold lone surrogates (valid JSON escapes, invalid
    UTF-8): they print as U+FFFD; characters the terminal's encoding lacks as ``?``.
    """
    try:
        sys.stdout.write(text)
    except UnicodeEncodeError:
        clean = jsonio.printable(text)
        encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
        sys.stdout.flush()
        sys.stdout.buffer.write(clean.encode(encoding, "replace"))


def _preview(text: str, width: int = PREVIEW) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _message_text(msg: Message) -> str:
    if msg.role == "assistant":
        parts = [b.text for b in msg.blocks if b.kind == "text" and b.text]
        calls = [
            f"{b.name}({_preview(jsonio.dumps(b.arguments).decode(), 60)})"
            for b in msg.tool_calls()
        ]
        return " ".join(parts + calls)
    if msg.role == "bashExecution":
        return f"$ {msg.raw.get('command', '')}"
    return msg.text()


# -- info / sessions ---------------------------------------------------------
def _load(path: str) -> DataSet:
    return load_dataset(path)


def _cmd_info(args: argparse.Namespace) -> int:
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
        "tokens": {
            "estimated": sum(s.tokens_estimated for s in data.summaries),
            "total": sum(s.tokens_total for s in data.summaries),
        },
        "problems": [p.to_json() for p in data.problems],
    }

    def text() -> str:
        lines = [data.discovery.describe()]
        lines.append(
            f"sessions: {len(data.summaries)}  messages: {sum(s.messages for s in data.summaries)}"
            f"  compactions: {sum(s.compactions for s in data.summaries)}"
            f"  tokens (context at leaf, estimated): {payload['tokens']['estimated']:,}"
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
            lines.append(f"memory index {Path(index['path']).name}: {', '.join(parts) or 'empty'}")
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

    _out(args, payload, text)
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
            _error(str(p), kind="note")


def _cmd_sessions(args: argparse.Namespace) -> int:
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
                f"{s.storage:<7} {s.path}"
            )
        return "\n".join(lines)

    _out(args, {"sessions": [s.to_json() for s in rows]}, text)
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


def _cmd_show(args: argparse.Namespace) -> int:
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
                "text": _message_text(m) if args.full else _preview(_message_text(m), 300),
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
                f"{_preview(str(msg['text']), 90)}"
            )
        return "\n".join(lines)

    _out(args, payload, text)
    return 0


def _cmd_compactions(args: argparse.Namespace) -> int:
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
            lines.append("  " + _preview(str(c["summary"]), 110))
        return "\n".join(lines)

    _out(args, payload, text)
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


def _cmd_facts(args: argparse.Namespace) -> int:
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
            lines.append(f"{f.id[:8]} {f.status:<10} [{f.type}] {_preview(f.content, 90)}")
        return "\n".join(lines)

    _out(args, payload, text)
    return 0


def _cmd_segments(args: argparse.Namespace) -> int:
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
            lines.append(f"{s.id[:8]} {when} {s.role:<9} {_preview(s.content, 80)}")
        return "\n".join(lines)

    _out(args, payload, text)
    return 0


# -- embed / demo -------------------------------------------------------------------
def _cmd_embed(args: argparse.Namespace) -> int:
    if args.model != "hash":
        raise CliError(f"embedding model {args.model!r} is not available here; use --model hash")
    vec = hashembed.embed(args.text)
    payload = {"model": "hash", "dim": int(vec.shape[0]), "vector": [float(x) for x in vec]}

    def text() -> str:
        nz = [(i, float(v)) for i, v in enumerate(vec) if v != 0]
        shown = ", ".join(f"{i}:{v:+.4f}" for i, v in nz[:12])
        return f"hash dim {vec.shape[0]}, {len(nz)} non-zero: {shown}{' …' if len(nz) > 12 else ''}"

    _out(args, payload, text)
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
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
    _out(args, payload, lambda: f"demo data written to {args.dir}: {summary.describe()}")
    return 0


# -- parser ------------------------------------------------------------------------
PATH_HELP = "an OpenClaw home, a pi sessions folder, a memory-context folder or a transcript"
DATA_HELP = "an OpenClaw home or a memory-context folder"
COMMANDS = (
    "info", "sessions", "show", "compactions", "facts", "segments", "embed", "demo",
    "recall", "knowledge", "eval", "plan", "compact", "budget", "overflow", "trim", "fact",
    "backups", "memory",
)  # fmt: skip


def _recall_command(name: str, module: str = "recall") -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        import importlib

        handlers = importlib.import_module(f"core.cli.{module}")
        payload, text = getattr(handlers, f"cmd_{name}")(args)
        _out(args, payload, lambda: text)
        return 0

    return run


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1 (a window of 0 tokens means nothing)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} must be at least 1")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a finite number above 0 (seconds, for example)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text} must be a finite number above 0")
    return value


def _session_args(
    p: argparse.ArgumentParser, window_help: str = "context window (default: the model's)"
) -> None:
    p.add_argument("session", metavar="SESSION", help="a transcript path (or an id with --data)")
    p.add_argument("--data", metavar="DIR", help="data directory in which to look SESSION up")
    p.add_argument("--at", metavar="ENTRY", help="an entry id or #N (default: the leaf)")
    p.add_argument("--window", type=positive_int, metavar="N", help=window_help)


def _search_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--vector-weight", type=float, metavar="W", help="weight of vector similarity (default 0.7)"
    )
    p.add_argument(
        "--bm25-weight", type=float, metavar="W", help="weight of the BM25 text score (default 0.3)"
    )
    p.add_argument(
        "--min-score",
        type=float,
        metavar="S",
        help="on the effective score (default: autoRecallMinScore, 0.7)",
    )
    p.add_argument("--decay", type=float, metavar="D", help="time decay per day (default 0.995)")
    p.add_argument(
        "--limit", type=int, metavar="N", help="at most N hits (default: max(8, ceil(hardCap/500)))"
    )
    p.add_argument(
        "--embedder",
        choices=("hash", "transformer"),
        help="embedder for queries and segments (default: the agent's embeddingModel)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command (also used to document the CLI)."""
    parser = argparse.ArgumentParser(
        prog="memlens",
        description="Inspect and manage the memory of OpenClaw / pi coding agents.",
    )
    parser.add_argument("--version", action="version", version=f"memlens {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(
        name: str, help: str, fn: Callable[[argparse.Namespace], int]
    ) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help)
        p.add_argument("--json", action="store_true", help="machine-readable JSON output")
        p.add_argument("--pretty", action="store_true", help="indent the JSON output")
        p.set_defaults(func=fn)
        return p

    p = add(
        "info", "what a data directory or transcript holds: counts, tokens, problems", _cmd_info
    )
    p.add_argument("path", metavar="PATH", help=PATH_HELP)
    p = add("sessions", "list the sessions of a data directory", _cmd_sessions)
    p.add_argument("path", metavar="PATH", help=PATH_HELP)
    p = add("show", "the context the model saw at an entry of a session", _cmd_show)
    p.add_argument("session", metavar="SESSION", help="a transcript path (or an id with --data)")
    p.add_argument("--at", metavar="ENTRY", help="an entry id or #N (N-th object, header = #0)")
    p.add_argument("--data", metavar="DIR", help="data directory in which to look SESSION up")
    p.add_argument("--full", action="store_true", help="whole message texts, not previews")
    p = add(
        "compactions",
        "every compaction of a session: tokens, summary, what it replaced",
        _cmd_compactions,
    )
    p.add_argument("session", metavar="SESSION", help="a transcript path (or an id with --data)")
    p.add_argument("--data", metavar="DIR", help="data directory in which to look SESSION up")
    p = add("facts", "knowledge facts (active; --all adds superseded and deleted)", _cmd_facts)
    p.add_argument("path", metavar="PATH", help=PATH_HELP)
    p.add_argument("--all", action="store_true", help="include superseded and deleted facts")
    p = add("segments", "archived segments in the warm store", _cmd_segments)
    p.add_argument("path", metavar="PATH", help=PATH_HELP)
    p.add_argument("--session", metavar="ID", help="only segments of this session (id prefix)")
    p.add_argument("--limit", type=int, default=20, metavar="N", help="newest N (0: all)")
    p = add("embed", "embed a text as the agent does (hash embedding, 384 dims)", _cmd_embed)
    p.add_argument("text", metavar="TEXT", help="the text to embed")
    p.add_argument(
        "--model", default="hash", help="embedding model; only hash here (default: %(default)s)"
    )
    p = add(
        "recall",
        "what recall would inject for a query: hits, components, the block",
        _recall_command("recall"),
    )
    p.add_argument("data", metavar="DATA", help=DATA_HELP)
    p.add_argument("query", metavar="QUERY", help="the text to search for")
    p.add_argument("--session", metavar="ID", help="the session recalling (its segments only)")
    p.add_argument("--cross-session", action="store_true", help="search every session")
    p.add_argument(
        "--window",
        type=positive_int,
        metavar="N",
        help="context window, for the hard cap (default: from openclaw.json, else 200000)",
    )
    _search_flags(p)
    p = add(
        "knowledge",
        "knowledge facts matching a query (the agent's IDF scorer)",
        _recall_command("knowledge"),
    )
    p.add_argument("data", metavar="DATA", help=DATA_HELP)
    p.add_argument("query", metavar="QUERY", help="the text to search for")
    p.add_argument(
        "--mode",
        choices=("idf", "adaptive"),
        default="idf",
        help="idf: the agent's rule (score >= --min-score); adaptive: keep facts matching "
        "enough query tokens (default: %(default)s)",
    )
    p.add_argument(
        "--limit", type=int, default=10, metavar="N", help="at most N facts (default: %(default)s)"
    )
    p.add_argument(
        "--min-score",
        type=float,
        default=0.5,
        metavar="S",
        help="lowest idf score kept, 0-1; idf mode only (default: %(default)s)",
    )
    p = add(
        "eval",
        "recall quality on labelled queries: recall@k, MRR, nDCG@10",
        _recall_command("eval"),
    )
    p.add_argument("data", metavar="DATA", help=DATA_HELP)
    p.add_argument(
        "--labels",
        required=True,
        metavar="FILE",
        help='JSONL: {"query", "relevant": [segment ids], "session"?}',
    )
    p.add_argument(
        "--k", default="1,5,10", metavar="K,K", help="cut-offs for recall@k (default: %(default)s)"
    )
    _search_flags(p)
    p = add(
        "plan",
        "what a compaction would summarise, keep and drop, in how many calls",
        _recall_command("plan", "compaction"),
    )
    _session_args(p)
    p = add(
        "compact",
        "compact a session: dry run by default, --write to append the entry",
        _recall_command("compact", "compaction"),
    )
    _session_args(p)
    p.add_argument(
        "--llm",
        default="offline",
        metavar="SPEC",
        help="summariser: offline (default, no network), openai:URL:MODEL or anthropic:MODEL",
    )
    p.add_argument(
        "--key-env", metavar="VAR", help="environment variable holding the API key (never stored)"
    )
    p.add_argument(
        "--write",
        action="store_true",
        help="back up the transcript, append the compaction, archive, write facts",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="write even if the transcript changed in the last seconds",
    )
    p.add_argument(
        "--via-openclaw",
        action="store_true",
        help="for a session in an OpenClaw agent database: have OpenClaw's gateway compact it "
        "(runs `openclaw sessions compact KEY`; memlens writes nothing)",
    )
    p.add_argument(
        "--openclaw",
        metavar="CMD",
        help="the openclaw command for --via-openclaw (default: $MEMLENS_OPENCLAW, else "
        "openclaw on the PATH)",
    )
    p.add_argument(
        "--gateway-url", metavar="URL", help="the gateway's ws:// URL (default: OpenClaw's config)"
    )
    p.add_argument(
        "--max-lines",
        type=positive_int,
        metavar="N",
        help="with --via-openclaw: OpenClaw trims to the last N lines instead of a summary",
    )
    p.add_argument(
        "--allow-fallback",
        action="store_true",
        help="when the summariser fails, write the fallback summary anyway (its first line "
        "says it is a fallback); without it a failed summary writes nothing and the command "
        "exits 1, dry run included (with --json the run and its attempt log are printed)",
    )
    p.add_argument(
        "--timeout",
        type=positive_float,
        default=120.0,
        metavar="SECONDS",
        help="total time allowed for the whole compaction's model calls (default: %(default)s)",
    )
    p.add_argument(
        "--connect-timeout",
        type=positive_float,
        default=10.0,
        metavar="SECONDS",
        help="time allowed to connect to the summariser (default: %(default)s)",
    )
    p.add_argument(
        "--read-timeout",
        type=positive_float,
        default=60.0,
        metavar="SECONDS",
        help="time allowed between bytes of one answer (default: %(default)s)",
    )
    p = add(
        "budget",
        "every threshold of a session's context: window, triggers, flush, caps",
        _recall_command("budget", "compaction"),
    )
    _session_args(p)
    p = add(
        "overflow",
        "replay OpenClaw's overflow recovery for a window, step by step",
        _recall_command("overflow", "compaction"),
    )
    _session_args(p)
    p = add(
        "trim",
        "smart trim of the context at an entry: a decision for every message",
        _recall_command("trim", "compaction"),
    )
    _session_args(p, "context window to trim for (required)")
    p.add_argument(
        "--query",
        metavar="Q",
        help="the BM25 query (default: the agent's recall query there, its last 3 user messages)",
    )
    p.add_argument(
        "--reserve",
        type=int,
        default=4000,
        metavar="N",
        help="tokens kept free for the reply (default: %(default)s)",
    )
    p.add_argument(
        "--hard-cap",
        type=int,
        metavar="N",
        help="the recalled block's cap (default: min(4000, window/10))",
    )
    p.add_argument(
        "--protected-recent",
        type=int,
        default=6,
        metavar="N",
        help="the last N user/assistant messages are never trimmed (default: %(default)s)",
    )
    from core.cli.backups import register as register_backups
    from core.cli.fact import register as register_fact
    from core.cli.memory import register as register_memory

    register_fact(sub)
    register_backups(sub)
    register_memory(sub)
    p = add("demo", "write the deterministic demo data (an OpenClaw home) to DIR", _cmd_demo)
    p.add_argument("dir", metavar="DIR", help="the folder to write to (created if missing)")
    p.add_argument(
        "--seed",
        type=int,
        default=7,
        help="seed of every random choice; same seed and --now, same bytes (default: %(default)s)",
    )
    p.add_argument("--now", metavar="ISO", help="the demo's 'now' (default: today 00:00 UTC)")
    p.add_argument(
        "--segments",
        type=int,
        default=3000,
        metavar="N",
        help="segments in segments.jsonl (default: %(default)s)",
    )
    p.add_argument("--force", action="store_true", help="write into a non-empty folder")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except BrokenPipeError:
        # The reader went away (``memlens sessions | head``): not an error. Point
        # stdout at /dev/null so the flush at exit does not raise again.
        _drop_stdout()
        return 0
    except (FormatError, CliError, FileExistsError, RecallCliError, CompactionCliError) as exc:
        _error(str(exc))
    except KeyError as exc:
        _error(str(exc.args[0] if exc.args else exc))
    except (OSError, ValueError) as exc:
        _error(_naming(args, str(exc)))
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except Exception as exc:  # a bug: one line naming it and the input, not a traceback
        _error(
            _naming(
                args,
                f"unexpected {type(exc).__name__}: {exc} (a bug in memlens; please report it)",
            )
        )
    return 1


def _input_of(args: argparse.Namespace) -> str | None:
    """The file or folder the command reads, as given."""
    for name in ("session", "path", "data"):
        value = getattr(args, name, None)
        if isinstance(value, str) and value:
            return value
    return None


def _naming(args: argparse.Namespace, message: str) -> str:
    """*message*, led by the command's input when it names no file itself."""
    where = _input_of(args)
    if where is None or where in message or os.sep in message:
        return message
    return f"{where}: {message}"


def _error(message: str, *, kind: str = "error") -> None:
    flat = jsonio.printable(" ".join(message.split()))
    try:
        print(f"memlens: {kind}: {flat}", file=sys.stderr)
    except (OSError, ValueError):
        pass  # stderr is gone too: the exit status still says it


def _drop_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass  # stdout is not a real file (tests, embedding): nothing to flush at exit


if __name__ == "__main__":
    sys.exit(main())
