"""Reading what a view shows through public Qt API (tests never ask views for private state)."""

from __future__ import annotations

from typing import Any

from widgets.common.record_model import RecordRole


def shown_records(proxy: Any) -> list[Any]:
    """The records a table's model (usually its sort/filter proxy) shows, in display order."""
    return [proxy.index(row, 0).data(RecordRole) for row in range(proxy.rowCount())]


LIST_ITEMS = (
    "select_lines",
    "hover_lines",
    "cut_lines",
    "compaction_labels",
    "branch_labels",
    "break_labels",
    "flush_labels",
)
"""Timeline plot items that come in numbered groups (``name#0``, ``name#1``...)."""


def plot_items(view: Any) -> dict[str, Any]:
    """A timeline view's plot items by their object names (groups as lists, in order)."""
    singles: dict[str, Any] = {}
    groups: dict[str, list[tuple[int, Any]]] = {}
    for item in view.graphics_view().scene().items():
        name = item.objectName() if hasattr(item, "objectName") else ""
        if not name:
            continue
        base, numbered, index = name.partition("#")
        if numbered:
            groups.setdefault(base, []).append((int(index), item))
        else:
            singles[name] = item
    out = dict(singles)
    for base in LIST_ITEMS:
        out[base] = [item for _, item in sorted(groups.get(base, []), key=lambda p: p[0])]
    return out


def cut_point(view: Any) -> str | None:
    """The entry a timeline view marks as the planned cut point (its cut line), if any."""
    lines = plot_items(view)["cut_lines"]
    timeline = view.timeline()
    if timeline is None or not lines or not lines[0].isVisible():
        return None
    x = lines[0].value()
    return next((e for e in timeline.entry_ids if timeline.position(e) == x), None)


def gauge_canvas(gauge: Any) -> Any:
    """The painted bar of a budget gauge (found by its object name)."""
    from widgets.budget.gauge_canvas import GaugeCanvas

    return gauge.findChild(GaugeCanvas, "gauge-canvas")


def legend_text(gauge: Any, key: str) -> str:
    """The legend text a budget gauge shows for a section key (or ``"after"``)."""
    from PySide6.QtWidgets import QLabel

    return str(gauge.findChild(QLabel, f"legend-{key}").text())


def shown_fact_ids(view: Any) -> list[str]:
    """Ids of the facts a facts view's table shows, in table order."""
    proxy = view.table.model()
    return [
        view.model.fact(proxy.mapToSource(proxy.index(row, 0)).row()).id
        for row in range(proxy.rowCount())
    ]
