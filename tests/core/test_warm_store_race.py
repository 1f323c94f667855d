"""The warm store's embedding (a worker) and its eviction (live indexing) cannot race.

Live mode indexes new segments, which evicts the oldest past ``maxSegments``, while a
worker embeds the segments that have no vector yet. Before the fix, a segment evicted
between the embedder's choice of slots and the write of their vectors made the write
fail (IndexError: the texts were fewer than the slots) or left a vector on a dead slot.
"""

from __future__ import annotations

import sys
import threading
import time

import numpy as np

from core.embed.hash import HashEmbedder
from core.recall.warm_store import StoreSettings, WarmStore
from core.store.segments import make_segment

NOW = 1_800_000_000_000


class SlowEmbedder:
    """The hash embedder, yielding the GIL while it "computes" (as a real model does)."""

    def __init__(self) -> None:
        self._inner = HashEmbedder()
        self.name = self._inner.name
        self.dim = self._inner.dim

    def embed(self, texts, **kwargs):
        time.sleep(0.0005)
        return self._inner.embed(texts, **kwargs)


def test_embedding_while_eviction_runs_never_fails_nor_keeps_a_dead_vector(tmp_path):
    settings = StoreSettings(max_segments=12, eviction_days=0)
    store = WarmStore(tmp_path, SlowEmbedder(), settings)  # type: ignore[arg-type]
    rounds = 150
    errors: list[BaseException] = []
    stop = threading.Event()

    def embed() -> None:
        try:
            while not stop.is_set():
                store.embed_missing(batch_size=3, save=False)
        except BaseException as exc:  # the old code raised IndexError here
            errors.append(exc)

    worker = threading.Thread(target=embed)
    worker.start()
    try:
        for i in range(rounds):
            segs = [
                make_segment("s", "user", f"round {i} item {k}", timestamp=NOW + i * 10 + k)
                for k in range(3)
            ]
            store.index_appended(segs, NOW)  # evicts the oldest past maxSegments
            if errors:
                break
    finally:
        stop.set()
        worker.join(timeout=30)
    assert not worker.is_alive()
    assert errors == []
    store.embed_missing(save=False)
    alive = [i for i, s in enumerate(store.segments) if s is not None]
    dead = [i for i, s in enumerate(store.segments) if s is None]
    assert len(alive) == 12
    assert all(store.vectors.has(i) for i in alive)
    assert not any(store.vectors.has(i) for i in dead), "a vector on an evicted slot"
    # Every live vector is its own segment's (not one computed for an evicted text).
    for i in alive:
        seg = store.segments[i]
        assert seg is not None
        want = store.embedder.embed([seg.content])[0]
        assert np.allclose(store.vectors.matrix[i], want / np.linalg.norm(want), atol=1e-5)


def test_searching_and_explaining_while_live_indexing_evicts_never_fails(tmp_path):
    """Recall previews run as jobs beside live indexing: masks and slots stay consistent.

    Before the fix, the session mask was built outside the store's lock, and an append
    in between made numpy fail (``operands could not be broadcast together``).
    """
    from core.recall.hybrid import SearchConfig, explain, search

    settings = StoreSettings(max_segments=40, eviction_days=0)
    store = WarmStore(tmp_path, SlowEmbedder(), settings)  # type: ignore[arg-type]
    store.index_appended(
        [make_segment("s", "user", f"seed item {k}", timestamp=NOW + k) for k in range(40)], NOW
    )
    errors: list[BaseException] = []
    stop = threading.Event()
    searched = [0]

    def query() -> None:
        try:
            while not stop.is_set():
                result = search(store, "round item", SearchConfig(), session_id="s", now_ms=NOW)
                for hit in result.hits[:2]:
                    explain(store, result, hit.segment.id)
                searched[0] += 1
        except BaseException as exc:  # the old code raised ValueError here
            errors.append(exc)

    worker = threading.Thread(target=query)
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # threads trade the GIL often: the race shows in few rounds
    worker.start()
    try:
        for i in range(250):
            segs = [
                make_segment("s", "user", f"round {i} item {k}", timestamp=NOW + 100 + i * 10 + k)
                for k in range(3)
            ]
            store.index_appended(segs, NOW)
            if i % 10 == 0:
                store.embed_missing(batch_size=8, save=False)
            if errors:
                break
    finally:
        stop.set()
        worker.join(timeout=30)
        sys.setswitchinterval(switch)
    assert not worker.is_alive()
    assert errors == []
    assert searched[0] > 0
