"""KnowledgeLog helpers for writers that share the file with a running agent.

:func:`catch_up` replays the whole lines appended since the log was read (so
checks made before a write see the agent's latest state), :class:`DryRunLog` is
a copy whose appends are recorded instead of written (so a preview uses the very
code that writes), and :func:`pinned` fixes the timestamp and new id a write uses
(so the preview and the write give the same bytes).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from typing_extensions import override

from core.io import jsonio
from core.io.fsutil import AppendResult
from core.store.knowledge import KnowledgeLog

if TYPE_CHECKING:
    from collections.abc import Iterator


class KnowledgeFileChanged(RuntimeError):
    """knowledge.jsonl shrank or vanished since it was read: reload it before writing."""


def catch_up(log: KnowledgeLog) -> int:
    """Replay the whole lines appended to the log's file since it was read.

    A partial last line (the agent still writing it) is left for later.

    Returns
    -------
    int
        How many lines were read.

    Raises
    ------
    KnowledgeFileChanged
        When the file is now shorter than what was read, or gone.
    """
    try:
        with open(log.path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            if size < log.size:
                raise KnowledgeFileChanged(
                    f"{log.path} is shorter than when it was read ({size:,} < {log.size:,} "
                    "bytes): reload it before writing"
                )
            start = log.size
            if start > 0:
                fh.seek(start - 1)
                if fh.read(1) != b"\n":  # the last read ended inside a line: reread it
                    start = _line_start(fh, start)
            fh.seek(start)
            tail = fh.read(size - start)
    except FileNotFoundError:
        if log.size > 0:
            raise KnowledgeFileChanged(f"{log.path} is gone: reload it before writing") from None
        return 0
    end = tail.rfind(b"\n") + 1
    if end == 0:
        return 0
    tail = tail[:end]
    first_line = log.lines + 1
    if start < log.size:
        # Skip the line a previous read already took as complete JSON (no newline yet).
        seen = {ln.offset for lines in log.history.values() for ln in lines}
        if start in seen:
            nl = tail.index(b"\n") + 1
            tail, start, first_line = tail[nl:], start + nl, first_line + 1
    log.replay(tail, first_line=first_line, base_offset=start)
    return tail.count(b"\n")


def _line_start(fh: Any, pos: int) -> int:
    back = max(0, pos - 65536)
    fh.seek(back)
    chunk = fh.read(pos - back)
    return int(back + chunk.rfind(b"\n") + 1)


class DryRunLog(KnowledgeLog):
    """A copy of a log whose appends are replayed in memory, never written."""

    @classmethod
    def of(cls, log: KnowledgeLog) -> DryRunLog:
        """A copy of *log* (its facts and history; the original is never changed)."""
        return cls(
            log.path,
            facts=dict(log.facts),
            history={k: list(v) for k, v in log.history.items()},
            size=log.size,
            lines=log.lines,
            redaction=log.redaction,
            clock=log.clock,
            new_id=log.new_id,
        )

    @override
    def _append(self, records: list[dict[str, Any]]) -> AppendResult:
        payload = b"".join(jsonio.dumps_line(r) for r in records)
        start = self.size
        self.replay(payload, first_line=self.lines + 1, base_offset=start)
        return AppendResult(self.path, start, len(payload))


@contextmanager
def pinned(log: KnowledgeLog, at: int, new_id: str | None) -> Iterator[None]:
    """Make the log's writes use timestamp *at* and id *new_id*."""
    saved = log.clock, log.new_id

    def fixed_id() -> str:
        if new_id is None:
            raise ValueError("this operation has no id for a new fact")
        return new_id

    log.clock, log.new_id = (lambda: at), fixed_id
    try:
        yield
    finally:
        log.clock, log.new_id = saved
