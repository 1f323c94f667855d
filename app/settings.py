"""What memlens remembers between runs, kept in QSettings.

Only the app reads settings; widgets are handed values. Keys are grouped so a
user can find them in the settings file (``memlens/memlens.ini`` under the
user's configuration directory).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, QSettings

if TYPE_CHECKING:
    from collections.abc import Iterable

MAX_RECENT = 10
THEMES = ("system", "light", "dark")


def default_settings() -> QSettings:
    """The user's memlens settings (organisation and application ``memlens``)."""
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "memlens", "memlens")


class AppSettings:
    """Typed access to the few values memlens persists."""

    def __init__(self, store: QSettings | None = None) -> None:
        self.store = store if store is not None else default_settings()

    def _list(self, key: str) -> list[str]:
        value: Any = self.store.value(key, [])
        if isinstance(value, str):  # QSettings returns a lone item as a string
            return [value] if value else []
        return [str(v) for v in value or []]

    @property
    def recent(self) -> list[str]:
        """Recently opened places, newest first."""
        return self._list("places/recent")

    def add_recent(self, path: str) -> list[str]:
        """Put *path* first in the recent list (no duplicates, at most MAX_RECENT)."""
        places = [path, *(p for p in self.recent if p != path)][:MAX_RECENT]
        self.store.setValue("places/recent", places)
        self.store.setValue("places/last", path)
        return places

    def remove_recent(self, path: str) -> None:
        """Forget *path* (it no longer exists, or the user cleared it)."""
        self.store.setValue("places/recent", [p for p in self.recent if p != path])

    def clear_recent(self) -> None:
        """Forget every recent place."""
        self.store.setValue("places/recent", [])

    @property
    def last_place(self) -> str:
        """The data directory or transcript opened last ("" if none)."""
        return str(self.store.value("places/last", "") or "")

    @property
    def theme(self) -> str:
        """``system``, ``light`` or ``dark``."""
        value = str(self.store.value("view/theme", "system"))
        return value if value in THEMES else "system"

    @theme.setter
    def theme(self, value: str) -> None:
        self.store.setValue("view/theme", value if value in THEMES else "system")

    def blob(self, key: str) -> QByteArray | None:
        """A saved geometry or state blob, or None."""
        value = self.store.value(f"layout/{key}")
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def set_blob(self, key: str, value: QByteArray) -> None:
        """Save a geometry or state blob."""
        self.store.setValue(f"layout/{key}", value)

    def value(self, key: str, default: Any = None) -> Any:
        """Any other setting (``recall/minScore``, ``trim/window`` …)."""
        return self.store.value(key, default)

    def set_values(self, pairs: Iterable[tuple[str, Any]]) -> None:
        """Store several settings at once."""
        for key, value in pairs:
            self.store.setValue(key, value)

    def sync(self) -> None:
        """Write pending changes to disk."""
        self.store.sync()
