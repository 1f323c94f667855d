"""The what-if panel: the session's context as it ran, above the one other settings give.

:class:`WhatIfView` is handed a session and its ``openclaw.json`` (if any). A row of
settings (a model preset, the window, the reserve, ``keepRecentTokens`` and
``maxHistoryShare``, pre-filled with the session's own) drives
:func:`core.compaction.whatif.replay_whatif` in the job runner; every change reruns it
after a short pause, a newer run replacing an older one. Two x-linked plots show the
context curve of the transcript ("as it ran") and of the replay ("with these
settings"), each with its compactions (tokens before -> after), its window and its
trigger; the lower one also shows the memory flushes and the overflow recoveries. A
table lists the compactions of both; clicking one, or a marker, emits
:attr:`WhatIfView.entry_activated` with the entry after which it happens.

After each replay a second job audits what every compaction would have lost
(:func:`core.compaction.whatif_audit.audit_whatif`): the table's loss columns and
the markers' tooltips fill in, and the pane beside the table lists what the selected
compaction lost for good (Enter on an item shows the entry it came from).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyqtgraph as pg  # type: ignore[import-untyped]
from PySide6.QtCore import QEvent, QModelIndex, QSignalBlocker, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QKeySequence, QPalette, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from core.compaction.whatif_report import preset_names, preset_window, whatif_settings
from widgets.common.flow import FlowLayout
from widgets.common.jobs import default_runner
from widgets.common.palette import color_plots
from widgets.common.record_model import RecordRole
from widgets.common.tables import table_view
from widgets.common.view_jobs import view_key
from widgets.timeline.style import TokenAxis, short_tokens
from widgets.whatif.jobs import audit_job, settings_text, whatif_job, whatif_summary
from widgets.whatif.lane import REAL_COLOR, SIMULATED_COLOR, Lane
from widgets.whatif.table import (
    COLUMN_WIDTHS,
    COLUMNS,
    CompactionRow,
    CompactionTableModel,
    LostItemsPane,
    TableAndLoss,
    compaction_rows,
)

if TYPE_CHECKING:
    from PySide6.QtGui import QShowEvent

    from core.compaction.whatif import WhatIfResult, WhatIfSettings
    from core.compaction.whatif_audit import WhatIfAudit
    from core.openclaw.config import OpenClawConfig
    from core.transcript.model import Session
    from widgets.common.jobs import JobRunner

DEBOUNCE_MS = 300


class WhatIfView(QWidget):
    """Settings, the two timelines and the compactions of a what-if replay.

    Signals
    -------
    entry_activated(str)
        A compaction, flush or overflow was clicked (a marker or a table row): the id
        of the entry after which it happens.
    result_ready(object)
        After every finished replay (its :class:`~core.compaction.whatif.WhatIfResult`).
    losses_ready(object)
        After the loss audit of a replay (its :class:`~core.compaction.whatif_audit.WhatIfAudit`).
    """

    entry_activated = Signal(str)
    result_ready = Signal(object)
    losses_ready = Signal(object)

    def __init__(self, parent: QWidget | None = None, runner: JobRunner | None = None) -> None:
        super().__init__(parent)
        self._session: Session | None = None
        self._config: OpenClawConfig | None = None
        self._own: WhatIfSettings | None = None
        self._result: WhatIfResult | None = None
        self._snapshot: Session | None = None
        self._audit: WhatIfAudit | None = None
        """The last loss audit (its real compactions' audits serve the next replay's)."""
        self._pending = False
        self._runner = runner if runner is not None else default_runner()
        self._key = view_key(self, self._runner, "whatif")
        self._audit_key = view_key(self, self._runner, "whatif-audit")
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self.run)
        self._build_form()
        self._build_chart()
        self._build_table()
        self._build_layout()
        self._apply_palette()
        self.clear()

    # -- building -----------------------------------------------------------------------------

    def _spin(self, maximum: int, step: int, tip: str) -> QSpinBox:
        spin = QSpinBox()
        spin.setRange(0, maximum)
        spin.setSingleStep(step)
        spin.setToolTip(tip)
        spin.setGroupSeparatorShown(True)
        spin.setAlignment(Qt.AlignmentFlag.AlignRight)
        spin.setMinimumWidth(96)
        spin.valueChanged.connect(self._on_setting_changed)
        return spin

    def _build_form(self) -> None:
        self.preset_combo = QComboBox()
        self.preset_combo.setToolTip("A model's context window: the session's own, or a preset")
        self.preset_combo.setMinimumContentsLength(16)
        self.preset_combo.currentIndexChanged.connect(self._on_preset_changed)
        self.window_spin = self._spin(100_000_000, 1000, "The context window (tokens)")
        self.window_spin.setMinimum(1)
        self.reserve_spin = self._spin(
            10_000_000, 1000, "reserveTokens: compact above window - reserve"
        )
        self.keep_spin = self._spin(10_000_000, 1000, "keepRecentTokens: kept verbatim")
        self.keep_spin.setMinimum(1)
        self.share_spin = QDoubleSpinBox()
        self.share_spin.setRange(0.01, 1.0)
        self.share_spin.setSingleStep(0.05)
        self.share_spin.setDecimals(2)
        self.share_spin.setToolTip("maxHistoryShare: the most of the window history may take")
        self.share_spin.valueChanged.connect(self._on_setting_changed)
        self.audit_check = QCheckBox("Lo&ss audit")
        self.audit_check.setChecked(True)
        self.audit_check.setToolTip(
            "After each replay, audit what every compaction would have lost: the agent's "
            "summary for the real ones, memlens's offline summary of the cut for the others"
        )
        self.audit_check.toggled.connect(self._on_audit_toggled)
        self.own_button = QPushButton("&Own settings")
        self.own_button.setToolTip("Back to the settings the session ran with")
        self.own_button.clicked.connect(self.reset_settings)
        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("Replay now (Ctrl+Enter; it also reruns on every change)")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the replay (Esc)")
        self.cancel_button.clicked.connect(self.cancel)
        self.progress_bar = QProgressBar()
        self.progress_bar.setMaximumWidth(140)
        self.progress_bar.setTextVisible(False)
        self.state_label = QLabel()
        context = Qt.ShortcutContext.WidgetWithChildrenShortcut
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            QShortcut(QKeySequence(keys), self, self.run, context=context)
        QShortcut(QKeySequence("Esc"), self, self.cancel, context=context)

    def _build_chart(self) -> None:
        self.chart = pg.GraphicsLayoutWidget()
        self.chart.setMinimumHeight(220)
        self.chart.ci.setContentsMargins(4, 4, 12, 4)
        plots = []
        for row in (0, 1):
            plot = self.chart.addPlot(row=row, col=0, axisItems={"left": TokenAxis("left")})
            plot.setMenuEnabled(False)
            plot.hideButtons()
            plot.getAxis("left").setWidth(56)
            plot.setMouseEnabled(x=True, y=False)
            plot.showGrid(y=True, alpha=0.15)
            plots.append(plot)
        self.real_plot, self.simulated_plot = plots
        self.simulated_plot.setXLink(self.real_plot)
        self.simulated_plot.setYLink(self.real_plot)  # the same scale: heights compare
        self.simulated_plot.setLabel("bottom", "message on the leaf path")
        self.real_lane = Lane(self.real_plot, "real", REAL_COLOR, self._on_marker_clicked)
        self.simulated_lane = Lane(
            self.simulated_plot, "simulated", SIMULATED_COLOR, self._on_marker_clicked
        )

    def _build_table(self) -> None:
        self.model = CompactionTableModel(COLUMNS, self)
        self.table = table_view(self.model, COLUMN_WIDTHS)
        self.table.setAccessibleName("What-if compactions")
        self.table.clicked.connect(self._on_row_activated)
        self.table.activated.connect(self._on_row_activated)
        self.table.selectionModel().currentRowChanged.connect(self._on_current_changed)
        self.lost_pane = LostItemsPane()
        self.lost_pane.entry_activated.connect(self.entry_activated)

    def _build_layout(self) -> None:
        # the settings wrap: on a laptop the inspector's tab is a few hundred pixels wide
        form = FlowLayout(spacing=10)
        fields: list[tuple[str, QWidget]] = [
            ("&Model", self.preset_combo),
            ("&Window", self.window_spin),
            ("&Reserve", self.reserve_spin),
            ("&Keep recent", self.keep_spin),
            ("&History share", self.share_spin),
        ]
        for text, widget in fields:
            pair = QWidget()
            row = QHBoxLayout(pair)
            row.setContentsMargins(0, 0, 0, 0)
            label = QLabel(text)
            label.setBuddy(widget)
            row.addWidget(label)
            row.addWidget(widget)
            form.addWidget(pair)
        form.addWidget(self.audit_check)
        for button in (self.own_button, self.run_button, self.cancel_button):
            form.addWidget(button)
        form.addWidget(self.progress_bar)
        form.addWidget(self.state_label)
        self.summary_label = QLabel()
        font = self.summary_label.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.summary_label.setFont(font)
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail_label = QLabel()
        self.detail_label.setWordWrap(True)
        self.detail_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        bottom = TableAndLoss(self.table, self.lost_pane)
        split = QSplitter(Qt.Orientation.Vertical, childrenCollapsible=False)
        split.addWidget(self.chart)
        split.addWidget(bottom)
        split.setStretchFactor(0, 2)  # the two lanes, and the compactions with their losses
        split.setStretchFactor(1, 1)
        split.setSizes([500, 250])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(form)
        layout.addWidget(self.summary_label)
        layout.addWidget(self.detail_label)
        layout.addWidget(split, 1)

    def _apply_palette(self) -> None:
        text = color_plots(self.chart, (self.real_plot, self.simulated_plot), self.palette())
        self._titles()
        for lane in (self.real_lane, self.simulated_lane):
            lane.recolor(text)

    def _titles(self) -> None:
        color = self.palette().color(QPalette.ColorRole.Text).name()
        r = self._result
        own = f" (window {short_tokens(r.own.window)})" if r is not None else ""
        sim = (
            f" ({r.settings.label}, window {short_tokens(r.settings.compaction.window)})"
            if r
            else ""
        )
        self.real_plot.setTitle(f"As it ran{own}", color=color, justify="left", size="10pt")
        self.simulated_plot.setTitle(
            f"With these settings{sim}", color=color, justify="left", size="10pt"
        )

    @override
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._pending:
            self.run()

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_palette()
        super().changeEvent(event)

    # -- public API ---------------------------------------------------------------------------

    def set_session(self, session: Session | None, config: OpenClawConfig | None = None) -> None:
        """Replay *session* (None: forget it) with its own settings, then as the user changes them.

        The form is filled with the session's own settings (``openclaw.json``'s when
        *config* is given, else pi's defaults for its model); the preset keeps the
        user's pick, so "what if on a 128k model" follows from session to session.
        """
        if session is None:
            self.clear()
            return
        self._session, self._config = session, config
        try:
            self._own = whatif_settings(session, config)[1]
        except ValueError as exc:
            self.clear()
            self.detail_label.setText(f"No replay: {exc}")
            return
        preset = self.preset_combo.currentData() or ""
        self._fill_presets(preset)
        self._fill_form(self._own, preset)
        for widget in self._inputs():
            widget.setEnabled(True)
        # a replay takes up to seconds: run it when the tab is in front, not on every pick
        self._pending = True
        if self.isVisible():
            self.run()

    def clear(self) -> None:
        """No session: nothing to replay, empty plots and table."""
        self._debounce.stop()
        self._runner.cancel(self._key)  # what a running replay still delivers is stale
        self._runner.cancel(self._audit_key)
        self._session, self._config, self._own = None, None, None
        self._snapshot, self._audit = None, None
        self.lost_pane.set_session(None)
        self._show(None)
        self.summary_label.setText("No session")
        self.detail_label.setText("Select a session to replay it under other compaction settings.")
        self._idle("")
        for widget in self._inputs():
            widget.setEnabled(False)

    def result(self) -> WhatIfResult | None:
        """The latest finished replay, if any."""
        return self._result

    def settings(self) -> tuple[WhatIfSettings, WhatIfSettings]:
        """``(what-if, own)`` as the form sets them.

        Raises
        ------
        ValueError
            A value the agent would not take (the reserve leaves no window...).
        """
        assert self._session is not None and self._own is not None
        own = self._own.compaction
        preset = self.preset_combo.currentData() or None
        window = self.window_spin.value()
        model = preset if preset and window == preset_window(preset) else None
        share = self.share_spin.value()
        return whatif_settings(
            self._session,
            self._config,
            window=None if model is not None or window == own.window else window,
            model=model,
            reserve=None
            if self.reserve_spin.value() == own.reserve_tokens
            else self.reserve_spin.value(),
            keep_recent=None
            if self.keep_spin.value() == own.keep_recent_tokens
            else self.keep_spin.value(),
            max_history_share=None if abs(share - own.max_history_share) < 0.005 else share,
        )

    @Slot()
    def reset_settings(self) -> None:
        """Back to the session's own settings (and its own window); replay."""
        if self._own is None:
            return
        with QSignalBlocker(self.preset_combo):
            self.preset_combo.setCurrentIndex(0)
        self._fill_form(self._own, "")
        self.run()

    @Slot()
    def run(self) -> None:
        """Replay now with the form's settings (a newer run replaces a running one)."""
        self._debounce.stop()
        self._pending = False
        if self._session is None:
            return
        try:
            settings, own = self.settings()
        except ValueError as exc:
            self._runner.cancel(self._key)
            self._idle("")
            self.detail_label.setText(f"Cannot replay: {exc}")
            return
        self.detail_label.setText(settings_text(settings))
        self._idle("Replaying…", running=True)
        self._runner.cancel(self._audit_key)  # the losses of the replay it replaces
        snapshot = self._session.snapshot()  # live mode may extend the session
        last = self._snapshot
        if last is None or (last.id, len(last.entries)) != (snapshot.id, len(snapshot.entries)):
            self._audit = None  # its real compactions' audits are of another session or branch
        self._snapshot = snapshot
        self.lost_pane.set_session(snapshot)
        self._runner.submit(
            "what-if replay",
            whatif_job(snapshot, settings, own),
            key=self._key,
            done=self._on_done,
            failed=self._on_failed,
            progress=self._on_progress,
        )

    @Slot()
    def cancel(self) -> None:
        """Stop a running replay or loss audit; the plots keep the last finished replay."""
        self._debounce.stop()
        busy = [k for k in (self._key, self._audit_key) if self._runner.busy(k)]
        for key in busy:
            self._runner.cancel(key)
        if busy:
            self._idle("Cancelled")
            self.lost_pane.show_loss(self._current_row())

    # -- handlers -----------------------------------------------------------------------------

    def _inputs(self) -> tuple[QWidget, ...]:
        return (
            self.preset_combo, self.window_spin, self.reserve_spin, self.keep_spin,
            self.share_spin, self.audit_check, self.own_button, self.run_button,
        )  # fmt: skip

    def _fill_presets(self, keep: str) -> None:
        assert self._own is not None
        own = self._own.compaction
        with QSignalBlocker(self.preset_combo):
            self.preset_combo.clear()
            self.preset_combo.addItem(f"Own: {short_tokens(own.window)} ({own.window_source})", "")
            for name in preset_names():
                size = short_tokens(preset_window(name))
                self.preset_combo.addItem(
                    name if size.lower() == name.lower() else f"{name} ({size})", name
                )
            self.preset_combo.setCurrentIndex(max(0, self.preset_combo.findData(keep)))

    def _fill_form(self, own: WhatIfSettings, preset: str) -> None:
        c = own.compaction
        window = preset_window(preset) if preset else c.window
        values = ((self.window_spin, window), (self.reserve_spin, c.reserve_tokens),
                  (self.keep_spin, c.keep_recent_tokens))  # fmt: skip
        for spin, value in values:
            with QSignalBlocker(spin):
                spin.setValue(value)
        with QSignalBlocker(self.share_spin):
            self.share_spin.setValue(c.max_history_share)

    def _idle(self, state: str, *, running: bool = False) -> None:
        self.state_label.setText(state)
        self.progress_bar.setVisible(running)
        self.progress_bar.setRange(0, 0)
        self.cancel_button.setEnabled(running)

    @Slot()
    def _on_preset_changed(self) -> None:
        if self._own is None:
            return
        preset = self.preset_combo.currentData() or ""
        window = preset_window(preset) if preset else self._own.compaction.window
        with QSignalBlocker(self.window_spin):
            self.window_spin.setValue(window)
        self._debounce.start()

    @Slot()
    def _on_setting_changed(self) -> None:
        if self._session is not None:
            self._debounce.start()

    def _on_progress(self, done: int, total: int, _label: str) -> None:
        self.progress_bar.setRange(0, max(total, 1))
        self.progress_bar.setValue(done)

    def _on_done(self, result: WhatIfResult) -> None:
        self._idle("")
        self._show(result)
        self.result_ready.emit(result)
        if self.audit_check.isChecked():
            self._start_audit(result)

    def _start_audit(self, result: WhatIfResult) -> None:
        if self._snapshot is None or not (result.real or result.simulated):
            return
        self._idle("Auditing losses…", running=True)
        self.lost_pane.show_loss(self._current_row(), auditing=True)
        self._runner.submit(
            "what-if loss audit",
            audit_job(result, self._snapshot, self._audit),
            key=self._audit_key,
            done=self._on_audit_done,
            failed=self._on_audit_failed,
            progress=self._on_progress,
        )

    @Slot(bool)
    def _on_audit_toggled(self, checked: bool) -> None:
        row = self._current_row()
        if checked and self._result is not None and (row is None or row.loss is None):
            self._start_audit(self._result)
        elif not checked and self._runner.busy(self._audit_key):
            self._runner.cancel(self._audit_key)
            self._idle("")
            self.lost_pane.show_loss(row)

    def _on_audit_done(self, audit: WhatIfAudit) -> None:
        self._idle("")
        self._audit = audit
        self.model.set_losses(audit)
        self.real_lane.set_losses(audit.real)
        self.simulated_lane.set_losses(audit.simulated)
        self.lost_pane.show_loss(self._current_row())
        if self._result is not None:
            self.summary_label.setText(whatif_summary(self._result, audit))
        self.losses_ready.emit(audit)

    def _on_audit_failed(self, message: str) -> None:
        self._idle("Loss audit failed")
        self.detail_label.setText(f"The loss audit failed: {message}")
        self.lost_pane.show_loss(self._current_row())

    def _current_row(self) -> CompactionRow | None:
        record = self.table.currentIndex().data(RecordRole)
        return record if isinstance(record, CompactionRow) else None

    @Slot(QModelIndex, QModelIndex)
    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        record = current.data(RecordRole) if current.isValid() else None
        row = record if isinstance(record, CompactionRow) else None
        self.lost_pane.show_loss(row, auditing=self._runner.busy(self._audit_key))

    def _on_failed(self, message: str) -> None:
        self._idle("Failed")
        self.detail_label.setText(f"The replay failed: {message}")

    def _on_marker_clicked(self, _item: Any, points: Any, *_: Any) -> None:
        if len(points):
            entry = getattr(points[0].data(), "entry_id", None)
            if entry:
                self.entry_activated.emit(entry)

    @Slot(QModelIndex)
    def _on_row_activated(self, index: QModelIndex) -> None:
        record = index.data(RecordRole) if index.isValid() else None
        if isinstance(record, CompactionRow):
            self.entry_activated.emit(record.compaction.entry_id)

    # -- showing a result ---------------------------------------------------------------------

    def _show(self, result: WhatIfResult | None) -> None:
        self._result = result
        text = self.palette().color(QPalette.ColorRole.Text)
        if result is None:
            for lane in (self.real_lane, self.simulated_lane):
                lane.show((), (), {}, text)
            self.model.set_records(())
            self.lost_pane.show_loss(None)
            self._titles()
            return
        s, own = result.settings, result.own
        self.real_lane.show(
            result.real_context,
            result.real,
            {"window": (own.window, "window"),
             "compaction": (own.window - own.reserve_tokens, "trigger")},
            text,
        )  # fmt: skip
        self.simulated_lane.show(
            result.simulated_context,
            result.simulated,
            {"window": (s.compaction.window, "window"), "compaction": (s.trigger, "trigger"),
             "flush": (result.flush_threshold, "flush")},
            text,
            result.flushes,
            result.overflows,
        )  # fmt: skip
        self.model.set_records(compaction_rows(result))
        self.lost_pane.show_loss(None)
        n = max(len(result.entry_ids), 1)
        top = max((*result.real_context, *result.simulated_context, own.window,
                   s.compaction.window, 1))  # fmt: skip
        self.real_plot.setLimits(xMin=-1, xMax=n + 1)
        self.simulated_plot.setLimits(xMin=-1, xMax=n + 1)
        self.real_plot.setXRange(0, n, padding=0.01)
        self.real_plot.setYRange(0, top * 1.22, padding=0)  # room for the window's label
        self._titles()
        self.summary_label.setText(whatif_summary(result))
