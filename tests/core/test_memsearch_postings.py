"""The body query from postings in memory answers what SQLite's FTS5 answers, bit for bit.

Random ASCII corpora in OpenClaw's real v23 schema (upper case, digits, punctuation,
underscores, repeated words, a text long enough for two-byte ``_docsize`` varints,
FTS rows whose chunk is gone, two sources) are searched with random queries (phrases
from underscored tokens, absent words, repeated tokens) through the postings and
through SQLite: the same rows, in the same order, with the same rank bits.
"""

from __future__ import annotations

import random
import sqlite3
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from core.openclaw import memsearch_fts, memsearch_postings
from core.openclaw.memindex import open_memory_index
from core.openclaw.memsearch_keyword import keyword_context, search_body
from core.openclaw.memsearch_postings import _build, _checked, _sizes, _varints, body_postings
from core.openclaw.memsearch_text import build_fts_query
from tests.core.test_memindex import f64, make_v23

if TYPE_CHECKING:
    from pathlib import Path

    from core.openclaw.memindex import MemoryIndex

FTS, CHUNKS = "memory_index_chunks_fts", "memory_index_chunks"
WORDS = ["deploy", "Tea", "coffee", "rollback", "x9", "apply", "discount", "the", "2026",
         "apply_discount", "Deploy-Plan", "a", "b", "end."]  # fmt: skip


def _text(rng: random.Random, i: int) -> str:
    n = 150 if i == 5 else rng.randint(0, 12)  # one long text: two-byte varints
    words = [rng.choice(WORDS[: 3 + i % 12]) for _ in range(n)]
    return " ".join(words) + ("" if i % 9 else " apply discount apply discount")


def _index(folder: Path, seed: int, extra: str | None = None) -> Path:
    rng = random.Random(seed)
    chunks = [
        {"id": f"c{i:03d}", "path": f"memory/n{i % 7}.md", "start": i, "end": i + 1,
         "source": "sessions" if i % 5 == 0 else "memory", "text": _text(rng, i),
         "embedding": f64(1.0, 0.0)}
        for i in range(80)
    ]  # fmt: skip
    if extra is not None:
        chunks[3]["text"] = extra
    path = make_v23(folder / "openclaw-agent.sqlite", chunks)
    with sqlite3.connect(path) as db:  # FTS rows whose chunk is gone
        db.executemany(
            f"INSERT INTO {FTS} (rowid, text, id, path, source, model, start_line, end_line)"
            " VALUES (?, ?, ?, 'memory/gone.md', 'memory', 'm', 1, 2)",
            [(5_000 + i, "deploy tea apply discount", f"gone{i}") for i in range(6)],
        )
    db.close()
    return path


def _queries(rng: random.Random, n: int) -> list[str]:
    pool = [*WORDS, "TEA", "absent", "apply_discount_apply", "tea_tea", "_", "9"]
    fixed = ["deploy", "apply_discount", "the the", "deploy_plan", "end", "x9 2026", "a_b"]
    return fixed + [" ".join(rng.choices(pool, k=rng.randint(1, 3))) for _ in range(n)]


def _sql_ranks(index: MemoryIndex, match: str) -> list[tuple[int, str]]:
    sql = f"SELECT rowid, rank FROM {FTS} WHERE {FTS} MATCH ? AND {FTS}.rank MATCH 'bm25()'"
    return sorted((int(r), float(k).hex()) for r, k in index.db.rows(sql, [match]))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ranks_equal_fts5s_bit_for_bit(tmp_path: Path, seed: int) -> None:
    with open_memory_index(_index(tmp_path, seed)) as index:
        post = _checked(index, FTS, CHUNKS)
        assert post is not None
        compared = phrases = 0
        for query in _queries(random.Random(seed), 150):
            match = build_fts_query(query)
            found = post.ranks(match) if match else None
            if found is None:  # left to SQLite: no word, or a token the tokenizer empties
                assert match is None or '"_"' in match, query
                continue
            rows, ranks = found
            hexes = [k.hex() for k in ranks.tolist()]
            got = sorted(zip(post.rowids[rows].tolist(), hexes, strict=True))
            assert got == _sql_ranks(index, match), query
            compared += 1
            phrases += "_" in match and bool(got)
        assert compared > 100 and phrases > 5


@pytest.mark.parametrize("seed", [4, 5])
def test_body_search_is_the_same_through_sqlite(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_memory_index(_index(tmp_path, seed)) as index:
        for sources in (("memory",), ()):
            ctx = keyword_context(index, sources)
            cases = [(q, limit) for q in _queries(random.Random(seed), 60) for limit in (1, 7, 50)]
            search_body(ctx, "deploy", 5, None)
            search_body(ctx, "tea", 5, None)  # the second search of the same index builds
            assert body_postings(index, FTS, CHUNKS) is not None
            fast = [search_body(ctx, q, limit, None) for q, limit in cases]
            with monkeypatch.context() as m:
                m.setattr(memsearch_postings, "ENABLED", False)
                through_sqlite = [search_body(ctx, q, limit, None) for q, limit in cases]
                m.setattr(memsearch_fts, "ENABLED", False)  # OpenClaw's own statement
                plain = [search_body(ctx, q, limit, None) for q, limit in cases]
            assert fast == through_sqlite == plain
            assert sum(map(len, fast)) > 500


def test_a_write_to_the_fts_table_alone_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.core.test_memsearch_cache import REVISION

    path = _index(tmp_path, 8)
    with sqlite3.connect(path) as db:  # OpenClaw's revision triggers: chunk writes bump it
        for event in ("INSERT", "UPDATE", "DELETE"):
            db.executescript(REVISION.format(event))
    db.close()
    with open_memory_index(path) as index:
        ctx = keyword_context(index, ())
        for q in ("deploy", "tea", "apply_discount"):
            search_body(ctx, q, 50, None)
        assert body_postings(index, FTS, CHUNKS) is not None
        with sqlite3.connect(path) as db:  # rows gone from the FTS table only
            db.execute(f"DELETE FROM {FTS} WHERE rowid IN (1, 2, 3, 5001)")
        db.close()
        fast = [search_body(ctx, q, 50, None) for q in ("deploy", "tea", "apply_discount")]
        monkeypatch.setattr(memsearch_postings, "ENABLED", False)
        assert fast == [search_body(ctx, q, 50, None) for q in ("deploy", "tea", "apply_discount")]


def test_tokens_fts5_cuts_short_are_left_to_sqlite(tmp_path: Path) -> None:
    with open_memory_index(_index(tmp_path, 9, extra="a" * 32_768 + "x deploy")) as index:
        assert _build(index, FTS, CHUNKS) is None
    (tmp_path / "q").mkdir()
    with open_memory_index(_index(tmp_path / "q", 9)) as index:
        post = _checked(index, FTS, CHUNKS)
        assert post is not None and post.ranks('"' + "a" * 32_768 + '"') is None


def test_non_ascii_text_leaves_it_to_sqlite(tmp_path: Path) -> None:
    with open_memory_index(_index(tmp_path, 6, extra="caf\u00e9 deploy")) as index:
        assert _build(index, FTS, CHUNKS) is None


def test_any_disagreement_turns_it_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with open_memory_index(_index(tmp_path, 7)) as index:
        assert _checked(index, FTS, CHUNKS) is not None
        monkeypatch.setattr(memsearch_postings, "K1", 1.2000000000000002)  # one ulp off
        assert _checked(index, FTS, CHUNKS) is None


@pytest.mark.parametrize(
    "options", ["tokenize=porter", "tokenize=trigram", "detail=column", "columnsize=0"]
)
def test_other_tokenizers_and_options_are_left_to_sqlite(tmp_path: Path, options: str) -> None:
    path = tmp_path / "t.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(f"CREATE TABLE {CHUNKS} (id TEXT)")
        db.execute(
            f"CREATE VIRTUAL TABLE {FTS} USING fts5(text, id UNINDEXED, path UNINDEXED,"
            f" source UNINDEXED, model UNINDEXED, start_line UNINDEXED, end_line UNINDEXED,"
            f" {options})"
        )
        db.execute(f"INSERT INTO {FTS} VALUES ('deploy tea', 'c1', 'p', 'memory', 'm', 1, 2)")
    db.close()
    with open_memory_index(path) as index:
        assert _build(index, FTS, CHUNKS) is None


def test_varints_as_sqlite_writes_them() -> None:
    def put(v: int) -> bytes:  # sqlite3PutVarint, for values below 2**56
        out = [v & 0x7F]
        v >>= 7
        while v:
            out.append((v & 0x7F) | 0x80)
            v >>= 7
        return bytes(reversed(out))

    values = [0, 1, 127, 128, 300, 16_383, 16_384, 2**21 + 5, 2**35]
    assert _varints(b"".join(map(put, values))) == values
    blobs: list[Any] = [put(3) + put(0), put(200) + put(1), b"", put(127) * 3]
    assert _sizes(blobs).tolist() == [3, 201, 0, 381]
    assert np.array_equal(_sizes([]), np.zeros(0))
