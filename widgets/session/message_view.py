"""One transcript entry rendered with its blocks, or as raw JSON.

Text, thinking (folded until clicked), tool calls with their paired results,
images as placeholders with mime type and size, pi's token estimate on every block.
Compaction entries show their summary and figures; other entries show their fields
and raw JSON. The HTML comes from :mod:`widgets.session.message_html`, which escapes all content.

A compaction's summary is shown line by line: :meth:`MessageView.highlight_summary_line`
marks one and scrolls to it (a fact's provenance leads there), and ``facts_action``
(:data:`FACTS_SHORTCUT`, also in the context menu) asks for the facts that came from
the messages the compaction summarised (:attr:`MessageView.facts_requested`), the
line under the pointer or the highlighted one ranking its facts first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QPoint, Qt, QUrl, Signal, Slot
from PySide6.QtGui import QAction, QFontDatabase, QKeySequence
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QStackedWidget,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from widgets.common.text import esc
from widgets.session.message_html import SUMMARY_ANCHOR, EntryRenderer, Theme, pretty_json

if TYPE_CHECKING:
    from PySide6.QtGui import QTextBlock

    from core.transcript.model import Entry, Session, ToolPair

RAW_SHORTCUT = "Ctrl+Shift+J"
FACTS_SHORTCUT = "Ctrl+Shift+F"


class MessageView(QWidget):
    """A transcript entry rendered block by block, with a raw JSON toggle.

    Links inside the view (a paired result, the call a result answers, the first
    kept entry of a compaction) emit :attr:`entry_activated` with the entry id.
    ``raw_action`` (checkable, :data:`RAW_SHORTCUT`) switches to the raw JSON; the
    app may also put it in a menu.
    """

    entry_activated = Signal(str)
    """An entry was picked through a link in the rendered message."""
    facts_requested = Signal(str, int)
    """The facts from a compaction's summarised messages were asked for: the
    compaction's entry id and a summary line (from 1; 0 for the whole summary)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._session: Session | None = None
        self._pairs: dict[str, ToolPair] = {}
        self._pairs_of: Session | None = None
        self._entry: Entry | None = None
        self._expanded: set[str] = set()
        self._links: list[str] = []
        self._folds: list[str] = []
        self._highlight: int | None = None
        self._pointed = 0  # the summary line the context menu was opened on

        self.header = QLabel()
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.header.setWordWrap(True)
        self.raw_action = QAction("Raw JSON", self)
        self.raw_action.setCheckable(True)
        self.raw_action.setShortcut(QKeySequence(RAW_SHORTCUT))
        self.raw_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.raw_action.setToolTip(f"Show the entry as raw JSON ({RAW_SHORTCUT})")
        self.raw_action.toggled.connect(self._on_raw_toggled)
        self.addAction(self.raw_action)
        raw_button = QToolButton()
        raw_button.setDefaultAction(self.raw_action)
        raw_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.facts_action = QAction("Facts From These Messages…", self)
        self.facts_action.setShortcut(QKeySequence(FACTS_SHORTCUT))
        self.facts_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.facts_action.setToolTip(
            "List the knowledge facts that came from the messages this compaction summarised, "
            f"those the chosen summary line keeps first ({FACTS_SHORTCUT})"
        )
        self.facts_action.setEnabled(False)
        self.facts_action.triggered.connect(self._on_facts_action_triggered)
        self.addAction(self.facts_action)

        self.browser = QTextBrowser()
        self.browser.setOpenLinks(False)
        self.browser.anchorClicked.connect(self._on_anchor_clicked)
        self.browser.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.browser.customContextMenuRequested.connect(self._on_context_menu_requested)
        self.raw_edit = QPlainTextEdit()
        self.raw_edit.setReadOnly(True)
        self.raw_edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.stack = QStackedWidget()
        self.stack.addWidget(self.browser)
        self.stack.addWidget(self.raw_edit)

        top = QHBoxLayout()
        top.setContentsMargins(6, 4, 6, 2)
        top.addWidget(self.header, 1)
        top.addWidget(raw_button, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.stack, 1)
        self.clear()

    @property
    def entry_id(self) -> str | None:
        """The id of the entry shown, or None."""
        return self._entry.id if self._entry is not None else None

    def show_entry(self, session: Session, entry_id: str) -> None:
        """Show the entry *entry_id* (an id or ``#N``) of *session*.

        An unknown id clears the view and says so.
        """
        try:
            entry = session.entry(entry_id)
        except KeyError as exc:
            self.clear()
            self._set_note(str(exc.args[0]) if exc.args else str(exc))
            return
        if entry is not self._entry:
            self._expanded = set()
            self._highlight = None
        self._session = session
        self._entry = entry
        self.facts_action.setEnabled(entry.type == "compaction")
        self._render()
        self.browser.verticalScrollBar().setValue(0)

    def highlight_summary_line(self, line: int) -> bool:
        """Mark line *line* (from 1) of the compaction summary shown and scroll to it.

        False (nothing marked) when no compaction is shown or it has no such line.
        """
        entry = self._entry
        if entry is None or entry.type != "compaction":
            return False
        count = len(str(entry.raw.get("summary") or "").splitlines())
        if not 0 < line <= count:
            return False
        self._highlight = line
        self._render()
        if self.is_raw():
            self.raw_action.setChecked(False)
        self.browser.scrollToAnchor(f"{SUMMARY_ANCHOR}{line}")
        bar = self.browser.verticalScrollBar()  # a few lines above it stay in sight
        bar.setValue(max(0, bar.value() - 3 * self.browser.fontMetrics().lineSpacing()))
        return True

    def highlighted_line(self) -> int | None:
        """The summary line marked by :meth:`highlight_summary_line`, if any."""
        return self._highlight

    def summary_line_at(self, pos: QPoint) -> int:
        """The summary line (from 1) at *pos* of the browser's viewport; 0 if none."""
        return _summary_line(self.browser.cursorForPosition(pos).block())

    def request_facts(self, line: int = 0) -> bool:
        """Ask for the facts of the compaction shown (:attr:`facts_requested`); False if none."""
        entry = self._entry
        if entry is None or entry.type != "compaction":
            return False
        self.facts_requested.emit(entry.id, line)
        return True

    def clear(self) -> None:
        """Show nothing."""
        self._session = None
        self._entry = None
        self._highlight = None
        self.facts_action.setEnabled(False)
        self._pairs, self._pairs_of = {}, None
        self._expanded = set()
        self._links, self._folds = [], []
        self.header.setText("")
        self.raw_edit.setPlainText("")
        self._set_note("No entry selected.")

    def is_raw(self) -> bool:
        """True while the raw JSON is shown."""
        return self.raw_action.isChecked()

    def toggle_fold(self, key: str) -> None:
        """Expand or fold a block.

        Keys: ``thinking-<n>`` (a thinking block), ``text-<n>`` (a long text or result
        block), ``args-<call id>.<name>`` and ``result-<call id>-<n>`` (a tool call's
        arguments and results), ``summary``, ``raw``; the rendered links use them.
        """
        self._expanded.symmetric_difference_update({key})
        bar = self.browser.verticalScrollBar()
        pos = bar.value()
        self._render()
        bar.setValue(pos)

    def plain_text(self) -> str:
        """What the rendered view shows, as plain text."""
        return self.browser.toPlainText()

    def _set_note(self, text: str) -> None:
        muted = Theme.from_palette(self.palette()).muted
        self.browser.setHtml(f'<p style="color:{muted}">{esc(text)}</p>')

    def _render(self) -> None:
        entry, session = self._entry, self._session
        if entry is None or session is None:
            return
        if self._pairs_of is not session:
            # Pairing walks the whole session: once per session, not per entry shown.
            self._pairs, self._pairs_of = session.tool_pairs(), session
        theme = Theme.from_palette(self.palette())
        rendered = EntryRenderer(
            session, self._pairs, theme, self._expanded, highlight_line=self._highlight
        ).render(entry)
        self._links, self._folds = rendered.links, rendered.folds
        self.header.setText(rendered.header)
        self.browser.document().setDefaultStyleSheet(
            f"a {{ color: {theme.colour('user')}; text-decoration: none; }}"
        )
        self.browser.setHtml(rendered.body)
        if self.is_raw():
            self._fill_raw()

    def _fill_raw(self) -> None:
        self.raw_edit.setPlainText(pretty_json(self._entry.raw) if self._entry else "")

    @Slot(bool)
    def _on_raw_toggled(self, checked: bool) -> None:
        if checked:
            self._fill_raw()
        self.stack.setCurrentWidget(self.raw_edit if checked else self.browser)

    @Slot(QUrl)
    def _on_anchor_clicked(self, url: QUrl) -> None:
        scheme, _, rest = url.toString().partition(":")
        n = int(rest) if rest.isdigit() else -1
        if scheme == "fold" and 0 <= n < len(self._folds):
            self.toggle_fold(self._folds[n])
        elif scheme == "entry" and 0 <= n < len(self._links):
            self.entry_activated.emit(self._links[n])

    @Slot(QPoint)
    def _on_context_menu_requested(self, pos: QPoint) -> None:
        menu = self.browser.createStandardContextMenu(pos)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        if self.facts_action.isEnabled():
            self._pointed = self.summary_line_at(pos)
            menu.addSeparator()
            if self._pointed:
                line = menu.addAction(f"Facts Kept by Summary Line {self._pointed}…")
                line.triggered.connect(lambda: self.request_facts(self._pointed))
            menu.addAction(self.facts_action)
        menu.popup(self.browser.viewport().mapToGlobal(pos))

    @Slot()
    def _on_facts_action_triggered(self) -> None:
        # the keyboard's route: the line the text cursor is on, else the highlighted one
        line = _summary_line(self.browser.textCursor().block()) or self.highlighted_line() or 0
        self.request_facts(line)

    @override
    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self._entry is not None:
            self._render()


def _summary_line(block: QTextBlock) -> int:
    """The summary line a block of the rendered document shows (0: not a summary line)."""
    if not block.isValid():
        return 0
    it = block.begin()
    if it.atEnd():
        return 0
    for name in it.fragment().charFormat().anchorNames():
        if name.startswith(SUMMARY_ANCHOR) and name[len(SUMMARY_ANCHOR) :].isdigit():
            return int(name[len(SUMMARY_ANCHOR) :])
    return 0
