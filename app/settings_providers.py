"""The LLM providers page of the settings dialog.

A list of providers and a form for the selected one: label, kind, base URL,
model, fallback models and the *name* of the key's environment variable, with a
live indicator of where the key is found ("set (environment)", "set (keychain)",
"not set"). A key can be stored in the OS keychain under that name (a password
field that writes to the keychain only) and removed from it; the key itself is
never read out, shown or written to the settings file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QAbstractListModel,
    QItemSelection,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from app.app_config import (
    KIND_LABELS,
    KINDS,
    ProviderSpec,
    key_name_problem,
    key_status,
)
from core.llm.providers import ANTHROPIC_URL
from core.safety.secrets import (
    SERVICE,
    KeychainError,
    delete_key,
    keychain_key,
    keychain_status,
    scrub,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

Index = QModelIndex | QPersistentModelIndex
STATUS_TEXT = {
    "set (environment)": ("●  set (environment)", "#2e7d32"),
    "set (keychain)": ("●  set (keychain)", "#2e7d32"),
    "not set": ("○  not set (neither in the environment nor in the OS keychain)", "#b26a00"),
    "not needed": ("no key is sent (a local server)", "#607d8b"),
}
URL_HINT = {
    "openai": "http://127.0.0.1:11434/v1 (Ollama), https://api.openai.com/v1 …",
    "anthropic": f"{ANTHROPIC_URL} when empty",
}


class ProviderListModel(QAbstractListModel):
    """The providers, by label; the spec itself under ``UserRole``."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._items: list[ProviderSpec] = []

    def set_providers(self, providers: Sequence[ProviderSpec]) -> None:
        """Replace every provider."""
        self.beginResetModel()
        self._items = list(providers)
        self.endResetModel()

    def providers(self) -> list[ProviderSpec]:
        """The providers, in order."""
        return list(self._items)

    def provider(self, row: int) -> ProviderSpec:
        """The provider of *row*."""
        return self._items[row]

    def replace_at(self, row: int, spec: ProviderSpec) -> None:
        """Change the provider of *row*."""
        self._items[row] = spec
        self.dataChanged.emit(self.index(row), self.index(row))

    def insert(self, row: int, spec: ProviderSpec) -> None:
        """Insert *spec* before *row*."""
        self.beginInsertRows(QModelIndex(), row, row)
        self._items.insert(row, spec)
        self.endInsertRows()

    def remove(self, row: int) -> None:
        """Remove *row*."""
        self.beginRemoveRows(QModelIndex(), row, row)
        del self._items[row]
        self.endRemoveRows()

    def move(self, row: int, to: int) -> None:
        """Move *row* to position *to* (another row's index)."""
        if row == to or not (0 <= to < len(self._items)):
            return
        dest = to + 1 if to > row else to
        self.beginMoveRows(QModelIndex(), row, row, QModelIndex(), dest)
        self._items.insert(to, self._items.pop(row))
        self.endMoveRows()

    @override
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._items)

    @override
    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not (0 <= index.row() < len(self._items)):
            return None
        spec = self._items[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return spec.display_label
        if role == Qt.ItemDataRole.ToolTipRole:
            problems = spec.problems()
            return "\n".join([scrub(spec.spec()), *problems])
        if role == Qt.ItemDataRole.ForegroundRole and spec.problems():
            from PySide6.QtGui import QBrush, QColor

            return QBrush(QColor("#c62828"))
        if role == Qt.ItemDataRole.UserRole:
            return spec
        return None


class StoreKeyDialog(QDialog):
    """Ask for a key and store it in the OS keychain (only there) under a variable's name.

    The field is a password field; it is emptied when the dialog closes, so the
    key stays in no widget.
    """

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.setWindowTitle(f"Store the key of {name}")
        self.setMinimumWidth(460)
        about = QLabel(
            f"Paste the API key memlens should use when {name} is not set in the "
            f"environment. It is stored in the OS keychain (service {SERVICE!r}, "
            f"name {name!r}) and nowhere else; it is never shown again."
        )
        about.setWordWrap(True)
        self.key_edit = QLineEdit()
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setInputMethodHints(
            Qt.InputMethodHint.ImhHiddenText
            | Qt.InputMethodHint.ImhSensitiveData
            | Qt.InputMethodHint.ImhNoPredictiveText
        )
        self.key_edit.setPlaceholderText("the key (hidden)")
        self.key_edit.setToolTip("Written to the OS keychain only, never to the settings file")
        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #c62828")
        self.error_label.hide()
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Store in keychain")
        lay = QVBoxLayout(self)
        lay.addWidget(about)
        lay.addWidget(self.key_edit)
        lay.addWidget(self.error_label)
        lay.addWidget(self.buttons)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

    @override
    def accept(self) -> None:
        from core.safety.secrets import store_key

        try:
            store_key(self.name, self.key_edit.text())
        except KeychainError as exc:
            self.error_label.setText(f"Not stored: {exc}")
            self.error_label.show()
            return
        self.key_edit.clear()
        super().accept()

    @override
    def done(self, result: int) -> None:
        self.key_edit.clear()  # the key never outlives the dialog in a widget
        super().done(result)


def _confirm_remove(parent: QWidget, name: str) -> bool:
    answer = QMessageBox.question(
        parent,
        "Remove from keychain",
        f"Remove the key of {name} from the OS keychain? memlens cannot bring it back.",
    )
    return answer == QMessageBox.StandardButton.Yes


class ProvidersPage(QWidget):
    """Edit a list of :class:`~app.app_config.ProviderSpec`.

    Parameters
    ----------
    environ
        Where key variables are looked up for the indicator (default: the process
        environment). Only whether a variable is set is used.
    """

    changed = Signal()

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self._environ = environ
        self._loading = False
        self.keychain = keychain_status()
        self.key_dialog: StoreKeyDialog | None = None
        self.confirm_remove: Callable[[QWidget, str], bool] = _confirm_remove
        """Asks before a key is removed from the keychain."""
        self.model = ProviderListModel(self)
        self.list_view = QListView()
        self.list_view.setModel(self.model)
        self.list_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list_view.setToolTip("LLM endpoints memlens can call (compaction, knowledge)")
        self.add_button = QPushButton("&Add")
        self.remove_button = QPushButton("&Remove")
        self.up_button = QPushButton("Move &up")
        self.down_button = QPushButton("Move do&wn")
        self.add_button.setToolTip("Add a provider")
        self.remove_button.setToolTip("Remove the selected provider")
        self.up_button.setToolTip("Offer the selected provider earlier")
        self.down_button.setToolTip("Offer the selected provider later")

        self.label_edit = QLineEdit()
        self.kind_box = QComboBox()
        for kind in KINDS:
            self.kind_box.addItem(KIND_LABELS[kind], kind)
        self.url_edit = QLineEdit()
        self.model_edit = QLineEdit()
        self.model_edit.setPlaceholderText("e.g. claude-sonnet-4-5, gpt-4o-mini, llama3.1:8b")
        self.fallback_edit = QLineEdit()
        self.fallback_edit.setPlaceholderText("comma-separated, tried in order")
        self.key_edit = QLineEdit()
        self.key_edit.setPlaceholderText("e.g. ANTHROPIC_API_KEY (empty: no key)")
        self.key_status = QLabel()
        self.store_key_button = QPushButton("Store key in the OS keychain…")
        self.remove_key_button = QPushButton("Remove from keychain")
        self.keychain_label = QLabel()
        self.keychain_label.setWordWrap(True)
        self.problem_label = QLabel()
        self.problem_label.setWordWrap(True)
        self.problem_label.setStyleSheet("color: #c62828")
        tips = {
            self.label_edit: "The name pickers show",
            self.kind_box: "OpenAI-compatible: OpenAI, Ollama, llama.cpp, vLLM, LM Studio …",
            self.url_edit: "The API root the requests go to",
            self.model_edit: "The model asked first",
            self.fallback_edit: "Asked in order when the model cannot answer "
            "(unknown model, bad answer)",
            self.key_edit: "The NAME of the environment variable holding the API key. memlens "
            "reads the key from it when it sends a request, else from the OS keychain entry "
            "of that name; the key is never shown or written to the settings file.",
        }
        for w, tip in tips.items():
            w.setToolTip(tip)
        if self.keychain.available:
            self.store_key_button.setToolTip(
                "Store the key in the OS keychain under this variable's name "
                f"({self.keychain.reason})"
            )
            self.remove_key_button.setToolTip("Delete this variable's key from the OS keychain")
        else:
            reason = f"Keychain unavailable: {self.keychain.reason}"
            self.store_key_button.setToolTip(reason)
            self.remove_key_button.setToolTip(reason)
            self.keychain_label.setText(reason)
            self.keychain_label.setEnabled(False)  # grey: a fact, not an error
        self.keychain_label.setVisible(bool(self.keychain_label.text()))

        form = QFormLayout()
        form.addRow("&Label:", self.label_edit)
        form.addRow("&Kind:", self.kind_box)
        form.addRow("Base &URL:", self.url_edit)
        form.addRow("&Model:", self.model_edit)
        form.addRow("&Fallback models:", self.fallback_edit)
        form.addRow("&Key variable:", self.key_edit)
        form.addRow("", self.key_status)
        keys = QHBoxLayout()
        keys.addWidget(self.store_key_button)
        keys.addWidget(self.remove_key_button)
        keys.addStretch(1)
        form.addRow("", keys)
        form.addRow("", self.keychain_label)
        form.addRow(self.problem_label)
        note = QLabel(
            "memlens reads the key from this variable when it sends a request, else from "
            "the OS keychain entry stored for this name. The key is never shown or written "
            "to the settings file."
        )
        note.setWordWrap(True)
        note.setEnabled(False)  # drawn in the palette's disabled (grey) text colour
        form.addRow(note)
        self.form = QWidget()
        self.form.setLayout(form)

        buttons = QHBoxLayout()
        for b in (self.add_button, self.remove_button, self.up_button, self.down_button):
            buttons.addWidget(b)
        left = QVBoxLayout()
        left.addWidget(self.list_view, 1)
        left.addLayout(buttons)
        lay = QHBoxLayout(self)
        lay.addLayout(left, 2)
        lay.addWidget(self.form, 3)

        self.list_view.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self.add_button.clicked.connect(self._on_add_button_clicked)
        self.remove_button.clicked.connect(self._on_remove_button_clicked)
        self.up_button.clicked.connect(self._on_up_button_clicked)
        self.down_button.clicked.connect(self._on_down_button_clicked)
        self.store_key_button.clicked.connect(self._on_store_key_button_clicked)
        self.remove_key_button.clicked.connect(self._on_remove_key_button_clicked)
        for edit in (
            self.label_edit,
            self.url_edit,
            self.model_edit,
            self.fallback_edit,
            self.key_edit,
        ):
            edit.textEdited.connect(self._on_field_edited)
        self.kind_box.currentIndexChanged.connect(self._on_kind_box_current_index_changed)
        self._show(None)

    # --- public -------------------------------------------------------------------

    def set_providers(self, providers: Sequence[ProviderSpec]) -> None:
        """Edit *providers*; the first is selected."""
        self.model.set_providers(providers)
        if providers:
            self.select(0)
        else:
            self._show(None)

    def providers(self) -> list[ProviderSpec]:
        """The providers as edited."""
        return self.model.providers()

    def problems(self) -> list[str]:
        """Every problem, prefixed with the provider's label."""
        return [f"{p.display_label}: {m}" for p in self.providers() for m in p.problems()]

    def select(self, row: int) -> None:
        """Select provider *row*."""
        self.list_view.setCurrentIndex(self.model.index(row))

    def current_row(self) -> int:
        """The selected provider's row (-1 when none)."""
        rows = self.list_view.selectionModel().selectedRows()
        return rows[0].row() if rows else -1

    # --- form <-> model -----------------------------------------------------------

    def _show(self, spec: ProviderSpec | None) -> None:
        self._loading = True
        editing = spec is not None
        try:
            self.form.setEnabled(editing)
            spec = spec or ProviderSpec("")
            self.label_edit.setText(spec.label)
            self.kind_box.setCurrentIndex(max(0, self.kind_box.findData(spec.kind)))
            self.url_edit.setText(spec.base_url)
            self.url_edit.setPlaceholderText(URL_HINT[spec.kind])
            self.model_edit.setText(spec.model)
            self.fallback_edit.setText(", ".join(spec.fallback_models))
            self.key_edit.setText(spec.key_env)
        finally:
            self._loading = False
        self._refresh(spec if editing else None)
        row = self.current_row()
        self.remove_button.setEnabled(row >= 0)
        self.up_button.setEnabled(row > 0)
        self.down_button.setEnabled(0 <= row < self.model.rowCount() - 1)

    def _from_form(self) -> ProviderSpec:
        fallbacks = tuple(m.strip() for m in self.fallback_edit.text().split(",") if m.strip())
        return ProviderSpec(
            label=self.label_edit.text().strip(),
            kind=self.kind_box.currentData(),
            base_url=self.url_edit.text().strip(),
            model=self.model_edit.text().strip(),
            fallback_models=fallbacks,
            key_env=self.key_edit.text().strip(),
        )

    def _refresh(self, spec: ProviderSpec | None) -> None:
        named = spec is not None and bool(spec.key_env) and not key_name_problem(spec.key_env)
        self.store_key_button.setEnabled(self.keychain.available and named)
        self.remove_key_button.setEnabled(
            self.keychain.available
            and named
            and spec is not None
            and keychain_key(spec.key_env) is not None
        )
        if spec is None:
            self.key_status.clear()
            self.problem_label.clear()
            return
        if key_name_problem(spec.key_env):
            text, color = "—", "#c62828"
        else:
            text, color = STATUS_TEXT[key_status(spec.key_env, self._environ)]
        self.key_status.setText(text)
        self.key_status.setStyleSheet(f"color: {color}")
        self.problem_label.setText("\n".join(spec.problems()))

    def _key_name(self) -> str:
        name = self.key_edit.text().strip()
        return "" if key_name_problem(name) else name

    def _keychain_message(self, text: str) -> None:
        self.keychain_label.setText(text)
        self.keychain_label.setEnabled(True)
        self.keychain_label.show()

    def _store(self) -> None:
        row = self.current_row()
        if row < 0 or self._loading:
            return
        spec = self._from_form()
        self.model.replace_at(row, spec)
        self._refresh(spec)
        self.changed.emit()

    # --- handlers -----------------------------------------------------------------

    @Slot(QItemSelection, QItemSelection)
    def _on_selection_changed(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        row = self.current_row()
        self._show(self.model.provider(row) if row >= 0 else None)

    @Slot(str)
    def _on_field_edited(self, _text: str) -> None:
        self._store()

    @Slot(int)
    def _on_kind_box_current_index_changed(self, _index: int) -> None:
        if self._loading:
            return
        kind = self.kind_box.currentData()
        self.url_edit.setPlaceholderText(URL_HINT[kind])
        if kind == "anthropic" and not self.key_edit.text().strip():
            self.key_edit.setText("ANTHROPIC_API_KEY")
        self._store()

    @Slot()
    def _on_add_button_clicked(self) -> None:
        row = self.model.rowCount()
        self.model.insert(row, ProviderSpec("New provider", "openai", "http://127.0.0.1:11434/v1"))
        self.select(row)
        self.label_edit.setFocus()
        self.label_edit.selectAll()
        self.changed.emit()

    @Slot()
    def _on_remove_button_clicked(self) -> None:
        row = self.current_row()
        if row < 0:
            return
        self.model.remove(row)
        if self.model.rowCount():
            self.select(min(row, self.model.rowCount() - 1))
        else:
            self._show(None)
        self.changed.emit()

    @Slot()
    def _on_store_key_button_clicked(self) -> None:
        name = self._key_name()
        if not name or not self.keychain.available:
            return
        dialog = StoreKeyDialog(name, self)
        dialog.accepted.connect(self._on_key_dialog_accepted)
        dialog.finished.connect(dialog.deleteLater)
        self.key_dialog = dialog
        dialog.open()

    @Slot()
    def _on_key_dialog_accepted(self) -> None:
        dialog = self.key_dialog
        if dialog is not None:
            self._keychain_message(f"The key of {dialog.name} is stored in the OS keychain.")
        self.key_dialog = None
        row = self.current_row()
        self._refresh(self.model.provider(row) if row >= 0 else None)

    @Slot()
    def _on_remove_key_button_clicked(self) -> None:
        name = self._key_name()
        if not name or not self.confirm_remove(self, name):
            return
        try:
            removed = delete_key(name)
        except KeychainError as exc:
            self._keychain_message(f"Not removed: {exc}")
            return
        self._keychain_message(
            f"The key of {name} was removed from the OS keychain."
            if removed
            else f"The OS keychain holds no key for {name}."
        )
        row = self.current_row()
        self._refresh(self.model.provider(row) if row >= 0 else None)

    @Slot()
    def _on_up_button_clicked(self) -> None:
        self._move(-1)

    @Slot()
    def _on_down_button_clicked(self) -> None:
        self._move(1)

    def _move(self, step: int) -> None:
        row = self.current_row()
        if row < 0 or not (0 <= row + step < self.model.rowCount()):
            return
        self.model.move(row, row + step)
        self.select(row + step)
        self.changed.emit()
