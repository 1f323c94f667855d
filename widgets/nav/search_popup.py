"""The search-everywhere popup: type, see the best matches, Enter goes there, Esc closes.

It is a frame laid over the top of the window it belongs to (as an editor's quick
open), not a window of its own: no keyboard grab, and it goes away when the keyboard
leaves it.

The app hands it :class:`core.refs.search.SearchItem` records (:meth:`SearchPopup.set_items`,
again when a fuller index arrives); typing re-ranks them after a short debounce. Up and
Down (and Page Up/Down) move through the results from the query box; Enter or a click
emits :attr:`SearchPopup.item_chosen` with the record and closes the popup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QLabel,
    QLineEdit,
    QListView,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from core.refs.search import DEFAULT_LIMIT, rank_items
from widgets.common.record_model import Column, RecordRole, RecordTableModel

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.refs.search import SearchItem

KIND_LABELS = {"session": "Session", "entry": "Entry", "fact": "Fact", "segment": "Segment"}
RESULT_COLUMNS: list[Column[SearchItem]] = [
    Column("Result", lambda i: f"{KIND_LABELS.get(i.kind, i.kind)}: {i.title}\n    {i.detail}"),
]
_MOVES = {
    Qt.Key.Key_Down: 1,
    Qt.Key.Key_Up: -1,
    Qt.Key.Key_PageDown: 8,
    Qt.Key.Key_PageUp: -8,
}


class _Results(RecordTableModel["SearchItem"]):
    """The ranked results; the detail line doubles as the tooltip."""

    @override
    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> Any:
        if role == Qt.ItemDataRole.ToolTipRole and index.isValid():
            item = self.record(index.row())
            return f"{item.detail}\n{item.reference}"
        return super().data(index, role)


class SearchPopup(QFrame):
    """A query box over a ranked list of places.

    Signals
    -------
    item_chosen(object)
        The :class:`~core.refs.search.SearchItem` picked (Enter or a click).
    """

    item_chosen = Signal(object)

    DEBOUNCE_MS = 100

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.hide()
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.setObjectName("search-everywhere")
        self.setAccessibleName("Search everywhere")
        self._items: list[SearchItem] = []
        self._note = ""
        self.query_box = QLineEdit(placeholderText="Search sessions, entries, facts, segments…")
        self.query_box.setClearButtonEnabled(True)
        self.query_box.setAccessibleName("Search everywhere query")
        self.query_box.installEventFilter(self)
        self.query_box.textChanged.connect(self._on_text_changed)
        self.query_box.returnPressed.connect(self.choose_current)
        self.results = _Results(RESULT_COLUMNS, self)
        self.result_view = QListView()
        self.result_view.setModel(self.results)
        self.result_view.setAccessibleName("Search results")
        self.result_view.setUniformItemSizes(True)
        self.result_view.setAlternatingRowColors(True)
        self.result_view.setSpacing(3)  # two lines a result: a gap tells them apart
        self.result_view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.result_view.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the keyboard stays in the box
        self.result_view.clicked.connect(self._on_result_view_clicked)
        self.count_label = QLabel()
        self.count_label.setObjectName("search-count")
        self._timer = QTimer(self, singleShot=True, interval=self.DEBOUNCE_MS)
        self._timer.timeout.connect(self.rank)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.query_box)
        layout.addWidget(self.result_view, 1)
        layout.addWidget(self.count_label)

    def set_items(self, items: Sequence[SearchItem], note: str = "") -> None:
        """Search *items* from now on (*note*, e.g. "indexing…", shown under the list)."""
        self._items = list(items)
        self._note = note
        self.rank()

    def rank(self) -> None:
        """Show the items that best match the query (at once, skipping the debounce)."""
        self._timer.stop()
        hits = rank_items(self._items, self.query_box.text(), DEFAULT_LIMIT)
        self.results.set_records(hits)
        if hits:
            self.result_view.setCurrentIndex(self.results.index(0, 0))
        shown = f"{len(hits):,} matches of {len(self._items):,} places" if hits else "no match"
        self.count_label.setText(f"{shown}{f' · {self._note}' if self._note else ''}")

    def popup(self) -> None:
        """Show the popup over the top of its window, the query selected for typing over."""
        window = self.parentWidget()
        assert window is not None  # made with its window as parent
        width = min(max(window.width() * 3 // 5, 420), 820, window.width())
        height = min(max(window.height() // 2, 280), window.height() - 40)
        self.setGeometry((window.width() - width) // 2, 36, width, height)
        self.show()
        self.raise_()
        self.query_box.setFocus(Qt.FocusReason.PopupFocusReason)
        self.query_box.selectAll()
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._on_focus_changed, Qt.ConnectionType.UniqueConnection)

    def dismiss(self) -> None:
        """Hide the popup (Esc, a choice, or the keyboard going elsewhere)."""
        if self.isVisible():
            self.hide()
            app = QApplication.instance()
            if isinstance(app, QApplication):
                app.focusChanged.disconnect(self._on_focus_changed)

    def _on_focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        if new is not None and not self.isAncestorOf(new):
            self.dismiss()

    def choose_current(self) -> None:
        """Go to the current result (Enter)."""
        index = self.result_view.currentIndex()
        if index.isValid():
            self._choose(index.data(RecordRole))

    def _choose(self, item: SearchItem) -> None:
        self.dismiss()
        self.item_chosen.emit(item)

    def _on_result_view_clicked(self, index: QModelIndex) -> None:
        self._choose(index.data(RecordRole))

    def _on_text_changed(self, _text: str) -> None:
        self._timer.start()

    @override
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.query_box and event.type() == QEvent.Type.ShortcutOverride:
            assert isinstance(event, QKeyEvent)
            if event.key() == Qt.Key.Key_Escape:
                event.accept()  # Esc closes the popup; it does not cancel a load
                return True
        if watched is self.query_box and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            if event.key() == Qt.Key.Key_Escape:
                self.dismiss()
                return True
            step = _MOVES.get(Qt.Key(event.key()))
            if step is not None and self.results.rowCount():
                if self._timer.isActive():
                    self.rank()  # move through what the query finds now
                row = self.result_view.currentIndex().row() + step
                row = max(0, min(row, self.results.rowCount() - 1))
                self.result_view.setCurrentIndex(self.results.index(row, 0))
                return True
        return super().eventFilter(watched, event)
