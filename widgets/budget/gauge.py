"""Budget gauge: the context at one point as a stacked bar against the window.

One bar stacked by section (:mod:`core.context.breakdown`), the thresholds of
:class:`core.context.budget.Budget` as labelled markers, a legend with tokens and
percent of the window, an optional thin "after" bar (trim simulation), and a
window selector ("what if this ran on a 128k model"). The app owns the
computation: on :attr:`BudgetGauge.window_changed` it recomputes the budget with
``budget_for(..., window=gauge.selected_window())`` and calls
:meth:`BudgetGauge.set_breakdown` again.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QPalette, QPixmap, QResizeEvent
from PySide6.QtWidgets import (
    QBoxLayout,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSpinBox,
    QToolTip,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from core.context.breakdown import SECTION_HELP, SECTION_KEYS, SECTION_LABELS
from core.context.terms import (
    CHARS4_ESTIMATE,
    CONTEXT_TOKENS,
    README_THRESHOLDS,
    THRESHOLD_TERMS,
    source_label,
    source_tip,
    threshold_help,
)
from widgets.budget.gauge_canvas import (
    MARKER_SHORT,
    SECTION_COLORS,
    GaugeCanvas,
    fmt_pct,
    hatch,
)
from widgets.common.flow import FlowLayout
from widgets.common.palette import is_dark

if TYPE_CHECKING:
    from core.context.breakdown import ContextBreakdown, SectionKey
    from core.context.budget import Budget, Threshold

__all__ = ["COMMON_WINDOWS", "BudgetGauge"]

COMMON_WINDOWS = (("32k", 32_000), ("128k", 128_000), ("200k", 200_000), ("1M", 1_000_000))
"""The windows offered besides the model's own and a custom value."""
CUSTOM = -1
AFTER = "after"


def _thresholds_help() -> str:
    """Every threshold in one line, and the README section that says more."""
    lines = [f"{t.name}: {t.line}" for t in THRESHOLD_TERMS.values()]
    return "\n".join([*lines, f"More: {README_THRESHOLDS}"])


NARROW_GAUGE = 760
"""Narrower than this, the gauge's headline goes above its controls."""


class BudgetGauge(QWidget):
    """Stacked bar of a context by section against the window, with thresholds.

    Signals
    -------
    window_changed(int)
        The user picked another window: the window to simulate, in tokens (the
        model's own when "model default" is picked). Recompute the budget with
        ``budget_for(..., window=gauge.selected_window())``.
    help_requested(str)
        "What do these mean?" was followed: the README section's anchor
        (``context-thresholds``).
    """

    window_changed = Signal(int)
    help_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._breakdown: ContextBreakdown | None = None
        self._budget: Budget | None = None
        self._model_window: int | None = None
        self._after: int | None = None
        self._after_label = "after"

        self._headline = QLabel()
        self._headline.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._headline.setWordWrap(True)  # a narrow window wraps the figures, never cuts them
        self._combo = QComboBox()
        self._combo.setObjectName("window-combo")
        self._combo.setAccessibleName("context window")
        self._combo.setToolTip("Simulate this context on a model with another window")
        self._combo.addItem("model default", None)
        for name, n in COMMON_WINDOWS:
            self._combo.addItem(f"{name} ({n:,})", n)
        self._combo.addItem("custom…", CUSTOM)
        self._spin = QSpinBox()
        self._spin.setObjectName("custom-window-spin")
        self._spin.setRange(1_000, 10_000_000)
        self._spin.setSingleStep(1_000)
        self._spin.setValue(128_000)
        self._spin.setGroupSeparatorShown(True)
        self._spin.setKeyboardTracking(False)  # one signal on Enter, not one per digit
        self._spin.setAccessibleName("custom context window")
        self._spin.setVisible(False)
        self._combo.currentIndexChanged.connect(self._on_combo_index_changed)
        self._spin.valueChanged.connect(self._on_spin_value_changed)

        self._canvas = GaugeCanvas(self._section_tip, self.threshold_tooltip, self.comparison_text)
        self._canvas.setObjectName("gauge-canvas")
        self._legend: dict[str, QLabel] = {}
        self._swatches: dict[str, QLabel] = {}
        self._entries: dict[str, QWidget] = {}
        flow = FlowLayout()
        font = QFont(self.font())
        font.setPointSizeF(max(7.0, font.pointSizeF() * 0.9))
        for key in (*SECTION_KEYS, AFTER):
            entry = QWidget()
            entry.setObjectName(f"legend-entry-{key}")
            swatch, label = QLabel(), QLabel()
            label.setObjectName(f"legend-{key}")
            swatch.setFixedSize(10, 10)
            label.setFont(font)
            row = QHBoxLayout(entry)
            row.setContentsMargins(0, 0, 0, 0)
            row.setSpacing(4)
            row.addWidget(swatch)
            row.addWidget(label)
            flow.addWidget(entry)
            self._entries[key], self._swatches[key], self._legend[key] = entry, swatch, label

        # Every threshold in one line each, with the README section that says more.
        self._help = QLabel()
        self._help.setObjectName("thresholds-help")
        self._help.setTextFormat(Qt.TextFormat.RichText)
        self._help.setToolTip(_thresholds_help())
        self._help.setAccessibleName("what the thresholds mean")
        self._help.linkActivated.connect(self._on_help_link_activated)

        # The headline beside the controls; on a narrow gauge (a laptop's side column)
        # above them, so it is not squeezed into a column of single words.
        self._top = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        self._top.setSpacing(6)
        self._top.addWidget(self._headline, 1)
        controls = QHBoxLayout()
        controls.setSpacing(6)
        controls.addWidget(self._help)
        controls.addStretch(1)
        window_label = QLabel("&Window:")
        window_label.setBuddy(self._combo)
        controls.addWidget(window_label)
        controls.addWidget(self._combo)
        controls.addWidget(self._spin)
        self._top.addLayout(controls)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(2)
        layout.addLayout(self._top)
        layout.addWidget(self._canvas)
        layout.addLayout(flow)
        layout.addStretch(1)
        self.setAccessibleName("budget gauge")
        self._paint_swatches()
        self._refresh()

    @override
    def sizeHint(self) -> QSize:
        return QSize(900, max(140, self._needed_height()))

    @override
    def minimumSizeHint(self) -> QSize:
        # The legend wraps: at this width it needs this many rows, and a splitter that
        # gave less would draw them over the bar.
        return QSize(super().minimumSizeHint().width(), self._needed_height())

    def _needed_height(self) -> int:
        layout = self.layout()
        return layout.heightForWidth(max(self.width(), 320)) if layout is not None else 0

    @override
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            narrow = event.size().width() < NARROW_GAUGE
            self._top.setDirection(
                QBoxLayout.Direction.TopToBottom if narrow else QBoxLayout.Direction.LeftToRight
            )
            self.updateGeometry()  # the legend's rows, so the minimum height, may change

    # -- public API -----------------------------------------------------------
    def set_breakdown(
        self,
        breakdown: ContextBreakdown | None,
        budget: Budget | None,
        *,
        model_window: int | None = None,
    ) -> None:
        """Show *breakdown* against the thresholds of *budget* (None, None clears).

        Parameters
        ----------
        breakdown
            :func:`core.context.breakdown.context_breakdown` of the point, with
            the same ``recalled_tokens`` as the budget's ``extra_tokens``.
        budget
            :func:`core.context.budget.budget_for` of the point, with
            ``window=self.selected_window()``.
        model_window
            The model's own window, for the "model default" entry. Without it, a
            budget whose window is not an override is taken as the model's.
        """
        self._breakdown, self._budget = breakdown, budget
        if model_window is not None:
            self._model_window = model_window
        elif budget is not None and budget.window_source != "override":
            self._model_window = budget.window
        if self._model_window is not None:
            self._combo.setItemText(0, f"model default ({self._model_window:,})")
        self._refresh()

    def clear(self) -> None:
        """Show nothing (no point selected)."""
        self._after = None
        self.set_breakdown(None, None)

    def set_comparison(self, after_tokens: int | None, label: str = "after") -> None:
        """Show *after_tokens* as a thin bar under the main one (None hides it).

        For the trim simulation: the main bar is the context before, this one
        the context after; *label* names it in the legend (e.g. "after trim").
        """
        if (after_tokens, label) == (self._after, self._after_label):
            return  # every selected point clears it: most calls change nothing
        self._after, self._after_label = after_tokens, label
        self._refresh()

    def selected_window(self) -> int | None:
        """The window the user picked, or None for the model's own."""
        data = self._combo.currentData()
        if data is None:
            return None
        return self._spin.value() if data == CUSTOM else int(data)

    def set_selected_window(self, window: int | None) -> None:
        """Select *window* (None: the model default) without emitting :attr:`window_changed`."""
        was = self._combo.blockSignals(True), self._spin.blockSignals(True)
        try:
            index = 0 if window is None else self._combo.findData(window)
            if index < 0:
                index = self._combo.findData(CUSTOM)
                self._spin.setValue(int(window or 0))
            self._combo.setCurrentIndex(index)
            self._spin.setVisible(index == self._combo.findData(CUSTOM))
        finally:
            self._combo.blockSignals(was[0])
            self._spin.blockSignals(was[1])

    def headline_text(self) -> str:
        """The line above the bar, as plain text."""
        return re.sub(r"<[^>]+>", "", self._headline.text())

    def section_rects(self) -> dict[str, QRectF]:
        """Rectangle of every non-empty section on the bar, by section key."""
        return self._canvas.section_rects()

    def tooltip_at(self, x: float, y: float) -> str:
        """The tooltip the bar shows at canvas point (*x*, *y*)."""
        return self._canvas.tooltip_at(QPointF(x, y))

    # -- texts ----------------------------------------------------------------
    def _section_tip(self, key: SectionKey) -> str:
        if self._budget is None or self._breakdown is None:
            return ""
        s = self._breakdown.section(key)
        window, total = self._budget.window, max(1, self._breakdown.total_tokens)
        lines = [
            f"{s.label}: {s.tokens:,} tokens",
            f"{fmt_pct(s.tokens, window)} of the {window:,}-token window, "
            f"{fmt_pct(s.tokens, total)} of the context",
        ]
        if s.messages:
            top = f"; largest {s.largest_entry} ({s.largest_tokens:,})" if s.largest_entry else ""
            lines.append(f"{s.messages:,} message(s){top}")
        lines.append(SECTION_HELP[key])
        if key == "system":
            lines.append(self._breakdown.system_note)
        if key == "unattributed" and self._breakdown.overestimate:
            lines.append(
                f"the chars/4 estimate is {self._breakdown.overestimate:,} "
                "above the reported figure"
            )
        return "\n".join(lines)

    def section_tooltip(self, key: str) -> str:
        """Tooltip of one section (the bar and its legend entry show it)."""
        return self._section_tip(key)  # type: ignore[arg-type]

    def threshold_tooltip(self, t: Threshold) -> str:
        """Tooltip of one threshold marker."""
        if self._budget is None:
            return ""
        b, tokens = self._budget, self._budget.context_tokens
        state = f"{t.tokens - tokens:,} left"
        if t.crossed:
            state = f"reached ({tokens - t.tokens:,} past)"
        lines = [f"{t.label}: {t.tokens:,} tokens ({fmt_pct(t.tokens, b.window)})", state]
        lines.insert(1, threshold_help(t.key).split("\n")[0])
        if t.key == "window":
            lines.append(f"window from: {b.window_source}; guard: {b.guard}")
        elif t.key == "compaction":
            lines.append(f"window - reserveTokens {b.reserve_tokens:,}")
        elif t.key == "flush":
            if b.flush_terms is not None:
                floor, soft = b.flush_terms
                lines.append(
                    f"window - reserveTokensFloor {floor:,} - softThresholdTokens {soft:,}"
                )
            lines.append(b.flush_reason)
        elif t.key == "safe_limit":
            lines.append(f"window - reserve 4,000 - hard cap {b.hard_cap:,}")
        elif t.key == "seed":
            lines.append(f"compact to {b.seed_target:,} (30%), emergency {b.seed_emergency:,}")
        lines.append(f"More: {README_THRESHOLDS}")
        return "\n".join(lines)

    def comparison_text(self) -> str:
        """The comparison as the legend shows it ('' when none)."""
        if self._after is None or self._budget is None or self._breakdown is None:
            return ""
        delta = self._after - self._breakdown.total_tokens
        sign = "+" if delta >= 0 else "-"
        pct = fmt_pct(self._after, self._budget.window)
        return f"{self._after_label} {self._after:,} ({pct}, {sign}{abs(delta):,})"

    # -- internals ------------------------------------------------------------
    def _on_combo_index_changed(self, _index: int) -> None:
        custom = self._combo.currentData() == CUSTOM
        self._spin.setVisible(custom)
        chosen = self.selected_window()
        window = self._model_window if chosen is None else chosen
        if window is not None:
            self.window_changed.emit(window)

    def _on_help_link_activated(self, link: str) -> None:
        # The explanations at once, as the tooltip has them; the app opens the README
        # section where it has one (widgets take no files).
        pos = self._help.mapToGlobal(self._help.rect().bottomLeft())
        QToolTip.showText(pos, self._help.toolTip(), self._help)
        self.help_requested.emit(link.lstrip("#"))

    def _on_spin_value_changed(self, value: int) -> None:
        if self._combo.currentData() == CUSTOM:
            self.window_changed.emit(value)

    def _refresh(self) -> None:
        bd, b = self._breakdown, self._budget
        self._canvas.breakdown, self._canvas.budget, self._canvas.after = bd, b, self._after
        self._canvas.update()
        for key, label in self._legend.items():
            label.setText(self._legend_line(key))
            tip = self.comparison_text() if key == AFTER else self.section_tooltip(key)
            self._entries[key].setToolTip(tip)
            zero = bd is None or (key != AFTER and bd.tokens(key) == 0)  # type: ignore[arg-type]
            label.setEnabled(not zero)
        # Zero sections stay listed (a developer asks "no recalled memory?"), the
        # comparison only while there is one.
        self._entries[AFTER].setVisible(self._after is not None and bd is not None)
        self._headline.setText(self._headline_line())
        self._headline.setToolTip(self._headline_tip())
        self.setAccessibleDescription(self._describe())
        self._canvas.setAccessibleName("budget bar")
        self._canvas.setAccessibleDescription(self.accessibleDescription())

    def _paint_swatches(self) -> None:
        """The legend's colour squares and the help link: they follow the palette."""
        # Qt's default link blue is unreadable on a dark window.
        pal = self.palette()
        link = QColor("#58a6ff") if is_dark(pal) else pal.color(QPalette.ColorRole.Link)
        self._help.setText(
            f"<a href='#context-thresholds' style='color:{link.name()}'>What do these mean?</a>"
        )
        for key, swatch in self._swatches.items():
            swatch.setPixmap(self._swatch(key))

    def _swatch(self, key: str) -> QPixmap:
        pm = QPixmap(10, 10)
        if key == AFTER:
            pm.fill(self.palette().color(QPalette.ColorRole.Highlight))
            return pm
        color = QColor(SECTION_COLORS[key])
        pm.fill(color)
        if key == "unattributed":
            p = QPainter(pm)
            p.fillRect(pm.rect(), hatch(color))
            p.end()
        return pm

    def _legend_line(self, key: str) -> str:
        if key == AFTER:
            return self.comparison_text()
        bd, b = self._breakdown, self._budget
        name = SECTION_LABELS[key]  # type: ignore[index]
        if bd is None or b is None:
            return name
        tokens = bd.tokens(key)  # type: ignore[arg-type]
        if key == "system" and tokens == 0:
            return "system: not in transcript"
        return f"{name} {tokens:,} ({fmt_pct(tokens, b.window)})"

    def _headline_line(self) -> str:
        bd, b = self._breakdown, self._budget
        if bd is None or b is None:
            return "no point selected"
        ctx = b.context_tokens - b.extra_tokens
        text = (
            f"<b>{ctx:,}</b> {CONTEXT_TOKENS.name} ({source_label(b.context_source)})"
            f" · <b>{fmt_pct(ctx, b.window)}</b> of {b.window:,}"
        )
        if b.extra_tokens:
            text += f" · <b>+{b.extra_tokens:,}</b> recalled block = {b.context_tokens:,}"
        if self.selected_window() is not None and self._model_window is not None:
            text += f" · what-if (model: {self._model_window:,})"
        if b.context_tokens > b.window:
            over = f"{b.context_tokens - b.window:,} over the window"
            return text + f" · <span style='color:#dc2626'><b>{over}</b></span>"
        ahead = sorted((t for t in b.thresholds if not t.crossed), key=lambda t: t.tokens)
        if ahead:
            left = ahead[0].tokens - b.context_tokens
            text += f" · {left:,} to {MARKER_SHORT.get(ahead[0].key, ahead[0].key)}"
        crossed = [MARKER_SHORT.get(t.key, t.key) for t in b.thresholds if t.crossed]
        if crossed:
            text += f" · past {', '.join(crossed)}"
        if b.guard != "ok":
            text += f" · window guard: {b.guard}"
        return text

    def _headline_tip(self) -> str:
        bd, b = self._breakdown, self._budget
        if bd is None or b is None:
            return self.headline_text()
        lines = [
            self.headline_text(),
            f"{CONTEXT_TOKENS.name}: {CONTEXT_TOKENS.help}",
            f"{source_label(b.context_source)}: {source_tip(b.context_source)}",
        ]
        if b.extra_tokens:
            lines.append(f"+{b.extra_tokens:,}: the recalled block that would be injected")
        if bd.total_tokens != b.context_tokens:
            lines.append(
                f"the bar's sections add up to {bd.total_tokens:,}: the {CHARS4_ESTIMATE.name} "
                "of the messages, above the reported usage"
            )
        return "\n".join(lines)

    def _describe(self) -> str:
        bd, b = self._breakdown, self._budget
        if bd is None or b is None:
            return "Budget gauge: no point selected."
        ctx = b.context_tokens - b.extra_tokens
        parts = [
            f"{CONTEXT_TOKENS.name.capitalize()} {ctx:,} ({source_label(b.context_source)}), "
            f"{fmt_pct(ctx, b.window)} of a {b.window:,}-token window."
        ]
        if b.extra_tokens:
            parts.append(f"With the recalled block: {b.context_tokens:,}.")
        secs = [
            f"{s.label} {s.tokens:,} ({fmt_pct(s.tokens, b.window)})"
            for s in bd.sections
            if s.tokens
        ]
        parts.append(f"Sections: {'; '.join(secs) or 'none'}.")
        ths = [
            f"{t.label} {t.tokens:,} ({'reached' if t.crossed else 'not reached'})"
            for t in sorted(b.thresholds, key=lambda t: t.tokens)
        ]
        parts.append(f"Thresholds: {'; '.join(ths)}.")
        if self._after is not None:
            parts.append(f"Comparison: {self.comparison_text()}.")
        parts.append(f"System prompt: {bd.system_note}.")
        return " ".join(parts)

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._paint_swatches()
            self._refresh()
        super().changeEvent(event)
