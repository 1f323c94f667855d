"""The first-run screen: what to open when memlens knows no place yet.

Three big buttons (open a folder, open a transcript, open the demo), the agent
homes found on this computer with what each holds, and the places opened
recently. The view never looks at the disk: the app scans the homes (with
:func:`core.dataset.home_scan.scan_homes`, in a worker), hands the summaries to
:meth:`FirstRunView.set_homes` and the recent places to
:meth:`FirstRunView.set_recent`, and acts on the signals.

Keyboard: Alt+O, Alt+T and Alt+D press the buttons; Alt+A and Alt+P move to
the homes and the recent places; Enter (or a double-click) opens the selected
one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QModelIndex, QPointF, QSize, Qt, Signal, Slot
from PySide6.QtGui import QColor, QIcon, QPainter, QPalette, QPixmap, QPolygonF
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QStyle,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from core.dataset.home_scan import KNOWN_HOMES
from widgets.start.places import PlaceList, PlaceListModel

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.dataset.home_scan import HomeSummary

__all__ = ["FirstRunView"]

CONTENT_WIDTH = 760
MAX_HOME_ROWS = 4
MAX_RECENT_ROWS = 6


def _caption(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
    label.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
    return label


def _heading(text: str, buddy: QWidget) -> QLabel:
    label = QLabel(text)
    font = label.font()
    font.setBold(True)
    font.setPointSizeF(font.pointSizeF() * 1.1)
    label.setFont(font)
    label.setBuddy(buddy)
    return label


class FirstRunView(QWidget):
    """Welcome page shown while no place is open (see the module docstring)."""

    open_requested = Signal(str)
    """Open this path (an agent home or a recent place) now."""
    demo_requested = Signal()
    """Open the built-in demo data."""
    open_folder_requested = Signal()
    """Let the user choose a folder to open."""
    open_file_requested = Signal()
    """Let the user choose a transcript (.jsonl) to open."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("first-run")
        self.homes_model = PlaceListModel(self)
        self.recent_model = PlaceListModel(self)
        self._scanning = False
        self._homes: list[HomeSummary] = []

        title = QLabel("Welcome to memlens")
        font = title.font()
        font.setPointSizeF(font.pointSizeF() * 2.0)
        font.setBold(True)
        title.setFont(font)
        title.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        intro = QLabel(
            "See what your coding agent remembers: its sessions, the context the model saw "
            "at every message, what recall would inject, compactions and facts. "
            "memlens only reads, unless you confirm a write."
        )
        intro.setWordWrap(True)
        intro.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.message = QLabel()
        self.message.setObjectName("first-run-message")
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setVisible(False)

        style = self.style()
        self.folder_button = self._button(
            "&Open Folder…", style.standardIcon(QStyle.StandardPixmap.SP_DirOpenIcon)
        )
        self.file_button = self._button(
            "Open &Transcript…", style.standardIcon(QStyle.StandardPixmap.SP_FileIcon)
        )
        self.demo_button = self._button("Open the &Demo", self._play_icon())
        self.folder_button.clicked.connect(self.open_folder_requested)
        self.file_button.clicked.connect(self.open_file_requested)
        self.demo_button.clicked.connect(self.demo_requested)
        buttons = QGridLayout()
        buttons.setHorizontalSpacing(16)
        buttons.setVerticalSpacing(6)
        captions = (
            "An OpenClaw home, a pi sessions folder or a memory-context folder",
            "A single pi session (.jsonl)",
            "Example OpenClaw data with compactions, recall and facts",
        )
        for col, (button, text) in enumerate(
            zip((self.folder_button, self.file_button, self.demo_button), captions, strict=True)
        ):
            buttons.addWidget(button, 0, col)
            buttons.addWidget(_caption(text), 1, col)
            buttons.setColumnStretch(col, 1)

        self.homes_view = PlaceList(MAX_HOME_ROWS, "Agent homes on this computer")
        self.homes_view.setModel(self.homes_model)
        self.homes_view.activated.connect(self._on_homes_activated)
        self.homes_label = _heading("&Agent homes on this computer", self.homes_view)
        self.homes_hint = QLabel()
        self.homes_hint.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.homes_empty = QLabel()
        self.homes_empty.setWordWrap(True)
        self.homes_empty.setForegroundRole(QPalette.ColorRole.PlaceholderText)

        self.recent_view = PlaceList(MAX_RECENT_ROWS, "Recent places")
        self.recent_view.setModel(self.recent_model)
        self.recent_view.activated.connect(self._on_recent_activated)
        self.recent_label = _heading("Recent &places", self.recent_view)

        tip = _caption(
            "You can also drop a folder or a .jsonl file onto this window, "
            "or start memlens with a path: memlens ~/.openclaw"
        )

        column = QVBoxLayout()
        column.setSpacing(10)
        column.addWidget(title)
        column.addWidget(intro)
        column.addWidget(self.message)
        column.addSpacing(18)
        column.addLayout(buttons)
        column.addSpacing(22)
        homes_head = QHBoxLayout()
        homes_head.addWidget(self.homes_label)
        homes_head.addStretch(1)
        homes_head.addWidget(self.homes_hint)
        column.addLayout(homes_head)
        column.addWidget(self.homes_view)
        column.addWidget(self.homes_empty)
        column.addSpacing(14)
        column.addWidget(self.recent_label)
        column.addWidget(self.recent_view)
        column.addSpacing(18)
        column.addWidget(tip)

        content = QWidget()
        content.setObjectName("first-run-content")
        content.setMaximumWidth(CONTENT_WIDTH)
        content.setLayout(column)
        centred = QHBoxLayout()
        centred.addStretch(1)
        centred.addWidget(content, 100)
        centred.addStretch(1)
        page = QWidget()
        outer = QVBoxLayout(page)
        outer.setContentsMargins(32, 32, 32, 32)
        outer.addStretch(1)
        outer.addLayout(centred)
        outer.addStretch(2)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(page)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(scroll)

        self.setTabOrder(self.folder_button, self.file_button)
        self.setTabOrder(self.file_button, self.demo_button)
        self.setTabOrder(self.demo_button, self.homes_view)
        self.setTabOrder(self.homes_view, self.recent_view)
        self._refresh_homes()
        self.set_recent([])

    def _play_icon(self) -> QIcon:
        """A play triangle in the highlight colour (the style's own is black on dark themes)."""
        size = 44
        pixmap = QPixmap(size, size)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self.palette().color(QPalette.ColorRole.Highlight))
        painter.drawEllipse(2, 2, size - 4, size - 4)
        painter.setBrush(QColor("#ffffff"))
        painter.drawPolygon(QPolygonF([QPointF(17, 12), QPointF(17, 32), QPointF(33, 22)]))
        painter.end()
        return QIcon(pixmap)

    @override
    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "demo_button"):
            self.demo_button.setIcon(self._play_icon())

    def _button(self, text: str, icon: QIcon) -> QPushButton:
        # Two spaces: the style sets the icon flush against the text.
        button = QPushButton(icon, f"  {text}")
        button.setAccessibleName(text.replace("&", ""))
        button.setIconSize(QSize(22, 22))
        button.setMinimumHeight(54)
        button.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        font = button.font()
        font.setPointSizeF(font.pointSizeF() * 1.1)
        font.setBold(True)
        button.setFont(font)
        button.setAutoDefault(False)
        return button

    # -- what the app hands over -----------------------------------------------------------
    def set_scanning(self, scanning: bool) -> None:
        """Say that the app is looking for agent homes (until :meth:`set_homes`)."""
        self._scanning = scanning
        self._refresh_homes()

    def set_homes(self, homes: Sequence[HomeSummary]) -> None:
        """Show the agent homes found; ends scanning."""
        self._scanning = False
        self._homes = list(homes)
        self.homes_model.set_homes(self._homes)
        self._refresh_homes()

    def set_recent(self, places: Sequence[str]) -> None:
        """Show the recent places, most recent first; the section hides when there are none."""
        self.recent_model.set_places(list(places))
        shown = bool(places)
        self.recent_label.setVisible(shown)
        self.recent_view.setVisible(shown)
        self.recent_view.fit()
        if shown and not self.homes_model.openable_rows():
            self.recent_view.select_first([0])
        self._update_focus()

    def set_message(self, text: str, *, error: bool = False) -> None:
        """Say what is happening (loading a place, why it could not open); empty hides it."""
        self.message.setText(text)
        self.message.setVisible(bool(text))
        self.message.setStyleSheet("color: #d64545; font-weight: bold;" if error else "")

    @property
    def homes(self) -> list[HomeSummary]:
        """The summaries shown."""
        return list(self._homes)

    # -- state -------------------------------------------------------------------------
    def _refresh_homes(self) -> None:
        has_rows = self.homes_model.rowCount() > 0
        self.homes_view.setVisible(has_rows)
        self.homes_view.fit()
        self.homes_empty.setVisible(not has_rows)
        places = " or ".join(f"~/{rel}" for _, rel in KNOWN_HOMES)
        if self._scanning:
            self.homes_empty.setText(f"Looking in {places}…")
        else:
            self.homes_empty.setText(
                f"No agent home found in {places}. Open a folder, or start with the demo."
            )
        openable = self.homes_model.openable_rows()
        self.homes_hint.setText("Enter or double-click opens" if openable else "")
        self.homes_view.select_first(openable)
        self._update_focus()

    def _update_focus(self) -> None:
        """Focus lands on the first thing worth opening: a home, a recent place, or a button."""
        if self.homes_model.openable_rows():
            self.setFocusProxy(self.homes_view)
        elif self.recent_model.rowCount() > 0:
            self.setFocusProxy(self.recent_view)
        else:
            self.setFocusProxy(self.folder_button)

    # -- handlers ------------------------------------------------------------------------
    @Slot(QModelIndex)
    def _on_homes_activated(self, index: QModelIndex) -> None:
        if index.isValid() and index.flags() & Qt.ItemFlag.ItemIsEnabled:
            self.open_requested.emit(self.homes_model.path(index.row()))

    @Slot(QModelIndex)
    def _on_recent_activated(self, index: QModelIndex) -> None:
        if index.isValid():
            self.open_requested.emit(self.recent_model.path(index.row()))
