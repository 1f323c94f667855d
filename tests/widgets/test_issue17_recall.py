"""Issue 17 in the Recall tab: one block count, unique session ids, one explanation, room."""

from __future__ import annotations

import html
import re

import pytest
from PySide6.QtCore import Qt

from bench.corpus import write_store
from core.cli.main import run_cli
from core.dataset.load import load_dataset
from core.embed import load_embedder
from core.recall.block import BLOCK_ESTIMATOR
from core.recall.engine import RecallSettings
from core.recall.hybrid import SearchConfig
from core.recall.warm_store import WarmStore
from core.store.segments import append_segments, make_segment
from core.transcript.parts import ORIGIN_RECALLED
from tests.qt_read import shown_records
from widgets.recall.preview import RecallPreview
from widgets.session.context_view import ContextView

NOW = 1_790_000_000_000


def _open(folder, tmp_path):
    embedder, _note = load_embedder("hash")
    store = WarmStore.open(folder, embedder, cache_dir=tmp_path / "cache", now_ms=NOW)
    store.embed_missing()
    return store


def _recall(qtbot, view, query, session=None):
    view.query_box.setText(query)
    view.set_default_query(query, session, now_ms=NOW)
    with qtbot.waitSignal(view.preview_changed, timeout=5000):
        view.refresh()


@pytest.fixture
def store_folder(tmp_path):
    folder = tmp_path / "store"
    write_store(folder, 200, now_ms=NOW)
    return folder


def test_context_view_counts_the_recalled_block_as_the_recall_view(qtbot, tmp_path, store_folder):
    store = _open(store_folder, tmp_path)
    view = RecallPreview()
    qtbot.addWidget(view)
    settings = RecallSettings(search=SearchConfig(min_score=0.0, cross_session=True))
    view.attach(store, None, settings, now_ms=NOW)
    _recall(qtbot, view, "fix the parser cache retry")
    block, tokens = view.block_text(), view.block_tokens()
    assert block and tokens
    assert BLOCK_ESTIMATOR in view.estimator_label.text()

    data = load_dataset(store_folder, now_ms=NOW)  # the store's sessions, rebuilt
    session = data.sessions[0]
    context = ContextView()
    qtbot.addWidget(context)
    context.show_context(session, session.leaf.id, block)
    injected = [r for r in context.rows() if r.origin == ORIGIN_RECALLED and not r.entry_id]
    assert [r.tokens for r in injected] == [tokens]  # one number: 190, not 143
    footer = html.unescape(context.footer.text())
    assert f"recalled block {tokens:,} ({BLOCK_ESTIMATOR})" in footer


def test_sessions_sharing_a_prefix_are_told_apart(qtbot, tmp_path):
    folder = tmp_path / "store"
    first = "0123456789-aaaa-4bbb-8ccc-000000000001"
    second = "0123456789-bbbb-4bbb-8ccc-000000000002"  # the same first 10 characters
    segs = [
        make_segment(sid, "user", f"deploy the staging database migration {n}", timestamp=NOW - n)
        for n, sid in enumerate([first, second, first, second])
    ]
    folder.mkdir()
    append_segments(folder / "segments.jsonl", segs)
    store = _open(folder, tmp_path)
    view = RecallPreview()
    qtbot.addWidget(view)
    settings = RecallSettings(search=SearchConfig(min_score=0.0, cross_session=True))
    view.attach(store, None, settings, now_ms=NOW)
    _recall(qtbot, view, "staging database migration")
    proxy = view.detail_view.model()
    headers = [proxy.headerData(c, Qt.Orientation.Horizontal) for c in range(proxy.columnCount())]
    col = headers.index("Session")
    shown = {
        proxy.index(r, col).data(): proxy.index(r, col).data(Qt.ItemDataRole.ToolTipRole)
        for r in range(proxy.rowCount())
    }
    assert len(shown) == 2, shown  # two sessions, two different short forms
    for label, tip in shown.items():
        assert len(label) >= 8 and label != first[:8]
        full = first if first.startswith(label) else second
        assert full.startswith(label) and full in tip  # the whole id on hover
    view.cross_session.setChecked(False)
    view.set_default_query("staging database migration", first, now_ms=NOW)
    assert view.session_label(first) in view.scope_label.text()
    assert view.scope_label.toolTip() == f"session {first}"


def _miss_line(text):
    match = re.search(r"miss: (\S+): (.*)", text)
    assert match, text
    return match.group(1), match.group(2)


def test_recall_view_and_eval_give_one_explanation(qtbot, capsys, tmp_path):
    home = tmp_path / "home"
    ids = write_store(home / "memory" / "context", 300, now_ms=NOW)
    (home / "openclaw.json").write_text(
        "{agents: {defaults: {memoryContext: {evictionDays: 0, crossSession: false}}}}"
    )
    query = "retry loop backoff"
    # a segment of session-5 far from the query: eval misses it
    target = ids[5 + 12 * 20]
    labels = tmp_path / "labels.jsonl"
    labels.write_text(f'{{"query": "{query}", "relevant": ["{target}"], "session": "session-5"}}\n')
    code = run_cli(
        [
            "eval",
            str(home),
            "--labels",
            str(labels),
            "--decay",
            "1",
            "--min-score",
            "0.3",
            "--ranking",
            "seed",
        ]  # the Recall view's default: the agent's own ranking
    )
    out = capsys.readouterr().out
    assert code == 0, out
    seg_id, cli_text = _miss_line(out)
    assert seg_id == target

    store = _open(home / "memory" / "context", tmp_path)
    view = RecallPreview()
    qtbot.addWidget(view)
    settings = RecallSettings(search=SearchConfig(min_score=0.3, decay=1.0))
    view.attach(store, None, settings, now_ms=NOW)
    _recall(qtbot, view, query, "session-5")
    view.explain_segment(target)
    shown = html.unescape(re.sub(r"<[^>]+>", "", view.why_label.text()))
    assert cli_text in shown  # the same reason, full-ranking rank, cut-off and components
    rank = re.search(r"Full ranking: #(\d+) of (\d+)", cli_text)
    assert rank and f"Full ranking: #{rank.group(1)} of {rank.group(2)}" in shown
    assert "Candidate cut-off: the top 16 by cosine and the top 16 by BM25" in cli_text


def test_recall_tab_shows_eight_detail_rows_at_laptop_height(qtbot, tmp_path, store_folder):
    store = _open(store_folder, tmp_path)
    view = RecallPreview()
    qtbot.addWidget(view)
    settings = RecallSettings(search=SearchConfig(min_score=0.0, cross_session=True))
    view.attach(store, None, settings, now_ms=NOW)
    view.show_rejected.setChecked(True)
    _recall(qtbot, view, "fix the parser cache retry")
    # about what the Recall tab gets in a 1366x768 window beside the Sessions dock
    view.resize(880, 330)
    view.show()
    qtbot.waitExposed(view)
    table = view.detail_view
    assert len(shown_records(table.model())) >= 8
    row_height = table.rowHeight(0)
    assert table.viewport().height() >= 8 * row_height
    assert table.rowAt(8 * row_height - 1) == 7  # the eighth row is on screen
    assert view.minimumSizeHint().height() <= 330


def test_the_navigator_says_a_session_was_rebuilt_from_segments(qtbot, tmp_path):
    from widgets.session.navigator import Navigator

    folder = tmp_path / "store"
    write_store(folder, 20, now_ms=NOW, sessions=2)
    nav = Navigator()
    qtbot.addWidget(nav)
    nav.set_sessions(load_dataset(folder, now_ms=NOW).summaries)
    agent = nav.model.index(0, 0)
    tip = nav.model.index(0, 0, agent).data(Qt.ItemDataRole.ToolTipRole)
    assert "rebuilt from memory-context's segments.jsonl" in tip and "read-only" in tip
