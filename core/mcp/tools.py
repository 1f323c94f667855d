"""The six MCP tools, answered from one data directory with the core code the app uses.

:class:`MemoryTools` takes a tool's name and its JSON arguments and returns the JSON
answer, or raises :class:`~core.mcp.data.ToolError` with a message for the caller. The
arguments are checked here as well as against the schemas (:mod:`core.mcp.schemas`),
so a caller that skips the SDK's validation gets the same clear errors. The clock of
every time-dependent score (the decay of dated notes and archived messages) is
``MEMLENS_NOW`` (ISO time or epoch ms) when set, else now, read at each call.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.io.problems import FormatError
from core.mcp.data import MemoryData, ToolError, as_tool_error
from core.mcp.schemas import argument_error
from core.mcp.search import search_stores
from core.openclaw.memory_home import (
    NO_OPENCLAW_INDEX,
    MemoryCliError,
    parse_now,
    resolve_home,
    workspace_on_disk,
)
from core.openclaw.memsearch_text import truncate_utf16
from core.recall.block import BLOCK_ESTIMATOR
from core.recall.engine import RecallSettings, recall
from core.recall.knowledge_search import DEFAULT_LIMIT, DEFAULT_MIN_SCORE
from core.recall.rankings import SEED, get_ranking
from core.safety.redact import redact
from core.transcript import context_at

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from core.recall.block import RecalledBlock

DEFAULT_CONTEXT_TOKENS = 8000
"""``session_context`` without ``maxTokens``: the newest messages within this many tokens."""
READ_LINES = 120
"""OpenClaw's ``DEFAULT_MEMORY_READ_LINES``."""
READ_MAX_CHARS = 12_000
"""OpenClaw's ``DEFAULT_MEMORY_READ_MAX_CHARS`` (``memoryGetMaxChars`` unset)."""


# -- arguments -------------------------------------------------------------------------


def check_arguments(tool: str, args: Mapping[str, Any] | None) -> dict[str, Any]:
    """*args* checked against *tool*'s schema: a copy, or a ToolError naming the argument."""
    if args is None:
        args = {}
    error = argument_error(tool, args)
    if error is not None:
        raise ToolError(error)
    return dict(args)


# -- what is sent -----------------------------------------------------------------------

TEXT_KEYS = frozenset({"snippet", "text", "content", "block", "context", "excerpt", "arguments"})
"""The fields holding an agent's text, redacted before they are sent (ids, paths and
hashes are left alone: a 64-digit chunk id is not a secret)."""


def _redact_value(value: Any, count: list[int]) -> Any:
    if isinstance(value, str):
        clean = redact(value)
        count[0] += clean != value
        return clean
    if isinstance(value, dict):
        return {k: _redact_value(v, count) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_value(v, count) for v in value]
    return value


def _walk(value: Any, count: list[int]) -> Any:
    if isinstance(value, dict):
        return {
            k: _redact_value(v, count) if k in TEXT_KEYS else _walk(v, count)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_walk(v, count) for v in value]
    return value


def redact_texts(answer: dict[str, Any]) -> dict[str, Any]:
    """*answer* with secrets in its text fields masked (:func:`core.safety.redact.redact`).

    memlens sends an agent's memory to another agent's model: what it sends is
    redacted as what it writes is. ``redacted`` counts the fields changed (absent: none).
    """
    count = [0]
    out: dict[str, Any] = _walk(answer, count)
    if count[0]:
        out["redacted"] = count[0]
    return out


# -- the tools -------------------------------------------------------------------------


class MemoryTools:
    """The tools over one data directory (opened at once: a bad DATA fails here).

    Raises
    ------
    ToolError
        When *data* is missing or holds nothing memlens reads.
    """

    def __init__(
        self, data: str | os.PathLike[str], *, environ: Mapping[str, str] | None = None
    ) -> None:
        self.environ = os.environ if environ is None else environ
        self.data = MemoryData(data, now_ms=self._now_or_none())
        self._tools: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "memory_search": self.memory_search,
            "memory_get": self.memory_get,
            "knowledge_search": self.knowledge_search,
            "recall_preview": self.recall_preview,
            "sessions_list": self.sessions_list,
            "session_context": self.session_context,
        }

    def _now_or_none(self) -> int | None:
        return self.now_ms() if self.environ.get("MEMLENS_NOW", "").strip() else None

    def now_ms(self) -> int:
        """The clock: ``MEMLENS_NOW`` when set, else now."""
        try:
            return parse_now(None, dict(self.environ))
        except MemoryCliError:
            value = self.environ.get("MEMLENS_NOW")
            raise ToolError(
                f"MEMLENS_NOW={value!r}: not an ISO time or epoch milliseconds"
            ) from None

    def call(self, tool: str, args: Mapping[str, Any] | None) -> dict[str, Any]:
        """Answer one call: the tool's JSON, or ToolError with a message for the caller."""
        checked = check_arguments(tool, args)
        try:
            return redact_texts(self._tools[tool](checked))
        except (FormatError, OSError) as exc:
            raise as_tool_error(exc, self.data.path) from None

    # -- memory --------------------------------------------------------------------------

    def memory_search(self, args: dict[str, Any]) -> dict[str, Any]:
        """Every memory store searched, results merged (:mod:`core.mcp.search`)."""
        return search_stores(self.data, args, self.now_ms())

    def memory_get(self, args: dict[str, Any]) -> dict[str, Any]:
        """OpenClaw's ``memory_get``: lines of a memory file in the agent's workspace."""
        rel = args["path"]
        if args.get("corpus") == "wiki":
            return {"status": "not_found", "path": rel, "text": "", "note": "memlens reads no"
                    " compiled wiki"}  # fmt: skip
        if not self.data.discovery.memory_indexes:  # (a transcript or an OpenClaudeCode file)
            raise ToolError(f"{self.data.path}: {NO_OPENCLAW_INDEX}")
        try:
            home = resolve_home(self.data.path, args.get("agent"))
        except MemoryCliError as exc:
            raise ToolError(str(exc)) from None
        workspace = workspace_on_disk(home)
        if workspace is None:
            raise ToolError(f"{self.data.path}: agent {home.agent!r} has no workspace known")
        out = read_memory_file(workspace, rel, args.get("from"), args.get("lines"))
        out["memlens"] = {"workspace": str(workspace), "agent": home.agent}
        return out

    def knowledge_search(self, args: dict[str, Any]) -> dict[str, Any]:
        """Active facts ranked by the agent's IDF scorer, with matched and missing tokens."""
        index = self.data.recall().knowledge
        if index is None:
            raise ToolError(f"{self.data.path}: no knowledge.jsonl found")
        hits = index.search(
            args["query"],
            limit=args.get("maxResults", DEFAULT_LIMIT),
            min_score=args.get("minScore", DEFAULT_MIN_SCORE),
            mode=args.get("mode", "idf"),
        )
        return {
            "query": args["query"],
            "mode": args.get("mode", "idf"),
            "results": [h.to_json() for h in hits],
        }

    def recall_preview(self, args: dict[str, Any]) -> dict[str, Any]:
        """The block the agent would inject for a query, its tokens, its hits and its cuts."""
        opened = self.data.recall()
        if opened.store is None and opened.knowledge is None:
            raise ToolError(f"{self.data.path}: no memory-context store to recall from")
        settings = opened.settings
        session_id = None
        if "session" in args:
            session_id = self.data.session(args["session"]).id
        cross = session_id is None or settings.search.cross_session
        cfg = settings.search.with_(cross_session=cross)
        ranking = args.get("ranking", SEED.name)
        if ranking != SEED.name:
            cfg = get_ranking(ranking).search_config(cfg)  # that ranking's own weights
        settings = RecallSettings(
            settings.hard_cap_tokens,
            args.get("window", settings.window),
            search=cfg,
            limit_from_cap=settings.limit_from_cap,
            ranking=ranking,
        )
        preview = recall(
            args["query"],
            store=opened.store,
            knowledge=opened.knowledge,
            settings=settings,
            session_id=session_id,
            now_ms=self.now_ms(),
        )
        block = preview.block
        hits = preview.search.hits if preview.search else []
        return {
            "query": args["query"],
            "session": session_id,
            "ranking": ranking,
            "skipped": preview.skipped,
            "block": block.text if block else "",
            "blockTokens": block.tokens if block else 0,
            "blockTokensEstimator": BLOCK_ESTIMATOR,
            "hardCap": preview.hard_cap,
            "knowledge": [
                {"id": k.fact.id, "type": k.fact.type, "content": k.fact.content, "score": k.score}
                for k in preview.knowledge
            ],
            "hits": [
                {
                    "id": h.segment.id,
                    "session": h.segment.session_id,
                    "role": h.segment.role,
                    "timestamp": h.segment.timestamp,
                    "vectorScore": h.vector_score,
                    "bm25Raw": h.bm25_raw,
                    "bm25Norm": h.bm25_norm,
                    "decayFactor": h.decay,
                    "score": h.score,
                    "effectiveScore": h.effective,
                    "rank": h.rank,
                }
                for h in hits
            ],
            "cut": _cuts(block),
            "notes": list(opened.notes),
        }

    # -- sessions ------------------------------------------------------------------------

    def sessions_list(self, args: dict[str, Any]) -> dict[str, Any]:
        """The sessions, newest first (by last change), with their figures."""
        data = self.data.dataset()
        rows = sorted(data.summaries, key=lambda s: (-s.modified, s.path))
        if "agent" in args:
            rows = [s for s in rows if s.agent == args["agent"]]
        offset = args.get("offset", 0)
        limit = args.get("limit", len(rows))
        return {
            "total": len(rows),
            "offset": offset,
            "sessions": [s.to_json() for s in rows[offset : offset + limit]],
            "problems": len(data.problems),
        }

    def session_context(self, args: dict[str, Any]) -> dict[str, Any]:
        """The replayed context at an entry, newest messages kept within ``maxTokens``."""
        session = self.data.session(args["session"])
        try:
            items = context_at(session, args.get("entry"))
        except KeyError as exc:
            raise ToolError(f"entry {args.get('entry')!r}: {exc.args[0]}") from None
        budget = args.get("maxTokens", DEFAULT_CONTEXT_TOKENS)
        kept: list[dict[str, Any]] = []
        used = 0
        for index in range(len(items) - 1, -1, -1):
            item = items[index]
            if kept and used + item.tokens > budget:
                break
            used += item.tokens
            message = item.message
            row: dict[str, Any] = {
                "index": index,
                "entry": item.entry.id,
                "type": item.entry.type,
                "role": message.role,
                "tokens": item.tokens,
                "text": message.text(),
            }
            calls = [{"name": b.name, "arguments": b.arguments} for b in message.tool_calls()]
            if calls:
                row["toolCalls"] = calls
            if message.timestamp is not None:
                row["timestamp"] = message.timestamp
            kept.append(row)
        kept.reverse()
        total = sum(i.tokens for i in items)
        return {
            "session": session.id,
            "path": session.path,
            "entry": args.get("entry") or (session.leaf.id if session.leaf else None),
            "messages": len(items),
            "contextTokens": total,
            "maxTokens": budget,
            "keptTokens": used,
            "omitted": len(items) - len(kept),
            "items": kept,
        }


def _cuts(block: RecalledBlock | None) -> list[dict[str, Any]]:
    """What the hard cap left out of the block, and why."""
    if block is None:
        return []
    cut = [{"kind": "detail", "id": d.segment.id, "why": why} for d, why in block.cut_details]
    cut += [
        {"kind": "knowledge", "content": f.content, "why": why} for f, why in block.cut_knowledge
    ]
    return cut


# -- memory_get ------------------------------------------------------------------------


def _is_memory_path(rel: str) -> bool:
    """``isMemoryPath``: MEMORY.md, USER.md, dreams.md or anything under memory/."""
    norm = rel.strip().lstrip("./").replace("\\", "/")
    if not norm:
        return False
    if norm in ("MEMORY.md", "USER.md") or norm.lower() == "dreams.md":
        return True
    return norm.startswith("memory/")


def read_memory_file(
    workspace: Path, rel_path: str, start: int | None, lines: int | None
) -> dict[str, Any]:
    """``readMemoryFile`` + ``buildMemoryReadResult`` of OpenClaw 2026.9.6 (no extra paths)."""
    raw = rel_path.strip()
    if not raw:
        raise ToolError("memory_get: 'path' required")
    target = Path(raw) if os.path.isabs(raw) else workspace / raw
    absolute = Path(os.path.normpath(target))
    rel = os.path.relpath(absolute, workspace).replace("\\", "/")
    inside = rel and not rel.startswith("..") and not os.path.isabs(rel)
    if not inside or not _is_memory_path(rel) or not str(absolute).endswith(".md"):
        return {"path": rel_path, "text": "", "status": "error",
                "code": "MEMORY_PATH_NOT_ALLOWED",
                "error": "path is not an allowed Markdown memory file"}  # fmt: skip
    real = os.path.realpath(absolute)
    if os.path.commonpath([real, os.path.realpath(workspace)]) != os.path.realpath(workspace):
        return {"path": rel, "text": "", "status": "error", "code": "MEMORY_PATH_NOT_ALLOWED",
                "error": "path is not an allowed Markdown memory file"}  # fmt: skip
    if not os.path.isfile(real):
        return {"status": "not_found", "text": "", "path": rel}
    with open(real, "rb") as fh:
        content = fh.read().decode("utf-8", "replace")
    file_lines = content.split("\n")
    if file_lines and file_lines[-1] == "":
        file_lines.pop()
    first = start or 1
    count = lines or READ_LINES
    selected = file_lines[first - 1 : first - 1 + count]
    more_remain = first - 1 + len(selected) < len(file_lines)
    included, chars = 0, 0
    for line in selected:
        nxt = chars + len(line) + (1 if included else 0)
        if included and nxt > READ_MAX_CHARS:
            break
        included, chars = included + 1, nxt
    text = truncate_utf16("\n".join(selected[:included]), READ_MAX_CHARS)
    hard_cut = chars > READ_MAX_CHARS
    next_from = None
    if not hard_cut and (more_remain or included < len(selected)):
        next_from = first + included
    truncated = hard_cut or included < len(selected) or more_remain
    if truncated and (text or hard_cut):
        base = (
            f"[More content available. Use from={next_from} to continue.]"
            if next_from is not None
            else "[More content available. Requested excerpt exceeded the default maxChars budget.]"
        )
        extra = " If you need the full raw line, use read on the source file." if hard_cut else ""
        text = f"{text}\n\n{base[:-1]}{extra}]"
    out: dict[str, Any] = {"status": "ok", "text": text, "path": rel, "from": first,
                           "lines": included}  # fmt: skip
    if truncated:
        out["truncated"] = True
    if next_from is not None:
        out["nextFrom"] = next_from
    return out
