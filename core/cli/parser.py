"""The argument parser of every ``memlens`` command (also used to document the CLI).

:func:`build_parser` wires each command to its handler: the read-only ones in
:mod:`core.cli.inspect`, recall and compaction in :mod:`core.cli.recall` and
:mod:`core.cli.compaction`, and the sub-CLIs ``fact``, ``backups`` and ``memory``.
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any

from core import __version__
from core.cli import mcp as mcp_cli
from core.cli.output import emit_result, output_flags
from core.io.limits import DEFAULT_BUDGET_S

if TYPE_CHECKING:
    from collections.abc import Callable


# -- parser ------------------------------------------------------------------------
PATH_HELP = "an OpenClaw home, a pi sessions folder, a memory-context folder or a transcript"
DATA_HELP = "an OpenClaw home or a memory-context folder"
COMMANDS = (
    "info", "sessions", "show", "open", "compactions", "facts", "segments", "embed", "demo",
    "recall", "knowledge", "eval", "plan", "compact", "budget", "overflow", "whatif", "trim",
    "fact", "backups", "memory", "homes", "export", "mcp", "setting", "audit",
)  # fmt: skip


SESSION_HELP = "a transcript path (or, with --data, an id, id prefix or session key)"


def _handler(module: str, name: str) -> Callable[[argparse.Namespace], Any]:
    """The function *name* of ``core.cli.<module>``, imported when first called.

    Command code is imported only when its command runs: ``memlens`` starts in a
    fraction of the time of importing every command's code.
    """

    def call(args: argparse.Namespace) -> Any:
        import importlib

        return getattr(importlib.import_module(f"core.cli.{module}"), name)(args)

    return call


def _lazy(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    """A command whose handler prints its own output and returns the exit status."""
    handler = _handler(module, name)
    return lambda args: int(handler(args))


def _recall_command(name: str, module: str = "recall") -> Callable[[argparse.Namespace], int]:
    """A command whose handler returns ``(payload, text)``: JSON or text, exit status 0."""
    handler = _handler(module, f"cmd_{name}")

    def run(args: argparse.Namespace) -> int:
        payload, text = handler(args)
        emit_result(args, payload, lambda: text)
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
    p.add_argument("session", metavar="SESSION", help=SESSION_HELP)
    p.add_argument("--data", metavar="DIR", help="data directory in which to look SESSION up")
    p.add_argument("--at", metavar="ENTRY", help="an entry id or #N (default: the leaf)")
    p.add_argument("--window", type=positive_int, metavar="N", help=window_help)


def _clock_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--now",
        metavar="TIME",
        help="'now' for eviction and decay: ISO date/time (UTC unless it says) or epoch ms "
        "(default: MEMLENS_NOW, else the clock)",
    )
    p.add_argument(
        "--no-evict",
        action="store_true",
        help="keep every segment: no evictionDays, no maxSegments before ranking "
        "(a dated labelled set then measures ranking)",
    )


def _ranking_flag(p: argparse.ArgumentParser) -> None:
    from core.recall.rankings import DEFAULT_RANKING, RANKINGS

    p.add_argument(
        "--ranking",
        choices=tuple(RANKINGS),
        default=DEFAULT_RANKING,
        metavar="NAME",
        help="ranking config: "
        + "; ".join(f"{r.name}: {r.summary}" for r in RANKINGS.values())
        + " (default: %(default)s; seed is exactly the agent's)",
    )


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
        output_flags(p)
        p.set_defaults(func=fn)
        return p

    p = add(
        "info",
        "what a data directory or transcript holds: counts, tokens, problems",
        _lazy("inspect", "cmd_info"),
    )
    p.add_argument("path", metavar="PATH", help=PATH_HELP)
    p = add(
        "homes",
        "what the agent homes on this machine (or PATHs) hold: counts",
        _lazy("homes", "cmd_homes"),
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="homes to summarise (default: known)")
    p.add_argument(
        "--budget", type=positive_float, default=DEFAULT_BUDGET_S, metavar="S",
        help=f"seconds the scan may take; past it counts are lower bounds ({DEFAULT_BUDGET_S:g})",
    )  # fmt: skip
    p = add("sessions", "list the sessions of a data directory", _lazy("inspect", "cmd_sessions"))
    p.add_argument("path", metavar="PATH", help=PATH_HELP)
    p = add(
        "show", "the context the model saw at an entry of a session", _lazy("inspect", "cmd_show")
    )
    p.add_argument("session", metavar="SESSION", help=SESSION_HELP)
    p.add_argument("--at", metavar="ENTRY", help="an entry id or #N (N-th object, header = #0)")
    p.add_argument("--data", metavar="DIR", help="data directory in which to look SESSION up")
    p.add_argument("--full", action="store_true", help="whole message texts, not previews")
    p = add(
        "open",
        "check what a memlens:// reference names, print it, then show it in the app",
        _lazy("open", "cmd_open"),
    )
    p.add_argument(
        "reference", metavar="REF",
        help="memlens://open?path=...[&session=ID[&entry=ID|#N]|&fact=ID|&segment=ID]",
    )  # fmt: skip
    p.add_argument(
        "--print", action="store_true",
        help="only resolve and print what REF names (exit 2 when it is not there)",
    )  # fmt: skip
    p.add_argument("--no-gui", dest="print", action="store_true", help="the same as --print")
    p = add(
        "compactions",
        "every compaction of a session: tokens, summary, what it replaced",
        _lazy("inspect", "cmd_compactions"),
    )
    p.add_argument("session", metavar="SESSION", help=SESSION_HELP)
    p.add_argument("--data", metavar="DIR", help="data directory in which to look SESSION up")
    p = add(
        "facts",
        "knowledge facts (active; --all adds superseded and deleted)",
        _lazy("inspect", "cmd_facts"),
    )
    p.add_argument("path", metavar="PATH", help=PATH_HELP)
    p.add_argument("--all", action="store_true", help="include superseded and deleted facts")
    p = add("segments", "archived segments in the warm store", _lazy("inspect", "cmd_segments"))
    p.add_argument("path", metavar="PATH", help=PATH_HELP)
    p.add_argument("--session", metavar="ID", help="only segments of this session (id prefix)")
    p.add_argument("--limit", type=int, default=20, metavar="N", help="newest N (0: all)")
    p = add(
        "embed",
        "embed a text as the agent does (hash embedding, 384 dims)",
        _lazy("inspect", "cmd_embed"),
    )
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
    _ranking_flag(p)
    _clock_flags(p)
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
    _clock_flags(p)
    p.add_argument(
        "--no-agent-row",
        action="store_true",
        help="leave out the row 'as the agent is configured'",
    )
    _ranking_flag(p)
    _search_flags(p)
    p = add(
        "setting",
        "set one recall setting of the agent's openclaw.json (dry run unless --write)",
        _lazy("setting", "cmd_setting"),
    )
    p.add_argument("data", metavar="DATA", help=DATA_HELP)
    p.add_argument(
        "key",
        metavar="KEY",
        help="a key of agents.defaults.memoryContext: autoRecallMinScore, hardCapTokens,"
        " crossSession or evictionDays",
    )
    p.add_argument("value", metavar="VALUE", help="the new value")
    p.add_argument("--write", action="store_true", help="back the file up and write the change")
    p = add(
        "plan",
        "what a compaction would summarise, keep and drop, in how many calls",
        _recall_command("plan", "compaction"),
    )
    _session_args(p)
    p = add(
        "audit",
        "what a compaction's summary kept, lost and lost for good (--at: which compaction)",
        _recall_command("audit", "audit"),
    )
    _session_args(p)
    p.add_argument(
        "--dry-run-summary",
        action="store_true",
        help="audit memlens's offline summary instead: of that compaction's cut when --at "
        "names one, else of the next cut (writes nothing)",
    )
    for flag, kw in (
        ("--probe", {"action": "store_true", "help": "grade --llm's answers to questions "
                     "made from the summarised messages, answered from the summary alone"}),
        ("--llm", {"default": "offline", "metavar": "SPEC", "help": "the model --probe asks: "
                   "openai:URL:MODEL or anthropic:MODEL (default: offline, no probes)"}),
        ("--key-env", {"metavar": "VAR", "help": "environment variable holding the API key"}),
        ("--probes", {"type": positive_int, "metavar": "N", "help": "at most N questions (24)"}),
        ("--probe-extra", {"type": positive_int, "default": 0, "metavar": "N",
                           "help": "let the model add N questions of its own (not in the total)"}),
        ("--timeout", {"type": positive_float, "default": 120.0, "metavar": "SECONDS",
                       "help": "total time for the probe's model calls (default: %(default)s)"}),
    ):  # fmt: skip
        p.add_argument(flag, **kw)
    p = add(
        "export",
        "a session's timeline (or --compaction: its compaction plan) as one HTML file",
        _lazy("export", "cmd_export"),
    )
    _session_args(p)
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the HTML file to write")
    p.add_argument(
        "--compaction", action="store_true", help="the compaction report, not the timeline"
    )
    p.add_argument("--force", action="store_true", help="replace FILE if it exists")
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
        "says it is a fallback); when the knowledge extraction fails or its answer cannot be "
        "read whole, write the compaction with only the facts read; without it a failed "
        "summary or extraction writes nothing and the command exits 1, dry run included "
        "(with --json the run and its attempt log are printed)",
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
        "whatif",
        "replay a session under other compaction settings: real and simulated compactions",
        _recall_command("whatif", "whatif"),
    )
    _session_args(p, "context window to replay with (default: the session's)")
    p.add_argument("session_id", nargs="?", metavar="ID", help="with DATA first: a session id")
    p.add_argument("--model", metavar="PRESET", help="window of a model or size: gpt-4o, 128k, 1m")
    p.add_argument("--reserve", type=int, metavar="N", help="reserveTokens (raised to the floor)")
    p.add_argument("--keep-recent", type=int, metavar="N", help="keepRecentTokens")
    p.add_argument("--max-history-share", type=float, metavar="F", help="maxHistoryShare, 0-1")
    p.add_argument(
        "--summary-tokens", type=int, metavar="N",
        help="a simulated summary's size (default: its budget, 0.8 x reserve)",
    )  # fmt: skip
    p.add_argument(
        "--audit", action="store_true",
        help="each compaction's loss audit: what its summary drops, what no later message has",
    )  # fmt: skip
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
    from core.cli.backups import register_backups_commands
    from core.cli.fact import register_fact_commands

    register_fact_commands(sub)
    register_backups_commands(sub)
    _register_memory_commands(sub)
    p = sub.add_parser("mcp", help=mcp_cli.ABOUT, description=mcp_cli.ABOUT)
    p.set_defaults(func=_lazy("mcp", "cmd_mcp"))
    mcp_cli.add_arguments(p)
    p = add(
        "demo",
        "write the deterministic demo data (an OpenClaw home) to DIR",
        _lazy("inspect", "cmd_demo"),
    )
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


def _register_memory_commands(sub: Any) -> None:
    """Add the ``memory`` command to the CLI's subcommands."""
    about = "OpenClaw's memory index: status, files, chunks and its own search, explained"
    p = sub.add_parser("memory", help=about, description=about)
    inner = p.add_subparsers(dest="memory_command", metavar="SUBCOMMAND", required=True)

    def add(name: str, help: str, fn: Any) -> argparse.ArgumentParser:
        q: argparse.ArgumentParser = inner.add_parser(name, help=help, description=help)
        q.add_argument("home", metavar="HOME", help="an OpenClaw state folder or one .sqlite index")
        q.add_argument("--agent", metavar="ID", help="the agent (default: main, or the only one)")
        output_flags(q)
        q.set_defaults(func=fn)
        return q

    q = add(
        "search",
        "search the index as `openclaw memory search` does, every score explained",
        _lazy("memory", "cmd_memory_search"),
    )
    q.add_argument("query", metavar="QUERY")
    q.add_argument(
        "--max-results", type=int, metavar="N", help="default: memory.search.query.maxResults or 6"
    )
    q.add_argument(
        "--min-score", type=float, metavar="F", help="default: memory.search.query.minScore or 0.35"
    )
    q.add_argument(
        "--now",
        metavar="TIME",
        help="the clock dated notes decay against: ISO time or epoch ms"
        " (default: $MEMLENS_NOW, else now)",
    )
    q.add_argument(
        "--candidates",
        action="store_true",
        help="with --json: every candidate, not only the results",
    )
    add(
        "status",
        "what the index holds, as `openclaw memory status` reports it",
        _lazy("memory", "cmd_memory_status"),
    )
    add(
        "files",
        "the indexed files and whether the workspace changed since",
        _lazy("memory", "cmd_memory_files"),
    )
    q = add(
        "chunks",
        "the indexed chunks (path, lines, model, text)",
        _lazy("memory", "cmd_memory_chunks"),
    )
    q.add_argument("--path", metavar="FILE", help="only the chunks of this indexed path")
    q.add_argument("--limit", type=int, metavar="N", help="at most N chunks")
