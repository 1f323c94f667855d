"""``memory_search`` over every memory store in a data directory, every score explained.

Three stores, each ranked by its own agent's rules, with the code the CLI and the app use:

* **openclaw-index**: OpenClaw's memory index, searched as OpenClaw's ``memory_search``
  tool searches it (:func:`core.openclaw.memory_home.run_search`, proven against
  ``openclaw memory search``), then presented as the tool presents it: ``corpus``, the
  annotation comments (``<!-- importance: ... -->``) stripped from the snippet and, with
  ``memory.citations`` ``auto`` (a caller without a session key is a direct chat) or
  ``on``, a ``citation`` and the ``Source: path#Lx-Ly`` line appended to the snippet
  (``extensions/memory-core/src/tools.citations.ts``);
* **memory-context**: the warm store's hybrid search (:func:`core.recall.hybrid.search`);
* **openclaudecode**: the design's FTS5 search of ``memory_fts``.

The streams are merged as OpenClaw merges its corpora (``mergeRankedMemorySearchToolStreams``):
the higher head score first, each stream keeping its own order, then cut to ``maxResults``;
with one store the answer is that store's, unchanged.
"""

from __future__ import annotations

import math
import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import regex

from core.io.problems import FormatError
from core.mcp.data import ToolError, as_tool_error
from core.openclaw.memindex_identity import unavailable_answer
from core.openclaw.memory_home import MemoryCliError, check_identity, paused_message, run_search
from core.openclaw.memsearch_keyword import SNIPPET_MAX_CHARS
from core.openclaw.memsearch_text import truncate_utf16
from core.recall.hybrid import search

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.mcp.data import MemoryData
    from core.openclaw.memindex_identity import IndexIdentity
    from core.openclaw.memory_home import MemoryHome
    from core.openclaw.memsearch_embed import SearchSettings

DEFAULT_MAX_RESULTS = 10
"""Without OpenClaw's index (whose config says how many), as the OpenClaudeCode design."""
_ANNOTATION = regex.compile(r"<!--\s*(trigger|importance|project)\s*:", regex.I)


def strip_annotations(text: str) -> str:
    """``stripMemoryAnnotationCarriers``: drop ``<!-- trigger|importance|project: ... -->``.

    Only a comment closed on its own line is a carrier; spaces left at a line's end go.
    """
    parts: list[str] = []
    last = 0
    pos = 0
    while (m := _ANNOTATION.search(text, pos)) is not None:
        close = text.find("-->", m.end())
        if close < 0:
            break
        newline = regex.search(r"[\r\n]", text[m.end() : close])
        if newline is not None:
            pos = m.end()
            continue
        parts.append(text[last : m.start()])
        last = pos = close + 3
    if last == 0:
        return text
    parts.append(text[last:])
    return regex.sub(r"[ \t]+(?=[\r\n\u2028\u2029]|$)", "", "".join(parts))


def citation(hit: dict[str, Any]) -> str:
    """``formatCitation``: ``path#L3`` or ``path#L3-L9``."""
    start, end = hit["startLine"], hit["endLine"]
    return f"{hit['path']}#L{start}" if start == end else f"{hit['path']}#L{start}-L{end}"


def _provider(settings: SearchSettings, meta: dict[str, Any]) -> str:
    """The tool's top-level ``provider`` (``resolveStatusProviderInfo``).

    The embedding provider's id; ``none`` when keyword-only by config (or, without a
    config, by the index's own provider), when OpenClaw also leaves ``model`` out.
    OpenClaw's ``fallback`` is there only while a fallback provider is active, which
    memlens never activates, so memlens's answer has none.
    """
    provider = settings.provider if settings.from_config else meta.get("provider")
    if not isinstance(provider, str) or settings.keyword_only:
        return "none"
    return provider


def merge_streams(streams: Sequence[list[dict[str, Any]]], limit: int) -> list[dict[str, Any]]:
    """The higher head score first, ties to the earlier stream; each stream keeps its order."""
    heads = [0] * len(streams)
    out: list[dict[str, Any]] = []
    while len(out) < limit:
        best = -1
        for i, stream in enumerate(streams):
            if heads[i] < len(stream) and (
                best < 0 or stream[heads[i]]["score"] > streams[best][heads[best]]["score"]
            ):
                best = i
        if best < 0:
            break
        out.append(streams[best][heads[best]])
        heads[best] += 1
    return out


FILTERED_BY = {
    "session": "the memory-context store and OpenClaudeCode",
    "channel": "OpenClaudeCode",
}
"""The stores each of ``memory_search``'s session and channel filters applies to."""


class _Search:
    """One ``memory_search`` call: its arguments, and what each store answered."""

    def __init__(self, data: MemoryData, args: dict[str, Any], now_ms: int) -> None:
        self.data, self.now_ms = data, now_ms
        self.query: str = args["query"]
        self.max_results: int | None = args.get("maxResults")
        self.min_score: float | None = args.get("minScore")
        self.corpus: str | None = args.get("corpus")
        self.store: str | None = args.get("store")
        self.session: str | None = args.get("session")
        self.channel: str | None = args.get("channel")
        self.agent: str | None = args.get("agent")
        self.stores: list[dict[str, Any]] = []
        self.top: dict[str, Any] = {}
        self.default_limit = DEFAULT_MAX_RESULTS

    def wants(self, store: str) -> bool:
        return self.store is None or self.store == store

    # -- OpenClaw's memory index --------------------------------------------------------

    def openclaw(self) -> list[dict[str, Any]] | None:
        found = self.data.discovery
        if not found.memory_indexes and self.agent is None:
            return None
        return self.data.with_lock(self._openclaw)

    def _openclaw(self) -> list[dict[str, Any]] | None:
        try:
            opened = self.data.openclaw(self.agent)
        except MemoryCliError as exc:
            if self.agent is not None or self.store == "openclaw-index":
                raise ToolError(str(exc)) from None
            return None
        home, settings = opened.home, opened.settings
        self.default_limit = settings.max_results
        if self.session is not None or self.channel is not None:
            what = "session" if self.session is not None else "channel"
            self._note(
                "openclaw-index", home,
                f"not searched: its chunks (memory files, indexed transcripts) name no {what}"
                f" to filter by; the {what} filter applies to {FILTERED_BY[what]}",
            )  # fmt: skip
            return []
        sources = list(settings.sources)
        if self.corpus == "wiki":
            self._note("openclaw-index", home, "memlens reads no compiled wiki: no results")
            return []
        if self.corpus == "sessions":
            if "sessions" not in sources:
                self._note(
                    "openclaw-index", home,
                    "session transcript search is not enabled for this agent"
                    " (memory.search.sources has no \"sessions\")",
                )  # fmt: skip
                return []
            sources = ["sessions"]
        elif self.corpus == "memory":
            sources = ["memory"]
        identity = check_identity(home, opened.index, settings)
        if identity.paused:
            return self._paused(home, opened.settings, identity)
        settings = replace(settings, sources=tuple(sources))
        result = run_search(
            home,
            self.query,
            now_ms=self.now_ms,
            max_results=self.max_results,
            min_score=self.min_score,
            settings=settings,
            index=opened.index,
            identity=identity,
            rank_all=False,  # the answer shows the results only
        )
        include = opened.citations != "off"
        hits = []
        for cand in result.results:
            if cand.hit.source not in sources:
                continue
            hit = cand.to_json(result.mode)
            hit["corpus"] = hit["source"]
            hit["snippet"] = strip_annotations(hit["snippet"])
            if include:
                hit["citation"] = citation(hit)
                hit["snippet"] = f"{hit['snippet'].rstrip()}\n\nSource: {hit['citation']}"
            hit["memlens"] = {"store": "openclaw-index", "agent": home.agent, **hit["memlens"]}
            hits.append(hit)
        provider = _provider(settings, opened.index.meta_dict())
        self.top.update(
            {
                "provider": provider,
                **({} if provider == "none" else {"model": result.model}),
                "citations": opened.citations,
                "mode": result.mode,
            }
        )
        self.stores.append(
            {
                "store": "openclaw-index",
                "agent": home.agent,
                "path": str(home.index),
                "mode": result.mode,
                "reason": result.reason,
                **({} if identity.valid else {"indexIdentity": identity.to_json()}),
                "results": len(hits),
                "problems": [p.to_json() for p in result.problems],
            }
        )
        return hits

    def _paused(
        self, home: MemoryHome, settings: SearchSettings, identity: IndexIdentity
    ) -> list[dict[str, Any]]:
        """OpenClaw's tool answer for an index it would not search: nothing, and why."""
        answer = unavailable_answer(identity, settings, home.agent)
        answer.pop("results")
        self.top.update(answer)
        self.stores.append(
            {
                "store": "openclaw-index",
                "agent": home.agent,
                "path": str(home.index),
                "mode": "paused",
                "reason": paused_message(identity),
                "indexIdentity": identity.to_json(),
                "results": 0,
            }
        )
        return []

    def _note(self, store: str, home: MemoryHome, note: str) -> None:
        self.stores.append(
            {"store": store, "agent": home.agent, "path": str(home.index), "note": note}
        )

    # -- the memory-context warm store --------------------------------------------------

    def memory_context(self) -> list[dict[str, Any]] | None:
        if self.data.discovery.memory_context is None:
            return None
        opened = self.data.recall()
        store = opened.store
        if store is None:
            return None
        if self.channel is not None:
            self.stores.append(
                {
                    "store": "memory-context",
                    "path": os.fspath(store.folder / "segments.jsonl"),
                    "note": "not searched: archived messages name no channel to filter by;"
                    f" the channel filter applies to {FILTERED_BY['channel']}",
                }
            )
            return []
        cfg = opened.settings.search
        changes: dict[str, Any] = {"cross_session": self.session is None}
        if self.min_score is not None:
            changes["min_score"] = self.min_score
        if self.max_results is not None:
            changes["limit"] = self.max_results
        cfg = cfg.with_(**changes)
        known = sorted({seg.session_id for seg in store.live()}) if self.session else []
        session_id = self._segment_session(known) if self.session else None
        result = search(store, self.query, cfg, session_id=session_id, now_ms=self.now_ms)
        path = os.fspath(store.folder / "segments.jsonl")
        hits = [
            {
                "path": path,
                "session": h.segment.session_id,
                "entryIds": [h.segment.id],
                "score": h.effective,
                "snippet": truncate_utf16(h.segment.content, SNIPPET_MAX_CHARS),
                "source": "sessions",
                "corpus": "sessions",
                "memlens": {
                    "store": "memory-context",
                    "role": h.segment.role,
                    "timestamp": h.segment.timestamp,
                    "vectorScore": h.vector_score,
                    "bm25Raw": h.bm25_raw,
                    "bm25Norm": h.bm25_norm,
                    "hybridScore": h.score,
                    "decayFactor": h.decay,
                    "effectiveScore": h.effective,
                    "vectorRank": h.vector_rank,
                    "bm25Rank": h.bm25_rank,
                    "rank": h.rank,
                    "weights": {"vector": cfg.vector_weight, "bm25": cfg.bm25_weight},
                },
            }
            for h in result.hits
        ]
        self.stores.append(
            {
                "store": "memory-context",
                "path": path,
                "embedder": store.embedder.name,
                "minScore": cfg.min_score,
                "limit": cfg.limit,
                "candidates": len(result.candidates),
                "results": len(hits),
                "notes": [*opened.notes, *result.notes],
            }
        )
        return hits

    def _segment_session(self, known: Sequence[str]) -> str:
        ref = self.session or ""
        if ref in known:
            return ref
        starts = [s for s in known if s.startswith(ref)]
        if len(starts) == 1:
            return starts[0]
        return self.data.session(ref).id

    # -- the answer ---------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        """Every store's results merged.

        A store that fails (a damaged database) is listed with its error beside the
        others' answers, unless it was asked for by name or no other store answered.
        """
        streams: list[list[dict[str, Any]]] = []
        failed: list[ToolError] = []
        for name, fn in (
            ("openclaw-index", self.openclaw),
            ("memory-context", self.memory_context),
            ("openclaudecode", self.openclaudecode),
        ):
            if self.wants(name):
                try:
                    hits = fn()
                except (FormatError, OSError) as exc:  # damaged data, not a bad argument
                    error = as_tool_error(exc, self.data.path)
                    if self.store == name:
                        raise error from None
                    failed.append(error)
                    self.stores.append({"store": name, "error": str(error), "results": 0})
                    continue
                if hits is not None:
                    streams.append(hits)
        if failed and len(failed) == len(self.stores):
            raise failed[0] from None
        if not self.stores:
            what = f"{self.store} store" if self.store else "memory store"
            raise ToolError(
                f"{self.data.path}: no {what} found (memlens searches an OpenClaw memory"
                " index, a memory-context segments.jsonl and an OpenClaudeCode memory_fts)"
            )
        limit = self.max_results or self.default_limit
        results = streams[0][:limit] if len(streams) == 1 else merge_streams(streams, limit)
        return {
            "results": results,
            **self.top,
            "query": self.query,
            "now": self.now_ms,
            "stores": self.stores,
        }

    # -- OpenClaudeCode's memory_fts ---------------------------------------------------

    def openclaudecode(self) -> list[dict[str, Any]] | None:
        key = self._session_key() if self.session else None
        return self.data.with_lock(lambda: self._openclaudecode(key))

    def _openclaudecode(self, key: str | None) -> list[dict[str, Any]] | None:
        fts = self.data.openclaudecode()
        if fts is None:
            return None
        found = fts.search(
            self.query,
            max_results=self.max_results or DEFAULT_MAX_RESULTS,
            min_score=0.0 if self.min_score is None else self.min_score,
            session_key=key,
            channel=self.channel,
        )
        hits = [
            {
                "path": found.database,
                "session": h.session_key,
                "entryIds": [h.id],
                "score": h.score,
                "snippet": truncate_utf16(h.text, SNIPPET_MAX_CHARS),
                "source": h.source,
                "corpus": "sessions" if h.source == "session" else "memory",
                "memlens": {
                    "store": "openclaudecode",
                    "channel": h.channel,
                    "timestamp": h.timestamp,
                    "bm25Rank": h.rank if math.isfinite(h.rank) else None,
                    "excerpt": h.snippet,
                },
            }
            for h in found.hits
        ]
        self.stores.append(
            {
                "store": "openclaudecode",
                "path": found.database,
                "match": found.match,
                "reason": found.reason,
                "results": len(hits),
                "scoring": "FTS5 bm25 rank -> OpenClaw's bm25RankToScore (1 / (1 + rank) for"
                " rank >= 0, -rank / (1 - rank) below)",
            }
        )
        return hits

    def _session_key(self) -> str:
        """The ``{channel}:{userId}`` key of ``session`` (a key as given, else its session's)."""
        ref = self.session or ""
        if ":" in ref:
            return ref
        session = self.data.session(ref)
        summaries = self.data.dataset().summaries
        key = next((s.key for s in summaries if s.path == session.path), None)
        return key or ref


def search_stores(data: MemoryData, args: dict[str, Any], now_ms: int) -> dict[str, Any]:
    """The ``memory_search`` tool (arguments already checked against its schema)."""
    if not str(args.get("query", "")).strip():
        raise ToolError("query must not be blank")
    return _Search(data, args, now_ms).run()
