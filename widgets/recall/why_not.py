"""The "Why not?" panel of the recall preview: pick a segment, read the explanation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QStringListModel, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QCompleter,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from core.io.text import one_line
from widgets.common.jobs import default_runner
from widgets.common.text import esc
from widgets.common.view_jobs import view_key

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from core.store.segments import Segment
    from widgets.common.jobs import JobRunner

HINT = (
    "<span style='color:gray'>Pick a segment (type its id or words of its text, or click "
    "a detail hit) to see why it is or is not recalled.</span>"
)


def completer_rows(segments: Sequence[Segment]) -> list[str]:
    """The completer's rows: id, role and the start of the text of each segment."""
    return [f"{s.id}  {s.role}: {one_line(s.content, 100)}" for s in segments]


class WhyNotPanel(QGroupBox):
    """A segment picker (completer over id, role and text) and the explanation.

    ``segment_picked(str)`` carries the id the user chose; the owner explains it and
    calls :meth:`show_html`.
    """

    segment_picked = Signal(str)

    def __init__(self, parent: QWidget | None = None, runner: JobRunner | None = None) -> None:
        super().__init__("Why not?", parent)
        self._runner = runner if runner is not None else default_runner()
        self._rows_key = view_key(self, self._runner, "why-not-rows")
        self.edit = QLineEdit()
        self.edit.setPlaceholderText("Segment id, or words of its text…")
        self.edit.setClearButtonEnabled(True)
        self.edit.returnPressed.connect(self._on_edit_return_pressed)
        self.edit.textEdited.connect(self._on_edit_text_edited)
        self._list = QStringListModel(self)
        self._pending: list[Segment] | None = None
        # Not QLineEdit.setCompleter: the popup matches words anywhere in the row,
        # and choosing a row puts only its id in the box.
        self.completer = QCompleter(self._list, self)
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.completer.setMaxVisibleItems(12)
        self.completer.setWidget(self.edit)
        # the text overload of activated (PySide6's stubs have no overloaded signals)
        self.completer.activated[str].connect(self._on_completer_activated)  # type: ignore[index]
        explain_button = QPushButton("Explain")
        explain_button.clicked.connect(self._on_edit_return_pressed)
        self.label = QLabel(HINT)
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Expanding)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(self.label)
        row = QHBoxLayout()
        row.addWidget(self.edit, 1)
        row.addWidget(explain_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addLayout(row)
        lay.addWidget(scroll, 1)

    def set_segments(self, segments: Iterable[Segment]) -> None:
        """Offer *segments* in the completer (id, role and the start of the text).

        The rows are made in the job runner (~70 ms for a 20,000-segment store, which
        the window would otherwise freeze for while memory opens); if the user types
        before they arrive, they are made at once.
        """
        pending = self._pending = list(segments)
        if self._list.rowCount():
            self._list.setStringList([])
        if not pending:
            self._runner.cancel(self._rows_key)
            return
        self._runner.submit(
            "why-not rows",
            lambda **_job: completer_rows(pending),
            key=self._rows_key,
            done=self._on_rows_made,
        )

    def entries(self) -> list[str]:
        """The completer's rows."""
        self._fill()
        return self._list.stringList()

    def _fill(self) -> None:
        if self._pending is not None:
            self._runner.cancel(self._rows_key)  # needed now: made here, the job's dropped
            self._on_rows_made(completer_rows(self._pending))

    def _on_rows_made(self, rows: list[str]) -> None:
        self._pending = None
        self._list.setStringList(rows)

    def set_segment_id(self, segment_id: str) -> None:
        """Show *segment_id* in the box (no signal)."""
        if self.edit.text() != segment_id:
            self.edit.setText(segment_id)

    def show_html(self, text: str) -> None:
        """Show an explanation."""
        self.label.setText(text)

    def show_plain(self, text: str) -> None:
        """Show a one-paragraph note."""
        self.label.setText(f"<p>{esc(text)}</p>")

    def clear(self) -> None:
        """Back to the hint."""
        self.edit.clear()
        self.label.setText(HINT)

    @Slot(str)
    def _on_edit_text_edited(self, text: str) -> None:
        if len(text.strip()) >= 2:
            self._fill()
            self.completer.setCompletionPrefix(text.strip())
            self.completer.complete()

    @Slot(str)
    def _on_completer_activated(self, text: str) -> None:
        words = text.split()
        if words:
            self.edit.setText(words[0])
            self.segment_picked.emit(words[0])

    @Slot()
    def _on_edit_return_pressed(self) -> None:
        words = self.edit.text().split()
        if words:
            self.segment_picked.emit(words[0])
