"""The search knobs of the recall preview: the ranking, and :class:`SearchConfig` fields."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QWidget,
)

from core.recall.rankings import RANKINGS, SEED, get_ranking

if TYPE_CHECKING:
    from core.recall.hybrid import SearchConfig


class Knob(QWidget):
    """A labelled slider and spin box over one float, kept in step."""

    value_changed = Signal(float)

    def __init__(
        self, label: str, lo: float, hi: float, step: float, decimals: int, tip: str
    ) -> None:
        super().__init__()
        self._lo, self._step = lo, step
        self.label = QLabel(label)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, round((hi - lo) / step))
        self.slider.setMinimumWidth(80)
        self.spin = QDoubleSpinBox()
        self.spin.setRange(lo, hi)
        self.spin.setSingleStep(step)
        self.spin.setDecimals(decimals)
        self.spin.setKeyboardTracking(False)
        for w in (self.label, self.slider, self.spin):
            w.setToolTip(tip)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        lay.addWidget(self.label)
        lay.addWidget(self.slider, 1)
        lay.addWidget(self.spin)
        self.slider.valueChanged.connect(self._on_slider_value_changed)
        self.spin.valueChanged.connect(self._on_spin_value_changed)

    def value(self) -> float:
        """The current value."""
        return float(self.spin.value())

    def set_value(self, value: float) -> None:
        """Show *value* without emitting :attr:`value_changed`."""
        for w in (self.slider, self.spin):
            w.blockSignals(True)
        self.spin.setValue(value)
        self.slider.setValue(round((value - self._lo) / self._step))
        for w in (self.slider, self.spin):
            w.blockSignals(False)

    @Slot(int)
    def _on_slider_value_changed(self, pos: int) -> None:
        self.spin.blockSignals(True)
        self.spin.setValue(self._lo + pos * self._step)
        self.spin.blockSignals(False)
        self.value_changed.emit(self.value())

    @Slot(float)
    def _on_spin_value_changed(self, value: float) -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(round((value - self._lo) / self._step))
        self.slider.blockSignals(False)
        self.value_changed.emit(value)


class SearchKnobs(QGroupBox):
    """minScore, vector and text weights, decay and cross-session.

    On two rows of three (*columns* 3), or one knob a row (*columns* 1) for a side column.

    ``config_changed`` is emitted on every user change (not by :meth:`show_config`);
    ``defaults_requested`` when the user asks for the agent's values back;
    ``apply_requested`` when the user asks to write the values into the agent's config.
    """

    config_changed = Signal()
    defaults_requested = Signal()
    apply_requested = Signal()

    def __init__(self, parent: QWidget | None = None, *, columns: int = 3) -> None:
        super().__init__("Search settings", parent)
        self.min_score = Knob(
            "minScore", 0.0, 1.0, 0.01, 2, "Hits need an effective score of at least this."
        )
        self.vector_weight = Knob(
            "Vector weight", 0.0, 1.0, 0.01, 2, "Weight of the cosine similarity in the score."
        )
        self.text_weight = Knob(
            "Text weight", 0.0, 1.0, 0.01, 2, "Weight of the normalised BM25 score in the score."
        )
        self.decay = Knob(
            "Decay",
            0.9,
            1.0,
            0.0005,
            4,
            "Per-day factor: a segment d days old is multiplied by decay ** d (1 = no decay).",
        )
        label_width = self.fontMetrics().horizontalAdvance("Vector weight") + 4
        for knob in self.knobs():
            knob.value_changed.connect(self._on_knob_value_changed)
            knob.label.setMinimumWidth(label_width)
        self.cross_session = QCheckBox("Cross-session")
        self.cross_session.setToolTip("Search every session's segments, not only this session's")
        self.cross_session.toggled.connect(self._on_knob_value_changed)
        self.defaults_button = QPushButton("Defaults")
        self.defaults_button.setToolTip("Back to the agent's configured values")
        self.defaults_button.clicked.connect(self.defaults_requested)
        self.apply_button = QPushButton("&Apply to agent…")
        self.apply_button.setToolTip(
            "Write minScore and cross-session into the agent's openclaw.json, one setting at a"
            " time, each previewed and backed up (its weights and decay are not settings)"
        )
        self.apply_button.clicked.connect(self.apply_requested)
        self.ranking_combo = QComboBox()
        for r in RANKINGS.values():
            text = f"{r.name} (the agent's)" if r == SEED else r.name
            self.ranking_combo.addItem(text, r.name)
            self.ranking_combo.setItemData(
                self.ranking_combo.count() - 1, r.summary, Qt.ItemDataRole.ToolTipRole
            )
        self.ranking_combo.setToolTip(
            "How segments are ranked. seed is the agent's own formula; the others are"
            " memlens's rankings, measured in the Recall lab (the agent cannot run them)"
        )
        self.ranking_combo.currentIndexChanged.connect(self._on_ranking_changed)
        self.ranking_label = QLabel("&Ranking")
        self.ranking_label.setBuddy(self.ranking_combo)
        self.limit_label = QLabel()
        self.limit_label.setToolTip("The agent's search limit: max(8, ceil(hard cap / 500))")
        self._limit = 8
        grid = QGridLayout(self)
        grid.setContentsMargins(8, 4, 8, 4)
        grid.setHorizontalSpacing(16)
        grid.setVerticalSpacing(2)
        ranking_row = QHBoxLayout()
        ranking_row.addWidget(self.ranking_label)
        ranking_row.addWidget(self.ranking_combo, 1)
        extras = QHBoxLayout()
        extras.addWidget(self.cross_session)
        extras.addSpacing(12)
        extras.addWidget(self.limit_label)
        extras.addStretch(1)
        if columns >= 3:
            grid.addLayout(ranking_row, 0, 0)
            grid.addWidget(self.min_score, 1, 0)
            grid.addWidget(self.vector_weight, 1, 1)
            grid.addWidget(self.text_weight, 1, 2)
            grid.addWidget(self.decay, 2, 0)
            grid.addLayout(extras, 2, 1)
            grid.addLayout(_row(self.apply_button, self.defaults_button), 2, 2)
            for col in range(3):
                grid.setColumnStretch(col, 1)
        else:  # one knob a row: a side column
            grid.addLayout(ranking_row, 0, 0)
            for row, knob in enumerate(self.knobs(), 1):
                grid.addWidget(knob, row, 0)
            grid.addLayout(extras, 5, 0)
            grid.addLayout(_row(self.apply_button, self.defaults_button), 6, 0)

    def knobs(self) -> tuple[Knob, Knob, Knob, Knob]:
        """minScore, vector weight, text weight, decay."""
        return (self.min_score, self.vector_weight, self.text_weight, self.decay)

    def config(self, base: SearchConfig) -> SearchConfig:
        """*base* with the knobs' values."""
        return base.with_(
            min_score=round(self.min_score.value(), 6),
            vector_weight=round(self.vector_weight.value(), 6),
            bm25_weight=round(self.text_weight.value(), 6),
            decay=round(self.decay.value(), 6),
            cross_session=self.cross_session.isChecked(),
        )

    def ranking(self) -> str:
        """The name of the ranking chosen."""
        return str(self.ranking_combo.currentData())

    def show_config(self, cfg: SearchConfig, limit: int, ranking: str = SEED.name) -> None:
        """Set every knob to *cfg* and the *ranking* (no signal); show the search *limit*."""
        self.ranking_combo.blockSignals(True)
        self.ranking_combo.setCurrentIndex(max(0, self.ranking_combo.findData(ranking)))
        self.ranking_combo.blockSignals(False)
        self.min_score.set_value(cfg.min_score)
        self.vector_weight.set_value(cfg.vector_weight)
        self.text_weight.set_value(cfg.bm25_weight)
        self.decay.set_value(cfg.decay)
        self.cross_session.blockSignals(True)
        self.cross_session.setChecked(cfg.cross_session)
        self.cross_session.blockSignals(False)
        self._limit = limit
        self._update_label()

    def _update_label(self) -> None:
        d = self.decay.value()
        half = "no decay" if d >= 1 else f"half-life {math.log(0.5) / math.log(d):,.0f} d"
        self.limit_label.setText(f"limit {self._limit} · {half}")

    @Slot()
    def _on_ranking_changed(self) -> None:
        """Another ranking: its own weights in the knobs, then a new recall."""
        ranking = get_ranking(self.ranking())
        for knob, value in (
            (self.vector_weight, ranking.vector_weight),
            (self.text_weight, ranking.text_weight),
        ):
            knob.set_value(value)
        self.config_changed.emit()

    @Slot()
    def _on_knob_value_changed(self) -> None:
        self._update_label()
        self.config_changed.emit()


def _row(*widgets: QWidget) -> QHBoxLayout:
    """*widgets* side by side, pushed to the right."""
    row = QHBoxLayout()
    row.addStretch(1)
    for w in widgets:
        row.addWidget(w)
    return row
