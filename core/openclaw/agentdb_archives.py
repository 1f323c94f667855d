"""Transcripts OpenClaw archived: rows of the agent database, and ``.jsonl.<reason>`` files.

A reset, a deletion or cold storage moves a transcript into
``session_transcript_archives`` / ``session_transcript_cold_archives`` (read by
:func:`archive_rows` and :func:`load_archive_row`), or leaves an archive file next to
the live ones (:func:`load_archive`). zstd frames are opened with
:func:`zstd_decompressor`, which the event reader of :mod:`core.openclaw.agentdb` shares.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.io.jsonio import as_int
from core.io.problems import FormatError
from core.transcript.loader import parse_transcript

if TYPE_CHECKING:
    from core.openclaw.sqlite_ro import ReadOnlyDb
    from core.transcript.model import Session

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
SEP = "#"
"""Between the database path and the session id (as :data:`core.openclaw.agentdb.SEP`)."""


@dataclass(frozen=True, slots=True)
class ArchiveRow:
    """A transcript OpenClaw archived into its database (reset, deleted, cold storage)."""

    name: str
    """``archive_name``: unique, and the file name when it is published to ``sessions/``."""
    session_id: str
    reason: str
    """``reset``, ``deleted``, or ``cold`` for ``session_transcript_cold_archives``."""
    table: str
    created_at: int | None
    in_database: bool
    """False for a cold archive kept as a file (``storage = 'file'``)."""


ARCHIVE_PREFIX = "archive/"
"""Session paths ``<db>#archive/<archive_name>`` name an archive row."""


ARCHIVE_MAX_BYTES = 1 << 30
"""Largest archived transcript memlens decompresses (1 GiB): a bigger one is refused."""


def zstd_decompressor() -> Any:
    """A ``zstandard.ZstdDecompressor``, or None without the zstandard module."""
    try:
        import zstandard
    except ImportError:  # pragma: no cover - a dependency; said plainly if missing
        return None
    return zstandard.ZstdDecompressor()


def archive_rows(db: ReadOnlyDb, tables: set[str]) -> list[ArchiveRow]:
    """The transcripts archived in the database, oldest first (blobs are not read).

    Rows of ``session_transcript_archives`` (reset and deleted generations) and
    ``session_transcript_cold_archives`` (cold storage).
    """
    out: list[ArchiveRow] = []
    if "session_transcript_archives" in tables:
        for name, sid, reason, created in db.rows(
            "SELECT archive_name, session_id, reason, created_at "
            "FROM session_transcript_archives ORDER BY created_at"
        ):
            out.append(
                ArchiveRow(str(name), str(sid), str(reason), "session_transcript_archives",
                           as_int(created), True)
            )  # fmt: skip
    if "session_transcript_cold_archives" in tables:
        for name, sid, created, storage in db.rows(
            "SELECT archive_name, session_id, archived_at, storage "
            "FROM session_transcript_cold_archives ORDER BY archived_at"
        ):
            out.append(
                ArchiveRow(str(name), str(sid), "cold", "session_transcript_cold_archives",
                           as_int(created), storage == "sqlite")
            )  # fmt: skip
    return out


def load_archive_row(db: ReadOnlyDb, tables: set[str], name: str, *, db_path: str) -> Session:
    """The archived transcript *name* kept in database *db_path*, as a :class:`Session` (read-only).

    Raises
    ------
    FormatError
        When there is no such archive, it is kept as a file, or it cannot be decoded.
    """
    path = f"{db_path}{SEP}{ARCHIVE_PREFIX}{name}"
    blob: Any = None
    encoding = "identity"
    if "session_transcript_archives" in tables:
        rows = db.rows(
            "SELECT archive_blob, encoding FROM session_transcript_archives WHERE archive_name = ?",
            (name,),
        )
        if rows:
            blob, encoding = rows[0]
    if blob is None and "session_transcript_cold_archives" in tables:
        rows = db.rows(
            "SELECT archive_blob FROM session_transcript_cold_archives WHERE archive_name = ?",
            (name,),
        )
        if rows:
            blob = rows[0][0]
            encoding = "zstd" if bytes(blob or b"")[:4] == ZSTD_MAGIC else "identity"
    if blob is None:
        raise FormatError(path, "no archive of that name in the database (or kept as a file)")
    data = bytes(blob)
    if encoding == "zstd":
        decoder = zstd_decompressor()
        try:
            data = decoder.decompress(data, max_output_size=ARCHIVE_MAX_BYTES)
        except Exception as exc:  # zstandard.ZstdError
            raise FormatError(path, f"archive cannot be decompressed ({exc})") from exc
    session = parse_transcript(data, path)
    session.db = db_path
    return session


def load_archive(path: str | os.PathLike[str]) -> Session:
    """An archived transcript file: ``<id>.jsonl.<reason>.<time>``, zstd when ``.zst``.

    Raises
    ------
    FormatError
        When it cannot be read or decoded, or is not a transcript.
    """
    from core.io.safe_read import open_regular
    from core.transcript.loader import load_transcript, parse_transcript

    name = os.fspath(path)
    if not name.endswith(".zst"):
        return load_transcript(name)
    decoder = zstd_decompressor()
    if decoder is None:  # pragma: no cover - a dependency
        raise FormatError(name, "a zstd archive and no zstandard module: install zstandard")
    try:
        with open_regular(name) as fh, decoder.stream_reader(fh) as reader:
            data = reader.read(ARCHIVE_MAX_BYTES + 1)
    except FileNotFoundError as exc:
        raise FormatError(name, f"cannot read: {exc.strerror or exc}") from exc
    except OSError as exc:
        raise FormatError(name, f"cannot read: {exc.strerror or exc}") from exc
    except Exception as exc:  # zstandard.ZstdError: a damaged frame
        raise FormatError(name, f"not a readable zstd archive ({exc})") from exc
    if len(data) > ARCHIVE_MAX_BYTES:
        raise FormatError(name, f"decompresses to more than {ARCHIVE_MAX_BYTES:,} bytes; skipped")
    return parse_transcript(data, name)
