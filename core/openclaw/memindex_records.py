"""Records read from OpenClaw's memory index (:mod:`core.openclaw.memindex`).

Tables, indexed files, chunks, per-source totals, embedding-cache rows, recall
metadata with provenance, and an indexed file compared with the workspace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Staleness = Literal["fresh", "stale", "missing", "new-unindexed", "unknown"]
EmbeddingState = Literal["ok", "empty", "bad-length", "non-finite", "bad-json", "none"]


@dataclass(frozen=True, slots=True)
class IndexLayout:
    """Which tables of the index exist (None for a missing one)."""

    name: str
    """``legacy`` or ``canonical``."""
    meta: str | None
    files: str | None
    chunks: str | None
    embedding_cache: str | None
    fts: str | None
    vec: str | None
    missing: tuple[str, ...]
    """Names of the expected tables that are absent."""
    paths_fts: str | None = None
    recall_metadata: str | None = None
    provenance: str | None = None


@dataclass(frozen=True, slots=True)
class IndexFile:
    """One indexed source file (a ``memory_index_sources`` / ``files`` row).

    ``mtime`` is in epoch milliseconds (OpenClaw stores a REAL there since v23;
    it is rounded down here, :attr:`mtime_ms` keeps the fraction).
    """

    path: str
    source: str
    hash: str | None
    mtime: int | None
    size: int | None
    mtime_ms: float | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class IndexChunk:
    """One chunk of an indexed file; ``embedding`` only when asked for."""

    id: str
    path: str
    source: str
    start_line: int | None
    end_line: int | None
    hash: str | None
    model: str | None
    text: str
    updated_at: int | None
    embedding: npt.NDArray[np.float64] | None = None
    embedding_state: EmbeddingState = "none"
    """``ok``, ``empty`` (FTS-only), ``bad-length``, ``non-finite``, ``bad-json``;
    ``none`` when the embedding was not read."""


@dataclass(frozen=True, slots=True)
class SourceSummary:
    """Totals for one source (``memory`` or ``sessions``)."""

    source: str
    files: int
    chunks: int
    bytes: int
    """Sum of the indexed files' sizes."""
    models: tuple[str, ...]
    """Embedding models of the chunks, sorted."""
    last_updated: int | None
    """Newest chunk ``updated_at`` (epoch ms), if recorded."""


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One ``memory_embedding_cache`` row (the vector itself is not kept)."""

    provider: str
    model: str
    provider_key: str
    hash: str
    dims: int | None
    bytes: int
    """Stored size of the embedding."""
    updated_at: int | None
    state: EmbeddingState


@dataclass(frozen=True, slots=True)
class RecallInfo:
    """Recall metadata and provenance of one chunk (both tables are optional)."""

    chunk_id: str
    importance: int | None = None
    triggers: str | None = None
    project_key: str | None = None
    origin_class: str | None = None
    session_kind: str | None = None
    observed_at: int | None = None
    supersedes_key: str | None = None

    def provenance(self) -> dict[str, Any] | None:
        """OpenClaw's ``provenance`` object (``decodeChunkProvenance``), or None."""
        if (
            self.origin_class not in _ORIGIN_CLASSES
            or self.session_kind not in _SESSION_KINDS
            or self.observed_at is None
        ):
            return None
        out: dict[str, Any] = {
            "originClass": self.origin_class,
            "sessionKind": self.session_kind,
            "observedAt": self.observed_at,
        }
        if self.supersedes_key and self.supersedes_key.strip():
            out["supersedesKey"] = self.supersedes_key
        return out

    def attached(self) -> Attached:
        """What ``attachRecallMetadata`` sets on a hit of this chunk (see :data:`Attached`)."""
        trig, proj = self.triggers, self.project_key
        return (
            self.importance,
            trig.strip() if trig and trig.strip() else None,
            proj.strip() if proj and proj.strip() else None,
            self.provenance(),
        )


Attached = tuple[int | None, str | None, str | None, dict[str, Any] | None]
"""A hit's importance, triggers and project key (stripped; None: left as they are) and
provenance (None: left), from its chunk's recall row (:meth:`RecallInfo.attached`)."""

_ORIGIN_CLASSES = frozenset({"owner", "agent", "untrusted", "system"})
_SESSION_KINDS = frozenset({"interactive", "cron", "heartbeat", "subagent", "unknown"})


@dataclass(frozen=True, slots=True)
class FileState:
    """An indexed (or indexable) file compared with the workspace."""

    path: str
    source: str
    state: Staleness
    """``fresh`` (same content hash), ``stale`` (changed since indexing),
    ``missing`` (gone from the workspace), ``new-unindexed`` (a memory file the
    index does not have yet), ``unknown`` (no workspace, or a session source)."""
    indexed: IndexFile | None
    disk_size: int | None = None
    disk_mtime_ms: float | None = None
    disk_hash: str | None = None
