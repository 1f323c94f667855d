"""memlens recall / knowledge / eval on a real store written in tmp_path."""

from __future__ import annotations

import orjson
import pytest

from bench.corpus import write_store
from core.cli.main import run_cli
from core.store.knowledge import load_knowledge

NOW = 1_790_000_000_000


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    ids = write_store(home / "memory" / "context", 400, now_ms=NOW)
    log = load_knowledge(home / "memory" / "context" / "knowledge.jsonl")
    log.add("decision", "apply_discount quantizes with Decimal after the percentage")
    log.add("config", "the worker retries with exponential backoff capped at 5 s")
    (home / "openclaw.json").write_text(
        "{agents: {defaults: {memoryContext: {evictionDays: 0, crossSession: false}}}}"
    )
    return home, ids


def run(capsys, *args):
    code = run_cli([*args, "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return orjson.loads(out.out)


def test_recall_json_has_components_and_block(capsys, data):
    home, _ = data
    out = run(capsys, "recall", str(home), "fix the parser parseSegments", "--min-score", "0")
    assert out["hits"], out
    hit = out["hits"][0]
    for key in (
        "vector",
        "bm25_raw",
        "bm25_norm",
        "decay",
        "score",
        "effective",
        "vector_rank",
        "bm25_rank",
        "rank",
    ):
        assert key in hit
    assert out["block"].startswith('<recalled-context source="memory-context">')
    assert out["block_tokens"] <= out["hard_cap"] == 4000
    assert out["config"]["limit"] == 8  # max(8, ceil(4000 / 500))


def test_recall_session_scope_and_short_query(capsys, data):
    home, _ = data
    out = run(
        capsys, "recall", str(home), "parser cache", "--session", "session-3", "--min-score", "0"
    )
    assert {h["session"] for h in out["hits"]} == {"session-3"}
    short = run(capsys, "recall", str(home), "hi")
    assert short["skipped"] and short["block"] == ""


def test_knowledge_command(capsys, data):
    home, _ = data
    out = run(capsys, "knowledge", str(home), "apply_discount Decimal")
    assert out["hits"][0]["content"].startswith("apply_discount")
    assert out["hits"][0]["score"] == 1.0


def test_eval_metrics_and_overrides(capsys, data, tmp_path):
    home, ids = data
    labels = tmp_path / "labels.jsonl"
    lines = [
        {"query": "fix the parser", "relevant": [ids[0], ids[1]]},
        {"query": "retry loop", "relevant": [ids[5]], "session": "session-5"},
        {"bad": 1},
    ]
    labels.write_bytes(b"\n".join(orjson.dumps(x) for x in lines) + b"\n")
    out = run(
        capsys,
        "eval",
        str(home),
        "--labels",
        str(labels),
        "--k",
        "1,5",
        "--min-score",
        "0",
        "--decay",
        "1",
        "--vector-weight",
        "0.5",
    )
    assert out["n"] == 2
    assert {"recall@1", "recall@5", "mrr", "ndcg@10", "config", "queries"} <= out.keys()
    assert out["config"]["vector_weight"] == 0.5 and out["config"]["decay"] == 1
    assert all(0 <= out[k] <= 1 for k in ("recall@1", "recall@5", "mrr", "ndcg@10"))
    assert out["problems"][0]["line"] == 3
    for query in out["queries"]:
        if query["missing"]:
            assert query["miss_explanation"]


def test_eval_perfect_label_scores_one(capsys, data, tmp_path):
    home, _ids = data
    # the exact text of a segment is its own best query
    seg = orjson.loads(
        (home / "memory" / "context" / "segments.jsonl").read_bytes().split(b"\n")[7]
    )
    labels = tmp_path / "one.jsonl"
    labels.write_bytes(orjson.dumps({"query": seg["content"], "relevant": [seg["id"]]}) + b"\n")
    out = run(
        capsys, "eval", str(home), "--labels", str(labels), "--min-score", "0", "--decay", "1"
    )
    assert out["mrr"] == 1.0 and out["recall@1"] == 1.0 and out["ndcg@10"] == 1.0


def test_eval_bad_k(capsys, data, tmp_path):
    home, _ = data
    assert run_cli(["eval", str(home), "--labels", str(tmp_path / "x.jsonl"), "--k", "a"]) == 1
    assert "--k" in capsys.readouterr().err
