"""A picker of the summarising model: the choices, and whether each one's key is set."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSizePolicy, QWidget

from core.compaction.provider import OFFLINE, check_spec, provider_key_status, with_offline_first

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.compaction.provider import ProviderChoice

ERROR_COLOR = "#e5484d"
OK_COLOR = "#30a46c"


class ProviderPicker(QWidget):
    """A combo box of :class:`~core.compaction.provider.ProviderChoice` and a key status.

    The offline choice is always first and chosen by default. For a model the
    status names the environment variable the key comes from and says whether it
    is set; the key itself is never read out.

    Signals
    -------
    provider_changed(object)
        The :class:`ProviderChoice` now chosen.
    """

    provider_changed = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._choices: list[ProviderChoice] = [OFFLINE]
        self._error: str | None = None
        self.combo = QComboBox()
        self.combo.setToolTip("The model that writes the summary")
        self.combo.setMinimumWidth(260)
        self.key_label = QLabel()
        # in a toolbar: the status gives way (the combo's tooltips say as much)
        self.key_label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.key_label.setMinimumWidth(60)
        self.key_label.setToolTip(
            "Only the name of the environment variable is shown, never the key"
        )
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        label = QLabel("Summarise &with")
        label.setBuddy(self.combo)
        layout.addWidget(label)
        layout.addWidget(self.combo)
        layout.addWidget(self.key_label, 1)
        self.combo.currentIndexChanged.connect(self._on_current_index_changed)
        self.set_providers([OFFLINE])

    def set_providers(self, choices: Sequence[ProviderChoice]) -> None:
        """Offer *choices* after an offline one; the current choice stays if still offered."""
        current = self.provider()
        self._choices = with_offline_first(choices)
        self.combo.blockSignals(True)
        self.combo.clear()
        for n, c in enumerate(self._choices):
            self.combo.addItem(c.label)
            tip = c.spec if c.offline else f"{c.spec}\nkey from: {c.effective_key_env or '(none)'}"
            self.combo.setItemData(n, tip, Qt.ItemDataRole.ToolTipRole)
        specs = [c.spec for c in self._choices]
        self.combo.setCurrentIndex(specs.index(current.spec) if current.spec in specs else 0)
        self.combo.blockSignals(False)
        self._on_current_index_changed()

    def providers(self) -> list[ProviderChoice]:
        """Every choice offered, offline first."""
        return list(self._choices)

    def provider(self) -> ProviderChoice:
        """The choice made."""
        i = self.combo.currentIndex()
        return self._choices[i] if 0 <= i < len(self._choices) else OFFLINE

    def set_provider(self, index: int) -> None:
        """Choose the provider at *index* of :meth:`providers`."""
        self.combo.setCurrentIndex(index)

    def error(self) -> str | None:
        """Why the chosen provider cannot be used (a bad spec), else None."""
        return self._error

    def refresh(self) -> None:
        """Look at the environment again (a key may have been set meanwhile)."""
        self._on_current_index_changed()

    @Slot()
    def _on_current_index_changed(self) -> None:
        choice = self.provider()
        self._error = check_spec(choice)
        self.key_label.setText(self._status_text(choice))
        self.provider_changed.emit(choice)

    def _status_text(self, choice: ProviderChoice) -> str:
        if self._error is not None:
            return f'<span style="color:{ERROR_COLOR}">{self._error}</span>'
        if choice.offline:
            return "no network, no key"
        env = choice.effective_key_env
        status = provider_key_status(choice)
        if status == "not needed":
            return "no API key is sent (local server)"
        if status == "set":
            return f'key: <span style="color:{OK_COLOR}">${env} is set</span>'
        return (
            f'key: <span style="color:{ERROR_COLOR}">${env} is not set</span> (the call will fail)'
        )
