"""The MCP server over stdio, on the official ``mcp`` SDK (its low-level ``Server``).

``tools/list`` answers from :mod:`core.mcp.schemas` at once; the data directory is
opened in a worker thread as soon as the server starts (the SDK's handshake does not
wait for it), and each ``tools/call`` runs in a worker thread too, so a long first load
never stalls the protocol. A failed call is an MCP error result (``isError``) whose
text says what was wrong: a bad argument, a data directory that is not one, a session
that does not exist. stdout carries the protocol only; notes go to stderr.

The SDK is pinned below 2 (``pyproject.toml``): ``mcp`` 2.3 takes 1.4 s to import on the
2-core machines memlens is measured on, 1.30 takes 0.8 s, and the server must answer
within 1 s of its start (``bench/bench_mcp_search.py``).
"""

from __future__ import annotations

import json
import re
import sys
import threading
from io import TextIOWrapper
from typing import TYPE_CHECKING, Any, TextIO

import anyio
import jsonschema
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from core import __version__
from core.io.jsonio import printable
from core.mcp.lazy_sdk import resume_collector
from core.mcp.schemas import INPUT_SCHEMAS, TOOLS, argument_error

if TYPE_CHECKING:
    import os

    from core.mcp.tools import MemoryTools

INSTRUCTIONS = (
    "memlens reads an agent's memory (OpenClaw's memory index, the memory-context store,"
    " knowledge facts, sessions) and answers read-only: memory_search before answering"
    " questions about prior work, memory_get for the lines of a memory-file hit,"
    " session_context for what the model saw."
)


READ_ONLY = types.ToolAnnotations(
    readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False
)


class _Opener:
    """The data directory, opened once in a worker thread; calls wait for it.

    Its warm-up and its calls have the search tables built in a thread of their own
    (:func:`core.openclaw.memsearch_chunks.builds_apart`), so that no call waits seconds
    for one, at the start or after the agent re-indexes.
    """

    def __init__(self, data: str | os.PathLike[str]) -> None:
        self.data = data
        self.done = threading.Event()
        self.warmed = threading.Event()
        """Set once the warm-up after the opening has run (or failed)."""
        self.tools: MemoryTools | None = None
        self.error: str | None = None
        threading.Thread(target=self._open, name="memlens-mcp-open", daemon=True).start()

    def _open(self) -> None:
        try:
            from core.mcp.data import ToolError
            from core.mcp.tools import MemoryTools

            try:
                self.tools = MemoryTools(self.data)
            except ToolError as exc:
                self.error = str(exc)
                print(f"memlens mcp: {exc}", file=sys.stderr, flush=True)
        except Exception as exc:  # a bug: every call says so instead of hanging
            self.error = f"unexpected {type(exc).__name__} opening {self.data}: {exc}"
            print(f"memlens mcp: {self.error}", file=sys.stderr, flush=True)
        finally:
            # the start's imports done: the collector on again, what they built frozen
            # (the data loaded after stays collectable)
            resume_collector()
            self.done.set()
        try:
            if self.tools is not None:
                self._warm(self.tools)
        finally:
            self.warmed.set()

    @staticmethod
    def _warm(tools: MemoryTools) -> None:
        """Load the sessions, the recall side and OpenClaw's search tables before a call needs them.

        A call arriving meanwhile waits for the part it needs (the data's lock); a
        failure here is left for that call to report.
        """
        from core.mcp.data import ToolError
        from core.openclaw.memsearch_chunks import builds_apart

        try:
            tools.data.dataset()
            tools.data.recall()
            with builds_apart():
                tools.data.warm_search()
        except (ToolError, OSError, ValueError):
            pass

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        from core.mcp.data import ToolError

        self.done.wait()
        if self.tools is None:
            raise ToolError(self.error or f"{self.data}: could not be opened")
        from core.openclaw.memsearch_chunks import builds_apart

        try:
            with builds_apart():
                return self.tools.call(name, arguments)
        except ToolError:
            raise
        except Exception as exc:  # a bug in memlens: one clear line, the server lives on
            raise ToolError(
                f"unexpected {type(exc).__name__} in {name}: {exc} (a bug in memlens;"
                " please report it)"
            ) from None


def _answer(result: dict[str, Any]) -> tuple[list[types.TextContent], dict[str, Any]]:
    r"""*result* as the structured answer and as the text a host's model reads.

    The same JSON as the SDK would write for a dict, compact: its ``indent=2`` goes
    through Python's pure encoder (about 1 ms of a warm call) and costs the model a
    third more tokens.

    Half a surrogate pair read from an agent's file (Node writes ``"\ud83d"``, which
    JSON allows) is sent as U+FFFD: the SDK cannot write it, and the call would go
    unanswered.
    """
    text = json.dumps(result)
    if _MAYBE_LONE.search(text) is not None:  # (a pair, as an emoji is escaped, or half one)
        result = _printable_tree(result)
        text = json.dumps(result)
    return [types.TextContent(type="text", text=text)], result


def _printable_tree(value: Any) -> Any:
    """*value* (JSON) with each string's lone surrogates as U+FFFD."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(k): _printable_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_printable_tree(v) for v in value]
    return value


class InputCheck:
    """The SDK's check of a call's arguments against its tool's input schema, for less.

    The SDK's ``jsonschema.validate`` checks the schema itself against its metaschema on
    every call (about 5 ms of a warm ``memory_search`` call's 7 to 13). Here arguments
    that pass :func:`~core.mcp.schemas.argument_error` (stricter than the schemas) pass
    at once; the others go to a validator made once per tool: the same validator class,
    the same errors and the same best match, so the same ``Input validation error: ...``
    answers.
    """

    def __init__(self, schemas: dict[str, dict[str, Any]]) -> None:
        self.schemas = schemas
        self.validators: dict[str, Any] = {}

    def error(self, name: str, arguments: dict[str, Any]) -> str | None:
        """The SDK's message for *arguments* of tool *name*, or None when they pass."""
        schema = self.schemas.get(name)
        if schema is None:  # not a tool: the SDK validates nothing, the call says so
            return None
        if argument_error(name, arguments) is None:  # stricter than the schema: they pass
            return None  # (and jsonschema, 0.1 s to import, is not needed for them)
        validator = self.validators.get(name)
        if validator is None:
            cls = jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)
            validator = self.validators[name] = cls(schema)
        found = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
        return None if found is None else f"Input validation error: {found.message}"


def build_server(data: str | os.PathLike[str]) -> Server[Any, Any]:
    """The SDK server with memlens's tools over *data* (opening starts now)."""
    server: Server[Any, Any] = Server("memlens", version=__version__, instructions=INSTRUCTIONS)
    opener = _Opener(data)
    listed = [
        types.Tool(
            name=t.name,
            title=t.title,
            description=t.description,
            inputSchema=t.input_schema,
            annotations=READ_ONLY,
        )
        for t in TOOLS
    ]

    @server.list_tools()  # type: ignore[no-untyped-call, untyped-decorator]
    async def list_tools() -> list[types.Tool]:
        return listed

    check = InputCheck(INPUT_SCHEMAS)

    @server.call_tool(validate_input=False)  # type: ignore[untyped-decorator]
    async def call_tool(
        name: str, arguments: dict[str, Any]
    ) -> tuple[list[types.TextContent], dict[str, Any]] | types.CallToolResult:
        error = check.error(name, arguments)
        if error is not None:  # as the SDK answers a failed validation
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=error)], isError=True
            )
        return await anyio.to_thread.run_sync(lambda: _answer(opener.call(name, arguments)))

    return server


_MAYBE_LONE = re.compile(r"\\u[dD][89a-fA-F]")
_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"  # a pair: kept
    r"|\\u[dD][89a-fA-F][0-9a-fA-F]{2}"  # a lone surrogate
    r"|\\.",  # any other escape, an escaped backslash too: kept
    re.DOTALL,
)


def _lone_as_fffd(match: re.Match[str]) -> str:
    text = match.group()
    return "\\ufffd" if len(text) == 6 and text[1] == "u" else text


def node_json_line(line: str) -> str:
    r"""*line* (one JSON-RPC message) with each lone surrogate escape as ``\ufffd``.

    A Node host (Claude Code, OpenClaw) writes a string holding half a surrogate pair as
    ``"\ud800"``, which JSON allows; the SDK's parser refuses the whole line and never
    answers the request. As Node's own UTF-8 does, the half becomes U+FFFD.
    """
    if _MAYBE_LONE.search(line) is None:
        return line
    return _ESCAPE.sub(_lone_as_fffd, line)


class _HostLines:
    """Standard input for the SDK's reader: its lines through :func:`node_json_line`."""

    def __init__(self, raw: TextIO) -> None:
        self._raw = raw

    def readline(self) -> str:
        return node_json_line(self._raw.readline())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


async def _serve(data: str | os.PathLike[str]) -> None:
    server = build_server(data)
    stdin = TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")  # as the SDK's
    host = anyio.wrap_file(_HostLines(stdin))  # type: ignore[arg-type]
    async with stdio_server(stdin=host) as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve_stdio(data: str | os.PathLike[str]) -> int:
    """Serve *data* over stdin/stdout until the client hangs up; the exit status."""
    try:
        anyio.run(_serve, data)
    except KeyboardInterrupt:
        return 130
    return 0
