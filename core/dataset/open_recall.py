"""Open the recall side of a loaded data directory: warm store and knowledge index.

The app runs :func:`open_recall` in a worker after :func:`core.dataset.load.load_dataset`;
it opens the memory-context store, embeds segments that have no vector yet (into
memlens's own cache, never the agent's vectors.bin) and indexes the knowledge log.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.embed import load_embedder
from core.io.jobs import check
from core.openclaw.config import MemoryContextConfig
from core.recall.engine import RecallSettings
from core.recall.hybrid import SearchConfig
from core.recall.knowledge_search import KnowledgeIndex
from core.recall.warm_store import StoreSettings, WarmStore

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from core.dataset.load import DataSet
    from core.io.jobs import Progress


@dataclass(slots=True)
class RecallData:
    """What a recall preview needs, opened from one data directory."""

    store: WarmStore | None
    knowledge: KnowledgeIndex | None
    settings: RecallSettings
    notes: list[str] = field(default_factory=list)
    """Fallbacks and other things the user should know (shown in the status bar)."""


def recall_settings(mc: MemoryContextConfig, window: int) -> RecallSettings:
    """The agent's recall knobs from its memoryContext config."""
    search = SearchConfig(min_score=mc.auto_recall_min_score, cross_session=mc.cross_session)
    return RecallSettings(hard_cap_tokens=mc.hard_cap_tokens, window=window, search=search)


def open_recall(
    data: DataSet,
    *,
    cache_dir: Path | None,
    embedder: str | None = None,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    now_ms: int | None = None,
) -> RecallData:
    """Open *data*'s memory-context store and knowledge log for recall.

    Parameters
    ----------
    embedder
        ``hash`` or ``transformer``; None uses the agent's ``embeddingModel``.
    cache_dir
        Where memlens keeps its own vectors (None: keep them in memory only).
    """
    mc = data.config.memory_context if data.config else MemoryContextConfig()
    window = data.config.context_window_for(None)[0] if data.config else 200_000
    result = RecallData(None, None, recall_settings(mc, window))
    folder = data.discovery.memory_context
    if folder is None:
        result.notes.append("no memory-context store: recall shows nothing")
        return result
    name = embedder or mc.embedding_model
    model, note = load_embedder(name if name in ("hash", "transformer") else "hash")
    if note:
        result.notes.append(note)
    if (folder / "segments.jsonl").exists():
        settings = StoreSettings(
            max_segments=mc.max_segments,
            eviction_days=float(mc.eviction_days),
            redaction=mc.redaction,
            agent_embedder=mc.embedding_model,
        )
        store = WarmStore.open(
            folder, model, settings, cache_dir=cache_dir, now_ms=now_ms,
            progress=progress, cancelled=cancelled,
        )  # fmt: skip
        check(cancelled, "opening the store")
        store.embed_missing(progress=progress, cancelled=cancelled, save=cache_dir is not None)
        result.store = store
    if data.knowledge is not None:
        result.knowledge = KnowledgeIndex(data.knowledge)
    return result
