"""The recall lab's two charts: recall@k curves and the per-query win/loss bars.

Left: recall@1 .. recall@20 of the two compared configs (and rank-bm25's when the
run has it). Right: one bar per evaluated query, the difference of the reciprocal
ranks of its first relevant segment (config A minus config B), sorted: bars above
zero are queries A ranks better, below zero the ones B ranks better, ties sit on
the axis.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg  # type: ignore[import-untyped]
from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget
from typing_extensions import override

from widgets.common.palette import color_plots

if TYPE_CHECKING:
    from core.recall.lab_compare import LabRun

A_COLOR = "#2f7ed8"
B_COLOR = "#e8743b"
WIN_COLOR = "#3a9b5c"
LOSS_COLOR = "#c8453a"


def rr_differences(run: LabRun, a: str, b: str) -> np.ndarray:
    """Per query, reciprocal rank under *a* minus under *b*, sorted from A's best win."""
    diffs = [r.reports[a].reciprocal_rank - r.reports[b].reciprocal_rank for r in run.rows]
    return np.sort(np.asarray(diffs, dtype=np.float64))[::-1]


class LabCharts(QWidget):
    """The recall@k curves beside the per-query win/loss chart."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.chart = pg.GraphicsLayoutWidget()
        self.chart.setMinimumHeight(160)
        self.chart.ci.setContentsMargins(4, 6, 10, 4)
        self.curve_plot = self.chart.addPlot(row=0, col=0)
        self.win_plot = self.chart.addPlot(row=0, col=1)
        for plot in (self.curve_plot, self.win_plot):
            plot.setMenuEnabled(False)
            plot.hideButtons()
            plot.setMouseEnabled(x=False, y=False)
            plot.showGrid(x=False, y=True, alpha=0.15)
        self.curve_plot.setLabel("bottom", "k")
        self.curve_plot.setLabel("left", "recall@k")
        self.curve_plot.setYRange(0, 1, padding=0.02)
        self.legend = self.curve_plot.addLegend(offset=(-6, 6), labelTextSize="8pt")
        self.win_plot.setLabel("bottom", "queries, sorted")
        self.win_plot.setLabel("left", "RR(A) - RR(B)")
        self.win_plot.setYRange(-1, 1, padding=0.02)
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.bars: pg.BarGraphItem | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.chart)
        self._apply_palette()

    def clear(self) -> None:
        """No run shown."""
        self.curve_plot.clear()
        self.legend.clear()
        self.curves = {}
        if self.bars is not None:
            self.win_plot.removeItem(self.bars)
            self.bars = None
        self.win_plot.setTitle("")

    def show_run(
        self, run: LabRun, a: str, b: str, extra: dict[str, list[float]] | None = None
    ) -> None:
        """The curves of configs *a* and *b* (and of *extra*: name -> curve), the bars a vs b."""
        self.clear()
        series = {a: run.curve(a), b: run.curve(b), **(extra or {})}
        colors = [A_COLOR, B_COLOR, "#8c8c8c", "#9467bd"]
        for (name, values), color in zip(series.items(), colors, strict=False):
            ks = np.arange(1, len(values) + 1)
            dashed = name not in (a, b)
            style = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine
            pen = pg.mkPen(color, width=2, style=style)
            item = self.curve_plot.plot(
                ks, values, pen=pen, symbol="o", symbolSize=4, symbolBrush=color, name=name
            )
            self.curves[name] = item
        diffs = rr_differences(run, a, b)
        if len(diffs):
            brushes = [
                pg.mkBrush(WIN_COLOR if d > 0 else LOSS_COLOR if d < 0 else "#8c8c8c")
                for d in diffs
            ]
            self.bars = pg.BarGraphItem(
                x=np.arange(len(diffs)), height=diffs, width=1.0, brushes=brushes, pen=None
            )
            self.win_plot.addItem(self.bars)
            self.win_plot.setXRange(-0.5, len(diffs) - 0.5, padding=0.01)
        won_a, won_b, ties = run.wins(a, b)
        self.win_plot.setTitle(f"A wins {won_a} · B wins {won_b} · ties {ties}", size="9pt")

    def _apply_palette(self) -> None:
        text = color_plots(self.chart, (self.curve_plot, self.win_plot), self.palette())
        self.legend.setLabelTextColor(text)

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_palette()
        super().changeEvent(event)
