"""Records of a loaded transcript: one model for pi v1, v2 and v3 files."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from core.io.text import cut
from core.transcript.message import Block, Message
from core.transcript.normalize import entry_message

if TYPE_CHECKING:
    from core.io.problems import Problem
    from core.transcript.openclaw_tree import OpenClawTree

__all__ = ["Block", "Entry", "Message", "ParentBreak", "Session", "ToolPair"]

_UNSET: Any = object()

NON_MESSAGE_TYPES = frozenset(
    {"custom", "label", "session_info", "model_change", "thinking_level_change"}
)
"""Entry types that never become messages the model sees."""


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
    synthetic_id: bool = False
    """True when the id was derived by memlens (v1 files, damaged entries)."""
    recovered: bool = False
    """True when the entry was recovered from a line the agent cannot parse (two
    objects run together): the agent does not know it, nor its id."""
    _message: Any = field(default=_UNSET, repr=False, compare=False)

    @property
    def message(self) -> Message | None:
        """The message this entry puts in context (None for non-message types).

        Normalised on first use, so that loading a large file stays fast.
        """
        msg = self._message
        if msg is _UNSET:
            msg = entry_message(self.type, self.raw)
            object.__setattr__(self, "_message", msg)
        return msg  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class ToolPair:
    """A tool call and the entries holding its results."""

    call_id: str
    name: str
    call_entry: str | None
    result_entries: tuple[str, ...]
    is_error: bool


@dataclass(frozen=True, slots=True)
class ParentBreak:
    """An entry whose ``parentId`` cuts the context: the chain to the root is broken.

    ``kind`` is ``missing`` (the parent is not in the file), ``unparsed`` (the parent
    is on a line the agent cannot parse), ``cycle`` (following parents comes back to
    this entry) or ``invalid`` (the parentId is not a string).
    """

    entry_id: str
    line: int
    kind: str
    parent: object
    message: str


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
    agent_readable: bool = True
    """False when the header's line holds objects run together: the agent cannot
    parse it, so it sees no session in the file (every entry is ``recovered``)."""
    db: str | None = None
    """The OpenClaw database the session was read from (``path`` is then
    ``<db>#<session id>`` and each entry's ``line`` its event ``seq``); None for a
    JSONL file. memlens never writes to a database."""
    db_seq: int = -1
    """Highest event ``seq`` read from the database."""
    db_rows: int = 0
    """Event rows read from the database (damaged ones included)."""
    db_objects: int = 0
    """Objects read (the header included): the next entry's index."""
    db_generation: str | None = None
    """OpenClaw's rewrite generation of the transcript when it was read."""
    db_bytes: dict[int, int] = field(default_factory=dict)
    """Each database event's ``event_utf8_bytes`` by ``seq`` (the header is seq 0)."""
    run_context_tokens: int | None = None
    """The context budget of the session's row (``contextTokens``): OpenClaw's run reads
    only the newest rows that fit 8 bytes a token (:mod:`core.transcript.run_bound`)."""
    tree: OpenClawTree | None = None
    """OpenClaw's navigation (version 4 headers): its leaf, its ``leaf`` rows, its
    re-parenting; each entry's ``parent_id`` is already the tree's. None for pi."""

    def __post_init__(self) -> None:
        if not self.by_id:
            self.by_id = {e.id: e for e in self.entries}
        if not self.children:
            kids: dict[str | None, list[str]] = {}
            by_id = self.by_id
            for e in self.entries:
                up = by_id.get(e.parent_id) if e.parent_id is not None else None
                # pi never loads a recovered entry: its children are roots to the agent
                # (recovered children stay under it, shown with the context before it)
                parent = up.id if up is not None and (e.recovered or not up.recovered) else None
                kids.setdefault(parent, []).append(e.id)
            self.children = kids

    def snapshot(self) -> Session:
        """A copy a worker can read while live mode goes on extending this session.

        Live mode appends entries, ids, children and tree nodes on the GUI thread; a job
        that walks the session (a timeline, a replay, a compaction) takes a snapshot on
        the GUI thread first and reads only that. The containers are copied (O(entries),
        about a millisecond for 5,000); the entries are shared: nothing changes an entry
        once it has been read.
        """
        tree = self.tree
        if tree is not None:
            tree = replace(
                tree,
                nodes=dict(tree.nodes),
                reset_descendants=set(tree.reset_descendants),
                invalid=set(tree.invalid),
            )
        return replace(
            self,
            header=dict(self.header),
            entries=list(self.entries),
            problems=list(self.problems),
            by_id=dict(self.by_id),
            children={parent: list(kids) for parent, kids in self.children.items()},
            db_bytes=dict(self.db_bytes),
            tree=tree,
        )

    @property
    def id(self) -> str:
        """The session id from the header."""
        return str(self.header.get("id", ""))

    @property
    def last_entry(self) -> Entry | None:
        """The last entry in file order (a recovered one included): where reading stopped."""
        return self.entries[-1] if self.entries else None

    @property
    def leaf(self) -> Entry | None:
        """The current leaf: the last entry in file order that the agent loads.

        As pi's session manager: the last entry it parsed, so never one recovered
        from a line it cannot parse. For OpenClaw (version 4) the tree's leaf: the last
        canonical entry not appended aside, or the target of the last ``leaf`` row.
        """
        if self.tree is not None:
            return self.by_id.get(self.tree.leaf) if self.tree.leaf is not None else None
        for e in reversed(self.entries):
            if not e.recovered:
                return e
        return None

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
        """Entries from the root to *entry_id*, following ``parentId``, as pi walks them.

        pi never loads an entry recovered from a line it cannot parse: the walk
        stops at such a parent (pi's context restarts after it), and the path to a
        recovered entry is the path to its parent (the agent's context there).
        """
        path: list[Entry] = []
        seen: set[str] = set()
        current = self.by_id.get(entry_id)
        while current is not None and current.recovered:
            current = self.by_id.get(current.parent_id) if current.parent_id else None
        while current is not None and current.id not in seen and not current.recovered:
            seen.add(current.id)
            if not (self.tree is not None and current.type == "leaf"):
                path.append(current)  # OpenClaw's leaf rows navigate; never on a path
            current = self.by_id.get(current.parent_id) if current.parent_id else None
        path.reverse()
        return path

    def parent_breaks(self) -> list[ParentBreak]:
        """Entries whose ``parentId`` is dangling, in a cycle or not a string, in file order.

        pi's replay stops at a missing parent (the context before it is lost) and
        cannot end on a cycle; memlens stops there too and says so.
        """
        by_id = self.by_id
        out: list[ParentBreak] = []
        forward = False
        for e in self.entries:
            pid = e.parent_id
            if pid == "":
                continue  # pi reads an empty parentId as none: a root
            if pid is None:
                raw = e.raw.get("parentId") if not e.synthetic_id else None
                if raw is not None:
                    out.append(
                        ParentBreak(
                            e.id,
                            e.line,
                            "invalid",
                            raw,
                            f"entry {e.id} (line {e.line}): parentId "
                            f"{_short(raw)} is not a string; read as a root",
                        )
                    )
                continue
            parent = by_id.get(pid)
            if parent is not None and parent.recovered and not e.recovered:
                out.append(
                    ParentBreak(
                        e.id,
                        e.line,
                        "unparsed",
                        pid,
                        f"entry {e.id} (line {e.line}): parentId {_short(pid)} is on line "
                        f"{parent.line}, which the agent cannot parse; its context "
                        "restarts here",
                    )
                )
            elif parent is None:
                out.append(
                    ParentBreak(
                        e.id,
                        e.line,
                        "missing",
                        pid,
                        f"entry {e.id} (line {e.line}): parentId {_short(pid)} is not in "
                        "the file; the context before it is unknown",
                    )
                )
            elif parent.index >= e.index:
                forward = True
        if forward:  # only a parent later in the file can close a cycle
            out.extend(self._cycles())
            out.sort(key=lambda b: b.line)
        return out

    def _cycles(self) -> list[ParentBreak]:
        by_id = self.by_id
        state: dict[str, int] = {}  # 1: on the walk being followed, 2: done
        out: list[ParentBreak] = []
        for e in self.entries:
            walk: list[Entry] = []
            cur: Entry | None = e
            while cur is not None and cur.id not in state:
                state[cur.id] = 1
                walk.append(cur)
                cur = by_id.get(cur.parent_id) if cur.parent_id is not None else None
            if cur is not None and state.get(cur.id) == 1:
                ring = walk[walk.index(cur) :]
                last = max(ring, key=lambda x: x.index)  # the one pointing back
                names = " -> ".join(x.id for x in ring[:6]) + (" -> ..." if len(ring) > 6 else "")
                out.append(
                    ParentBreak(
                        last.id,
                        last.line,
                        "cycle",
                        last.parent_id,
                        f"entry {last.id} (line {last.line}): parentId "
                        f"{_short(last.parent_id)} makes a cycle of {len(ring)} "
                        f"entr{'y' if len(ring) == 1 else 'ies'} ({names}); "
                        "the context is cut there",
                    )
                )
            for x in walk:
                state[x.id] = 2
        return out

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


def _short(value: object, width: int = 40) -> str:
    return cut(repr(value), width)
