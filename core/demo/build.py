"""Write a realistic, reproducible demo OpenClaw home for exploring memlens.

``write_demo(dest)`` creates ``openclaw.json``, two agents with a dozen pi v3
transcripts and their ``sessions.json``, the memory-context store
(``segments.jsonl``, ``vectors.bin``, ``knowledge.jsonl``), an OpenClaw memory
index (``memory/main.sqlite``) and the workspace notes it indexes. Everything
is drawn from ``random.Random(seed)`` and timestamps are relative to
``now_ms``, so the same seed and ``now_ms`` give the same bytes.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.demo.plans import DAY_MS, PLANS
from core.demo.sessions import GeneratedSession, TranscriptWriter
from core.demo.stores import (
    CONFIG_TEXT,
    write_index,
    write_knowledge,
    write_segments,
    write_sessions_store,
)


@dataclass(frozen=True, slots=True)
class DemoSummary:
    """What :func:`write_demo` wrote."""

    root: Path
    config: Path
    transcripts: tuple[Path, ...]
    session_stores: tuple[Path, ...]
    segments_file: Path
    vectors_file: Path
    knowledge_file: Path
    memory_index: Path
    workspace_notes: tuple[Path, ...]
    agents: int
    sessions: int
    messages: int
    compactions: int
    branches: int
    segments: int
    """Valid, distinct segments (the file also holds the duplicate and invalid lines)."""
    duplicate_lines: int
    invalid_lines: int
    vectors: int
    facts: int
    fact_lines: int
    chunks: int

    def to_json(self) -> dict[str, Any]:
        """Counts and paths as JSON-ready values."""
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if isinstance(value, Path):
                value = str(value)
            elif isinstance(value, tuple):
                value = [str(v) for v in value]
            out[name] = value
        return out

    def describe(self) -> str:
        """One line of counts."""
        return (
            f"{self.agents} agents, {self.sessions} sessions ({self.messages} messages, "
            f"{self.compactions} compactions, {self.branches} branch), {self.segments} segments "
            f"({self.vectors} with vectors), {self.facts} facts in {self.fact_lines} lines, "
            f"{self.chunks} memory-index chunks"
        )


def _start_of_day(now: int | None) -> int:
    if now is not None:
        return now
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return int(today.timestamp() * 1000)


def write_demo(
    dest: Path,
    *,
    seed: int = 7,
    now_ms: int | None = None,
    segments: int = 3000,
    force: bool = False,
) -> DemoSummary:
    """Write a demo OpenClaw home under *dest*.

    Parameters
    ----------
    dest
        The folder that plays ``~/.openclaw``; created if missing.
    seed
        Seed of every random choice: the same seed and *now_ms* give identical bytes.
    now_ms
        The demo's "now" in epoch ms; None means the start of the current UTC day.
    segments
        How many distinct, valid segments ``segments.jsonl`` holds.
    force
        Write into a non-empty *dest*, replacing the demo's files (others are left alone).

    Returns
    -------
    DemoSummary
        The paths written and what they hold.

    Raises
    ------
    FileExistsError
        When *dest* is a file, or a non-empty folder and *force* is False.
    """
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise FileExistsError(f"{dest} exists and is not a folder; the demo needs a folder")
    if dest.exists() and any(dest.iterdir()) and not force:
        raise FileExistsError(
            f"{dest} is not empty; the demo writes only into an empty folder "
            "(pass force=True to write over the demo's files there)"
        )
    now = _start_of_day(now_ms)
    rng = random.Random(seed)
    outs: list[GeneratedSession] = []
    note_dates: set[str] = set()
    for plan in PLANS:
        start = now - int(plan.days_ago * DAY_MS) + rng.randint(0, 3600_000)
        outs.append(TranscriptWriter(rng, plan, start, note_dates).build(now))
    transcripts: list[Path] = []
    stores: list[Path] = []
    for agent in ("main", "reviewer"):
        folder = dest / "agents" / agent / "sessions"
        folder.mkdir(parents=True, exist_ok=True)
        mine = [o for o in outs if o.plan.agent == agent]
        for o in mine:
            (folder / o.file_name).write_bytes(o.data)
            # A transcript's mtime is its last write, as the agent would have left it.
            os.utime(folder / o.file_name, ns=(o.updated_at * 1_000_000, o.updated_at * 1_000_000))
            transcripts.append(folder / o.file_name)
        stores.append(write_sessions_store(folder / "sessions.json", mine, rng))
    config = dest / "openclaw.json"
    config.write_text(CONFIG_TEXT, encoding="utf-8")
    seg = write_segments(dest / "memory" / "context", outs, rng, now, segments)
    knowledge_file, facts, fact_lines = write_knowledge(
        dest / "memory" / "context" / "knowledge.jsonl", rng, now
    )
    index, notes, chunks = write_index(dest, outs)
    return DemoSummary(
        root=dest,
        config=config,
        transcripts=tuple(transcripts),
        session_stores=tuple(stores),
        segments_file=seg.segments_file,
        vectors_file=seg.vectors_file,
        knowledge_file=knowledge_file,
        memory_index=index,
        workspace_notes=tuple(notes),
        agents=2,
        sessions=len(outs),
        messages=sum(o.messages for o in outs),
        compactions=sum(o.compactions for o in outs),
        branches=sum(o.branches for o in outs),
        segments=seg.segments,
        duplicate_lines=seg.duplicates,
        invalid_lines=seg.invalid,
        vectors=seg.vectors,
        facts=facts,
        fact_lines=fact_lines,
        chunks=chunks,
    )
