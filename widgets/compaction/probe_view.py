"""The probe pane of the loss audit tab: questions asked of a model about a summary.

:class:`ProbePane` is handed the audit shown (its summary and items) and the
session, and the models the compaction panel offers. "Probe with model…" runs
:func:`~widgets.compaction.probe_models.run_probe` in the job runner, with progress
and a Cancel button; the pane then shows the score per category and every
question with the expected answer, the model's answer and its grade. A failed call
shows its reason; nothing is ever written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from core.compaction.provider import Timeouts
from widgets.common.jobs import default_runner
from widgets.common.palette import is_dark
from widgets.common.record_model import RecordTableModel
from widgets.common.tables import table_view
from widgets.common.view_jobs import view_key
from widgets.compaction.elided import ElidedLabel
from widgets.compaction.probe_models import (
    GRADE_COLORS,
    NO_MODEL_TIP,
    PROBE_TIP,
    QUESTION_COLUMNS,
    SCORE_COLUMNS,
    ProbeModel,
    probe_choice,
    probe_headline,
    run_probe,
    score_lines,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from core.compaction.audit import LossAudit
    from core.compaction.probe import ProbeRun
    from core.compaction.provider import ProviderChoice
    from core.transcript.model import Session
    from widgets.common.jobs import JobRunner
    from widgets.compaction.probe_models import ScoreLine

QUESTION_WIDTHS = (82, 96, 380, 200, 200, 90)
SCORE_WIDTHS = (96, 46, 46, 46, 58, 46, 50)


class ProbePane(QWidget):
    """The probe's button, progress, scores and questions.

    Signals
    -------
    probed(object)
        The probe ended: a :class:`~core.compaction.probe.ProbeRun`, or the error
        message (a str) when it failed.
    """

    probed = Signal(object)

    def __init__(self, parent: QWidget | None = None, runner: JobRunner | None = None) -> None:
        super().__init__(parent)
        self._runner = runner if runner is not None else default_runner()
        self._key = view_key(self, self._runner, "loss-probe")
        self._session: Session | None = None
        self._audit: LossAudit | None = None
        self._choice: ProviderChoice | None = None
        self.timeouts = Timeouts()
        """The model call's time limits: the compaction panel's (Settings)."""
        self.run: ProbeRun | None = None
        self._build()
        self.cancel_button.clicked.connect(self.cancel)
        self._update_button()

    def _build(self) -> None:
        self.probe_button = QPushButton("&Probe with model…")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the probe; nothing is written")
        self.cancel_button.hide()
        self.progress = QProgressBar(textVisible=True)
        self.progress.setMaximumWidth(260)
        self.progress.setMaximumHeight(16)
        self.progress.hide()
        self.headline = ElidedLabel()
        self.error_label = QLabel(wordWrap=True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.hide()
        self.score_model: RecordTableModel[ScoreLine] = RecordTableModel(SCORE_COLUMNS, self)
        self.score_table = table_view(self.score_model, SCORE_WIDTHS)
        self.score_table.horizontalHeader().setStretchLastSection(False)
        self.score_table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.score_table.setMinimumWidth(sum(SCORE_WIDTHS) + 22)  # a vertical scroll bar too
        self.score_table.setAccessibleName("Probe scores")
        self.score_table.setToolTip(
            "Questions per category and their grades; score = (exact + normalised) / asked. "
            "The model's own questions (category model) are not in the total."
        )
        self.questions_model = ProbeModel(QUESTION_COLUMNS, self)
        self.questions_table = table_view(self.questions_model, QUESTION_WIDTHS)
        self.questions_table.setAccessibleName("Probe questions")
        header = self.questions_table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.questions_table.setSortingEnabled(True)
        self.questions_table.setMinimumHeight(24 + 22 * 3 + 4)
        self.score_table.setMinimumHeight(24 + 22 * 2 + 4)
        row = QHBoxLayout()
        row.addWidget(self.progress)
        row.addWidget(self.cancel_button)
        row.addWidget(self.headline, 1)
        split = QSplitter(Qt.Orientation.Horizontal, childrenCollapsible=False)
        split.addWidget(self.score_table)
        split.addWidget(self.questions_table)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(3)
        layout.addLayout(row)
        layout.addWidget(self.error_label)
        layout.addWidget(split, 1)
        self.setVisible(False)  # until a probe runs

    # -- what to probe, and with which model ----------------------------------------------------

    def set_target(self, session: Session | None, audit: LossAudit | None) -> None:
        """Probe *audit* (of *session*) next; a probe of another audit is stopped and cleared."""
        if audit is not self._audit:
            self._runner.cancel(self._key)
            self._busy(False)
            self._show(None)
            self.setVisible(False)
        self._session, self._audit = session, audit
        self._update_button()

    def set_providers(
        self, choices: Sequence[ProviderChoice], current: ProviderChoice | None = None
    ) -> None:
        """The models the compaction panel offers, and the one it has chosen."""
        self._choice = probe_choice(choices, current)
        self._update_button()

    def choice(self) -> ProviderChoice | None:
        """The model a probe would ask (None: no model endpoint is configured)."""
        return self._choice

    def _update_button(self) -> None:
        choice = self.choice()
        busy = self._runner.busy(self._key)
        self.probe_button.setEnabled(choice is not None and self._audit is not None and not busy)
        if choice is None:
            self.probe_button.setToolTip(NO_MODEL_TIP)
        elif self._audit is None:
            self.probe_button.setToolTip("Nothing to probe yet: the audit has not finished")
        else:
            self.probe_button.setToolTip(f"{PROBE_TIP}\nModel: {choice.label} ({choice.spec})")

    # -- the job ---------------------------------------------------------------------------------

    def probe(self) -> None:
        """Ask the model about the audited summary, in the job runner."""
        choice, session, audit = self.choice(), self._session, self._audit
        if choice is None or session is None or audit is None or self.busy():
            return
        snapshot, timeouts = session.snapshot(), self.timeouts

        def job(*, progress: Callable[[int, int, str], None], cancelled: Callable[[], bool]) -> Any:
            return run_probe(
                snapshot, audit, choice, progress=progress, cancelled=cancelled, timeouts=timeouts
            )

        self._show(None)
        self.setVisible(True)
        self.headline.setText(f"Asking {choice.label}…")
        self._runner.submit(
            "Probe questions",
            job,
            key=self._key,
            done=self._on_done,
            failed=self._on_failed,
            cancelled=self._on_cancelled,
            progress=self._on_progress,
        )
        self._busy(True)

    def cancel(self) -> None:
        """Stop the probe running (its result, if any, is dropped)."""
        if self.busy():
            self._runner.cancel(self._key)
            self._on_cancelled()

    def busy(self) -> bool:
        """Whether a probe is running."""
        return self._runner.busy(self._key)

    def _on_progress(self, done: int, total: int, label: str) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat(label)

    def _on_done(self, run: ProbeRun) -> None:
        self._busy(False)
        self._show(run)
        self.probed.emit(run)

    def _on_failed(self, message: str) -> None:
        self._busy(False)
        self._show(None)
        self.headline.setText("The probe failed; nothing was written.")
        color = GRADE_COLORS["wrong"][1 if is_dark(self.palette()) else 0]
        self.error_label.setStyleSheet(f"color: {color}")
        self.error_label.setText(message)
        self.error_label.show()
        self.probed.emit(message)

    def _on_cancelled(self) -> None:
        self._busy(False)
        self.headline.setText("Probe cancelled.")

    def _busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)
        if busy:
            self.progress.setRange(0, 0)
        self._update_button()

    def _show(self, run: ProbeRun | None) -> None:
        self.run = run
        self.error_label.hide()
        self.questions_model.dark = is_dark(self.palette())
        self.score_model.set_records(score_lines(run))
        self.questions_model.set_records(run.results if run is not None else [])
        rows = max(self.score_model.rowCount(), 1)
        self.score_table.setMaximumHeight(
            22 * rows + self.score_table.horizontalHeader().sizeHint().height() + 4
        )
        if run is not None:
            self.headline.setText(probe_headline(run))
            if run.notes:
                self.headline.setToolTip(probe_headline(run) + "\n" + "\n".join(run.notes))
