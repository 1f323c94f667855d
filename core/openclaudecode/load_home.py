"""Read a whole OpenClaudeCode data directory: session rows and their transcripts.

Each ``sessions`` row is matched to its transcript (``sessions/{sessionId}.jsonl``,
else the file its ``transcriptPath`` names inside ``sessions/``, else that path when it
is a regular file); a transcript without a row is read too. Nothing aborts the load:
an unreadable database, row or file is a :class:`Problem`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from core.io.problems import FormatError, Problem
from core.openclaudecode.sessions_table import SessionRow, read_sessions
from core.openclaudecode.transcript import load_occ_transcript
from core.openclaw.sqlite_ro import ReadOnlyDb

if TYPE_CHECKING:
    from collections.abc import Callable

    from core.openclaudecode.home import OccHome
    from core.transcript.model import Session


@dataclass(frozen=True, slots=True)
class OccSession:
    """A loaded transcript, its row (None without one) and its file's time."""

    session: Session
    row: SessionRow | None
    modified: float

    @property
    def key(self) -> str | None:
        """The session key ``{channel}:{userId}``, when the row names one."""
        return self.row.session_key if self.row is not None else None


@dataclass(slots=True)
class OccLoad:
    """What :func:`load_home` read."""

    sessions: list[OccSession] = field(default_factory=list)
    rows: list[SessionRow] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    missing: list[SessionRow] = field(default_factory=list)
    """Rows whose transcript is not there."""


def transcript_of(home: OccHome, row: SessionRow) -> Path | None:
    """The transcript file of *row* in *home*, else None."""
    candidates: list[Path] = []
    if home.sessions_dir is not None:
        candidates.append(home.sessions_dir / f"{row.session_id}.jsonl")
        if row.transcript_path:
            candidates.append(home.sessions_dir / os.path.basename(row.transcript_path))
    if row.transcript_path:
        named = Path(row.transcript_path).expanduser()
        candidates.append(named if named.is_absolute() else home.root / named)
    return next((p for p in candidates if p.is_file()), None)


def load_home(home: OccHome, step: Callable[[str], None] | None = None) -> OccLoad:
    """Every session of *home*; *step* is called with each file's name before it is read."""
    out = OccLoad()
    if home.has_sessions_table:
        try:
            with ReadOnlyDb(home.database) as db:
                out.rows, problems = read_sessions(db)
            out.problems.extend(problems)
        except FormatError as exc:
            out.problems.append(Problem(exc.file, exc.line, exc.detail))
    done: set[Path] = set()
    for row in out.rows:
        path = transcript_of(home, row)
        if path is None:
            out.missing.append(row)
            continue
        if path.resolve() in done:
            continue
        done.add(path.resolve())
        _read(out, path, row, step)
    for path in home.transcripts:
        if path.resolve() not in done:
            _read(out, path, None, step)
    if out.missing:
        names = ", ".join(r.session_id for r in out.missing[:5])
        out.problems.append(
            Problem(
                str(home.database),
                0,
                f"{len(out.missing)} session row(s) without a transcript in "
                f"{home.sessions_dir or home.root}: {names}",
                "info",
            )
        )
    return out


def _read(
    out: OccLoad, path: Path, row: SessionRow | None, step: Callable[[str], None] | None
) -> None:
    if step is not None:
        step(path.name)
    try:
        session = load_occ_transcript(path, row)
        modified = path.stat().st_mtime
    except FormatError as exc:
        out.problems.append(Problem(exc.file, exc.line, exc.detail))
        return
    except OSError as exc:
        out.problems.append(Problem(str(path), 0, f"cannot read: {exc.strerror or exc}"))
        return
    if row is not None and row.updated_ms:
        modified = row.updated_ms / 1000
    out.sessions.append(OccSession(session, row, modified))
    out.problems.extend(session.problems)
