"""memlens eval measures what it says (issue 19, item 1), on a slice of LoCoMo's dev half.

The slice (one conversation's first 120 turns and the questions whose evidence is among
them, original 2023 dates) is copied into tmp_path; ``../shared/datasets`` is never
written. The old bugs each fail one test here: a limit of 8 capping recall@10, and
eviction silently zeroing a dated set.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from core.cli.main import run_cli
from core.embed.hash import HashEmbedder
from core.openclaw.memory_home import parse_now
from core.recall.hybrid import SearchConfig, search
from core.recall.rankings import RANKINGS, SEED, get_ranking, ranked_search
from core.recall.warm_store import StoreSettings, WarmStore

LOCOMO = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "locomo-dev"
TURNS = 120


def _need_dataset() -> None:
    if not (LOCOMO / "segments.jsonl").exists():
        if os.environ.get("CI"):
            pytest.fail(f"{LOCOMO} is missing: CI has shared/ beside the repo")
        pytest.skip(f"{LOCOMO} is not here")


@pytest.fixture(scope="module")
def locomo(tmp_path_factory):
    """A data directory with the slice, and its labels file."""
    _need_dataset()
    rows = [orjson.loads(x) for x in (LOCOMO / "segments.jsonl").read_bytes().splitlines() if x]
    first = rows[0]["sessionId"]
    kept = [r for r in rows if r["sessionId"] == first][:TURNS]
    ids = {r["id"] for r in kept}
    labels = [
        lab
        for lab in (orjson.loads(x) for x in (LOCOMO / "labels.jsonl").read_bytes().splitlines())
        if lab["session"] == first and set(lab["relevant"]) <= ids
    ]
    home = tmp_path_factory.mktemp("locomo")
    folder = home / "memory" / "context"
    folder.mkdir(parents=True)
    (folder / "segments.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in kept))
    (home / "openclaw.json").write_text("{agents: {defaults: {memoryContext: {}}}}")
    path = home / "labels.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in labels))
    newest = max(r["timestamp"] for r in kept)
    return home, path, labels, newest, first


def run(capsys, *args):
    code = run_cli([*args, "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return orjson.loads(out.out)


def test_eviction_no_longer_zeroes_a_dated_set(capsys, locomo):
    home, labels, wanted, _, _ = locomo
    evicted = run(capsys, "eval", str(home), "--labels", str(labels))
    # today every 2023 turn is older than evictionDays: nothing is scored, and it says so
    assert evicted["n"] == 0 and evicted["skipped"]["count"] == len(wanted)
    (reason,) = evicted["skipped"]["reasons"]
    assert "evicted" in reason and "--no-evict" in reason
    assert evicted["run"]["evict"] is True and evicted["run"]["evicted_age"] == TURNS
    kept = run(capsys, "eval", str(home), "--labels", str(labels), "--no-evict")
    assert kept["n"] == len(wanted) and kept["skipped"]["count"] == 0
    assert kept["run"]["evict"] is False and kept["run"]["segments"] == TURNS
    assert kept["recall@10"] > 0.3


def test_now_keeps_a_dated_set_inside_eviction(capsys, locomo):
    home, labels, wanted, newest, _ = locomo
    now = datetime.fromtimestamp(newest / 1000 + 86_400, UTC).isoformat()
    out = run(capsys, "eval", str(home), "--labels", str(labels), "--now", now)
    assert out["run"]["now_ms"] == parse_now(now) and out["run"]["evicted_age"] == 0
    assert out["n"] == len(wanted) and out["recall@10"] > 0.3
    # the same moment as epoch milliseconds
    same = run(capsys, "eval", str(home), "--labels", str(labels), "--now", str(parse_now(now)))
    assert same["recall@10"] == out["recall@10"]


def test_bad_now_is_a_clear_error(capsys, locomo):
    home, labels, _, _, _ = locomo
    assert run_cli(["eval", str(home), "--labels", str(labels), "--now", "last tuesday"]) == 1
    assert "--now 'last tuesday': not an ISO time or epoch milliseconds" in capsys.readouterr().err


def test_parse_now_forms():
    assert parse_now("2023-05-08") == parse_now("2023-05-08T00:00:00Z") == 1_683_504_000_000
    assert parse_now("1683504000000") == 1_683_504_000_000
    assert parse_now("2023-05-08T02:00+02:00") == 1_683_504_000_000
    assert parse_now(None, {"MEMLENS_NOW": "1683504000000"}) == 1_683_504_000_000
    with pytest.raises(ValueError, match="--now"):
        parse_now("last tuesday")


def test_limit_8_does_not_cap_recall_at_10(capsys, locomo):
    home, labels, _, _, _ = locomo
    out = run(capsys, "eval", str(home), "--labels", str(labels), "--no-evict", "--ranking", "seed")
    ranking, agent, _ref = out["rows"]
    # the agent's limit is 8, but the ranking row is ranked 10 deep ...
    assert ranking["config"]["limit"] == 8 and ranking["config"]["depth"] == 10
    assert all(len(q["ranked"]) == 10 for q in out["queries"])
    # ... and a relevant segment ranked 9th or 10th counts for recall@10
    late = [
        q
        for q in out["queries"]
        if any(sid in q["relevant"] for sid in q["ranked"][8:10])
        and not any(sid in q["relevant"] for sid in q["ranked"][:8])
    ]
    assert late, "the slice has a query found at rank 9 or 10"
    assert all(q["recall@10"] > 0 for q in late)
    # the agent row keeps the agent's 8 and says so
    assert agent["config"]["limit"] == agent["config"]["depth"] == 8
    # asking for recall@20 ranks 20 deep
    deep = run(capsys, "eval", str(home), "--labels", str(labels), "--no-evict", "--k", "1,20")
    assert deep["config"]["depth"] == 20 and all(len(q["ranked"]) == 20 for q in deep["queries"])


def test_every_report_has_two_rows_and_the_baseline(capsys, locomo):
    home, labels, _, newest, _ = locomo
    out = run(capsys, "eval", str(home), "--labels", str(labels), "--now", str(newest + 86_400_000))
    assert [r["name"] for r in out["rows"]] == ["ranking", "agent", "rank-bm25"]
    ranking, agent, ref = out["rows"]
    assert ranking["config"]["min_score"] == 0 and ranking["config"]["decay"] == 1
    assert ranking["config"]["ranking"] == "context"  # the recommended default
    # the agent row: its formula and the data directory's settings
    assert agent["config"]["ranking"] == "seed"
    assert (agent["config"]["min_score"], agent["config"]["decay"]) == (0.7, 0.995)
    assert ref["config"]["ranking"] == "rank-bm25" and ref["n"] == ranking["n"]
    for row in out["rows"]:
        assert {"recall@1", "recall@5", "recall@10", "mrr", "ndcg@10", "p50_ms"} <= row.keys()
        assert row["skipped"] == {"count": 0, "reasons": {}}
    # minScore 0.7 keeps little: the agent row finds less than pure ranking
    assert agent["recall@10"] < ranking["recall@10"]
    assert run_cli(["eval", str(home), "--labels", str(labels), "--no-evict"]) == 0
    text = capsys.readouterr().out
    for word in ("ranking", "agent", "rank-bm25", "skipped 0", "eviction off", "minScore"):
        assert word in text


def test_skipped_queries_are_counted_with_their_reason(capsys, locomo, tmp_path):
    home, _labels, wanted, _, session = locomo
    good = wanted[0]
    bad = [
        {"query": "anything", "relevant": good["relevant"], "session": "no-such-session"},
        {"query": "anything", "relevant": ["no-such-id"], "session": session},
        {"query": "anything", "relevant": ["no-such-id"]},
    ]
    path = tmp_path / "labels.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [good, *bad]))
    out = run(capsys, "eval", str(home), "--labels", str(path), "--no-evict")
    assert out["n"] == 1 and out["skipped"]["count"] == 3
    reasons = out["skipped"]["reasons"]
    assert reasons["session not in the store (unknown, or evicted: see --no-evict)"] == 1
    assert reasons["no relevant id in the store (unknown, or evicted: see --no-evict)"] == 2
    assert [q["skipped"] is None for q in out["queries"]] == [True, False, False, False]
    # a skipped query is not averaged in as a zero
    alone = tmp_path / "one.jsonl"
    alone.write_bytes(orjson.dumps(good) + b"\n")
    single = run(capsys, "eval", str(home), "--labels", str(alone), "--no-evict")
    assert single["recall@10"] == out["recall@10"] and single["mrr"] == out["mrr"]


def test_seed_ranking_is_the_agents_search(locomo):
    home, _, wanted, _, session = locomo
    store = WarmStore.open(
        home / "memory" / "context", HashEmbedder(), StoreSettings(eviction_days=0)
    )
    store.embed_missing(save=False)
    assert get_ranking("seed") is SEED and set(RANKINGS) >= {"seed", "context"}
    for label in wanted[:20]:
        for cfg in (SearchConfig(), SearchConfig(limit=10, min_score=0, decay=1)):
            a = search(store, label["query"], cfg, session_id=session, now_ms=1)
            b = ranked_search(store, label["query"], cfg, SEED, session_id=session, now_ms=1)
            assert a.hits == b.hits and a.candidates == b.candidates
    with pytest.raises(ValueError, match="unknown ranking"):
        get_ranking("nope")


def test_recall_takes_the_same_clock_and_eviction_flags(capsys, locomo):
    home, _, wanted, newest, session = locomo
    query = wanted[0]["query"]
    today = run(capsys, "recall", str(home), query, "--session", session, "--min-score", "0")
    assert today["hits"] == []  # every 2023 turn is evicted today
    kept = run(
        capsys, "recall", str(home), query, "--session", session, "--min-score", "0", "--no-evict"
    )
    then = run(
        capsys, "recall", str(home), query, "--session", session, "--min-score", "0",
        "--now", str(newest + 86_400_000),
    )  # fmt: skip
    assert kept["hits"] and [h["id"] for h in then["hits"]] == [h["id"] for h in kept["hits"]]
