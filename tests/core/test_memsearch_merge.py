"""The hybrid merge's per-candidate rules (core/openclaw/memsearch_merge.py), both ways.

Sessions decay from their transcript's indexed mtime, importance multiplies, triggers,
project keys and provenance travel with the hit, an invalid project annotation drops
the candidate, a vector hit and a keyword hit of one chunk join; the MCP tool's search
(``rank_all=False``: candidates made only when read) answers what the app's does.
"""

from __future__ import annotations

import math
import sqlite3
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from core.openclaw.memindex import open_memory_index
from core.openclaw.memsearch import memory_search
from core.openclaw.memsearch_rank import INVALID_PROJECT_KEY, importance_multiplier
from core.openclaw.memsearch_vectors import VectorCache
from tests.core.test_memindex import f64, make_v23
from tests.core.test_memsearch_cache import Fixed

if TYPE_CHECKING:
    from pathlib import Path

NOW = 1_795_700_000_000
DIMS = 6
SESSION_MTIME = 1_795_000_000_123.75
WORDS = ["tea", "deploy", "billing", "rollback", "invoice", "cache"]


def _index(tmp_path: Path, rng: np.random.Generator) -> tuple[Path, dict[str, Any]]:
    """Notes and session transcripts with recall rows of every kind."""
    chunks, recall, extra = [], [], {}
    paths = ["MEMORY.md", "memory/2026-11-01.md", "notes/a.md", "memory/topic.md"]
    for i in range(48):
        session = i % 4 == 3
        text = " ".join(rng.choice(WORDS, size=int(rng.integers(2, 7))))
        chunks.append({
            "id": f"c{i:02d}", "text": f"{text} {i}", "embedding": f64(*rng.standard_normal(DIMS)),
            "path": f"sessions/s{i % 3}.jsonl" if session else paths[i % 4],
            "source": "sessions" if session else "memory", "start": i, "end": i + 1,
        })  # fmt: skip
        if i % 5 == 0:
            recall.append((f"c{i:02d}", int(rng.integers(1, 11))))
        if i % 7 == 0:
            extra[f"c{i:02d}"] = (" trig ", f"proj-a; {INVALID_PROJECT_KEY}" if i % 2 else "proj-b")
    sources = [(p, "memory", f"h-{p}", 1_790_000_000_000.5, 10) for p in paths]
    sources += [(f"sessions/s{k}.jsonl", "sessions", f"h{k}", SESSION_MTIME, 10) for k in range(3)]
    meta = {"model": "fake-embed", "provider": "openai-compatible",
            "sources": ["memory", "sessions"], "ftsTokenizer": "unicode61", "vectorDims": DIMS}  # fmt: skip
    path = make_v23(
        tmp_path / "openclaw-agent.sqlite", chunks, meta=meta, sources=sources, recall=recall,
        provenance=[(f"c{i:02d}", "owner", "interactive", 1_790_000_000_000) for i in (0, 9)],
    )  # fmt: skip
    with sqlite3.connect(path) as db:
        for cid, (triggers, project) in extra.items():
            db.execute(
                "INSERT INTO memory_index_chunk_recall_metadata VALUES (?, NULL, ?, ?)"
                " ON CONFLICT(chunk_id) DO UPDATE SET triggers = excluded.triggers,"
                " project_key = excluded.project_key",
                (cid, triggers, project),
            )
    db.close()
    return path, extra


@pytest.mark.parametrize("seed", range(4))
def test_every_candidate_rule_and_both_rankings(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    path, extra = _index(tmp_path, rng)
    dropped = {cid for cid, (_, project) in extra.items() if INVALID_PROJECT_KEY in project}
    seen_session = seen_importance = seen_join = 0
    for query in ("tea deploy", "billing", "invoice cache rollback", "s1.jsonl"):
        q = list(rng.standard_normal(DIMS))
        args: dict[str, Any] = {
            "now_ms": NOW, "embedder": Fixed(q), "min_score": 0.0, "max_results": 20,
            "sources": ("memory", "sessions"),
        }  # fmt: skip
        with open_memory_index(path) as idx:
            full = memory_search(idx, query, vector_cache=VectorCache(), **args)
            part = memory_search(idx, query, vector_cache=VectorCache(), rank_all=False, **args)
        assert full.mode == "hybrid"
        assert part.to_json()["results"] == full.to_json()["results"]
        placed = [c.to_json("hybrid") for c in part.candidates]
        assert placed == [c.to_json("hybrid") for c in full.candidates][: len(placed)]
        # 48 chunks, 200 vector candidates: every chunk is one, but those OpenClaw drops
        assert {c.hit.id for c in full.candidates} == {f"c{i:02d}" for i in range(48)} - dropped
        for c in full.candidates:
            h, out = c.hit, c.to_json("hybrid")
            assert h.id not in dropped  # OpenClaw's project step
            if h.id in extra:
                assert out["triggers"] == "trig" and out["projectKey"] == "proj-b"
            if h.source == "sessions":
                assert (c.time_from, c.time_ms) == ("session-mtime", math.trunc(SESSION_MTIME))
                seen_session += 1
            if h.importance is not None:
                assert c.importance_multiplier == importance_multiplier(h.importance)
                seen_importance += 1
            if h.id in ("c00", "c09"):
                assert out["provenance"]["originClass"] == "owner"
            if c.has_vector and c.has_keyword:
                seen_join += 1
            if c.exact == 0:  # the score: content (or lexical rank), decay, importance
                pre = c.content_score if c.content_score != 0 else c.lexical_rank
                assert c.pre_decay == pre
                assert c.ranking_score == pre * c.decay * c.importance_multiplier
                assert c.score == (0.0 if c.content_score == 0 else c.ranking_score)
    assert seen_session and seen_importance and seen_join
