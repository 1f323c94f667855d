"""The compaction commands of the CLI: ``plan``, ``compact``, ``budget``, ``overflow``, ``trim``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.cli.output import CliError
from core.compaction.overflow import simulate_overflow
from core.compaction.refusals import CompactionRefused
from core.compaction.run import CompactionRun, compact, failure_headline, plan_json
from core.compaction.settings import session_model, summary_instructions
from core.compaction.summarizers import LLMSummarizer, OfflineSummarizer
from core.compaction.write import compaction_job, write_compaction
from core.context.budget import budget_for
from core.context.terms import CONTEXT_TOKENS, source_label
from core.dataset.discovery import discover
from core.dataset.load import load_dataset
from core.io.problems import FormatError
from core.openclaw.agentdb import load_session_ref, split_session_path
from core.openclaw.config import OpenClawConfig, load_openclaw_config
from core.transcript.provider import as_sent

if TYPE_CHECKING:
    import argparse

    from core.compaction.plan import CompactionPlan
    from core.compaction.sections import SummaryInstructions
    from core.compaction.summarizers import Summarizer
    from core.llm import Deadline
    from core.openclaw.sessions_store import SessionEntry
    from core.transcript.model import Session


class CompactionCliError(CliError):
    """A user-facing error of the compaction commands."""


def _home_of(transcript: Path) -> Path | None:
    # An OpenClaw transcript lives in <home>/agents/<agent>/sessions/<file>.jsonl
    parents = transcript.resolve().parents
    if len(parents) >= 4 and parents[1].name and parents[2].name == "agents":
        return parents[3]
    return None


def open_session(args: argparse.Namespace) -> tuple[Session, Path | None, OpenClawConfig | None]:
    """The session, the memory-context folder and the config that go with it."""
    data = getattr(args, "data", None)
    if data:
        dataset = load_dataset(data)
        session = dataset.session(args.session)
        home = dataset.discovery.path if dataset.discovery.kind == "openclaw-home" else None
    else:
        path = Path(args.session)
        if not path.exists() and split_session_path(args.session) is None:
            # a FIFO, a device or a folder: load_session_ref names it
            raise CompactionCliError(
                f"{args.session}: no such transcript (give a path, or --data DIR with a session id)"
            )
        session = load_session_ref(args.session)
        home = _home_of(path)
    store = None
    config = None
    if home is not None:
        found = discover(home)
        store = found.memory_context
        if found.config is not None:
            config = load_openclaw_config(found.config)
    return session, store, config


def _settings(
    args: argparse.Namespace, config: OpenClawConfig | None, session: Session
) -> dict[str, Any]:
    window = getattr(args, "window", None)
    model = None
    for e in reversed(session.entries):
        if e.message is not None and e.message.role == "assistant" and e.message.model:
            model = e.message.model
            break
    if window is None:
        from core.openclaw.config import context_window_for

        window, _ = context_window_for(config, model)
    comp = config.compaction if config else None
    return {
        "window": window,
        "reserve_tokens": comp.effective_reserve_tokens if comp else 20_000,
        "keep_recent_tokens": comp.keep_recent_tokens if comp else 20_000,
        "max_history_share": comp.max_history_share if comp else 0.5,
    }


def summarizer_for(
    spec: str | None,
    key_env: str | None = None,
    *,
    connect_timeout: float | None = None,
    read_timeout: float | None = None,
    deadline: Deadline | None = None,
) -> Summarizer:
    """``offline`` (default), ``openai:URL:MODEL`` or ``anthropic:MODEL``, with its timeouts."""
    if not spec or spec == "offline":
        return OfflineSummarizer()
    from core.llm import parse_llm_spec

    try:
        client = parse_llm_spec(
            spec,
            api_key_env=key_env,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            deadline=deadline,
        )
    except ValueError as exc:
        raise CompactionCliError(str(exc)) from None
    return OfflineSummarizer() if client is None else LLMSummarizer(client)


FALLBACK_HINT = "use --allow-fallback to write the fallback summary anyway"
EXTRACTION_HINT = (
    "use --allow-fallback to write the compaction with only the facts read"
    " (none if the call failed)"
)


def cmd_plan(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """``memlens plan SESSION``: what a compaction would do, before any call."""
    session, _store, config = open_session(args)
    from core.compaction.plan import plan_compaction

    s = _settings(args, config, session)
    plan = plan_compaction(session, at=args.at, **s)
    payload = {"session": session.id, "path": session.path, "settings": s, **plan_json(plan)}
    lines = [f"{session.path}: {plan.reason}"]
    if plan.ok:
        lines.append(
            f"{CONTEXT_TOKENS.name} before {plan.tokens_before:,} "
            f"({source_label('measured' if plan.tokens_before_measured else 'estimated')}); "
            f"summarised ~{plan.tokens_summarized:,}; kept ~{plan.tokens_kept:,}; "
            f"expected after ~{plan.expected_tokens_after():,}"
        )
        lines.append(
            f"chunk ratio {plan.chunk_ratio:.2f}, max chunk {plan.max_chunk_tokens:,} tokens, "
            f"{len(plan.parts)} part(s), {len(plan.chunks)} chunk(s), "
            f"{len(plan.history_dropped)} message(s) dropped for history share"
        )
    return payload, "\n".join(lines)


def _summarise(
    args: argparse.Namespace,
    session: Session,
    store: Path | None,
    s: dict[str, Any],
    instructions: SummaryInstructions | None = None,
    plan: CompactionPlan | None = None,
) -> CompactionRun:
    """The dry run of ``compact``: plan, summarise, propose facts (writes nothing).

    *instructions* are the config's ``customInstructions`` and ``identifierPolicy``;
    *plan* one already made with *s*.
    """
    from core.llm import Deadline

    summarizer = summarizer_for(
        args.llm,
        args.key_env,
        connect_timeout=getattr(args, "connect_timeout", None),
        read_timeout=getattr(args, "read_timeout", None),
        deadline=Deadline(getattr(args, "timeout", None) or 120.0),
    )
    extract_client = getattr(summarizer, "client", None)
    try:
        return compact(
            session,
            summarizer=summarizer,
            at=args.at,
            store_dir=store,
            extract_client=extract_client,
            instructions=instructions,
            plan=plan,
            **s,
        )
    except Exception as exc:
        from core.llm import LLMError

        if isinstance(exc, LLMError):
            raise CompactionCliError(f"{summarizer.name}: {exc}") from None
        raise
    finally:
        if extract_client is not None:
            extract_client.close()


def _refuse_failed(args: argparse.Namespace, session: Session, run: CompactionRun) -> None:
    """Fail (exit 1) when a model call failed and ``--allow-fallback`` was not given."""
    failure = run.failure
    if failure is None or getattr(args, "allow_fallback", False):
        return
    hint = FALLBACK_HINT if run.summary_failed else EXTRACTION_HINT
    message = f"{failure_headline(failure)}, nothing was written: {failure.describe()}; {hint}"
    if args.json:
        _print_json(
            {"error": message, "session": session.id, "path": session.path, **run.to_json()},
            pretty=bool(getattr(args, "pretty", False)),
        )
    raise CompactionCliError(message)


LANE_TOOL = "memlens compact"


def _compact_and_write(
    args: argparse.Namespace,
    session: Session,
    store: Path | None,
    s: dict[str, Any],
    instructions: SummaryInstructions | None = None,
) -> CompactionRun:
    """``compact --write``: the whole job in the session's lane, logged in the activity log.

    The lane is taken before the summary (a second compaction of the session is
    refused before it spends any model call); the activity log gets the
    ``compaction started`` event, the writes, then ``finished``, ``failed`` or
    ``cancelled`` (Ctrl+C).
    """
    from core.compaction.plan import plan_compaction
    from core.io import fsutil
    from core.safety.activity import ActivityLog, default_activity_path

    if args.at:
        raise CompactionCliError("--write compacts the current leaf only; drop --at")
    plan = plan_compaction(session, **s)
    activity = ActivityLog(default_activity_path())
    fsutil.add_write_observer(activity.record)
    try:
        with compaction_job(
            session, tool=LANE_TOOL, activity=activity, tokens_before=plan.tokens_before
        ) as job:
            run = _summarise(args, session, store, s, instructions, plan)
            job.run = run
            _refuse_failed(args, session, run)
            write_compaction(
                run,
                session,
                store_dir=store,
                force=args.force,
                allow_fallback=bool(getattr(args, "allow_fallback", False)),
                update_store=True,
                lane=job.lane,
                tool=LANE_TOOL,
            )
            return run
    except CompactionRefused as exc:  # LaneBusy too: names the holder
        raise CompactionCliError(str(exc)) from None
    finally:
        fsutil.remove_write_observer(activity.record)


def cmd_compact(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """``memlens compact SESSION [--write]``: summary, entry, segments, facts.

    The model calls are bounded by ``--connect-timeout``, ``--read-timeout`` and,
    all together, ``--timeout``. When a summariser call fails after its retries
    (HTTP error, timeout, deadline, malformed, empty or refused answer, missing
    key), nothing is written and the command fails (exit 1) naming the call, the
    endpoint and the reason, dry run or not; with ``--json`` the run (its
    ``attempts`` log, the would-be fallback ``summary`` and ``entry``) is printed
    to stdout with an ``error`` key. ``--allow-fallback`` shows (and with
    ``--write`` writes) the fallback summary instead, its first line saying so.

    ``--write`` runs in the session's lane (:mod:`core.safety.session_lock`): refused,
    naming the holder, while another compaction of the session runs (app or
    CLI) or while OpenClaw holds its write lock on the transcript. After the
    append, the session's entry in the sibling ``sessions.json`` is updated as
    OpenClaw's gateway does after its own compaction (``sessions_store`` in the
    JSON; a store that cannot be read is left alone and the output says why).
    The run is logged in memlens's activity log (``compaction started``, the
    writes, then ``finished``, ``failed`` or ``cancelled``).
    """
    session, store, config = open_session(args)
    if getattr(args, "via_openclaw", False):
        return _compact_via_openclaw(args, session)
    s = _settings(args, config, session)
    instructions = summary_instructions(config)
    if args.write:
        run = _compact_and_write(args, session, store, s, instructions)
    else:
        run = _summarise(args, session, store, s, instructions)
        _refuse_failed(args, session, run)
    failure = run.failure
    payload = {"session": session.id, "path": session.path, **run.to_json()}
    lines = [f"{session.path}: {run.plan.reason}"]
    if failure is not None and run.summary_failed:
        lines.append(
            f"summary failed: {failure.describe()}; the summary below is the fallback "
            "(--allow-fallback), and its first line says so"
        )
    elif failure is not None:
        lines.append(
            f"knowledge extraction failed: {failure.describe()}; no facts are proposed "
            "(--allow-fallback)"
        )
    if run.summary is not None:
        lines.append(
            f"summary by {run.summary.provider}, {run.summary.calls} call(s), "
            f"{len(run.summary.summary):,} chars:"
        )
        lines.append(run.summary.summary)
        lines.append(
            f"segments to archive: {len(run.segments)}; fact operations: "
            + ", ".join(f"{o.op} {o.candidate.content[:40]!r}" for o in run.facts[:8])
        )
    if run.written:
        lines.append(
            f"written: entry {run.entry['id'] if run.entry else ''} appended at byte "
            f"{run.appended.offset if run.appended else '?'}; backup {run.backup}; "
            f"{run.segments_appended} segment(s), {len(run.facts_written)} fact line(s)"
        )
        if run.store_update is not None:
            backup = f" (backup {run.store_update.backup})" if run.store_update.backup else ""
            lines.append(f"{run.store_update.note}{backup}")
    elif session.db is not None:
        lines.append(
            "dry run: memlens never writes into OpenClaw's database; use --via-openclaw to "
            "have OpenClaw's gateway compact it"
        )
    else:
        lines.append("dry run: nothing was written (use --write)")
    return payload, "\n".join(lines)


def _compact_via_openclaw(args: argparse.Namespace, session: Session) -> tuple[dict[str, Any], str]:
    """``compact --via-openclaw``: OpenClaw's gateway compacts a database session.

    memlens runs ``openclaw sessions compact KEY --json`` and reads the session
    again to show what OpenClaw appended; it writes nothing itself.
    """
    from core.openclaw.gateway import GatewayError, compact_session

    if args.write:
        raise CompactionCliError("--via-openclaw and --write exclude each other")
    try:
        done = compact_session(
            session,
            openclaw=getattr(args, "openclaw", None),
            url=getattr(args, "gateway_url", None),
            max_lines=getattr(args, "max_lines", None),
            timeout_s=getattr(args, "timeout", None) or 300.0,
        )
    except GatewayError as exc:
        raise CompactionCliError(f"{exc}; nothing was written") from None
    after = load_session_ref(session.path)
    new = [e for e in after.compaction_entries() if e.id not in session.by_id]
    payload = {
        "session": session.id,
        "path": session.path,
        "key": done.key,
        "via": "openclaw",
        "command": list(done.command),
        "compacted": done.compacted,
        "result": done.result,
        "new_compactions": [
            {"id": e.id, "seq": e.line, "firstKeptEntryId": e.raw.get("firstKeptEntryId"),
             "tokensBefore": e.raw.get("tokensBefore")}
            for e in new
        ],
    }  # fmt: skip
    lines = [done.describe()]
    lines += [f"new compaction entry {e.id} at seq {e.line}" for e in new]
    if done.compacted and not new:
        lines.append("the database shows no new compaction entry yet")
    return payload, "\n".join(lines)


def _row_of(session: Session) -> SessionEntry | None:
    """The session's row (compaction and flush counters), as the app's budget uses it."""
    from core.openclaw.agentdb import AgentDb
    from core.openclaw.session_rows import find_row
    from core.openclaw.sessions_store import load_sessions_store

    stores = {}
    try:
        if session.db is not None:
            with AgentDb(session.db) as db:
                stores["db (sqlite)"] = db.store()
        else:
            path = Path(session.path).parent / "sessions.json"
            if path.is_file():
                stores["sessions.json"] = load_sessions_store(path)
    except FormatError:
        return None  # the budget without the row's counters, as before
    found = find_row(stores, session)
    return found[1] if found is not None else None


def _print_json(payload: dict[str, Any], *, pretty: bool) -> None:
    """A payload on stdout before the error line goes to stderr (``--json`` failures)."""
    import sys

    from core.io import jsonio

    sys.stdout.buffer.write(jsonio.dumps(payload, pretty=pretty) + b"\n")
    sys.stdout.flush()


def cmd_budget(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """``memlens budget SESSION``: every threshold of the session's context."""
    session, _store, config = open_session(args)
    b = budget_for(
        session,
        at=args.at,
        config=config,
        model_id=session_model(session),
        window=args.window,
        store_entry=_row_of(session),
    )
    payload = {
        "session": session.id,
        "window": b.window,
        "window_source": b.window_source,
        "guard": b.guard,
        "context_tokens": b.context_tokens,
        "context_source": b.context_source,
        "estimated_tokens": b.estimated_tokens,
        "reserve_tokens": b.reserve_tokens,
        "compaction_trigger": b.compaction_trigger,
        "seed_trigger": b.seed_trigger,
        "seed_target": b.seed_target,
        "seed_emergency": b.seed_emergency,
        "flush_threshold": b.flush_threshold,
        "hard_cap": b.hard_cap,
        "safe_limit": b.safe_limit,
        "should_compact": b.should_compact,
        "should_compact_seed": b.should_compact_seed,
        "should_flush": b.should_flush,
        "flush_reason": b.flush_reason,
        "thresholds": [
            {"key": t.key, "label": t.label, "tokens": t.tokens, "crossed": t.crossed}
            for t in b.thresholds
        ],
    }
    pct = 100 * b.context_tokens / b.window
    lines = [
        f"{session.path}: {b.context_tokens:,} {CONTEXT_TOKENS.name} "
        f"({source_label(b.context_source)}) of a "
        f"{b.window:,} window ({b.window_source}), {pct:.1f}%; guard {b.guard}"
    ]
    for t in b.thresholds:
        lines.append(f"  {'*' if t.crossed else ' '} {t.label:<26} {t.tokens:>9,}")
    lines.append(
        f"compact now: {'yes' if b.should_compact else 'no'}; memory flush: "
        f"{'yes' if b.should_flush else 'no'} ({b.flush_reason})"
    )
    return payload, "\n".join(lines)


def cmd_overflow(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """``memlens overflow SESSION --window N``: the overflow recovery, step by step."""
    session, _store, config = open_session(args)
    s = _settings(args, config, session)
    steps = simulate_overflow(
        session,
        s["window"],
        at=args.at,
        reserve_tokens=s["reserve_tokens"],
        keep_recent_tokens=s["keep_recent_tokens"],
    )
    payload = {
        "session": session.id,
        "window": s["window"],
        "steps": [
            {
                "kind": x.kind,
                "tokens_before": x.tokens_before,
                "tokens_after": x.tokens_after,
                "detail": x.detail,
            }
            for x in steps
        ],
    }
    return payload, "\n".join(f"{x.kind:<10} {x.detail}" for x in steps)


def _agent_message(item: Any) -> dict[str, Any]:
    """A context item as pi's AgentMessage (summaries and custom messages as pi makes them)."""
    entry, message = item.entry, item.message
    if entry.type == "message":
        return as_sent(message)  # a synthetic result without memlens's marker
    if entry.type == "compaction":
        return {
            "role": "compactionSummary",
            "summary": entry.raw.get("summary", ""),
            "tokensBefore": entry.raw.get("tokensBefore"),
            "timestamp": message.timestamp,
        }
    if entry.type == "branch_summary":
        return {
            "role": "branchSummary",
            "summary": entry.raw.get("summary", ""),
            "fromId": entry.raw.get("fromId"),
            "timestamp": message.timestamp,
        }
    return {
        "role": "custom",
        "customType": entry.raw.get("customType"),
        "content": entry.raw.get("content"),
        "display": entry.raw.get("display"),
        "timestamp": message.timestamp,
    }


def cmd_trim(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """``memlens trim SESSION --window N``: a decision for every message of the context."""
    from core.context.trim import smart_trim
    from core.transcript import context_at
    from core.transcript.provider import provider_context

    session, _store, _config = open_session(args)
    if args.window is None:
        raise CompactionCliError("trim needs --window N (the context window to trim for)")
    # trimmed as pi sends it: a call without a result gets pi's synthetic one
    items = provider_context(context_at(session, args.at))
    messages = [item.message for item in items]
    result = smart_trim(
        messages,
        args.query,
        window=args.window,
        reserve_tokens=args.reserve,
        hard_cap=args.hard_cap,
        protected_recent=args.protected_recent,
    )
    payload = {
        "session": session.id,
        "tokens_before": result.tokens_before,
        "tokens_after": result.tokens_after,
        "safe_limit": result.safe_limit,
        "hard_cap": result.hard_cap,
        "query": result.query,
        "ran": result.ran,
        "skipped_reason": result.skipped_reason or None,
        "counts": result.counts(),
        "decisions": [
            {
                "index": d.index,
                "role": d.role,
                "decision": d.decision,
                "layer": d.layer,
                "reason": d.reason,
                "tokens": d.tokens,
                "bm25": d.bm25_score,
                **({"synthetic": True} if items[d.index].synthetic else {}),
            }
            for d in result.decisions
        ],
        "messages": [_agent_message(items[d.index]) for d in result.decisions if not d.removed],
    }
    lines = [
        f"{session.path}: {result.tokens_before:,} -> {result.tokens_after:,} tokens "
        f"(safeLimit {result.safe_limit:,}); query {result.query!r}",
    ]
    if not result.ran:
        lines.append(f"nothing trimmed: {result.skipped_reason}")
    lines.append(", ".join(f"{n} {k}" for k, n in result.counts().items()))
    for d in result.decisions:
        if d.decision != "kept":
            lines.append(f"  #{d.index:<5} {d.role:<12} {d.decision:<16} {d.reason}")
    return payload, "\n".join(lines)


__all__ = ["CompactionCliError", "FormatError", "os"]
