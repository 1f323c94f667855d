"""The fast paths of OpenClaw's memory search answer exactly what the plain ones answer.

The cached embedding matrix (:mod:`core.openclaw.memsearch_vectors`) against the
scan of every stored vector, before and after the index changes under it; MMR on
arrays against OpenClaw's loop; the whole search with and without the cache.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from core.openclaw import memsearch_scan as scan_mod
from core.openclaw import memsearch_vectors as vectors
from core.openclaw.memindex import open_memory_index
from core.openclaw.memsearch import memory_search, search_vector
from core.openclaw.memsearch_merge import HybridOrder, select_hybrid
from core.openclaw.memsearch_mmr import _mmr_arrays, _mmr_loop, mmr_picks
from core.openclaw.memsearch_records import MemoryCandidate, MemoryHit
from core.openclaw.memsearch_scan import start_top_rows
from core.openclaw.memsearch_vectors import VectorCache, top_rows
from tests.core.test_memindex import f64, make_v23

if TYPE_CHECKING:
    from pathlib import Path

    from core.io.problems import Problem

NOW = 1_795_700_000_000
DIMS = 8


class Fixed:
    """A query embedder answering one vector."""

    provider = "openai-compatible"
    model = "fake-embed"

    def __init__(self, vector: list[float]) -> None:
        self.vector = vector

    def embed_query(self, text: str) -> list[float]:
        return self.vector


def _path(i: int) -> str:
    """Evergreen, dated and undated notes (the last decay from their indexed mtime)."""
    return (f"memory/n{i % 7}.md", f"memory/2026-11-0{1 + i % 9}.md", f"notes{i % 4}.md")[i % 3]


def _chunks(rng: np.random.Generator, n: int) -> list[dict[str, object]]:
    """Random vectors, with duplicates (equal scores), zero, empty, bad and odd ones."""
    base = rng.standard_normal((n, DIMS))
    base[5] = base[3]  # the same vector three times: a tie cut by rowid
    base[9] = base[3]
    chunks: list[dict[str, object]] = []
    for i in range(n):
        emb: bytes | str = f64(*base[i])
        if i == 11:
            emb = f64(*([0.0] * DIMS))  # a zero vector scores 0
        elif i == 12:
            emb = b""  # no vector: scores 0
        elif i == 13:
            emb = b"\x00" * 12  # not whole float64 values: a problem, scores 0
        elif i == 14:
            emb = f64(*base[i][:5])  # another length: cosine over the shorter
        elif i == 15:
            emb = f64(*(base[i] * 1e200))  # an extreme norm
        text = f"note {i} about " + ("tea" if i % 2 else "coffee") + " and the deploy"
        chunks.append({"id": f"c{i:03d}", "path": _path(i), "text": text,
                       "start": 1 + i, "end": 2 + i, "embedding": emb})  # fmt: skip
    return chunks


@pytest.fixture
def index_path(tmp_path: Path) -> Path:
    rng = np.random.default_rng(3)
    meta = {"model": "fake-embed", "provider": "openai-compatible", "sources": ["memory"],
            "ftsTokenizer": "unicode61", "vectorDims": DIMS}  # fmt: skip
    return make_v23(tmp_path / "openclaw-agent.sqlite", _chunks(rng, 60), meta=meta)


def _close(value: Any) -> Any:
    """*value* with every float rounded to 12 significant digits.

    The cached path scores candidates with one product per row, the scan with one
    ``dot`` per row: the same cosine to within an ulp or two.
    """
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, dict):
        return {k: _close(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_close(v) for v in value]
    return value


def _vector(path: Path, q: list[float], limit: int, cache: VectorCache | None) -> Any:
    problems: list[Problem] = []
    with open_memory_index(path) as idx:
        hits = search_vector(idx, q, ["fake-embed"], ["memory"], limit, problems, cache)
    found = [(h.id, h.score, h.snippet, h.start_line) for h in hits]
    return _close(found), [p.message for p in problems]


@pytest.mark.parametrize("limit", [1, 4, 10, 59, 200])
def test_cached_vectors_answer_as_the_scan(index_path: Path, limit: int) -> None:
    rng = np.random.default_rng(limit)
    cache = VectorCache()
    for _ in range(5):
        q = list(rng.standard_normal(DIMS))
        assert _vector(index_path, q, limit, cache) == _vector(index_path, q, limit, None)
    assert cache.builds == 1  # one matrix, reused across opens of the same file


def test_a_product_started_early_answers_as_inline(index_path: Path) -> None:
    rng = np.random.default_rng(21)
    cache = VectorCache()
    with open_memory_index(index_path) as idx:
        cached = cache.matrix(idx, ["fake-embed"], ["memory"])
        for limit in (1, 4, 59):
            q = list(rng.standard_normal(DIMS))
            started = start_top_rows(cached, q, limit)
            assert started is not None
            assert top_rows(idx, cached, q, limit, started) == top_rows(idx, cached, q, limit)
        assert start_top_rows(cached, [float("nan")] * DIMS, 3) is None  # refused: the scan


class _Held(scan_mod.Scan):
    """A scan whose worker share waits for :attr:`gate` (a worker busy elsewhere)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.gate = threading.Event()

    def work(self) -> None:
        self.gate.wait(10)
        super().work()


def test_the_product_in_blocks_answers_as_one_block_whoever_takes_them(
    index_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker and the caller share the blocks; every order of taking them, one answer."""
    rng = np.random.default_rng(23)
    cache = VectorCache()
    with open_memory_index(index_path) as idx:
        cached = cache.matrix(idx, ["fake-embed"], ["memory"])
        queries = [list(rng.standard_normal(DIMS)) for _ in range(4)]
        whole = {(i, k): top_rows(idx, cached, q, k) for i, q in enumerate(queries) for k in (1, 7)}
        monkeypatch.setattr(scan_mod, "SPLIT_MIN", 0)  # 60 rows in blocks
        for (i, limit), want in whole.items():
            q = queries[i]
            prepared = scan_mod.prepare(cached, q)
            assert want is not None and prepared is not None
            started = start_top_rows(cached, q, limit)  # the worker and the caller
            assert started is not None and len(started.cuts) == len(scan_mod.SPLIT_BLOCKS) + 1 > 2
            assert top_rows(idx, cached, q, limit, started) == want
            alone = scan_mod.Scan(cached, *prepared, limit)  # no worker came (pool busy)
            assert top_rows(idx, cached, q, limit, alone) == want
            held = _Held(cached, *prepared, limit)  # the worker on another thread's search
            with scan_mod._POOL_LOCK:
                scan_mod._QUEUED += 1
                assert scan_mod._POOL is not None
                held._future = scan_mod._POOL.submit(scan_mod._work, held)
            mine = start_top_rows(cached, q, limit)
            assert mine is not None and mine._future is None  # not queued behind it
            assert top_rows(idx, cached, q, limit, mine) == want
            held.gate.set()
            assert top_rows(idx, cached, q, limit, held) == want
            held._future.result()
            assert scan_mod._QUEUED == 0  # the worker's scan counted out when done
            ahead = scan_mod.Scan(cached, *prepared, limit)  # the worker took every block
            ahead.work()
            assert ahead.started.is_set() and top_rows(idx, cached, q, limit, ahead) == want
            assert top_rows(idx, cached, q, limit) == want  # inline, in blocks
            late = scan_mod.Scan(cached, *prepared, limit)  # the worker claimed one, not done
            claimed = late._take(True)
            assert claimed == 0
            done: Future[None] = Future()
            late._future = done

            def finish(scan: scan_mod.Scan = late, block: int = claimed, f: Future[None] = done):
                time.sleep(0.05)
                scan._run(block)
                f.set_result(None)

            threading.Thread(target=finish).start()
            assert top_rows(idx, cached, q, limit, late) == want  # the caller waited for it
            assert _vector(index_path, q, limit, cache) == _vector(index_path, q, limit, None)
        lost = scan_mod.Scan(cached, *scan_mod.prepare(cached, queries[0]) or (None, 0), 3)
        lost._front = lost._back  # every block claimed, none done: never a silent short answer
        with pytest.raises(RuntimeError, match="missing"):
            lost.keep()


def test_equal_scores_keep_the_earliest_row(index_path: Path) -> None:
    with sqlite3.connect(index_path) as db:
        (blob,) = db.execute(
            "SELECT embedding FROM memory_index_chunks WHERE id = 'c003'"
        ).fetchone()
    q = list(np.frombuffer(blob, dtype="<f8"))
    with open_memory_index(index_path) as idx:
        hits = search_vector(idx, q, ["fake-embed"], ["memory"], 2, [], VectorCache())
    # c003, c005, c009 hold the same vector: equal scores, the first two rows win the cut
    assert [h.id for h in hits] == ["c003", "c005"]
    assert hits[0].score == hits[1].score
    assert _vector(index_path, q, 2, None)[0] == _close(
        [(h.id, h.score, h.snippet, h.start_line) for h in hits]
    )


def test_unusable_vectors_are_reported_on_every_search(index_path: Path) -> None:
    cache = VectorCache()
    q = [1.0] * DIMS
    for _ in range(2):
        _, problems = _vector(index_path, q, 5, cache)
        assert len(problems) == 1 and "c013" in problems[0]


def test_a_changed_index_is_never_answered_from_the_cache(index_path: Path) -> None:
    cache = VectorCache()
    q = [1.0, -1.0, 0.5, 0.0, 2.0, 0.0, 0.0, 1.0]
    before = _vector(index_path, q, 5, cache)
    best = np.array(q) / np.linalg.norm(q)
    with sqlite3.connect(index_path) as db:  # OpenClaw re-indexes one chunk in place
        db.execute("UPDATE memory_index_chunks SET embedding = ? WHERE id = 'c040'", (f64(*best),))
    after = _vector(index_path, q, 5, cache)
    assert after[0][0][0] == "c040" and after != before
    assert after == _vector(index_path, q, 5, None)
    with sqlite3.connect(index_path) as db:  # a deleted and a new chunk
        db.execute("DELETE FROM memory_index_chunks WHERE id = 'c040'")
        db.execute(
            "INSERT INTO memory_index_chunks (id, path, source, start_line, end_line, hash, model,"
            " text, embedding, updated_at) VALUES ('new', 'memory/new.md', 'memory', 1, 1, 'h',"
            " 'fake-embed', 'new note', ?, 1)",
            (f64(*(best * 3)),),
        )
    latest = _vector(index_path, q, 5, cache)
    assert latest[0][0][0] == "new"
    assert latest == _vector(index_path, q, 5, None)
    assert cache.builds == 3


REVISION = """
CREATE TRIGGER rev_{0} AFTER {0} ON memory_index_chunks
BEGIN UPDATE memory_index_state SET revision = revision + 1 WHERE id = 1; END;
"""


def test_revision_triggers_let_transcript_writes_keep_the_cache(index_path: Path) -> None:
    with sqlite3.connect(index_path) as db:
        for event in ("INSERT", "UPDATE", "DELETE"):
            db.executescript(REVISION.format(event))
    cache = VectorCache()
    q = [1.0, -1.0, 0.5, 0.0, 2.0, 0.0, 0.0, 1.0]
    first = _vector(index_path, q, 5, cache)
    with sqlite3.connect(index_path) as db:  # OpenClaw appends to a transcript
        db.execute("INSERT INTO transcript_events VALUES ('s1', 1, '{}')")
    assert _vector(index_path, q, 5, cache) == first and cache.builds == 1
    best = np.array(q) / np.linalg.norm(q)
    with sqlite3.connect(index_path) as db:  # and re-indexes one chunk in place
        db.execute("UPDATE memory_index_chunks SET embedding = ? WHERE id = 'c040'", (f64(*best),))
    after = _vector(index_path, q, 5, cache)
    assert after[0][0][0] == "c040" and cache.builds == 2
    assert after == _vector(index_path, q, 5, None)


def test_without_revision_triggers_any_write_counts(index_path: Path) -> None:
    with sqlite3.connect(index_path) as db:  # a bump on insert only is not enough
        db.executescript(REVISION.format("INSERT"))
    cache = VectorCache()
    q = [1.0] * DIMS
    _vector(index_path, q, 5, cache)
    with sqlite3.connect(index_path) as db:
        db.execute("INSERT INTO transcript_events VALUES ('s1', 1, '{}')")
    _vector(index_path, q, 5, cache)
    assert cache.builds == 2


def test_json_vectors_before_schema_23(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    chunks = _chunks(rng, 30)
    for c in chunks:  # before v23 the vectors are JSON arrays
        emb = c["embedding"]
        assert isinstance(emb, bytes)
        vec = np.frombuffer(emb, dtype="<f8") if len(emb) % 8 == 0 else None
        c["embedding"] = (
            "[" + ", ".join(repr(float(v)) for v in vec) + "]" if vec is not None else "[1, 2"
        )
    path = make_v23(tmp_path / "openclaw-agent.sqlite", chunks, text_embeddings=True)
    cache = VectorCache()
    for _ in range(3):
        q = list(rng.standard_normal(DIMS))
        assert _vector(path, q, 7, cache) == _vector(path, q, 7, None)
    assert cache.builds == 1


def test_a_query_the_matrix_cannot_answer_takes_the_scan(index_path: Path) -> None:
    cache = VectorCache()
    for q in ([1.0] * 5, [0.0] * DIMS, [1e-300] * DIMS):  # short, zero, tiny
        assert _vector(index_path, q, 6, cache) == _vector(index_path, q, 6, None)


def test_whole_search_is_the_same_with_and_without_the_cache(index_path: Path) -> None:
    rng = np.random.default_rng(9)
    for query in ("tea deploy", "coffee", "note 12", "n3.md"):
        q = list(rng.standard_normal(DIMS))
        with open_memory_index(index_path) as idx:
            fast = memory_search(idx, query, now_ms=NOW, embedder=Fixed(q), min_score=0.0)
            slow = memory_search(
                idx, query, now_ms=NOW, embedder=Fixed(q), min_score=0.0, vector_cache=None
            )
        assert _close(fast.to_json()) == _close(slow.to_json())
        assert fast.mode == "hybrid" and fast.results
        origins = {c.time_from for c in fast.candidates}
        assert {"evergreen", "path-date", "index-mtime"} <= origins


def test_searches_from_several_threads_answer_as_one_at_a_time(
    index_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server's threads share the vector worker: a search whose worker is busy with
    another's product takes every block itself; each answer is the one it gives alone."""
    monkeypatch.setattr(scan_mod, "SPLIT_MIN", 0)  # blocks even over 60 rows
    monkeypatch.setattr(scan_mod, "_START_WAIT", 0.0)  # nobody waits for the busy worker
    rng = np.random.default_rng(31)
    asks = [(query, list(rng.standard_normal(DIMS))) for query in ("tea", "note 12", "coffee")]
    asks *= 4

    def search(query: str, q: list[float]) -> Any:
        with open_memory_index(index_path) as idx:
            found = memory_search(idx, query, now_ms=NOW, embedder=Fixed(q), min_score=0.0)
        return found.to_json()

    alone = [search(query, q) for query, q in asks]
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(lambda a: search(*a), asks))
    assert together == alone


def _candidates(rng: np.random.Generator, n: int) -> list[MemoryCandidate]:
    words = ["tea", "coffee", "deploy", "friday", "plan", "note", "sam", "db", "x"]
    out = []
    for i in range(n):
        k = int(rng.integers(0, 6))
        snippet = " ".join(rng.choice(words, size=k)) if k else rng.choice(["", "  ", "--", "..."])
        score = float(rng.choice([0.5, 0.25, 0.75])) if i % 3 == 0 else float(rng.random())
        hit = MemoryHit(f"i{i}", "p.md", i, i, "memory", str(snippet))
        out.append(MemoryCandidate(hit, score=score))
    return out


def test_mmr_over_scores_whose_span_overflows_is_the_loops() -> None:
    """Finite scores, an infinite span: NaN relevance, which OpenClaw's loop passes over."""
    items = _candidates(np.random.default_rng(4), 12)
    items[0].score, items[1].score = 1.7e308, -1.7e308
    loop = [c.hit.id for c in _mmr_loop(items, 0.7)]
    assert [c.hit.id for c in mmr_picks(items, 0.7)] == loop
    assert [c.hit.id for c in mmr_picks(items, 0.7, lazy=False)] == loop
    assert len(loop) < len(items)  # the loop dropped one: a real difference to keep


@pytest.mark.parametrize("seed", range(10))
def test_mmr_on_arrays_picks_as_the_loop(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(9, 80)) if seed % 4 else int(rng.integers(200, 330))  # a search's size
    items = _candidates(rng, n)
    for lam in (0.7, 0.0, 0.5, 0.999):
        loop = [c.hit.id for c in _mmr_loop(items, lam)]
        assert [c.hit.id for c in _mmr_arrays(items, lam)] == loop
        # one similarity row per pick (the first picks), then the matrix: the same picks
        assert [c.hit.id for c in _mmr_arrays(items, lam, by_rows=n)] == loop
        assert [c.hit.id for c in mmr_picks(items, lam)] == loop
        for rows in (1, 5):  # the first picks among the items that can be them, then all
            assert [c.hit.id for c in _mmr_arrays(items, lam, by_rows=rows)] == loop


@pytest.mark.parametrize("min_score", [0.0, 0.3, 0.45, 0.6, 2.0])
def test_results_ranked_only_as_far_as_needed_are_the_same(
    index_path: Path, min_score: float
) -> None:
    """``rank_all=False`` (the MCP tool's search): the same results, ranks and order."""
    rng = np.random.default_rng(int(min_score * 100))
    fewer = 0
    for query in ("tea deploy", "coffee", "note 12", "n3.md", "nothing here"):
        for max_results in (1, 3, 6, 50):
            q = list(rng.standard_normal(DIMS))
            with open_memory_index(index_path) as idx:
                args: dict[str, Any] = {"now_ms": NOW, "embedder": Fixed(q)}
                full = memory_search(
                    idx, query, max_results=max_results, min_score=min_score, **args
                )
                part = memory_search(
                    idx, query, max_results=max_results, min_score=min_score, rank_all=False,
                    **args,
                )  # fmt: skip
            assert part.to_json()["results"] == full.to_json()["results"]
            ranked = [c.hit.id for c in part.candidates]
            assert ranked == [c.hit.id for c in full.candidates][: len(ranked)]
            assert [c.to_json("hybrid") for c in part.candidates] == [
                c.to_json("hybrid") for c in full.candidates[: len(ranked)]
            ]
            fewer += len(ranked) < len(full.candidates)
    assert fewer  # the point: fewer placed than all, where the answer allows


def _select_as_openclaw(
    merged: list[MemoryCandidate], keyword: list[MemoryHit], max_results: int, min_score: float
) -> list[MemoryCandidate]:
    """``selectHybridSearchResults`` as OpenClaw writes it (the whole order read)."""

    def key(h: MemoryHit) -> str:
        return f"{h.source}:{h.path}:{h.start_line}:{h.end_line}"

    strict = [c for c in merged if c.score >= min_score]
    selected = strict[:max_results]
    if not keyword or len(selected) == max_results:
        return selected
    keys = {key(h) for h in keyword}
    if not strict:
        return [c for c in merged if c.score >= 0 and key(c.hit) in keys][:max_results]
    seen = {key(c.hit) for c in selected}
    for c in merged:
        if len(selected) == max_results:
            break
        if c.score < min_score and c.vector_score == 0 and key(c.hit) in keys:
            if key(c.hit) not in seen:
                seen.add(key(c.hit))
                selected.append(c)
    return selected


@pytest.mark.parametrize("seed", range(40))
def test_selection_read_as_far_as_needed_is_openclaws(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 40))
    merged = []
    for i in range(n):  # few ranges: the same range twice (seen), scores around minScore
        line = int(rng.integers(0, 12))
        hit = MemoryHit(f"c{i}", f"p{line % 3}.md", line, line + 1, "memory", "x")
        score = float(rng.choice([-0.1, 0.1, 0.3, 0.5, 0.9, float("nan")]))
        vector = float(rng.choice([0.0, 0.0, 0.4]))
        merged.append(MemoryCandidate(hit, vector_score=vector, score=score))
    keyword = [c.hit for c in merged if rng.random() < 0.6]
    keyword += [MemoryHit("k", "p1.md", 3, 4, "memory", "x")] * int(rng.integers(0, 2))
    min_score = float(rng.choice([0.0, 0.2, 0.4, 0.95]))
    max_results = int(rng.integers(-3, 10))  # a negative one: all but the last -n
    order = [merged[i] for i in rng.permutation(n)]
    ranking = HybridOrder(merged, order[:2], iter(order[2:]))
    chosen = select_hybrid(ranking, keyword, max_results, min_score)
    assert [c.hit.id for c in chosen] == [
        c.hit.id for c in _select_as_openclaw(order, keyword, 200, min_score)[:max_results]
    ]


def test_a_matrix_too_big_to_keep_its_hits_reads_them(
    index_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past HITS_MAX_ROWS the matrix keeps no hit rows: the search reads them, the same answer."""

    rng = np.random.default_rng(21)
    small, kept = VectorCache(), VectorCache()
    for query in ("tea deploy", "n3.md"):
        q = list(rng.standard_normal(DIMS))
        with open_memory_index(index_path) as idx:
            args: dict[str, Any] = {"now_ms": NOW, "embedder": Fixed(q), "min_score": 0.0}
            with_rows = memory_search(idx, query, vector_cache=kept, **args)
            monkeypatch.setattr(vectors, "HITS_MAX_ROWS", 5)
            without = memory_search(idx, query, vector_cache=small, **args)
            monkeypatch.undo()
        assert without.to_json() == with_rows.to_json()
        assert next(iter(small._entries.values())).hits == {}
        assert len(next(iter(kept._entries.values())).hits) == 60


def test_a_matrix_too_big_to_keep_its_vectors_reads_them_again(
    index_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past RAW_MAX_BYTES the candidates' float64 vectors come from SQLite: the same scores."""

    rng = np.random.default_rng(22)
    with open_memory_index(index_path) as idx:
        kept = VectorCache().matrix(idx, ["fake-embed"], [])
        monkeypatch.setattr(vectors, "RAW_MAX_BYTES", 8 * DIMS)
        reread = VectorCache().matrix(idx, ["fake-embed"], [])
        assert kept.raw is not None and reread.raw is None
        for _ in range(5):
            q = list(rng.standard_normal(DIMS))
            with_raw = top_rows(idx, kept, q, 20)
            assert with_raw is not None and top_rows(idx, reread, q, 20) == with_raw


@pytest.mark.parametrize("seed", range(20))
def test_records_ordered_by_score_then_ties_are_sort_bys_order(seed: int) -> None:
    """memsearch_merge's order of the other candidates: the same as sorting them all by key."""
    from core.openclaw.memsearch_merge import _non_exact_key, _non_exact_order
    from core.openclaw.memsearch_records import MemoryHit

    rng = np.random.default_rng(seed)
    records = []
    for i in range(int(rng.integers(1, 60))):
        score = float(rng.choice([0.0, -0.0, 0.25, 0.5, float(rng.random())]))
        ranking = float(rng.choice([score, 0.1, 0.3]))
        path = str(rng.choice(["a.md", "B.md", "b.md", "memory/x.md"]))
        start = int(rng.integers(1, 4))
        hit = MemoryHit(f"c{i}", path, start, start + int(rng.integers(0, 3)), "memory", "")
        fields = ((hit.id, hit.path, hit.start_line, hit.end_line, "memory", ""),)
        lexical = float(rng.choice([0.0, 0.2]))
        rec: list[object] = [None] * 20
        rec[0], rec[1] = (hit, None) if i % 2 else (None, fields)
        rec[11], rec[18], rec[19] = lexical, ranking, score
        records.append(tuple(rec))
    cands = [
        MemoryCandidate(
            MemoryHit(f"c{i}", *(r[1][0][1:4] if r[1] else (r[0].path, r[0].start_line,
                      r[0].end_line)), "memory", ""),
            lexical_rank=r[11], ranking_score=r[18], score=r[19],
        )
        for i, r in enumerate(records)
    ]  # fmt: skip
    expected = [int(c.hit.id[1:]) for c in sorted(cands, key=_non_exact_key)]
    assert [records.index(r) for r in _non_exact_order(records)] == expected


def test_float32_vectors_are_kept_as_float32_with_the_same_scores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model's float32 output stored as float64: kept in half the memory, scored the same."""

    rng = np.random.default_rng(23)
    chunks = _chunks(rng, 40)
    for c in chunks:  # every value a float32 one (the odd ones too)
        if isinstance(c["embedding"], bytes) and len(c["embedding"]) % 8 == 0:
            values = np.frombuffer(c["embedding"], dtype="<f8")
            if np.all(np.abs(values) < 1e30):  # (the extreme norm stays: an odd row)
                c["embedding"] = f64(*values.astype(np.float32).astype(np.float64))
    meta = {"model": "fake-embed", "provider": "openai-compatible", "sources": ["memory"],
            "ftsTokenizer": "unicode61", "vectorDims": DIMS}  # fmt: skip
    path = make_v23(tmp_path / "openclaw-agent.sqlite", chunks, meta=meta)
    with open_memory_index(path) as idx:
        kept = VectorCache().matrix(idx, ["fake-embed"], [])
        assert kept.raw is not None and kept.raw.dtype == np.float32
        monkeypatch.setattr(vectors, "RAW_MAX_BYTES", 0)
        reread = VectorCache().matrix(idx, ["fake-embed"], [])
        assert reread.raw is None
        for _ in range(5):
            q = list(rng.standard_normal(DIMS))
            found = top_rows(idx, kept, q, 20)
            assert found is not None and found == top_rows(idx, reread, q, 20)


def test_a_generations_tables_share_one_object_per_string(index_path: Path) -> None:
    """canonical(): the cached hits' ids and snippets are the objects a later lookup gets;
    a write to the index starts a new dictionary (the old strings go with their tables)."""
    from core.openclaw.memsearch_vectors import _CANON, MAX_ENTRIES, canonical

    def fresh(text: str) -> str:
        return (text + ".")[:-1]  # an equal string, another object

    with open_memory_index(index_path) as idx:
        kept = VectorCache().matrix(idx, ["fake-embed"], [])
        cid, _, _, _, _, snippet = kept.hits[min(kept.hits)]
        canon = canonical(idx)
        assert canon(fresh(cid)) is cid and canon(fresh(snippet)) is snippet
        first = canon(fresh("a text"))
        assert canonical(idx)(fresh("a text")) is first
    with sqlite3.connect(index_path) as db:
        db.execute("DELETE FROM memory_index_chunks WHERE id = 'c001'")
    db.close()
    with open_memory_index(index_path) as idx:
        assert canonical(idx)(fresh("a text")) is not first
    assert len(_CANON) <= MAX_ENTRIES


@pytest.mark.parametrize("cache", [VectorCache(), None], ids=["cached", "scan"])
def test_an_extreme_norm_scores_as_in_javascript_without_a_warning(
    index_path: Path, cache: VectorCache | None
) -> None:
    """A vector whose norm passes 1e308 scores 0, as OpenClaw's ``cosineSimilarity``
    gives in IEEE doubles, and numpy's overflow warning never reaches the host's stderr
    (it did, 24 times a test run)."""
    import warnings

    q = [1.0] * DIMS
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found, _ = _vector(index_path, q, 200, cache)
    assert ["c015", 0.0] in [[cid, score] for cid, score, *_ in found]
