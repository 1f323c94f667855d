"""``memlens mcp DATA``: serve DATA's memory read-only over MCP (stdio), never the GUI.

The launcher runs :func:`run_mcp` straight away, without building the whole CLI (whose
commands import most of memlens): an MCP host waits for the server's first answer.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

ABOUT = "serve DATA's memory read-only to an MCP host (Claude Code, OpenClaw...) over stdio"
DATA_HELP = (
    "an OpenClaw home, a pi sessions folder, a memory-context folder or an OpenClaudeCode folder"
)

TTY_HINT = (
    "memlens mcp: serving {data} over stdin/stdout to an MCP host, which starts this command"
    " itself (README: 'Memory for any agent (MCP)'); it waits for the host's JSON-RPC"
    " messages here. Ctrl-D or Ctrl-C ends it."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The command's arguments (the full CLI's parser and :func:`run_mcp` share them)."""
    p.add_argument("data", metavar="DATA", help=DATA_HELP)


def cmd_mcp(args: argparse.Namespace) -> int:
    """Run the MCP server on stdin/stdout until the client hangs up."""
    import sys

    # The SDK imports httpx, whose package loads its optional command line (rich and
    # pygments, a tenth of a second) unless that module cannot be imported; the server
    # never runs it. None in sys.modules makes the import fail as a missing module does.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    from core.mcp.lazy_sdk import defer_sdk_init, pause_collector

    pause_collector()  # until DATA is open (core.mcp.server._Opener)
    defer_sdk_init()  # the SDK's client and FastMCP are not imported (0.25 s)
    from core.mcp.server import serve_stdio

    if sys.stdin.isatty():  # run by hand: say what it waits for (a host's JSON-RPC)
        print(TTY_HINT.format(data=args.data), file=sys.stderr, flush=True)
    return serve_stdio(args.data)


def run_mcp(argv: Sequence[str]) -> int:
    """``memlens mcp ...`` parsed on its own; the exit status."""
    p = argparse.ArgumentParser(prog="memlens mcp", description=ABOUT)
    add_arguments(p)
    return cmd_mcp(p.parse_args(list(argv)))
