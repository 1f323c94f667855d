"""What a small tab page needs: its table first, and buttons that fit any width.

On a laptop a tab's page is about 330 px tall and maybe 700 px wide.
:class:`TableFirstSplitter` gives the table room for :data:`TABLE_ROWS` rows (or its
share of a taller page) and the detail pane below the rest; the pane scrolls when
that is less than it needs. Once the user drags the handle, the split is theirs.
:func:`button_bar` puts a page's buttons in one row that never widens the page:
those that do not fit are behind the bar's ``»`` button.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QFrame,
    QScrollArea,
    QSplitter,
    QTableView,
    QToolBar,
    QToolButton,
    QWidget,
)
from typing_extensions import override

if TYPE_CHECKING:
    from PySide6.QtGui import QResizeEvent

TABLE_ROWS = 8
"""Rows the table shows at least, when the page has room for them."""
TABLE_SHARE = 0.6
"""The table's share of a taller page."""
DETAIL_MIN = 26
"""The detail pane's smallest height (it scrolls below that)."""


def button_bar(name: str) -> QToolBar:
    """A row of text buttons whose overflow goes behind a ``»`` button (never scrolls)."""
    bar = QToolBar(name)
    bar.setAccessibleName(name)
    bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    bar.setMovable(False)
    bar.setFloatable(False)
    bar.setContentsMargins(0, 0, 0, 0)
    inner = bar.layout()
    if inner is not None:
        inner.setContentsMargins(0, 0, 0, 0)
    # The style's arrow pixmap is dark on a dark theme: the overflow button says it in text.
    more = bar.findChild(QToolButton, "qt_toolbar_ext_button")
    if more is not None:
        more.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        more.setText("»")
        more.setToolTip("More")
    return bar


class TableFirstSplitter(QSplitter):
    """*table* above *detail* (in a scroll area), the table given its rows first.

    Parameters
    ----------
    table
        The page's main table.
    detail
        What is shown of the selected row; it scrolls when squeezed.
    rows, share
        Until the user moves the handle, the table gets the larger of *rows* rows
        and *share* of the height; the detail the rest.
    """

    def __init__(
        self,
        table: QTableView,
        detail: QWidget,
        *,
        rows: int = TABLE_ROWS,
        share: float = TABLE_SHARE,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(Qt.Orientation.Vertical, parent)
        self.table = table
        self.detail_area = QScrollArea()
        self.detail_area.setWidget(detail)
        self.detail_area.setWidgetResizable(True)
        self.detail_area.setFrameShape(QFrame.Shape.NoFrame)
        self.detail_area.setMinimumHeight(DETAIL_MIN)
        table.setMinimumHeight(DETAIL_MIN * 2)
        self.addWidget(table)
        self.addWidget(self.detail_area)
        self.setChildrenCollapsible(False)
        self.setStretchFactor(0, 1)
        self.setStretchFactor(1, 0)
        self._rows, self._share = rows, share
        self._user_split = False
        self.splitterMoved.connect(self._on_splitter_moved)

    def table_height(self) -> int:
        """The height that shows the table's header and its rows (and a scroll bar)."""
        table = self.table
        header = table.horizontalHeader().sizeHint().height()
        rows = self._rows * table.verticalHeader().defaultSectionSize()
        bar = table.horizontalScrollBar().sizeHint().height()
        return header + rows + bar + 2 * table.frameWidth()

    @override
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if not self._user_split:
            self._split()

    def _split(self) -> None:
        total = self.height() - self.handleWidth()
        if total <= 0:
            return
        top = max(self.table_height(), int(total * self._share))
        top = min(top, total - DETAIL_MIN)
        self.setSizes([top, total - top])

    @Slot(int, int)
    def _on_splitter_moved(self, _pos: int, _index: int) -> None:
        self._user_split = True
