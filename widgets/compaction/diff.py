"""Two summaries side by side: a line diff in two panes that scroll together."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFontDatabase, QPalette
from PySide6.QtWidgets import QLabel, QSplitter, QTextBrowser, QVBoxLayout, QWidget
from typing_extensions import override

from core.compaction.textdiff import DiffRow, changed_spans, diff_stats, side_by_side
from widgets.compaction.markup import diff_colors, diff_side_html


class SummaryDiffView(QWidget):
    """The previous compaction's summary (left) against a new one (right).

    Rows are aligned: a line missing on one side leaves a grey gap there. Lines
    do not wrap, so both panes keep the same height; scrolling one scrolls the other.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._left_text: str | None = None
        self._right_text: str | None = None
        self._rows: list[DiffRow] = []
        self.stats_label = QLabel(wordWrap=True)
        self.left_title = QLabel()
        self.right_title = QLabel()
        self.left = self._pane("Previous compaction's summary")
        self.right = self._pane("This compaction's summary")
        for a, b in ((self.left, self.right), (self.right, self.left)):
            a.verticalScrollBar().valueChanged.connect(b.verticalScrollBar().setValue)
            a.horizontalScrollBar().valueChanged.connect(b.horizontalScrollBar().setValue)
        split = QSplitter(Qt.Orientation.Horizontal, childrenCollapsible=False)
        for title, pane in ((self.left_title, self.left), (self.right_title, self.right)):
            box = QWidget()
            lay = QVBoxLayout(box)
            lay.setContentsMargins(0, 0, 0, 0)
            lay.setSpacing(2)
            lay.addWidget(title)
            lay.addWidget(pane, 1)
            split.addWidget(box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.stats_label)
        layout.addWidget(split, 1)
        self.set_texts(None, None)

    def _pane(self, tip: str) -> QTextBrowser:
        pane = QTextBrowser()
        pane.setToolTip(tip)
        pane.setOpenLinks(False)
        pane.setLineWrapMode(QTextBrowser.LineWrapMode.NoWrap)
        pane.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        return pane

    # -- public API ---------------------------------------------------------------------------

    def set_texts(self, previous: str | None, current: str | None) -> None:
        """Compare *previous* (None: there is none) with *current* (None: not yet made)."""
        self._left_text, self._right_text = previous, current
        self._rows = side_by_side(previous or "", current or "") if current is not None else []
        self._render()

    def rows(self) -> list[DiffRow]:
        """The aligned rows shown."""
        return list(self._rows)

    # -- rendering ----------------------------------------------------------------------------

    def _render(self) -> None:
        pal = self.palette()
        colors = diff_colors(
            pal.color(QPalette.ColorRole.Base).name(), pal.color(QPalette.ColorRole.Text).name()
        )
        self.left_title.setText(
            "<b>Previous compaction</b>"
            if self._left_text is not None
            else "<b>Previous compaction</b> — none on this branch"
        )
        self.right_title.setText("<b>This summary</b>")
        if self._right_text is None:
            self.left.setPlainText(self._left_text or "")
            self.right.clear()
            self.stats_label.setText(
                "Run the compaction to compare its summary with the previous one."
            )
            return
        spans_left: dict[int, list[tuple[int, int]]] = {}
        spans_right: dict[int, list[tuple[int, int]]] = {}
        for n, row in enumerate(self._rows):
            if row.kind == "replace" and row.left is not None and row.right is not None:
                spans_left[n], spans_right[n] = changed_spans(row.left, row.right)
        self.left.setHtml(diff_side_html(self._rows, "left", colors, spans_left))
        self.right.setHtml(diff_side_html(self._rows, "right", colors, spans_right))
        s = diff_stats(self._rows)
        if self._left_text is None:
            self.stats_label.setText(
                "No earlier compaction on this branch: every line of the new summary is new."
            )
        elif s.identical:
            self.stats_label.setText("The summaries are identical.")
        else:
            self.stats_label.setText(
                f"{s.changed:,} line(s) changed, {s.removed:,} removed, {s.added:,} added, "
                f"{s.equal:,} unchanged"
            )

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._render()
        super().changeEvent(event)
