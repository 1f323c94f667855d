"""``memlens fact add|edit|supersede|delete|restore DATA ...``: append-only fact edits for scripts.

Each command appends to DATA's knowledge.jsonl (DATA is anything memlens
recognises: an OpenClaw home, a memory-context folder, knowledge.jsonl itself)
exactly what the facts view would: the lines are redacted, planned against the
log as it is (agent's latest lines included) and appended in one write.
``--dry-run`` prints the lines without writing. ``--json`` names the id written,
and the line number and byte offset of every line. ``fact add --from-session S
--from-entry E`` records where the fact came from (``memlensSource``).

``memlens fact source DATA FACT`` says where a fact came from (recorded or inferred
source messages with scores, their segments, the compaction that summarised each
and the summary lines that keep the fact); ``memlens fact from DATA --compaction
ENTRY [--line N]`` lists the facts that came from the messages a compaction
summarised. Their JSON is documented in :mod:`core.knowledge.provenance`.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from core.cli.output import output_flags
from core.dataset.discovery import discover
from core.io import jsonio
from core.knowledge.ops import Applied, FactOp, FactOpError, Plan, apply_fact_plan, plan_fact_ops
from core.store.knowledge import FACT_TYPES, load_knowledge

if TYPE_CHECKING:
    import argparse

    from core.store.knowledge import KnowledgeLog

FACT_COMMANDS = ("add", "edit", "supersede", "delete", "restore")


class FactCliError(ValueError):
    """A user-facing error of ``memlens fact`` (one line, exit status 1)."""


def knowledge_path(data: str) -> str:
    """DATA's knowledge.jsonl (it need not exist yet for ``add``).

    Raises
    ------
    FactCliError
        When DATA holds no memory-context store.
    """
    found = discover(data)
    if found.memory_context is None:
        raise FactCliError(
            f"{data}: no memory-context store (knowledge.jsonl) found; give an OpenClaw home, "
            "a memory-context folder or knowledge.jsonl"
        )
    return str(found.memory_context / "knowledge.jsonl")


def _type(value: str) -> str:
    if value not in FACT_TYPES:
        raise FactCliError(f"unknown fact type {value!r}: use one of {', '.join(FACT_TYPES)}")
    return value


def _ops(args: argparse.Namespace, log: KnowledgeLog) -> list[FactOp]:
    cmd = args.fact_command
    typ = _type(args.type) if getattr(args, "type", None) is not None else None
    if cmd == "add":
        if typ is None:
            raise FactCliError(f"--type is required: one of {', '.join(FACT_TYPES)}")
        return [FactOp.add(typ, args.content, args.context, source=_user_source(args))]
    ids = [_resolve(log, ref) for ref in args.ids] if cmd in ("delete", "restore") else []
    if cmd == "delete":
        return [FactOp.delete(i) for i in ids]
    if cmd == "restore":
        return [FactOp.restore(i) for i in ids]
    fid = _resolve(log, args.id)
    if cmd == "edit":
        if args.content is None and args.context is None and typ is None:
            raise FactCliError("nothing to change: give --content, --context or --type")
        return [FactOp.edit(fid, content=args.content, context=args.context, type=typ)]
    return [FactOp.supersede(fid, args.content, type=typ, context=args.context)]


def _user_source(args: argparse.Namespace) -> dict[str, Any] | None:
    """``{"by": "user", "sessionId", "entryIds"}`` from ``--from-session``/``--from-entry``."""
    session, entries = args.from_session, args.from_entry or []
    if entries and not session:
        raise FactCliError("--from-entry needs --from-session")
    if not session:
        return None
    return {"by": "user", "sessionId": session, "entryIds": list(entries)}


def _resolve(log: KnowledgeLog, ref: str) -> str:
    try:
        return log.resolve(ref)
    except KeyError as exc:
        raise FactCliError(str(exc.args[0])) from None


def run_fact_command(args: argparse.Namespace) -> int:
    """Run one ``memlens fact`` command; returns the exit status."""
    path = knowledge_path(args.data)
    log = load_knowledge(path)
    ops = _ops(args, log)
    if len({op.fact_id for op in ops if op.fact_id}) != len([op for op in ops if op.fact_id]):
        raise FactCliError("the same fact is named twice")
    try:
        planned = plan_fact_ops(log, ops)
        if args.dry_run:
            _print(args, _planned_json(planned), lambda: _planned_text(planned))
            return 0
        done = apply_fact_plan(log, planned)
    except FactOpError as exc:
        raise FactCliError(str(exc)) from None
    _print(args, done.to_json(), lambda: _done_text(done))
    return 0


def _planned_json(planned: Plan) -> dict[str, Any]:
    return {
        "path": planned.path,
        "operation": planned.label,
        "id": planned.id,
        "ids": list(planned.ids),
        "new_ids": list(planned.new_ids),
        "dry_run": True,
        "lines": [{"id": str(r["id"]), "record": r} for r in planned.records],
    }


def _planned_text(planned: Plan) -> str:
    return "\n".join([f"would {planned.summary}", *planned.lines])


def _done_text(done: Applied) -> str:
    where = ", ".join(f"line {ln.line} (byte {ln.offset:,})" for ln in done.lines)
    return f"{done.plan.label}: appended to {done.plan.path} at {where}\n{done.plan.id}"


def _print(args: argparse.Namespace, payload: dict[str, Any], text: Any) -> None:
    if args.json:
        sys.stdout.buffer.write(jsonio.dumps(payload, pretty=args.pretty) + b"\n")
    else:
        sys.stdout.write(text() + "\n")
    sys.stdout.flush()


def register_fact_commands(sub: Any) -> argparse.ArgumentParser:
    """Add ``fact`` and its subcommands to the CLI's subparsers *sub*."""
    about = "add, edit, supersede, delete or restore a knowledge fact (appends only)"
    more = (
        "Lines are redacted and planned against the log as it is now; --dry-run prints them "
        "without writing; --json names the id written and each line's number and byte offset. "
        "'fact source' and 'fact from' only read: where a fact came from, and the facts that "
        "came from a compaction's messages."
    )
    p: argparse.ArgumentParser = sub.add_parser("fact", help=about, description=f"{about}. {more}")
    inner = p.add_subparsers(dest="fact_command", metavar="ACTION", required=True)
    types = ", ".join(FACT_TYPES)

    def action(name: str, text: str) -> argparse.ArgumentParser:
        q: argparse.ArgumentParser = inner.add_parser(name, help=text, description=text)
        q.add_argument(
            "data",
            metavar="DATA",
            help="an OpenClaw home, a memory-context folder or its knowledge.jsonl",
        )
        output_flags(q)
        q.add_argument("--dry-run", action="store_true", help="print the lines, write nothing")
        q.set_defaults(func=run_fact_command)
        return q

    q = action("add", "append a new fact")
    q.add_argument("content", metavar="CONTENT", help="the fact's text")
    q.add_argument("--type", metavar="TYPE", help=f"one of {types} (required)")
    q.add_argument("--context", metavar="TEXT", help="where the fact applies")
    q.add_argument("--from-session", metavar="ID", help="record the session the fact came from")
    q.add_argument(
        "--from-entry", action="append", metavar="ID", help="and an entry of it (repeatable)"
    )
    q = action("edit", "append a new version of a fact (UPDATE): same id")
    q.add_argument("id", metavar="ID", help="fact id or a unique prefix")
    q.add_argument("--content", metavar="TEXT", help="the new text (default: unchanged)")
    q.add_argument("--context", metavar="TEXT", help="where the fact applies (default: unchanged)")
    q.add_argument("--type", metavar="TYPE", help=f"{types} (default: unchanged)")
    q = action("supersede", "append a new fact that replaces ID (ID gets supersededBy)")
    q.add_argument("id", metavar="ID", help="fact id or a unique prefix")
    q.add_argument("content", metavar="CONTENT", help="the new fact's text")
    q.add_argument("--type", metavar="TYPE", help=f"{types} (default: the old fact's)")
    q.add_argument("--context", metavar="TEXT", help="default: the old fact's")
    q = action("delete", "append a _deleted line for each fact")
    q.add_argument("ids", nargs="+", metavar="ID", help="fact ids or unique prefixes")
    q = action("restore", "make deleted or superseded facts active again")
    q.add_argument("ids", nargs="+", metavar="ID", help="fact ids or unique prefixes")
    register_provenance_commands(inner)
    return p


# -- provenance (read only) ---------------------------------------------------------------
def register_provenance_commands(inner: Any) -> None:
    """``fact source`` and ``fact from`` (they read; they never write)."""
    data_help = "an OpenClaw home or a folder with transcripts and a memory-context store"
    text = "where a fact came from: recorded or inferred messages, compactions, summary lines"
    q: argparse.ArgumentParser = inner.add_parser("source", help=text, description=text)
    q.add_argument("data", metavar="DATA", help=data_help)
    q.add_argument("fact", metavar="FACT", help="fact id or a unique prefix")
    q.add_argument("--limit", type=int, default=8, metavar="N", help="inferred messages shown")
    output_flags(q)
    q.set_defaults(func=run_fact_source)
    text = "the facts that came from the messages a compaction summarised"
    q = inner.add_parser("from", help=text, description=text)
    q.add_argument("data", metavar="DATA", help=data_help)
    q.add_argument("--compaction", required=True, metavar="ENTRY", help="compaction entry id")
    q.add_argument("--session", metavar="ID", help="its session (when several have the id)")
    q.add_argument("--line", type=int, metavar="N", help="a summary line (from 1): ranks first")
    q.add_argument("--limit", type=int, default=50, metavar="N", help="at most N facts")
    output_flags(q)
    q.set_defaults(func=run_fact_from)


def _provenance_index(data: str) -> tuple[Any, KnowledgeLog]:
    from core.compaction.extract import summary_lines_keeping
    from core.dataset.load import load_dataset
    from core.knowledge.provenance import ProvenanceIndex

    found = load_dataset(data, max_segments=-1, eviction_days=0)
    if found.knowledge is None:
        raise FactCliError(f"{data}: no knowledge.jsonl found")
    segments = found.segments.segments if found.segments is not None else []
    index = ProvenanceIndex(found.sessions, segments=segments, keeps=summary_lines_keeping)
    return index, found.knowledge


def run_fact_source(args: argparse.Namespace) -> int:
    """``memlens fact source DATA FACT``: the fact's provenance."""
    index, log = _provenance_index(args.data)
    fid = _resolve(log, args.fact)
    prov = index.of_fact(log.facts[fid], limit=args.limit)
    _print(args, prov.to_json(), lambda: _source_text(log, prov))
    return 0


def _source_text(log: KnowledgeLog, prov: Any) -> str:
    fact = log.facts[prov.fact_id]
    how = {
        "recorded": "recorded by memlens",
        "inferred": "inferred from its words",
        "none": "no message says enough of it",
    }[prov.kind]
    out = [f"{fact.id} ({fact.type}, {fact.status}): {fact.content}", f"source: {how}"]
    if prov.record:
        out.append("record: " + jsonio.dumps(prov.record).decode("utf-8"))
    for m in prov.messages:
        score = "recorded" if m.recorded else f"score {m.score:.2f}"
        seg = f", segment {m.segment_id}" if m.segment_id else ""
        out.append(f"  message {m.session_id[:8]}/{m.entry_id} {m.role} ({score}{seg})")
        c = m.compaction
        if c is not None:
            out.append(f"    summarised by compaction {c.entry_id} (#{c.index})")
            out += [f"      line {s.number} {s.status}: {s.text.strip()}" for s in c.lines]
    if prov.missing:
        out.append("  not in the loaded sessions: " + ", ".join(prov.missing))
    return "\n".join(out)


def run_fact_from(args: argparse.Namespace) -> int:
    """``memlens fact from DATA --compaction ENTRY``: the facts from its messages."""
    index, log = _provenance_index(args.data)
    sessions = [
        s.id
        for s in index.sessions
        if (args.session is None or args.session in (s.id, s.path) or s.id.startswith(args.session))
        and s.by_id.get(args.compaction) is not None
        and s.by_id[args.compaction].type == "compaction"
    ]
    sessions = list(dict.fromkeys(sessions))
    if not sessions:
        raise FactCliError(f"{args.data}: no compaction entry {args.compaction!r}")
    if len(sessions) > 1:
        raise FactCliError(
            f"{len(sessions)} sessions have a compaction {args.compaction!r}: give --session"
        )
    links = index.from_compaction(
        list(log.facts.values()), sessions[0], args.compaction, line=args.line, limit=args.limit
    )
    payload = {
        "session": sessions[0],
        "compaction": args.compaction,
        "line": args.line,
        "facts": [k.to_json() for k in links],
    }

    def text() -> str:
        if not links:
            return f"no fact came from the messages compaction {args.compaction} summarised"
        rows = []
        for k in links:
            line = f" line {k.line_status}" if k.line_status else ""
            rows.append(f"{k.fact.id[:8]}  {k.kind:<8} {k.score:.2f}{line}  {k.fact.content}")
        return "\n".join(rows)

    _print(args, payload, text)
    return 0
