"""Budget gauge: legend numbers, bar geometry, markers, window selector, comparison bar."""

from __future__ import annotations

import itertools

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QComboBox, QLabel, QSpinBox, QWidget

from core.context.breakdown import SECTION_KEYS, breakdown_at
from core.context.budget import budget_for
from core.transcript import load_transcript
from tests.qt_read import gauge_canvas
from widgets.budget.gauge import BudgetGauge
from widgets.budget.gauge_canvas import SECTION_COLORS, fmt_k, fmt_pct, spread_labels


def _legend(gauge, key):
    """The legend text of a section key (or ``"after"``), as shown."""
    return gauge.findChild(QLabel, f"legend-{key}").text()


def _legend_shown(gauge, key):
    return not gauge.findChild(QWidget, f"legend-entry-{key}").isHidden()


def _marker_x(gauge):
    """Pixel x of every threshold marker on the bar, by threshold key."""
    return {m.threshold.key: m.x for m in gauge_canvas(gauge).markers()}


def _marker_labels(gauge):
    return {m.threshold.key: m.label for m in gauge_canvas(gauge).markers()}


AT = "#358"  # 175,004 measured tokens (tests/core/test_budget.py)


@pytest.fixture(scope="module")
def session(fixtures_dir):
    return load_transcript(fixtures_dir / "before-compaction.jsonl")


@pytest.fixture
def gauge(qtbot):
    g = BudgetGauge()
    qtbot.addWidget(g)
    g.resize(900, 140)
    g.show()
    qtbot.waitExposed(g)
    return g


def _show(gauge, session, at=AT, window=None, recalled=0):
    bd = breakdown_at(session, at, recalled_tokens=recalled)
    b = budget_for(session, at=at, window=window, extra_tokens=recalled)
    gauge.set_breakdown(bd, b)
    return bd, b


def test_legend_and_headline_show_tokens_and_percent_of_window(gauge, session):
    bd, _ = _show(gauge, session)
    assert _legend(gauge, "tool_results") == "tool results 74,514 (37.3%)"
    assert _legend(gauge, "tool_calls") == "tool calls 43,596 (21.8%)"
    assert _legend(gauge, "user") == "user 595 (0.3%)"
    assert _legend(gauge, "unattributed") == "reported, not in messages 44,259 (22.1%)"
    assert _legend(gauge, "recalled") == "recalled memory 0 (0.0%)"
    assert _legend(gauge, "system") == "system: not in transcript"
    assert not _legend_shown(gauge, "after")
    head = gauge.headline_text()
    assert head.startswith("175,004 context tokens (reported) · 87.5% of 200,000")
    assert "996 to flush" in head and "past 80%" in head
    assert bd.total_tokens == 175_004


def test_sections_are_stacked_in_order_and_proportional(gauge, session):
    bd, b = _show(gauge, session)
    rects = gauge.section_rects()
    shown = [k for k in SECTION_KEYS if bd.tokens(k) > 0]
    assert list(rects) == shown
    for a, c in itertools.pairwise(shown):
        assert rects[a].right() == pytest.approx(rects[c].left())
    span = gauge_canvas(gauge).width() - 12  # 6 px each side; the window is the scale here
    for k in shown:
        assert rects[k].width() == pytest.approx(max(1.0, span * bd.tokens(k) / b.window), abs=0.01)
    total_right = rects[shown[-1]].right()
    assert total_right == pytest.approx(6 + span * 175_004 / 200_000, abs=0.01)


def test_painted_colours(gauge, session):
    _show(gauge, session)
    image = gauge_canvas(gauge).grab().toImage()
    for key in ("tool_calls", "tool_results", "assistant_text"):
        r = gauge.section_rects()[key]
        pixel = image.pixelColor(int(r.left()) + 2, int(r.bottom()) - 2)
        assert pixel.name() == QColor(SECTION_COLORS[key]).name(), key


def test_markers_sit_on_their_thresholds_and_move_with_the_window(gauge, session):
    _, b = _show(gauge, session)
    span = gauge_canvas(gauge).width() - 12
    at_200k = _marker_x(gauge)
    assert set(at_200k) == {"window", "compaction", "seed", "flush", "safe_limit"}
    for t in b.thresholds:
        assert at_200k[t.key] == pytest.approx(6 + span * t.tokens / 200_000)
    _, small = _show(gauge, session, window=128_000)
    at_128k = _marker_x(gauge)
    # 175,004 tokens now overflow 128k: the bar's scale is the context, not the window.
    for t in small.thresholds:
        assert at_128k[t.key] == pytest.approx(6 + span * t.tokens / 175_004)
        assert at_128k[t.key] < at_200k[t.key]
    assert small.compaction_trigger == 108_000
    assert "over the window" in gauge.headline_text()
    assert _legend(gauge, "tool_results") == "tool results 74,514 (58.2%)"


@pytest.mark.parametrize("window", [32_000, 128_000, 200_000, 1_000_000])
def test_marker_labels_never_overlap(gauge, session, window):
    _show(gauge, session, window=window)
    rects = sorted(_marker_labels(gauge).values(), key=lambda r: r.left())
    assert len(rects) == 5
    for a, c in itertools.pairwise(rects):
        assert a.right() <= c.left(), (a, c)
    assert rects[0].left() >= 0 and rects[-1].right() <= gauge_canvas(gauge).width()


def test_spread_labels_keeps_order_and_bounds():
    lefts = spread_labels([100, 101, 102, 890], [60, 60, 60, 60], 0, 900)
    assert lefts == sorted(lefts)
    assert all(b - a >= 60 for a, b in itertools.pairwise(lefts))
    assert lefts[-1] + 60 <= 900
    assert spread_labels([450], [40], 0, 900) == [430]


def test_window_selector_emits_and_the_app_recomputes(gauge, session, qtbot):
    _show(gauge, session)
    combo = gauge.findChild(QComboBox, "window-combo")
    assert combo.itemText(0) == "model default (200,000)"
    assert [combo.itemText(i) for i in range(1, combo.count())] == [
        "32k (32,000)",
        "128k (128,000)",
        "200k (200,000)",
        "1M (1,000,000)",
        "custom…",
    ]

    def recompute(_window):  # what the app does on the signal
        _show(gauge, session, window=gauge.selected_window())

    gauge.window_changed.connect(recompute)
    with qtbot.waitSignal(gauge.window_changed) as sig:
        combo.setCurrentIndex(combo.findData(128_000))
    assert sig.args == [128_000] and gauge.selected_window() == 128_000
    assert gauge.headline_text().startswith("175,004 context tokens (reported) · 136.7% of 128,000")
    assert "what-if (model: 200,000)" in gauge.headline_text()
    assert combo.itemText(0) == "model default (200,000)"  # an override does not change it

    assert gauge.findChild(QSpinBox, "custom-window-spin").isHidden()
    with qtbot.waitSignal(gauge.window_changed) as sig:
        combo.setCurrentIndex(combo.findData(-1))
    assert not gauge.findChild(QSpinBox, "custom-window-spin").isHidden()
    with qtbot.waitSignal(gauge.window_changed) as sig:
        gauge.findChild(QSpinBox, "custom-window-spin").setValue(131_072)
    assert sig.args == [131_072] and gauge.selected_window() == 131_072
    assert "of 131,072" in gauge.headline_text()

    with qtbot.waitSignal(gauge.window_changed) as sig:
        combo.setCurrentIndex(0)
    assert sig.args == [200_000] and gauge.selected_window() is None
    assert "what-if" not in gauge.headline_text()


def test_set_selected_window_is_silent(gauge, session, qtbot):
    _show(gauge, session)
    with qtbot.assertNotEmitted(gauge.window_changed):
        gauge.set_selected_window(1_000_000)
        gauge.set_selected_window(64_000)
    assert (
        gauge.selected_window() == 64_000
        and not gauge.findChild(QSpinBox, "custom-window-spin").isHidden()
    )
    gauge.set_selected_window(None)
    assert (
        gauge.selected_window() is None
        and gauge.findChild(QSpinBox, "custom-window-spin").isHidden()
    )


def test_comparison_bar_for_the_trim_simulation(gauge, session):
    _show(gauge, session)
    gauge.set_comparison(120_000, "after trim")
    assert _legend_shown(gauge, "after")
    assert _legend(gauge, "after") == "after trim 120,000 (60.0%, -55,004)"
    bar_y = gauge_canvas(gauge).bar_top() + 20 + 4
    assert gauge.tooltip_at(50, bar_y) == "after trim 120,000 (60.0%, -55,004)"
    image = gauge_canvas(gauge).grab().toImage()
    highlight = gauge_canvas(gauge).palette().color(QPalette.ColorRole.Highlight).name()
    x_after = 6 + (gauge_canvas(gauge).width() - 12) * 120_000 / 200_000
    assert image.pixelColor(int(x_after) - 3, bar_y).name() == highlight
    assert image.pixelColor(int(x_after) + 3, bar_y).name() != highlight
    assert "Comparison: after trim 120,000" in gauge.accessibleDescription()
    gauge.set_comparison(None)
    assert not _legend_shown(gauge, "after") and gauge.tooltip_at(50, bar_y) == ""


def test_tooltips(gauge, session):
    _show(gauge, session)
    r = gauge.section_rects()["tool_results"]
    tip = gauge.tooltip_at(r.center().x(), r.center().y())
    assert tip.startswith("tool results: 74,514 tokens\n37.3% of the 200,000-token window")
    assert "42.6% of the context" in tip
    x = _marker_x(gauge)["compaction"]
    tip = gauge.tooltip_at(x, r.center().y())
    assert tip.startswith("compaction trigger: 180,000 tokens (90.0%)\npi: ")
    assert "\n4,996 left\n" in tip
    label = _marker_labels(gauge)["flush"]
    flush_tip = gauge.tooltip_at(label.center().x(), label.center().y())
    assert flush_tip.startswith("memory flush: 176,000")
    assert "window - reserveTokensFloor 20,000 - softThresholdTokens 4,000" in flush_tip
    window_tip = gauge.tooltip_at(_marker_x(gauge)["window"], r.center().y())
    assert "window from: default; guard: ok" in window_tip
    system_tip = gauge.section_tooltip("system")
    assert "does not store the system prompt" in system_tip


def test_recalled_block_shows_as_its_own_section(gauge, session):
    _show(gauge, session, recalled=3_500)
    assert _legend(gauge, "recalled") == "recalled memory 3,500 (1.8%)"
    assert "recalled" in gauge.section_rects()
    assert gauge.headline_text().startswith("175,004 context tokens (reported) · 87.5%")
    assert "+3,500 recalled block = 178,504" in gauge.headline_text()


def test_accessible_description_summarises(gauge, session):
    _show(gauge, session)
    text = gauge.accessibleDescription()
    assert text.startswith("Context tokens 175,004 (reported), 87.5% of a 200,000-token window.")
    assert "tool results 74,514 (37.3%)" in text
    assert "compaction trigger 180,000 (not reached)" in text
    assert "80% rule 160,000 (reached)" in text
    assert gauge_canvas(gauge).accessibleDescription() == text


def test_clear(gauge, session):
    _show(gauge, session)
    gauge.set_comparison(100_000)
    gauge.clear()
    assert gauge.headline_text() == "no point selected"
    assert gauge.section_rects() == {} and _marker_x(gauge) == {}
    assert _legend(gauge, "user") == "user" and not _legend_shown(gauge, "after")
    gauge_canvas(gauge).grab()  # paints the empty state without error


def test_demo_session_and_dark_palette(gauge, tmp_path):
    from core.dataset.load import load_dataset
    from core.demo.build import write_demo

    write_demo(tmp_path / "home", now_ms=1_760_000_000_000, segments=300)
    ds = load_dataset(tmp_path / "home")
    s = max(ds.sessions, key=lambda s: len(s.compaction_entries()))
    bd = breakdown_at(s)
    b = budget_for(s, config=ds.config)
    dark = QPalette()
    for role, c in [
        (QPalette.ColorRole.Window, "#202124"),
        (QPalette.ColorRole.WindowText, "#e8eaed"),
        (QPalette.ColorRole.Base, "#2b2c30"),
    ]:
        dark.setColor(role, QColor(c))
    gauge.setPalette(dark)
    gauge.set_breakdown(bd, b)
    assert bd.tokens("summary") > 0
    pct = fmt_pct(bd.tokens("summary"), b.window)
    assert _legend(gauge, "summary") == f"compaction summary {bd.tokens('summary'):,} ({pct})"
    image = gauge_canvas(gauge).grab().toImage()
    # The empty part of the window is the dark base colour, markers in their dark variant.
    track_x = int(gauge_canvas(gauge).x_of(b.window)) - 3
    y = gauge_canvas(gauge).bar_top() + 18
    assert image.pixelColor(track_x, y).name() == "#2b2c30"
    assert gauge_canvas(gauge).marker_color("compaction").name() == "#ff6b6b"


def test_formatting_helpers():
    assert [fmt_k(n) for n in (950, 24_800, 180_000, 1_000_000, 1_050_000)] == [
        "950",
        "24.8k",
        "180k",
        "1M",
        "1.05M",
    ]
    assert fmt_pct(74_514, 200_000) == "37.3%" and fmt_pct(1, 200_000) == "<0.1%"
    assert fmt_pct(0, 200_000) == "0.0%" and fmt_pct(5, 0) == "-"


def test_a_point_shown_again_redoes_no_work(gauge, session, monkeypatch):
    _show(gauge, session)
    refreshes: list[int] = []
    swatches: list[str] = []
    real_refresh, real_swatch = gauge._refresh, gauge._swatch
    monkeypatch.setattr(gauge, "_refresh", lambda: (refreshes.append(1), real_refresh())[1])
    monkeypatch.setattr(gauge, "_swatch", lambda key: (swatches.append(key), real_swatch(key))[1])
    gauge.set_comparison(None)  # every selected point clears it: already clear
    assert refreshes == []
    gauge.set_comparison(1_000, "after trim")
    gauge.set_comparison(1_000, "after trim")
    assert len(refreshes) == 1
    _show(gauge, session)  # new figures: the text changes, the colour squares do not
    assert len(refreshes) == 2 and swatches == []
    dark = QPalette()
    dark.setColor(QPalette.ColorRole.Highlight, QColor("#8ab4f8"))
    gauge.setPalette(dark)
    assert sorted(swatches) == sorted([*SECTION_KEYS, "after"])
