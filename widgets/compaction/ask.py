"""The questions the compaction view asks before it hands a session to another program."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMessageBox

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from core.transcript.model import Session


def ask_openclaw(parent: QWidget, session: Session) -> bool:
    """Ask, over *parent*, whether OpenClaw's gateway may compact *session*."""
    box = QMessageBox(
        QMessageBox.Icon.Question,
        "Compact with OpenClaw",
        f"Ask OpenClaw to compact session {session.id}?",
        QMessageBox.StandardButton.Ok | QMessageBox.StandardButton.Cancel,
        parent,
    )
    box.setInformativeText(
        "memlens runs `openclaw sessions compact KEY --json`. OpenClaw's gateway must be "
        "running; it summarises with its own model and appends the compaction to its "
        "database. memlens writes nothing; live mode shows the new entry."
    )
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    return box.exec() == QMessageBox.StandardButton.Ok
