"""The main window: sessions of the open data directory, problems, load state.

The full inspector (timeline, gauges, recall, trim) arrives with its own views;
this window already loads any data directory in a worker, with progress and
cancel, and lists what it found.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSortFilterProxyModel, Qt, QThreadPool, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QLineEdit,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.workers import LoadWorker
from widgets.record_model import Column, RecordTableModel, SortRole

if TYPE_CHECKING:
    from core.dataset import DataSet, SessionSummary
    from core.problems import Problem

SESSION_COLUMNS: list[Column[SessionSummary]] = [
    Column("Agent", lambda s: s.agent),
    Column("Session", lambda s: s.name or s.id),
    Column("Messages", lambda s: s.messages, align_right=True),
    Column("Tokens (est.)", lambda s: s.tokens_estimated, align_right=True),
    Column(
        "Tokens (measured)",
        lambda s: s.tokens_measured,
        lambda s: s.tokens_measured or -1,
        align_right=True,
    ),
    Column("Compactions", lambda s: s.compactions, align_right=True),
    Column(
        "Modified",
        lambda s: datetime.fromtimestamp(s.modified, UTC).strftime("%Y-%m-%d %H:%M"),
        lambda s: s.modified,
    ),
    Column("Size", lambda s: s.size, align_right=True),
]
PROBLEM_COLUMNS: list[Column[Problem]] = [
    Column("Severity", lambda p: p.severity),
    Column("File", lambda p: Path(p.file).name, lambda p: p.file),
    Column("Line", lambda p: p.line, align_right=True, thousands=False),
    Column("Message", lambda p: p.message),
]


def _table(model: RecordTableModel[object]) -> tuple[QTableView, QSortFilterProxyModel]:
    proxy = QSortFilterProxyModel()
    proxy.setSourceModel(model)
    proxy.setSortRole(SortRole)
    proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
    proxy.setFilterKeyColumn(-1)
    view = QTableView()
    view.setModel(proxy)
    view.setSortingEnabled(True)
    view.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
    view.horizontalHeader().setStretchLastSection(True)
    view.verticalHeader().hide()
    return view, proxy


class MainWindow(QMainWindow):
    """Top-level window of memlens."""

    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle("memlens")
        self.resize(1200, 760)
        self.data: DataSet | None = None
        self._worker: LoadWorker | None = None
        self.sessions = RecordTableModel(SESSION_COLUMNS, self)
        self.problems = RecordTableModel(PROBLEM_COLUMNS, self)
        self.session_view, self.session_proxy = _table(self.sessions)  # type: ignore[arg-type]
        self.problem_view, _ = _table(self.problems)  # type: ignore[arg-type]
        self.filter_box = QLineEdit(placeholderText="Filter sessions (Ctrl+F)")
        self.filter_box.textChanged.connect(self.session_proxy.setFilterFixedString)
        top = QWidget()
        layout = QVBoxLayout(top)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.filter_box)
        layout.addWidget(self.session_view)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(self.problem_view)
        split.setSizes([560, 160])
        self.setCentralWidget(split)
        self.progress = QProgressBar(maximumWidth=220, visible=False)
        self.cancel_button = QPushButton("Cancel", visible=False)
        self.cancel_button.clicked.connect(self.cancel_load)
        self.state = QLabel("No data directory open")
        self.statusBar().addWidget(self.state, 1)
        self.statusBar().addPermanentWidget(self.progress)
        self.statusBar().addPermanentWidget(self.cancel_button)
        self._build_menu()

    def _build_menu(self) -> None:
        menu = self.menuBar().addMenu("&File")
        for text, keys, slot in (
            ("Open &Folder…", QKeySequence.StandardKey.Open, self._choose_folder),
            ("Open &Transcript…", QKeySequence("Ctrl+Shift+O"), self._choose_file),
            ("&Quit", QKeySequence.StandardKey.Quit, self.close),
        ):
            action = QAction(text, self)
            action.setShortcut(keys)
            action.triggered.connect(slot)
            menu.addAction(action)
        find = QAction("Find", self, shortcut=QKeySequence.StandardKey.Find)
        find.triggered.connect(self.filter_box.setFocus)
        self.addAction(find)

    @Slot()
    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open data directory")
        if folder:
            self.open_path(folder)

    @Slot()
    def _choose_file(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "Open transcript", "", "Transcripts (*.jsonl)")
        if name:
            self.open_path(name)

    def open_path(self, path: str) -> None:
        """Load *path* in a worker; the window stays responsive."""
        self.cancel_load()
        worker = LoadWorker(path)
        worker.signals.progressed.connect(self._on_progressed)
        worker.signals.finished.connect(self._on_loaded)
        worker.signals.failed.connect(self._on_failed)
        worker.signals.cancelled.connect(self._on_cancelled)
        self._worker = worker
        self.progress.setVisible(True)
        self.cancel_button.setVisible(True)
        self.state.setText(f"Loading {path}…")
        QThreadPool.globalInstance().start(worker)

    @Slot()
    def cancel_load(self) -> None:
        """Stop the load in progress, if any."""
        if self._worker is not None:
            self._worker.cancel()

    def _done(self) -> None:
        self._worker = None
        self.progress.setVisible(False)
        self.cancel_button.setVisible(False)

    @Slot(int, int, str)
    def _on_progressed(self, done: int, total: int, label: str) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat(f"{label} %p%")

    @Slot(object)
    def _on_loaded(self, data: DataSet) -> None:
        self._done()
        self.data = data
        self.sessions.set_records(data.summaries)
        self.problems.set_records(data.problems)
        self.session_view.resizeColumnsToContents()
        self.problem_view.resizeColumnsToContents()
        facts = data.knowledge.counts()["active"] if data.knowledge else 0
        segs = len(data.segments.segments) if data.segments else 0
        self.state.setText(
            f"{data.discovery.path} — {len(data.summaries)} sessions, {segs:,} segments, "
            f"{facts} active facts, {len(data.problems)} problems"
        )
        self.setWindowTitle(f"memlens — {data.discovery.path}")

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self._done()
        self.state.setText(f"Could not open: {message}")

    @Slot()
    def _on_cancelled(self) -> None:
        self._done()
        self.state.setText("Loading cancelled")
