"""What the window shows, as plain data: item models read through ``model.data``.

A soak run compares the window that followed the agent with a window that opened the
same files fresh. Everything here reads the public surface of
:class:`app.main_window.MainWindow` (its views and their models), never pixels, and
tolerates a view that a refactoring renamed: a view not found is reported as missing,
which fails the comparison loudly rather than passing it silently.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, Qt
from PySide6.QtWidgets import QAbstractItemView, QLabel

MAX_ROWS = 20_000
"""Rows read from one model at most (a soak run's views are far smaller)."""


def _cell(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def model_rows(model: QAbstractItemModel | None) -> list[tuple[Any, ...]]:
    """Every row of *model*, depth first, as ``(depth, display of each column...)``."""
    if model is None:
        return [("<no model>",)]
    out: list[tuple[Any, ...]] = []
    stack: list[tuple[QModelIndex, int]] = [(QModelIndex(), 0)]
    while stack and len(out) < MAX_ROWS:
        parent, depth = stack.pop()
        rows = model.rowCount(parent)
        cols = model.columnCount(parent)
        children = []
        for row in range(rows):
            first = model.index(row, 0, parent)
            cells = [
                _cell(model.index(row, c, parent).data(Qt.ItemDataRole.DisplayRole))
                for c in range(cols)
            ]
            out.append((depth, *cells))
            if model.rowCount(first) > 0:
                children.append((first, depth + 1))
        # children after their parent, in order (a stack: push them reversed)
        stack.extend(reversed(children))
    return out


def _view_model(window: Any, *names: str) -> QAbstractItemModel | None:
    """The model of the first view found at a dotted attribute path of *window*."""
    for name in names:
        obj: Any = window
        for part in name.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                break
        if isinstance(obj, QAbstractItemView):
            return obj.model()
        if isinstance(obj, QAbstractItemModel):
            return obj
    return None


def _text(window: Any, name: str) -> str | None:
    label = getattr(window, name, None)
    return label.text() if isinstance(label, QLabel) else None


def window_views(window: Any) -> dict[str, Any]:
    """The views that do not depend on the selected session.

    The navigator's rows (sorted as shown), the problems list, the facts table (sorted
    and filtered as shown) and the status bar's counts.
    """
    return {
        "navigator": model_rows(_view_model(window, "navigator.tree")),
        "problems": model_rows(_view_model(window, "problem_view", "problems")),
        "facts": model_rows(_view_model(window, "facts_view.table", "facts_view.model")),
        "counts": _text(window, "counts_label"),
    }


def timeline_data(timeline: Any) -> dict[str, Any] | None:
    """A :class:`core.timeline.arrays.Timeline` as lists (NaN as a string)."""
    if timeline is None:
        return None
    out: dict[str, Any] = {}
    for f in dataclasses.fields(timeline):
        value = getattr(timeline, f.name)
        if hasattr(value, "tolist"):
            value = [_cell(v) for v in value.tolist()]
        elif isinstance(value, tuple):
            value = [repr(v) for v in value]
        out[f.name] = _cell(value) if not isinstance(value, list) else value
    return out


def session_views(window: Any) -> dict[str, Any]:
    """The views of the selected session: timeline arrays, message text, context rows."""
    view = getattr(window, "timeline", None)
    timeline = view.timeline() if view is not None and hasattr(view, "timeline") else None
    message = getattr(window, "message_view", None)
    return {
        "timeline": timeline_data(timeline),
        "message": message.plain_text() if message is not None else None,
        "context": model_rows(
            _view_model(window, "context_view.table", "context_view.view", "context_view.tree")
        ),
    }


def diff(live: Any, fresh: Any, where: str = "", limit: int = 20) -> list[str]:
    """Where *live* and *fresh* differ, as short sentences (at most *limit*)."""
    out: list[str] = []

    def walk(a: Any, b: Any, path: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b), key=str):
                if key not in a or key not in b:
                    out.append(f"{path}/{key}: only in {'fresh' if key in b else 'live'}")
                else:
                    walk(a[key], b[key], f"{path}/{key}")
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                out.append(f"{path}: {len(a)} rows live, {len(b)} fresh")
            for i, (x, y) in enumerate(zip(a, b, strict=False)):
                if x != y:
                    walk(x, y, f"{path}[{i}]")
                    if len(out) >= limit:
                        return
        elif a != b:
            out.append(f"{path}: live {_short(a)} != fresh {_short(b)}")

    walk(live, fresh, where)
    return out


def _short(value: Any, width: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."
