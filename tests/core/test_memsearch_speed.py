"""The speed-ups of OpenClaw's memory search change no answer.

The SQL functions registered once per connection (not once per search), the
ASCII word splitting by bytes, the sort keys' finiteness test and the caches keyed
by text or path: each against the plain computation it replaces, and the whole
search on one long-lived index against a fresh open, before and after the index
changes under it.
"""

from __future__ import annotations

import functools
import random
import re
import sqlite3
from typing import TYPE_CHECKING, Any

import pytest

from core.openclaw.memindex import open_memory_index
from core.openclaw.memsearch import memory_search
from core.openclaw.memsearch_boost import boost_matcher, boosted_score
from core.openclaw.memsearch_keyword import compare_keyword_hits, sort_keyword_hits
from core.openclaw.memsearch_rank import is_evergreen, memory_date_ms
from core.openclaw.memsearch_records import MemoryHit
from core.openclaw.memsearch_sqlfn import sql_functions
from core.openclaw.memsearch_text import (
    ascii_words,
    locale_cmp,
    locale_sort_key,
    lower_trimmed,
    mmr_tokens,
    search_tokens,
    sort_by,
    utf16_len,
)
from tests.core.test_memindex import make_v23

if TYPE_CHECKING:
    from pathlib import Path

NOW = 1_795_700_000_000
_WORD = re.compile(r"[a-z0-9_]+")


def _ascii_texts(n: int) -> list[str]:
    rng = random.Random(7)
    alphabet = [chr(i) for i in range(128)]
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))) for _ in range(n)] + [
        "",
        " ",
        "A_b-C9 d",
        "\x0b\x0cZZ\ttop\r\n",
        "___",
        "Deploy, DEPLOY; deploy!",
    ]


def test_ascii_words_split_as_the_regex() -> None:
    for text in _ascii_texts(3000):
        assert ascii_words(text).decode().split() == _WORD.findall(text.lower())
        assert search_tokens(text) == _WORD.findall(text.lower())


def test_mmr_tokens_of_ascii_texts_as_the_regex() -> None:
    for text in _ascii_texts(500):
        assert mmr_tokens(text) == frozenset(_WORD.findall(lower_trimmed(text)))


def _plain_boost(query: str, path: str, text: str, fts_score: float) -> float:
    """``scoreFallbackKeywordResult`` with every text token tested by the pattern."""
    words = [boost_matcher(t) for t in dict.fromkeys(search_tokens(query))]
    if not words:
        return fts_score
    tokens = search_tokens(text)
    overlap = sum(1 for w in words if any(w.whole.match(t) for t in tokens))
    path_boost = sum(0.18 for w in words if w.sub.search(path))
    lexical = (
        overlap / len(words) * 0.45
        + overlap / max(len(set(tokens)), 1) * 0.2
        + path_boost
        + min(utf16_len(text) / 160, 0.18)
    )
    return min(1.0, fts_score + lexical)


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("deploy tea", "The DEPLOY of tea, then tea again"),
        ("deploy tea", "the déploy of tea: ça va"),  # a non-ASCII text
        ("\u017fun", "sun and fun"),  # long s folds to s: an ASCII token matches it
        ("caf\u00e9 deploy", "caf\u00e9 deploy done"),
        ("under_score x9", "under_score X9 x9"),
        ("nothing", ""),
    ],
)
def test_boost_as_the_plain_computation(query: str, text: str) -> None:
    words = [boost_matcher(t) for t in dict.fromkeys(search_tokens(query))]
    for fts in (0.0, 0.25):
        got = boosted_score(words, "memory/deploy.md", text, fts)
        assert got == _plain_boost(query, "memory/deploy.md", text, fts)


def _cmp(a: tuple[float, str], b: tuple[float, str]) -> int:
    if a[0] != b[0]:
        return -1 if b[0] < a[0] else 1
    return -1 if a[1] < b[1] else int(a[1] > b[1])


@pytest.mark.parametrize(
    "scores",
    [
        [0.5, 0.25, 0.5, 1.0],
        [0.5, float("nan"), 0.25, 1.0],  # NaN: the comparator's own order
        [float("inf"), 0.5, float("-inf")],
        [1e308, 1e308, 0.5],  # finite, but their sum overflows: the comparator, same order
    ],
)
def test_sort_by_sorts_as_the_comparator(scores: list[float]) -> None:
    items = [(s, f"p{i}") for i, s in enumerate(scores)]
    got = sort_by(items, lambda t: (-t[0], t[1]), _cmp, [lambda t: t[0]])
    assert got == sorted(items, key=functools.cmp_to_key(_cmp))


def _cmp_locale(a: tuple[float, str], b: tuple[float, str]) -> int:
    if a[0] != b[0]:
        return -1 if b[0] < a[0] else 1
    return locale_cmp(a[1], b[1])


@pytest.mark.parametrize("seed", range(6))
def test_sort_by_with_a_stand_in_last_element(seed: int) -> None:
    """The key ends with the bare string; ties on the rest are sorted again by its locale key."""
    rng = random.Random(seed)
    names = ["B", "a", "_x", "a1", "A", "b", "10", "9", "\u00e9", "e"]
    scores = [0.5, 0.25] if seed % 2 else [float(i) for i in range(40)]  # many ties, or none
    items = [(rng.choice(scores), rng.choice(names) + str(i)) for i in range(30)]
    got = sort_by(
        items, lambda t: (-t[0], t[1]), _cmp_locale, [lambda t: t[0]],
        lambda t: locale_sort_key(t[1]),
    )  # fmt: skip
    assert got == sorted(items, key=functools.cmp_to_key(_cmp_locale))


@pytest.mark.parametrize("prefer_exact_body", [True, False])
def test_keyword_hit_sort_is_the_comparator(prefer_exact_body: bool) -> None:
    """Hits tied on everything but the id (a path's two chunks at one line) too."""
    rng = random.Random(5)
    hits = []
    for i in range(120):
        hits.append(MemoryHit(
            rng.choice(["B", "a", "_", "A", "e\u0301"]) + str(rng.randint(0, 3)) + f"-{i}",
            rng.choice(["MEMORY.md", "memory/a.md", "memory/B.md", "notes/\u00e9.md"]),
            rng.randint(1, 3), 9, "memory", "", rng.choice([1.0, 0.5]),
            rng.choice([0.25, 0.5]), rng.choice([0.0, 0.18]), rng.choice([0, 0, 2]),
            rng.random() < 0.5,
        ))  # fmt: skip
    want = sorted(
        hits,
        key=functools.cmp_to_key(
            functools.partial(compare_keyword_hits, prefer_exact_body=prefer_exact_body)
        ),
    )
    assert sort_keyword_hits(hits, prefer_exact_body) == want


def _tuple_locale_key(text: str) -> tuple[tuple[int, str], ...]:
    """The locale key as pairs (class, folded character): the order the string key keeps."""
    import unicodedata

    out = []
    for c in unicodedata.normalize("NFD", text):
        if unicodedata.combining(c):
            continue
        if c.isalpha():
            out.append((3, c.casefold()))
        elif c.isdigit():
            out.append((2, c))
        else:
            out.append((0, c) if c.isspace() else (1, c))
    return tuple(out)


def test_locale_key_orders_as_its_pairs() -> None:
    from core.openclaw.memsearch_text import locale_key

    rng = random.Random(17)
    alphabet = (
        "aAbBzZ09 _-./\x00\t\u00df\ufb01\u00e9e\u0301\u0130i\u03a3\u03c3\u00c5ss\u4e2d\U0001f600"
    )
    texts = ["", "s", "ss", "\u00df", "\u00dfa", "ssa", "fi", "\ufb01", "\ufb01x", "a\x00", "a"]
    texts += ["".join(rng.choices(alphabet, k=rng.randint(0, 6))) for _ in range(600)]
    for a in texts:
        for b in texts[:80]:
            ta, tb = _tuple_locale_key(a), _tuple_locale_key(b)
            ka, kb = locale_key(a), locale_key(b)
            assert (ta < tb, ta == tb) == (ka < kb, ka == kb), (a, b)


def test_path_caches_answer_as_fresh_calls() -> None:
    for path in ("memory/2026-11-01.md", "memory/2026-02-30.md", "MEMORY.md", "memory/x.md"):
        assert memory_date_ms(path) == memory_date_ms.__wrapped__(path)
        assert is_evergreen(path) == is_evergreen.__wrapped__(path)


def _chunks(n: int, extra: str = "") -> list[dict[str, Any]]:
    words = ("deploy", "tea", "coffee", "rollback", "Deploy", "caf\u00e9")
    return [
        {"id": f"c{i:03d}", "path": ("MEMORY.md", f"memory/2026-11-0{1 + i % 9}.md",
         f"notes/deploy{i % 3}.md")[i % 3], "start": 1 + i, "end": 2 + i,
         "text": f"note {i}: {words[i % 6]} and {words[(i * 5) % 6]} {extra}"}
        for i in range(n)
    ]  # fmt: skip


def _search(index: Any, query: str) -> dict[str, Any]:
    out: dict[str, Any] = memory_search(index, query, now_ms=NOW, embedder=None).to_json()
    return out


QUERIES = ("deploy", "tea coffee", "deploy0.md", "notes/deploy1.md", "caf\u00e9", "MEMORY")


def test_one_open_index_answers_as_a_fresh_open(tmp_path: Path) -> None:
    path = make_v23(tmp_path / "openclaw-agent.sqlite", _chunks(40))
    with open_memory_index(path) as index:
        functions = sql_functions(index)
        for _ in range(2):
            for q in QUERIES:
                with open_memory_index(path) as fresh:
                    assert _search(index, q) == _search(fresh, q)
        assert sql_functions(index) is functions  # registered once for the connection
        assert any(r["results"] for r in map(functools.partial(_search, index), QUERIES))


def test_a_changed_index_is_searched_as_it_is_now(tmp_path: Path) -> None:
    path = make_v23(tmp_path / "openclaw-agent.sqlite", _chunks(20))
    with open_memory_index(path) as index:
        before = _search(index, "zebra deploy")
        with sqlite3.connect(path) as db:
            db.execute(
                "INSERT INTO memory_index_chunks (id, path, source, start_line, end_line, hash,"
                " model, text, embedding, updated_at) VALUES ('new', 'memory/zebra.md', 'memory',"
                " 1, 2, 'h', 'fake-embed', 'zebra deploy zebra', x'', 1)"
            )
        db.close()
        after = _search(index, "zebra deploy")
        with open_memory_index(path) as fresh:
            assert after == _search(fresh, "zebra deploy")
    assert "memory/zebra.md" not in [r["path"] for r in before["results"]]
    assert after["results"][0]["path"] == "memory/zebra.md"


def test_no_two_connections_share_a_recall_signature(tmp_path: Path) -> None:
    """``data_version`` is per connection: a later one (maybe at a freed one's id) differs."""
    from core.openclaw.memsearch_chunks import _recall_signature

    path = make_v23(tmp_path / "openclaw-agent.sqlite", _chunks(20))
    serials, signatures = set(), set()
    for _ in range(12):
        with open_memory_index(path) as index:
            serials.add(index.db.serial)
            signatures.add(_recall_signature(index))
            index.db.close()
            index.db._connect()
            serials.add(index.db.serial)
    assert len(serials) == 24 and len(signatures) == 12


def test_a_reopened_connection_gets_the_functions_again(tmp_path: Path) -> None:
    path = make_v23(tmp_path / "openclaw-agent.sqlite", _chunks(20))
    with open_memory_index(path) as index:
        first = _search(index, "notes/deploy1.md")
        old = sql_functions(index)
        index.db.close()
        index.db._connect()  # as ReadOnlyDb.refresh reopens when a writer appears
        assert sql_functions(index) is not old
        assert _search(index, "notes/deploy1.md") == first


def _cands(snippets: list[str]) -> list[Any]:
    from core.openclaw.memsearch_records import MemoryCandidate, MemoryHit

    return [
        MemoryCandidate(MemoryHit(f"c{i}", f"p{i}.md", 1, 2, "memory", s), score=1.0 - i / 100)
        for i, s in enumerate(snippets)
    ]


SNIPPETS = [
    "deploy the tea service",
    "Deploy THE tea",
    "caf\u00e9 deploy \u4f60\u597d\u4e16\u754c",
    "\u4f60\u597d deploy",
    "",
    "   ",
    "!!!",
    "rollback, then deploy; tea",
    "x" * 30 + " tea",
    "d\u00e9ploy caf\u00e9",
    "tea",
]


def _loop_jaccard(items: list[Any]) -> list[list[float]]:
    from core.openclaw.memsearch_text import jaccard_similarity

    tokens = [mmr_tokens(c.hit.snippet) for c in items]
    out = []
    for a, ta in zip(items, tokens, strict=True):
        row = []
        for b, tb in zip(items, tokens, strict=True):
            if not ta and not tb:
                row.append(float(lower_trimmed(a.hit.snippet) == lower_trimmed(b.hit.snippet)))
            else:
                row.append(jaccard_similarity(ta, tb))
        out.append(row)
    return out


def test_jaccard_by_hashes_as_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    from core.openclaw import memsearch_mmr

    items = _cands(SNIPPETS)
    expected = _loop_jaccard(items)

    def pairs(sim: Any) -> list[list[float]]:  # MMR never reads an item against itself
        rows: list[list[float]] = sim.tolist() if hasattr(sim, "tolist") else sim
        return [[v for j, v in enumerate(row) if j != i] for i, row in enumerate(rows)]

    assert pairs(memsearch_mmr._jaccard_matrix([c.hit.snippet for c in items])) == pairs(expected)
    # every token the same hash: numbered one by one instead, the same matrix
    monkeypatch.setattr(memsearch_mmr, "hash", lambda _t: 7, raising=False)
    assert pairs(memsearch_mmr._jaccard_matrix([c.hit.snippet for c in items])) == pairs(expected)


def test_recall_keeps_live_chunks_with_their_rows(tmp_path: Path) -> None:
    from core.openclaw.memsearch_rank import attach_recall
    from core.openclaw.memsearch_records import MemoryHit

    path = make_v23(
        tmp_path / "openclaw-agent.sqlite",
        _chunks(12),
        recall=[("c001", 9), ("c004", 2)],
        provenance=[("c004", "owner", "interactive", 123)],
    )

    def hits(ids: list[str]) -> list[MemoryHit]:
        return [MemoryHit(i, "MEMORY.md", 1, 2, "memory", "s") for i in ids]

    with open_memory_index(path) as index:  # each side read on its own, as OpenClaw does
        first = attach_recall(index, hits(["c001", "gone", "c004"]))
        second = attach_recall(index, hits(["c004", "c007", "gone2"]))
    assert [h.id for h in first] == ["c001", "c004"] and first[0].importance == 9
    assert [h.id for h in second] == ["c004", "c007"]
    assert second[0].provenance is not None and second[0].importance == 2
    assert second[1].importance is None and second[1].provenance is None


def test_recall_join_reads_what_the_separate_reads_do(tmp_path: Path) -> None:
    from core.openclaw.memsearch_recall import live_recall

    path = make_v23(
        tmp_path / "openclaw-agent.sqlite",
        _chunks(12),
        recall=[("c001", 9), ("c004", None), ("c009", 3)],
        provenance=[("c004", "owner", "interactive", 123), ("c005", "agent", "cron", 5)],
    )
    ids = ["c001", "c004", "c005", "c007", "gone"]
    with open_memory_index(path) as index:
        found = live_recall(index, ids)
        assert found is not None  # OpenClaw's schema: one join
        live, attached = found
        assert live == {"c001", "c004", "c005", "c007"}
        assert attached == {i: r.attached() for i, r in index.recall_info(ids).items()}
        assert set(attached) == {"c001", "c004", "c005"}
        assert attached["c001"] == (9, None, None, None)


def test_recall_join_is_not_used_without_unique_keys(tmp_path: Path) -> None:
    from core.openclaw.memsearch_recall import live_recall

    path = make_v23(tmp_path / "openclaw-agent.sqlite", _chunks(6), recall=[("c001", 9)])
    with sqlite3.connect(path) as db:  # a recall table whose chunk ids may repeat
        db.execute("ALTER TABLE memory_index_chunk_recall_metadata RENAME TO old_recall")
        db.execute(
            "CREATE TABLE memory_index_chunk_recall_metadata"
            " (chunk_id TEXT, importance INTEGER, triggers TEXT, project_key TEXT)"
        )
        db.execute("INSERT INTO memory_index_chunk_recall_metadata VALUES ('c001', 2, NULL, NULL)")
        db.execute("INSERT INTO memory_index_chunk_recall_metadata VALUES ('c001', 8, NULL, NULL)")
    db.close()
    with open_memory_index(path) as index:
        assert live_recall(index, ["c001"]) is None
        with_rows = memory_search(index, "tea", now_ms=NOW, embedder=None).candidates
    assert any(c.hit.id == "c001" and c.hit.importance == 8 for c in with_rows)


@pytest.mark.parametrize("size", [0, 1, 7, 500])
def test_numbering_as_unique_and_a_stable_sort(size: int) -> None:
    import numpy as np

    from core.openclaw.memsearch_mmr import _number

    flat = np.random.default_rng(size).integers(-5, 40, size).astype(np.int64)
    order, local, counts = _number(flat)
    cols, inverse = np.unique(flat, return_inverse=True)
    assert local.tolist() == inverse.ravel().tolist()
    assert counts.tolist() == np.bincount(inverse.ravel(), minlength=cols.size).tolist()
    assert order.tolist() == np.argsort(inverse.ravel(), kind="stable").tolist()


def test_one_search_reads_data_version_once(tmp_path: Path) -> None:
    path = make_v23(tmp_path / "openclaw-agent.sqlite", _chunks(20))
    with open_memory_index(path) as index:
        for _ in range(3):  # every per-generation table built
            _search(index, "zebra deploy")
        pragmas = []
        rows = index.db.rows

        def counting(sql: str, params: Any = ()) -> Any:
            pragmas.append(sql == "PRAGMA data_version")
            return rows(sql, params)

        index.db.rows = counting  # type: ignore[method-assign]
        _search(index, "zebra deploy")
        assert sum(pragmas) == 1
        with index.db.one_version():
            version = index.db.data_version()
            with sqlite3.connect(path) as db:
                db.execute("DELETE FROM memory_index_chunks WHERE rowid = 1")
            db.close()
            assert index.db.data_version() == version  # pinned within
            with index.db.one_version():  # re-entrant
                assert index.db.data_version() == version
        assert index.db.data_version() != version  # and read again after


def test_an_index_s_paths_fill_the_path_caches(tmp_path: Path) -> None:
    from core.openclaw.memsearch_rank import PATH_CACHES
    from core.openclaw.memsearch_text import path_forms

    path = make_v23(tmp_path / "openclaw-agent.sqlite", _chunks(20))
    paths = {c["path"] for c in _chunks(20)}
    caches = (locale_sort_key, path_forms, memory_date_ms, is_evergreen)
    for cache in caches:
        cache.cache_clear()
    builds = PATH_CACHES.builds
    with open_memory_index(path) as index:
        for _ in range(2):  # built at the second search of an unchanged index
            _search(index, "tea")
    assert PATH_CACHES.builds == builds + 1
    for cache in caches:
        hits = cache.cache_info().hits
        for p in paths:
            cache(p)
        assert cache.cache_info().hits == hits + len(paths), cache


@pytest.mark.parametrize("corpus", ["mixed", "ascii"])
def test_keyword_only_hits_need_no_order_before_the_finish(
    tmp_path: Path, corpus: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The keyword hits unsorted where no limit cuts: the same answer, every candidate."""
    from core.openclaw import memsearch
    from core.openclaw.memsearch_keyword import search_keyword_with_fallback
    from tests.core.test_memsearch_postings import _index, _queries

    if corpus == "mixed":  # non-ASCII texts (no postings); "note" finds more than 200
        path = make_v23(tmp_path / "openclaw-agent.sqlite", _chunks(260))
        queries = [*QUERIES, "note", "note deploy", "what about tea and deploy", "note 7"]
    else:  # the postings corpus: underscores, phrases, the keyword fallback
        path = _index(tmp_path, 3)
        queries = [*_queries(random.Random(3), 40), "what about the deploy plan"]
    with open_memory_index(path) as index:
        for q in queries[:3]:
            _search(index, q)  # the per-generation tables built
        unordered = [_search(index, q) for q in queries]
        monkeypatch.setattr(
            memsearch,
            "search_keyword_with_fallback",
            lambda ctx, text, n, ordered=True: search_keyword_with_fallback(ctx, text, n),
        )
        assert [_search(index, q) for q in queries] == unordered
    assert sum(len(r["results"]) for r in unordered) > 40


def test_candidate_fields_keep_the_order_the_search_builds_them_in() -> None:
    """The hybrid merge's records and the keyword-only finish pass a candidate's fields by
    position (memsearch_merge: all of them up to ``score``)."""
    from dataclasses import fields

    from core.openclaw.memsearch_records import MemoryCandidate

    assert [f.name for f in fields(MemoryCandidate)][:19] == [
        "hit", "vector_score", "text_score", "keyword_score", "path_score", "exact",
        "has_vector", "has_keyword", "has_body", "content_score", "lexical_rank", "pre_decay",
        "decay", "age_days", "time_ms", "time_from", "importance_multiplier", "ranking_score",
        "score",
    ]  # fmt: skip


@pytest.mark.parametrize("seed", range(8))
def test_unordered_keyword_hits_with_a_nan_are_sorted_as_openclaw_sorts_them(seed: int) -> None:
    """A NaN score makes the comparator's order depend on its input's: then both sorts run."""
    import copy
    import math

    from core.openclaw.memsearch_keyword import limit_keyword_hits, merge_keyword_hits

    rng = random.Random(seed)
    hits = [
        MemoryHit(f"c{i}", f"memory/n{rng.randint(0, 5)}.md", i, i + 1, "memory", "",
                  rng.choice([0.5, 0.25, math.nan, 0.75]), rng.choice([0.1, math.nan, 0.2]),
                  0.0, 0, True)
        for i in range(40)
    ]  # fmt: skip
    rng.shuffle(hits)
    merges, answers = [], []
    for ordered in (True, False):
        merged = merge_keyword_hits([copy.deepcopy(hits)], "zzz", ordered)
        merges.append([h.id for h in merged])
        limit = 30 if seed % 2 else 100  # a cut, or none
        answers.append([h.id for h in limit_keyword_hits(merged, limit, True, ordered)])
    assert merges[0] == merges[1] and answers[0] == answers[1]
