"""Recognise an OpenClaudeCode data directory: its database is found by its tables.

The design names no database file, so every ``*.db``, ``*.sqlite`` and ``*.sqlite3``
at the folder's top level is opened read-only and kept when it holds a ``sessions``
table with session ids and keys, or the memory tables ``memory_chunks`` and
``memory_fts``. OpenClaw's agent database (``openclaw-agent.sqlite``) is never taken
for one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.io.problems import FormatError
from core.io.safe_read import special_kind
from core.openclaw.sqlite_ro import ReadOnlyDb

if TYPE_CHECKING:
    import os

DB_SUFFIXES = (".db", ".sqlite", ".sqlite3")
SESSIONS_DIR = "sessions"
_OPENCLAW_DB = "openclaw-agent.sqlite"


@dataclass(frozen=True, slots=True)
class OccHome:
    """An OpenClaudeCode data directory: its database and its transcripts folder."""

    root: Path
    database: Path
    sessions_dir: Path | None
    """``<root>/sessions`` when it exists."""
    has_sessions_table: bool
    has_memory: bool
    """``memory_chunks`` and ``memory_fts`` are both there."""

    @property
    def transcripts(self) -> tuple[Path, ...]:
        """The ``*.jsonl`` files of :attr:`sessions_dir` (regular files only), sorted."""
        if self.sessions_dir is None:
            return ()
        try:
            names = sorted(self.sessions_dir.iterdir())
        except OSError:
            return ()
        return tuple(p for p in names if p.suffix == ".jsonl" and _regular(p))


def _regular(path: Path) -> bool:
    kind = special_kind(path)
    return kind is None and path.is_file()


def _columns(db: ReadOnlyDb, table: str) -> set[str]:
    return {str(r[1]).replace("_", "").lower() for r in db.rows(f"PRAGMA table_info({table})")}


def probe_database(path: Path) -> tuple[bool, bool] | None:
    """``(sessions table, memory tables)`` of an OpenClaudeCode database, else None.

    None for a file that is not an SQLite database, cannot be read, or holds neither.
    """
    if path.name == _OPENCLAW_DB or not _regular(path):
        return None
    try:
        with ReadOnlyDb(path, timeout=1.0) as db:
            tables = db.tables()
            sessions = "sessions" in tables and {"sessionid", "sessionkey"} <= _columns(
                db, "sessions"
            )
    except FormatError:
        return None
    memory = "memory_chunks" in tables and "memory_fts" in tables
    return (sessions, memory) if sessions or memory else None


def find_openclaudecode(path: str | os.PathLike[str]) -> OccHome | None:
    """The OpenClaudeCode data directory at *path* (a folder or its database), else None.

    A folder qualifies when a database at its top level holds the design's tables
    (the first in name order wins); nothing is written, nothing is created.
    """
    root = Path(path).expanduser()
    if root.is_file():
        candidates = [root] if root.suffix in DB_SUFFIXES else []
        root = root.parent
    elif root.is_dir():
        try:
            candidates = sorted(p for p in root.iterdir() if p.suffix in DB_SUFFIXES)
        except OSError:
            return None
    else:
        return None
    for db in candidates:
        found = probe_database(db)
        if found is None:
            continue
        sessions_dir = root / SESSIONS_DIR
        return OccHome(
            root,
            db,
            sessions_dir if sessions_dir.is_dir() else None,
            has_sessions_table=found[0],
            has_memory=found[1],
        )
    return None
