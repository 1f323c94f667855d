"""The record table every panel shows: whole rows, read-only, compact, sized columns."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QAbstractItemView, QTableView


def table_view(
    model: Any, widths: tuple[int, ...] = (), table: QTableView | None = None
) -> QTableView:
    """*table* (a new one by default) showing *model* as the panels' record tables do.

    Whole rows selected one at a time, read-only, compact rows, the given column widths.
    """
    table = table if table is not None else QTableView()
    table.setAlternatingRowColors(True)
    table.setWordWrap(False)
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.verticalHeader().hide()
    table.verticalHeader().setDefaultSectionSize(22)
    header = table.horizontalHeader()
    header.setStretchLastSection(True)
    for col, width in enumerate(widths):
        header.resizeSection(col, width)
    return table
