"""Apply lines appended to ``segments.jsonl`` and ``knowledge.jsonl`` to loaded objects.

Both files are also written by memlens itself (a fact edit, an archive), and a
:class:`KnowledgeLog` replays its own appends at once: the lines it already
holds are recognised by their byte offset and never applied twice. When the
agent's lines landed before memlens's (read later than memlens wrote), the
lines of the batch are replayed again in file order, so each fact ends in the
state its last line in the file gives it, with the right line numbers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING

from core.store.segments import DAY_MS, SegmentLoad, dedup_key, oldest_first, parse_segments

if TYPE_CHECKING:
    from collections.abc import Callable

    from core.io.problems import Problem
    from core.recall.warm_store import WarmStore
    from core.store.knowledge import KnowledgeLog
    from core.store.segments import Segment


# -- knowledge.jsonl -------------------------------------------------------------------------
@dataclass(slots=True)
class KnowledgeAppend:
    """What applying appended knowledge lines changed."""

    fact_ids: list[str] = field(default_factory=list)
    """Facts whose state changed (new, edited, superseded, deleted, restored)."""
    problems: list[Problem] = field(default_factory=list)
    lines: int = 0


def apply_knowledge(
    log: KnowledgeLog, data: bytes, *, first_line: int, offset: int
) -> KnowledgeAppend:
    """Replay appended whole lines into *log*, skipping what it already replayed.

    Parameters
    ----------
    data
        Complete lines, as a :class:`core.io.tail.Tail` gives them.
    first_line, offset
        Line number and byte offset of ``data[0]`` in the file.
    """
    end = offset + len(data)
    before = dict(log.facts)
    seen_problems = len(log.problems)
    if log.size > offset:
        # memlens appended since the tail last read: take those lines out (their
        # line numbers may be wrong, their order against the agent's lines too)
        # and replay the whole batch in file order below.
        for fid in list(log.history):
            lines = log.history[fid]
            if not lines or lines[-1].offset < offset:
                continue
            keep = [ll for ll in lines if not offset <= ll.offset < end]
            if keep:
                log.history[fid] = keep
            else:
                del log.history[fid]
                log.facts.pop(fid, None)
    old_size, old_lines = log.size, log.lines
    log.replay(data, first_line=first_line, base_offset=offset)
    log.size = max(old_size, end)
    log.lines = max(old_lines, log.lines)
    changed = [fid for fid, fact in log.facts.items() if before.get(fid) is not fact]
    # A writer may have replayed some of these lines already (KnowledgeLog catches
    # up with the agent's lines before its own append): keep each problem once,
    # and report every problem of the batch's lines.
    count = data.count(b"\n")
    known = set(log.problems[:seen_problems])
    fresh = [p for p in dict.fromkeys(log.problems[seen_problems:]) if p not in known]
    log.problems[seen_problems:] = fresh
    span = range(first_line, first_line + count)
    problems = [p for p in log.problems if p.line in span and p.file == log.path]
    return KnowledgeAppend(changed, problems, count)


def reload_knowledge(log: KnowledgeLog, data: bytes) -> KnowledgeAppend:
    """Replay *log* from scratch from *data* (the file after a truncation or replacement).

    The log object is kept (views hold it); every fact id before or after is reported.
    """
    old = set(log.facts)
    log.facts.clear()
    log.history.clear()
    log.problems.clear()
    log.size = 0
    log.lines = 0
    log.replay(data)
    ids = list(log.facts) + [fid for fid in old if fid not in log.facts]
    return KnowledgeAppend(ids, list(log.problems), data.count(b"\n"))


# -- segments.jsonl --------------------------------------------------------------------------
@dataclass(slots=True)
class SegmentAppend:
    """What applying appended segment lines changed."""

    added: list[Segment] = field(default_factory=list)
    """New segments of the warm set (valid, recent enough, not duplicates)."""
    indexed: int = 0
    """How many of them the warm store indexed."""
    problems: list[Problem] = field(default_factory=list)
    lines: int = 0


class SegmentFollower:
    """Keeps a :class:`SegmentLoad` and a :class:`WarmStore` current with appended lines.

    Parameters
    ----------
    load
        What the data set loaded (its ``segments`` list grows in place).
    store
        The warm store of the recall preview, when it is open; see :meth:`set_store`.
    max_segments, eviction_days
        The agent's ``memoryContext`` settings.
    clock
        Epoch milliseconds now (for ``evictionDays``).
    """

    def __init__(
        self,
        load: SegmentLoad,
        store: WarmStore | None = None,
        *,
        max_segments: int = 20_000,
        eviction_days: float = 90,
        clock: Callable[[], int] = lambda: int(time.time() * 1000),
    ) -> None:
        self.load = load
        self.store = store
        self.max_segments = max_segments
        self.eviction_days = eviction_days
        self.clock = clock
        self._keys: set[str] | None = None
        self._backlog: list[Segment] = []
        """Segments added while no store was open: indexed when one is set."""

    def set_store(self, store: WarmStore | None) -> int:
        """Follow into *store* from now on; index what was added meanwhile. Returns how many."""
        self.store = store
        if store is None or not self._backlog:
            return 0
        backlog, self._backlog = self._backlog, []
        return len(store.index_appended(backlog, self.clock()))

    def _known_keys(self) -> set[str]:
        if self._keys is None:
            self._keys = {dedup_key(s.session_id, s.role, s.content) for s in self.load.segments}
        return self._keys

    def apply(self, data: bytes, *, first_line: int, offset: int) -> SegmentAppend:
        """Validate, filter and index appended whole lines."""
        load = self.load
        parsed = parse_segments(data, load.path, max_segments=-1, eviction_days=0)
        shift = first_line - 1
        out = SegmentAppend(lines=data.count(b"\n"))
        out.problems = [replace(p, line=p.line + shift) for p in parsed.problems]
        load.problems.extend(out.problems)
        load.lines += out.lines
        load.valid += parsed.valid
        load.duplicates += parsed.duplicates
        load.size = max(load.size, offset + len(data))
        now = self.clock()
        cutoff = now - self.eviction_days * DAY_MS if self.eviction_days > 0 else None
        keys = self._known_keys()
        for seg in parsed.segments:
            seg = replace(seg, line=seg.line + shift)
            if cutoff is not None and seg.timestamp < cutoff:
                load.evicted_age += 1
                continue
            key = dedup_key(seg.session_id, seg.role, seg.content)
            if key in keys:
                load.duplicates += 1
                continue
            keys.add(key)
            out.added.append(seg)
        load.segments.extend(out.added)
        self._evict_count()
        if self.store is not None:
            out.indexed = len(self.store.index_appended(out.added, now))
        else:
            self._backlog.extend(out.added)
        return out

    def _evict_count(self) -> None:
        load = self.load
        if self.max_segments < 0 or len(load.segments) <= self.max_segments:
            return
        excess = len(load.segments) - self.max_segments
        gone = set(oldest_first([s.timestamp for s in load.segments])[:excess])
        load.segments[:] = [s for i, s in enumerate(load.segments) if i not in gone]
        load.evicted_count += excess

    def reload(self, data: bytes) -> SegmentAppend:
        """Load the warm set again from *data* (the file after a truncation or replacement).

        The warm store cannot be rebuilt here (vectors, embedding): it is dropped
        and the caller opens a new one, then calls :meth:`set_store`.
        """
        load = self.load
        fresh = parse_segments(
            data,
            load.path,
            max_segments=self.max_segments,
            eviction_days=self.eviction_days,
            now_ms=self.clock(),
        )
        for f in fields(SegmentLoad):  # in place: the data set's object is kept
            setattr(load, f.name, getattr(fresh, f.name))
        self._keys = None
        self.store = None
        self._backlog = []
        return SegmentAppend(list(load.segments), 0, list(load.problems), load.lines)
