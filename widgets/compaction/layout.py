"""The widgets of the compaction view and how they are laid out (no behaviour here)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from widgets.common.tables import table_view
from widgets.compaction.audit_view import AuditView
from widgets.compaction.diff import SummaryDiffView
from widgets.compaction.elided import ElidedLabel
from widgets.compaction.models import (
    CALL_COLUMNS,
    FACT_COLUMNS,
    PLAN_COLUMNS,
    SECTION_COLUMNS,
    SEGMENT_COLUMNS,
    make_model,
)
from widgets.compaction.provider import ProviderPicker

if TYPE_CHECKING:
    from core.compaction.plan import CompactionPlan

FIGURES = (
    ("before", "Tokens before", "The context now, as the agent measures it"),
    ("summarised", "Summarised", "pi's estimate of what the summary replaces"),
    ("kept", "Kept verbatim", "pi's estimate of the messages kept after the cut point"),
    ("after", "Expected after", "Kept messages plus a summary at its output budget"),
    ("calls", "Model calls", "Chunks, merge, split-turn prefix and pruned history"),
    ("chunks", "Chunks", "Summarisation chunks (parts) and the largest chunk allowed"),
)


class _Splitter(QSplitter):
    """A splitter that asks for no more than its minimum.

    The window holds each tab in a scroll area, which sizes a view with wrapped
    labels by its preferred height: asking for the splitter's minimum keeps that
    within a laptop's tab; a taller tab gives the splitter the rest anyway.
    """

    @override
    def sizeHint(self) -> QSize:
        return self.minimumSizeHint().expandedTo(QSize(super().sizeHint().width(), 0))


class CompactionLayout(QWidget):
    """Every child widget of the compaction panel, laid out.

    Compact enough for a laptop (a tab area of about 900 x 330 pixels) without a
    scroll bar: the buttons in a toolbar row at the top, then the state, the session
    and its settings, then a splitter with the plan (its table beside the headline
    numbers) over the summary tabs.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._build_header()
        self._build_plan()
        self._build_run()
        self._build_tabs()
        self._build_failure()
        self._build_write()
        self.splitter = _Splitter(Qt.Orientation.Vertical)
        self.splitter.setObjectName("compaction-splitter")
        self.splitter.addWidget(self.plan_box)
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setCollapsible(0, False)
        self.splitter.setCollapsible(1, False)
        self.tabs.setMinimumHeight(64)  # the tab bar and two lines
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        layout.setSpacing(3)
        layout.addLayout(self.run_row)
        layout.addLayout(self.header_row)
        layout.addWidget(self.db_note)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.failure_box)
        layout.addWidget(self.notes_label)
        layout.addWidget(self.message_label)

    def _build_header(self) -> None:
        self.session_label = QLabel()
        self.session_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.settings_label = ElidedLabel()  # the agent's compaction settings (all on hover)
        self.settings_label.setEnabled(False)  # the muted colour of the palette
        self.header_row = QHBoxLayout()
        self.header_row.addWidget(self.session_label)
        self.header_row.addWidget(self.settings_label, 1)
        self.picker = ProviderPicker()
        self.provider_combo = self.picker.combo
        self.provider_combo.setMinimumWidth(215)
        self.key_label = self.picker.key_label

    def _build_plan(self) -> None:
        self.plan_box = QWidget()
        self.plan_box.setAccessibleName("Plan")
        self.plan_title = QLabel(wordWrap=True)
        font = self.plan_title.font()
        font.setBold(True)
        self.plan_title.setFont(font)
        self.figures: dict[str, QLabel] = {}
        grid = QGridLayout()
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(1)
        for row, (key, caption, tip) in enumerate(FIGURES):
            cap = QLabel(caption)
            cap.setToolTip(tip)
            cap.setEnabled(False)  # the muted colour of the palette
            value = QLabel()
            value.setToolTip(tip)
            grid.addWidget(cap, row, 0)
            grid.addWidget(value, row, 1)
            self.figures[key] = value
        grid.setRowStretch(len(FIGURES), 1)
        grid.setColumnStretch(2, 1)
        self.cut_label = QLabel(wordWrap=True)
        self.cut_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.show_cut_button = QPushButton("Show on timeline")
        self.show_cut_button.setToolTip("Highlight the first kept entry on the timeline")
        cut_row = QHBoxLayout()
        cut_row.addWidget(self.cut_label, 1)
        cut_row.addWidget(self.show_cut_button, 0, Qt.AlignmentFlag.AlignTop)
        self.plan_model = make_model(PLAN_COLUMNS, self)
        self.plan_table = table_view(self.plan_model, (150, 72, 92, 44, 110))
        # a scroll bar would hide a row: the columns shrink instead (full text on hover)
        self.plan_table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.plan_table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.plan_table.setToolTip("What happens to each part of the session")
        self.plan_table.setAccessibleName("Plan")
        # every row of the plan shows, and no more: the summary below gets the rest
        rows = 4  # pruned, summarised, split-turn prefix, kept
        self.plan_table.setFixedHeight(
            22 * rows + self.plan_table.horizontalHeader().sizeHint().height() + 4
        )
        side = QVBoxLayout()
        side.setSpacing(3)
        side.addLayout(cut_row)
        side.addLayout(grid, 1)
        body = QHBoxLayout()
        body.addWidget(self.plan_table, 3)
        body.addLayout(side, 2)
        lay = QVBoxLayout(self.plan_box)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(3)
        lay.addWidget(self.plan_title)
        lay.addLayout(body, 1)

    def _build_run(self) -> None:
        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("Summarise now, writing nothing (Ctrl+Enter)")
        self.run_button.setDefault(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the summary at once; nothing is written (Esc)")
        self.progress = QProgressBar(textVisible=True)
        self.progress.setMinimumWidth(110)
        self.state_label = ElidedLabel()  # what runs now, or how the last step ended
        self.run_row = QHBoxLayout()  # the toolbar: every button of the view, and the state
        self.run_row.addWidget(self.picker)
        self.run_row.addWidget(self.run_button)
        self.run_row.addWidget(self.cancel_button)
        self.run_row.addWidget(self.progress, 1)
        self.run_row.addWidget(self.state_label, 2)

    def _build_tabs(self) -> None:
        self.tabs = QTabWidget()
        self.sections_model = make_model(SECTION_COLUMNS, self)
        self.sections_table = table_view(self.sections_model, (210, 50))
        self.sections_table.setToolTip("Click a section to show it (* required heading)")
        self.sections_table.horizontalHeader().setSectionResizeMode(
            0, QHeaderView.ResizeMode.Stretch
        )
        self.sections_table.horizontalHeader().setStretchLastSection(False)
        self.summary_header = QLabel(wordWrap=True)
        self.summary_view = QTextBrowser(openLinks=False)
        box = QWidget()
        lay = QVBoxLayout(box)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.summary_header)
        lay.addWidget(self.summary_view, 1)
        split = QSplitter(Qt.Orientation.Horizontal, childrenCollapsible=False)
        split.addWidget(self.sections_table)
        split.addWidget(box)
        split.setSizes([270, 700])
        self.tabs.addTab(split, "&Summary")
        self.diff_view = SummaryDiffView()
        self.tabs.addTab(self.diff_view, "Compare with &previous")
        self.segments_model = make_model(SEGMENT_COLUMNS, self)
        self.segments_table = table_view(self.segments_model, (70, 120, 60, 200))
        self.tabs.addTab(self.segments_table, "")
        self.facts_model = make_model(FACT_COLUMNS, self)
        self.facts_table = table_view(self.facts_model, (80, 110, 340, 220, 80))
        self.tabs.addTab(self.facts_table, "")
        self.tabs.setTabToolTip(2, "The summarised messages, as they would be archived")
        self.tabs.setTabToolTip(3, "Fact operations proposed; they go to the review queue")
        self.audit_view = AuditView()
        self.audit_view.follow_picker(self.picker)  # the probes ask the panel's model
        audit_tab = self.tabs.addTab(self.audit_view, "&Loss audit")
        self.tabs.setTabToolTip(
            audit_tab,
            "What each compaction's summary kept of the messages it replaced, per category, "
            "and what it lost for good; compare with memlens's summary of the same cut",
        )
        self.notes_label = QLabel(wordWrap=True)
        self.notes_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

    def _build_failure(self) -> None:
        self.failure_box = QGroupBox("Summary failed: nothing will be written as it is")
        self.failure_box.setToolTip(
            "A call to the summariser failed after its retries. The summary shown is the "
            "fallback the agent would make of the failure, not a real summary."
        )
        self.failure_label = QLabel(wordWrap=True)
        self.failure_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.calls_model = make_model(CALL_COLUMNS, self)
        self.calls_table = table_view(self.calls_model, (40, 290, 160, 60, 60, 260))
        self.calls_table.setToolTip("Every call of the run to the summariser, in order")
        self.calls_table.setAccessibleName("Attempt log")
        self.calls_table.setFixedHeight(22 * 4 + self.calls_table.horizontalHeader().height() + 6)
        self.retry_button = QPushButton("&Retry")
        self.retry_button.setToolTip("Run the summary again with the same summariser (Ctrl+Enter)")
        self.other_button = QPushButton("Use a&nother summariser…")
        self.other_button.setToolTip("Pick another summariser, then run again")
        self.fallback_button = QPushButton("Write the fallback summary an&yway…")
        self.fallback_button.setToolTip(
            "Show what will be written, then write the fallback summary; its first line says "
            "it is a fallback, not a real summary"
        )
        row = QHBoxLayout()
        row.addWidget(self.retry_button)
        row.addWidget(self.other_button)
        row.addStretch(1)
        row.addWidget(self.fallback_button)
        lay = QVBoxLayout(self.failure_box)
        lay.addWidget(self.failure_label)
        lay.addWidget(self.calls_table)
        lay.addLayout(row)
        self.failure_box.hide()

    def _build_write(self) -> None:
        self.message_label = QLabel(wordWrap=True)
        self.message_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.force_check = QCheckBox("Write even if the agent just wrote")
        self.force_check.setToolTip(
            "memlens refuses a transcript modified in the last few seconds: the agent may "
            "be mid-turn. Tick this to write anyway."
        )
        self.discard_button = QPushButton("Discard")
        self.discard_button.setToolTip("Throw this summary away; nothing is written (Ctrl+D)")
        self.write_button = QPushButton("Write…")
        self.write_button.setToolTip(
            "Show what will be written, then back up the transcript, archive the "
            "segments and append the compaction as the new leaf (Ctrl+S)"
        )
        self.db_note = QLabel(
            "This session lives in OpenClaw's database: memlens runs <b>dry runs only</b> "
            "and never writes there. <i>Compact with OpenClaw…</i> asks OpenClaw's gateway to "
            "compact it with its own summariser.",
            wordWrap=True,
        )
        self.db_note.hide()
        self.openclaw_button = QPushButton("Compact with &OpenClaw…")
        self.openclaw_button.setToolTip(
            "Run OpenClaw's own compaction (openclaw sessions compact KEY): its gateway must "
            "be running; it writes the compaction into its database"
        )
        self.openclaw_button.hide()
        self.run_row.addWidget(self.discard_button)
        self.run_row.addWidget(self.openclaw_button)
        self.run_row.addWidget(self.write_button)
        self.header_row.addWidget(self.force_check)  # the write's one option

    # -- filling ------------------------------------------------------------------------------

    def set_figures(self, plan: CompactionPlan | None) -> None:
        """The headline numbers of *plan* (dashes without one)."""
        if plan is None:
            for label in self.figures.values():
                label.setText("—")
            return
        before = f"{plan.tokens_before:,}"
        self.figures["before"].setText(
            before + ("" if plan.tokens_before_measured else " <small>(est.)</small>")
        )
        self.figures["summarised"].setText(f"~{plan.tokens_summarized:,}")
        self.figures["kept"].setText(f"~{plan.tokens_kept:,}")
        self.figures["after"].setText(f"~{plan.expected_tokens_after():,}")
        self.figures["calls"].setText(f"{plan.calls}")
        self.figures["chunks"].setText(
            f"{len(plan.chunks)} <small>in {len(plan.parts)} part(s), max "
            f"{plan.max_chunk_tokens:,}</small>"
        )

    def set_tab_counts(self, segments: int | None, facts: int | None) -> None:
        """Tab titles with the number of segments and fact operations."""
        self.tabs.setTabText(
            2, "&Archive segments" + ("" if segments is None else f" ({segments})")
        )
        self.tabs.setTabText(3, "&Facts proposed" + ("" if facts is None else f" ({facts})"))
