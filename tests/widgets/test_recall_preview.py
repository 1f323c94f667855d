"""Recall preview: debounced query, hit tables, knobs, block pane, cuts and "why not?"."""

from __future__ import annotations

from dataclasses import replace

import pytest
from PySide6.QtCore import Qt

from core.demo.build import write_demo
from core.embed import load_embedder
from core.io.text import one_line
from core.recall.block import Detail, build_block, hard_cap
from core.recall.engine import RecallSettings, recall
from core.recall.knowledge_search import KnowledgeIndex
from core.recall.warm_store import WarmStore
from core.store.knowledge import load_knowledge
from widgets.common.record_model import RecordRole, SortRole
from widgets.recall.preview import RecallPreview
from widgets.recall.preview_models import DetailRow

NOW = 1_760_000_000_000
SESSION = "128b2f33-0c5c-4fd0-a6a3-a4506513270e"  # the demo's largest archived session
QUERY = "invoice number sequence table: next_invoice_number locks the year row"


@pytest.fixture(scope="module")
def recall_data(tmp_path_factory):
    root = tmp_path_factory.mktemp("recall")
    write_demo(root / "home", now_ms=NOW, segments=300)
    folder = root / "home" / "memory" / "context"
    embedder, _note = load_embedder("hash")
    store = WarmStore.open(folder, embedder, cache_dir=root / "cache", now_ms=NOW)
    store.embed_missing()
    knowledge = KnowledgeIndex(load_knowledge(folder / "knowledge.jsonl"))
    assert len(store) == 300
    return store, knowledge


@pytest.fixture
def view(qtbot, recall_data):
    store, knowledge = recall_data
    w = RecallPreview()
    qtbot.addWidget(w)
    w.resize(1500, 900)
    with qtbot.waitSignal(w.preview_changed, timeout=5000):
        w.attach(store, knowledge, RecallSettings(), now_ms=NOW)
    yield w
    qtbot.waitUntil(lambda: not w.is_busy(), timeout=5000)


def _refresh(qtbot, view):
    """Recall now and wait until the result is shown (recall runs in the job runner)."""
    with qtbot.waitSignal(view.preview_changed, timeout=5000):
        view.refresh()


def _expected(store, knowledge, settings, query, session=SESSION):
    return recall(
        query, store=store, knowledge=knowledge, settings=settings, session_id=session, now_ms=NOW
    )


def _column(model, header):
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    assert header in headers, header
    return headers.index(header)


def test_typing_updates_both_tables_after_the_debounce(qtbot, view, recall_data):
    view.set_default_query("", SESSION)
    _refresh(qtbot, view)
    assert view.detail_model.rowCount() == 0
    assert view.knowledge_model.rowCount() == 0
    with qtbot.waitSignal(view.query_changed, timeout=2000) as changed:
        qtbot.keyClicks(view.query_box, QUERY)
        # Debounced: nothing recomputed while typing.
        assert view.detail_model.rowCount() == 0
        assert view.knowledge_model.rowCount() == 0
    assert changed.args == [QUERY]
    qtbot.waitUntil(lambda: view.detail_model.rowCount() > 0, timeout=2000)
    assert view.knowledge_model.rowCount() > 0
    assert view.reset_button.isEnabled()
    assert "recall took" in view.status_label.text() and view.last_seconds >= 0
    # The tables hold exactly what recall returns for the typed query.
    store, knowledge = recall_data
    expected = _expected(store, knowledge, view.settings(), QUERY)
    shown = [
        view.detail_model.record(r).hit.segment.id for r in range(view.detail_model.rowCount())
    ]
    assert shown == [h.segment.id for h in expected.search.hits]
    facts = [
        view.knowledge_model.record(r).hit.fact.id for r in range(view.knowledge_model.rowCount())
    ]
    assert facts == [h.fact.id for h in expected.knowledge]


def test_default_query_prefills_unless_the_user_typed(qtbot, view):
    view.set_default_query("agent query one", SESSION)
    assert view.query_box.text() == "agent query one"
    assert not view.reset_button.isEnabled()
    view.query_box.clear()
    qtbot.keyClicks(view.query_box, "my own words")
    view.set_default_query("agent query two", SESSION)
    assert view.query_box.text() == "my own words"
    assert view.default_query() == "agent query two"
    qtbot.mouseClick(view.reset_button, Qt.MouseButton.LeftButton)
    assert view.query_box.text() == "agent query two"
    assert not view.reset_button.isEnabled()
    view.set_default_query("agent query three", SESSION)
    assert view.query_box.text() == "agent query three"


def test_hit_components_shown_equal_the_hit_fields(qtbot, view):
    view.set_default_query(QUERY, SESSION)
    _refresh(qtbot, view)
    model = view.detail_model
    assert model.rowCount() > 0
    fields = {
        "Rank": "rank",
        "Vector": "vector_score",
        "BM25": "bm25_raw",
        "BM25 n": "bm25_norm",
        "Decay": "decay",
        "Final": "score",
        "Eff.": "effective",
    }
    for row in range(model.rowCount()):
        hit = model.record(row).hit
        for header, name in fields.items():
            index = model.index(row, _column(model, header))
            value = getattr(hit, name)
            assert index.data(SortRole) == value
            assert index.data() == (str(value) if isinstance(value, int) else f"{value:.4f}")
        vec = model.index(row, _column(model, "Vec #"))
        bm = model.index(row, _column(model, "BM25 #"))
        assert vec.data() == (str(hit.vector_rank) if hit.vector_rank else "\u2013")
        assert bm.data() == (str(hit.bm25_rank) if hit.bm25_rank else "\u2013")
        assert model.index(row, _column(model, "Segment")).data(SortRole) == hit.segment.id
        assert model.index(row, _column(model, "Session")).data() == hit.segment.session_id[:8]
        assert hit.segment.content.split()[0] in model.index(row, _column(model, "Text")).data()
    # Every column header explains itself.
    for col in range(model.columnCount()):
        assert model.headerData(col, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    km = view.knowledge_model
    assert km.rowCount() > 0
    for row in range(km.rowCount()):
        rec = km.record(row)
        assert km.index(row, _column(km, "Score")).data(SortRole) == rec.hit.score
        assert rec.total_idf > 0
        assert rec.matched_idf / rec.total_idf == pytest.approx(rec.hit.score)
        assert km.index(row, _column(km, "Type")).data() == rec.hit.fact.type


def test_block_pane_is_build_blocks_text(qtbot, view, recall_data):
    store, knowledge = recall_data
    with qtbot.waitSignal(view.block_changed, timeout=2000) as changed:
        view.set_default_query(QUERY, SESSION)
    settings = view.settings()
    expected = _expected(store, knowledge, settings, QUERY)
    cap = hard_cap(settings.hard_cap_tokens, settings.window)
    block = build_block(
        [h.fact for h in expected.knowledge],
        [Detail(h.segment, h.score) for h in expected.search.hits],
        cap,
    )
    assert block.text
    assert view.block_text_view.toPlainText() == block.text
    assert view.block_text() == block.text
    assert changed.args == [block.tokens]
    assert view.tokens_label.text() == f"<b>{block.tokens:,} / {cap:,} tokens</b>"
    assert view.tokens_bar.value() == block.tokens
    assert view.tokens_bar.maximum() == cap


def test_min_score_at_max_empties_detail_hits_and_explains(qtbot, view):
    view.set_default_query(QUERY, SESSION)
    _refresh(qtbot, view)
    assert view.detail_model.rowCount() > 0
    was_hit = view.detail_model.record(0).hit
    assert was_hit.effective < 1.0
    expl = view.explain_segment(was_hit.segment.id)
    assert expl is not None and expl.reason == "hit"
    assert "Recalled" in view.why_label.text()

    view.min_score.slider.setValue(view.min_score.slider.maximum())
    assert view.min_score.spin.value() == 1.0
    qtbot.waitUntil(lambda: view.detail_model.rowCount() == 0, timeout=2000)
    assert view.settings().search.min_score == 1.0
    assert "0 of" in view.detail_box.title()
    # The explanation follows the new result, in plain words.
    assert "below minScore" in view.why_label.text()
    expl = view.explain_segment(was_hit.segment.id)
    assert expl is not None and expl.reason == "below_min_score"
    # Rejected candidates can still be listed, greyed out.
    view.show_rejected.setChecked(True)
    assert view.detail_model.rowCount() > 0
    statuses = {view.detail_model.record(r).status for r in range(view.detail_model.rowCount())}
    assert statuses == {"below minScore"}
    assert view.detail_model.index(0, 0).data(Qt.ItemDataRole.ForegroundRole) is not None


def test_weights_decay_and_cross_session_feed_the_search(qtbot, view, recall_data):
    store, knowledge = recall_data
    view.set_default_query(QUERY, SESSION)
    _refresh(qtbot, view)
    view.vector_weight.spin.setValue(0.2)
    view.text_weight.spin.setValue(0.8)
    view.decay.spin.setValue(0.97)
    view.min_score.spin.setValue(0.3)
    view.cross_session.setChecked(True)
    cfg = view.settings().search
    assert (cfg.vector_weight, cfg.bm25_weight, cfg.decay, cfg.min_score, cfg.cross_session) == (
        0.2,
        0.8,
        0.97,
        0.3,
        True,
    )
    qtbot.waitUntil(lambda: view.preview().search.config.decay == 0.97, timeout=2000)
    expected = _expected(store, knowledge, view.settings(), QUERY)
    sessions = {h.segment.session_id for h in expected.search.candidates}
    assert len(sessions) > 1  # cross-session really searched other sessions
    shown = [view.detail_model.record(r).hit for r in range(view.detail_model.rowCount())]
    assert [(h.segment.id, h.score, h.decay) for h in shown] == [
        (h.segment.id, h.score, h.decay) for h in expected.search.hits
    ]
    assert "every session" in view.scope_label.text()
    qtbot.mouseClick(view.defaults_button, Qt.MouseButton.LeftButton)
    assert view.settings().search == RecallSettings().search


def test_cut_list_shows_what_the_hard_cap_cut(qtbot, recall_data):
    store, knowledge = recall_data
    base = RecallSettings(hard_cap_tokens=300)
    settings = replace(base, search=base.search.with_(cross_session=True, min_score=0.2))
    w = RecallPreview()
    qtbot.addWidget(w)
    w.attach(store, knowledge, settings, now_ms=NOW)
    w.set_default_query(QUERY, SESSION)
    _refresh(qtbot, w)
    block = w.preview().block
    cut = len(block.cut_details) + len(block.cut_knowledge)
    assert cut > 0
    assert w.cut_model.rowCount() == cut
    kinds = [w.cut_model.record(r).kind for r in range(cut)]
    assert kinds.count("detail") == len(block.cut_details)
    assert w.cut_model.record(kinds.index("detail")).ident == block.cut_details[0][0].segment.id
    assert f"({cut})" in w.cut_box.title()
    assert block.tokens <= 300
    assert w.tokens_label.text().endswith("/ 300 tokens</b>")
    statuses = {w.detail_model.record(r).status for r in range(w.detail_model.rowCount())}
    assert "cut by cap" in statuses
    # "why not?" on a cut hit says the cap left it out.
    cut_id = block.cut_details[0][0].segment.id
    expl = w.explain_segment(cut_id)
    assert expl is not None and expl.reason == "cut_by_hard_cap"
    assert "hard cap left it out" in w.why_label.text()
    assert "Cut by the hard cap" in w.why_label.text()


def test_clicking_a_detail_hit_explains_it(qtbot, view):
    view.set_default_query(QUERY, SESSION)
    _refresh(qtbot, view)
    view.detail_view.selectRow(0)
    proxy_index = view.detail_view.model().index(0, 0)
    row = proxy_index.data(RecordRole)
    assert isinstance(row, DetailRow)
    assert view.why_box_edit.text() == row.hit.segment.id
    assert row.hit.segment.id in view.why_label.text()


def test_why_not_for_other_session_unknown_and_messages(qtbot, view, recall_data):
    store, _knowledge = recall_data
    view.set_default_query(QUERY, SESSION)
    _refresh(qtbot, view)
    other = next(s for s in store.live() if s.session_id != SESSION)
    expl = view.explain_segment(other.id)
    assert expl.reason == "other_session"
    assert "Another session" in view.why_label.text()
    assert "cross-session recall is off" in view.why_label.text()

    assert view.explain_segment("no-such-segment").reason == "unknown"
    assert "Not in the store" in view.why_label.text()

    mine = next(s for s in store.live() if s.session_id == SESSION and s.role == "user")
    expl = view.explain_message(SESSION, "user", mine.content)
    assert expl is not None and expl.segment_id == mine.id
    assert view.why_box_edit.text() == mine.id
    assert view.explain_message(SESSION, "user", "never said this") is None
    assert "not in the warm store" in view.why_label.text()


def _attached(qtbot, recall_data):
    store, knowledge = recall_data
    w = RecallPreview()
    qtbot.addWidget(w)
    w.attach(store, knowledge, RecallSettings(), now_ms=NOW)
    return w


def test_completer_rows_are_made_off_the_gui_thread(qtbot, recall_data):
    store, _knowledge = recall_data
    w = _attached(qtbot, recall_data)
    model = w.segment_completer.model()
    assert model.rowCount() == 0  # attaching a big store makes no rows on the GUI thread
    qtbot.waitUntil(lambda: model.rowCount() == len(store), timeout=5000)
    assert [r.split()[0] for r in w.why_box.entries()] == [s.id for s in store.live()]
    qtbot.waitUntil(lambda: not w.is_busy(), timeout=5000)


def test_completer_rows_needed_before_they_arrive_are_made_at_once(qtbot, recall_data):
    store, _knowledge = recall_data
    w = _attached(qtbot, recall_data)
    assert len(w.why_box.entries()) == len(store) == w.segment_completer.model().rowCount()
    qtbot.wait(100)  # the job's rows, if they still come, change nothing
    assert w.segment_completer.model().rowCount() == len(store)
    qtbot.waitUntil(lambda: not w.is_busy(), timeout=5000)


def test_one_line_reads_past_long_whitespace_only_when_it_must():
    assert one_line("a" + " " * 1000 + "b", 10) == "a b"
    assert one_line("x" * 500, 10) == "x" * 9 + "…"
    assert one_line("one\n two\t three " * 40, 20) == "one two three one t…"
    assert one_line("short", 10) == "short"


@pytest.mark.qt_log_ignore("This plugin does not support")  # the offscreen popup
def test_segment_completer_finds_segments_by_words_and_explains(qtbot, view, recall_data):
    store, _knowledge = recall_data
    rows = view.why_box.entries()
    assert len(rows) == len(store)
    assert [r.split()[0] for r in rows] == [s.id for s in store.live()]
    view.set_default_query(QUERY, SESSION)
    _refresh(qtbot, view)
    view.show()
    qtbot.waitExposed(view)
    # Words from the middle of a segment's text find it; choosing it puts only its id in the box.
    seg = next(s for s in store.live() if "alembic migration" in one_line(s.content, 100).lower())
    completer = view.segment_completer
    qtbot.keyClicks(view.why_box_edit, "alembic migration")
    assert completer.completionCount() >= 1
    found = [
        completer.completionModel().index(i, 0).data() for i in range(completer.completionCount())
    ]
    assert all("alembic migration" in f.lower() for f in found)
    wanted = next(f for f in found if f.startswith(seg.id))
    with qtbot.waitSignal(view.why_box.segment_picked) as picked:
        completer.activated[str].emit(wanted)
    assert picked.args == [seg.id]
    assert view.why_box_edit.text() == seg.id
    assert seg.id in view.why_label.text()


def test_short_query_skips_recall_and_detach_clears(qtbot, view):
    view.set_default_query(QUERY, SESSION)
    _refresh(qtbot, view)
    assert view.block_tokens() > 0
    with qtbot.waitSignal(view.block_changed, timeout=2000) as changed:
        view.set_default_query("hi", SESSION)
    assert changed.args == [0]
    assert view.block_text_view.toPlainText() == ""
    assert "shorter than 3" in view.block_text_view.placeholderText()
    assert view.detail_model.rowCount() == 0
    view.set_default_query(QUERY, SESSION)
    _refresh(qtbot, view)
    with qtbot.waitSignal(view.block_changed, timeout=2000) as changed:
        view.detach()
    assert changed.args == [0]
    assert view.preview() is None
    assert view.detail_model.rowCount() == view.knowledge_model.rowCount() == 0
    assert view.block_text() == ""


def test_models_pass_qtmodeltester(qtbot, qtmodeltester, view):
    view.set_default_query(QUERY, SESSION)
    view.show_rejected.setChecked(True)
    _refresh(qtbot, view)
    for model in (view.knowledge_model, view.detail_model, view.cut_model):
        qtmodeltester.check(model)


def test_renders(qtbot, view, tmp_path):
    view.set_default_query(QUERY, SESSION)
    _refresh(qtbot, view)
    view.detail_view.selectRow(0)
    view.show()
    qtbot.waitExposed(view)
    image = view.grab()
    assert image.width() == 1500
    assert image.save(str(tmp_path / "recall_preview.png"))
