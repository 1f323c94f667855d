"""Reading what a view shows through public Qt API (tests never ask views for private state)."""

from __future__ import annotations

from typing import Any

from widgets.common.record_model import RecordRole


def shown_records(proxy: Any) -> list[Any]:
    """The records a table's model (usually its sort/filter proxy) shows, in display order."""
    return [proxy.index(row, 0).data(RecordRole) for row in range(proxy.rowCount())]
