from __future__ import annotations

import math

import numpy as np
import orjson
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor

from core.context.budget import budget_for
from core.context.trim import default_query, smart_trim
from core.dataset.load import load_dataset
from core.demo.build import write_demo
from core.transcript.loader import load_transcript
from core.transcript.replay import context_at
from widgets.common.record_model import RecordRole
from widgets.trim.model import (
    DECISION_COLORS,
    DECISION_LABELS,
    DECISIONS,
    TrimParameters,
    TrimTableModel,
    compute_run,
)
from widgets.trim.view import TrimView

NOW = 1_760_000_000_000
# With no reserve and no hard cap, a 1,700-token window on the large fixture makes
# every decision happen: protected, kept, BM25, age (blank tool calls) and pairing.
SMALL = {"window": 1700, "reserve": 0, "hard_cap": 0}
DECISION_COL, REASON_COL = 3, 6
CALL_TYPES = {"toolCall", "tool_use", "toolUse", "functionCall"}


@pytest.fixture(scope="module")
def large_context(fixtures_dir):
    session = load_transcript(fixtures_dir / "large-session.jsonl")
    return [item.message for item in context_at(session)]


@pytest.fixture(scope="module")
def demo_data(tmp_path_factory):
    summary = write_demo(tmp_path_factory.mktemp("trim") / "home", now_ms=NOW, segments=300)
    return load_dataset(summary.root)


def make_view(qtbot):
    view = TrimView()
    qtbot.addWidget(view)
    view.resize(1280, 820)
    return view


def feed(qtbot, view, messages, **figures):
    with qtbot.waitSignal(view.result_ready, timeout=10_000) as sig:
        view.set_context(messages, default_query(messages), **figures)
    return sig.args[0]


def cell(view, row, col, role=Qt.ItemDataRole.DisplayRole):
    return view.model.index(row, col).data(role)


def bar_indices(item):
    """Message index and height of every bar drawn by a decision's plot item."""
    x, y = item.getOriginalDataset()
    if x is None or len(x) == 0:
        return [], []
    return np.floor(x[0::4]).astype(int).tolist(), y[1::4].astype(int).tolist()


def raw_call_ids(raw):
    content = raw.get("content")
    blocks = content if isinstance(content, list) else []
    return [b["id"] for b in blocks if isinstance(b, dict) and b.get("type") in CALL_TYPES]


def raw_result_ids(raw):
    if raw.get("role") in ("toolResult", "tool"):
        return [raw.get("toolCallId") or raw.get("tool_call_id")]
    content = raw.get("content")
    blocks = content if isinstance(content, list) else []
    return [
        b.get("tool_use_id")
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]


def assert_paired(exported, original):
    """No orphaned result; no call left without a result that the original context had."""
    answered = {i for raw in original for i in raw_result_ids(raw)}
    seen_calls, results = set(), set()
    for raw in exported:
        for rid in raw_result_ids(raw):
            assert rid in seen_calls, f"orphaned tool result {rid}"
            results.add(rid)
        seen_calls.update(raw_call_ids(raw))
    lost = {c for c in seen_calls if c in answered} - results
    assert not lost, f"calls kept without their results: {sorted(lost)[:5]}"
    return len(results)


# -- model ---------------------------------------------------------------------------------------


def test_models_pass_the_model_tester(qtmodeltester, large_context):
    run = compute_run(large_context, TrimParameters(1700, 0, 0, 6, default_query(large_context)))
    model = TrimTableModel()
    model.set_records(run.rows)
    qtmodeltester.check(model)


# -- the real fixture ------------------------------------------------------------------------------


def test_every_message_is_a_row_and_a_bar_coloured_by_its_decision(qtbot, large_context):
    view = make_view(qtbot)
    result = feed(qtbot, view, large_context, **SMALL)
    expected = smart_trim(large_context, default_query(large_context), window=1700,
                          reserve_tokens=0, hard_cap=0)  # fmt: skip
    assert result.decisions == expected.decisions
    assert set(result.counts()) == set(DECISIONS), "the fixture should show every decision"

    assert view.model.rowCount() == len(large_context) == view.proxy.rowCount()
    for row, d in enumerate(result.decisions):
        assert cell(view, row, 0) == str(d.index)
        assert cell(view, row, 2) == f"{d.tokens:,}"
        assert cell(view, row, DECISION_COL) == DECISION_LABELS[d.decision]
        assert cell(view, row, DECISION_COL, Qt.ItemDataRole.DecorationRole) == QColor(
            DECISION_COLORS[d.decision]
        )
        assert cell(view, row, REASON_COL) == d.reason
        assert cell(view, row, 5) == ("" if d.bm25_score is None else f"{d.bm25_score:.3f}")

    for decision in DECISIONS:
        mine = [d for d in result.decisions if d.decision == decision]
        for items in (view.bar_items, view.strip_items):
            assert pg.mkBrush(items[decision].opts["fillBrush"]).color() == QColor(
                DECISION_COLORS[decision]
            )
        idx, heights = bar_indices(view.bar_items[decision])
        assert idx == [d.index for d in mine]
        assert heights == [d.tokens for d in mine]
        strip_idx, strip_heights = bar_indices(view.strip_items[decision])
        assert strip_idx == idx and set(strip_heights) <= {1}
        assert view.chips[decision].text().endswith(f"{len(mine):,}")

    before, after = result.tokens_before, result.tokens_after
    pct = 100 * (before - after) / before
    assert view.summary_label.text() == f"{before:,} → {after:,} tokens (−{pct:.1f}%)"
    assert f"Safe limit {result.safe_limit:,}" in view.detail_label.text()


@pytest.mark.parametrize("window", [1700, 30_000, 100_000])
def test_export_holds_the_kept_messages_with_tool_pairs_intact(qtbot, large_context, window):
    view = make_view(qtbot)
    result = feed(qtbot, view, large_context, window=window, reserve=0, hard_cap=0)
    assert result.ran
    with qtbot.waitSignal(view.export_requested) as sig:
        qtbot.mouseClick(view.export_button, Qt.MouseButton.LeftButton)
    exported = orjson.loads(sig.args[0])
    assert exported == result.kept_raw()
    assert len(exported) == sum(not d.removed for d in result.decisions) < len(large_context)
    pairs = assert_paired(exported, [m.raw for m in large_context])
    assert pairs >= 1, "the export should hold at least one call with its result"
    # The check itself catches an orphan: drop a call and its result is orphaned.
    call_at = next(i for i, raw in enumerate(exported) if raw_call_ids(raw))
    with pytest.raises(AssertionError):
        assert_paired(exported[:call_at] + exported[call_at + 1 :], [m.raw for m in large_context])


def test_changing_the_window_reruns_once_after_the_debounce(qtbot, large_context):
    view = make_view(qtbot)
    first = feed(qtbot, view, large_context, **SMALL)
    got = []
    view.result_ready.connect(got.append)
    for value in (20_000, 40_000, 60_000):
        view.window_spin.setValue(value)
    assert not got and view.state_label.text() == "", "the rerun waits for the debounce"
    qtbot.waitUntil(lambda: len(got) == 1, timeout=5000)
    qtbot.wait(400)
    assert len(got) == 1, "three quick changes make one run"
    second = got[0]
    assert second.safe_limit == 60_000 == view.result().safe_limit
    assert second.counts() != first.counts()
    kept = sum(not d.removed for d in second.decisions)
    shown = sum(
        cell(view, r, DECISION_COL) in ("Protected", "Kept") for r in range(view.model.rowCount())
    )
    assert shown == kept
    assert view.summary_label.text().startswith(
        f"{second.tokens_before:,} → {second.tokens_after:,}"
    )


def test_query_and_protected_count_rerun(qtbot, large_context):
    view = make_view(qtbot)
    feed(qtbot, view, large_context, **SMALL)
    assert view.query_edit.text() == default_query(large_context)

    with qtbot.waitSignal(view.result_ready, timeout=5000) as sig:
        view.protected_spin.setValue(2)
    fewer = sig.args[0]
    assert fewer.counts()["protected"] < 11

    with qtbot.waitSignal(view.result_ready, timeout=5000) as sig:
        view.query_edit.setText("ab")  # under 3 characters: the agent does not trim
    skipped = sig.args[0]
    assert not skipped.ran and skipped.query == "ab"
    labels = {cell(view, r, DECISION_COL) for r in range(view.model.rowCount())}
    assert labels == {"Kept"}
    assert "(−0.0%)" in view.summary_label.text()
    assert "Not trimmed" in view.detail_label.text()

    with qtbot.waitSignal(view.result_ready, timeout=5000) as sig:
        view.defaults_button.click()
    back = sig.args[0]
    assert back.ran and back.query == default_query(large_context).strip()
    assert view.protected_spin.value() == 6


def test_within_the_limit_nothing_is_trimmed_and_all_is_exported(qtbot, large_context):
    view = make_view(qtbot)
    result = feed(qtbot, view, large_context, window=200_000, reserve=4000, hard_cap=4000)
    assert not result.ran
    assert view.chips["kept"].text() == f"Kept  {len(large_context):,}"
    assert orjson.loads(view.export_bytes()) == [m.raw for m in large_context]
    assert "within the safe limit" in view.detail_label.text()


# -- demo data -------------------------------------------------------------------------------------


def test_demo_session_with_its_budget_and_the_decision_filter(qtbot, demo_data):
    session = max(demo_data.sessions, key=lambda s: len(s.entries))
    messages = [item.message for item in context_at(session)]
    budget = budget_for(session, config=demo_data.config, window=30_000)
    reserve = budget.window - budget.hard_cap - budget.safe_limit
    view = make_view(qtbot)
    result = feed(qtbot, view, messages, window=budget.window, reserve=reserve,
                  hard_cap=budget.hard_cap)  # fmt: skip
    assert result.safe_limit == budget.safe_limit
    assert result.ran and view.model.rowCount() == len(messages)
    for row, d in enumerate(result.decisions):
        assert cell(view, row, DECISION_COL) == DECISION_LABELS[d.decision]

    counts = result.counts()
    view.chips["trimmed_bm25"].click()
    view.chips["removed_pairing"].click()
    shown = {"protected", "kept", "trimmed_age"}
    assert view.proxy.rowCount() == sum(counts.get(d, 0) for d in shown)
    rows = [view.proxy.index(r, 0).data(RecordRole) for r in range(view.proxy.rowCount())]
    assert {r.decision.decision for r in rows} <= shown

    trimmed = next(d.index for d in result.decisions if d.decision == "trimmed_bm25")
    with qtbot.waitSignal(view.message_selected) as sig:
        assert view.select_message(trimmed)
    assert sig.args == [trimmed]
    assert view.chips["trimmed_bm25"].isChecked(), "selecting a hidden message shows it again"
    assert view.table.currentIndex().data(RecordRole).decision.index == trimmed
    assert view.cursor_line.isVisible() and math.isclose(view.cursor_line.value(), trimmed + 0.5)


def test_hover_and_click_on_the_chart(qtbot, demo_data):
    session = max(demo_data.sessions, key=lambda s: len(s.entries))
    messages = [item.message for item in context_at(session)]
    view = make_view(qtbot)
    view.show()
    result = feed(qtbot, view, messages, window=30_000, reserve=4000, hard_cap=3000)
    qtbot.waitExposed(view)
    target = result.decisions[len(messages) // 2]
    vb = view.strip_plot.getViewBox()
    pos = vb.mapViewToScene(QPointF(target.index + 0.5, 0.5))
    view.chart.scene().sigMouseMoved.emit(pos)
    assert view.hover_label.text().startswith(f"#{target.index} · ")
    assert target.reason in view.hover_label.text()


# -- failures and clearing ----------------------------------------------------------------------


def test_a_failing_trim_is_reported_not_raised(qtbot):
    view = make_view(qtbot)
    with qtbot.waitSignal(view.trim_failed, timeout=5000) as sig:
        view.set_context([None], "query", 1000, 0, 0)  # not a message: smart_trim raises
    assert "AttributeError" in sig.args[0]
    assert view.summary_label.text() == "Trim failed"
    assert view.result() is None and not view.export_button.isEnabled()


def test_clear_drops_a_result_still_on_its_way(qtbot, large_context):
    view = make_view(qtbot)
    feed(qtbot, view, large_context, **SMALL)
    view.run()
    view.clear()
    with qtbot.assertNotEmitted(view.result_ready, wait=500):
        pass
    assert view.model.rowCount() == 0 and view.result() is None
    assert not view.export_button.isEnabled() and not view.run_button.isEnabled()
    assert all(bar_indices(item) == ([], []) for item in view.bar_items.values())
