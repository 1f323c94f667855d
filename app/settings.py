"""What memlens remembers between runs, kept in QSettings.

Only the app reads settings; widgets are handed values. Keys are grouped so a
user can find them in the settings file (``memlens/memlens.ini`` under the
user's configuration directory). No secret is ever kept there: a file that holds
one (an old ``llm/apiKey``, a provider's ``"apiKey"``, a URL with a password) is
cleaned by :meth:`AppSettings.clean_secrets` as soon as it is opened.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, QSettings

from core.io import jsonio
from core.safety.secrets import (
    has_key_shape,
    is_blank_after_scrub,
    is_secret_name,
    looks_like_secret,
    scrub,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

log = logging.getLogger(__name__)

MAX_RECENT = 10
THEMES = ("system", "light", "dark")
_REMOVE = object()  # a cleaned value that is dropped whole


def _is_place(text: str) -> bool:
    """An existing file or folder with no key shape in its name (a hex run is no key)."""
    path = os.path.expanduser(text)
    return os.path.isabs(path) and not has_key_shape(text) and os.path.exists(path)


def _clean_text(text: str) -> object:
    """*text* (unchanged), its scrubbed form, or :data:`_REMOVE` when all of it is secret."""
    if not looks_like_secret(text) or _is_place(text):
        return text
    return _REMOVE if is_blank_after_scrub(text) else scrub(text)


def _clean_json(obj: Any) -> Any:
    """*obj* (parsed JSON) without secret-named members and with key-shaped text scrubbed."""
    if isinstance(obj, dict):
        out: dict[Any, Any] = {}
        for name, value in obj.items():
            if _secret_member(str(name), value):
                continue
            if isinstance(value, str):
                keep = not looks_like_secret(value) or _is_place(value)
                out[name] = value if keep else scrub(value)
            else:
                out[name] = _clean_json(value)
        return out
    if isinstance(obj, list):
        items = [_clean_text(v) if isinstance(v, str) else _clean_json(v) for v in obj]
        return [v for v in items if v is not _REMOVE]
    return obj


def _secret_member(name: str, value: Any) -> bool:
    """A member named like a secret (``apiKey``, ``password``) that holds a value."""
    if not is_secret_name(name) or value is None or isinstance(value, bool | int | float):
        return False
    return not isinstance(value, str) or _is_not_number(value)


def _is_not_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return bool(text.strip())
    return False


def clean_value(key: str, value: Any) -> Any:
    """*value* of setting *key* without secrets: itself, a cleaned copy, or ``_REMOVE``."""
    if isinstance(value, QByteArray | bytes):
        raw = value.data() if isinstance(value, QByteArray) else value
        text = bytes(raw).decode("latin-1")
        return _REMOVE if looks_like_secret(text) else value
    if isinstance(value, list):  # a list of places: an item holding a secret goes whole
        kept = [v for v in value if clean_value("", v) == v]
        return kept if kept != value else value
    if isinstance(value, dict):
        return _clean_json(value)
    if not isinstance(value, str):
        return value
    if key and _secret_member(key, value):
        return _REMOVE
    if value.lstrip()[:1] in ("{", "["):
        try:
            parsed = jsonio.loads(value)
        except ValueError:
            pass
        else:
            if isinstance(parsed, dict | list):
                cleaned = _clean_json(parsed)
                return value if cleaned == parsed else jsonio.dumps(cleaned).decode("utf-8")
    return _clean_text(value)


def secrets_warning(cleaned: list[str], path: str = "", *, saved: bool = True) -> str:
    """What to tell the user after :meth:`AppSettings.clean_secrets` cleaned *cleaned*."""
    where = f" ({path})" if path else ""
    done = (
        "memlens removed it and saved the file."
        if saved
        else "memlens removed it but could not rewrite the file: remove it there by hand."
    )
    return (
        f"The settings file{where} held what looks like an API key or password in: "
        f"{', '.join(cleaned)}. {done} Keys are never stored there: keep them in an "
        "environment variable or the OS keychain (Settings, LLM providers)."
    )


def default_settings() -> QSettings:
    """The user's memlens settings (organisation and application ``memlens``)."""
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "memlens", "memlens")


class AppSettings:
    """Typed access to the few values memlens persists.

    The settings file is cleaned of secrets as it is opened
    (:meth:`clean_secrets`); :meth:`take_cleaned` tells what was removed, once,
    for the warning the app shows.
    """

    def __init__(self, store: QSettings | None = None) -> None:
        self.store = store if store is not None else default_settings()
        self._cleaned: list[str] = []
        self.clean_secrets()

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

    def forget_layout(self) -> None:
        """Drop the saved window geometry, dock state and splitter (View > Reset Layout)."""
        for key in ("geometry", "state", "splitter"):
            self.store.remove(f"layout/{key}")

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

    @property
    def file_name(self) -> str:
        """The settings file's path."""
        return str(self.store.fileName())

    def take_cleaned(self) -> list[str]:
        """The keys cleaned since the last call (so each warning is shown once)."""
        cleaned, self._cleaned = self._cleaned, []
        return cleaned

    def clean_secrets(self) -> list[str]:
        """Remove every secret the settings file holds, and rewrite the file at once.

        Every value of every key is checked: a key named like a secret
        (``llm/apiKey``) is removed; JSON values lose their secret-named members
        (``"apiKey": ...``) and have key-shaped text masked; a URL keeps its host
        but loses its password and ``?key=`` / ``?api_key=`` values; any other
        key-shaped value is masked, or removed when nothing else is left.

        Returns
        -------
        list[str]
            The keys that were cleaned (empty when the file held no secret). The
            log names them, never what they held.
        """
        self.store.sync()  # read what another program wrote to the file meanwhile
        cleaned: list[str] = []
        for key in self.store.allKeys():
            if looks_like_secret(key):  # a secret pasted as a key's name
                self.store.remove(key)
                cleaned.append(scrub(key))
                continue
            value = self.store.value(key)
            new = clean_value(key, value)
            if new is value or (new is not _REMOVE and new == value):
                continue
            if new is _REMOVE:
                self.store.remove(key)
            else:
                self.store.setValue(key, new)
            cleaned.append(key)
        if cleaned:
            self._cleaned.extend(k for k in cleaned if k not in self._cleaned)
            self.store.sync()
            log.warning(
                "the settings file %s held what looks like a secret in %s; it was removed%s",
                self.file_name,
                ", ".join(cleaned),
                "" if self.writable else " (but the file could not be rewritten)",
            )
        return cleaned

    @property
    def writable(self) -> bool:
        """Whether the last write to the settings file worked."""
        return bool(self.store.status() == QSettings.Status.NoError and self.store.isWritable())
