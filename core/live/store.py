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

from core.io.jsonio import gc_paused, read_jsonl
from core.live.changes import note_event
from core.store.segments import DAY_MS, SegmentLoad, dedup_key, oldest_first, parse_segments

if TYPE_CHECKING:
    from collections.abc import Callable

    from core.io.jsonio import JsonlRead
    from core.io.problems import Problem
    from core.io.tail import Tail
    from core.live.changes import Follower, LiveChanges, LiveRead
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
    log: KnowledgeLog,
    data: bytes,
    *,
    first_line: int,
    offset: int,
    parsed: JsonlRead | None = None,
) -> KnowledgeAppend:
    """Replay appended whole lines into *log*, skipping what it already replayed.

    Parameters
    ----------
    data
        Complete lines, as a :class:`core.io.tail.Tail` gives them.
    first_line, offset
        Line number and byte offset of ``data[0]`` in the file.
    parsed
        *data* already parsed (:func:`parse_knowledge`, in live mode's read phase).
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
    if parsed is None:
        parsed = parse_knowledge(log, data, first_line=first_line, offset=offset)
    log.apply_read(parsed, first_line=first_line, base_offset=offset)
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


def parse_knowledge(log: KnowledgeLog, data: bytes, *, first_line: int, offset: int) -> JsonlRead:
    """Parse whole lines of *log*'s file (no change to *log*: a worker may call it)."""
    with gc_paused():
        return read_jsonl(data, log.path, first_line=first_line, base_offset=offset)


def reload_knowledge(
    log: KnowledgeLog, data: bytes, parsed: JsonlRead | None = None
) -> KnowledgeAppend:
    """Replay *log* from scratch from *data* (the file after a truncation or replacement).

    The log object is kept (views hold it); every fact id before or after is reported.
    *parsed* is *data* already parsed (:func:`parse_knowledge`).
    """
    if parsed is None:
        parsed = parse_knowledge(log, data, first_line=1, offset=0)
    old = set(log.facts)
    log.facts.clear()
    log.history.clear()
    log.problems.clear()
    log.size = 0
    log.lines = 0
    log.apply_read(parsed)
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
    evicted: int = 0
    """Segments the warm set dropped for ``maxSegments``."""


@dataclass(slots=True)
class SegmentRead:
    """What :meth:`SegmentFollower.read` found, for :meth:`SegmentFollower.commit`."""

    added: list[Segment] = field(default_factory=list)
    indexed: int = 0
    problems: list[Problem] = field(default_factory=list)
    lines: int = 0
    valid: int = 0
    duplicates: int = 0
    evicted_age: int = 0
    end: int = 0
    """Byte offset after the lines read."""


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

    def read(self, data: bytes, *, first_line: int, offset: int) -> SegmentRead:
        """Validate, filter and index appended whole lines (a worker may call it).

        Only this follower's own state and the warm store (under its lock) change here;
        the data set's :class:`SegmentLoad` changes in :meth:`commit`.
        """
        parsed = parse_segments(data, self.load.path, max_segments=-1, eviction_days=0)
        shift = first_line - 1
        out = SegmentRead(lines=data.count(b"\n"), valid=parsed.valid)
        out.duplicates = parsed.duplicates
        out.end = offset + len(data)
        out.problems = [replace(p, line=p.line + shift) for p in parsed.problems]
        now = self.clock()
        cutoff = now - self.eviction_days * DAY_MS if self.eviction_days > 0 else None
        keys = self._known_keys()
        for seg in parsed.segments:
            seg = replace(seg, line=seg.line + shift)
            if cutoff is not None and seg.timestamp < cutoff:
                out.evicted_age += 1
                continue
            key = dedup_key(seg.session_id, seg.role, seg.content)
            if key in keys:
                out.duplicates += 1
                continue
            keys.add(key)
            out.added.append(seg)
        if self.store is not None:
            out.indexed = len(self.store.index_appended(out.added, now))
        else:
            self._backlog.extend(out.added)
        return out

    def commit(self, read: SegmentRead) -> SegmentAppend:
        """Apply what :meth:`read` found to the warm set (the GUI thread in the app)."""
        load = self.load
        load.problems.extend(read.problems)
        load.lines += read.lines
        load.valid += read.valid
        load.duplicates += read.duplicates
        load.evicted_age += read.evicted_age
        load.size = max(load.size, read.end)
        load.segments.extend(read.added)
        evicted = self._evict_count()
        return SegmentAppend(read.added, read.indexed, read.problems, read.lines, evicted)

    def _evict_count(self) -> int:
        load = self.load
        if self.max_segments < 0 or len(load.segments) <= self.max_segments:
            return 0
        excess = len(load.segments) - self.max_segments
        gone = set(oldest_first([s.timestamp for s in load.segments])[:excess])
        load.segments[:] = [s for i, s in enumerate(load.segments) if i not in gone]
        load.evicted_count += excess
        return excess

    def read_reload(self, data: bytes) -> SegmentLoad:
        """Parse the whole file again (after a truncation or replacement; a worker may call it).

        The warm store cannot be rebuilt here (vectors, embedding): it is dropped
        and the caller opens a new one, then calls :meth:`set_store`.
        """
        fresh = parse_segments(
            data,
            self.load.path,
            max_segments=self.max_segments,
            eviction_days=self.eviction_days,
            now_ms=self.clock(),
        )
        self._keys = {dedup_key(s.session_id, s.role, s.content) for s in fresh.segments}
        self.store = None
        self._backlog = []
        return fresh

    def commit_reload(self, fresh: SegmentLoad) -> SegmentAppend:
        """Make the warm set what :meth:`read_reload` parsed (in place: views hold it)."""
        load = self.load
        for f in fields(SegmentLoad):
            setattr(load, f.name, getattr(fresh, f.name))
        return SegmentAppend(list(load.segments), 0, list(load.problems), load.lines)


# -- the read phase of a poll (see core.live.follow) ------------------------------------------
def read_segment_lines(f: Follower, follower: SegmentFollower, tail: Tail, out: LiveRead) -> None:
    """Read and index what was appended to segments.jsonl; queue the warm set's change."""
    event = tail.poll()
    if event.kind == "none":
        return
    if event.kind == "missing":
        out.then(lambda c: c.missing.append(tail.path))
        return
    note_event(event, out)
    if event.kind == "reset":
        fresh = follower.read_reload(event.data)

        def reload(c: LiveChanges) -> None:
            f.forget_problems(tail.path, c)
            done = follower.commit_reload(fresh)
            c.resets.append(tail.path)
            c.store_reopen_needed = True
            c.segments_added += len(done.added)
            c.problems.extend(done.problems)

        out.then(reload)
        return
    read = follower.read(event.data, first_line=event.first_line, offset=event.offset)

    def append(c: LiveChanges) -> None:
        done = follower.commit(read)
        c.segments_added += len(done.added)
        c.segment_ids.extend(s.id for s in done.added)
        c.segments_indexed += done.indexed
        c.segments_evicted += done.evicted
        c.problems.extend(done.problems)

    out.then(append)


def read_knowledge_lines(f: Follower, tail: Tail, out: LiveRead) -> None:
    """Read what was appended to knowledge.jsonl; queue its replay into the log."""
    event = tail.poll()
    if event.kind == "none":
        return
    if event.kind == "missing":
        out.then(lambda c: c.missing.append(tail.path))
        return
    note_event(event, out)
    log = f.data.knowledge
    assert log is not None
    reset = event.kind == "reset"
    first_line, offset = (1, 0) if reset else (event.first_line, event.offset)
    parsed = parse_knowledge(log, event.data, first_line=first_line, offset=offset)

    def replay(c: LiveChanges) -> None:
        # The log is also written by memlens's own fact edits (on the owner's thread):
        # it is replayed here (from lines parsed in the read phase), never in the read phase.
        log = f.data.knowledge
        assert log is not None
        index = f.recall.knowledge if f.recall is not None else None
        if index is not None and index.log is not log:
            index = None  # an index over another log: not ours to update
        if reset:
            f.forget_problems(tail.path, c)
            done = reload_knowledge(log, event.data, parsed)
            c.resets.append(tail.path)
            if index is not None:
                index.rebuild()
        else:
            done = apply_knowledge(
                log, event.data, first_line=first_line, offset=offset, parsed=parsed
            )
            if index is not None:
                index.sync()
        c.facts_changed.extend(done.fact_ids)
        c.problems.extend(done.problems)

    out.then(replay)
