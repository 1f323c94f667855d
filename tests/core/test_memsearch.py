"""OpenClaw 2026.9.6's memory search rules, one by one, with hand-computed scores.

The indexes are built with the real v23 DDL (tests/core/data); bm25 ranks are
SQLite's own (read back where a score depends on one), everything else is
computed here by hand from the formulas of docs/notes/openclaw-sqlite.md section 6.
"""

from __future__ import annotations

import math
import os
import sqlite3
from typing import TYPE_CHECKING, Any

import pytest

from core.openclaw.memindex import open_memory_index
from core.openclaw.memsearch import memory_search
from core.openclaw.memsearch_embed import (
    EmbedError,
    OpenAIQueryEmbedder,
    SearchSettings,
    embedder_for,
    settings_from_config,
)
from core.openclaw.memsearch_keyword import fallback_terms
from core.openclaw.memsearch_rank import (
    PATH_CACHES,
    _warm_paths,
    importance_multiplier,
    is_evergreen,
    memory_date_ms,
    warm_path_caches,
)
from core.openclaw.memsearch_text import (
    bm25_rank_to_score,
    build_fts_query,
    exact_path_matcher,
    extract_keywords,
    fts_rank_scores,
    path_forms,
)
from tests.core.test_memindex import f64, make_index, make_v23
from tests.llm_server import Reply

if TYPE_CHECKING:
    from pathlib import Path

DAY = 86_400_000
NOW = 1_795_700_000_000  # 2026-11-26T13:33:20Z
Q = (1.0, 0.0, 0.0)


def unit(c: float) -> bytes:
    """A stored vector whose cosine with :data:`Q` is *c*."""
    return f64(c, math.sqrt(1 - c * c), 0.0)


class Fixed:
    """A query embedder that answers one vector (the interface's test double)."""

    provider = "openai-compatible"
    model = "fake-embed"

    def __init__(self, vector: tuple[float, ...] = Q, fail: str | None = None) -> None:
        self.vector, self.fail, self.calls = list(vector), fail, 0

    def embed_query(self, text: str) -> list[float]:
        self.calls += 1
        if self.fail:
            raise EmbedError(self.fail)
        return self.vector


def fts_rank(path: Path, match: str) -> dict[str, float]:
    db = sqlite3.connect(path)
    rows = db.execute(
        "SELECT id, rank FROM memory_index_chunks_fts WHERE memory_index_chunks_fts MATCH ?"
        " AND memory_index_chunks_fts.rank MATCH 'bm25()'",
        (match,),
    ).fetchall()
    db.close()
    return {str(i): float(r) for i, r in rows}


def boost(query_tokens: list[str], text_tokens: list[str], path_hits: int, length: int) -> float:
    overlap = sum(1 for q in query_tokens if q in text_tokens)
    return (
        overlap / len(query_tokens) * 0.45
        + overlap / max(len(set(text_tokens)), 1) * 0.2
        + 0.18 * path_hits
        + min(length / 160, 0.18)
    )


FILLER = [
    {"id": f"f{i}", "path": f"memory/topic-{i}.md", "text": f"unrelated note number {i} about tea"}
    for i in range(10)
]


def run(path: Path, query: str, **kw: Any) -> Any:
    kw.setdefault("now_ms", NOW)
    with open_memory_index(path) as idx:
        return memory_search(idx, query, **kw)


def by_path(result: Any) -> dict[str, Any]:
    return {c.hit.path: c for c in result.candidates}


# -- notes section 5: the real run, recomputed ---------------------------------------


DATED_TEXT = "we deploy on friday after the weekly planning meeting with everyone in the office"


@pytest.fixture
def notes_index(tmp_path: Path) -> Path:
    memory_text = "Deploy: deploy, deploy! DEPLOY deploy.\nDeploy deploy deploy.\n"
    return make_v23(
        tmp_path / "openclaw-agent.sqlite",
        [
            {"id": "m", "path": "MEMORY.md", "text": memory_text,
             "embedding": unit(0.16369372606277466)},
            {"id": "u", "path": "USER.md", "start": 14, "end": 14, "text": "Name: Sam",
             "embedding": unit(0.567058652639389)},
            {"id": "d", "path": "memory/2026-11-25.md", "text": DATED_TEXT,
             "embedding": unit(-0.456)},
            {"id": "s", "path": "sessions/main/s1.jsonl", "source": "sessions",
             "text": "User: deploy deploy deploy", "embedding": unit(0.99)},
            *({**f, "embedding": unit(0.01)} for f in FILLER),
            # more chunks holding "deploy" (other source) lower its bm25 weight
            *({"id": f"s{i}", "path": f"sessions/main/{i}.jsonl", "source": "sessions",
               "text": f"User: deploy later {i}", "embedding": unit(0.01)} for i in range(6)),
        ],
    )  # fmt: skip


def test_notes_section_5_hybrid_scores(notes_index: Path) -> None:
    result = run(notes_index, "deploy", embedder=Fixed())
    assert result.mode == "hybrid" and result.reason is None
    got = [(c.hit.path, c.hit.start_line, c.hit.end_line) for c in result.results]
    assert got == [("MEMORY.md", 1, 3), ("USER.md", 14, 14)]
    memory, user = result.results
    # 0.7 * vectorScore + 0.3 * the boosted keyword score, capped at 1 (not textScore)
    assert memory.keyword_score == 1.0
    assert 0 < memory.text_score < 1
    assert memory.score == pytest.approx(0.7 * 0.16369372606277466 + 0.3, abs=1e-15)
    assert memory.score == pytest.approx(0.41458560824394225, abs=1e-15)
    assert (memory.time_from, memory.decay) == ("evergreen", 1.0)
    assert user.score == pytest.approx(0.3969410568475723, abs=1e-15)
    assert user.text_score == 0 and user.keyword_score == 0
    # the dated note matched FTS but its cosine is negative: under minScore, dropped
    dated = by_path(result)["memory/2026-11-25.md"]
    assert dated.vector_score == pytest.approx(-0.456, abs=1e-15)
    text_score = bm25_rank_to_score(fts_rank(notes_index, '"deploy"')["d"])
    assert dated.text_score == pytest.approx(text_score, abs=1e-15)
    kw = text_score + boost(["deploy"], DATED_TEXT.split(), 0, len(DATED_TEXT))
    assert kw < 1  # not capped
    assert dated.keyword_score == pytest.approx(kw, abs=1e-15)
    assert dated.content_score == pytest.approx(0.7 * -0.456 + 0.3 * kw, abs=1e-15)
    assert dated.age_days == pytest.approx((NOW - memory_date_ms(dated.hit.path)) / DAY)
    assert dated.below_min_score and not dated.selected
    # the session chunk has the best cosine but sessions are not searched by default
    assert "sessions/main/s1.jsonl" not in by_path(result)
    payload = result.to_json()
    first = payload["results"][0]
    assert list(first)[:8] == [
        "path", "startLine", "endLine", "score", "vectorScore", "textScore", "snippet", "source",
    ]  # fmt: skip
    assert first["memlens"]["keywordScore"] == 1.0


def test_notes_section_5_fts_only_score(tmp_path: Path) -> None:
    text = "# Memory\n\nThe deploy runs every Friday via `make deploy`.\n"
    path = make_v23(
        tmp_path / "openclaw-agent.sqlite",
        [{"id": "m", "path": "MEMORY.md", "text": text, "model": "fts-only"}],
        meta={"model": "fts-only", "provider": "none", "ftsTokenizer": "unicode61"},
    )
    result = run(path, "deploy", no_embed_reason='memory.search.provider is "none"')
    assert result.mode == "fts-only"
    assert result.reason == 'memory.search.provider is "none"'
    (hit,) = result.results
    # bm25 ~ 0 (one document) + 0.45 * 1 + 0.2 * (1/8 distinct tokens) + min(57/160, 0.18)
    assert hit.text_score == pytest.approx(1.3749981e-6, rel=1e-6)
    assert hit.score == pytest.approx(0.6550013749981094, abs=1e-15)
    assert "vectorScore" not in result.to_json()["results"][0]


# -- keyword side -------------------------------------------------------------------


def test_fts_query_and_keywords() -> None:
    assert build_fts_query('deploy "now" on-call_x') == '"deploy" AND "now" AND "on" AND "call_x"'
    assert build_fts_query("?!") is None
    assert extract_keywords("What did we decide about the Billing deploy on 2026?") == [
        "decide",
        "billing",
        "deploy",
    ]
    assert fallback_terms("deploy", "unicode61") == []  # the whole query is no fallback
    assert bm25_rank_to_score(-3.0) == 0.75 and bm25_rank_to_score(1.0) == 0.5
    assert bm25_rank_to_score(float("nan")) == 0.001


def test_keyword_fallback_ranks_against_the_whole_query(tmp_path: Path) -> None:
    path = make_v23(
        tmp_path / "openclaw-agent.sqlite",
        [{"id": "b", "path": "memory/payments.md", "text": "billing talks to stripe"}, *FILLER],
    )
    query = "what did we decide about billing"
    result = run(path, query, no_embed_reason="test")
    (hit,) = result.results  # the AND query finds nothing; "billing" alone does
    text_score = bm25_rank_to_score(fts_rank(path, '"billing"')["b"])
    tokens = ["what", "did", "we", "decide", "about", "billing"]
    want = text_score + boost(tokens, ["billing", "talks", "to", "stripe"], 0, 23)
    assert want < 1
    assert hit.score == pytest.approx(want, abs=1e-15)


def test_path_forms_are_known_only_when_every_path_is_text(tmp_path: Path) -> None:
    """An older (not STRICT) index may hold a path as bytes: no set of forms stands for it."""
    path = make_index(tmp_path / "main.sqlite")
    with sqlite3.connect(path) as db:
        db.execute("UPDATE chunks SET path = CAST(path AS BLOB) WHERE rowid = 1")
        (texts,) = db.execute(
            "SELECT count(DISTINCT path) FROM chunks WHERE typeof(path) = 'text'"
        ).fetchone()
    with open_memory_index(path) as idx:
        is_evergreen.cache_clear()
        assert _warm_paths(idx) is None
    assert texts and is_evergreen.cache_info().currsize == texts  # the text ones still warmed


def test_exact_path_tiers_come_first(tmp_path: Path) -> None:
    assert exact_path_matcher("MEMORY.md")("MEMORY.md") == 3
    assert exact_path_matcher("deploy.md")("memory/deploy.md") == 2
    assert exact_path_matcher("deploy")("memory/deploy.md") == 1
    assert exact_path_matcher("memory/deploy")("memory/deploy.md") == 0
    path = make_v23(
        tmp_path / "openclaw-agent.sqlite",
        [
            {"id": "a", "path": "memory/deploy.md", "text": "checklist", "embedding": unit(0.0)},
            {"id": "b", "path": "MEMORY.md", "text": "deploy deploy deploy on friday",
             "embedding": unit(0.9)},
            *({**f, "embedding": unit(0.01)} for f in FILLER),
        ],
    )  # fmt: skip
    forms = frozenset({"memory/deploy.md", "deploy.md", "deploy"})
    assert exact_path_matcher("deploy", forms)("memory/deploy.md") == 1
    assert exact_path_matcher("Deploy.md", forms)("memory/deploy.md") == 2
    assert exact_path_matcher("billing", forms)("memory/billing.md") == 0  # no path's form
    # the third search finds the index's path forms kept (seen unchanged twice): the same tiers
    kept = PATH_CACHES.builds
    for _ in range(3):
        result = run(path, "deploy", embedder=Fixed())
        first, second = result.results[:2]
        assert (first.hit.path, first.exact, first.score) == ("memory/deploy.md", 1, 1.0)
    assert PATH_CACHES.builds == kept + 1
    with open_memory_index(path) as idx:  # the forms kept: every path's, whole, name and stem
        kept_forms = warm_path_caches(idx)
        paths = {r[0] for r in idx.db.rows("SELECT DISTINCT path FROM memory_index_chunks")}
    assert kept_forms == {form for p in paths for form in path_forms(p)}
    assert {"memory/deploy.md", "deploy.md", "deploy"} <= kept_forms
    # an exact hit ranks by (1 + content) / 2 before its score becomes 1
    assert first.ranking_score == pytest.approx((1 + first.content_score) / 2)
    assert second.hit.path == "MEMORY.md" and second.exact == 0
    # keyword-only: the path table alone finds memory/deploy.md (its text lacks "deploy")
    for query in ("deploy", "deploy.md"):
        result = run(path, query, no_embed_reason="test")
        first = result.results[0]
        assert (first.hit.path, first.exact, first.score, first.has_body) == (
            "memory/deploy.md", 1 if query == "deploy" else 2, 1.0, False
        )  # fmt: skip


def test_decay_evergreen_and_importance(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    notes = ws / "notes.md"
    notes.write_text("deploy notes")
    os.utime(notes, ns=(0, (NOW - 60 * DAY) * 1_000_000))
    path = make_v23(
        tmp_path / "openclaw-agent.sqlite",
        [
            {"id": "old", "path": "memory/2026-10-27.md", "text": "deploy", "embedding": unit(0.8)},
            {"id": "topic", "path": "memory/topic.md", "text": "deploy", "embedding": unit(0.8)},
            {"id": "n", "path": "notes.md", "text": "deploy notes", "embedding": unit(0.8)},
            {"id": "imp", "path": "USER.md", "text": "deploy", "embedding": unit(0.8)},
            *({**f, "embedding": unit(0.01)} for f in FILLER),
        ],
        recall=[("imp", 10)],
    )
    result = run(path, "deploy", embedder=Fixed(), workspace=ws, min_score=0)
    c = by_path(result)
    assert memory_date_ms("memory/2026-10-27.md") == NOW - 30 * DAY - 48_800_000
    assert c["memory/2026-10-27.md"].time_from == "path-date"
    age = (NOW - memory_date_ms("memory/2026-10-27.md")) / DAY
    assert c["memory/2026-10-27.md"].decay == pytest.approx(0.5 ** (age / 30), rel=1e-12)
    assert c["memory/2026-10-27.md"].score == pytest.approx(
        c["memory/2026-10-27.md"].content_score * 0.5 ** (age / 30), rel=1e-12
    )
    assert (c["memory/topic.md"].time_from, c["memory/topic.md"].decay) == ("evergreen", 1.0)
    assert c["notes.md"].time_from == "file-mtime"
    assert c["notes.md"].decay == pytest.approx(0.25, rel=1e-9)  # 60 days: two half-lives
    assert c["USER.md"].importance_multiplier == 1.25
    assert c["USER.md"].score == pytest.approx(c["USER.md"].content_score * 1.25)
    assert importance_multiplier(1) == 0.8 and importance_multiplier(None) == 1.0
    assert is_evergreen("MEMORY.md") and not is_evergreen("memory/2026-01-01-x.md")
    # without a workspace the indexed mtime stands in for the file's
    c2 = by_path(run(path, "deploy", embedder=Fixed(), min_score=0))
    assert c2["notes.md"].time_from == "index-mtime"


def test_mmr_spreads_near_duplicates(tmp_path: Path) -> None:
    path = make_v23(
        tmp_path / "openclaw-agent.sqlite",
        [
            {"id": "a", "path": "memory/a.md", "text": "deploy the api gateway today",
             "embedding": unit(0.95)},
            {"id": "b", "path": "memory/b.md", "text": "deploy the api gateway today please",
             "embedding": unit(0.94)},
            {"id": "c", "path": "memory/c.md", "text": "rollback plan differs entirely",
             "embedding": unit(0.90)},
            *({**f, "embedding": unit(0.01)} for f in FILLER),
        ],
    )  # fmt: skip
    result = run(path, "rollout", embedder=Fixed())
    # by score: a, b, c; MMR puts the different c before b's near-copy of a
    assert [c.hit.path for c in result.results[:3]] == ["memory/a.md", "memory/c.md", "memory/b.md"]
    assert [c.order for c in result.results[:3]] == [1, 2, 3]


def test_min_score_max_results_and_keyword_fill(tmp_path: Path) -> None:
    path = make_v23(
        tmp_path / "openclaw-agent.sqlite",
        [
            *({"id": f"v{i}", "path": f"memory/v{i}.md", "text": "x", "embedding": unit(0.9 - i / 100)}
              for i in range(8)),
            {"id": "k", "path": "memory/k.md", "text": "zebra", "embedding": b"", "model": "fts-only"},
            *({**f, "embedding": unit(0.01)} for f in FILLER),
        ],
    )  # fmt: skip
    result = run(path, "zebra", embedder=Fixed(), max_results=3)
    assert [c.hit.path for c in result.results] == ["memory/v0.md", "memory/v1.md", "memory/v2.md"]
    result = run(path, "zebra", embedder=Fixed(), min_score=0.99)
    # nothing passes: only keyword hits with a score >= 0 come back
    (only,) = result.results
    assert only.hit.path == "memory/k.md" and only.vector_score == 0 and only.below_min_score
    result = run(path, "zebra", embedder=Fixed(), min_score=0.6, max_results=9)
    paths = [c.hit.path for c in result.results]
    assert paths[-1] == "memory/k.md"  # a keyword-only hit under minScore fills the list
    assert all(c.score >= 0.6 for c in result.results[:-1])


# -- modes and embedders --------------------------------------------------------------


def test_embedding_failure_is_said_plainly(notes_index: Path) -> None:
    result = run(notes_index, "deploy", embedder=Fixed(fail="cannot reach http://x/embeddings"))
    assert result.mode == "fts-only"
    assert result.reason == "the query could not be embedded: cannot reach http://x/embeddings"
    payload = result.to_json()
    assert payload["mode"] == "fts-only" and "cannot reach" in payload["reason"]
    assert all("vectorScore" not in r for r in payload["results"])
    assert run(notes_index, "deploy").reason == "no embedding provider"
    assert run(notes_index, "   ").mode == "empty"


def test_settings_from_config() -> None:
    raw = {
        "memory": {
            "search": {
                "provider": "openai-compatible",
                "model": "m1",
                "remote": {"baseUrl": "http://h/v1", "apiKey": "${MY_KEY}"},
                "query": {"maxResults": 4, "minScore": 2},
            }
        },
        "agents": {"list": [{"id": "ops", "memory": {"search": {"model": "m2"}}}]},
    }
    s = settings_from_config(raw, "main")
    assert (s.provider, s.model, s.base_url, s.max_results, s.min_score) == (
        "openai-compatible", "m1", "http://h/v1", 4, 1.0,
    )  # fmt: skip
    assert settings_from_config(raw, "ops").model == "m2"
    assert settings_from_config({}, "main") == SearchSettings()
    none = settings_from_config({"memory": {"search": {"provider": "none"}}})
    assert embedder_for(none)[0] is None and "none" in (embedder_for(none)[1] or "")
    assert "cannot embed" in (embedder_for(SearchSettings(provider="gemini"))[1] or "")


def test_http_embedder_against_a_real_server(server: Any) -> None:
    server.add(Reply(200, {"data": [{"index": 0, "embedding": [0.5, 0.25, 0]}]}), Reply(503, {}))
    settings = SearchSettings(
        provider="openai-compatible", model="fake-embed", base_url=server.url + "/v1",
        api_key_ref={"source": "env", "id": "MEMLENS_TEST_EMBED_KEY"},
    )  # fmt: skip
    emb = OpenAIQueryEmbedder(settings, environ={"MEMLENS_TEST_EMBED_KEY": "sk-test-123"})
    assert emb.embed_query("deploy") == [0.5, 0.25, 0.0]
    seen = server.seen[0]
    assert seen.path == "/v1/embeddings"
    assert seen.body == {"model": "fake-embed", "input": ["deploy"]}
    assert seen.headers["authorization"] == "Bearer sk-test-123"
    with pytest.raises(EmbedError, match="HTTP 503") as info:
        emb.embed_query("deploy")
    assert "sk-test" not in str(info.value)


def test_search_creates_no_file_beside_the_database(notes_index: Path) -> None:
    db = sqlite3.connect(notes_index)
    db.execute("PRAGMA journal_mode = WAL")
    db.close()
    before = sorted(p.name for p in notes_index.parent.iterdir())
    run(notes_index, "deploy", embedder=Fixed())
    run(notes_index, "MEMORY.md")
    assert sorted(p.name for p in notes_index.parent.iterdir()) == before


def test_model_mismatch_is_a_warning(notes_index: Path) -> None:
    other = Fixed()
    other.model = "another-model"
    result = run(notes_index, "deploy", embedder=other)
    assert any(
        "is not the index's 'fake-embed'" in p.message and "pauses its search" in p.message
        for p in result.problems
    )
    assert all(c.vector_score == 0 for c in result.candidates)  # no chunk of that model


def test_openai_without_a_key_never_calls_out() -> None:
    emb = OpenAIQueryEmbedder(SearchSettings(provider="openai"), environ={})
    with pytest.raises(EmbedError, match="no API key"):
        emb.embed_query("deploy")


def test_fts_rank_scores_are_the_scalar_mapping() -> None:
    ranks = [-3.0, 1.0, 0.0, -0.0, -1e-300, 5e-324, -1e308, float("nan"), float("inf"),
             float("-inf"), None, -7.123456789, 2.5]  # fmt: skip
    want = [bm25_rank_to_score(k) for k in ranks]
    assert fts_rank_scores(ranks) == want
    assert [math.copysign(1, x) for x in fts_rank_scores(ranks)] == [
        math.copysign(1, x) for x in want
    ]
