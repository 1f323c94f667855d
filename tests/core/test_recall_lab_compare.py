"""The recall lab's comparison run and its labels readers (issue 19, item 4).

On a slice of LoCoMo's dev half (original 2023 dates): the run measures what
``memlens eval`` measures, skips what no ranking can find and says why, searches
evicted segments only when asked, stops when cancelled; BEIR qrels read like memlens
labels, bad lines reported by file and line.
"""

from __future__ import annotations

import numpy as np
import pytest

from core.embed.hash import HashEmbedder
from core.io.jobs import Cancelled
from core.io.problems import FormatError
from core.recall.evaluate import Label, evaluate, load_labels
from core.recall.lab import REFERENCE, evaluate_reference
from core.recall.lab_compare import AGENT, compare, lab_configs
from core.recall.qrels import find_beir, load_any_labels
from core.recall.rankings import DEFAULT_RANKING, RANKINGS, SEED
from core.recall.warm_store import StoreSettings, WarmStore
from tests.locomo_slice import make_slice


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    sl = make_slice(tmp_path_factory.mktemp("locomo"))
    labels, problems = load_labels(sl.labels_path)
    assert not problems and len(labels) >= 10
    return sl, labels


def _open(sl, eviction_days=0.0):
    return WarmStore.open(sl.store, HashEmbedder(), StoreSettings(eviction_days=eviction_days))


def test_the_lab_offers_every_ranking_the_agent_and_rank_bm25():
    configs = lab_configs(RANKINGS[SEED.name].search_config(_agent()))
    names = [c.name for c in configs]
    assert names == [*RANKINGS, AGENT, REFERENCE]
    by = {c.name: c for c in configs}
    assert by[AGENT].ranking == SEED and not by[AGENT].deepen
    assert by[AGENT].search.min_score == 0.7 and by[AGENT].search.limit == 8
    assert all(by[n].search.min_score == 0 and by[n].search.decay == 1 for n in RANKINGS)
    assert by[REFERENCE].ranking is None
    assert DEFAULT_RANKING in names


def _agent():
    from core.recall.hybrid import SearchConfig

    return SearchConfig()


def test_a_run_measures_what_eval_measures(lab):
    sl, labels = lab
    store = _open(sl)
    configs = {c.name: c for c in lab_configs(_agent())}
    chosen = [configs[DEFAULT_RANKING], configs[SEED.name], configs[REFERENCE]]
    seen = []
    run = compare(
        store, labels, chosen, now_ms=1_700_000_000_000, progress=lambda *a: seen.append(a)
    )
    assert len(run.rows) == len(labels) and not run.skipped
    assert seen[0][:2] == (0, len(labels)) and seen[-1][:2] == (len(labels), len(labels))
    seed = evaluate(store, labels, configs[SEED.name].search, now_ms=1_700_000_000_000)
    for k in (1, 5, 10):
        expected = sum(q.recall[k] for q in seed.queries) / len(seed.queries)
        assert run.summary(SEED.name)[f"R@{k}"] == pytest.approx(expected)
    ref = evaluate_reference(store, labels, (1, 5, 10), configs[REFERENCE].search)
    assert run.summary(REFERENCE)["MRR"] == pytest.approx(
        sum(q.reciprocal_rank for q in ref.queries) / len(ref.queries)
    )
    curve = run.curve(DEFAULT_RANKING)
    assert len(curve) == 10 and curve == sorted(curve)
    assert curve[9] == run.recall_at(DEFAULT_RANKING, 10)
    won_a, won_b, ties = run.wins(DEFAULT_RANKING, SEED.name)
    assert won_a + won_b + ties == len(labels)
    for row in run.rows:
        rank = row.first_rank(SEED.name)
        ranked = row.reports[SEED.name].ranked
        if rank is None:
            assert not set(row.label.relevant) & set(ranked)
        else:
            assert ranked[rank - 1] in row.label.relevant
            assert not set(row.label.relevant) & set(ranked[: rank - 1])


def test_the_agent_row_is_cut_at_its_limit(lab):
    sl, labels = lab
    store = _open(sl)
    agent = next(
        c for c in lab_configs(_agent().with_(min_score=0.0, decay=1.0)) if c.name == AGENT
    )
    run = compare(store, labels, [agent])
    assert max(len(r.reports[AGENT].ranked) for r in run.rows) <= agent.search.limit


def test_evicted_segments_are_searched_only_when_asked(lab):
    sl, labels = lab
    store = _open(sl, eviction_days=90)  # the agent's default: every 2023 turn is gone
    assert len(store) == 0
    configs = [c for c in lab_configs(_agent()) if c.name == SEED.name]
    as_agent = compare(store, labels, configs)
    assert not as_agent.rows and len(as_agent.skipped) == len(labels)
    assert all("not in the store" in why for _, why in as_agent.skipped)
    ranked = compare(store, labels, configs, evict=False)
    assert len(ranked.rows) == len(labels) and ranked.kept > 0
    assert ranked.recall_at(SEED.name, 10) > 0.3
    assert len(store) == 0  # the store itself is left as the agent has it


def test_the_copy_without_eviction_is_read_once_per_store_state(lab, tmp_path):
    import shutil

    from core.recall.lab_compare import without_eviction

    sl, _ = lab
    shutil.copy(sl.store / "segments.jsonl", tmp_path / "segments.jsonl")  # it is appended to
    store = WarmStore.open(tmp_path, HashEmbedder(), StoreSettings(eviction_days=90))
    first = without_eviction(store)
    assert first is not store and len(first) > 0
    assert without_eviction(store) is first  # the next run reads nothing again
    store.add("locomo-26", "user", "a turn written since", timestamp=1_700_000_000_000)
    assert without_eviction(store) is not first  # the store changed: read again


def test_a_label_of_another_session_is_skipped_with_its_reason(lab):
    sl, labels = lab
    store = _open(sl)
    odd = Label("where is it", labels[0].relevant, "no-such-session", 99)
    run = compare(store, [odd, labels[0]], lab_configs(_agent())[:1])
    assert len(run.rows) == 1 and run.skipped[0][0] is odd
    assert "session" in run.skipped[0][1]


def test_cancel_stops_the_run(lab):
    sl, labels = lab
    store = _open(sl)
    asked = iter([False, False, True])
    with pytest.raises(Cancelled):
        compare(store, labels, lab_configs(_agent())[:1], cancelled=lambda: next(asked, True))


def _beir(folder, lines, queries):
    (folder / "qrels").mkdir(parents=True)
    (folder / "qrels" / "test.tsv").write_text(lines)
    (folder / "queries.jsonl").write_text(queries)


def test_beir_qrels_read_as_labels(tmp_path):
    _beir(
        tmp_path,
        "query-id\tcorpus-id\tscore\nq1\tseg-a\t1\nq1\tseg-b\t2\nq2\tseg-c\t0\nq3\tseg-d\n"
        "q4\tseg-e\tmany\nq5\tseg-f\t1\n",
        '{"_id": "q1", "text": "where did we deploy"}\n{"_id": "q2", "text": "nothing"}\n'
        '{"_id": "q4", "text": "x"}\nnot json\n',
    )
    assert find_beir(tmp_path) == (tmp_path / "queries.jsonl", tmp_path / "qrels" / "test.tsv")
    for path in (tmp_path, tmp_path / "qrels" / "test.tsv"):
        labels, problems = load_any_labels(path)
        assert [(x.query, x.relevant, x.session, x.line) for x in labels] == [
            ("where did we deploy", ("seg-a", "seg-b"), None, 2)
        ]
        said = {(p.file.rsplit("/", 1)[-1], p.line): p.message for p in problems}
        assert "needs query-id" in said[("test.tsv", 5)]
        assert "not a number" in said[("test.tsv", 6)]
        assert "'q5' is not in" in said[("test.tsv", 7)]
        assert ("queries.jsonl", 4) in said


def test_labels_that_cannot_be_used_name_the_file(tmp_path):
    with pytest.raises(FormatError, match="not a labels file"):
        load_any_labels(tmp_path)
    _beir(tmp_path / "b", "q1\tseg\t0\n", '{"_id": "q1", "text": "t"}\n')
    with pytest.raises(FormatError, match=r"test\.tsv.*no usable judgement"):
        load_any_labels(tmp_path / "b")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": 3}\n')
    with pytest.raises(FormatError, match=r"bad\.jsonl"):
        load_any_labels(bad)


def test_the_reference_ranks_a_session_as_rank_bm25s_get_scores_does(lab):
    from core.recall.lab import OkapiReference
    from core.recall.tokenize import tokenize

    sl, labels = lab
    ref = OkapiReference(_open(sl))
    assert ref.okapi is not None
    for label in labels:
        scores = np.asarray(ref.okapi.get_scores(tokenize(label.query)))
        mine = np.isin(np.arange(len(ref.ids)), ref.by_session[label.session])
        scores = np.where(mine, scores, 0.0)
        positive = np.flatnonzero(scores > 0)
        order = positive[np.argsort(-scores[positive], kind="stable")][:10]
        assert ref.ranked(label.query, label.session, 10) == [ref.ids[i] for i in order]
