"""The fast paths of OpenClaw's memory search answer exactly what the straightforward ones do.

A small generated index full of ties (texts of equal length from a small vocabulary:
many chunks share a bm25 rank; several sources; FTS rows whose chunk is gone; dated,
evergreen and undated notes; equal vectors) is searched with a few hundred random
queries twice: through the fast paths (the body ranking sorted in numpy, MMR on
arrays, the sort keys, the caches) and through the straightforward ones (OpenClaw's
own ``ORDER BY rank LIMIT`` statement, OpenClaw's MMR loop). Any optimisation that
changed a rank, a score or an order fails here. (The cached vector matrix is an ulp
or two from the scan of every vector by design: ``test_memsearch_cache.py``.)
"""

from __future__ import annotations

import random
import sqlite3
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from core.openclaw import memsearch_chunks, memsearch_fts, memsearch_mmr, memsearch_postings
from core.openclaw.memindex import open_memory_index
from core.openclaw.memsearch import memory_search
from core.openclaw.memsearch_keyword import keyword_context, search_body
from core.openclaw.memsearch_vectors import VectorCache
from tests.core.test_memindex import f64, make_v23

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from core.openclaw.memindex import MemoryIndex

NOW = 1_795_700_000_000
WORDS = ["deploy", "tea", "coffee", "rollback", "alpha", "beta", "gamma", "delta",
         "caf\u00e9", "d\u00e9ploy", "x9", "under_score"]  # fmt: skip
DIMS = 6


def _path(i: int) -> str:
    return ("MEMORY.md", f"memory/2026-11-0{1 + i % 9}.md", f"memory/notes{i % 5}.md",
            f"notes/tea{i % 4}.md")[i % 4]  # fmt: skip


def _chunks(n: int) -> list[dict[str, Any]]:
    rng = random.Random(3)
    vecs = np.random.default_rng(3).standard_normal((n, DIMS)).round(1)
    vecs[7] = vecs[4]  # equal vectors: equal cosines, the rowid decides
    out = []
    for i in range(n):
        words = [rng.choice(WORDS[: 4 + i % 9]) for _ in range(5 + (i % 7 == 0))]
        out.append({
            "id": f"c{i:03d}", "path": _path(i), "start": 1 + i, "end": 3 + i,
            "source": "sessions" if i % 11 == 0 else "memory",
            "text": " ".join(words), "embedding": f64(*vecs[i]),
        })  # fmt: skip
    return out


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryIndex]:
    path: Path = tmp_path_factory.mktemp("fast") / "openclaw-agent.sqlite"
    make_v23(path, _chunks(90), recall=[("c004", 9), ("c010", 2)])
    with sqlite3.connect(path) as db:  # FTS rows whose chunk is gone (OpenClaw drops them)
        db.executemany(
            "INSERT INTO memory_index_chunks_fts (rowid, text, id, path, source, model,"
            " start_line, end_line) VALUES (?, ?, ?, 'memory/gone.md', 'memory', 'fake-embed',"
            " 1, 2)",
            [(10_000 + i, "deploy tea coffee rollback alpha", f"gone{i}") for i in range(12)],
        )
    db.close()
    with open_memory_index(path) as idx:
        yield idx


def _queries(n: int) -> list[str]:
    rng = random.Random(11)
    extra = ["", "MEMORY.md", "notes/tea1.md", "tea1", "zzz", "the deploy", "\u00e9"]
    return [" ".join(rng.sample(WORDS, rng.randint(1, 3))) for _ in range(n)] + extra


def _first_difference(fast: list[Any], plain: list[Any]) -> tuple[Any, Any] | None:
    """The first answer that differs (a short failure message, not a diff of them all)."""
    assert len(fast) == len(plain)
    return next(((a, b) for a, b in zip(fast, plain, strict=True) if a != b), None)


def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    """The straightforward paths: OpenClaw's statement, MMR's loop."""
    monkeypatch.setattr(memsearch_fts, "ENABLED", False)
    monkeypatch.setattr(memsearch_postings, "ENABLED", False)
    monkeypatch.setattr(memsearch_mmr, "MMR_ARRAY_MIN", 10**9)
    monkeypatch.setattr(memsearch_chunks, "ENABLED", False)


def test_body_rows_in_openclaws_order(index: MemoryIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    assert memsearch_fts.content_columns(index, "memory_index_chunks_fts") is not None
    for sources in (("memory",), ()):
        ctx = keyword_context(index, sources)
        cases = [(q, limit) for q in _queries(40) for limit in (1, 7, 40)]
        fast = [search_body(ctx, q, limit, None) for q, limit in cases]
        with monkeypatch.context() as m:  # the rows read through the virtual table
            m.setattr(memsearch_fts, "content_columns", lambda _index, _table: None)
            through_fts = [search_body(ctx, q, limit, None) for q, limit in cases]
        with monkeypatch.context() as m:
            m.setattr(memsearch_fts, "ENABLED", False)
            m.setattr(memsearch_postings, "ENABLED", False)
            plain = [search_body(ctx, q, limit, None) for q, limit in cases]
        assert _first_difference(fast, plain) is None
        assert _first_difference(through_fts, plain) is None
        assert sum(len(f) for f in fast) > 700  # the queries do find chunks


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ("text, id UNINDEXED, path UNINDEXED, source UNINDEXED, start_line UNINDEXED,"
         " end_line UNINDEXED", ["c1", "c2", "c3", "c4", "c5", "c0"]),
        ("id UNINDEXED, text, source, path UNINDEXED, end_line, start_line, detail=full",
         ["c0", "c3", "c2", "c5", "c4", "c1"]),
        ("text, id, path, source, start_line, end_line, content=''", None),  # external
        ("text, id, path, source, start_line, end_line, content_rowid=x", None),
        ("text, id, path, source, start_line, end_line, tokenize='porter'", None),  # quoted
        ("text, id, path, source, start_line", None),  # end_line missing
    ],
)  # fmt: skip
def test_content_columns_only_of_a_plain_table(
    tmp_path: Path, args: str, expected: list[str] | None
) -> None:
    path = tmp_path / "t.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE x (id TEXT)")
        db.execute(f"CREATE VIRTUAL TABLE t USING fts5({args})")
    db.close()
    with open_memory_index(path) as idx:
        assert memsearch_fts.content_columns(idx, "t") == expected


def test_equal_ranks_are_common_here(index: MemoryIndex) -> None:
    ranks = [r[0] for r in index.db.rows(
        "SELECT rank FROM memory_index_chunks_fts WHERE memory_index_chunks_fts MATCH 'tea'"
    )]  # fmt: skip
    assert len(ranks) - len(set(ranks)) > 50  # the tie order is what is tested


class Fixed:
    """A query embedder answering seeded vectors in turn."""

    provider = "openai-compatible"
    model = "fake-embed"

    def __init__(self) -> None:
        self.rng = np.random.default_rng(5)

    def embed_query(self, text: str) -> list[float]:
        out: list[float] = self.rng.standard_normal(DIMS).round(1).tolist()
        return out


def _search_all(index: MemoryIndex, cache: VectorCache | None) -> list[dict[str, Any]]:
    out = []
    emb = Fixed()
    for q in _queries(20):
        for embedder in (None, emb):
            r = memory_search(index, q, now_ms=NOW, embedder=embedder, vector_cache=cache)
            out.append(r.to_json())
    return out


def test_whole_search_as_the_straightforward_one(
    index: MemoryIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = memsearch_chunks.TOKENS.builds + memsearch_chunks.RECALL.builds
    fast = _search_all(index, VectorCache())
    assert memsearch_chunks.TOKENS.builds + memsearch_chunks.RECALL.builds > built
    _plain(monkeypatch)
    plain = _search_all(index, VectorCache())  # the cache is 1 ulp from the scan: its own test
    assert _first_difference(fast, plain) is None
    modes = {r["mode"] for r in fast}
    assert modes == {"fts-only", "hybrid", "empty"}
    assert sum(len(r["candidates"]) for r in fast) > 1000
