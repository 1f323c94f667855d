"""OpenClaw's transcript tree (session header version 4, OpenClaw 2026.9+).

A port of ``scanSessionTranscriptNavigation`` (OpenClaw 2026.9.6,
``src/config/sessions/transcript-tree.ts``; docs/notes/openclaw-context.md §2), fed one
entry at a time in file order, so that a session loaded whole and one extended by live
mode agree. Where pi follows each entry's recorded ``parentId`` and takes the last
entry as the leaf, OpenClaw:

* moves the leaf with each of the ten canonical entry types, except those appended
  with ``appendMode: "side"``;
* reads ``leaf`` rows ``{targetId, appendParentId?, appendMode?}`` as navigation: the
  leaf moves to ``targetId``, the row is never on a path, and an entry naming the row
  as its parent hangs off the target (an unknown target makes the row invalid);
* re-parents onto the current leaf an entry whose parent is unknown, an entry appended
  on a side entry while the leaf is elsewhere, and, after a ``reset``, any entry whose
  parent is not the reset or below it;
* hangs a canonical entry without ``parentId`` off the current leaf; a non-canonical
  one without ``parentId`` is not in the tree at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

CANONICAL_TYPES: Final = frozenset(
    {
        "message", "thinking_level_change", "model_change", "compaction", "reset",
        "branch_summary", "custom", "custom_message", "label", "session_info",
    }
)  # fmt: skip
_UNSET: Final = object()
"""A node that does not move the leaf (``leafId`` undefined in OpenClaw)."""


def _blank(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def is_canonical(rec: dict[str, Any]) -> bool:
    """One of the ten entry types OpenClaw's tree knows."""
    return rec.get("type") in CANONICAL_TYPES


def is_leaf_control(rec: dict[str, Any]) -> bool:
    """A well-formed ``leaf`` navigation row."""
    return rec.get("type") == "leaf" and _parse(rec) is not None


@dataclass(slots=True)
class _Node:
    id: str
    parent: str | None
    leaf: Any  # str | None | _UNSET
    append_parent: str | None
    side: bool
    control: bool


def _parse(rec: dict[str, Any]) -> _Node | None:
    """``parseSessionTranscriptTreeEntry``: a row with an id and a ``parentId`` key."""
    if rec.get("type") == "session" or "parentId" not in rec:
        return None
    entry_id = _blank(rec.get("id"))
    raw_parent = rec.get("parentId")
    parent = None if raw_parent is None else _blank(raw_parent)
    if entry_id is None or (raw_parent is not None and parent is None):
        return None
    if rec.get("type") == "leaf":
        raw_target = rec.get("targetId", _UNSET)
        target = None if raw_target is None else _blank(raw_target)
        if raw_target is _UNSET or (raw_target is not None and target is None):
            return None
        raw_append = rec.get("appendParentId", _UNSET)
        if raw_append is _UNSET:
            append: str | None = target
        elif raw_append is None:
            append = None
        else:
            append = _blank(raw_append)
            if append is None:
                return None
        mode = rec.get("appendMode", _UNSET)
        if mode is not _UNSET and mode != "side":
            return None
        return _Node(entry_id, target, target, append, mode == "side", True)
    side = rec.get("appendMode") == "side"
    leaf = entry_id if is_canonical(rec) and not side else _UNSET
    return _Node(entry_id, parent, leaf, entry_id, side, False)


@dataclass(slots=True)
class OpenClawTree:
    """The navigation state after the entries fed so far."""

    leaf: str | None = None
    """The active leaf (None: before any entry, or a ``leaf`` row naming null)."""
    append_parent: str | None = None
    latest_reset: str | None = None
    nodes: dict[str, _Node] = field(default_factory=dict)
    reset_descendants: set[str] = field(default_factory=set)
    invalid: set[str] = field(default_factory=set)
    """``leaf`` rows whose target is unknown: ignored."""

    def _known(self, ref: str | None) -> bool:
        return ref is None or (ref in self.nodes and ref not in self.invalid)

    def _resolve(self, parent: str | None) -> str | None:
        """``resolveCanonicalParentId``: through ``leaf`` rows to their targets."""
        seen: set[str] = set()
        current = parent
        while current is not None:
            if current in seen:
                return current
            node = self.nodes.get(current)
            if node is None or not node.control:
                return current
            seen.add(current)
            current = node.parent
        return None

    def feed(self, rec: dict[str, Any]) -> tuple[bool, str | None]:
        """Take the next row; returns ``(in the tree, its parent in the tree)``."""
        explicit = _parse(rec)
        control = explicit is not None and explicit.control
        if (
            self.latest_reset is not None
            and self.leaf is not None
            and explicit is not None
            and control
            and explicit.leaf is not _UNSET
            and (explicit.leaf is None or explicit.leaf not in self.reset_descendants)
        ):
            explicit.parent = explicit.leaf = explicit.append_parent = self.leaf
        if (
            explicit is not None
            and control
            and explicit.leaf is not _UNSET
            and (not self._known(explicit.leaf) or not self._known(explicit.append_parent))
        ):
            self.invalid.add(explicit.id)
            raw_parent = rec.get("parentId")
            explicit.parent = raw_parent if isinstance(raw_parent, str) else None
            explicit.leaf = _UNSET
            explicit.append_parent = self.append_parent
            self.nodes[explicit.id] = explicit
            return True, explicit.parent
        node = explicit
        if node is None and is_canonical(rec) and "parentId" not in rec:
            entry_id = _blank(rec.get("id"))
            if entry_id is not None:
                side = rec.get("appendMode") == "side"
                leaf = _UNSET if side else entry_id
                node = _Node(entry_id, self.leaf, leaf, entry_id, side, False)
        if node is None:
            return False, None
        if is_canonical(rec):
            stale = (
                explicit is not None
                and node.parent is not None
                and node.parent not in self.nodes
                and self.leaf is not None
            )
            if (
                self.latest_reset is not None
                and not node.side
                and (node.parent is None or node.parent not in self.reset_descendants)
            ):
                wanted = self.leaf
            elif not node.side and stale:
                wanted = self.leaf
            elif (
                explicit is not None
                and not node.side
                and node.parent == self.append_parent
                and self.leaf != self.append_parent
            ):
                wanted = self.leaf
            else:
                wanted = node.parent
            node.parent = self._resolve(wanted)
        self.nodes[node.id] = node
        if rec.get("type") == "reset":
            self.latest_reset = node.id
            self.reset_descendants = {node.id}
        elif (
            self.latest_reset is not None
            and node.parent is not None
            and node.parent in self.reset_descendants
        ):
            self.reset_descendants.add(node.id)
        self.append_parent = node.append_parent
        if node.leaf is not _UNSET:
            self.leaf = node.leaf
        return True, node.parent
