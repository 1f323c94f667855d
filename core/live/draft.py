"""What live mode's read phase prepared for a session, not yet attached to it.

The read phase (see :mod:`core.live.follow`) builds a session's new entries in a
worker while the views may read the session. A :class:`SessionDraft` lets it do so
without changing the session: lookups see the session's entries and the new ones not
yet attached; OpenClaw's tree (version 4) is fed through a *fork* that reads the
session's tree and writes only its own layer, returned as a :class:`TreeDelta` that the
apply step attaches. :meth:`SessionDraft.shadow` is the session as it will be after the
apply (a new object sharing the unchanged parts), for the session summary.
"""

from __future__ import annotations

from collections import ChainMap
from dataclasses import dataclass, field, replace
from itertools import chain
from typing import TYPE_CHECKING, Any, cast

from core.live.announce import session_label
from core.transcript.openclaw_tree import OpenClawTree

if TYPE_CHECKING:
    from collections.abc import Container

    from core.transcript.model import Entry, Session


class _SetOverlay:
    """A set read through to *base*, written to its own :attr:`added` (what a fork adds)."""

    __slots__ = ("added", "base")

    def __init__(self, base: Container[str]) -> None:
        self.base = base
        self.added: set[str] = set()

    def __contains__(self, item: object) -> bool:
        return item in self.added or item in self.base

    def add(self, item: str) -> None:
        self.added.add(item)


def fork_tree(base: OpenClawTree) -> OpenClawTree:
    """A tree that reads *base* and writes only its own layer (see :func:`tree_delta`).

    ``OpenClawTree.feed`` only asks its node map and sets for membership, looks nodes
    up, adds to them and replaces ``reset_descendants``; it never changes a node it
    did not create.
    """
    return OpenClawTree(
        leaf=base.leaf,
        append_parent=base.append_parent,
        latest_reset=base.latest_reset,
        nodes=cast("dict[str, Any]", ChainMap({}, base.nodes)),
        reset_descendants=cast("set[str]", _SetOverlay(base.reset_descendants)),
        invalid=cast("set[str]", _SetOverlay(base.invalid)),
    )


@dataclass(slots=True)
class TreeDelta:
    """What a fork of a session's tree added: attached by the apply step."""

    leaf: str | None
    append_parent: str | None
    latest_reset: str | None
    nodes: dict[str, Any]
    reset_descendants: set[str]
    reset_replaced: bool
    """A ``reset`` row started a new set: :attr:`reset_descendants` replaces the tree's."""
    invalid: set[str]

    def attach(self, tree: OpenClawTree) -> None:
        """Make *tree* what the fork was (dictionary and set updates, no checks)."""
        tree.nodes.update(self.nodes)
        if self.reset_replaced:
            tree.reset_descendants = self.reset_descendants
        else:
            tree.reset_descendants.update(self.reset_descendants)
        tree.invalid.update(self.invalid)
        tree.leaf = self.leaf
        tree.append_parent = self.append_parent
        tree.latest_reset = self.latest_reset


def tree_delta(fork: OpenClawTree) -> TreeDelta:
    """The layer *fork* (from :func:`fork_tree`) wrote."""
    nodes = cast("dict[str, Any]", cast("ChainMap[str, Any]", fork.nodes).maps[0])
    resets: object = fork.reset_descendants
    invalid = cast("_SetOverlay", fork.invalid).added
    replaced = not isinstance(resets, _SetOverlay)
    added = cast("set[str]", resets) if replaced else cast("_SetOverlay", resets).added
    return TreeDelta(
        fork.leaf, fork.append_parent, fork.latest_reset, nodes, added, replaced, invalid
    )


@dataclass(slots=True)
class SessionDraft:
    """A session's entries built by one read phase and not attached yet, in order."""

    session: Session
    entries: list[Entry] = field(default_factory=list)
    by_id: dict[str, Entry] = field(default_factory=dict)
    children: list[tuple[str | None, str]] = field(default_factory=list)
    """``(parent key in Session.children, entry id)`` of each new entry."""
    tree: OpenClawTree | None = None
    """The newest fork of the session's tree (None: not forked yet)."""
    fields: dict[str, Any] = field(default_factory=dict)
    """Session fields the apply steps will set (``size``, the database cursors)."""

    def get(self, entry_id: str) -> Entry | None:
        """The entry with this id, new or attached (the newest wins, as in ``by_id``)."""
        found = self.by_id.get(entry_id)
        return found if found is not None else self.session.by_id.get(entry_id)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self.by_id or entry_id in self.session.by_id

    def current_tree(self) -> OpenClawTree | None:
        """The tree as it stands after the new entries (None for pi)."""
        return self.tree if self.tree is not None else self.session.tree

    def leaf(self) -> Entry | None:
        """``Session.leaf`` after the new entries."""
        tree = self.current_tree()
        if tree is not None:
            return self.get(tree.leaf) if tree.leaf is not None else None
        for e in reversed(self.entries):
            if not e.recovered:
                return e
        return self.session.leaf

    def add(self, entry: Entry) -> None:
        """Take a new entry (what ``Session`` will do when it is attached)."""
        self.entries.append(entry)
        self.by_id[entry.id] = entry
        up = self.get(entry.parent_id) if entry.parent_id is not None else None
        parent = up.id if up is not None and (entry.recovered or not up.recovered) else None
        self.children.append((parent, entry.id))

    def label(self) -> str:
        """The session's label for announcements, its new entries included."""
        newest = chain(reversed(self.entries), reversed(self.session.entries))
        return session_label(self.session.id, newest)

    def shadow(self) -> Session:
        """The session as it will be once the apply steps ran (a new object).

        Lists and maps the session holds are copied, never changed; unchanged
        entries, nodes and the header are shared (read only).
        """
        s = self.session
        if not self.entries and self.tree is None and not self.fields:
            return s
        children = dict(s.children)
        copied: set[str | None] = set()
        for key, entry_id in self.children:
            if key not in copied:
                children[key] = list(children.get(key, ()))
                copied.add(key)
            children[key].append(entry_id)
        by_id = dict(s.by_id)
        by_id.update(self.by_id)
        return replace(
            s,
            entries=[*s.entries, *self.entries],
            problems=[],
            by_id=by_id,
            children=children,
            tree=self.current_tree(),
            **self.fields,
        )
