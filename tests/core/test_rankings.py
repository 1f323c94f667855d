"""Named rankings (issue 19, item 2): the stemmer, the lab's scoring, live changes, the CLI.

The proof that the recommended ranking finds more than the agent's formula and than
rank-bm25 runs on one LoCoMo dev conversation copied into tmp_path (the whole dev
half is ``bench/bench_recall_lab.py``'s, see ``docs/notes/recall-lab.md``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import orjson
import pytest

from bench.corpus import write_store
from core.cli.main import run_cli
from core.embed.hash import HashEmbedder
from core.recall.evaluate import Label, evaluate
from core.recall.hybrid import SearchConfig, search
from core.recall.lab import evaluate_reference
from core.recall.rankings import (
    DEFAULT_RANKING,
    RANKINGS,
    SEED,
    Ranking,
    get_ranking,
    ranked_search,
    text_tokens,
)
from core.recall.stem import STOPWORDS, stem
from core.recall.warm_store import StoreSettings, WarmStore

NOW = 1_790_000_000_000
LOCOMO = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "locomo-dev"


# -- the stemmer ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("caresses", "caress"),
        ("ponies", "poni"),
        ("cats", "cat"),
        ("agreed", "agre"),
        ("feed", "feed"),
        ("plastered", "plaster"),
        ("motoring", "motor"),
        ("sing", "sing"),
        ("hopping", "hop"),
        ("filing", "file"),
        ("happy", "happi"),
        ("relational", "relat"),
        ("generalization", "gener"),
        ("adjustment", "adjust"),
        ("controlling", "control"),
        ("painted", "paint"),
        ("painting", "paint"),
    ],
)
def test_porter_stems(word, expected):
    assert stem(word) == expected


def test_stem_leaves_code_and_numbers_alone():
    for token in ("parse_segments", "v2", "2023", "src/core/agent.ts", "ab", "日本"):
        assert stem(token) == token


def test_text_tokens_of_a_stemmed_ranking():
    stemmed = get_ranking("stem")
    assert text_tokens("What did Caroline paint?", stemmed) == ["carolin", "paint"]
    assert text_tokens("painted sunrises", stemmed) == ["paint", "sunris"]
    assert text_tokens("What did", SEED) == ["what", "did"]  # seed: the agent's tokens
    assert {"what", "did", "the"} <= STOPWORDS


# -- scoring -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The 300-segment store, written once (each test opens a copy of its own)."""
    folder = tmp_path_factory.mktemp("rankings") / "context"
    write_store(folder, 300, now_ms=NOW)
    return folder


@pytest.fixture
def store(tmp_path, written):
    folder = tmp_path / "context"
    shutil.copytree(written, folder)
    opened = WarmStore.open(
        folder, HashEmbedder(), StoreSettings(eviction_days=0, max_segments=-1), now_ms=NOW
    )
    opened.embed_missing(save=False)
    return opened


QUERY = "fix the parser cache"


@pytest.mark.parametrize("name", [n for n in RANKINGS if n != "seed"])
def test_every_ranking_searches_the_session_best_first(store, name):
    ranking = get_ranking(name)
    cfg = ranking.search_config(SearchConfig(limit=6, min_score=0, decay=1))
    result = ranked_search(store, QUERY, cfg, ranking, session_id="session-3", now_ms=NOW)
    assert 0 < len(result.hits) <= 6
    assert {h.segment.session_id for h in result.hits} == {"session-3"}
    scores = [h.score for h in result.candidates]
    assert scores == sorted(scores, reverse=True)
    assert [h.rank for h in result.candidates] == list(range(1, len(scores) + 1))
    assert result.notes and name in result.notes[0]


def test_all_scores_are_the_agents_formula_over_every_segment(store):
    ranking = get_ranking("all")
    cfg = SearchConfig(limit=5, min_score=0, decay=0.99)
    result = ranked_search(store, QUERY, cfg, ranking, session_id="session-1", now_ms=NOW)
    top = max(h.bm25_raw for h in result.candidates)
    for h in result.candidates:
        assert h.score == pytest.approx(
            (cfg.vector_weight * h.vector_score + cfg.bm25_weight * h.bm25_norm) * h.decay
        )
        assert h.bm25_norm <= 1 and (h.bm25_raw < top or h.bm25_norm == pytest.approx(1))
    # the seed formula only scores its candidates; "all" scores every session segment
    seed = search(store, QUERY, cfg, session_id="session-1", now_ms=NOW)
    assert len(seed.candidates) <= 20
    assert len(result.candidates) == min(2 * cfg.limit, 25)  # 300 / 12 sessions


def test_min_score_and_limit_cut_the_hits(store):
    ranking = get_ranking(DEFAULT_RANKING)
    loose = ranking.search_config(SearchConfig(limit=4, min_score=0, decay=1))
    hits = ranked_search(store, QUERY, loose, ranking, session_id="session-2").hits
    assert len(hits) == 4
    strict = loose.with_(min_score=hits[1].effective + 1e-9)
    kept = ranked_search(store, QUERY, strict, ranking, session_id="session-2").hits
    assert [h.segment.id for h in kept] == [hits[0].segment.id]


def test_the_lab_index_follows_adds_and_evictions(store):
    ranking = get_ranking("stem")
    cfg = ranking.search_config(SearchConfig(limit=3, min_score=0, decay=1))
    before = ranked_search(store, "zebras galloping", cfg, ranking, session_id="session-0")
    assert all(h.bm25_raw == 0 for h in before.candidates)
    seg = store.add("session-0", "user", "a zebra gallops past", timestamp=NOW, write=False)
    assert seg is not None
    after = ranked_search(store, "zebras galloping", cfg, ranking, session_id="session-0")
    assert after.hits[0].segment.id == seg.id and after.hits[0].bm25_raw > 0
    store.settings = StoreSettings(eviction_days=0, max_segments=len(store) - 1)
    store.evict(NOW)  # the oldest goes; then the zebra as well
    store.settings = StoreSettings(eviction_days=1, max_segments=-1)
    store.evict(NOW + 3 * 86_400_000)
    gone = ranked_search(store, "zebras galloping", cfg, ranking, session_id="session-0")
    assert seg.id not in {h.segment.id for h in gone.candidates}


def test_neighbours_lift_the_turn_after_a_match(store):
    plain = Ranking("plain", "", stemmed=True, every_candidate=True)
    context = Ranking("ctx", "", stemmed=True, every_candidate=True, neighbours=0.5)
    cfg = SearchConfig(limit=40, min_score=0, decay=1, vector_weight=0.0, bm25_weight=1.0)
    a = ranked_search(store, QUERY, cfg, plain, session_id="session-4")
    b = ranked_search(store, QUERY, cfg, context, session_id="session-4")
    best = a.hits[0].slot
    slots = [h.slot for h in a.candidates]
    after = next(s for s in sorted(slots) if s > best)  # the next turn of the session
    score = {h.slot: h.score for h in b.candidates}
    plain_score = {h.slot: h.score for h in a.candidates}
    assert score[after] >= plain_score[after] + 0.5 * plain_score[best] - 1e-9


# -- the CLI ---------------------------------------------------------------------------
@pytest.fixture
def home(tmp_path, written):
    shutil.copytree(written, tmp_path / "memory" / "context")
    (tmp_path / "openclaw.json").write_text(
        "{agents: {defaults: {memoryContext: {evictionDays: 0}}}}"
    )
    return tmp_path


def _cli(capsys, *args):
    assert run_cli([*args, "--json"]) == 0
    return orjson.loads(capsys.readouterr().out)


def test_recall_ranking_flag(capsys, home):
    seed = _cli(capsys, "recall", str(home), QUERY, "--ranking", "seed", "--min-score", "0")
    assert seed["config"]["ranking"] == "seed" and seed["config"]["bm25_weight"] == 0.3
    default = _cli(capsys, "recall", str(home), QUERY, "--min-score", "0")
    assert default["config"]["ranking"] == DEFAULT_RANKING == "context"
    assert default["config"]["bm25_weight"] == 0.6 and default["hits"]
    assert default["block"].startswith('<recalled-context source="memory-context">')
    # a flag still overrides the ranking's weights
    mine = _cli(capsys, "recall", str(home), QUERY, "--bm25-weight", "0.9", "--min-score", "0")
    assert mine["config"]["bm25_weight"] == 0.9
    with pytest.raises(SystemExit):
        run_cli(["recall", str(home), QUERY, "--ranking", "nope"])
    assert "--ranking" in capsys.readouterr().err


def test_seed_recall_is_todays_search(capsys, home):
    out = _cli(
        capsys, "recall", str(home), QUERY, "--ranking", "seed", "--min-score", "0", "--decay", "1"
    )
    store = WarmStore.open(
        home / "memory" / "context", HashEmbedder(), StoreSettings(eviction_days=0)
    )
    store.embed_missing(save=False)
    direct = search(store, QUERY, SearchConfig(min_score=0, decay=1, cross_session=True))
    assert [h["id"] for h in out["hits"]] == [h.segment.id for h in direct.hits]
    assert [h["score"] for h in out["hits"]] == [h.score for h in direct.hits]


# -- the proof on one LoCoMo dev conversation ------------------------------------------
def test_recommended_ranking_beats_seed_and_rank_bm25_on_locomo(tmp_path):
    if not (LOCOMO / "segments.jsonl").exists():
        if os.environ.get("CI"):
            pytest.fail(f"{LOCOMO} is missing: CI has shared/ beside the repo")
        pytest.skip(f"{LOCOMO} is not here")
    rows = [orjson.loads(x) for x in (LOCOMO / "segments.jsonl").read_bytes().splitlines() if x]
    conv = rows[0]["sessionId"]
    folder = tmp_path / "context"
    folder.mkdir()
    kept = [r for r in rows if r["sessionId"] == conv]
    (folder / "segments.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in kept))
    labels = [
        Label(x["query"], tuple(x["relevant"]), x["session"], i)
        for i, x in enumerate(
            orjson.loads(line) for line in (LOCOMO / "labels.jsonl").read_bytes().splitlines()
        )
        if x["session"] == conv
    ]
    store = WarmStore.open(folder, HashEmbedder(), StoreSettings(eviction_days=0))
    store.embed_missing(save=False)
    pure = SearchConfig(limit=10, min_score=0, decay=1)
    ks = (1, 5, 10)

    def figures(ranking):
        m = evaluate(
            store, labels, ranking.search_config(pure), ks, ranking=ranking, explain_misses=False
        ).metrics()
        return m["recall@10"], m["mrr"]

    seed, best = figures(SEED), figures(get_ranking(DEFAULT_RANKING))
    ref = evaluate_reference(store, labels, ks, pure).metrics()
    assert best[0] >= ref["recall@10"] + 0.05 and best[0] > seed[0] + 0.05
    assert best[1] > ref["mrr"] and best[1] > seed[1]
    assert np.isfinite([best[0], best[1]]).all()
