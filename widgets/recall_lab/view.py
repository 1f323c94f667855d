"""The Recall lab view: labelled queries under two configs, compared and drilled into.

The user opens a labels file (memlens's JSONL ``{query, relevant, session?}``, a BEIR
``qrels/*.tsv`` with its ``queries.jsonl``, or a BEIR folder), picks config A and
config B and runs: every query is searched under both in a worker (progress, Cancel
or Escape stops it; nothing is written). The result is a summary row per config,
a table per query (the rank of its first relevant segment under A and B, how many
relevant segments each finds in the top 10, which one wins) and the charts of
:mod:`widgets.recall_lab.charts`. Double-click (or Enter on) a query to see it in
the Recall view, with "why not?" for the first relevant segment A missed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSortFilterProxyModel, Qt, Signal, Slot
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.io.problems import FormatError
from core.recall.golden import GOLDEN_FILE
from core.recall.hybrid import SearchConfig
from core.recall.lab_compare import (
    VIEW,
    LabConfig,
    LabRun,
    QueryRow,
    compare,
    lab_configs,
    view_config,
)
from core.recall.qrels import load_any_labels
from core.recall.rankings import DEFAULT_RANKING, SEED
from widgets.common.jobs import default_runner
from widgets.common.record_model import Column, RecordRole, RecordTableModel, SortRole
from widgets.common.view_jobs import view_key
from widgets.recall_lab.charts import LabCharts

if TYPE_CHECKING:
    from core.recall.engine import RecallSettings
    from core.recall.evaluate import Label
    from core.recall.warm_store import WarmStore
    from widgets.common.jobs import Job, JobRunner

NOT_FOUND = 10**9
"""Sort value of a query whose relevant segments were not found."""


def _rank_text(rank: int | None) -> str:
    return "—" if rank is None else str(rank)


def query_columns(a: str, b: str) -> list[Column[QueryRow]]:
    """The per-query table's columns for configs *a* and *b*."""

    def rank(name: str) -> Column[QueryRow]:
        return Column(
            f"Rank ({name})",
            lambda r: _rank_text(r.first_rank(name)),
            lambda r: r.first_rank(name) or NOT_FOUND,
            align_right=True,
        )

    def found(name: str) -> Column[QueryRow]:
        return Column(
            f"Found@10 ({name})",
            lambda r: (
                f"{len(set(r.label.relevant) & set(r.reports[name].ranked[:10]))}"
                f" / {len(r.label.relevant)}"
            ),
            lambda r: r.reports[name].recall.get(10, 0.0),
            align_right=True,
        )

    return [
        Column("Line", lambda r: r.label.line, align_right=True, thousands=False),
        Column("Query", lambda r: r.label.query),
        Column("Session", lambda r: r.label.session or "every session"),
        rank(a),
        rank(b),
        found(a),
        found(b),
        Column("Winner", lambda r: r.winner(a, b) or "tie"),
    ]


SummaryRow = tuple[str, dict[str, float]]


def summary_columns(keys: list[str]) -> list[Column[SummaryRow]]:
    """The summary table's columns: the config, then one per measure in *keys*."""

    def measure(key: str) -> Column[SummaryRow]:
        return Column(key, lambda r: f"{r[1][key]:.3f}", lambda r: r[1][key], align_right=True)

    return [Column("Config", lambda r: r[0]), *(measure(k) for k in keys)]


class RecallLabView(QWidget):
    """Open labels, run two configs over them, compare, drill into one query.

    Signals
    -------
    drill_requested(str, object, str, object, str)
        ``(query, session or None, segment id, SearchConfig, ranking name)``: show this
        query in the Recall view with these settings and explain this segment.
    problems_found(list)
        The :class:`core.io.problems.Problem` list of a labels file just read.
    """

    drill_requested = Signal(str, object, str, object, str)
    problems_found = Signal(list)

    def __init__(self, parent: QWidget | None = None, runner: JobRunner | None = None) -> None:
        super().__init__(parent)
        self._runner = runner if runner is not None else default_runner()
        self._key = view_key(self, self._runner, "recall-lab")
        self._store: WarmStore | None = None
        self._folder: Path | None = None
        self._now_ms: int | None = None
        self._configs: list[LabConfig] = []
        self._labels: list[Label] = []
        self._job: Job | None = None
        self._a_name = self._b_name = ""  # the configs picked (kept across data directories)
        self.last_run: LabRun | None = None
        self._build()
        self._set_configs(lab_configs(SearchConfig()))
        self._update_buttons()
        self.status_label.setText("Open a data directory with a memory-context store.")

    # -- building ---------------------------------------------------------------------
    def _build(self) -> None:
        self.open_button = QToolButton()
        self.open_button.setText("&Open labels…")
        self.open_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.open_button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        self.open_button.setToolTip(
            "A labels file: memlens JSONL {query, relevant, session?} or a BEIR qrels .tsv"
        )
        self.open_button.clicked.connect(self._on_open_file)
        menu = QMenu(self.open_button)
        menu.addAction("Labels file (JSONL or qrels .tsv)…", self._on_open_file)
        menu.addAction("BEIR dataset folder…", self._on_open_folder)
        self.open_button.setMenu(menu)
        self.labels_label = QLabel("No labels")
        self.labels_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.a_combo, self.b_combo = QComboBox(), QComboBox()
        for combo in (self.a_combo, self.b_combo):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            combo.currentIndexChanged.connect(self._on_config_changed)
        self.evict_box = QCheckBox("&Evict as the agent does")
        self.evict_box.setToolTip(
            "Off: segments older than the agent's evictionDays are searched too, so that an"
            " old labelled set measures ranking. On: only what the agent keeps."
        )
        self.run_button = QPushButton("&Run")
        self.run_button.setToolTip("Search every labelled query under config A and config B")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the run (Esc)")
        self.cancel_button.clicked.connect(self.cancel)
        escape = QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.cancel)
        escape.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(200)
        self.progress.setVisible(False)
        self.status_label = QLabel()
        self.status_label.setWordWrap(True)
        self.summary_model: RecordTableModel[SummaryRow] = RecordTableModel([])
        self.summary_view = _table(self.summary_model)
        self.summary_view.setSortingEnabled(False)
        self.summary_view.horizontalHeader().setStretchLastSection(False)
        self.summary_view.setFixedHeight(self.summary_view.fontMetrics().height() * 5)
        self.query_model: RecordTableModel[QueryRow] = RecordTableModel([])
        self.query_proxy = QSortFilterProxyModel(self)
        self.query_proxy.setSortRole(SortRole)
        self.query_proxy.setSourceModel(self.query_model)
        self.query_view = _table(self.query_proxy)
        self.query_view.setAccessibleName("Labelled queries")
        self.query_view.activated.connect(self._on_query_activated)
        self.charts = LabCharts()
        top = QHBoxLayout()
        top.addWidget(self.open_button)
        top.addWidget(self.labels_label, 1)
        for text, combo in (("Config &A", self.a_combo), ("Config &B", self.b_combo)):
            label = QLabel(text)
            label.setBuddy(combo)
            top.addWidget(label)
            top.addWidget(combo)
        top.addWidget(self.evict_box)
        top.addWidget(self.run_button)
        top.addWidget(self.cancel_button)
        top.addWidget(self.progress)
        upper = QWidget()
        upper_layout = QVBoxLayout(upper)
        upper_layout.setContentsMargins(0, 0, 0, 0)
        upper_layout.addWidget(self.summary_view)
        upper_layout.addWidget(self.charts, 1)
        split = QSplitter(Qt.Orientation.Vertical, childrenCollapsible=False)
        split.addWidget(upper)
        split.addWidget(self.query_view)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(self.status_label)
        layout.addWidget(split, 1)

    # -- public API -------------------------------------------------------------------
    def attach(
        self,
        store: WarmStore | None,
        agent: SearchConfig,
        folder: str | os.PathLike[str] | None = None,
        *,
        now_ms: int | None = None,
    ) -> None:
        """Evaluate against *store*; *agent* is the data directory's own search settings.

        A ``labels.jsonl`` in *folder* (the data directory) is opened at once.
        """
        self.cancel()
        self._store, self._now_ms = store, now_ms
        self._folder = Path(folder) if folder is not None else None
        view = [c for c in self._configs if c.name == VIEW]
        self._set_configs([*lab_configs(agent), *view])
        self._show_run(None)
        if store is None:
            self.status_label.setText("This data directory has no memory-context store.")
        elif self._folder is not None and (self._folder / GOLDEN_FILE).is_file():
            self.load_labels(self._folder / GOLDEN_FILE)
        else:
            self.status_label.setText(f"{len(store):,} segments. Open a labels file to run.")
        self._update_buttons()

    def detach(self) -> None:
        """Forget the store and the run."""
        self.cancel()
        self._store = None
        self._show_run(None)
        self.status_label.setText("Open a data directory with a memory-context store.")
        self._update_buttons()

    def set_view_settings(self, settings: RecallSettings) -> None:
        """Offer the Recall view's current settings as the config "recall view"."""
        view = view_config(settings)
        configs = [c for c in self._configs if c.name != VIEW]
        if view not in self._configs:
            self._set_configs([*configs, view])

    def configs(self) -> list[LabConfig]:
        """The configs offered in A and B."""
        return list(self._configs)

    def select(self, a: str, b: str) -> None:
        """Pick config *a* as A and *b* as B (by name)."""
        names = [c.name for c in self._configs]
        self.a_combo.setCurrentIndex(names.index(a))
        self.b_combo.setCurrentIndex(names.index(b))

    def load_labels(self, path: str | os.PathLike[str]) -> bool:
        """Read the labels of *path*; False (and the reason shown) when it cannot be used."""
        try:
            labels, problems = load_any_labels(path)
        except FormatError as exc:
            self.status_label.setText(f"<b>Cannot use the labels:</b> {_escape(str(exc))}")
            self._update_buttons()
            return False
        self._labels = labels
        self.labels_label.setText(f"{Path(path).name}: {len(labels):,} labelled queries")
        self.labels_label.setToolTip(os.fspath(path))
        note = f" · {len(problems)} lines skipped (see Problems)" if problems else ""
        self.status_label.setText(f"{len(labels):,} labelled queries read{note}. Press Run.")
        self.problems_found.emit(list(problems))
        self._show_run(None)
        self._update_buttons()
        return True

    def labels(self) -> list[Label]:
        """The labels read last."""
        return list(self._labels)

    def is_busy(self) -> bool:
        """True while a run goes on."""
        return self._job is not None and self._job.running

    @Slot()
    def run(self) -> None:
        """Run every label under config A and config B (in the background)."""
        store = self._store
        if store is None or not self._labels or self.is_busy():
            return
        configs = self._chosen()
        labels, now_ms, evict = list(self._labels), self._now_ms, self.evict_box.isChecked()

        def job(*, progress: Any, cancelled: Any) -> LabRun:
            return compare(
                store, labels, configs, now_ms=now_ms, evict=evict,
                progress=progress, cancelled=cancelled,
            )  # fmt: skip

        self.progress.setRange(0, len(labels))
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self.status_label.setText(f"Running {len(labels):,} queries…")
        self._job = self._runner.submit(
            "Recall lab",
            job,
            key=self._key,
            done=self._on_done,
            failed=self._on_failed,
            cancelled=self._on_cancelled,
            progress=self._on_progress,
        )
        self._update_buttons()

    @Slot()
    def cancel(self) -> None:
        """Stop a run (what it found so far is dropped; nothing was written)."""
        if self._job is not None and self._job.running:
            self._job.cancel()

    # -- job callbacks ----------------------------------------------------------------
    def _on_progress(self, done: int, total: int, label: str) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat(f"{label}")

    def _on_done(self, run: LabRun) -> None:
        self._end()
        self._show_run(run)

    def _on_failed(self, message: str) -> None:
        self._end()
        self.status_label.setText(f"<b>The run failed:</b> {_escape(message)}")

    def _on_cancelled(self) -> None:
        self._end()
        self.status_label.setText("Cancelled. Nothing was written.")

    def _end(self) -> None:
        self._job = None
        self.progress.setVisible(False)
        self._update_buttons()

    # -- showing ----------------------------------------------------------------------
    def _chosen(self) -> list[LabConfig]:
        """Config A, config B and the rank-bm25 reference (each once)."""
        a = self._configs[max(0, self.a_combo.currentIndex())]
        b = self._configs[max(0, self.b_combo.currentIndex())]
        ref = next(c for c in self._configs if c.ranking is None)
        return list({c.name: c for c in (a, b, ref)}.values())

    def _show_run(self, run: LabRun | None) -> None:
        self.last_run = run
        if run is None:
            self.summary_model.set_records([])
            self.query_model.set_records([])
            self.charts.clear()
            return
        names = [c.name for c in run.configs]
        a, b = names[0], names[1] if len(names) > 2 else names[0]
        self.summary_model = RecordTableModel(summary_columns(list(run.summary(a))), self)
        self.summary_model.set_records([(n, run.summary(n)) for n in dict.fromkeys(names)])
        self.summary_view.setModel(self.summary_model)
        rows = self.summary_model.rowCount()
        header = self.summary_view.horizontalHeader().sizeHint().height()
        height = header + rows * self.summary_view.verticalHeader().defaultSectionSize() + 4
        self.summary_view.setFixedHeight(height)
        self.query_model = RecordTableModel(query_columns(a, b), self)
        self.query_model.set_records(run.rows)
        self.query_proxy.setSourceModel(self.query_model)
        self.query_view.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.summary_view.resizeColumnsToContents()
        self.query_view.resizeColumnsToContents()
        self.query_view.setColumnWidth(1, min(self.query_view.columnWidth(1), 420))
        extra = {n: run.curve(n) for n in names if n not in (a, b)}
        self.charts.show_run(run, a, b, extra)
        won_a, won_b, ties = run.wins(a, b)
        skipped = ""
        if run.skipped:
            reasons = sorted({reason for _, reason in run.skipped})
            skipped = f" · {len(run.skipped)} skipped ({'; '.join(reasons)})"
        if run.kept:
            skipped += f" · {run.kept:,} segments the agent evicts searched too"
        self.status_label.setText(
            f"{len(run.rows):,} queries evaluated{skipped}. A = {a}, B = {b}: A wins {won_a},"
            f" B wins {won_b}, {ties} ties. Double-click a query to see it in Recall."
        )

    def _set_configs(self, configs: list[LabConfig]) -> None:
        self._configs = configs
        names = [c.name for c in configs]
        a, b = self._a_name or DEFAULT_RANKING, self._b_name or SEED.name
        picks = (names.index(n) if n in names else 0 for n in (a, b))
        for combo, pick in zip((self.a_combo, self.b_combo), picks, strict=True):
            combo.blockSignals(True)
            combo.clear()
            for c in configs:
                combo.addItem(c.name)
                combo.setItemData(combo.count() - 1, c.description, Qt.ItemDataRole.ToolTipRole)
            combo.setCurrentIndex(pick)
            combo.blockSignals(False)

    def _update_buttons(self) -> None:
        busy = self.is_busy()
        self.run_button.setEnabled(self._store is not None and bool(self._labels) and not busy)
        self.cancel_button.setEnabled(busy)
        self.open_button.setEnabled(not busy)

    # -- handlers ---------------------------------------------------------------------
    @Slot()
    def _on_open_file(self) -> None:
        start = os.fspath(self._folder) if self._folder is not None else ""
        name, _ = QFileDialog.getOpenFileName(
            self, "Open labels", start, "Labels (*.jsonl *.tsv);;All files (*)"
        )
        if name:
            self.load_labels(name)

    @Slot()
    def _on_open_folder(self) -> None:
        start = os.fspath(self._folder) if self._folder is not None else ""
        name = QFileDialog.getExistingDirectory(self, "Open a BEIR dataset folder", start)
        if name:
            self.load_labels(name)

    @Slot()
    def _on_config_changed(self) -> None:
        self._a_name, self._b_name = self.a_combo.currentText(), self.b_combo.currentText()
        if self.last_run is not None:
            self.status_label.setText("The configs changed: press Run to compare them.")

    @Slot()
    def _on_query_activated(self) -> None:
        index = self.query_view.currentIndex()
        run = self.last_run
        if not index.isValid() or run is None:
            return
        row = index.data(RecordRole)
        if not isinstance(row, QueryRow):
            return
        config = run.configs[0]
        report = row.reports[config.name]
        segment = report.missing[0] if report.missing else row.label.relevant[0]
        ranking = config.ranking.name if config.ranking is not None else SEED.name
        self.drill_requested.emit(
            row.label.query, row.label.session, segment, config.search, ranking
        )


def _table(model: Any) -> QTableView:
    view = QTableView()
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setSortingEnabled(True)
    view.setAlternatingRowColors(True)
    view.setWordWrap(False)
    view.verticalHeader().hide()
    view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 8)
    view.horizontalHeader().setStretchLastSection(True)
    return view


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
