"""Set one recall setting of ``openclaw.json`` in place: previewed, checked, backed up.

The recall lab proves settings; :func:`plan_setting` turns one of them into an edit of
the agent's config, one key path at a time: the new text differs from the old only at
that value (or by the member inserted into the section), so comments, order, quoting
and indentation stay (:mod:`core.openclaw.config_spans`). A config without the section
is refused: only a memory-context agent reads it, and current OpenClaw (2026.9.6,
``openclaw config validate``) rejects ``agents.defaults.memoryContext`` as an
unrecognized key, so adding it could stop that agent. The plan is checked
before anything is written: the new text must read back (pyjson5, as memlens and
OpenClaw read it) with that key at the new value, every other value unchanged, and
no validation error the old text did not have. :func:`apply_setting` writes it
atomically, after a verified backup, and only if the file is still the one read.

Only the keys the agent's recall reads are offered (:data:`RECALL_KEYS`). The seed
formula's weights (0.7 / 0.3) and decay (0.995 a day) are constants of the agent's
code, not settings: memory-context validates its section strictly, and an unknown
key there is an error, so memlens never writes one.
"""

from __future__ import annotations

import copy
import difflib
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from core.io.fsutil import Identity, atomic_write, file_identity, next_backup_path, read_file
from core.io.problems import FormatError
from core.openclaw.config import build_openclaw_config
from core.openclaw.config_json5 import decode_json5
from core.openclaw.config_spans import indent_of, object_spans

SECTION = ("agents", "defaults", "memoryContext")
RECALL_KEYS: dict[str, type] = {
    "autoRecallMinScore": float,
    "hardCapTokens": int,
    "crossSession": bool,
    "evictionDays": int,
}
"""The memoryContext keys the agent's recall reads, and their types."""
_IDENT = re.compile(r"[A-Za-z_$][\w$]*\Z")


class ConfigEditError(ValueError):
    """The setting cannot be planned or written (the message says why; nothing written)."""


@dataclass(frozen=True, slots=True)
class SettingEdit:
    """One planned change of ``openclaw.json``."""

    path: Path
    key_path: tuple[str, ...]
    old_value: Any
    """The value read (None: the key was absent, so the agent's default applied)."""
    new_value: Any
    old_text: str
    new_text: str
    identity: Identity | None
    backup: Path
    """Where :func:`apply_setting` will keep the old file."""

    @property
    def dotted(self) -> str:
        """``agents.defaults.memoryContext.autoRecallMinScore``."""
        return ".".join(self.key_path)

    def diff(self) -> str:
        """The change as a unified diff of the file."""
        lines = difflib.unified_diff(
            self.old_text.splitlines(keepends=True),
            self.new_text.splitlines(keepends=True),
            f"{self.path.name} (now)",
            f"{self.path.name} (after)",
        )
        # a last line without its newline ends its diff line too, as diff says it
        return "".join(
            x if x.endswith("\n") else f"{x}\n\\ No newline at end of file\n" for x in lines
        )


def literal(value: Any) -> str:
    """*value* as a JSON5 literal (numbers as the shortest exact decimal)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigEditError(f"{value} is not a setting value")
    return orjson.dumps(value).decode()


def coerce(key: str, value: Any) -> Any:
    """*value* as the type the agent reads for *key*.

    Raises
    ------
    ConfigEditError
        For a key the agent's recall does not read, or a value of the wrong kind.
    """
    kind = RECALL_KEYS.get(key)
    if kind is None:
        known = ", ".join(RECALL_KEYS)
        raise ConfigEditError(f"{key!r} is not a recall setting of memoryContext ({known})")
    try:
        if kind is bool:
            if isinstance(value, str):
                if value.lower() not in ("true", "false"):
                    raise ValueError(value)
                return value.lower() == "true"
            return bool(value)
        out = kind(float(value)) if kind is int else kind(value)
    except (TypeError, ValueError):
        raise ConfigEditError(f"{key}: {value!r} is not a {kind.__name__}") from None
    if kind is int and float(value) != out:
        raise ConfigEditError(f"{key}: {value!r} is not a whole number")
    if key == "autoRecallMinScore" and not 0 <= out <= 1:
        raise ConfigEditError(f"{key}: {out} is outside 0..1")
    if kind is int and out <= 0:
        raise ConfigEditError(f"{key}: {out} must be above 0")
    return out


def _key(name: str) -> str:
    return name if _IDENT.match(name) else orjson.dumps(name).decode()


def splice(text: str, key_path: tuple[str, ...], value: Any) -> str:
    """*text* with the member at *key_path* set to *value*, everything else as it was."""
    obj, missing = object_spans(text, key_path[:-1])
    key = key_path[-1]
    if not missing and key in obj.members:
        _, start, end = obj.members[key]
        return text[:start] + literal(value) + text[end:]
    snippet = f"{_key(key)}: {literal(value)}"
    for name in reversed(missing):
        snippet = f"{_key(name)}: {{ {snippet} }}"
    if obj.first_member is not None:
        lead = text[obj.open + 1 : obj.first_member]
        sep = lead if "\n" in lead else " "
        return text[: obj.first_member] + snippet + "," + sep + text[obj.first_member :]
    inner = text[obj.open + 1 : obj.close]
    pad = "\n" + indent_of(text, obj.open) if "\n" in inner else " "
    return text[: obj.open + 1] + " " + snippet + pad + text[obj.open + 1 :].lstrip(" ")


def _without(raw: Any, key_path: tuple[str, ...]) -> Any:
    out = copy.deepcopy(raw)
    node = out
    for name in key_path[:-1]:
        if not isinstance(node, dict) or not isinstance(node.get(name), dict):
            return out
        node = node[name]
    if isinstance(node, dict):
        node.pop(key_path[-1], None)
    return out


def _at(raw: Any, key_path: tuple[str, ...]) -> Any:
    node = raw
    for name in key_path:
        if not isinstance(node, dict) or name not in node:
            return None
        node = node[name]
    return node


def _prune(raw: Any) -> Any:
    """*raw* without empty objects (a section created for the key leaves one)."""
    if isinstance(raw, dict):
        kept = {k: _prune(v) for k, v in raw.items()}
        return {k: v for k, v in kept.items() if v != {}}
    return raw


def plan_setting(config: str | os.PathLike[str], key: str, value: Any) -> SettingEdit:
    """Plan setting ``agents.defaults.memoryContext.<key>`` of *config* to *value*.

    Raises
    ------
    ConfigEditError
        For a key or value the agent does not take, or a plan that would change
        anything but that value (nothing is written).
    FormatError
        When the file cannot be read or is not JSON5 (its line and column).
    """
    path = Path(config)
    new_value = coerce(key, value)
    identity = file_identity(path)
    data = read_file(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(os.fspath(path), f"invalid UTF-8 at byte {exc.start + 1}") from None
    key_path = (*SECTION, key)
    raw, _ = decode_json5(text, os.fspath(path), data)
    if not isinstance(raw, dict):
        raise FormatError(os.fspath(path), "the top level is not an object")
    for n in range(1, len(SECTION) + 1):
        above = _at(raw, SECTION[:n])
        if above is not None and not isinstance(above, dict):
            raise ConfigEditError(f"{'.'.join(SECTION[:n])} is not an object in {path.name}")
    if _at(raw, SECTION) is None:
        # Only a memory-context agent reads this section; current OpenClaw (2026.9+)
        # rejects the key ("agents.defaults: Unrecognized key"), so adding it could stop
        # that agent from starting. memlens writes only into a section already there.
        raise ConfigEditError(
            f"{path.name} has no agents.defaults.memoryContext section: only a memory-context"
            " agent reads it, and current OpenClaw rejects the key, so memlens does not add it"
            " (add the section yourself if your agent has memory-context)"
        )
    new_text = splice(text, key_path, new_value)
    new_raw, _ = decode_json5(new_text, os.fspath(path))
    if _at(new_raw, key_path) != new_value or type(_at(new_raw, key_path)) is not type(new_value):
        raise ConfigEditError(f"{'.'.join(key_path)} would not read back as {new_value!r}")
    if _prune(_without(new_raw, key_path)) != _prune(_without(raw, key_path)):
        raise ConfigEditError("the edit would change other values of the file; nothing planned")
    old_errors = {p.message for p in build_openclaw_config(raw, text, path.name).errors}
    new_errors = build_openclaw_config(new_raw, new_text, path.name).errors
    added = [p.message for p in new_errors if p.message not in old_errors]
    if added:
        raise ConfigEditError(f"the agent would reject the new value: {added[0]}")
    old_value = _at(raw, key_path)
    return SettingEdit(
        path, key_path, old_value, new_value, text, new_text, identity, next_backup_path(path)
    )


def apply_setting(edit: SettingEdit) -> Path | None:
    """Write *edit*: atomic, after a verified backup; returns the backup.

    Raises
    ------
    FileChangedError
        When the file changed since it was planned (nothing written): plan again.
    OSError
        When it cannot be written (the old file stays).
    """
    if edit.old_text == edit.new_text:
        return None
    return atomic_write(
        edit.path, edit.new_text.encode("utf-8"), expect=edit.identity, backup_name=edit.backup
    )
