"""The Mem0-style updater: proposals at the thresholds' edges, batches, apply()."""

from __future__ import annotations

import itertools

import orjson
import pytest

from core.recall.updater import (
    Candidate,
    StaleProposalError,
    apply_operations,
    is_retraction,
    js_length,
    propose,
    token_jaccard,
    words,
)
from core.store.knowledge import load_knowledge


def write(path, *objs):
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))


def make_log(tmp_path, *contents, ftype="decision"):
    """A log with facts o1, o2, ... (oldest first) of *ftype*."""
    p = tmp_path / "knowledge.jsonl"
    write(
        p,
        *(
            {"id": f"o{i}", "type": ftype, "content": c, "timestamp": 100 + i}
            for i, c in enumerate(contents, 1)
        ),
    )
    log = load_knowledge(p)
    new_ids = (f"n{i}" for i in itertools.count())
    clock = itertools.count(1000)
    log.new_id = lambda: next(new_ids)
    log.clock = lambda: next(clock)
    return log


def one(log, content, ftype="decision", context=None, **kw):
    [op] = propose(log, [Candidate(ftype, content, context)], **kw)
    return op


def test_helpers():
    assert words("Use  ORJSON\u3000now use") == {"use", "orjson", "now"}
    assert token_jaccard(words("a b c"), words("a d")) == 0.25
    assert token_jaccard(frozenset(), words("a")) == 0.0
    assert js_length("ab\U0001f600") == 4  # UTF-16 code units, as the agent's .length
    assert is_retraction("Redis is no longer used") and is_retraction("the flag was removed")
    assert is_retraction("we do not use it anymore") and is_retraction("obsolete: port 80")
    assert not is_retraction("remove the flag next week")


# -- ADD and the 0.2 edge ----------------------------------------------------------
def test_add_at_and_just_above_the_match_threshold(tmp_path):
    log = make_log(tmp_path, "alpha beta gamma")
    op = one(log, "alpha omega psi")  # 1 / 5 = 0.2: not > 0.2
    assert op.op == "ADD" and op.target is None and op.similarity == 0.2
    op = one(log, "alpha omega")  # 1 / 4 = 0.25 > 0.2, short: SUPERSEDE
    assert op.op == "SUPERSEDE" and op.target.id == "o1" and op.similarity == 0.25


def test_same_type_only(tmp_path):
    log = make_log(tmp_path, "alpha beta gamma delta")
    assert one(log, "alpha beta gamma delta epsilon", ftype="config").op == "ADD"
    assert one(log, "alpha beta gamma delta epsilon").op in {"NONE", "UPDATE"}


def test_best_match_wins_and_superseded_facts_are_skipped(tmp_path):
    p = tmp_path / "knowledge.jsonl"
    write(
        p,
        {"id": "a", "type": "issue", "content": "x y z w", "timestamp": 1},
        {"id": "b", "type": "issue", "content": "x y z q", "timestamp": 2},
        {"id": "c", "type": "issue", "content": "x y z k", "timestamp": 3, "supersededBy": "b"},
    )
    log = load_knowledge(p)
    op = one(log, "x y z w v", ftype="issue")
    assert op.target.id == "a" and op.similarity == 4 / 5
    op = one(log, "x y z", ftype="issue")  # a and b tie at 0.75: the newest wins
    assert op.target.id == "b"
    op = one(log, "x y z k", ftype="issue")  # superseded c is neither a duplicate nor a match
    assert op.target.id == "b" and "exact" not in op.reason


# -- NONE -------------------------------------------------------------------------
def test_exact_duplicate_is_none_any_type(tmp_path):
    log = make_log(tmp_path, "Use orjson for JSON")
    op = one(log, "  use ORJSON for json \n", ftype="config")
    assert op.op == "NONE" and op.target.id == "o1" and "exact duplicate in the log" in op.reason


def test_redacted_candidate_matches_redacted_fact(tmp_path):
    log = make_log(tmp_path, "token = [REDACTED]")
    op = one(log, "token = abcdefghijklmnopqrstuvwxyz0")
    assert op.op == "NONE" and op.candidate.content == "token = [REDACTED]"


def test_similar_but_not_longer_is_none(tmp_path):
    log = make_log(tmp_path, "alphabet betamax gammaray deltaforce")  # 35 chars
    op = one(log, "alphabet betamax gammaray deltaforce x")  # 0.8, 37 <= 42
    assert op.op == "NONE" and op.target.id == "o1" and "not more detailed" in op.reason


# -- UPDATE and the 1.2x edge ----------------------------------------------------------
def test_update_needs_more_than_1_2x(tmp_path):
    log = make_log(tmp_path, "aaaa bbbbb")  # 10 chars, 10 * 1.2 == 12.0
    op = one(log, "aaaa bbbbb c")  # 12 chars, similarity 2/3
    assert op.op == "NONE" and op.similarity == 2 / 3
    op = one(log, "aaaa bbbbb cc")  # 13 chars
    assert op.op == "UPDATE" and op.target.id == "o1" and "13 > 1.2 x 10" in op.reason


def test_refinement_updates_below_0_5(tmp_path):
    log = make_log(tmp_path, "alpha beta gamma delta")  # 22 chars
    # 3 of the 4 old words kept (> half), 55 chars > 26.4, similarity 3/7
    op = one(log, "alpha beta gamma xxxxxxxxxxxxxxxxx yyyyyyyyyyyy zzzzzzz")
    assert op.op == "UPDATE" and op.similarity == 3 / 7 and "refinement" in op.reason
    # exactly half of the old words kept: not a refinement -> SUPERSEDE
    op = one(log, "alpha beta xxxxxxxxxxxxx yyyyyyyyyyy")
    assert op.op == "SUPERSEDE" and op.similarity == 2 / 6


# -- SUPERSEDE and the 0.5 edge ------------------------------------------------------
def test_similarity_exactly_0_5_supersedes(tmp_path):
    log = make_log(tmp_path, "alphabet betamax gammaray deltaforce")
    op = one(log, "alphabet betamax gammaray e f")  # 3 / 6, not longer
    assert op.op == "SUPERSEDE" and op.similarity == 0.5
    op = one(log, "alphabet betamax gammaray e")  # 3 / 5 = 0.6 > 0.5, not longer
    assert op.op == "NONE"


# -- DELETE ------------------------------------------------------------------------
def test_delete_only_when_enabled_and_for_a_retraction(tmp_path):
    log = make_log(tmp_path, "use Redis for session cache", "Port is 8080")
    retraction = "Redis for session cache is no longer used"
    # disabled: the agent's rule, here a refinement (41 > 1.2 x 27 chars, 4 of 5 words)
    assert one(log, retraction).op == "UPDATE"
    op = one(log, retraction, allow_delete=True)
    assert op.op == "DELETE" and op.target.id == "o1" and "80%" in op.reason
    # not a retraction, or one naming too little of the fact (1 of 5 words): the ordinary rule
    for text in ("Redis for session cache is fast", "Redis is no longer used"):
        assert one(log, text, allow_delete=True) == one(log, text)
        assert one(log, text).op != "DELETE"
    # another type is never deleted
    assert one(log, retraction, ftype="config", allow_delete=True).op == "ADD"


# -- batches ------------------------------------------------------------------------
def test_batch_candidates_see_each_other(tmp_path):
    log = make_log(tmp_path, "Port is 8080")
    c = Candidate("decision", "Use orjson for all JSON work")
    ops = propose(log, [c, c, Candidate("decision", "USE ORJSON for all json work ")])
    assert [o.op for o in ops] == ["ADD", "NONE", "NONE"]
    assert ops[1].target is None and ops[1].target_index == 0
    assert "earlier in this batch" in ops[1].reason

    refined = Candidate("decision", "Use orjson for all JSON work, with OPT_INDENT_2 in tests")
    ops = propose(log, [c, refined])
    assert [o.op for o in ops] == ["ADD", "UPDATE"] and ops[1].target_index == 0


def test_batch_supersede_then_compare_with_the_new_fact(tmp_path):
    log = make_log(tmp_path, "alpha beta gamma")
    ops = propose(
        log,
        [
            Candidate("decision", "alpha omega"),  # supersedes o1
            Candidate("decision", "alpha beta gamma"),  # o1 is out of the pool now
        ],
    )
    assert [o.op for o in ops] == ["SUPERSEDE", "SUPERSEDE"]
    assert ops[0].target.id == "o1" and ops[1].target is None and ops[1].target_index == 0


def test_invalid_candidates_are_none(tmp_path):
    log = make_log(tmp_path, "x")
    ops = propose(log, [Candidate("opinion", "x y"), Candidate("decision", "  ")])
    assert [o.op for o in ops] == ["NONE", "NONE"]
    assert "unknown fact type" in ops[0].reason and ops[1].reason == "no content"


# -- apply --------------------------------------------------------------------------
def test_apply_appends_only_and_returns_written_ids(tmp_path):
    log = make_log(tmp_path, "aaaa bbbbb", "alpha beta gamma", "use Redis for session cache")
    before = open(log.path, "rb").read()
    ops = propose(
        log,
        [
            Candidate("decision", "Use orjson everywhere", "perf"),  # ADD
            Candidate("decision", "aaaa bbbbb cc"),  # UPDATE o1
            Candidate("decision", "alpha omega"),  # SUPERSEDE o2
            Candidate("decision", "aaaa bbbbb cc"),  # NONE (batch duplicate)
            Candidate("decision", "Redis for session cache is no longer used"),  # DELETE o3
        ],
        allow_delete=True,
    )
    assert [o.op for o in ops] == ["ADD", "UPDATE", "SUPERSEDE", "NONE", "DELETE"]
    assert open(log.path, "rb").read() == before  # proposing writes nothing
    done = apply_operations(log, ops)
    after = open(log.path, "rb").read()
    assert after.startswith(before)
    assert [d.written_ids for d in done] == [("n0",), ("o1",), ("n1", "o2"), ("o3",)]
    assert log.facts["n0"].context == "perf"
    assert log.facts["o1"].content == "aaaa bbbbb cc"
    assert log.facts["o2"].status == "superseded" and log.facts["o2"].superseded_by == "n1"
    assert log.facts["o3"].status == "deleted"
    assert after[len(before) :].count(b"\n") == 5  # add, update, new + marked, deleted
    assert load_knowledge(log.path).facts == log.facts


def test_apply_a_subset(tmp_path):
    log = make_log(tmp_path, "Port is 8080")
    c = Candidate("decision", "Use orjson for all JSON work")
    refined = Candidate("decision", "Use orjson for all JSON work, with OPT_INDENT_2 in tests")
    ops = propose(log, [c, refined])
    before = open(log.path, "rb").read()
    with pytest.raises(StaleProposalError, match="needs proposal 0 accepted"):
        apply_operations(log, [ops[1]])
    assert open(log.path, "rb").read() == before
    done = apply_operations(log, list(reversed(ops)))  # batch order, whatever the order given
    assert [d.written_ids for d in done] == [("n0",), ("n0",)]
    assert log.facts["n0"].content == refined.content
    assert apply_operations(log, []) == []


def test_apply_refuses_stale_proposals(tmp_path):
    log = make_log(tmp_path, "aaaa bbbbb", "alpha beta gamma")
    ops = propose(log, [Candidate("decision", "aaaa bbbbb cc")])
    log.update("o1", content="aaaa bbbbb edited by the agent")
    before = open(log.path, "rb").read()
    with pytest.raises(StaleProposalError, match="fact o1 changed"):
        apply_operations(log, ops)
    add = propose(log, [Candidate("decision", "brand new thing")])
    log.add("decision", "Brand new thing")
    with pytest.raises(StaleProposalError, match="the log now holds this content"):
        apply_operations(log, add)
    assert open(log.path, "rb").read().startswith(before)
    with pytest.raises(StaleProposalError, match="repeat a batch index"):
        apply_operations(log, [add[0], add[0]])
