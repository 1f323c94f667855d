"""How the command line prints: JSON or text, and text that cannot break a terminal.

Every command's result goes through :func:`emit_result` (``--json`` or text);
:class:`CliError` is a user-facing error printed as one line.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from core.io import jsonio
from core.io.text import one_line

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from core.transcript.model import Message


PREVIEW = 100


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 1."""


def emit_result(args: argparse.Namespace, payload: Any, text: Callable[[], str]) -> None:
    """Print *payload* as JSON with ``--json``, else the text *text* makes."""
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


def one_line_preview(text: str, width: int = PREVIEW) -> str:
    """*text* on one line, cut to *width* characters with an ellipsis."""
    return one_line(text, width)


def message_preview_text(msg: Message) -> str:
    """The text a listing shows for *msg* (an assistant turn: its text and tool calls)."""
    if msg.role == "assistant":
        parts = [b.text for b in msg.blocks if b.kind == "text" and b.text]
        calls = [
            f"{b.name}({one_line_preview(jsonio.dumps(b.arguments).decode(), 60)})"
            for b in msg.tool_calls()
        ]
        return " ".join(parts + calls)
    if msg.role == "bashExecution":
        return f"$ {msg.raw.get('command', '')}"
    return msg.text()


def print_error(message: str, *, kind: str = "error") -> None:
    """Print ``memlens: KIND: MESSAGE`` as one line on stderr (never raises)."""
    flat = jsonio.printable(" ".join(message.split()))
    try:
        print(f"memlens: {kind}: {flat}", file=sys.stderr)
    except (OSError, ValueError):
        pass  # stderr is gone too: the exit status still says it


def output_flags(p: argparse.ArgumentParser) -> None:
    """``--json`` and ``--pretty``, which every command takes."""
    p.add_argument("--json", action="store_true", help="machine-readable JSON output")
    p.add_argument("--pretty", action="store_true", help="indent the JSON output")
