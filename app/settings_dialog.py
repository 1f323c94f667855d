"""The settings dialog: LLM providers, embedder, recall and trim, safety, openclaw.json.

memlens's own settings are edited here and saved through
:func:`app.app_config.save_app_config`; the ``openclaw.json`` page only shows the
agent's memoryContext and compaction sections with their validation problems
(memlens never writes that file). No API key is ever shown or stored in the
settings file: providers keep the name of the environment variable that holds it
(or of its OS keychain entry), and a key-shaped value in any field blocks OK.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from app.app_config import (
    AppConfig,
    RecallDefaults,
    SafetyDefaults,
    TrimDefaults,
    apply_safety,
    load_app_config,
    prepare_settings,
    save_app_config,
)
from app.settings import secrets_warning
from app.settings_providers import ProvidersPage
from core.embed import EMBEDDERS
from core.io.problems import FormatError
from core.openclaw.config import load_openclaw_config
from widgets.openclaw.config_view import OpenClawConfigView

if TYPE_CHECKING:
    from collections.abc import Mapping

    from app.settings import AppSettings
    from core.openclaw.config import OpenClawConfig

EMBEDDER_TIPS = {
    "hash": "The agent's own embedder: fast, no model, no download",
    "transformer": "all-MiniLM-L6-v2 (needs the optional extra memlens[transformer])",
}


def transformer_available() -> bool:
    """Whether the optional transformer embedder's packages are installed."""
    return all(importlib.util.find_spec(m) is not None for m in ("tokenizers", "safetensors"))


def _spin(lo: float, hi: float, step: float, decimals: int, tip: str) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(lo, hi)
    box.setSingleStep(step)
    box.setDecimals(decimals)
    box.setToolTip(tip)
    return box


def _int_spin(lo: int, hi: int, step: int, tip: str, suffix: str = "") -> QSpinBox:
    box = QSpinBox()
    box.setRange(lo, hi)
    box.setSingleStep(step)
    box.setGroupSeparatorShown(True)
    box.setSuffix(suffix)
    box.setToolTip(tip)
    return box


class SearchPage(QWidget):
    """Embedder, recall defaults and trim defaults."""

    def __init__(self) -> None:
        super().__init__()
        self.embedder_box = QComboBox()
        for name in EMBEDDERS:
            self.embedder_box.addItem(name, name)
            self.embedder_box.setItemData(
                self.embedder_box.count() - 1,
                EMBEDDER_TIPS.get(name, ""),
                Qt.ItemDataRole.ToolTipRole,
            )
        self.embedder_box.setToolTip("How memlens embeds text for vector search")
        self.embedder_note = QLabel()
        self.embedder_note.setWordWrap(True)
        if not transformer_available():
            self.embedder_note.setText(
                "transformer needs the optional extra memlens[transformer]; without it "
                "memlens falls back to hash."
            )

        self.min_score = _spin(0, 1, 0.05, 2, "Hits scoring below this are not recalled (0.7)")
        self.vector_weight = _spin(0, 1, 0.05, 2, "Weight of the vector similarity (0.7)")
        self.bm25_weight = _spin(0, 1, 0.05, 2, "Weight of the BM25 keyword score (0.3)")
        self.decay = _spin(0, 1, 0.001, 4, "Score factor per day of age; 1 = no decay (0.995)")
        self.hard_cap = _int_spin(1, 10_000_000, 500, "Token cap of the recalled block (4,000)")
        self.protected_recent = _int_spin(
            0, 1000, 1, "The last user/assistant messages never trimmed (6)", " messages"
        )
        self.reserve = _int_spin(0, 10_000_000, 1000, "Tokens kept free for the reply (4,000)")

        embed = QGroupBox("Embedder")
        ef = QFormLayout(embed)
        ef.addRow("&Embedder:", self.embedder_box)
        ef.addRow(self.embedder_note)
        recall = QGroupBox("Recall defaults")
        rf = QFormLayout(recall)
        rf.addRow("&Min score:", self.min_score)
        rf.addRow("&Vector weight:", self.vector_weight)
        rf.addRow("&BM25 weight:", self.bm25_weight)
        rf.addRow("&Decay per day:", self.decay)
        rf.addRow("&Hard cap (tokens):", self.hard_cap)
        trim = QGroupBox("Trim defaults")
        tf = QFormLayout(trim)
        tf.addRow("&Protected recent:", self.protected_recent)
        tf.addRow("&Reserve (tokens):", self.reserve)
        lay = QVBoxLayout(self)
        lay.addWidget(embed)
        lay.addWidget(recall)
        lay.addWidget(trim)
        lay.addStretch(1)

    def set_values(self, embedder: str, recall: RecallDefaults, trim: TrimDefaults) -> None:
        """Show these values."""
        self.embedder_box.setCurrentIndex(max(0, self.embedder_box.findData(embedder)))
        self.min_score.setValue(recall.min_score)
        self.vector_weight.setValue(recall.vector_weight)
        self.bm25_weight.setValue(recall.bm25_weight)
        self.decay.setValue(recall.decay)
        self.hard_cap.setValue(recall.hard_cap_tokens)
        self.protected_recent.setValue(trim.protected_recent)
        self.reserve.setValue(trim.reserve_tokens)

    def embedder(self) -> str:
        """The embedder chosen."""
        return str(self.embedder_box.currentData())

    def recall(self) -> RecallDefaults:
        """The recall defaults shown."""
        return RecallDefaults(
            min_score=round(self.min_score.value(), 4),
            vector_weight=round(self.vector_weight.value(), 4),
            bm25_weight=round(self.bm25_weight.value(), 4),
            decay=round(self.decay.value(), 6),
            hard_cap_tokens=self.hard_cap.value(),
        )

    def trim(self) -> TrimDefaults:
        """The trim defaults shown."""
        return TrimDefaults(self.protected_recent.value(), self.reserve.value())


MB = 1024 * 1024


class SafetyPage(QWidget):
    """Model-call timeouts, backups kept, and the longest line memlens reads."""

    def __init__(self) -> None:
        super().__init__()
        d = SafetyDefaults()
        self.connect_timeout = _spin(
            0.5,
            600,
            1,
            1,
            f"Seconds to wait for a summariser to accept the connection "
            f"before giving up ({d.connect_timeout:g} s)",
        )
        self.read_timeout = _spin(
            1,
            3600,
            5,
            1,
            f"Seconds a summariser may stay silent while it answers; "
            f"longer counts as a failed call ({d.read_timeout:g} s)",
        )
        self.total_timeout = _spin(
            1,
            3600,
            10,
            1,
            "Seconds all the model calls of one compaction may take together; past "
            f"it the compaction is stopped ({d.total_timeout:g} s)",
        )
        for box in (self.connect_timeout, self.read_timeout, self.total_timeout):
            box.setSuffix(" s")
        self.backups_keep = _int_spin(
            0,
            100_000,
            1,
            "Backups kept per file before memlens rewrites it; older ones are "
            f"deleted. 0 keeps all ({d.backups_keep})",
            " backups",
        )
        self.backups_keep.setSpecialValueText("keep all")
        self.backups_days = _int_spin(
            0,
            100_000,
            1,
            f"Backups older than this are deleted. 0 never deletes by age ({d.backups_days} days)",
            " days",
        )
        self.backups_days.setSpecialValueText("never by age")
        self.max_line = _int_spin(
            1,
            2048,
            1,
            "A JSONL line longer than this is reported (file and line) and "
            f"skipped, never read whole into memory (1 MB = 1,048,576 bytes; "
            f"{d.max_line_bytes // MB} MB)",
            " MB",
        )
        self._line_bytes = d.max_line_bytes
        calls = QGroupBox("Model calls (compaction summaries)")
        cf = QFormLayout(calls)
        cf.addRow("&Connect timeout:", self.connect_timeout)
        cf.addRow("&Read timeout:", self.read_timeout)
        cf.addRow("&Total per compaction:", self.total_timeout)
        backups = QGroupBox("Backups (taken before memlens rewrites a file)")
        bf = QFormLayout(backups)
        bf.addRow("Backups &kept per file:", self.backups_keep)
        bf.addRow("Backup max &age:", self.backups_days)
        reading = QGroupBox("Reading")
        rf = QFormLayout(reading)
        rf.addRow("Max &line size:", self.max_line)
        for form in (cf, bf, rf):
            form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        lay = QVBoxLayout(self)
        lay.addWidget(calls)
        lay.addWidget(backups)
        lay.addWidget(reading)
        lay.addStretch(1)

    def set_values(self, safety: SafetyDefaults) -> None:
        """Show these limits."""
        self.connect_timeout.setValue(safety.connect_timeout)
        self.read_timeout.setValue(safety.read_timeout)
        self.total_timeout.setValue(safety.total_timeout)
        self.backups_keep.setValue(safety.backups_keep)
        self.backups_days.setValue(safety.backups_days)
        self._line_bytes = safety.max_line_bytes
        self.max_line.setValue(max(1, round(safety.max_line_bytes / MB)))

    def safety(self) -> SafetyDefaults:
        """The limits shown (a line size left untouched keeps its exact bytes)."""
        line = self.max_line.value() * MB
        if self.max_line.value() == max(1, round(self._line_bytes / MB)):
            line = self._line_bytes
        return SafetyDefaults(
            connect_timeout=round(self.connect_timeout.value(), 1),
            read_timeout=round(self.read_timeout.value(), 1),
            total_timeout=round(self.total_timeout.value(), 1),
            backups_keep=self.backups_keep.value(),
            backups_days=self.backups_days.value(),
            max_line_bytes=line,
        )


def prepare_settings_and_warn(settings: AppSettings, parent: QWidget) -> QMessageBox | None:
    """At start: clean the settings file of secrets and apply its limits; warn if it was dirty.

    The warning is a non-blocking message box over *parent* (returned, None when the
    file was clean); it names the settings keys, never what they held.
    """
    cleaned = prepare_settings(settings)
    if not cleaned:
        return None
    box = QMessageBox(
        QMessageBox.Icon.Warning,
        "A secret was removed from the settings",
        secrets_warning(cleaned, settings.file_name, saved=settings.writable),
        QMessageBox.StandardButton.Ok,
        parent,
    )
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box


class SettingsDialog(QDialog):
    """Edit memlens's settings; show the agent's ``openclaw.json`` sections read-only.

    Parameters
    ----------
    settings
        Where the settings are read from and saved to.
    openclaw
        The loaded ``openclaw.json`` (None when there is none).
    openclaw_error
        Why ``openclaw.json`` could not be read, when it could not.
    environ
        Where key variables are looked up (default: the process environment).

    Signals
    -------
    saved(AppConfig)
        After OK saved the settings.
    """

    saved = Signal(object)

    def __init__(
        self,
        settings: AppSettings,
        openclaw: OpenClawConfig | None = None,
        *,
        openclaw_error: str | None = None,
        environ: Mapping[str, str] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.settings = settings
        self.setWindowTitle("memlens settings")
        self.resize(900, 600)
        # load_app_config cleans the file of secrets first: it may have been edited
        # since memlens started (one read and one scan, not two)
        config = load_app_config(settings)
        cleaned = settings.take_cleaned()
        self.providers_page = ProvidersPage(environ)
        self.search_page = SearchPage()
        self.safety_page = SafetyPage()
        self.openclaw_view = OpenClawConfigView()
        self.reload_button = QPushButton("Re&load")
        self.reload_button.setToolTip("Read openclaw.json again (after editing it elsewhere)")
        self.openclaw_view.header.addWidget(self.reload_button)

        self.tabs = QTabWidget()
        self.tabs.addTab(self.providers_page, "LLM &providers")
        self.tabs.addTab(self.search_page, "&Search and trim")
        self.tabs.addTab(self.safety_page, "Sa&fety")
        self.tabs.addTab(self.openclaw_view, "&openclaw.json")
        self.tabs.setTabToolTip(2, "Model-call timeouts, backups and the longest line read")
        self.tabs.setTabToolTip(3, "The agent's memoryContext and compaction settings (read-only)")

        self.cleaned_label = QLabel(secrets_warning(cleaned) if cleaned else "")
        self.cleaned_label.setWordWrap(True)
        self.cleaned_label.setStyleSheet("color: #b26a00")
        self.cleaned_label.setVisible(bool(cleaned))

        self.problem_label = QLabel()
        self.problem_label.setWordWrap(True)
        self.problem_label.setStyleSheet("color: #c62828")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok
            | QDialogButtonBox.StandardButton.Cancel
            | QDialogButtonBox.StandardButton.RestoreDefaults
        )
        self.ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.defaults_button = self.buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults)
        self.defaults_button.setToolTip("Put every setting back to memlens's defaults")
        lay = QVBoxLayout(self)
        lay.addWidget(self.cleaned_label)
        lay.addWidget(self.tabs, 1)
        lay.addWidget(self.problem_label)
        lay.addWidget(self.buttons)

        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.defaults_button.clicked.connect(self._on_defaults_button_clicked)
        self.reload_button.clicked.connect(self._on_reload_button_clicked)
        self.providers_page.changed.connect(self._validate)

        self.set_config(config)
        self.set_openclaw(openclaw, openclaw_error)

    # --- values -------------------------------------------------------------------

    def set_config(self, config: AppConfig) -> None:
        """Show *config* in the editable pages."""
        self.providers_page.set_providers(config.providers)
        self.search_page.set_values(config.embedder, config.recall, config.trim)
        self.safety_page.set_values(config.safety)
        self._validate()

    def config(self) -> AppConfig:
        """The settings as edited."""
        return AppConfig(
            providers=tuple(self.providers_page.providers()),
            embedder=self.search_page.embedder(),
            recall=self.search_page.recall(),
            trim=self.search_page.trim(),
            safety=self.safety_page.safety(),
        )

    def problems(self) -> list[str]:
        """What must be fixed before the settings can be saved."""
        return self.providers_page.problems()

    def set_openclaw(self, config: OpenClawConfig | None, error: str | None = None) -> None:
        """Show *config* (or *error*) on the ``openclaw.json`` page."""
        self._openclaw_path = config.path if config is not None else None
        self.openclaw_view.set_config(config, error)
        self.reload_button.setEnabled(self._openclaw_path is not None)

    # --- handlers -----------------------------------------------------------------

    @Slot()
    def _validate(self) -> None:
        problems = self.problems()
        self.problem_label.setText("\n".join(problems[:4]))
        self.problem_label.setVisible(bool(problems))
        self.ok_button.setEnabled(not problems)
        self.ok_button.setToolTip("Fix the problems first" if problems else "Save the settings")

    @Slot()
    def _on_defaults_button_clicked(self) -> None:
        self.set_config(AppConfig())

    @Slot()
    def _on_reload_button_clicked(self) -> None:
        if self._openclaw_path is None:
            return
        try:
            config = load_openclaw_config(self._openclaw_path)
        except FormatError as exc:
            self.openclaw_view.set_config(None, str(exc))
            return
        self.set_openclaw(config)

    @override
    def accept(self) -> None:
        if self.problems():
            self._validate()
            return
        config = self.config()
        save_app_config(self.settings, config)
        apply_safety(config.safety)
        self.saved.emit(config)
        super().accept()
