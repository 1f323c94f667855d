"""The warm store: segments.jsonl + vectors, indexed for hybrid search.

Loading follows the agent (validation, dedup, ``evictionDays``,
``maxSegments``). Vectors come from the agent's ``vectors.bin`` when the
embedder is the one the agent uses; otherwise from memlens's own cache (same
VMEM format, in the user cache folder). Segments without a vector are embedded
by :meth:`WarmStore.embed_missing` (in a worker, with progress). memlens never
rewrites the agent's ``vectors.bin``.
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from core.io.fsutil import atomic_write
from core.io.jobs import CancelCheck, Progress, check
from core.io.jsonio import gc_paused
from core.io.problems import FormatError, Problem
from core.recall.bm25 import BM25Index
from core.recall.tokenize import tokenize
from core.recall.vector_index import VectorIndex
from core.store.segments import (
    DAY_MS,
    Segment,
    SegmentLoad,
    append_segments,
    dedup_key,
    load_segments,
    make_segment,
)
from core.store.vectors import VectorFile, encode_vectors, load_vectors

if TYPE_CHECKING:
    import os
    from collections.abc import Sequence

    from core.embed.base import Embedder


@dataclass(frozen=True, slots=True)
class StoreSettings:
    """The memoryContext settings the warm store obeys."""

    max_segments: int = 20000
    eviction_days: float = 90
    redaction: bool = True
    agent_embedder: str = "hash"
    """The embedder whose vectors the agent keeps in vectors.bin."""


@dataclass(slots=True)
class StoreStats:
    """What opening the store found."""

    load: SegmentLoad | None = None
    vectors_from: str = ""
    """``vectors.bin``, ``cache`` or ``none``."""
    vectors_loaded: int = 0
    missing_vectors: int = 0
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0


def cache_path(cache_dir: Path, folder: Path, embedder: str) -> Path:
    """Path of the vector cache memlens keeps for a store and an embedder."""
    key = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]
    return cache_dir / f"vectors-{embedder}-{key}.bin"


class WarmStore:
    """Segments in memory, a BM25 index and a vector index over the same slots."""

    def __init__(
        self,
        folder: Path,
        embedder: Embedder,
        settings: StoreSettings | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        self.folder = folder
        self.embedder = embedder
        self.settings = settings or StoreSettings()
        self.cache_dir = cache_dir
        self.segments: list[Segment | None] = []
        self.slot_of: dict[str, int] = {}
        self.bm25 = BM25Index()
        self.vectors = VectorIndex(embedder.dim, capacity=1024)
        self.stats = StoreStats()
        self._keys: dict[str, int] = {}
        self._session_slots: dict[str, list[int]] = {}
        self._ts = np.zeros(1024, dtype=np.int64)  # timestamp of each slot
        self._alive = np.zeros(1024, dtype=bool)  # slot holds a live segment
        self._masks: dict[str, np.ndarray] = {}  # session_mask's, kept while no slot is added
        self.lock = threading.RLock()
        """Held while the indexes change; searches take it too."""

    # -- paths ------------------------------------------------------------------
    @property
    def segments_path(self) -> Path:
        """The agent's segments.jsonl."""
        return self.folder / "segments.jsonl"

    @property
    def vectors_path(self) -> Path:
        """The agent's vectors.bin."""
        return self.folder / "vectors.bin"

    def _uses_agent_vectors(self) -> bool:
        return self.embedder.name == self.settings.agent_embedder

    # -- opening -----------------------------------------------------------------
    @classmethod
    def open(
        cls,
        folder: str | os.PathLike[str],
        embedder: Embedder,
        settings: StoreSettings | None = None,
        *,
        cache_dir: Path | None = None,
        now_ms: int | None = None,
        progress: Progress | None = None,
        cancelled: CancelCheck | None = None,
    ) -> WarmStore:
        """Load segments and cached vectors and build both indexes (no embedding)."""
        started = time.perf_counter()
        store = cls(Path(folder), embedder, settings, cache_dir)
        s = store.settings
        if progress:
            progress(0, 3, "segments.jsonl")
        load = load_segments(
            store.segments_path,
            max_segments=s.max_segments,
            eviction_days=s.eviction_days,
            now_ms=now_ms,
        )
        store.stats.load = load
        store.stats.problems.extend(load.problems)
        check(cancelled, "opening the store")
        if progress:
            progress(1, 3, "vectors")
        cached = store._read_vectors()
        check(cancelled, "opening the store")
        if progress:
            progress(2, 3, "indexing")
        with gc_paused():
            store._index_all(load.segments, cached)
        store.stats.seconds = time.perf_counter() - started
        if progress:
            progress(3, 3, "ready")
        return store

    def _read_vectors(self) -> VectorFile | None:
        if self._uses_agent_vectors():
            path, source = self.vectors_path, "vectors.bin"
        elif self.cache_dir is not None:
            path, source = cache_path(self.cache_dir, self.folder, self.embedder.name), "cache"
        else:
            self.stats.vectors_from = "none"
            return None
        if not path.exists():
            self.stats.vectors_from = "none"
            return None
        try:
            found = load_vectors(path)
        except FormatError as exc:
            self.stats.problems.append(Problem(exc.file, exc.line, exc.detail))
            self.stats.vectors_from = "none"
            return None
        self.stats.problems.extend(found.problems)
        if found.dim != self.embedder.dim:
            self.stats.problems.append(
                Problem(
                    str(path),
                    0,
                    f"vectors have {found.dim} dims, the {self.embedder.name} embedder "
                    f"{self.embedder.dim}: they are not used",
                    "warning",
                )
            )
            self.stats.vectors_from = "none"
            return None
        self.stats.vectors_from = source
        return found

    def _index_all(self, segments: list[Segment], cached: VectorFile | None) -> None:
        n = len(segments)
        self.vectors = VectorIndex(self.embedder.dim, capacity=max(1024, n + n // 4))
        added = self.bm25.add_many([tokenize(seg.content) for seg in segments])
        for slot, seg in zip(added, segments, strict=True):
            self._register(slot, seg)
        if cached is not None and n:
            rows = cached.index()
            pairs = [(self.slot_of[sid], row) for sid, row in rows.items() if sid in self.slot_of]
            if pairs:
                slots = np.fromiter((p[0] for p in pairs), dtype=np.int64, count=len(pairs))
                src = np.fromiter((p[1] for p in pairs), dtype=np.int64, count=len(pairs))
                self.vectors.set_many(slots, cached.matrix[src])
        self.vectors.reserve(max(n - 1, 0))
        self.stats.vectors_loaded = self.vectors.count()
        self.stats.missing_vectors = n - self.stats.vectors_loaded

    def _index_one(self, seg: Segment) -> int:
        slot = self.bm25.add(tokenize(seg.content))
        self._register(slot, seg)
        return slot

    def _register(self, slot: int, seg: Segment) -> None:
        self.segments.append(seg)
        self.slot_of[seg.id] = slot
        self._keys[dedup_key(seg.session_id, seg.role, seg.content)] = slot
        self._session_slots.setdefault(seg.session_id, []).append(slot)
        if slot >= len(self._ts):
            grow = max(len(self._ts) * 2, slot + 1)
            self._ts = np.concatenate([self._ts, np.zeros(grow - len(self._ts), np.int64)])
            self._alive = np.concatenate([self._alive, np.zeros(grow - len(self._alive), bool)])
        self._ts[slot] = min(max(seg.timestamp, _I64_MIN), _I64_MAX)  # a damaged time
        self._alive[slot] = True

    # -- queries --------------------------------------------------------------------
    def __len__(self) -> int:
        return self.bm25.size

    def get(self, segment_id: str) -> Segment | None:
        """A live segment by id."""
        slot = self.slot_of.get(segment_id)
        return self.segments[slot] if slot is not None else None

    def live(self) -> list[Segment]:
        """Live segments in file order."""
        return [s for s in self.segments if s is not None]

    def session_mask(self, session_id: str | None) -> np.ndarray | None:
        """Boolean mask of the slots of one session (None: every session); read-only."""
        if session_id is None:
            return None
        with self.lock:  # live mode may index a segment meanwhile (its slot past the mask)
            n = len(self.segments)
            mask = self._masks.get(session_id)
            if mask is None or len(mask) != n:  # a session only gains slots, and n with them
                if len(self._masks) >= MASKS_KEPT:
                    self._masks.clear()
                mask = np.zeros(n, dtype=bool)
                mask[self._session_slots.get(session_id, [])] = True
                mask.flags.writeable = False  # shared by the searches until a slot is added
                self._masks[session_id] = mask
        return mask

    def timestamps(self) -> np.ndarray:
        """Timestamp (ms) of every slot."""
        with self.lock:
            return self._ts[: len(self.segments)].astype(np.float64)

    def missing_vector_slots(self) -> list[int]:
        """Live slots that have no vector yet."""
        with self.lock:
            return [
                i for i, s in enumerate(self.segments) if s is not None and not self.vectors.has(i)
            ]

    # -- changes ----------------------------------------------------------------------
    def embed_missing(
        self,
        *,
        batch_size: int = 64,
        progress: Progress | None = None,
        cancelled: CancelCheck | None = None,
        save: bool = True,
    ) -> int:
        """Embed the segments that have no vector; returns how many were embedded.

        Safe beside live indexing and eviction in another thread: the slots and their
        segments are taken under :attr:`lock`, the embedder runs without it, and a
        vector is stored only if its slot still holds the same segment (one evicted
        meanwhile gets none). Vectors are saved to memlens's own cache (never to the
        agent's vectors.bin).
        """
        with self.lock:
            todo = [
                (i, s)
                for i, s in enumerate(self.segments)
                if s is not None and not self.vectors.has(i)
            ]
        done = 0
        for start in range(0, len(todo), batch_size):
            check(cancelled, "embedding")
            chunk = todo[start : start + batch_size]
            vecs = self.embedder.embed([seg.content for _, seg in chunk])
            with self.lock:
                keep = [row for row, (i, seg) in enumerate(chunk) if self.segments[i] is seg]
                slots = np.asarray([chunk[row][0] for row in keep], dtype=np.int64)
                self.vectors.set_many(slots, np.asarray(vecs)[keep])
            done += len(keep)
            if progress:
                progress(
                    min(start + batch_size, len(todo)),
                    len(todo),
                    f"embedding with {self.embedder.name}",
                )
        if done and save:
            self.save_cache()
        self.stats.missing_vectors = len(self.missing_vector_slots())
        return done

    def _vector_payload(self) -> tuple[list[str], np.ndarray]:
        with self.lock:
            slots = [
                i for i, s in enumerate(self.segments) if s is not None and self.vectors.has(i)
            ]
            ids = [seg.id for i in slots if (seg := self.segments[i]) is not None]
            return ids, self.vectors.matrix[slots]

    def save_cache(self) -> Path | None:
        """Write memlens's own vector cache (the user cache folder)."""
        if self.cache_dir is None:
            return None
        ids, matrix = self._vector_payload()
        path = cache_path(self.cache_dir, self.folder, self.embedder.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, encode_vectors(ids, matrix, self.embedder.dim), backup=False)
        return path

    def add(
        self,
        session_id: str,
        role: str,
        content: str,
        *,
        timestamp: int | None = None,
        session_key: str | None = None,
        write: bool = True,
    ) -> Segment | None:
        """Archive one message: redact, tag, dedup, append one line, index it.

        Returns None (and writes nothing) when its dedup key is already stored.
        """
        seg = make_segment(
            session_id,
            role,
            content,
            timestamp=timestamp,
            session_key=session_key,
            redaction=self.settings.redaction,
        )
        key = dedup_key(seg.session_id, seg.role, seg.content)
        with self.lock:
            if key in self._keys:
                return None
            vec = self.embedder.embed([seg.content])[0]
            if write:
                append_segments(self.segments_path, [seg])
            slot = self._index_one(seg)
            self.vectors.set(slot, vec)
            self.evict()
        return seg

    def index_appended(
        self, segments: Sequence[Segment], now_ms: int | None = None
    ) -> list[Segment]:
        """Index segments already in segments.jsonl (appended by the agent, seen live).

        Nothing is written. A segment is skipped when its id or its dedup key is
        already stored (the first of a key wins, as when loading) or when it is
        older than ``evictionDays``; ``maxSegments`` is then applied once. The new
        slots have no vector yet: :meth:`embed_missing` gives them one.
        Returns the segments indexed.
        """
        s = self.settings
        now = int(time.time() * 1000) if now_ms is None else now_ms
        cutoff = now - s.eviction_days * DAY_MS if s.eviction_days > 0 else None
        added: list[Segment] = []
        with self.lock:
            for seg in segments:
                key = dedup_key(seg.session_id, seg.role, seg.content)
                if seg.id in self.slot_of or key in self._keys:
                    continue
                if cutoff is not None and seg.timestamp < cutoff:
                    continue
                self.vectors.reserve(self._index_one(seg))
                added.append(seg)
            if added:
                self.evict(now_ms)
                self.stats.missing_vectors += len(added)
        return added

    def evict(self, now_ms: int | None = None) -> list[Segment]:
        """Apply maxSegments (oldest first) and evictionDays to the warm set."""
        removed: list[Segment] = []
        s = self.settings
        with self.lock:
            n = len(self.segments)
            if s.eviction_days > 0:
                now = int(time.time() * 1000) if now_ms is None else now_ms
                cutoff = now - s.eviction_days * DAY_MS
                old = np.flatnonzero(self._alive[:n] & (self._ts[:n] < cutoff))
                removed.extend(self._drop(int(slot)) for slot in old)
            if s.max_segments >= 0 and len(self) > s.max_segments:
                live = np.flatnonzero(self._alive[:n])
                chosen = _oldest(live, self._ts[live], len(self) - s.max_segments)
                removed.extend(self._drop(int(slot)) for slot in chosen)
        return removed

    def _drop(self, slot: int) -> Segment:
        seg = self.segments[slot]
        assert seg is not None
        self.segments[slot] = None
        self._alive[slot] = False
        del self.slot_of[seg.id]
        self._keys.pop(dedup_key(seg.session_id, seg.role, seg.content), None)
        self.bm25.remove(slot)
        self.vectors.clear(slot)
        return seg


_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1
MASKS_KEPT = 64
"""Sessions whose slot masks the store keeps (a search of one session builds its mask once)."""


def _oldest(
    slots: npt.NDArray[np.intp], stamps: npt.NDArray[np.int64], k: int
) -> npt.NDArray[np.intp]:
    """The *k* oldest of *slots* (ascending), by timestamp then slot: :func:`oldest_first`.

    A partition instead of a sort: adding one segment to a full 20,000-segment store
    evicts one, and sorting them all each time cost ~13 ms.
    """
    if k <= 0:
        return slots[:0]
    if k < len(slots):
        kth = np.partition(stamps, k - 1)[k - 1]
        below = stamps < kth
        tied = np.flatnonzero(stamps == kth)[: k - int(below.sum())]
        keep = np.concatenate([np.flatnonzero(below), tied])
        slots, stamps = slots[keep], stamps[keep]
    return slots[np.lexsort((slots, stamps))]
