from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from core.io.problems import FormatError, Problem
from core.openclaw.memindex import open_memory_index
from core.openclaw.memindex_records import IndexChunk, IndexFile, SourceSummary

# The shipped schema (openclaw/openclaw src/memory/memory-schema.ts).
LEGACY_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (
  path TEXT PRIMARY KEY,
  source TEXT NOT NULL DEFAULT 'memory',
  hash TEXT NOT NULL,
  mtime INTEGER NOT NULL,
  size INTEGER NOT NULL
);
CREATE TABLE chunks (
  id TEXT PRIMARY KEY,
  path TEXT NOT NULL,
  source TEXT NOT NULL DEFAULT 'memory',
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  hash TEXT NOT NULL,
  model TEXT NOT NULL,
  text TEXT NOT NULL,
  embedding TEXT NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE embedding_cache (
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  provider_key TEXT NOT NULL,
  hash TEXT NOT NULL,
  embedding TEXT NOT NULL,
  dims INTEGER,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (provider, model, provider_key, hash)
);
CREATE INDEX idx_chunks_path ON chunks(path);
CREATE INDEX idx_chunks_source ON chunks(source);
"""

FTS_SCHEMA = """
CREATE VIRTUAL TABLE chunks_fts USING fts5(
  text, id UNINDEXED, path UNINDEXED, source UNINDEXED, model UNINDEXED,
  start_line UNINDEXED, end_line UNINDEXED
);
"""

META = {
    "model": "text-embedding-3-small",
    "provider": "openai",
    "providerKey": "k",
    "chunkTokens": 400,
    "chunkOverlap": 80,
    "vectorDims": 3,
}

FILES = [
    ("memory/2026-04-01.md", "memory", "h1", 1775000000000, 120),
    ("MEMORY.md", "memory", "h2", 1775000001000, 80),
    ("sessions/abc.jsonl", "sessions", "h3", 1775000002000, 5000),
]

CHUNKS = [
    ("c1", "MEMORY.md", "memory", 1, 10, "ch1", "text-embedding-3-small", "likes tea", 10),
    ("c2", "memory/2026-04-01.md", "memory", 1, 5, "ch2", "text-embedding-3-small", "day", 20),
    ("c3", "memory/2026-04-01.md", "memory", 6, 9, "ch3", "text-embedding-3-small", "more", 30),
    ("c4", "sessions/abc.jsonl", "sessions", 1, 40, "ch4", "local-mini", "user: hi", 40),
]


def has_fts5() -> bool:
    try:
        sqlite3.connect(":memory:").execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    except sqlite3.OperationalError:
        return False
    return True


def add_vec_table(db: sqlite3.Connection) -> None:
    # sqlite-vec is not loaded here: declare the vec0 table the way SQLite allows
    # for a module it does not have. Reading it would fail with "no such module".
    db.execute("PRAGMA writable_schema = ON")
    db.execute(
        "INSERT INTO sqlite_master (type, name, tbl_name, rootpage, sql) VALUES "
        "('table', 'chunks_vec', 'chunks_vec', 0, "
        "'CREATE VIRTUAL TABLE chunks_vec USING vec0(id TEXT PRIMARY KEY, embedding FLOAT[3])')"
    )
    db.execute("PRAGMA writable_schema = OFF")


def make_index(path: Path, *, fts: bool = True, vec: bool = True) -> Path:
    db = sqlite3.connect(path)
    db.executescript(LEGACY_SCHEMA)
    db.execute("INSERT INTO meta VALUES ('memory_index_meta_v1', ?)", (json.dumps(META),))
    db.executemany("INSERT INTO files VALUES (?, ?, ?, ?, ?)", FILES)
    for i, c in enumerate(CHUNKS):
        emb = json.dumps([float(i), 0.5, -1.0])
        db.execute("INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (*c[:8], emb, c[8]))
    db.execute("INSERT INTO embedding_cache VALUES ('openai', 'm', 'k', 'ch1', '[1,0,0]', 3, 1)")
    if fts and has_fts5():
        db.executescript(FTS_SCHEMA)
        db.executemany(
            "INSERT INTO chunks_fts VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(c[7], c[0], c[1], c[2], c[6], c[3], c[4]) for c in CHUNKS],
        )
    db.commit()
    if vec:
        add_vec_table(db)
        db.commit()
    db.close()
    return path


@pytest.fixture
def index_path(tmp_path: Path) -> Path:
    return make_index(tmp_path / "main.sqlite")


def test_meta_files_counts(index_path: Path) -> None:
    with open_memory_index(index_path) as idx:
        assert idx.layout.name == "legacy"
        assert idx.problems == ()
        assert idx.meta() == META
        assert json.loads(idx.meta_raw() or "") == META
        assert idx.files() == [
            IndexFile("MEMORY.md", "memory", "h2", 1775000001000, 80),
            IndexFile("memory/2026-04-01.md", "memory", "h1", 1775000000000, 120),
            IndexFile("sessions/abc.jsonl", "sessions", "h3", 1775000002000, 5000),
        ]
        assert [f.path for f in idx.files("sessions")] == ["sessions/abc.jsonl"]
        assert idx.chunk_counts() == {"memory": 3, "sessions": 1}


def test_chunks_listing(index_path: Path) -> None:
    with open_memory_index(index_path) as idx:
        chunks = idx.chunks()
        assert [c.id for c in chunks] == ["c1", "c2", "c3", "c4"]  # by path, start line
        assert chunks[1] == IndexChunk(
            "c2",
            "memory/2026-04-01.md",
            "memory",
            1,
            5,
            "ch2",
            "text-embedding-3-small",
            "day",
            20,
            None,
        )
        assert all(c.embedding is None for c in chunks)
        assert [c.id for c in idx.chunks(source="sessions")] == ["c4"]
        assert [c.id for c in idx.chunks(path="memory/2026-04-01.md")] == ["c2", "c3"]
        assert [c.id for c in idx.chunks(limit=2, offset=1)] == ["c2", "c3"]
        assert [c.id for c in idx.chunks(offset=3)] == ["c4"]
        with_emb = idx.chunks(source="memory", with_embedding=True)
        assert with_emb[0].embedding is not None
        assert with_emb[0].embedding.dtype == np.float64
        assert with_emb[0].embedding_state == "ok"
        np.testing.assert_array_equal(with_emb[0].embedding, [0.0, 0.5, -1.0])


def test_sources_summary(index_path: Path) -> None:
    with open_memory_index(index_path) as idx:
        assert idx.sources() == [
            SourceSummary("memory", 2, 3, 200, ("text-embedding-3-small",), 30),
            SourceSummary("sessions", 1, 1, 5000, ("local-mini",), 40),
        ]


def test_virtual_tables(index_path: Path) -> None:
    with open_memory_index(index_path) as idx:
        assert idx.layout.vec == "chunks_vec"  # listed, never read
        assert "chunks_vec" in idx.tables()
        if has_fts5():
            assert idx.layout.fts == "chunks_fts"
            assert idx.fts_rows() == len(CHUNKS)
            hits = idx.query("SELECT id FROM chunks_fts WHERE chunks_fts MATCH ?", ("tea",))
            assert hits == [("c1",)]
        else:
            pytest.skip("this Python's SQLite has no fts5")


def test_read_only_cannot_write_and_changes_nothing(index_path: Path) -> None:
    folder = index_path.parent
    before = (index_path.read_bytes(), index_path.stat().st_mtime_ns)
    listing = sorted(p.name for p in folder.iterdir())
    with open_memory_index(index_path) as idx:
        idx.meta()
        idx.files()
        idx.chunks(with_embedding=True)
        idx.sources()
        idx.fts_rows()
        with pytest.raises(sqlite3.OperationalError, match=r"readonly|read-only|query_only"):
            idx.query("INSERT INTO meta VALUES ('x', 'y')")
        with pytest.raises(sqlite3.OperationalError):
            idx.query("DELETE FROM chunks")
        with pytest.raises(sqlite3.OperationalError):
            idx.query("CREATE TABLE evil (x)")
        # Even with query_only switched off, mode=ro still refuses.
        idx.query("PRAGMA query_only = OFF")
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            idx.query("UPDATE chunks SET text = 'changed'")
    assert (index_path.read_bytes(), index_path.stat().st_mtime_ns) == before
    assert sorted(p.name for p in folder.iterdir()) == listing


def test_wal_database_file_is_not_changed(tmp_path: Path) -> None:
    path = make_index(tmp_path / "wal.sqlite", vec=False)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = WAL")
    db.close()
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    with open_memory_index(path) as idx:
        assert idx.chunk_counts() == {"memory": 3, "sessions": 1}
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def test_missing_tables_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO meta VALUES ('memory_index_meta_v1', 'not json')")
    db.commit()
    db.close()
    with open_memory_index(path) as idx:
        assert idx.layout.files is None and idx.layout.chunks is None
        assert idx.layout.missing == (
            "files",
            "chunks",
            "embedding_cache",
            "chunks_fts",
            "chunks_vec",
        )
        assert [p.message for p in idx.problems] == [
            f"table {t!r} is missing" for t in idx.layout.missing
        ]
        assert all(p.file == str(path) for p in idx.problems)
        assert idx.meta() == "not json"
        assert idx.files() == []
        assert idx.chunk_counts() == {}
        assert idx.chunks() == []
        assert idx.sources() == []
        assert idx.fts_rows() is None


def test_empty_database(tmp_path: Path) -> None:
    path = tmp_path / "empty.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE unrelated (x)")
    db.commit()
    db.close()
    with open_memory_index(path) as idx:
        assert idx.meta() is None
        assert len(idx.layout.missing) == 6


def test_columns_missing_in_older_index(tmp_path: Path) -> None:
    # Before the ``source`` columns were added (OpenClaw adds them with ALTER TABLE).
    path = tmp_path / "older.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE files (path TEXT PRIMARY KEY, hash TEXT, mtime INT, size INT)")
    db.execute(
        "CREATE TABLE chunks (id TEXT PRIMARY KEY, path TEXT, start_line INT, end_line INT,"
        " hash TEXT, model TEXT, text TEXT, embedding TEXT)"
    )
    db.execute("INSERT INTO files VALUES ('MEMORY.md', 'h', 1, 2)")
    db.execute("INSERT INTO chunks VALUES ('c', 'MEMORY.md', 1, 2, 'h', 'm', 't', '[1]')")
    db.commit()
    db.close()
    with open_memory_index(path) as idx:
        assert idx.files() == [IndexFile("MEMORY.md", "memory", "h", 1, 2)]
        assert idx.chunk_counts() == {"memory": 1}
        (chunk,) = idx.chunks(source="memory")
        assert (chunk.source, chunk.updated_at, chunk.text) == ("memory", None, "t")
        assert idx.chunks(source="sessions") == []
        assert idx.sources() == [SourceSummary("memory", 1, 1, 2, ("m",), None)]


def test_canonical_layout(tmp_path: Path) -> None:
    path = tmp_path / "openclaw-agent.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE memory_index_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute(
        "CREATE TABLE memory_index_sources (id INTEGER PRIMARY KEY, path TEXT, source TEXT,"
        " hash TEXT, mtime INT, size INT)"
    )
    db.execute(
        "CREATE TABLE memory_index_chunks (id TEXT PRIMARY KEY, path TEXT, source TEXT,"
        " start_line INT, end_line INT, hash TEXT, model TEXT, text TEXT, embedding TEXT,"
        " updated_at INT)"
    )
    db.execute(
        "INSERT INTO memory_index_meta VALUES ('memory_index_meta_v1', '{\"vectorDims\":2}')"
    )
    db.execute("INSERT INTO memory_index_sources VALUES (1, 'a.md', 'memory', 'h', 1, 9)")
    db.execute(
        "INSERT INTO memory_index_chunks VALUES ('x', 'a.md', 'memory', 1, 1, 'h', 'm', 't',"
        " '[0.5, 0.25]', 7)"
    )
    db.commit()
    db.close()
    with open_memory_index(path) as idx:
        assert idx.layout.name == "canonical"
        assert idx.layout.chunks == "memory_index_chunks"
        assert idx.meta() == {"vectorDims": 2}
        assert idx.files() == [IndexFile("a.md", "memory", "h", 1, 9)]
        (chunk,) = idx.chunks(with_embedding=True)
        assert chunk.embedding is not None
        np.testing.assert_array_equal(chunk.embedding, [0.5, 0.25])
        assert "memory_embedding_cache" in idx.layout.missing


def test_blob_embedding_is_little_endian_float64(tmp_path: Path) -> None:
    path = tmp_path / "blob.sqlite"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE chunks (id TEXT, path TEXT, source TEXT, start_line INT, end_line INT,"
        " hash TEXT, model TEXT, text TEXT, embedding BLOB, updated_at INT)"
    )
    blob = np.array([1.0, -2.0, 0.1], dtype="<f8").tobytes()
    db.execute("INSERT INTO chunks VALUES ('b', 'p', 'memory', 1, 1, 'h', 'm', 't', ?, 1)", (blob,))
    db.commit()
    db.close()
    with open_memory_index(path) as idx:
        (chunk,) = idx.chunks(with_embedding=True)
        assert chunk.embedding is not None
        np.testing.assert_array_equal(chunk.embedding, [1.0, -2.0, 0.1])  # 3 dims, not 6


# --- files that are not usable -----------------------------------------------------


def test_missing_file_is_not_created(tmp_path: Path) -> None:
    path = tmp_path / "nope.sqlite"
    with pytest.raises(FormatError) as info:
        open_memory_index(path)
    assert info.value.file == str(path)
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "data", [b"", b"garbage, not a database\n" * 40, b"SQLite format 2\x00" + b"\x00" * 200]
)
def test_not_sqlite(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "bad.sqlite"
    path.write_bytes(data)
    with pytest.raises(FormatError, match="not an SQLite database") as info:
        open_memory_index(path)
    assert info.value.file == str(path)
    assert path.read_bytes() == data


def test_sqlite_header_then_garbage(tmp_path: Path) -> None:
    path = tmp_path / "bad.sqlite"
    data = b"SQLite format 3\x00" + bytes(range(256)) * 20
    path.write_bytes(data)
    with pytest.raises(FormatError) as info:
        open_memory_index(path)
    assert info.value.file == str(path)
    assert path.read_bytes() == data


@pytest.mark.parametrize("keep", [60, 0.5])
def test_truncated_sqlite(tmp_path: Path, keep: float) -> None:
    path = make_index(tmp_path / "full.sqlite", vec=False)
    # Make it several pages long, so a cut lands inside the table data.
    db = sqlite3.connect(path)
    db.executemany(
        "INSERT INTO chunks VALUES (?, 'big.md', 'memory', 1, 1, 'h', 'm', ?, '[]', 1)",
        [(f"x{i}", "word " * 200) for i in range(300)],
    )
    db.commit()
    db.close()
    data = path.read_bytes()
    cut = data[: int(keep if keep >= 1 else len(data) * keep)]
    path.write_bytes(cut)
    with pytest.raises(FormatError) as info:  # opening or any read may fail
        with open_memory_index(path) as idx:
            idx.meta()
            idx.files()
            idx.chunks()
            idx.sources()
    assert info.value.file == str(path)
    assert path.read_bytes() == cut


# --- the canonical layout inside OpenClaw 2026.9.6's agent database (schema v23) -------

V23_SCHEMA = (Path(__file__).parent / "data" / "openclaw_memory_v23.sql").read_text()
V23_META = {
    "model": "fake-embed",
    "provider": "openai-compatible",
    "providerKey": "k",
    "sources": ["memory", "sessions"],
    "chunkTokens": 400,
    "chunkOverlap": 80,
    "chunkingVersion": 5,
    "ftsTokenizer": "unicode61",
    "provenanceVersion": 1,
    "vectorDims": 3,
}


def f64(*values: float) -> bytes:
    """An embedding as OpenClaw 2026.9.6 stores it: little-endian float64, no header."""
    return np.array(values, dtype="<f8").tobytes()


def make_v23(
    path: Path,
    chunks: list[dict[str, Any]],
    *,
    meta: dict[str, Any] | None = None,
    sources: list[tuple[str, str, str, float, int]] | None = None,
    recall: list[tuple[str, int | None]] = (),  # type: ignore[assignment]
    provenance: list[tuple[str, str, str, int]] = (),  # type: ignore[assignment]
    cache: list[tuple[str, str, str, str, bytes, int]] = (),  # type: ignore[assignment]
    other_tables: bool = True,
    wal: bool = False,
    text_embeddings: bool = False,
) -> Path:
    """An agent database with the real v23 memory DDL (and unrelated tables besides).

    Each chunk is ``{id, path, text, embedding, [source, start, end, model, hash]}``.
    """
    db = sqlite3.connect(path)
    if wal:
        db.execute("PRAGMA journal_mode = WAL")
    schema = V23_SCHEMA
    if text_embeddings:  # before v23 (LEGACY_STORAGE_TABLES): JSON text arrays
        schema = schema.replace("embedding BLOB NOT NULL", "embedding TEXT NOT NULL")
        schema = schema.replace("user_version = 23", "user_version = 22")
    db.executescript(schema)
    if other_tables:
        db.execute("CREATE TABLE session_nodes (session_key TEXT PRIMARY KEY, entry_json TEXT)")
        db.execute("CREATE TABLE transcript_events (session_id TEXT, seq INTEGER, event_json TEXT)")
    db.execute(
        "INSERT INTO memory_index_meta VALUES (?, ?)",
        ("memory_index_meta_v1", json.dumps(meta if meta is not None else V23_META)),
    )
    db.execute("INSERT INTO memory_index_meta VALUES ('memory_vector_rebuild_v1', 'clean')")
    if sources is None:
        seen: dict[tuple[str, str], None] = {}
        for c in chunks:
            seen[(c["path"], c.get("source", "memory"))] = None
        sources = [(p, s, f"hash-{p}", 1_790_000_000_000.5, 100) for p, s in seen]
    db.executemany(
        "INSERT INTO memory_index_sources (path, source, hash, mtime, size) VALUES (?, ?, ?, ?, ?)",
        sources,
    )
    for c in chunks:
        db.execute(
            "INSERT INTO memory_index_chunks (id, path, source, start_line, end_line, hash, model,"
            " text, embedding, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                c["id"], c["path"], c.get("source", "memory"), c.get("start", 1),
                c.get("end", 1 + c["text"].count("\n")), c.get("hash", "h-" + c["id"]),
                c.get("model", "fake-embed"), c["text"], c.get("embedding", b""), 1_790_000_000_000,
            ),
        )  # fmt: skip
    db.executemany(
        "INSERT INTO memory_index_chunk_recall_metadata VALUES (?, ?, NULL, NULL)", recall
    )
    db.executemany(
        "INSERT INTO memory_index_chunk_provenance VALUES (?, ?, ?, ?, NULL)", provenance
    )
    db.executemany("INSERT INTO memory_embedding_cache VALUES (?, ?, ?, ?, ?, 3, ?)", cache)
    db.commit()
    db.close()
    return path


def test_agent_database_v23(tmp_path: Path) -> None:
    path = make_v23(
        tmp_path / "openclaw-agent.sqlite",
        [
            {"id": "a", "path": "MEMORY.md", "text": "# Memory\\nx", "embedding": f64(1, 0, 0)},
            {"id": "b", "path": "memory/2026-01-02.md", "text": "day", "embedding": f64(0, 1, 0)},
            {"id": "s", "path": "sessions/main/s1.jsonl", "source": "sessions", "text": "User: hi",
             "embedding": f64(0, 0, 1)},
        ],
        recall=[("a", 7)],
        provenance=[("a", "agent", "unknown", 1_795_622_914_652)],
        cache=[("openai-compatible", "fake-embed", "k", "h-a", f64(1, 0, 0), 5)],
    )  # fmt: skip
    with open_memory_index(path) as idx:
        assert idx.layout.name == "canonical"
        assert idx.layout.paths_fts == "memory_index_paths_fts"
        assert idx.schema_version == 23
        assert idx.problems == (
            Problem(str(path), 0, "table 'memory_index_chunks_vec' is missing", "warning"),
        )
        assert idx.meta_dict()["vectorDims"] == 3
        assert idx.fts_tokenizer() == "unicode61"
        (f,) = idx.files("memory")[:1]
        assert (f.mtime, f.mtime_ms) == (1_790_000_000_000, 1_790_000_000_000.5)
        chunks = idx.chunks(with_embedding=True)
        assert [c.embedding_state for c in chunks] == ["ok", "ok", "ok"]
        np.testing.assert_array_equal(chunks[0].embedding, [1.0, 0.0, 0.0])
        assert [(s.source, s.files, s.chunks, s.models) for s in idx.sources()] == [
            ("memory", 2, 2, ("fake-embed",)),
            ("sessions", 1, 1, ("fake-embed",)),
        ]
        (entry,) = idx.cache_entries()
        assert (entry.provider, entry.hash, entry.dims, entry.bytes, entry.state) == (
            "openai-compatible", "h-a", 3, 24, "ok",
        )  # fmt: skip
        info = idx.recall_info()
        assert info["a"].importance == 7
        assert info["a"].provenance() == {
            "originClass": "agent",
            "sessionKind": "unknown",
            "observedAt": 1_795_622_914_652,
        }
        assert idx.vector_state()["state"] == "complete"
        assert idx.embedding_problems() == []


def test_fts_only_chunks_and_unusable_blobs(tmp_path: Path) -> None:
    bad_nan = f64(1.0, float("nan"), 0.0)
    path = make_v23(
        tmp_path / "openclaw-agent.sqlite",
        [
            {"id": "e", "path": "MEMORY.md", "text": "a", "embedding": b"", "model": "fts-only"},
            {"id": "odd", "path": "memory/x.md", "text": "b", "embedding": b"\x00" * 12},
            {"id": "nan", "path": "memory/y.md", "text": "c", "embedding": bad_nan},
        ],
    )
    with open_memory_index(path) as idx:
        states = {c.id: (c.embedding_state, c.embedding) for c in idx.chunks(with_embedding=True)}
        assert states == {
            "e": ("empty", None),
            "odd": ("bad-length", None),
            "nan": ("non-finite", None),
        }
        problems = idx.embedding_problems()
        assert [p.file for p in problems] == [str(path)] * 2
        quick = idx.embedding_problems(deep=False)  # lengths only, no decoding
        assert [p.message.split(":")[0] for p in quick] == ["chunk odd (memory/x.md)"]
        assert [p.message.split(":")[0] for p in problems] == [
            "chunk odd (memory/x.md)",
            "chunk nan (memory/y.md)",
        ]


def test_pre_v23_text_embeddings(tmp_path: Path) -> None:
    path = make_v23(
        tmp_path / "openclaw-agent.sqlite",
        [{"id": "j", "path": "MEMORY.md", "text": "a", "embedding": "[0.5, 0.25, 1e-300]"}],
        text_embeddings=True,
    )
    with open_memory_index(path) as idx:
        assert idx.schema_version == 22
        (chunk,) = idx.chunks(with_embedding=True)
        np.testing.assert_array_equal(chunk.embedding, [0.5, 0.25, 1e-300])


def test_newer_schema_version_is_read_with_a_warning(tmp_path: Path) -> None:
    path = make_v23(tmp_path / "openclaw-agent.sqlite", [{"id": "a", "path": "A.md", "text": "x"}])
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 24")
    db.commit()
    db.close()
    with open_memory_index(path) as idx:
        assert "schema version 24 is newer than the 23" in idx.problems[0].message
        assert [c.id for c in idx.chunks()] == ["a"]


def test_file_staleness_against_the_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    fresh = "# Memory\\nsame\\n"
    (ws / "MEMORY.md").write_text(fresh)
    (ws / "memory" / "2026-01-02.md").write_text("changed since indexing\\n")
    (ws / "memory" / "new.md").write_text("never indexed\\n")
    digest = hashlib.sha256(fresh.encode()).hexdigest()
    path = make_v23(
        tmp_path / "openclaw-agent.sqlite",
        [{"id": "a", "path": "MEMORY.md", "text": "x"}],
        sources=[
            ("MEMORY.md", "memory", digest, 1.0, len(fresh)),
            ("memory/2026-01-02.md", "memory", "old-hash", 1.0, 5),
            ("memory/gone.md", "memory", "h", 1.0, 5),
            ("sessions/main/s1.jsonl", "sessions", "sqlite:1:x", 1.0, 5),
        ],
    )
    with open_memory_index(path) as idx:
        states = {s.path: s.state for s in idx.file_states(ws)}
        assert states == {
            "MEMORY.md": "fresh",
            "memory/2026-01-02.md": "stale",
            "memory/gone.md": "missing",
            "sessions/main/s1.jsonl": "unknown",
            "memory/new.md": "new-unindexed",
        }
        assert {s.state for s in idx.file_states(None)} == {"unknown"}


def test_wal_agent_database_leaves_no_wal_or_shm(tmp_path: Path) -> None:
    path = make_v23(
        tmp_path / "openclaw-agent.sqlite",
        [{"id": "a", "path": "MEMORY.md", "text": "x", "embedding": f64(1, 0, 0)}],
        wal=True,
    )
    before = sorted(p.name for p in tmp_path.iterdir())
    assert before == ["openclaw-agent.sqlite"]
    with open_memory_index(path) as idx:
        idx.chunks(with_embedding=True)
        idx.file_states(tmp_path)
        idx.cache_entries()
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_file_mtimes_answer_as_the_files_list(tmp_path: Path) -> None:
    """The indexed mtimes of some paths, as listing every file gives them, writes seen."""
    from core.openclaw.memindex import MemoryIndex

    path = tmp_path / "openclaw-agent.sqlite"
    sources = [
        ("MEMORY.md", "memory", "h1", 1_790_000_000_000.5, 5),
        ("memory/a.md", "memory", "h2", 1_790_000_100_000.0, 5),
        ("memory/b.md", "sessions", "h3", 1_790_000_200_000.0, 5),  # another source's
        ("memory/caf\ufffd.md", "memory", "h4", 1_790_000_300_000.0, 5),
    ]
    chunks = [{"id": "c1", "path": "MEMORY.md", "text": "tea"}]
    make_v23(path, chunks, sources=sources, wal=True)
    asked = ["memory/a.md", "MEMORY.md", "memory/b.md", "nowhere.md", "memory/caf\ufffd.md"]

    def listed(idx: MemoryIndex, source: str) -> dict[str, float | None]:
        return {f.path: f.mtime_ms for f in idx.files(source) if f.path in asked}

    agent = sqlite3.connect(path)  # the agent, running: its WAL and wal-index exist
    agent.execute("SELECT count(*) FROM memory_index_sources").fetchall()
    try:
        with open_memory_index(path) as idx:
            assert idx.db.mode == "ro"
            for source in ("memory", "sessions"):
                assert idx.file_mtimes(source, asked) == listed(idx, source)
            assert idx.file_mtimes("memory", asked)["MEMORY.md"] == 1_790_000_000_000.5
            with agent:  # the agent re-indexes a file
                agent.execute("UPDATE memory_index_sources SET mtime = 7.0 WHERE path = ?",
                              ("MEMORY.md",))  # fmt: skip
            assert idx.file_mtimes("memory", asked) == listed(idx, "memory")
            assert idx.file_mtimes("memory", asked)["MEMORY.md"] == 7.0
    finally:
        agent.close()
