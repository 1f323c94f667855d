"""Gaps in the core tests: sessions --json, eval metrics, history-share pairing, trim --at/--query.

Real data only: the shared pi-v1 fixtures, the deterministic demo home and small
transcripts written to tmp_path; the real CLI through ``core.cli.main.run_cli``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import orjson
import pytest

from core.compaction.plan import openclaw_estimate, plan_compaction, repair_pairing, stage_split
from core.context.trim import default_query
from core.demo.build import write_demo
from core.recall.evaluate import ndcg
from core.transcript import context_at, load_transcript
from core.transcript.provider import provider_context

from .build import SESSION_KEYS, entry, lines, run_json, user, write_file

NOW = 1_760_000_000_000


run = run_json


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return write_demo(tmp_path_factory.mktemp("demo"), now_ms=NOW, segments=300)


# -- 1. sessions --json ------------------------------------------------------------
def _expected(path: str) -> dict:
    s = load_transcript(path)
    return {
        "id": s.id,
        "version": s.version,
        "entries": len(s.entries),
        "messages": len(s.messages()),
        "compactions": len(s.compaction_entries()),
        "roles": s.role_counts(),
        "branches": len(s.leaves()),
    }


def test_sessions_json_on_the_pi_fixtures(capsys, fixtures_dir):
    out = run(capsys, "sessions", str(fixtures_dir))
    assert set(out) == {"sessions"}
    rows = {Path(r["path"]).name: r for r in out["sessions"]}
    assert set(rows) == {"before-compaction.jsonl", "large-session.jsonl"}
    for name, row in rows.items():
        assert set(row) == SESSION_KEYS
        exp = _expected(str(fixtures_dir / name))
        assert {k: row[k] for k in exp} == exp
        assert sum(row["roles"].values()) == row["messages"]
        assert row["size"] == (fixtures_dir / name).stat().st_size
        assert row["agent"] == "pi-v1"
    before = rows["before-compaction.jsonl"]
    assert before["compactions"] == 2 and before["branches"] == 1
    assert before["messages"] == 990 and before["roles"]["bashExecution"] == 3
    assert before["model"] == "claude-opus-4-5"
    # the context at the leaf follows the last compaction: much less than everything
    assert before["tokens_estimated"] < before["tokens_total"]
    large = rows["large-session.jsonl"]
    assert large["compactions"] == 0 and large["messages"] == 914
    # no compaction: the context at the leaf is the whole session
    assert large["tokens_estimated"] == large["tokens_total"]
    # newest first
    mods = [r["modified"] for r in out["sessions"]]
    assert mods == sorted(mods, reverse=True)


def test_sessions_json_on_the_demo_home(capsys, demo):
    out = run(capsys, "sessions", str(demo.root))
    rows = out["sessions"]
    assert len(rows) == demo.sessions == 12
    assert {r["path"] for r in rows} == {str(p) for p in demo.transcripts}
    assert {r["agent"] for r in rows} == {"main", "reviewer"}
    assert sum(r["compactions"] for r in rows) == demo.compactions
    for row in rows:
        exp = _expected(row["path"])
        assert {k: row[k] for k in exp} == exp
    # info reports the same sessions, in its own order
    info = run(capsys, "info", str(demo.root))
    assert sorted(info["sessions"], key=lambda r: r["path"]) == sorted(
        rows, key=lambda r: r["path"]
    )


# -- 2. eval -----------------------------------------------------------------------
def test_ndcg_by_hand():
    rel = {"a", "b"}
    ideal = 1 + 1 / math.log2(3)
    # relevant at ranks 2 and 4
    assert ndcg(["x", "a", "y", "b"], rel) == pytest.approx(
        (1 / math.log2(3) + 1 / math.log2(5)) / ideal
    )
    assert ndcg(["a", "b", "x"], rel) == pytest.approx(1.0)
    assert ndcg(["x"] * 3, rel) == 0.0
    # only the top k count; one relevant id: ideal is 1
    assert ndcg(["x", "y", "a"], {"a"}, k=2) == 0.0
    assert ndcg(["x", "y", "a"], {"a"}, k=3) == pytest.approx(0.5)
    assert ndcg([], set()) == 0.0


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    from bench.corpus import write_store

    home = tmp_path_factory.mktemp("store")
    folder = home / "memory" / "context"
    write_store(folder, 400, now_ms=1_790_000_000_000)
    (home / "openclaw.json").write_text(
        "{agents: {defaults: {memoryContext: {evictionDays: 0, crossSession: false}}}}"
    )
    sessions = {
        json.loads(x)["id"]: json.loads(x)["sessionId"]
        for x in (folder / "segments.jsonl").read_text().splitlines()
        if x.strip()
    }
    return home, sessions


def _eval(capsys, home, tmp_path, labels, *extra):
    path = tmp_path / "labels.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in labels))
    return run(
        capsys,
        "eval",
        str(home),
        "--labels",
        str(path),
        "--min-score",
        "0",
        "--decay",
        "1",
        "--ranking",
        "seed",
        *extra,
    )


QUERY = "fix the parser cache"


def test_eval_imperfect_ranking_by_hand(capsys, store, tmp_path):
    home, _ = store
    probe = _eval(capsys, home, tmp_path, [{"query": QUERY, "relevant": ["none"]}])
    ranked = probe["queries"][0]["ranked"]
    assert len(ranked) == 10 and len(set(ranked)) == 10
    assert probe["mrr"] == 0 and probe["ndcg@10"] == 0 and probe["queries"][0]["missing"]
    # the relevant segments are the engine's 2nd and 4th hits, plus one never found
    rel = [ranked[1], ranked[3]]
    out = _eval(
        capsys,
        home,
        tmp_path,
        [{"query": QUERY, "relevant": rel}, {"query": QUERY, "relevant": [ranked[4]]}],
        "--k",
        "1,2,5",
    )
    assert out["n"] == 2
    a, b = out["queries"]
    assert a["ranked"] == ranked == b["ranked"]  # same query, same ranking
    assert (a["recall@1"], a["recall@2"], a["recall@5"]) == (0.0, 0.5, 1.0)
    assert a["rr"] == 0.5 and a["missing"] == [] and a["miss_explanation"] is None
    assert a["ndcg@10"] == pytest.approx(
        (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    )
    assert (b["recall@1"], b["recall@2"], b["recall@5"]) == (0.0, 0.0, 1.0)
    assert b["rr"] == pytest.approx(0.2) and b["ndcg@10"] == pytest.approx(1 / math.log2(6))
    # the averages are over both queries
    assert out["recall@2"] == pytest.approx(0.25) and out["recall@5"] == 1.0
    assert out["mrr"] == pytest.approx((0.5 + 0.2) / 2)
    assert out["ndcg@10"] == pytest.approx((a["ndcg@10"] + b["ndcg@10"]) / 2)
    # a relevant id outside the top k is reported missing, with a reason
    far = _eval(capsys, home, tmp_path, [{"query": QUERY, "relevant": [ranked[7]]}], "--k", "1,5")
    q = far["queries"][0]
    assert q["missing"] == [ranked[7]] and q["miss_explanation"].startswith(ranked[7])
    assert q["rr"] == pytest.approx(1 / 8) and far["recall@5"] == 0.0


def test_eval_label_session_limits_the_search(capsys, store, tmp_path):
    home, sessions = store
    out = _eval(
        capsys,
        home,
        tmp_path,
        [
            {"query": QUERY, "relevant": ["none"], "session": "session-3"},
            {"query": QUERY, "relevant": ["none"]},
        ],
    )
    scoped, everywhere = out["queries"]
    assert scoped["session"] == "session-3" and everywhere["session"] is None
    assert scoped["ranked"] and {sessions[i] for i in scoped["ranked"]} == {"session-3"}
    # without a session every session is searched (crossSession false in the config)
    assert len({sessions[i] for i in everywhere["ranked"]}) > 1
    # a segment of another session can never be found by a session-scoped label
    other = next(i for i in everywhere["ranked"] if sessions[i] != "session-3")
    miss = _eval(
        capsys, home, tmp_path, [{"query": QUERY, "relevant": [other], "session": "session-3"}]
    )
    assert other not in miss["queries"][0]["ranked"] and miss["mrr"] == 0.0


def test_eval_bm25_weight_and_limit_overrides(capsys, store, tmp_path):
    home, _ = store
    label = [{"query": QUERY, "relevant": ["none"]}]
    base = _eval(capsys, home, tmp_path, label)
    assert base["config"]["bm25_weight"] == 0.3 and base["config"]["limit"] == 8
    text_only = _eval(capsys, home, tmp_path, label, "--bm25-weight", "1", "--vector-weight", "0")
    assert text_only["config"]["bm25_weight"] == 1.0
    assert text_only["config"]["vector_weight"] == 0.0
    assert text_only["queries"][0]["ranked"] != base["queries"][0]["ranked"]
    # the ranking evaluated is at least 10 deep; --limit deepens it
    deep = _eval(capsys, home, tmp_path, label, "--limit", "25")
    assert deep["config"]["limit"] == 25
    assert len(base["queries"][0]["ranked"]) == 10 and len(deep["queries"][0]["ranked"]) == 25
    # (not a prefix test: the candidate pool grows with the limit, as in the agent)
    # a relevant id ranked 20th counts for recall@25 only with the deeper list
    twentieth = deep["queries"][0]["ranked"][19]
    found = _eval(
        capsys,
        home,
        tmp_path,
        [{"query": QUERY, "relevant": [twentieth]}],
        "--limit",
        "25",
        "--k",
        "10,25",
    )
    assert found["recall@10"] == 0.0 and found["recall@25"] == 1.0
    assert found["mrr"] == pytest.approx(1 / 20)


# -- 3. history-share pruning, then tool pairing ------------------------------------
def _call(i, parent, call_ids, arg_chars):
    blocks = [
        {"type": "toolCall", "id": c, "name": "read", "arguments": {"path": "p" * arg_chars}}
        for c in call_ids
    ]
    msg = {"role": "assistant", "content": blocks, "stopReason": "toolUse", "timestamp": 1}
    return entry(i, parent, msg)


def _result(i, parent, call_id, chars):
    msg = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "read",
        "content": [{"type": "text", "text": "r" * chars}],
        "isError": False,
        "timestamp": 1,
    }
    return entry(i, parent, msg)


def _pairing_ok(items):
    calls = {b.tool_id for i in items for b in i.message.tool_calls()}
    results = {x for i in items if i.message.role == "toolResult" for x in i.message.result_ids()}
    return results <= calls, calls <= results


@pytest.mark.parametrize("parallel", [False, True])
def test_history_share_pruning_never_splits_a_call_from_its_result(tmp_path, parallel):
    # user, call(s), result(s), assistant reply | user, reply (kept)
    ids = ["call_a", "call_b"] if parallel else ["call_a"]
    objs = [entry(1, None, user("u" * 400)), _call(2, "00000001", ids, 15_600)]
    parent = "00000002"
    for n, cid in enumerate(ids):
        objs.append(_result(3 + n, parent, cid, 16_000))
        parent = f"{3 + n:08x}"
    k = 3 + len(ids)
    reply = {
        "role": "assistant",
        "content": [{"type": "text", "text": "done " * 80}],
        "stopReason": "stop",
        "timestamp": 1,
    }
    objs += [entry(k, parent, reply), entry(k + 1, f"{k:08x}", user("next " * 500))]
    objs.append(entry(k + 2, f"{k + 1:08x}", reply))
    write_file(tmp_path / "t.jsonl", lines(objs))
    s = load_transcript(tmp_path / "t.jsonl")

    unpruned = plan_compaction(s, window=1_000_000, keep_recent_tokens=500)
    assert unpruned.ok and not unpruned.history_dropped
    assert [i.message.role for i in unpruned.summarize][:2] == ["user", "assistant"]
    # OpenClaw splits by whole tool-call groups: the call and its results stay together
    parts = stage_split(unpruned.summarize, 1)
    assert parts is not None
    with_call = next(p for p in parts if any(unpruned.summarize[i].message.tool_calls() for i in p))
    results = [k for k, i in enumerate(unpruned.summarize) if i.message.role == "toolResult"]
    assert set(results) <= set(with_call)
    # results alone are orphans: OpenClaw's repair discards them
    _rest, orphans = repair_pairing([unpruned.summarize[k] for k in results])
    assert _rest == [] and len(orphans) == len(ids)

    # pruning starts when what stays (~725 tokens) exceeds window x 0.5 x 1.2
    plan = plan_compaction(s, window=1000, keep_recent_tokens=500)  # budget: 500
    assert plan.ok and plan.history_dropped
    assert plan.new_content_tokens > plan.max_history_tokens == 600
    assert sum(openclaw_estimate(i.message) for i in plan.summarize) <= 500
    assert not plan_compaction(s, window=1300, keep_recent_tokens=500).history_dropped
    dropped_ids = [i.entry.id for i in plan.history_dropped]
    # the call and every one of its results went together
    assert dropped_ids == [f"{i:08x}" for i in range(1, 3 + len(ids))]
    assert [i.entry.id for i in plan.summarize] == [f"{k:08x}"]
    for part in (plan.history_dropped, plan.summarize, plan.kept):
        assert _pairing_ok(part) == (True, True)
    # nothing lost or duplicated
    every = [i.entry.id for i in (*plan.history_dropped, *plan.summarize, *plan.kept)]
    assert sorted(every) == sorted(i.entry.id for i in unpruned.summarize + unpruned.kept)
    assert len(every) == len(set(every))
    # each summary: its chunks, and a merge when split into parts (summarizeInStages)
    assert plan.history_calls == len(plan.history_chunks) + (len(plan.history_parts) > 1)
    # (+1: the dropped history's summary, re-distilled first, fills a chunk of its own
    # here, at its output budget of 16,000 tokens against a 1,000-token window)
    assert plan.main_calls == len(plan.chunks) + (len(plan.parts) > 1) + 1
    assert plan.calls == plan.history_calls + plan.main_calls + plan.prefix_calls


@pytest.mark.parametrize("window", [8_000, 20_000, 60_000])
def test_history_share_pairing_on_the_real_session(fixtures_dir, window):
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    plan = plan_compaction(s, at="#358", window=window, keep_recent_tokens=2_000)
    assert plan.ok and plan.history_dropped
    assert plan.new_content_tokens > plan.max_history_tokens
    left = sum(openclaw_estimate(i.message) for i in plan.summarize)
    assert (
        left <= max(1, window // 2)
        or stage_split(plan.summarize, window // 2, min_messages=2) is None
    )
    # no result in what is summarised lacks its call
    calls = {b.tool_id for i in plan.summarize for b in i.message.tool_calls()}
    for i in plan.summarize:
        if i.message.role == "toolResult":
            assert set(i.message.result_ids()) & calls, i.entry.index
    # every call summarised has its results summarised, or kept after the cut
    later = {
        x
        for i in (*plan.summarize, *plan.turn_prefix, *plan.kept)
        if i.message.role == "toolResult"
        for x in i.message.result_ids()
    }
    assert calls <= later
    # nothing lost: every message is dropped or summarised (repair adds error results)
    whole = plan_compaction(
        s, at="#358", window=window, keep_recent_tokens=2_000, max_history_share=1e9
    )
    assert {id(i.entry) for i in (*plan.history_dropped, *plan.summarize)} == {
        id(i.entry) for i in whole.summarize
    }


# -- 4. trim --at / --query ----------------------------------------------------------
def _trim(capsys, path, *extra):
    return run(capsys, "trim", str(path), "--window", "14000", "--at", "#360", *extra)


def test_trim_at_replays_the_context_there(capsys, fixtures_dir):
    path = fixtures_dir / "before-compaction.jsonl"
    shown = run(capsys, "show", str(path), "--at", "#360")
    out = _trim(capsys, path)
    assert out["ran"] and out["session"] == shown["session"]
    assert len(out["decisions"]) == len(shown["messages"]) == 68
    assert [d["index"] for d in out["decisions"]] == list(range(68))
    assert sum(out["counts"].values()) == 68
    kept = [d for d in out["decisions"] if d["decision"] in ("kept", "protected")]
    assert len(out["messages"]) == len(kept)
    assert out["tokens_after"] <= out["safe_limit"] < out["tokens_before"]
    # the entry id and #N name the same entry
    by_id = run(capsys, "trim", str(path), "--window", "14000", "--at", shown["at"]["id"])
    assert by_id == out
    # another entry: another context, of the length show reports
    early = run(capsys, "show", str(path), "--at", "#100")
    at100 = run(capsys, "trim", str(path), "--window", "14000", "--at", "#100")
    # trimmed as pi sends it: #100's context holds an aborted turn pi does not send
    sent = provider_context(context_at(load_transcript(path), "#100"))
    assert len(at100["decisions"]) == len(sent) == len(early["messages"]) - 1 != 68
    # the default query is the agent's: its last user messages at that entry
    s = load_transcript(path)
    msgs = [i.message for i in context_at(s, "#360")]
    assert out["query"] == default_query(msgs).strip()


def test_trim_query_changes_the_bm25_layer(capsys, fixtures_dir):
    path = fixtures_dir / "before-compaction.jsonl"
    default = _trim(capsys, path)
    other = _trim(capsys, path, "--query", "compaction summary")
    nothing = _trim(capsys, path, "--query", "zzqx nothing")
    assert other["query"] == "compaction summary" and nothing["query"] == "zzqx nothing"

    def bm25(out):
        return [d["bm25"] for d in out["decisions"]]

    def decided(out):
        return [d["decision"] for d in out["decisions"]]

    assert bm25(default) != bm25(other)
    assert decided(default) != decided(other)
    assert all(not x for x in bm25(nothing))  # no term matches: every score 0
    assert any(x for x in bm25(other))
    # layer 1 (protection) does not depend on the query
    prot = [d["index"] for d in default["decisions"] if d["decision"] == "protected"]
    assert prot == [d["index"] for d in other["decisions"] if d["decision"] == "protected"]
    # a too-short query disables trimming
    short = _trim(capsys, path, "--query", "ab")
    assert not short["ran"] and "shorter than" in short["skipped_reason"]
    assert set(short["counts"]) == {"kept"}
