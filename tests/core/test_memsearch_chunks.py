"""The per-generation chunk tables answer what tokenizing and reading per hit answer.

:mod:`core.openclaw.memsearch_chunks` keeps every chunk's tokens (looked up by the
text itself) and recall row; the lexical boost, MMR's Jaccard matrix and the recall
attach read them. Here: the boost and the Jaccard matrix from the table equal the
tokenizing paths on random texts (upper case, punctuation, long texts cut to their
snippet, a non-ASCII one left to the tokenizer), and a table is built only once the
index was seen unchanged, and the recall table made again after a write (a recall
row changed).
"""

from __future__ import annotations

import math
import random
import sqlite3
from typing import TYPE_CHECKING

import numpy as np

from core.openclaw import memsearch_chunks, memsearch_mmr
from core.openclaw.memindex import open_memory_index
from core.openclaw.memsearch import memory_search
from core.openclaw.memsearch_boost import boost_matcher, boosted_score, boosted_scores, path_boost
from core.openclaw.memsearch_records import MemoryCandidate, MemoryHit
from core.openclaw.memsearch_text import mmr_token_bytes, search_tokens, truncate_utf16, unique
from tests.core.test_memindex import make_v23
from tests.core.test_memsearch import Fixed, unit

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

WORDS = ["Deploy", "tea", "coffee,", "roll-back", "x9", "under_score", "a", "TEA.", "beta"]


def _texts(n: int) -> list[str]:
    rng = random.Random(4)
    out = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12))) for _ in range(n)]
    out.append(" ".join(rng.choice(WORDS) for _ in range(400)))  # longer than a snippet
    out.append("caf\u00e9 tea deploy")  # non-ASCII: not in the table
    return out


def test_boost_from_the_table_as_tokenizing() -> None:
    texts = _texts(60)
    table = memsearch_chunks._tokens_of(texts)
    assert texts[-1] not in table.rows and texts[-2] in table.rows
    rng = random.Random(8)
    paths = [rng.choice(["MEMORY.md", "memory/tea.md", "notes/x9.md"]) for _ in texts]
    fts = [rng.random() for _ in texts]
    fts[3], fts[5], fts[7] = math.nan, math.inf, -math.inf  # Python's min() keeps its order
    for query in ["tea", "deploy tea x9", "under_score beta", "zzz tea", "Roll back", "caf\u00e9"]:
        matchers = [boost_matcher(t) for t in unique(search_tokens(query))]
        boosts = [path_boost(matchers, p) for p in paths]
        fast = boosted_scores(matchers, texts, paths, fts, boosts, table)
        plain = [boosted_score(matchers, *a) for a in zip(paths, texts, fts, boosts, strict=True)]
        assert fast == plain


def test_jaccard_from_the_table_as_tokenizing(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _texts(40)[:-1]  # ASCII only: every snippet in the table
    table = memsearch_chunks._tokens_of(texts)
    items = [
        MemoryCandidate(MemoryHit(f"c{i}", "MEMORY.md", 1, 2, "memory", truncate_utf16(t, 700)))
        for i, t in enumerate(texts)
    ]
    plain = memsearch_mmr._jaccard_matrix([c.hit.snippet for c in items])
    monkeypatch.setattr(memsearch_chunks, "token_ids_of", table.token_ids)
    monkeypatch.setattr(memsearch_mmr, "token_ids_of", table.token_ids)
    found = table.token_ids([c.hit.snippet for c in items])
    assert found is not None
    words = {i: w for w, i in table.vocab.items()}
    ends = np.cumsum(found[0]).tolist()
    for c, start, end in zip(items, [0, *ends[:-1]], ends, strict=True):  # the snippet's MMR tokens
        assert {words[i] for i in found[1][start:end].tolist()} == mmr_token_bytes(c.hit.snippet)
    assert np.array_equal(memsearch_mmr._jaccard_matrix([c.hit.snippet for c in items]), plain)
    assert plain[plain < 1].max() > 0  # some pairs share tokens, some do not


def test_tables_built_once_unchanged_and_again_after_a_write(tmp_path: Path) -> None:
    path = tmp_path / "openclaw-agent.sqlite"
    chunks = [
        {"id": f"c{i}", "path": "MEMORY.md", "text": f"tea deploy note {i}", "embedding": unit(0.5)}
        for i in range(5)
    ]
    make_v23(path, chunks, recall=[("c1", 9)], wal=True)
    tokens, recall = memsearch_chunks.TOKENS.builds, memsearch_chunks.RECALL.builds

    def importance(embedder: Fixed | None = None) -> int | None:
        with open_memory_index(path) as idx:  # as the server reopens a changed index
            found = [
                memory_search(idx, "tea", now_ms=0, min_score=0, embedder=embedder)
                for _ in range(3)
            ]
        assert all(r.to_json() == found[0].to_json() for r in found)
        return next(c.hit.importance for c in found[0].candidates if c.hit.id == "c1")

    assert importance() == 9  # seen, then built, then kept
    assert memsearch_chunks.RECALL.builds == recall + 1
    # keyword-only: the body postings answer the lexical boost, no token table is made
    assert memsearch_chunks.TOKENS.builds == tokens
    assert importance(Fixed()) == 9  # hybrid: MMR's snippet tokens are
    assert memsearch_chunks.TOKENS.builds == tokens + 1
    assert memsearch_chunks.RECALL.builds == recall + 2  # a new connection's
    with sqlite3.connect(path) as db:
        db.execute("UPDATE memory_index_chunk_recall_metadata SET importance = 2")
    db.close()
    assert importance() == 2  # the write seen: the recall table made again
    assert memsearch_chunks.RECALL.builds == recall + 3


def test_path_boost_of_ascii_paths_as_the_patterns() -> None:
    paths = ["MEMORY.md", "memory/Tea-X9.md", "notes/UNDER_score.md", "notes/\u212aey.md", "a/b"]
    for query in ["tea x9", "memory md", "under_score key", "b", "caf\u00e9 tea"]:
        matchers = [boost_matcher(t) for t in unique(search_tokens(query))]
        for p in paths:
            by_pattern = sum(0.18 for m in matchers if m.sub.search(p))  # p is NFC
            assert path_boost(matchers, p) == by_pattern
    assert path_boost([boost_matcher("key")], "notes/\u212aey.md") == 0.18  # Kelvin sign


def test_numbering_of_32_bit_ids_by_halves() -> None:
    rng = np.random.default_rng(2)
    for high in (300, 1 << 20, (1 << 31) - 1):  # one half, two halves
        flat = rng.integers(0, high, 3000).astype(np.int32)
        fast = memsearch_mmr._number(flat)
        plain = memsearch_mmr._number(flat.astype(np.int64))  # numpy's argsort
        assert all(np.array_equal(a, b) for a, b in zip(fast, plain, strict=True))
