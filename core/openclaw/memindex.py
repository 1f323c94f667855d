"""OpenClaw's memory index, ``~/.openclaw/memory/<agentId>.sqlite``, opened read-only.

Two table layouts are known (formats.md section 5 and openclaw/openclaw
``src/memory/memory-schema.ts``): the shipped one (``meta``, ``files``, ``chunks``,
``embedding_cache``, ``chunks_fts``, ``chunks_vec``) and the later canonical one
(``memory_index_meta``, ``memory_index_sources``, ``memory_index_chunks``,
``memory_embedding_cache``, ``memory_index_chunks_fts``, ``memory_index_chunks_vec``).
Missing tables or columns (older or newer indexes) are reported, never fatal.

The database is opened with ``mode=ro`` and ``PRAGMA query_only``: memlens cannot
change it. No extension is loaded: the sqlite-vec table is listed but never read.
Embeddings are only decoded when asked for.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from core import jsonio
from core.jsonio import as_int
from core.problems import FormatError, Problem
from core.safe_read import open_regular

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from types import TracebackType

    import numpy.typing as npt

META_KEY = "memory_index_meta_v1"
SQLITE_MAGIC = b"SQLite format 3\x00"

_LAYOUTS: dict[str, tuple[str, ...]] = {
    "legacy": ("meta", "files", "chunks", "embedding_cache", "chunks_fts", "chunks_vec"),
    "canonical": (
        "memory_index_meta",
        "memory_index_sources",
        "memory_index_chunks",
        "memory_embedding_cache",
        "memory_index_chunks_fts",
        "memory_index_chunks_vec",
    ),
}


@dataclass(frozen=True, slots=True)
class IndexLayout:
    """Which tables of the index exist (None for a missing one)."""

    name: str
    """``legacy`` or ``canonical``."""
    meta: str | None
    files: str | None
    chunks: str | None
    embedding_cache: str | None
    fts: str | None
    vec: str | None
    missing: tuple[str, ...]
    """Names of the expected tables that are absent."""


@dataclass(frozen=True, slots=True)
class IndexFile:
    """One indexed source file (a ``files`` row)."""

    path: str
    source: str
    hash: str | None
    mtime: int | None
    size: int | None


@dataclass(frozen=True, slots=True)
class IndexChunk:
    """One chunk of an indexed file; ``embedding`` only when asked for."""

    id: str
    path: str
    source: str
    start_line: int | None
    end_line: int | None
    hash: str | None
    model: str | None
    text: str
    updated_at: int | None
    embedding: npt.NDArray[np.float32] | None = None


@dataclass(frozen=True, slots=True)
class SourceSummary:
    """Totals for one source (``memory`` or ``sessions``)."""

    source: str
    files: int
    chunks: int
    bytes: int
    """Sum of the indexed files' sizes."""
    models: tuple[str, ...]
    """Embedding models of the chunks, sorted."""
    last_updated: int | None
    """Newest chunk ``updated_at`` (epoch ms), if recorded."""


def _lenient_text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def open_memory_index(path: str | os.PathLike[str]) -> MemoryIndex:
    """Open a memory index read-only.

    Raises
    ------
    FormatError
        When the file does not exist, is not an SQLite database or cannot be read.
    """
    return MemoryIndex(path)


class MemoryIndex:
    """A read-only handle on a memory index; use as a context manager or close()."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        target = Path(self.path)
        # mode=ro fails on a missing file anyway, but never let sqlite create one.
        try:
            with open_regular(target) as fh:  # never a FIFO or a device
                head = fh.read(len(SQLITE_MAGIC))
        except FileNotFoundError:
            raise FormatError(self.path, "no such file") from None
        except OSError as exc:
            raise FormatError(self.path, f"cannot read: {exc.strerror or exc}") from exc
        if head != SQLITE_MAGIC:
            raise FormatError(self.path, "not an SQLite database")
        uri = target.resolve().as_uri() + "?mode=ro"
        try:
            self._db = sqlite3.connect(uri, uri=True)
        except sqlite3.Error as exc:
            raise FormatError(self.path, f"cannot open: {exc}") from exc
        # A damaged page can hold bytes that are not UTF-8: read them, never fail on them.
        self._db.text_factory = _lenient_text
        try:
            self._db.execute("PRAGMA query_only = ON")
            self._objects = self._read_schema()
        except FormatError:
            self._db.close()
            raise
        self.layout = self._detect_layout()
        self.problems = tuple(
            Problem(self.path, 0, f"table {name!r} is missing", "warning")
            for name in self.layout.missing
        )

    # -- plumbing ----------------------------------------------------------------

    def __enter__(self) -> MemoryIndex:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._db.execute(sql, params).fetchall()
        except (sqlite3.Error, ValueError) as exc:
            raise FormatError(self.path, f"cannot read the index: {exc}") from exc

    def _read_schema(self) -> dict[str, str]:
        rows = self._rows("SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type = 'table'")
        return {str(name): str(sql) for name, sql in rows}

    def _detect_layout(self) -> IndexLayout:
        legacy, canonical = _LAYOUTS["legacy"], _LAYOUTS["canonical"]
        # The canonical layout lives in a database of its own; a legacy table wins.
        has_canonical = any(t in self._objects for t in canonical[:3])
        has_legacy = any(t in self._objects for t in legacy[:3])
        name = "canonical" if has_canonical and not has_legacy else "legacy"
        tables = _LAYOUTS[name]
        meta, files, chunks, cache, fts, vec = (t if t in self._objects else None for t in tables)
        missing = tuple(t for t in tables if t not in self._objects)
        return IndexLayout(name, meta, files, chunks, cache, fts, vec, missing)

    def _columns(self, table: str) -> list[str]:
        return [row[1] for row in self._rows(f"PRAGMA table_info({_quote(table)})")]

    def _select(self, table: str, wanted: Sequence[str]) -> str:
        # Older indexes lack some columns (``source`` came later): select NULL.
        have = set(self._columns(table))
        cols = ", ".join(_quote(c) if c in have else "NULL" for c in wanted)
        return f"SELECT {cols} FROM {_quote(table)}"

    # -- public ------------------------------------------------------------------

    def tables(self) -> tuple[str, ...]:
        """Every table in the database (virtual and shadow tables included)."""
        return tuple(sorted(self._objects))

    def meta_raw(self) -> str | None:
        """Return the ``memory_index_meta_v1`` value as stored, or None."""
        if self.layout.meta is None:
            return None
        sql = f"SELECT value FROM {_quote(self.layout.meta)} WHERE key = ?"
        rows = self._rows(sql, (META_KEY,))
        if not rows or rows[0][0] is None:
            return None
        value = rows[0][0]
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)

    def meta(self) -> Any:
        """Return the ``memory_index_meta_v1`` value, parsed when it is JSON (else the text).

        OpenClaw stores e.g. ``{"model", "provider", "providerKey", "chunkTokens",
        "chunkOverlap", "vectorDims"}``.
        """
        raw = self.meta_raw()
        if raw is None:
            return None
        try:
            value = jsonio.loads(raw)
        except jsonio.JSONDecodeError:
            return raw
        return raw if jsonio.too_deep(value, raw) else value

    def files(self, source: str | None = None) -> list[IndexFile]:
        """List the indexed files, by path; only those of *source* when given."""
        if self.layout.files is None:
            return []
        sql = self._select(self.layout.files, ("path", "source", "hash", "mtime", "size"))
        out = [
            IndexFile(str(p), str(s) if s is not None else "memory", h, as_int(m), as_int(z))
            for p, s, h, m, z in self._rows(sql + " ORDER BY path")
        ]
        return [f for f in out if source is None or f.source == source]

    def chunk_counts(self) -> dict[str, int]:
        """Count the chunks of each source."""
        if self.layout.chunks is None:
            return {}
        table = self.layout.chunks
        if "source" not in self._columns(table):
            (n,) = self._rows(f"SELECT count(*) FROM {_quote(table)}")[0]
            return {"memory": int(n)} if n else {}
        rows = self._rows(f"SELECT source, count(*) FROM {_quote(table)} GROUP BY source")
        return {str(s) if s is not None else "memory": int(n) for s, n in rows}

    def iter_chunks(
        self,
        *,
        source: str | None = None,
        path: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        with_embedding: bool = False,
    ) -> Iterator[IndexChunk]:
        """Yield chunks ordered by path and start line.

        Parameters
        ----------
        source, path
            Keep only chunks of this source / file.
        limit, offset
            Page through the chunks.
        with_embedding
            Decode the ``embedding`` column (JSON array or float32 blob) too;
            off by default because it is by far the largest column.
        """
        if self.layout.chunks is None:
            return
        table = self.layout.chunks
        have = set(self._columns(table))
        wanted = ["id", "path", "source", "start_line", "end_line", "hash", "model", "text"]
        wanted += ["updated_at"] + (["embedding"] if with_embedding else [])
        sql = self._select(table, wanted)
        where: list[str] = []
        params: list[Any] = []
        if source is not None:
            where.append("source = ?" if "source" in have else "'memory' = ?")
            params.append(source)
        if path is not None:
            where.append("path = ?")
            params.append(path)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY path, start_line"
        if limit is not None or offset:
            sql += " LIMIT ? OFFSET ?"
            params += [-1 if limit is None else limit, offset]
        try:
            cursor = self._db.execute(sql, params)
            for row in cursor:
                emb = _embedding(row[9]) if with_embedding else None
                cid, cpath, csrc, start, end, chash, model, text, updated = row[:9]
                yield IndexChunk(
                    str(cid),
                    str(cpath),
                    str(csrc) if csrc is not None else "memory",
                    as_int(start),
                    as_int(end),
                    chash,
                    model,
                    text if isinstance(text, str) else "",
                    as_int(updated),
                    emb,
                )
        except (sqlite3.Error, ValueError) as exc:
            raise FormatError(self.path, f"cannot read the index: {exc}") from exc

    def chunks(self, **filters: Any) -> list[IndexChunk]:
        """List the chunks; same arguments as :meth:`iter_chunks`."""
        return list(self.iter_chunks(**filters))

    def sources(self) -> list[SourceSummary]:
        """One summary per source found in the files or chunks tables."""
        files = self.files()
        counts = self.chunk_counts()
        models: dict[str, set[str]] = {}
        latest: dict[str, int] = {}
        if self.layout.chunks is not None:
            table = self.layout.chunks
            have = set(self._columns(table))
            src = "source" if "source" in have else "'memory'"
            model = "model" if "model" in have else "NULL"
            upd = "max(updated_at)" if "updated_at" in have else "NULL"
            sql = f"SELECT {src}, {model}, {upd} FROM {_quote(table)} GROUP BY 1, 2"
            for s, m, u in self._rows(sql):
                key = str(s) if s is not None else "memory"
                if m is not None:
                    models.setdefault(key, set()).add(str(m))
                if as_int(u) is not None:
                    latest[key] = max(latest.get(key, 0), int(u))
        names = sorted({f.source for f in files} | set(counts))
        return [
            SourceSummary(
                source=name,
                files=sum(1 for f in files if f.source == name),
                chunks=counts.get(name, 0),
                bytes=sum(f.size or 0 for f in files if f.source == name),
                models=tuple(sorted(models.get(name, ()))),
                last_updated=latest.get(name),
            )
            for name in names
        ]

    def fts_rows(self) -> int | None:
        """Rows in the FTS5 table, or None when it is missing or unreadable here."""
        if self.layout.fts is None:
            return None
        try:
            (n,) = self._db.execute(f"SELECT count(*) FROM {_quote(self.layout.fts)}").fetchone()
        except sqlite3.DatabaseError:  # this Python's SQLite may lack fts5
            return None
        return int(n)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a read query of your own; sqlite3 errors pass through unchanged.

        The connection is read-only: a statement that writes raises
        ``sqlite3.OperationalError``.
        """
        return self._db.execute(sql, params).fetchall()


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _embedding(value: Any) -> npt.NDArray[np.float32] | None:
    # OpenClaw stores a JSON array as TEXT; a BLOB is read as packed float32.
    if isinstance(value, bytes):
        if len(value) % 4:
            return None
        return np.frombuffer(value, dtype="<f4").astype(np.float32)
    if isinstance(value, str):
        try:
            data = jsonio.loads(value)
        except jsonio.JSONDecodeError:
            return None
        if isinstance(data, list) and not jsonio.too_deep(data, value):
            try:
                return np.asarray(data, dtype=np.float32)
            except (TypeError, ValueError):
                return None
    return None
