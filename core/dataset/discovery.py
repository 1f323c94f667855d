"""Recognise what a path holds.

An OpenClaw home, an OpenClaudeCode data directory (its database found by its
tables, :mod:`core.openclaudecode.home`), a pi sessions folder, a memory-context
folder alone, or a single transcript.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from core.io.problems import FormatError, Problem
from core.io.safe_read import NotRegularFile, open_regular, skip_message, special_kind
from core.openclaudecode.home import DB_SUFFIXES, OccHome, find_openclaudecode

Kind = Literal["openclaw-home", "openclaudecode", "pi-sessions", "memory-context", "transcript"]
OCC_AGENT = "openclaudecode"
"""The agent name of an OpenClaudeCode home's sessions."""
STORE_FILES = ("segments.jsonl", "knowledge.jsonl", "vectors.bin")
AGENT_DB = "openclaw-agent.sqlite"
_ARCHIVE_STAMP = re.compile(
    r"^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d{3})?Z(?:\.[0-9a-f]{32})?$"
)


@dataclass(frozen=True, slots=True)
class AgentDir:
    """One agent (OpenClaw) or one working directory (pi) and its transcripts."""

    name: str
    sessions_dir: Path
    transcripts: tuple[Path, ...]
    sessions_json: Path | None = None
    database: Path | None = None
    """OpenClaw 2026.9+: ``agents/<id>/agent/openclaw-agent.sqlite``, where session rows
    and transcripts live (read-only to memlens)."""
    archives: tuple[Path, ...] = ()
    """Archived transcript files in ``sessions/`` (``<id>.jsonl.reset.<time>[.zst]``...)."""


@dataclass(slots=True)
class Discovery:
    """What :func:`discover` found under a path."""

    path: Path
    kind: Kind
    agents: list[AgentDir] = field(default_factory=list)
    memory_context: Path | None = None
    memory_indexes: list[Path] = field(default_factory=list)
    config: Path | None = None
    notes: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    """Files skipped while looking: FIFOs, sockets, devices (never opened)."""
    openclaudecode: OccHome | None = None
    """The OpenClaudeCode data directory (kind ``openclaudecode``): read-only."""

    def skip_special(self, path: Path) -> bool:
        """Note *path* and return True when it is a FIFO, socket or device (or links to one)."""
        kind = special_kind(path)
        if kind is None or kind == "a folder":
            return False
        name = str(path)
        if not any(p.file == name for p in self.problems):
            self.problems.append(Problem(name, 0, skip_message(kind), "warning"))
        return True

    @property
    def transcripts(self) -> list[Path]:
        """Every transcript file found, agent by agent (not those in databases)."""
        return [t for a in self.agents for t in a.transcripts]

    @property
    def databases(self) -> list[Path]:
        """Every OpenClaw agent database found (2026.9+)."""
        return [a.database for a in self.agents if a.database is not None]

    def describe(self) -> str:
        """One paragraph saying what was found."""
        parts = [f"{self.path}: {self.kind}"]
        if self.agents:
            parts.append(f"{len(self.agents)} agent(s), {len(self.transcripts)} transcript(s)")
        if self.databases:
            parts.append(f"{len(self.databases)} agent database(s)")
        archives = sum(len(a.archives) for a in self.agents)
        if archives:
            parts.append(f"{archives} archived transcript(s)")
        if self.memory_context:
            present = [f for f in STORE_FILES if (self.memory_context / f).exists()]
            parts.append(
                f"memory-context at {self.memory_context} ({', '.join(present) or 'empty'})"
            )
        if self.memory_indexes:
            parts.append(f"{len(self.memory_indexes)} memory index(es)")
        if self.config:
            parts.append(f"config {self.config.name}")
        occ = self.openclaudecode
        if occ is not None:
            tables = ["sessions"] if occ.has_sessions_table else []
            tables += ["memory_chunks", "memory_fts"] if occ.has_memory else []
            parts.append(f"database {occ.database.name} ({', '.join(tables)}; read-only)")
        return "; ".join(parts)


def _jsonl_files(folder: Path, found: Discovery | None = None) -> tuple[Path, ...]:
    try:
        names = [p for p in folder.iterdir() if p.suffix == ".jsonl"]
    except OSError:
        return ()
    files = []
    for p in names:
        if found is not None and found.skip_special(p):
            continue
        if p.is_file():
            files.append(p)
    return tuple(sorted(files))


def is_archive_name(name: str) -> bool:
    """True for OpenClaw's archived transcript names (``x.jsonl.reset.<time>[.<hash>][.zst]``).

    As OpenClaw's ``isRetainedSessionTranscriptArchiveName`` (2026.9.6,
    ``src/config/sessions/artifacts.ts``): reasons ``reset``, ``deleted`` and ``bak``.
    """
    base = name.removesuffix(".zst")
    for reason in ("reset", "deleted", "bak"):
        marker = f".jsonl.{reason}."
        index = base.rfind(marker)
        if index > 0 and _ARCHIVE_STAMP.match(base[index + len(marker) :]):
            return True
    return False


def _archive_files(folder: Path, found: Discovery) -> tuple[Path, ...]:
    try:
        names = [p for p in folder.iterdir() if is_archive_name(p.name)]
    except OSError:
        return ()
    return tuple(sorted(p for p in names if not found.skip_special(p) and p.is_file()))


def looks_like_transcript(path: Path) -> bool:
    """True when the first line of *path* is a pi session header (FIFOs are never opened)."""
    try:
        with open_regular(path) as fh:
            head = fh.read(4096)
    except (OSError, FormatError):
        return False
    first = head.split(b"\n", 1)[0]
    return b'"type":"session"' in first.replace(b" ", b"") and b'"id"' in first


def _is_store(folder: Path) -> bool:
    return any((folder / f).exists() for f in STORE_FILES)


def _openclaw_home(root: Path, found: Discovery) -> None:
    agents_root = root / "agents"
    if agents_root.is_dir():
        try:
            agent_dirs = sorted(p for p in agents_root.iterdir() if p.is_dir())
        except OSError as exc:
            found.problems.append(
                Problem(str(agents_root), 0, f"cannot list: {exc.strerror or exc}")
            )
            agent_dirs = []
        for agent in agent_dirs:
            sessions = agent / "sessions"
            db = agent / "agent" / AGENT_DB
            has_db = not found.skip_special(db) and db.is_file()
            if not sessions.is_dir() and not has_db:
                continue
            store = sessions / "sessions.json"
            found.agents.append(
                AgentDir(
                    agent.name,
                    sessions,
                    _jsonl_files(sessions, found) if sessions.is_dir() else (),
                    store if not found.skip_special(store) and store.is_file() else None,
                    db if has_db else None,
                    _archive_files(sessions, found) if sessions.is_dir() else (),
                )
            )
    memory = root / "memory"
    if (memory / "context").is_dir():
        found.memory_context = memory / "context"
        for name in STORE_FILES:  # loading skips them too; note them here, once
            found.skip_special(memory / "context" / name)
    if memory.is_dir():
        try:
            indexes = sorted(memory.glob("*.sqlite"))
        except OSError as exc:
            found.problems.append(Problem(str(memory), 0, f"cannot list: {exc.strerror or exc}"))
            indexes = []
        found.memory_indexes = [p for p in indexes if not found.skip_special(p)]
    # OpenClaw 2026.9+ keeps each agent's memory index in its database, newest first
    found.memory_indexes[:0] = [a.database for a in found.agents if a.database is not None]
    config = root / "openclaw.json"
    if not found.skip_special(config) and config.is_file():
        found.config = config


def _pi_sessions(root: Path, found: Discovery) -> None:
    direct = _jsonl_files(root, found)
    if direct:
        found.agents.append(AgentDir(root.name, root, direct))
    try:
        subs = sorted(p for p in root.iterdir() if p.is_dir())
    except OSError:
        subs = []
    for sub in subs:
        files = _jsonl_files(sub, found)
        if files:
            name = sub.name.strip("-").replace("-", "/") if sub.name.startswith("--") else sub.name
            found.agents.append(AgentDir(name or sub.name, sub, files))


def _openclaudecode(path: Path, home: OccHome) -> Discovery:
    transcripts = home.transcripts
    agents = [AgentDir(OCC_AGENT, home.sessions_dir, transcripts)] if home.sessions_dir else []
    return Discovery(path, "openclaudecode", agents, openclaudecode=home)


def discover(path: str | os.PathLike[str]) -> Discovery:
    """Recognise what *path* holds.

    Raises
    ------
    FormatError
        When the path does not exist or holds nothing memlens can read.
    """
    root = Path(path).expanduser()
    name = str(root)
    if not root.exists():
        raise FormatError(name, "no such file or folder")
    kind = special_kind(root)
    if kind is not None and kind != "a folder":
        raise NotRegularFile(name, skip_message(kind))
    if root.is_file():
        if root.name in STORE_FILES:
            return discover(root.parent)
        if root.name == AGENT_DB:  # agents/<id>/agent/openclaw-agent.sqlite
            agent = root.parent.parent.name if root.parent.name == "agent" else root.parent.name
            return Discovery(
                root,
                "openclaw-home",
                [AgentDir(agent, root.parent, (), database=root)],
                memory_indexes=[root],
            )
        if root.suffix in DB_SUFFIXES and (home := find_openclaudecode(root)) is not None:
            return _openclaudecode(home.root, home)
        if looks_like_transcript(root):
            return Discovery(root, "transcript", [AgentDir(root.parent.name, root.parent, (root,))])
        raise FormatError(name, "not a pi transcript: the first line is not a session header")
    if not os.access(root, os.R_OK | os.X_OK):
        raise FormatError(name, "folder is not readable")
    if (
        (root / "agents").is_dir()
        or (root / "openclaw.json").is_file()
        or (root / "memory" / "context").is_dir()
    ):
        found = Discovery(root, "openclaw-home")
        _openclaw_home(root, found)
        return found
    if _is_store(root):
        return Discovery(root, "memory-context", memory_context=root)
    if (home := find_openclaudecode(root)) is not None:
        return _openclaudecode(root, home)
    given = root
    if (root / "sessions").is_dir() and not _jsonl_files(root):
        root = root / "sessions"  # ~/.pi/agent
    found = Discovery(root, "pi-sessions")
    _pi_sessions(root, found)
    if found.agents:
        non_transcripts = [p for p in found.transcripts if not looks_like_transcript(p)]
        if non_transcripts:
            found.notes.append(
                f"{len(non_transcripts)} .jsonl file(s) do not start with a session header"
            )
        return found
    inner = _in_home_folder(given)
    if inner is not None:
        return inner
    raise FormatError(
        name,
        "nothing memlens can read here: no OpenClaw home (agents/, memory/context/, "
        "openclaw.json), no OpenClaudeCode database, no pi sessions, no memory-context "
        "store and no transcript",
    )


HOME_FOLDER_DATA = (".openclaw", ".pi/agent")
"""Where the agents keep their data in a user's home folder, newest first."""


def _in_home_folder(root: Path) -> Discovery | None:
    """What a home folder's ``.openclaw`` (or ``.pi/agent``) holds: ``memlens mcp ~`` works."""
    for inner in HOME_FOLDER_DATA:
        candidate = root / inner
        if not candidate.is_dir():
            continue
        try:
            found = discover(candidate)
        except FormatError:
            continue
        found.notes.append(f"{root} is a home folder: opened {candidate}")
        return found
    return None
