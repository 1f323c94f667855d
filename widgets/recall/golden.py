"""Golden queries in the Recall view: mark "should be found", see a regression badge.

"Should be found" appends the query in the box and the segment "why not?" explains
to ``labels.jsonl`` in the store's folder (:mod:`core.recall.golden`). After every
recall under new settings (a knob, the ranking, the store growing) the golden
queries are checked again in the job runner; the badge says how many are found and
turns into a warning naming the queries that the new settings lost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import SignalInstance, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from core.io.problems import FormatError
from core.recall.golden import GoldenCheck, add_golden, check_golden, golden_path, lost, read_golden
from widgets.common.view_jobs import view_key

if TYPE_CHECKING:
    from core.recall.engine import RecallOutcome, RecallSettings
    from core.recall.evaluate import Label
    from core.recall.warm_store import WarmStore
    from widgets.common.jobs import JobRunner
    from widgets.recall.why_not import WhyNotPanel

LOST_STYLE = "color: #c8453a; font-weight: bold;"


class Preview(Protocol):
    """What the bar reads of its recall preview (:class:`widgets.recall.preview.RecallPreview`)."""

    @property
    def preview_changed(self) -> SignalInstance:
        """Emitted with each recall's outcome."""

    @property
    def why_box(self) -> WhyNotPanel:
        """The "why not?" pane: the segment explained."""

    def query(self) -> str:
        """The query in the box."""

    def settings(self) -> RecallSettings:
        """The settings recall runs with."""

    def preview(self) -> RecallOutcome | None:
        """The last recall's outcome."""


class GoldenBar(QWidget):
    """The "Should be found" button and the golden-queries badge of a recall preview."""

    def __init__(self, preview: Preview, runner: JobRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._preview = preview
        self._runner = runner
        self._key = view_key(self, runner, "golden")
        self._store: WarmStore | None = None
        self._labels: list[Label] = []
        self._checked: tuple[Any, ...] | None = None  # what the last check was run for
        self.checks: list[GoldenCheck] = []
        self.lost: list[Label] = []
        self.mark_button = QPushButton("Should be &found")
        self.mark_button.setToolTip(
            "Add the query and the segment in “why not?” to labels.jsonl beside the store:"
            " a golden query, checked again on every settings change"
        )
        self.mark_button.clicked.connect(self.mark)
        self.badge = QLabel()
        self.badge.setVisible(False)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.badge)
        lay.addWidget(self.mark_button)
        preview.preview_changed.connect(self._on_recalled)
        preview.why_box.edit.textChanged.connect(self._update_button)
        self._update_button()

    def attach(self, store: WarmStore | None) -> None:
        """Check the golden queries of *store*'s folder (None: none)."""
        self._runner.cancel(self._key)
        self._store, self._checked = store, None
        self.checks, self.lost = [], []
        self._read()
        self._update_button()

    def labels(self) -> list[Label]:
        """The golden queries read."""
        return list(self._labels)

    def _read(self) -> None:
        self._labels = []
        if self._store is not None:
            try:
                self._labels = read_golden(golden_path(self._store))[0]
            except FormatError as exc:
                self._say(f"Golden queries unreadable: {exc}", LOST_STYLE)
                return
        self._show()

    def _segment(self) -> str | None:
        sid = self._preview.why_box.edit.text().strip()
        store = self._store
        return sid if store is not None and sid and store.get(sid) is not None else None

    @Slot()
    def mark(self) -> bool:
        """Append "the explained segment should be found for this query"; False if not."""
        store, sid, outcome = self._store, self._segment(), self._preview.preview()
        query = self._preview.query().strip()
        if store is None or sid is None or not query or outcome is None:
            return False
        search = outcome.search
        cross = search is None or search.config.cross_session
        session = None if cross or search is None else search.session_id
        path = golden_path(store)
        try:
            add_golden(path, query, sid, session)
        except (OSError, ValueError) as exc:
            self._say(f"Not added: {path.name}: {exc}", LOST_STYLE)
            return False
        self._read()
        self._checked = None
        self._on_recalled(outcome)
        return True

    @Slot(object)
    def _on_recalled(self, outcome: RecallOutcome | None) -> None:
        store = self._store
        if store is None or not self._labels or outcome is None or outcome.search is None:
            return
        settings, now_ms = self._preview.settings(), outcome.search.now_ms
        request = (settings, len(store), len(self._labels))
        if request == self._checked:
            return
        self._checked = request
        labels = list(self._labels)

        def job(**_: object) -> list[GoldenCheck]:
            return check_golden(store, labels, settings, now_ms=now_ms)

        self._runner.submit("golden queries", job, key=self._key, done=self._on_checked)

    def _on_checked(self, checks: list[GoldenCheck]) -> None:
        same = [c.label for c in self.checks] == [c.label for c in checks]
        self.lost = lost(self.checks, checks) if same else []
        self.checks = checks
        self._show()

    def _show(self) -> None:
        n = len(self._labels)
        if not n:
            self.badge.setVisible(False)
            return
        found = sum(c.found for c in self.checks)
        tips = [
            f"{'✓' if c.found else '✗'} {c.label.query}"
            + (f" (hit #{c.rank})" if c.rank else " (not a hit)")
            for c in self.checks
        ]
        if self.lost:
            names = "; ".join(label.query for label in self.lost[:3])
            self._say(f"⚠ {len(self.lost)} golden lost: {names}", LOST_STYLE)
        elif self.checks:
            self._say(f"Golden {found}/{n} found", "")
        else:
            self._say(f"Golden: {n} queries", "")
        self.badge.setToolTip("\n".join(tips) or f"{n} golden queries in labels.jsonl")

    def _say(self, text: str, style: str) -> None:
        self.badge.setText(text)
        self.badge.setStyleSheet(style)
        self.badge.setVisible(True)

    @Slot()
    def _update_button(self) -> None:
        ok = self._segment() is not None
        self.mark_button.setEnabled(ok)
