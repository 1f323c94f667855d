"""The Recall lab view (issue 19, item 4), on a slice of LoCoMo's dev half.

Labels read from the data directory, a run in the job runner with progress and
cancel, the summary beside rank-bm25's row, the per-query table and charts, and the
drill-down into the Recall view's "why not?" in the app.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from core.embed.hash import HashEmbedder
from core.recall.hybrid import SearchConfig
from core.recall.lab import REFERENCE
from core.recall.rankings import DEFAULT_RANKING, SEED
from core.recall.warm_store import StoreSettings, WarmStore
from tests.locomo_slice import make_slice
from tests.qt_read import shown_records
from widgets.common.jobs import JobRunner
from widgets.common.view_jobs import wait_idle
from widgets.recall_lab.view import RecallLabView


@pytest.fixture(scope="module")
def sl(tmp_path_factory):
    return make_slice(tmp_path_factory.mktemp("lab"))


def _view(qtbot, sl, eviction_days=0.0):
    view = RecallLabView(runner=JobRunner())
    qtbot.addWidget(view)
    store = WarmStore.open(sl.store, HashEmbedder(), StoreSettings(eviction_days=eviction_days))
    view.attach(store, SearchConfig(), sl.store)
    return view


def _cells(model, row):
    return [model.index(row, c).data() for c in range(model.columnCount())]


def test_a_run_compares_two_configs_beside_rank_bm25(qtbot, sl):
    view = _view(qtbot, sl)
    assert len(view.labels()) == len(sl.labels)  # labels.jsonl of the data directory
    assert f"{len(sl.labels)} labelled queries" in view.labels_label.text()
    assert view.a_combo.currentText() == DEFAULT_RANKING
    assert view.b_combo.currentText() == SEED.name
    qtbot.mouseClick(view.run_button, Qt.MouseButton.LeftButton)
    assert not view.run_button.isEnabled() and view.cancel_button.isEnabled()
    assert wait_idle(view._runner, view._key, 60_000)
    run = view.last_run
    assert run is not None and len(run.rows) == len(sl.labels)
    summary = view.summary_model
    names = [summary.index(r, 0).data() for r in range(summary.rowCount())]
    assert names == [DEFAULT_RANKING, SEED.name, REFERENCE]
    headers = [summary.headerData(c, Qt.Orientation.Horizontal) for c in range(6)]
    assert headers == ["Config", "R@1", "R@5", "R@10", "MRR", "nDCG@10"]
    assert _cells(summary, 1)[3] == f"{run.summary(SEED.name)['R@10']:.3f}"
    rows = shown_records(view.query_proxy)
    assert len(rows) == len(sl.labels)
    first = _cells(view.query_proxy, 0)
    assert first[1] == rows[0].label.query and first[2] == sl.session
    rank = rows[0].first_rank(DEFAULT_RANKING)
    assert first[3] == ("—" if rank is None else str(rank))
    assert first[7] in (DEFAULT_RANKING, SEED.name, "tie")
    assert set(view.charts.curves) == {DEFAULT_RANKING, SEED.name, REFERENCE}
    won_a, won_b, ties = run.wins(DEFAULT_RANKING, SEED.name)
    assert f"A wins {won_a}" in view.status_label.text() and won_a + won_b + ties == len(rows)
    assert view.charts.bars is not None
    assert not view.progress.isVisible() and view.run_button.isEnabled()


def test_cancel_stops_a_run_and_keeps_nothing(qtbot, sl):
    view = _view(qtbot, sl)
    view._labels = view.labels() * 60  # a long run
    view.run()
    assert view.is_busy()
    qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
    assert wait_idle(view._runner, view._key, 60_000)
    qtbot.waitUntil(lambda: not view.is_busy(), timeout=10_000)
    assert view.last_run is None
    assert "Cancelled" in view.status_label.text()
    assert view.run_button.isEnabled()
    view.show()  # from the keyboard: Escape anywhere in the view
    view.query_view.setFocus()
    qtbot.waitUntil(view.query_view.hasFocus, timeout=5000)
    view.run()
    qtbot.keyClick(view.query_view, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not view.is_busy(), timeout=10_000)
    assert view.last_run is None and "Cancelled" in view.status_label.text()


def test_evicted_turns_are_ranked_unless_asked(qtbot, sl):
    view = _view(qtbot, sl, eviction_days=90)  # 2023 turns: the agent evicts them all
    view.run()
    assert wait_idle(view._runner, view._key, 60_000)
    assert view.last_run is not None and len(view.last_run.rows) == len(sl.labels)
    assert "segments the agent evicts searched too" in view.status_label.text()
    view.evict_box.setChecked(True)
    view.run()
    assert wait_idle(view._runner, view._key, 60_000)
    assert view.last_run is not None and not view.last_run.rows
    assert f"{len(sl.labels)} skipped" in view.status_label.text()


def test_a_bad_labels_file_is_named_and_nothing_runs(qtbot, sl, tmp_path):
    view = _view(qtbot, sl)
    bad = tmp_path / "broken.jsonl"
    bad.write_text("{not json\n")
    assert not view.load_labels(bad)
    assert "broken.jsonl" in view.status_label.text()
    assert view.labels()  # the labels read before stay
    problems = []
    view.problems_found.connect(problems.extend)
    partial = tmp_path / "partial.jsonl"
    partial.write_text(sl.labels_path.read_text() + '{"query": 1}\n')
    assert view.load_labels(partial)
    assert [p.line for p in problems] == [len(sl.labels) + 1]
    assert "1 lines skipped" in view.status_label.text()


def test_drill_down_opens_the_query_in_recall_with_why_not(qtbot, sl):
    from app.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    window.open_path(str(sl.home))
    lab = window.lab_view
    qtbot.waitUntil(lambda: bool(lab.labels()), timeout=30_000)
    lab.run()
    assert wait_idle(lab._runner, lab._key, 60_000)
    assert lab.last_run is not None
    missed = next(r for r in lab.last_run.rows if r.reports[DEFAULT_RANKING].missing)
    row = shown_records(lab.query_proxy).index(missed)
    lab.query_view.setCurrentIndex(lab.query_proxy.index(row, 1))
    lab.query_view.activated.emit(lab.query_view.currentIndex())
    recall = window.recall_view
    assert window.tabs.currentIndex() == window.tab_index("recall")
    assert recall.query() == missed.label.query
    assert f"session {recall.session_label(sl.session)}" in recall.scope_label.text()
    segment = missed.reports[DEFAULT_RANKING].missing[0]
    qtbot.waitUntil(lambda: segment in recall.why_box.edit.text(), timeout=10_000)
    qtbot.waitUntil(lambda: not recall.is_busy(), timeout=10_000)
    # the app's store is the agent's: its 2023 turns are evicted, and "why not?" says so
    assert "evicted" in recall.why_box.label.text().lower()


def test_the_recall_view_ranks_with_the_ranking_chosen(qtbot, sl):
    from core.recall.engine import RecallSettings, recall
    from core.recall.rankings import get_ranking
    from widgets.recall.preview import RecallPreview

    store = WarmStore.open(sl.store, HashEmbedder(), StoreSettings(eviction_days=0))
    view = RecallPreview(runner=JobRunner())
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.preview_changed, timeout=10_000):
        pure = SearchConfig(min_score=0.0, decay=1.0)  # every candidate a hit: ranking shows
        view.attach(store, None, RecallSettings(search=pure), now_ms=1_700_000_000_000)
    combo = view.knobs.ranking_combo
    assert combo.currentData() == SEED.name and "agent" in combo.currentText()
    label = sl.labels[0]
    with qtbot.waitSignal(view.preview_changed, timeout=10_000):
        view.ask(label["query"], sl.session, label["relevant"][0])
    seed_hits = [
        view.detail_model.record(r).hit.segment.id for r in range(view.detail_model.rowCount())
    ]
    with qtbot.waitSignal(view.preview_changed, timeout=10_000):
        combo.setCurrentIndex(combo.findData(DEFAULT_RANKING))
    ranking = get_ranking(DEFAULT_RANKING)
    settings = view.settings()
    assert settings.ranking == DEFAULT_RANKING
    assert settings.search.vector_weight == ranking.vector_weight  # the ranking's own weights
    expected = recall(
        label["query"], store=store, knowledge=None, settings=settings,
        session_id=sl.session, now_ms=1_700_000_000_000,
    )  # fmt: skip
    shown = [
        view.detail_model.record(r).hit.segment.id for r in range(view.detail_model.rowCount())
    ]
    assert shown == [h.segment.id for h in expected.search.hits] and shown != seed_hits
    assert any(f"ranking {DEFAULT_RANKING}" in n for n in expected.search.notes)
    far = next(
        s.id for s in store.live() if s.id not in {h.segment.id for h in expected.search.candidates}
    )
    expl = view.explain_segment(far)
    assert expl is not None and expl.reason == "no_candidate"
    assert f"by the {DEFAULT_RANKING} ranking" in expl.message  # not the seed's cut-off story
    view.knobs.defaults_button.click()
    assert view.settings().ranking == SEED.name


def test_the_recall_views_settings_are_a_config_of_the_lab(qtbot, sl):
    from core.recall.engine import RecallSettings
    from core.recall.lab_compare import VIEW

    view = _view(qtbot, sl)
    settings = RecallSettings(search=SearchConfig(min_score=0.3, decay=1.0), ranking=SEED.name)
    view.set_view_settings(settings)
    chosen = next(c for c in view.configs() if c.name == VIEW)
    assert chosen.search.min_score == 0.3 and chosen.search.limit == 8 and not chosen.deepen
    assert [view.a_combo.itemText(i) for i in range(view.a_combo.count())][-1] == VIEW
    view.select(VIEW, SEED.name)
    view.run()
    assert wait_idle(view._runner, view._key, 60_000)
    run = view.last_run
    assert run is not None and max(len(r.reports[VIEW].ranked) for r in run.rows) <= 8
    view.set_view_settings(RecallSettings(search=SearchConfig(min_score=0.5)))
    assert next(c for c in view.configs() if c.name == VIEW).search.min_score == 0.5
    assert sum(c.name == VIEW for c in view.configs()) == 1
