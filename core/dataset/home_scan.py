"""What the agent homes on this machine hold, cheaply, for the first-run screen.

:func:`scan_homes` looks at the well-known places (``~/.openclaw`` and
``~/.pi/agent/sessions``, see :data:`KNOWN_HOMES`) under a home directory and
returns a :class:`HomeSummary` for each one that exists: agents, sessions,
archived segments, active facts and the size of what memlens would read.

Only counts: transcripts are listed and stat'ed (never parsed), segment lines
are counted a chunk at a time, and the fact log is replayed id by id without
building facts. A time budget bounds the whole scan; when it runs out the
counts found so far are returned with ``complete=False`` (they are then lower
bounds). A missing home is left out; an unreadable one or one that holds
nothing memlens can read is returned with a ``problem``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.dataset.discovery import discover
from core.io import jsonio
from core.io.limits import DEFAULT_BUDGET_S
from core.io.problems import FormatError
from core.io.safe_read import open_regular

if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Iterable

    from core.dataset.discovery import Discovery, Kind

__all__ = [
    "DEFAULT_BUDGET_S",
    "KNOWN_HOMES",
    "HomeSummary",
    "format_size",
    "known_homes",
    "scan_home",
    "scan_homes",
]

KNOWN_HOMES: tuple[tuple[str, str], ...] = (
    ("OpenClaw", ".openclaw"),
    ("pi", ".pi/agent/sessions"),
)
"""(agent label, path relative to the home directory) of every well-known home."""

_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class HomeSummary:
    """What one agent home holds (counts only).

    Parameters
    ----------
    label
        The agent it belongs to: ``"OpenClaw"`` or ``"pi"``.
    path
        The home itself, as scanned.
    kind
        What :func:`core.dataset.discovery.discover` recognised, or ``None`` when it
        recognised nothing (see *problem*).
    agents
        OpenClaw agents, or pi working directories.
    sessions
        Transcript files.
    segments
        Lines of ``segments.jsonl``: archived messages before dedup and eviction.
    facts
        Active facts of ``knowledge.jsonl`` after replaying the log.
    size
        Bytes of the files memlens would read (transcripts, ``sessions.json``,
        the memory-context store, memory indexes, ``openclaw.json``).
    newest
        Modification time (seconds since the epoch) of the newest transcript.
    complete
        ``False`` when the time budget ran out: the counts are lower bounds.
    problem
        Why the home cannot be opened as it is, or ``None``.
    """

    label: str
    path: Path
    kind: Kind | None = None
    agents: int = 0
    sessions: int = 0
    segments: int = 0
    facts: int = 0
    size: int = 0
    newest: float | None = None
    complete: bool = True
    problem: str | None = None

    @property
    def openable(self) -> bool:
        """Whether the app can open this home (it holds something memlens reads)."""
        return self.kind is not None

    def describe(self) -> str:
        """One line of figures, e.g. ``2 agents · 12 sessions · 300 segments · 7 facts · 4.2 MB``.

        Segments and facts are named only where the home has a memory-context
        store (OpenClaw); a ``+`` marks figures cut short by the time budget
        (agents and sessions are always complete).
        """
        if self.problem is not None:
            return self.problem
        more = "" if self.complete else "+"
        agent_word = "project" if self.kind == "pi-sessions" else "agent"
        # Discovery lists every agent and transcript; only reading and stat'ing is cut short.
        parts = [_count(self.agents, agent_word, ""), _count(self.sessions, "session", "")]
        if self.kind in ("openclaw-home", "memory-context"):
            parts.append(_count(self.segments, "segment", more))
            parts.append(_count(self.facts, "fact", more))
        parts.append(format_size(self.size) + more)
        return " · ".join(parts)


def _count(n: int, word: str, more: str) -> str:
    return f"{n:,}{more} {word}{'' if n == 1 and not more else 's'}"


def format_size(size: int) -> str:
    """Bytes in a short human form: ``512 B``, ``4.2 KB``, ``1.3 GB`` (powers of 1024)."""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def known_homes(home: Path | None = None) -> list[tuple[str, Path]]:
    """(label, path) of every well-known agent home under *home* (default: the user's)."""
    base = Path.home() if home is None else Path(home)
    return [(label, base / rel) for label, rel in KNOWN_HOMES]


class _Budget:
    """A deadline shared by every step of a scan."""

    def __init__(
        self,
        seconds: float,
        clock: Callable[[], float],
        cancelled: Callable[[], bool] | None,
    ) -> None:
        self._clock = clock
        self._deadline = clock() + seconds
        self._cancelled = cancelled
        self.spent = False

    def check(self) -> bool:
        """True while there is time left (and nobody cancelled); latches once spent."""
        if not self.spent and (
            self._clock() >= self._deadline or (self._cancelled is not None and self._cancelled())
        ):
            self.spent = True
        return not self.spent


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except OSError:
        return None


def _count_lines(path: Path, budget: _Budget) -> tuple[int, int]:
    """(non-empty-ish lines, bytes) of *path*, counted a chunk at a time."""
    lines = 0
    size = 0
    last = b"\n"
    try:
        with open_regular(path) as fh:  # a FIFO or a device is never opened
            while budget.check():
                data = fh.read(_CHUNK)
                if not data:
                    break
                lines += data.count(b"\n")
                size += len(data)
                last = data[-1:]
    except (OSError, FormatError):
        return 0, 0
    if last != b"\n":
        lines += 1  # a last line without its newline
    return lines, size


def _active_facts(path: Path, budget: _Budget) -> int:
    """Active facts of a knowledge log, replayed as the agent does, ids only."""
    active: dict[str, bool] = {}
    try:
        with open_regular(path) as fh:
            for n, line in enumerate(jsonio.iter_bounded_lines(fh)):
                if n % 512 == 0 and not budget.check():
                    break
                if line is not None:  # over the line limit: the full load reports it
                    _apply_fact(active, line)
    except (OSError, FormatError):
        return 0
    return sum(active.values())


def _apply_fact(active: dict[str, bool], line: bytes) -> None:
    if not line.strip():
        return
    try:
        obj: Any = jsonio.loads(line)
    except ValueError:
        return  # a damaged line: the full load reports it, the count skips it
    if not isinstance(obj, dict) or jsonio.too_deep(obj, line):
        return  # the full load skips a value nested that deep too
    fid = obj.get("id")
    if not fid or not obj.get("type") or not obj.get("content"):
        return
    active[str(fid)] = not obj.get("_deleted") and not obj.get("supersededBy")


def _files_size(paths: Iterable[Path | None], budget: _Budget) -> int:
    total = 0
    for path in paths:
        if path is None or not budget.check():
            continue
        st = _stat(path)
        if st is not None:
            total += st.st_size
    return total


def _summarise(label: str, found: Discovery, budget: _Budget) -> HomeSummary:
    size = 0
    newest: float | None = None
    for n, transcript in enumerate(found.transcripts):
        if n % 64 == 0 and not budget.check():
            break
        st = _stat(transcript)
        if st is None:
            continue
        size += st.st_size
        newest = st.st_mtime if newest is None else max(newest, st.st_mtime)
    size += _files_size((a.sessions_json for a in found.agents), budget)
    size += _files_size([*found.memory_indexes, found.config], budget)
    segments = facts = 0
    store = found.memory_context
    if store is not None:
        segments, seg_size = _count_lines(store / "segments.jsonl", budget)
        size += seg_size
        knowledge = store / "knowledge.jsonl"
        size += _files_size([knowledge, store / "vectors.bin"], budget)
        if budget.check():
            facts = _active_facts(knowledge, budget)
    return HomeSummary(
        label=label,
        path=found.path,
        kind=found.kind,
        agents=len(found.agents),
        sessions=len(found.transcripts),
        segments=segments,
        facts=facts,
        size=size,
        newest=newest,
        complete=not budget.spent,
    )


def _problem(exc: FormatError) -> str:
    if exc.detail.startswith("nothing memlens can read"):
        return "nothing to open yet: no sessions or memory here"
    return exc.detail


def scan_home(
    path: str | os.PathLike[str],
    *,
    label: str = "",
    budget_s: float = DEFAULT_BUDGET_S,
    clock: Callable[[], float] = time.monotonic,
    cancelled: Callable[[], bool] | None = None,
) -> HomeSummary | None:
    """Summarise one home; ``None`` when *path* does not exist.

    Never raises for what is on disk: an unreadable folder, or one that holds
    nothing memlens can read, gives a summary with ``problem`` set.
    """
    return _scan(Path(path), label, _Budget(budget_s, clock, cancelled))


def _scan(path: Path, label: str, budget: _Budget) -> HomeSummary | None:
    try:
        if not path.exists():
            return None
    except OSError as exc:  # e.g. a parent folder without search permission
        return HomeSummary(label, path, problem=f"cannot look here: {exc.strerror or exc}")
    try:
        found = discover(path)
    except FormatError as exc:
        return HomeSummary(label, path, problem=_problem(exc))
    except OSError as exc:
        return HomeSummary(label, path, problem=f"cannot read: {exc.strerror or exc}")
    return _summarise(label, found, budget)


def scan_homes(
    home: str | os.PathLike[str] | None = None,
    *,
    budget_s: float = DEFAULT_BUDGET_S,
    clock: Callable[[], float] = time.monotonic,
    cancelled: Callable[[], bool] | None = None,
) -> list[HomeSummary]:
    """Summaries of the well-known agent homes under *home* that exist.

    Parameters
    ----------
    home
        The home directory to look in (default: :meth:`pathlib.Path.home`).
    budget_s
        Seconds the whole scan may take; homes scanned after it ran out are
        still listed, with ``complete=False`` and the counts found so far.
    clock
        A monotonic clock in seconds (tests pass a fake one).
    cancelled
        Polled between steps; once it returns true the scan stops counting,
        as if the budget had run out.
    """
    base = Path.home() if home is None else Path(home)
    budget = _Budget(budget_s, clock, cancelled)
    out: list[HomeSummary] = []
    for label, path in known_homes(base):
        summary = _scan(path, label, budget)
        if summary is not None:
            out.append(summary)
    return out
