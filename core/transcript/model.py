"""Records of a loaded transcript: one model for pi v1, v2 and v3 files."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from core.problems import Problem

NON_MESSAGE_TYPES = frozenset(
    {"custom", "label", "session_info", "model_change", "thinking_level_change"}
)
"""Entry types that never become messages the model sees."""


@dataclass(frozen=True, slots=True)
class Block:
    """One content block, normalised across pi, Anthropic and OpenAI shapes.

    ``kind`` is one of ``text``, ``thinking``, ``image``, ``tool_call``,
    ``tool_result`` or ``other`` (kept raw).
    """

    kind: str
    text: str = ""
    tool_id: str = ""
    name: str = ""
    arguments: Any = None
    is_error: bool = False
    mime: str = ""
    size: int = 0
    """Decoded bytes of an image (estimated from its base64 length)."""
    images: int = 0
    """Images inside a ``tool_result`` block."""
    raw: Any = None


@dataclass(frozen=True, slots=True)
class Message:
    """A message as the agent keeps it, with normalised role and blocks.

    ``role`` is one of ``user``, ``assistant``, ``toolResult``,
    ``bashExecution``, ``custom``, ``branchSummary``, ``compactionSummary``,
    ``system``, or the file's own role when unknown. ``raw`` is the message
    exactly as in the file.
    """

    role: str
    blocks: tuple[Block, ...]
    raw: dict[str, Any]
    timestamp: int | None = None
    tool_call_id: str = ""
    tool_name: str = ""
    is_error: bool = False
    usage: dict[str, Any] | None = None
    stop_reason: str = ""
    model: str = ""
    provider: str = ""
    source_role: str = ""
    """The role as written in the file, when normalisation changed it."""

    def text(self) -> str:
        """Plain text of the message (text and tool-result blocks)."""
        parts = [b.text for b in self.blocks if b.kind in ("text", "tool_result") and b.text]
        return "\n".join(parts)

    def tool_calls(self) -> tuple[Block, ...]:
        """The tool-call blocks of the message."""
        return tuple(b for b in self.blocks if b.kind == "tool_call")

    def result_ids(self) -> tuple[str, ...]:
        """Ids of the tool calls this message answers."""
        ids = [b.tool_id for b in self.blocks if b.kind == "tool_result" and b.tool_id]
        if self.role == "toolResult" and self.tool_call_id and self.tool_call_id not in ids:
            ids.insert(0, self.tool_call_id)
        return tuple(ids)


@dataclass(frozen=True, slots=True)
class Entry:
    """One object of the transcript after the header.

    ``index`` is the object's position in file order with the header as 0 and
    each object of a run-together line counted (the ``#N`` of the CLI).
    """

    index: int
    line: int
    offset: int
    type: str
    id: str
    parent_id: str | None
    timestamp: str
    raw: dict[str, Any]
    message: Message | None = None
    """The message this entry puts in context (None for non-message types)."""
    synthetic_id: bool = False
    """True when the id was derived by memlens (v1 files, damaged entries)."""


@dataclass(frozen=True, slots=True)
class ToolPair:
    """A tool call and the entries holding its results."""

    call_id: str
    name: str
    call_entry: str | None
    result_entries: tuple[str, ...]
    is_error: bool


@dataclass(slots=True)
class Session:
    """A loaded transcript: header, entries in file order and the id tree."""

    path: str
    header: dict[str, Any]
    version: int
    entries: list[Entry]
    problems: list[Problem] = field(default_factory=list)
    size: int = 0
    by_id: dict[str, Entry] = field(default_factory=dict)
    children: dict[str | None, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.by_id:
            self.by_id = {e.id: e for e in self.entries}
        if not self.children:
            kids: dict[str | None, list[str]] = {}
            for e in self.entries:
                parent = e.parent_id if e.parent_id in self.by_id else None
                kids.setdefault(parent, []).append(e.id)
            self.children = kids

    @property
    def id(self) -> str:
        """The session id from the header."""
        return str(self.header.get("id", ""))

    @property
    def leaf(self) -> Entry | None:
        """The current leaf: the last entry in file order."""
        return self.entries[-1] if self.entries else None

    def entry(self, ref: str) -> Entry:
        """Find an entry by id or by ``#N`` (object index, header = ``#0``).

        Raises
        ------
        KeyError
            With a message naming what was not found.
        """
        if ref.startswith("#"):
            try:
                n = int(ref[1:])
            except ValueError:
                raise KeyError(f"bad entry reference {ref!r}: use an id or #N") from None
            if n == 0:
                raise KeyError("#0 is the session header, not an entry")
            for e in self.entries:
                if e.index == n:
                    return e
            raise KeyError(f"no object #{n} in {self.path} (it has {self.object_count()} objects)")
        found = self.by_id.get(ref)
        if found is None:
            raise KeyError(f"no entry with id {ref!r} in {self.path}")
        return found

    def object_count(self) -> int:
        """Objects in file order, header included."""
        return (self.entries[-1].index + 1) if self.entries else 1

    def path_to(self, entry_id: str) -> list[Entry]:
        """Entries from the root to *entry_id*, following ``parentId``."""
        path: list[Entry] = []
        seen: set[str] = set()
        current = self.by_id.get(entry_id)
        while current is not None and current.id not in seen:
            seen.add(current.id)
            path.append(current)
            current = self.by_id.get(current.parent_id) if current.parent_id else None
        path.reverse()
        return path

    def leaves(self) -> list[Entry]:
        """Entries with no children: one per branch, in file order."""
        return [e for e in self.entries if not self.children.get(e.id)]

    def branch_points(self) -> list[Entry]:
        """Entries with more than one child."""
        return [self.by_id[k] for k, v in self.children.items() if k is not None and len(v) > 1]

    def messages(self) -> list[Entry]:
        """Entries that carry a message, in file order."""
        return [e for e in self.entries if e.message is not None and e.type != "compaction"]

    def role_counts(self) -> dict[str, int]:
        """How many ``message`` entries of each role the file holds."""
        counts = Counter(e.message.role for e in self.entries if e.type == "message" and e.message)
        return dict(sorted(counts.items()))

    def compaction_entries(self) -> list[Entry]:
        """Compaction entries in file order."""
        return [e for e in self.entries if e.type == "compaction"]

    def tool_pairs(self) -> dict[str, ToolPair]:
        """Tool calls paired with their results, keyed by call id.

        A result whose call is missing appears with ``call_entry`` None; a call
        without results has an empty ``result_entries``.
        """
        calls: dict[str, tuple[str, str]] = {}
        results: dict[str, list[str]] = {}
        errors: dict[str, bool] = {}
        for e in self.entries:
            m = e.message
            if m is None:
                continue
            for b in m.blocks:
                if b.kind == "tool_call" and b.tool_id:
                    calls.setdefault(b.tool_id, (e.id, b.name))
                elif b.kind == "tool_result" and b.tool_id:
                    results.setdefault(b.tool_id, []).append(e.id)
                    errors[b.tool_id] = errors.get(b.tool_id, False) or b.is_error
            if m.role == "toolResult" and m.tool_call_id:
                ids = results.setdefault(m.tool_call_id, [])
                if e.id not in ids:
                    ids.append(e.id)
                errors[m.tool_call_id] = errors.get(m.tool_call_id, False) or m.is_error
        pairs: dict[str, ToolPair] = {}
        for cid in [*calls, *(r for r in results if r not in calls)]:
            entry_id, name = calls.get(cid, (None, ""))
            pairs[cid] = ToolPair(
                cid, name, entry_id, tuple(results.get(cid, ())), errors.get(cid, False)
            )
        return pairs
