"""How the recall preview is laid out, compact enough for a laptop screen.

The detail hits, the table people read most, get the whole height of the left side;
the right side stacks the search knobs (hidden until asked for), the block, the
knowledge hits and the hard cap's cuts as tabs, and "why not?" under them. At the
height the Recall tab gets in a 1366x768 window the detail table shows 8 rows or more.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from widgets.common.tip_model import TipTableModel
from widgets.recall.preview_models import (
    CUT_COLUMNS,
    DETAIL_COLUMNS,
    KNOWLEDGE_COLUMNS,
    CutRow,
    DetailRow,
    KnowledgeRow,
    cut_tip,
    detail_tip,
    knowledge_tip,
)

BLOCK_TAB, KNOWLEDGE_TAB, CUT_TAB = 0, 1, 2
"""The tabs of the right side, in order."""


def make_models(
    parent: QWidget,
) -> tuple[TipTableModel[KnowledgeRow], TipTableModel[DetailRow], TipTableModel[CutRow]]:
    """The knowledge, detail and cut table models (header and cell tooltips included)."""
    knowledge: TipTableModel[KnowledgeRow] = TipTableModel(
        [c for c, _ in KNOWLEDGE_COLUMNS],
        parent,
        header_tips=[t for _, t in KNOWLEDGE_COLUMNS],
        cell_tip=knowledge_tip,
    )
    detail: TipTableModel[DetailRow] = TipTableModel(
        [c for c, _ in DETAIL_COLUMNS],
        parent,
        header_tips=[t for _, t in DETAIL_COLUMNS],
        cell_tip=detail_tip,
        dimmed=lambda r: r.rejected,
    )
    cut: TipTableModel[CutRow] = TipTableModel(
        [c for c, _ in CUT_COLUMNS],
        parent,
        header_tips=[t for _, t in CUT_COLUMNS],
        cell_tip=cut_tip,
    )
    return knowledge, detail, cut


def hbox(*widgets: QWidget, stretch_last: bool = True) -> QWidget:
    """*widgets* side by side without margins (the last one stretches)."""
    row = QWidget()
    lay = QHBoxLayout(row)
    lay.setContentsMargins(0, 0, 0, 0)
    for i, w in enumerate(widgets):
        lay.addWidget(w, 1 if stretch_last and i == len(widgets) - 1 else 0)
    return row


def lay_out(view: Any) -> QSplitter:
    """Put the widgets of *view* (a :class:`widgets.recall.preview.RecallPreview`) in place.

    Returns the main (horizontal) splitter.
    """
    view.side_tabs = QTabWidget()
    view.side_tabs.setDocumentMode(True)
    view.side_tabs.addTab(view.block_box, "Block")
    view.side_tabs.addTab(view.knowledge_box, "Knowledge")
    view.side_tabs.addTab(view.cut_box, "Cut")
    # Small floors: on a short screen the splitter, not the window, decides their share.
    view.side_tabs.setMinimumHeight(100)
    view.why_box.setMinimumHeight(90)
    right = QSplitter(Qt.Orientation.Vertical)
    right.addWidget(view.knobs)
    right.addWidget(view.side_tabs)
    right.addWidget(view.why_box)
    right.setSizes([170, 300, 240])
    right.setStretchFactor(1, 1)
    right.setStretchFactor(2, 1)
    splitter = QSplitter(Qt.Orientation.Horizontal)
    splitter.setObjectName("recall-preview-splitter")
    splitter.addWidget(view.detail_box)
    splitter.addWidget(right)
    splitter.setSizes([620, 380])
    splitter.setStretchFactor(0, 3)
    splitter.setStretchFactor(1, 2)
    for s in (right, splitter):
        s.setChildrenCollapsible(False)

    query_row = QHBoxLayout()
    query_row.setSpacing(6)
    query_row.addWidget(view.query_box, 1)
    query_row.addWidget(view.reset_button)
    query_row.addWidget(view.knobs_button)
    status_row = QHBoxLayout()
    status_row.addWidget(view.scope_label)
    status_row.addStretch(1)
    status_row.addWidget(view.status_label)
    status_row.addSpacing(12)
    status_row.addWidget(view.golden)
    status_row.addSpacing(12)
    status_row.addWidget(view.show_rejected)
    lay = QVBoxLayout(view)
    lay.setContentsMargins(4, 4, 4, 4)
    lay.setSpacing(3)
    lay.addLayout(query_row)
    lay.addLayout(status_row)
    lay.addWidget(splitter, 1)
    return splitter
