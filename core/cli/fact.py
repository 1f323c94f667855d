"""``memlens fact add|edit|supersede|delete|restore DATA ...``: append-only fact edits for scripts.

Each command appends to DATA's knowledge.jsonl (DATA is anything memlens
recognises: an OpenClaw home, a memory-context folder, knowledge.jsonl itself)
exactly what the facts view would: the lines are redacted, planned against the
log as it is (agent's latest lines included) and appended in one write.
``--dry-run`` prints the lines without writing. ``--json`` names the id written,
and the line number and byte offset of every line.
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
        return [FactOp.add(typ, args.content, args.context)]
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
        "without writing; --json names the id written and each line's number and byte offset."
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
    return p
