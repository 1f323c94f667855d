"""Trim simulation: run memory-context's smart trim on a context and show every decision.

:class:`TrimView` is handed the messages of the selected point (``context_at``) and the
budget's window, reserve and hard cap. It runs :func:`core.context.trim.smart_trim` in a
worker whenever a parameter changes (debounced) and shows one table row and one bar
per message, coloured by decision, with the reason. It reports each result (for the
budget gauge) and hands the kept messages, JSON-encoded, to whoever saves them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg  # type: ignore[import-untyped]
from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QSignalBlocker,
    Qt,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from core.context.trim import PROTECTED_RECENT
from core.io import jsonio
from widgets.common.flow import FlowLayout
from widgets.common.jobs import default_runner
from widgets.common.palette import color_plots
from widgets.common.record_model import RecordRole
from widgets.common.view_jobs import view_key
from widgets.trim.model import (
    DECISION_COLORS,
    DECISION_LABELS,
    DECISION_TIPS,
    DECISIONS,
    DecisionFilterProxy,
    TrimParameters,
    TrimRow,
    TrimRun,
    TrimTableModel,
    detail_text,
    summary_text,
    swatch,
    trim_job,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from core.context.trim import TrimResult
    from core.transcript.message import Message
    from widgets.common.jobs import JobRunner

DEBOUNCE_MS = 200
COLUMN_WIDTHS = (52, 150, 70, 150, 52, 64, 440)
CHIP_STYLE = """
QToolButton { border: 1px solid palette(mid); border-radius: 10px; padding: 2px 9px 2px 6px;
              background: palette(base); color: palette(text); }
QToolButton:!checked { color: palette(mid); background: transparent; border-style: dashed; }
QToolButton:hover { border-color: palette(highlight); }
"""


def _button(text: str, tip: str) -> QPushButton:
    button = QPushButton(text)
    button.setToolTip(tip)
    return button


class _TokenAxis(pg.AxisItem):  # type: ignore[misc]  # pyqtgraph has no type hints
    """Tick labels with thousands separators, never an SI prefix."""

    @override
    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        return [f"{v:,.0f}" for v in values]


class TrimView(QWidget):
    """Parameters, decision table, strip chart and summary of a smart-trim simulation.

    Signals
    -------
    result_ready(TrimResult)
        After every finished run (the budget gauge shows before and after).
    export_requested(bytes)
        "Export JSON…" was clicked: the kept messages, orjson-encoded.
    message_selected(int)
        A message was picked in the table or on the chart (its index in the context).
    trim_failed(str)
        The trim raised; the text says what.
    """

    result_ready = Signal(object)
    export_requested = Signal(bytes)
    message_selected = Signal(int)
    trim_failed = Signal(str)

    def __init__(self, parent: QWidget | None = None, runner: JobRunner | None = None) -> None:
        super().__init__(parent)
        self._messages: tuple[Message, ...] = ()
        self._defaults = TrimParameters(200_000, 4000, 4000, PROTECTED_RECENT, "")
        self._run: TrimRun | None = None
        self._runner = runner if runner is not None else default_runner()
        # One trim at a time: a newer run drops whatever an older one still delivers.
        self._key = view_key(self, self._runner, "trim")
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self.run)
        # A new context runs on the next turn of the event loop: selecting a session
        # starts several workers, and their results landing in one turn froze the window.
        self._soon = QTimer(self, singleShot=True, interval=0)
        self._soon.timeout.connect(self.run)
        self._build_form()
        self._build_table()
        self._build_chart()
        self._build_layout()
        self._set_form(self._defaults)
        for spin in self._spins():
            spin.valueChanged.connect(self._on_parameter_changed)
        self.query_edit.textChanged.connect(self._on_parameter_changed)
        self._apply_palette()
        self.clear()

    # -- building -----------------------------------------------------------------------------

    def _spin(self, minimum: int, maximum: int, step: int, tip: str) -> QSpinBox:
        spin = QSpinBox()
        spin.setRange(minimum, maximum)
        spin.setSingleStep(step)
        spin.setToolTip(tip)
        spin.setGroupSeparatorShown(True)
        spin.setAlignment(Qt.AlignmentFlag.AlignRight)
        spin.setMinimumWidth(92 if maximum > 1000 else 56)
        return spin

    def _spins(self) -> tuple[QSpinBox, ...]:
        return (self.window_spin, self.reserve_spin, self.hard_cap_spin, self.protected_spin)

    def _build_form(self) -> None:
        self.window_spin = self._spin(1, 100_000_000, 1000, "The model's context window (tokens)")
        self.reserve_spin = self._spin(0, 10_000_000, 500, "Tokens kept free for the reply")
        self.hard_cap_spin = self._spin(0, 10_000_000, 500, "Cap of the recalled-context block")
        self.protected_spin = self._spin(
            0, 1000, 1, "How many of the last user/assistant messages are never trimmed"
        )
        self.query_edit = QLineEdit()
        self.query_edit.setPlaceholderText("BM25 query (3+ characters, else no trim)")
        self.query_edit.setToolTip("BM25 query; by default the last up to 3 user messages")
        self.query_edit.setClearButtonEnabled(True)
        self.query_edit.returnPressed.connect(self.run)
        self.safe_label = QLabel()
        self.safe_label.setToolTip("window - reserve - hard cap")
        self.state_label = QLabel()
        self.state_label.setMinimumWidth(64)
        self.run_button = _button("Run", "Trim now (it also reruns on every change)")
        self.run_button.clicked.connect(self.run)
        self.defaults_button = _button("Defaults", "Back to the session's budget figures and query")
        self.defaults_button.clicked.connect(self._on_defaults_clicked)
        self.export_button = _button(
            "Export JSON…", "Save the messages left after the trim as JSON"
        )
        self.export_button.clicked.connect(self._on_export_clicked)

    def _build_table(self) -> None:
        self.model = TrimTableModel(self)
        self.proxy = DecisionFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.table = QTableView()
        self.table.setSortingEnabled(True)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setModel(self.proxy)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        for col, width in enumerate(COLUMN_WIDTHS):
            header.resizeSection(col, width)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.selectionModel().currentRowChanged.connect(self._on_current_row_changed)
        self.chips: dict[str, QToolButton] = {}
        for d in DECISIONS:
            tip = f"{DECISION_TIPS[d]}.\nClick to show or hide these messages in the table."
            chip = QToolButton()
            chip.setCheckable(True)
            chip.setChecked(True)
            chip.setToolTip(tip)
            chip.setIcon(swatch(DECISION_COLORS[d], 14))
            chip.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            chip.setStyleSheet(CHIP_STYLE)
            chip.toggled.connect(self._on_chip_toggled)
            self.chips[d] = chip

    def _build_chart(self) -> None:
        self.chart = pg.GraphicsLayoutWidget()
        self.chart.setMinimumHeight(110)
        self.chart.ci.layout.setSpacing(0)
        self.chart.ci.setContentsMargins(4, 8, 12, 4)
        self.bar_plot = self.chart.addPlot(row=0, col=0, axisItems={"left": _TokenAxis("left")})
        self.strip_plot = self.chart.addPlot(row=1, col=0)
        self.chart.ci.layout.setRowFixedHeight(1, 46)
        for plot in (self.bar_plot, self.strip_plot):
            plot.setMenuEnabled(False)
            plot.hideButtons()
            plot.getAxis("left").setWidth(70)
        self.bar_plot.setLabel("left", "tokens")
        self.bar_plot.hideAxis("bottom")
        self.bar_plot.setMouseEnabled(x=True, y=False)
        self.bar_plot.getViewBox().setAutoVisible(y=True)
        self.bar_plot.showGrid(y=True, alpha=0.15)
        self.strip_plot.setXLink(self.bar_plot)
        self.strip_plot.setMouseEnabled(x=False, y=False)
        self.strip_plot.setLabel("bottom", "message #")
        self.strip_plot.getAxis("left").setTicks([[(0.5, "decision")]])
        self.strip_plot.setYRange(0, 1, padding=0)
        self.bar_items = {d: self._bar_item(self.bar_plot, d) for d in DECISIONS}
        self.strip_items = {d: self._bar_item(self.strip_plot, d) for d in DECISIONS}
        self.cursor_line = pg.InfiniteLine(angle=90, movable=False)
        self.cursor_line.setZValue(10)
        self.bar_plot.addItem(self.cursor_line)
        self.chart.scene().sigMouseMoved.connect(self._on_chart_mouse_moved)
        self.chart.scene().sigMouseClicked.connect(self._on_chart_mouse_clicked)
        self.hover_label = QLabel()
        self.hover_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

    @staticmethod
    def _bar_item(plot: pg.PlotItem, decision: str) -> pg.PlotDataItem:
        item = pg.PlotDataItem(pen=None, fillLevel=0, brush=pg.mkBrush(DECISION_COLORS[decision]))
        item.setDownsampling(auto=True, method="peak")
        item.setClipToView(True)
        plot.addItem(item)
        return item

    def _build_layout(self) -> None:
        params = QHBoxLayout()
        for text, spin in zip(
            ("&Window", "&Reserve", "&Hard cap", "&Protected recent"), self._spins(), strict=True
        ):
            label = QLabel(text)
            label.setBuddy(spin)
            params.addWidget(label)
            params.addWidget(spin)
            params.addSpacing(12)
        params.addWidget(self.safe_label)
        params.addStretch(1)
        params.addWidget(self.defaults_button)
        query = QHBoxLayout()
        query_label = QLabel("&Query")
        query_label.setBuddy(self.query_edit)
        query.addWidget(query_label)
        query.addWidget(self.query_edit, 1)
        query.addWidget(self.state_label)
        query.addWidget(self.run_button)
        query.addWidget(self.export_button)
        self.summary_label = QLabel()
        font = self.summary_label.font()
        font.setPointSizeF(font.pointSizeF() * 1.4)
        font.setBold(True)
        self.summary_label.setFont(font)
        self.detail_label = QLabel()
        self.detail_label.setWordWrap(True)
        self.detail_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        legend = FlowLayout(spacing=6)  # the chips wrap beside the table
        decisions_label = QLabel("Decisions:")
        decisions_label.setToolTip("Click a decision to show or hide its rows")
        legend.addWidget(decisions_label)
        for chip in self.chips.values():
            legend.addWidget(chip)
        # The result and its chart beside the decision table, so that on a laptop's
        # short tab page the table still shows its rows without scrolling.
        chart_box = QWidget()
        chart_layout = QVBoxLayout(chart_box)
        chart_layout.setContentsMargins(0, 0, 0, 0)
        chart_layout.addWidget(self.summary_label)
        chart_layout.addWidget(self.detail_label)
        chart_layout.addLayout(legend)
        chart_layout.addWidget(self.chart, 1)
        chart_layout.addWidget(self.hover_label)
        split = QSplitter(Qt.Orientation.Horizontal, childrenCollapsible=False)
        split.addWidget(chart_box)
        split.addWidget(self.table)
        split.setStretchFactor(0, 11)
        split.setStretchFactor(1, 9)
        split.setSizes([550, 450])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(params)
        layout.addLayout(query)
        layout.addWidget(split, 1)

    def _apply_palette(self) -> None:
        text = color_plots(self.chart, (self.bar_plot, self.strip_plot), self.palette())
        self.cursor_line.setPen(pg.mkPen(text, width=1, style=Qt.PenStyle.DashLine))
        self.safe_label.setText(self._safe_text())

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_palette()
        super().changeEvent(event)

    # -- public API ---------------------------------------------------------------------------

    def set_context(
        self,
        messages: Sequence[Message],
        default_query: str,
        window: int,
        reserve: int,
        hard_cap: int,
    ) -> None:
        """Show the trim of *messages* (the context at the selected entry); run it now.

        Parameters
        ----------
        messages
            The context, oldest first (the messages of ``context_at``).
        default_query
            The query the agent would use (:func:`core.context.trim.default_query`).
        window, reserve, hard_cap
            The budget's figures; they fill the form and become its "Defaults".
            The protected-recent count stays as the user set it.
        """
        self._messages = tuple(messages)
        self._defaults = TrimParameters(
            window, reserve, hard_cap, self.protected_spin.value(), default_query
        )
        self._set_form(self._defaults)
        self.run_button.setEnabled(True)
        self.defaults_button.setEnabled(True)
        self.state_label.setText("Running…")
        self._soon.start()

    def clear(self) -> None:
        """Forget the context: empty table and chart, nothing to run or export."""
        self._debounce.stop()
        self._soon.stop()
        self._messages = ()
        self._runner.cancel(self._key)  # results still on their way are now stale
        self.state_label.clear()
        self._show(None)
        self.summary_label.setText("No context")
        self.detail_label.setText("Select a session to simulate memory-context's smart trim.")
        for button in (self.run_button, self.defaults_button, self.export_button):
            button.setEnabled(False)

    def parameters(self) -> TrimParameters:
        """The parameters as the form holds them."""
        return TrimParameters(
            self.window_spin.value(),
            self.reserve_spin.value(),
            self.hard_cap_spin.value(),
            self.protected_spin.value(),
            self.query_edit.text(),
        )

    def set_parameters(self, params: TrimParameters) -> None:
        """Fill the form with *params*; the trim reruns after the debounce."""
        self._set_form(params)
        self._on_parameter_changed()

    def result(self) -> TrimResult | None:
        """The latest finished trim, if any."""
        return None if self._run is None else self._run.result

    def export_bytes(self) -> bytes:
        """The kept messages of the latest trim, exactly as the session file holds them."""
        return jsonio.dumps([] if self._run is None else self._run.result.kept_raw(), pretty=True)

    def set_decision_filter(self, decisions: Iterable[str]) -> None:
        """Show only the messages with one of *decisions* in the table."""
        shown = set(decisions)
        for d, chip in self.chips.items():
            with QSignalBlocker(chip):
                chip.setChecked(d in shown)
        self.proxy.set_decisions(shown)

    def select_message(self, index: int) -> bool:
        """Select message *index* in the table, showing its decision if filtered out."""
        if self._run is None or not 0 <= index < len(self._run.rows):
            return False
        decision = self._run.rows[index].decision.decision
        if decision not in self.proxy.decisions():
            self.set_decision_filter(self.proxy.decisions() | {decision})
        at = self.proxy.mapFromSource(self.model.index(index, 0))
        self.table.setCurrentIndex(at)
        self.table.scrollTo(at, QAbstractItemView.ScrollHint.PositionAtCenter)
        return True

    @Slot()
    def run(self) -> None:
        """Trim now with the form's parameters, in the view's worker pool."""
        self._debounce.stop()
        self._soon.stop()
        self.state_label.setText("Running…")
        self._runner.submit(
            "trim",
            trim_job(self._messages, self.parameters()),
            key=self._key,
            done=self._on_trim_done,
            failed=self._on_trim_failed,
        )

    # -- handlers -----------------------------------------------------------------------------

    def _set_form(self, params: TrimParameters) -> None:
        values = (params.window, params.reserve, params.hard_cap, params.protected_recent)
        for spin, value in zip(self._spins(), values, strict=True):
            with QSignalBlocker(spin):
                spin.setValue(value)
        with QSignalBlocker(self.query_edit):
            self.query_edit.setText(params.query)
            self.query_edit.setCursorPosition(0)
        self.safe_label.setText(self._safe_text())

    def _safe_text(self) -> str:
        limit = self.parameters().safe_limit
        warn = "color:#D55E00;" if limit <= 0 else ""
        return f'safe limit <b style="{warn}">{limit:,}</b>'

    @Slot()
    def _on_parameter_changed(self) -> None:
        self.safe_label.setText(self._safe_text())
        if self.run_button.isEnabled():
            self._debounce.start()

    @Slot()
    def _on_defaults_clicked(self) -> None:
        d = self._defaults
        self.set_parameters(
            TrimParameters(d.window, d.reserve, d.hard_cap, PROTECTED_RECENT, d.query)
        )

    @Slot()
    def _on_export_clicked(self) -> None:
        if self._run is not None:
            self.export_requested.emit(self.export_bytes())

    def _on_trim_done(self, run: TrimRun) -> None:
        self.state_label.clear()
        self._show(run)
        self.result_ready.emit(run.result)

    def _on_trim_failed(self, message: str) -> None:
        self.state_label.clear()
        self.summary_label.setText("Trim failed")
        self.detail_label.setText(message)
        self.trim_failed.emit(message)

    @Slot(bool)
    def _on_chip_toggled(self, _checked: bool) -> None:
        self.proxy.set_decisions(d for d, chip in self.chips.items() if chip.isChecked())

    @Slot(QModelIndex, QModelIndex)
    def _on_current_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        row: TrimRow | None = current.data(RecordRole) if current.isValid() else None
        self.cursor_line.setVisible(row is not None)
        if row is not None:
            self.cursor_line.setPos(row.decision.index + 0.5)
            self.message_selected.emit(row.decision.index)

    def _index_at(self, scene_pos: Any) -> int | None:
        if self._run is None:
            return None
        for plot in (self.bar_plot, self.strip_plot):
            if plot.getViewBox().sceneBoundingRect().contains(scene_pos):
                i = int(np.floor(plot.getViewBox().mapSceneToView(scene_pos).x()))
                return i if 0 <= i < len(self._run.rows) else None
        return None

    @Slot(object)
    def _on_chart_mouse_moved(self, pos: Any) -> None:
        i = self._index_at(pos)
        if i is None or self._run is None:
            return
        row = self._run.rows[i]
        d = row.decision
        self.hover_label.setText(
            f"#{d.index} · {row.role} · {d.tokens:,} tokens · "
            f"{DECISION_LABELS[d.decision]}: {d.reason}"
        )

    @Slot(object)
    def _on_chart_mouse_clicked(self, event: Any) -> None:
        i = self._index_at(event.scenePos())
        if i is not None:
            self.select_message(i)

    # -- showing a run ------------------------------------------------------------------------

    def _show(self, run: TrimRun | None) -> None:
        self._run = run
        self.model.set_records(() if run is None else run.rows)
        counts = {} if run is None else run.result.counts()
        for d, chip in self.chips.items():
            chip.setText(f"{DECISION_LABELS[d]}  {counts.get(d, 0):,}")
        empty = np.zeros(0)
        for d in DECISIONS:
            bars, strip = (run.bars[d], run.strip[d]) if run else ((empty, empty),) * 2
            self.bar_items[d].setData(x=bars[0], y=bars[1])
            self.strip_items[d].setData(x=strip[0], y=strip[1])
        n = 0 if run is None else len(run.rows)
        self.bar_plot.setLimits(xMin=0, xMax=max(n, 1))
        self.bar_plot.setXRange(0, max(n, 1), padding=0)
        self.bar_plot.enableAutoRange(y=True)
        self.cursor_line.hide()
        self.hover_label.setText(
            "Hover over a bar for its message and reason; click to select it in the table."
            if n
            else ""
        )
        self.export_button.setEnabled(run is not None)
        if run is not None:
            self.summary_label.setText(summary_text(run.result))
            self.detail_label.setText(detail_text(run.params, run.result))
