"""``openclaw.json``'s memoryContext and compaction sections, read-only, with their problems.

memlens never writes ``openclaw.json``: this view shows what the agent will read,
the values in effect (the file's, else the defaults) and every validation problem
with its line and key path.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)
from typing_extensions import override

from core.io import jsonio
from core.safety.redact import redact
from widgets.common.record_model import Column, RecordRole, RecordTableModel
from widgets.common.text import esc

if TYPE_CHECKING:
    from core.io.problems import Problem
    from core.openclaw.config import OpenClawConfig

SECTIONS = (("memoryContext", "memory_context"), ("compaction", "compaction"))
SEVERITY_COLORS = {"error": "#c62828", "warning": "#b26a00", "info": "#607d8b"}


def split_message(problem: Problem) -> tuple[str, str]:
    """``(key path, message)`` of a config problem (``a.b.c: unknown key``)."""
    path, sep, rest = problem.message.partition(": ")
    if sep and " " not in path:
        return path, rest
    return "", problem.message


@dataclass(frozen=True, slots=True)
class Setting:
    """One value in effect: its key path, value, and where it came from."""

    path: str
    value: Any
    source: str
    """``file``, ``default``, or ``invalid: default`` (the file's value is invalid)."""


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.capitalize() for w in rest)


def effective_settings(config: OpenClawConfig) -> list[Setting]:
    """Every typed memoryContext and compaction value, with where it came from."""
    agents = config.raw.get("agents") if isinstance(config.raw, dict) else None
    defaults = agents.get("defaults") if isinstance(agents, dict) else None
    defaults = defaults if isinstance(defaults, dict) else {}
    invalid = {split_message(p)[0] for p in config.errors}
    out: list[Setting] = []

    def add(path: str, value: Any, present: bool) -> None:
        if not present:
            source = "default"
        elif f"agents.defaults.{path}" in invalid:
            source = "invalid: default"
        else:
            source = "file"
        out.append(Setting(path, value, source))

    for key, attr in SECTIONS:
        section = defaults.get(key)
        section = section if isinstance(section, dict) else {}
        record = getattr(config, attr)
        for f in fields(record):
            value = getattr(record, f.name)
            camel = _camel(f.name)
            if hasattr(value, "__dataclass_fields__"):
                sub = section.get(camel)
                sub = sub if isinstance(sub, dict) else {}
                for g in fields(value):
                    sub_key = _camel(g.name)
                    add(f"{key}.{camel}.{sub_key}", getattr(value, g.name), sub_key in sub)
            else:
                add(f"{key}.{camel}", value, camel in section)
    reserve = config.compaction.effective_reserve_tokens
    out.append(Setting("compaction (effective reserve)", reserve, "max(reserve, floor)"))
    return out


def _show(value: Any) -> str:
    if value is None:
        return "(unset)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value if len(value) <= 60 else value[:59] + "…"
    return f"{value:,}" if isinstance(value, int) else str(value)


class ProblemModel(RecordTableModel["Problem"]):
    """Config problems: severity (coloured), line, key path, message."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(
            [
                Column("Severity", lambda p: p.severity),
                Column("Line", lambda p: p.line or "", lambda p: p.line, True, False),
                Column("Key", lambda p: split_message(p)[0]),
                Column("Problem", lambda p: split_message(p)[1]),
            ],
            parent,
        )

    @override
    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if index.isValid() and role == Qt.ItemDataRole.ForegroundRole and index.column() == 0:
            return QBrush(QColor(SEVERITY_COLORS.get(self.record(index.row()).severity, "#000")))
        if index.isValid() and role == Qt.ItemDataRole.ToolTipRole:
            return str(self.record(index.row()))
        return super().data(index, role)


class OpenClawConfigView(QWidget):
    """Read-only view of an :class:`~core.openclaw.config.OpenClawConfig`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.file_label = QLabel()
        self.file_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.file_label.setWordWrap(True)
        self.status_label = QLabel()
        self.status_label.setWordWrap(True)

        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.source_view = QPlainTextEdit()
        self.source_view.setReadOnly(True)
        self.source_view.setFont(mono)
        self.source_view.setToolTip(
            "agents.defaults.memoryContext and agents.defaults.compaction as the file has them "
            "(memlens never writes openclaw.json)"
        )
        self.settings_model: RecordTableModel[Setting] = RecordTableModel(
            [
                Column("Key", lambda s: s.path),
                Column("Value", lambda s: _show(s.value)),
                Column("From", lambda s: s.source),
            ],
            self,
        )
        self.settings_table = _table(self.settings_model)
        self.settings_table.setToolTip("The values in effect: the file's, else the defaults")
        self.problem_model = ProblemModel(self)
        self.problem_table = _table(self.problem_model)
        self.problem_table.setToolTip("Validation problems, with the line of the key")

        upper = QSplitter(Qt.Orientation.Horizontal)
        upper.addWidget(_titled("File (read-only)", self.source_view))
        upper.addWidget(_titled("In effect", self.settings_table))
        upper.setSizes([320, 520])
        self.problems_title = QLabel("<b>Problems</b>")
        lower = QWidget()
        ll = QVBoxLayout(lower)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(self.problems_title)
        ll.addWidget(self.problem_table)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(upper)
        split.addWidget(lower)
        split.setSizes([420, 150])

        self.header = QHBoxLayout()
        self.header.addWidget(self.file_label, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(self.header)
        lay.addWidget(self.status_label)
        lay.addWidget(split, 1)
        self.set_config(None)

    def set_config(self, config: OpenClawConfig | None, error: str | None = None) -> None:
        """Show *config*; with none, show *error* (why it could not be read) or a hint."""
        if config is None:
            self.file_label.setText("<b>openclaw.json</b>: none loaded")
            self.source_view.setPlainText("")
            self.settings_model.set_records([])
            self.problem_model.set_records([])
            if error:
                self._status(f"Cannot read it: {error}", "error")
            else:
                self._status("Open a data directory with an openclaw.json to see it here.", "info")
            self.problems_title.setText("<b>Problems</b>")
            return
        self.file_label.setText(f"<b>openclaw.json</b>: {esc(config.path)}")
        self.file_label.setToolTip(config.path)
        self.source_view.setPlainText(section_text(config))
        self.settings_model.set_records(effective_settings(config))
        self.problem_model.set_records(list(config.problems))
        errors = len(config.errors)
        warnings = sum(p.severity == "warning" for p in config.problems)
        if errors:
            self._status(
                f"{errors} error{'s' if errors != 1 else ''}: OpenClaw would reject this config.",
                "error",
            )
        elif warnings:
            self._status(
                f"Valid, with {warnings} warning{'s' if warnings != 1 else ''}.", "warning"
            )
        else:
            self._status("Valid.", "ok")
        self.problems_title.setText(f"<b>Problems</b> ({len(config.problems)})")

    def problems(self) -> list[Problem]:
        """The problems listed."""
        return [
            self.problem_model.index(r, 0).data(RecordRole)
            for r in range(self.problem_model.rowCount())
        ]

    def _status(self, text: str, kind: str) -> None:
        color = {"ok": "#2e7d32"}.get(kind, SEVERITY_COLORS.get(kind, "#000"))
        self.status_label.setText(f'<span style="color:{color}">{esc(text)}</span>')
        self.status_label.setProperty("kind", kind)


def section_text(config: OpenClawConfig) -> str:
    """The two sections as the file has them, pretty-printed and redacted (a note when absent).

    Only these sections are shown: the rest of the file may hold API keys.
    """
    agents = config.raw.get("agents") if isinstance(config.raw, dict) else None
    defaults = agents.get("defaults") if isinstance(agents, dict) else None
    parts: list[str] = []
    for key, _attr in SECTIONS:
        value = defaults.get(key) if isinstance(defaults, dict) else None
        head = f"// agents.defaults.{key}"
        if value is None:
            parts.append(f"{head}: not set, the defaults apply")
        else:
            body = redact(jsonio.dumps(value, pretty=True).decode("utf-8"))
            parts.append(f"{head}\n{body}")
    return "\n\n".join(parts)


def _table(model: RecordTableModel[Any]) -> QTableView:
    table = QTableView()
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setWordWrap(False)
    table.setAlternatingRowColors(True)
    table.verticalHeader().hide()
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 6)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setStretchLastSection(True)
    return table


def _titled(title: str, widget: QWidget) -> QWidget:
    box = QWidget()
    lay = QVBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.addWidget(QLabel(f"<b>{title}</b>"))
    lay.addWidget(widget, 1)
    return box
