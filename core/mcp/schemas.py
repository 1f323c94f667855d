"""The MCP tools memlens offers: names, descriptions and JSON Schemas of their arguments.

``memory_search`` and ``memory_get`` take OpenClaw's own arguments (OpenClaw 2026.9.6,
``extensions/memory-core/src/memory-tool-contract.ts``: ``query``, ``maxResults``,
``minScore``, ``corpus``; ``path``, ``from``, ``lines``, ``corpus``), so a prompt written
for OpenClaw's tools works here; memlens adds filters of its own (``store``, ``session``,
``channel``, ``agent``). Every schema refuses unknown arguments, as OpenClaw's do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

RANKING_NAMES = ("seed", "all", "rrf", "stem", "stem-all", "context")
"""``core.recall.rankings.RANKINGS``' names, spelled out: the server lists its tools
before it imports the recall engine (a test keeps the two equal)."""

STORES = ("openclaw-index", "memory-context", "openclaudecode")
"""The memory stores ``memory_search`` reads: OpenClaw's memory index (per agent), the
memory-context warm store (``segments.jsonl``) and an OpenClaudeCode ``memory_fts``."""
SEARCH_CORPORA = ("memory", "wiki", "all", "sessions")
GET_CORPORA = ("memory", "wiki", "all")
KNOWLEDGE_MODES = ("idf", "adaptive")


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool as ``tools/list`` shows it."""

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


_AGENT = {"type": "string", "description": "OpenClaw agent id (default: main, or the only one)"}
_SESSION = {
    "type": "string",
    "description": "a session id, an id prefix, a session key or a transcript path"
    " (sessions_list shows them)",
}

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "memory_search",
        "Memory Search",
        "Search every memory store in the data directory: OpenClaw's memory index (hybrid"
        " vector + BM25, as OpenClaw's own memory_search ranks it), the memory-context warm"
        " store (archived messages) and an OpenClaudeCode memory_fts. Each result names its"
        " store and source, its path and line range or its session and entry ids, its score"
        " and every component of the score (under `memlens`). Read-only.",
        _schema(
            {
                "query": {"type": "string", "minLength": 1},
                "maxResults": {"type": "integer", "minimum": 1},
                "minScore": {"type": "number"},
                "corpus": {
                    "type": "string",
                    "enum": list(SEARCH_CORPORA),
                    "description": "OpenClaw's corpus: memory files, indexed session"
                    " transcripts, or both (all); memlens reads no compiled wiki",
                },
                "store": {
                    "type": "string",
                    "enum": list(STORES),
                    "description": "search this store only (default: every store found)",
                },
                "session": {
                    **_SESSION,
                    "description": "only memory from this session (memory-context: its"
                    " segments; OpenClaudeCode: its session key; OpenClaw's index, whose"
                    " chunks name no session, is then not searched)",
                },
                "channel": {
                    "type": "string",
                    "description": "OpenClaudeCode: only session keys of this channel"
                    " (telegram, discord, ...); the other stores, which name no channel,"
                    " are then not searched",
                },
                "agent": _AGENT,
            },
            ["query"],
        ),
    ),
    ToolSpec(
        "memory_get",
        "Memory Get",
        "Read lines of an OpenClaw memory file (MEMORY.md, USER.md, memory/**/*.md in the"
        " agent's workspace) as OpenClaw's memory_get does: 120 lines from `from` by"
        " default, within 12,000 characters, with a continuation notice when more"
        " remains. Read-only.",
        _schema(
            {
                "path": {"type": "string", "minLength": 1},
                "from": {"type": "integer", "minimum": 1},
                "lines": {"type": "integer", "minimum": 1},
                "corpus": {"type": "string", "enum": list(GET_CORPORA)},
                "agent": _AGENT,
            },
            ["path"],
        ),
    ),
    ToolSpec(
        "knowledge_search",
        "Knowledge Search",
        "Search the active facts of the knowledge log (knowledge.jsonl) with the agent's"
        " IDF scorer: each hit with its score, the query tokens it matched and missed and"
        " their IDF weights.",
        _schema(
            {
                "query": {"type": "string", "minLength": 1},
                "maxResults": {"type": "integer", "minimum": 1},
                "minScore": {"type": "number"},
                "mode": {"type": "string", "enum": list(KNOWLEDGE_MODES)},
            },
            ["query"],
        ),
    ),
    ToolSpec(
        "recall_preview",
        "Recall Preview",
        "The exact block the agent would inject into its next model call for a query"
        " (knowledge facts and archived messages within the hard cap), with its token"
        " count, every hit's score components and what was cut and why.",
        _schema(
            {
                "query": {"type": "string", "minLength": 1},
                "session": {
                    **_SESSION,
                    "description": "recall as this session would (default: every session)",
                },
                "window": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "context window in tokens (default: the agent's)",
                },
                "ranking": {
                    "type": "string",
                    "enum": list(RANKING_NAMES),
                    "description": "seed (default) is the agent's own ranking; the others are"
                    " memlens's, measured by its recall lab (what the agent would inject"
                    " if it ranked that way)",
                },
            },
            ["query"],
        ),
    ),
    ToolSpec(
        "sessions_list",
        "Sessions",
        "The sessions in the data directory, newest first: id, key, agent, storage,"
        " messages, compactions and context tokens.",
        _schema(
            {
                "agent": {"type": "string", "description": "only this agent's sessions"},
                "limit": {"type": "integer", "minimum": 1},
                "offset": {"type": "integer", "minimum": 0},
            },
            [],
        ),
    ),
    ToolSpec(
        "session_context",
        "Session Context",
        "What the model saw at an entry of a session: the replayed context (summaries of"
        " compactions, then the messages after them), newest messages kept within"
        " `maxTokens`, each with its role, entry id, tokens and text.",
        _schema(
            {
                "session": _SESSION,
                "entry": {
                    "type": "string",
                    "description": "an entry id or #N (default: the session's leaf)",
                },
                "maxTokens": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "keep the newest messages within this many tokens"
                    " (the newest one always, whatever its size; default 8000)",
                },
            },
            ["session"],
        ),
    ),
)
TOOL_NAMES = tuple(t.name for t in TOOLS)


INPUT_SCHEMAS = {t.name: t.input_schema for t in TOOLS}
"""Each tool's input schema, by name."""


def argument_error(tool: str, args: object) -> str | None:
    """What is wrong with *args* for *tool* (one clear line naming the argument), or None.

    Stricter than JSON Schema where it differs (a whole number must be an int, a number
    finite): arguments it passes pass the schema too (a test checks it against
    ``jsonschema``), so the server needs ``jsonschema`` only for arguments it refuses.
    """
    if tool not in INPUT_SCHEMAS:
        return f"unknown tool {tool!r}; the tools are: {', '.join(INPUT_SCHEMAS)}"
    if not isinstance(args, dict):
        return f"{tool}: the arguments must be a JSON object"
    schema = INPUT_SCHEMAS[tool]
    props: dict[str, Any] = schema["properties"]
    unknown = sorted(set(args) - set(props))
    if unknown:
        return f"{tool}: unknown argument {unknown[0]!r}; it takes: {', '.join(props)}"
    for name in schema["required"]:
        if name not in args:
            return f"{tool}: missing required argument {name!r}"
    for name, value in args.items():
        error = _value_error(f"{tool}: {name!r}", value, props[name])
        if error is not None:
            return error
    return None


def _value_error(where: str, value: Any, prop: dict[str, Any]) -> str | None:
    kind = prop.get("type")
    if kind == "string":
        if not isinstance(value, str):
            return f"{where} must be a string"
        if len(value) < prop.get("minLength", 0):
            return f"{where} must not be empty"
        if "enum" in prop and value not in prop["enum"]:
            return f"{where} must be one of: {', '.join(prop['enum'])}"
    elif kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{where} must be a whole number"
        if "minimum" in prop and value < prop["minimum"]:
            return f"{where} must be at least {prop['minimum']}"
    elif kind == "number":
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or not math.isfinite(value):
            return f"{where} must be a finite number"
    return None
