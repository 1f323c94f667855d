"""OpenClaw's memory index, opened read-only.

Two places and two table layouts are known:

* **canonical**, inside the per-agent database
  ``$STATE/agents/<agentId>/agent/openclaw-agent.sqlite`` (OpenClaw 2026.9+):
  ``memory_index_meta``, ``memory_index_sources``, ``memory_index_chunks``,
  ``memory_embedding_cache``, ``memory_index_chunks_fts``,
  ``memory_index_paths_fts``, ``memory_index_chunks_vec``,
  ``memory_index_chunk_recall_metadata``, ``memory_index_chunk_provenance``. The
  database holds many other tables (sessions, transcripts): they are ignored.
* **legacy**, the standalone ``$STATE/memory/<agentId>.sqlite`` of older
  releases (formats.md section 5): ``meta``, ``files``, ``chunks``,
  ``embedding_cache``, ``chunks_fts``, ``chunks_vec``. ``openclaw doctor``
  imports it into the agent database (``doctor-memory-sidecar-import``).

Embeddings: since schema v23 a BLOB of little-endian float64 values (8 bytes per
dimension, no header; an FTS-only chunk has a 0-byte BLOB and model
``fts-only``). Before v23, and in the legacy layout, a TEXT JSON array. A BLOB
whose length is not a multiple of 8, or that holds a non-finite value, is
unusable (OpenClaw's ``decodeMemoryEmbedding`` gives ``[]``): memlens reports it
as a problem naming the file and the chunk.

The file is opened with :class:`core.openclaw.sqlite_ro.ReadOnlyDb`: never a
write, never a ``-wal``/``-shm`` file beside OpenClaw's database. Missing tables
or columns are reported, never fatal. No extension is loaded: the sqlite-vec
table is listed but never read (the chunks table holds the same vectors).

The records read are :mod:`core.openclaw.memindex_records`, embeddings are decoded
by :mod:`core.openclaw.memindex_embedding`, the workspace compared by
:mod:`core.openclaw.memindex_workspace`.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.io import jsonio
from core.io.closing import Closing
from core.io.jsonio import as_int
from core.io.problems import FormatError, Problem
from core.openclaw.memindex_embedding import (
    UNUSABLE_EMBEDDING,
    decode_embedding,
    embedding_problem,
)
from core.openclaw.memindex_records import (
    CacheEntry,
    EmbeddingState,
    FileState,
    IndexChunk,
    IndexFile,
    IndexLayout,
    RecallInfo,
    SourceSummary,
)
from core.openclaw.memindex_workspace import compare_with_workspace
from core.openclaw.sqlite_ro import ReadOnlyDb

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator, Sequence

    import numpy as np
    import numpy.typing as npt

META_KEY = "memory_index_meta_v1"
VECTOR_REBUILD_KEY = "memory_vector_rebuild_v1"
SCHEMA_VERSION = 23
"""The newest agent-database schema memlens knows (OpenClaw 2026.9.6)."""
FTS_ONLY_MODEL = "fts-only"

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
_CANONICAL_EXTRA = (
    "memory_index_paths_fts",
    "memory_index_chunk_recall_metadata",
    "memory_index_chunk_provenance",
)


def open_memory_index(path: str | os.PathLike[str]) -> MemoryIndex:
    """Open a memory index read-only.

    Raises
    ------
    FormatError
        When the file does not exist, is not an SQLite database or cannot be read.
    """
    return MemoryIndex(path)


class MemoryIndex(Closing):
    """A read-only handle on a memory index; use as a context manager or close()."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.db = ReadOnlyDb(self.path)
        try:
            self._objects = self._read_schema()
            self.schema_version = self.db.user_version()
        except FormatError:
            self.db.close()
            raise
        self._column_cache: dict[str, list[str]] = {}
        self.layout = self._detect_layout()
        problems = [
            Problem(self.path, 0, f"table {name!r} is missing", "warning")
            for name in self.layout.missing
        ]
        if self.layout.name == "canonical" and self.schema_version > SCHEMA_VERSION:
            problems.insert(
                0,
                Problem(
                    self.path,
                    0,
                    f"schema version {self.schema_version} is newer than the {SCHEMA_VERSION}"
                    " memlens knows: reading what is recognisable",
                    "warning",
                ),
            )
        self.problems = tuple(problems)

    # -- plumbing ----------------------------------------------------------------

    def close(self) -> None:
        """Close the database connection."""
        self.db.close()

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.db.rows(sql, params)

    def _read_schema(self) -> dict[str, str]:
        rows = self._rows("SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type = 'table'")
        return {str(name): str(sql) for name, sql in rows}

    def _detect_layout(self) -> IndexLayout:
        legacy, canonical = _LAYOUTS["legacy"], _LAYOUTS["canonical"]
        # An agent database has many tables of its own; the memory_index_* ones decide.
        has_canonical = any(t in self._objects for t in canonical[:3])
        has_legacy = any(t in self._objects for t in legacy[:3])
        name = "canonical" if has_canonical or not has_legacy else "legacy"
        if not has_canonical and not has_legacy:
            name = "legacy" if Path(self.path).name != "openclaw-agent.sqlite" else "canonical"
        tables = _LAYOUTS[name]
        meta, files, chunks, cache, fts, vec = (t if t in self._objects else None for t in tables)
        missing = tuple(t for t in tables if t not in self._objects)
        extra: list[str | None] = [None, None, None]
        if name == "canonical":
            extra = [t if t in self._objects else None for t in _CANONICAL_EXTRA]
        return IndexLayout(name, meta, files, chunks, cache, fts, vec, missing, *extra)

    def columns(self, table: str) -> list[str]:
        """Column names of *table* (empty when it is missing)."""
        if table not in self._column_cache:
            rows = self._rows(f"PRAGMA table_info({quote(table)})")
            self._column_cache[table] = [str(row[1]) for row in rows]
        return self._column_cache[table]

    def _select(self, table: str, wanted: Sequence[str]) -> str:
        # Older indexes lack some columns (``source`` came later): select NULL.
        have = set(self.columns(table))
        cols = ", ".join(quote(c) if c in have else "NULL" for c in wanted)
        return f"SELECT {cols} FROM {quote(table)}"

    # -- public ------------------------------------------------------------------

    def tables(self) -> tuple[str, ...]:
        """Every table in the database (virtual and shadow tables included)."""
        return tuple(sorted(self._objects))

    def has_memory(self) -> bool:
        """True when the database holds a memory index at all (chunks or sources)."""
        return self.layout.chunks is not None or self.layout.files is not None

    def meta_value(self, key: str) -> str | None:
        """One ``memory_index_meta`` value as stored, or None."""
        if self.layout.meta is None:
            return None
        rows = self._rows(f"SELECT value FROM {quote(self.layout.meta)} WHERE key = ?", (key,))
        if not rows or rows[0][0] is None:
            return None
        value = rows[0][0]
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)

    def meta_raw(self) -> str | None:
        """Return the ``memory_index_meta_v1`` value as stored, or None."""
        return self.meta_value(META_KEY)

    def meta(self) -> Any:
        """Return the ``memory_index_meta_v1`` value, parsed when it is JSON (else the text).

        OpenClaw stores ``{"model", "provider", "providerKey", "sources", "scopeHash",
        "chunkTokens", "chunkOverlap", "chunkingVersion", "ftsTokenizer",
        "provenanceVersion", "vectorDims"}``.
        """
        raw = self.meta_raw()
        if raw is None:
            return None
        try:
            value = jsonio.loads(raw)
        except jsonio.JSONDecodeError:
            return raw
        return raw if jsonio.too_deep(value, raw) else value

    def meta_dict(self) -> dict[str, Any]:
        """:meth:`meta` when it is an object, else ``{}``."""
        value = self.meta()
        return value if isinstance(value, dict) else {}

    def fts_tokenizer(self, meta: dict[str, Any] | None = None) -> str:
        """``unicode61`` or ``trigram``: from the meta (*meta*: read already), else the DDL."""
        tokenizer = (self.meta_dict() if meta is None else meta).get("ftsTokenizer")
        if isinstance(tokenizer, str) and tokenizer:
            return tokenizer
        ddl = self._objects.get(self.layout.fts or "", "")
        return "trigram" if "trigram" in ddl else "unicode61"

    def files(self, source: str | None = None) -> list[IndexFile]:
        """List the indexed files, by path; only those of *source* when given."""
        return [f for f in self._files("", ()) if source is None or f.source == source]

    def _files(self, where: str, params: Sequence[Any]) -> list[IndexFile]:
        if self.layout.files is None:
            return []
        sql = self._select(self.layout.files, ("path", "source", "hash", "mtime", "size"))
        out: list[IndexFile] = []
        for p, s, h, m, z in self._rows(sql + where + " ORDER BY path", params):
            mtime_ms = float(m) if isinstance(m, (int, float)) and math.isfinite(m) else None
            out.append(
                IndexFile(
                    str(p),
                    str(s) if s is not None else "memory",
                    None if h is None else str(h),
                    None if mtime_ms is None else math.floor(mtime_ms),
                    as_int(z),
                    mtime_ms,
                )
            )
        return out

    def chunk_counts(self) -> dict[str, int]:
        """Count the chunks of each source."""
        if self.layout.chunks is None:
            return {}
        table = self.layout.chunks
        if "source" not in self.columns(table):
            (n,) = self._rows(f"SELECT count(*) FROM {quote(table)}")[0]
            return {"memory": int(n)} if n else {}
        rows = self._rows(f"SELECT source, count(*) FROM {quote(table)} GROUP BY source")
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
            Decode the ``embedding`` column too (float64 BLOB or JSON array); off
            by default because it is by far the largest column.
        """
        if self.layout.chunks is None:
            return
        table = self.layout.chunks
        have = set(self.columns(table))
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
        for row in self._rows(sql, params):
            emb: npt.NDArray[np.float64] | None = None
            state: EmbeddingState = "none"
            if with_embedding:
                emb, state = decode_embedding(row[9])
            cid, cpath, csrc, start, end, chash, model, text, updated = row[:9]
            yield IndexChunk(
                str(cid),
                str(cpath),
                str(csrc) if csrc is not None else "memory",
                as_int(start),
                as_int(end),
                None if chash is None else str(chash),
                None if model is None else str(model),
                text if isinstance(text, str) else "",
                as_int(updated),
                emb,
                state,
            )

    def chunks(self, **filters: Any) -> list[IndexChunk]:
        """List the chunks; same arguments as :meth:`iter_chunks`."""
        return list(self.iter_chunks(**filters))

    def embedding_problems(self, *, limit: int = 50, deep: bool = True) -> list[Problem]:
        """Chunks whose stored embedding is unusable, one problem each (at most *limit*).

        With ``deep=False`` only BLOBs whose length is not a multiple of 8 are
        found (one SQL query, no decoding: cheap on a large index); otherwise every
        vector is decoded and non-finite values and bad JSON are found too.
        """
        if self.layout.chunks is None or "embedding" not in self.columns(self.layout.chunks):
            return []
        table = quote(self.layout.chunks)
        if deep:
            sql = f"SELECT id, path, embedding FROM {table} WHERE length(embedding) > 0"
        else:
            sql = (
                f"SELECT id, path, embedding FROM {table} WHERE typeof(embedding) = 'blob'"
                f" AND length(embedding) % 8 != 0 LIMIT {int(limit)}"
            )
        out: list[Problem] = []
        for cid, cpath, value in self._rows(sql):
            _, state = decode_embedding(value)
            if state in UNUSABLE_EMBEDDING:
                out.append(embedding_problem(self.path, str(cid), str(cpath), state))
                if len(out) >= limit:
                    break
        return out

    def sources(self) -> list[SourceSummary]:
        """One summary per source found in the files or chunks tables."""
        files = self.files()
        counts = self.chunk_counts()
        models: dict[str, set[str]] = {}
        latest: dict[str, int] = {}
        if self.layout.chunks is not None:
            table = self.layout.chunks
            have = set(self.columns(table))
            src = "source" if "source" in have else "'memory'"
            model = "model" if "model" in have else "NULL"
            upd = "max(updated_at)" if "updated_at" in have else "NULL"
            sql = f"SELECT {src}, {model}, {upd} FROM {quote(table)} GROUP BY 1, 2"
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
            rows = self._rows(f"SELECT count(*) FROM {quote(self.layout.fts)}")
        except FormatError:  # this Python's SQLite may lack fts5
            return None
        return int(rows[0][0])

    def cache_entries(self, *, limit: int | None = None, offset: int = 0) -> list[CacheEntry]:
        """Rows of the embedding cache (newest first), without their vectors."""
        table = self.layout.embedding_cache
        if table is None:
            return []
        have = set(self.columns(table))
        cols = ["provider", "model", "provider_key", "hash", "dims", "updated_at"]
        select = ", ".join(quote(c) if c in have else "NULL" for c in cols)
        emb = "embedding" if "embedding" in have else "NULL"
        sql = f"SELECT {select}, {emb} FROM {quote(table)}"
        sql += " ORDER BY updated_at DESC, hash" if "updated_at" in have else ""
        params: list[Any] = []
        if limit is not None or offset:
            sql += " LIMIT ? OFFSET ?"
            params = [-1 if limit is None else limit, offset]
        out = []
        for prov, model, key, h, dims, upd, value in self._rows(sql, params):
            _, state = decode_embedding(value)
            size = len(value) if isinstance(value, (bytes, str)) else 0
            out.append(
                CacheEntry(
                    str(prov or ""), str(model or ""), str(key or ""), str(h or ""),
                    as_int(dims), size, as_int(upd), state,
                )
            )  # fmt: skip
        return out

    def cache_count(self) -> int:
        """Rows in the embedding cache."""
        if self.layout.embedding_cache is None:
            return 0
        return int(self._rows(f"SELECT count(*) FROM {quote(self.layout.embedding_cache)}")[0][0])

    def recall_info(self, ids: Sequence[str] | None = None) -> dict[str, RecallInfo]:
        """Recall metadata and provenance per chunk id (only chunks that have some).

        With *ids*, only those chunks; OpenClaw reads them with a LEFT JOIN from
        the chunks table, so a chunk without either row has no entry here.
        """
        meta, prov = self.layout.recall_metadata, self.layout.provenance
        if meta is None and prov is None:
            return {}
        # per chunk: importance, triggers, project key, origin, session kind, observed, supersedes
        out: dict[str, list[Any]] = {}
        wanted = None if ids is None else set(ids)
        if meta is not None:
            sql = self._select(meta, ("chunk_id", "importance", "triggers", "project_key"))
            for cid, imp, trig, proj in self._rows_for(sql, meta, wanted):
                if wanted is None or cid in wanted:
                    entry = out.get(str(cid))
                    if entry is None:
                        entry = out[str(cid)] = [None] * 7
                    entry[0] = imp if isinstance(imp, int) else None
                    entry[1] = trig if isinstance(trig, str) else None
                    entry[2] = proj if isinstance(proj, str) else None
        if prov is not None:
            cols = ("chunk_id", "origin_class", "session_kind", "observed_at", "supersedes_key")
            for cid, origin, kind, seen, sup in self._rows_for(
                self._select(prov, cols), prov, wanted
            ):
                if wanted is None or cid in wanted:
                    entry = out.get(str(cid))
                    if entry is None:
                        entry = out[str(cid)] = [None] * 7
                    entry[3] = origin if isinstance(origin, str) else None
                    entry[4] = kind if isinstance(kind, str) else None
                    entry[5] = seen if isinstance(seen, int) else None
                    entry[6] = sup if isinstance(sup, str) else None
        return {cid: RecallInfo(cid, *fields) for cid, fields in out.items()}

    def _rows_for(self, sql: str, table: str, ids: set[str] | None) -> list[tuple[Any, ...]]:
        """Rows of *sql* (over *table*), only those whose chunk_id may be in *ids*.

        The filter in SQL only narrows the read (the callers test each id again):
        reading a whole provenance table per search is slow on a large index.
        """
        if ids is None or "chunk_id" not in self.columns(table):
            return self._rows(sql)
        wanted = sorted(ids)
        out: list[tuple[Any, ...]] = []
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            marks = ", ".join("?" * len(part))
            out += self._rows(f"{sql} WHERE chunk_id IN ({marks})", part)
        return out

    def file_mtimes(self, source: str, paths: Sequence[str]) -> dict[str, float | None]:
        """``{path: mtime_ms}`` of the indexed files of *source* among *paths*.

        The same values as ``{f.path: f.mtime_ms for f in files(source)}`` restricted to
        *paths*, read without listing every file.
        """
        if self.layout.files is None or not paths:
            return {}
        wanted = sorted(set(paths))
        if any("\ufffd" in p for p in wanted):  # a path that was not UTF-8: compare decoded
            return {f.path: f.mtime_ms for f in self.files(source) if f.path in wanted}
        out: dict[str, float | None] = {}
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            marks = ", ".join("?" * len(part))
            for f in self._files(f" WHERE path IN ({marks})", part):
                if f.source == source and f.path in wanted:
                    out[f.path] = f.mtime_ms
        return out

    def vector_state(self) -> dict[str, Any]:
        """What ``openclaw memory status`` calls ``vector.index``, as far as a reader knows.

        ``state`` is ``empty`` (no semantic chunk or provider ``none``),
        ``complete``, or ``incomplete`` (the rebuild flag is set); ``dims`` from
        the meta.
        """
        meta = self.meta_dict()
        semantic = 0
        if self.layout.chunks is not None and "model" in self.columns(self.layout.chunks):
            sql = f"SELECT count(*) FROM {quote(self.layout.chunks)} WHERE model != ?"
            semantic = int(self._rows(sql, (FTS_ONLY_MODEL,))[0][0])
        if meta.get("provider") == "none" or semantic == 0:
            return {"state": "empty", "dims": meta.get("vectorDims")}
        rebuild = self.meta_value(VECTOR_REBUILD_KEY)
        state = "incomplete" if rebuild not in (None, "clean") else "complete"
        return {
            "state": state,
            "dims": meta.get("vectorDims"),
            "table": self.layout.vec,
            "semanticChunks": semantic,
        }

    def file_states(self, workspace: str | os.PathLike[str] | None) -> list[FileState]:
        """Compare the indexed files with the workspace (never written, only read).

        See :func:`core.openclaw.memindex_workspace.compare_with_workspace`.
        """
        return compare_with_workspace(self.files(), workspace)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a read query of your own; sqlite3 errors pass through unchanged.

        The connection is read-only: a statement that writes raises
        ``sqlite3.OperationalError``.
        """
        return self.db.connection.execute(sql, params).fetchall()

    @property
    def connection(self) -> sqlite3.Connection:
        """The read-only connection (for memsearch's FTS queries)."""
        return self.db.connection


def quote(name: str) -> str:
    """An SQL identifier, quoted."""
    return '"' + name.replace('"', '""') + '"'
