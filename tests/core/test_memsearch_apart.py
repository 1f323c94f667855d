"""Per-generation search tables built apart: no search waits for one, none is stale.

A long-lived server (``memlens mcp``) builds the tables of
:mod:`core.openclaw.memsearch_chunks` (the recall rows, the body postings, the chunk
tokens) in a thread of its own, through a connection of its own
(:func:`~core.openclaw.memsearch_chunks.builds_apart`), as soon as the index is open
(:func:`core.openclaw.memsearch.warm_tables`): a search meanwhile takes the per-hit
paths instead of waiting seconds. Here: a search during a build answers at once and the
same; a table built apart serves the connection that asked for it; a commit during
the build makes that table unused; the server warms every table at its start.
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
from typing import TYPE_CHECKING, Any

from core.mcp.server import _Opener
from core.mcp.tools import MemoryTools
from core.openclaw import memsearch_chunks, memsearch_postings
from core.openclaw.memindex import open_memory_index
from core.openclaw.memsearch import memory_search, warm_tables
from tests.core.test_memindex import make_v23
from tests.core.test_memsearch import Fixed, unit

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from core.openclaw.memindex import MemoryIndex

TABLES = (memsearch_chunks.TOKENS, memsearch_chunks.RECALL, memsearch_postings.POSTINGS)


def _index(path: Path, n: int = 6) -> Path:
    chunks = [
        {"id": f"c{i}", "path": f"memory/n{i}.md", "text": f"tea deploy note {i}",
         "embedding": unit(0.3 + 0.1 * i)}
        for i in range(n)
    ]  # fmt: skip
    return make_v23(path, chunks, recall=[("c1", 9)], wal=True)


def _answer(index: MemoryIndex, embedder: Fixed | None = None) -> dict[str, Any]:
    result = memory_search(index, "tea note", now_ms=0, min_score=0, embedder=embedder)
    out: dict[str, Any] = result.to_json()
    return out


def _builds() -> list[int]:
    return [t.builds for t in TABLES]


def test_tables_built_apart_serve_the_connection_that_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _index(tmp_path / "openclaw-agent.sqlite")
    with monkeypatch.context() as m:  # the per-hit paths' answers
        m.setattr(memsearch_chunks, "ENABLED", False)
        m.setattr(memsearch_postings, "ENABLED", False)
        with open_memory_index(path) as index:
            plain = [_answer(index), _answer(index, Fixed()), _answer(index, Fixed())]
    before = _builds()
    with open_memory_index(path) as index:
        with memsearch_chunks.builds_apart():
            warm_tables(index, hybrid=True)  # returns at once: built in the builder thread
        assert all(t.wait(30) for t in TABLES)
        assert _builds() == [b + 1 for b in before]
        assert memsearch_chunks.chunk_tokens(index) is not None  # kept for this connection
        assert [_answer(index), _answer(index, Fixed()), _answer(index, Fixed())] == plain
        assert _builds() == [b + 1 for b in before]  # used, not built again


def test_a_search_during_a_build_does_not_wait_for_it(tmp_path: Path) -> None:
    path = _index(tmp_path / "openclaw-agent.sqlite")
    table = memsearch_chunks.GenerationTables(memsearch_chunks._recall_signature, apart=True)
    started, release = threading.Event(), threading.Event()

    def slow(index: MemoryIndex) -> str:
        started.set()
        assert release.wait(30)
        return "table"

    for background in (True, False):
        started.clear()
        release.clear()
        with open_memory_index(path) as index, open_memory_index(path) as other:
            if background:
                with memsearch_chunks.builds_apart(), memsearch_chunks.eagerly():
                    assert table.get(index, slow) is None  # queued: the caller goes on
            else:  # built by the search that asked, in its thread: another one goes on
                builder = threading.Thread(target=table.get, args=(other, slow))
                table.get(other, slow)  # its first sighting
                builder.start()
            assert started.wait(30)
            assert table.get(index, slow) is None  # being built: no wait
            release.set()
            assert table.wait(30)
            if not background:
                builder.join(30)
                assert table.get(other, slow) == "table"
            else:
                assert table.get(index, slow) == "table"


def test_a_commit_during_a_build_leaves_its_table_unused(tmp_path: Path) -> None:
    path = _index(tmp_path / "openclaw-agent.sqlite")
    table = memsearch_chunks.GenerationTables(memsearch_chunks._recall_signature, apart=True)
    sql = "SELECT importance FROM memory_index_chunk_recall_metadata WHERE chunk_id = 'c1'"
    write = threading.Event()

    def read(index: MemoryIndex) -> int:
        if write.is_set():  # the agent writes after the build began, before it reads
            with sqlite3.connect(path) as db:
                db.execute("UPDATE memory_index_chunk_recall_metadata SET importance = 3")
            db.close()
        return int(index.db.rows(sql)[0][0])

    with open_memory_index(path) as index, memsearch_chunks.builds_apart():
        write.set()
        with memsearch_chunks.eagerly():
            assert table.get(index, read) is None
        assert table.wait(30) and table.builds == 1
        # built from the new rows but kept under the signature read before the write:
        # this connection's data_version moved, so it is not used
        assert table.get(index, read) is None
        write.clear()
        assert table.get(index, read) is None  # seen unchanged again: built (apart)
        assert table.wait(30) and table.builds == 2
        assert table.get(index, read) == 3


def test_the_server_warms_every_search_table_at_its_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    agent = home / "agents" / "main" / "agent"
    agent.mkdir(parents=True)
    _index(agent / "openclaw-agent.sqlite")
    before = _builds()
    tools = MemoryTools(home, environ={})
    assert tools.data.warm_search() is False  # keyword-only here: no matrix, no tokens
    assert _builds() == [before[0], before[1] + 1, before[2] + 1]  # (built in this thread)
    queued: list[object] = []
    real = memsearch_chunks._apart
    monkeypatch.setattr(memsearch_chunks, "_apart", lambda job: (queued.append(job), real(job)))
    opener = _Opener(home)  # the server's: its warm-up builds apart
    assert opener.done.wait(30) and opener.warmed.wait(30)
    assert queued  # the builder thread's
    assert all(t.wait(30) for t in TABLES)
    # its connection's recall table; the postings (of the same content) are the same
    assert _builds() == [before[0], before[1] + 2, before[2] + 1]
    answer = opener.call("memory_search", {"query": "tea note"})
    assert answer["results"] and _builds() == [before[0], before[1] + 2, before[2] + 1]
    warmed = len(queued)
    with sqlite3.connect(agent / "openclaw-agent.sqlite") as db:  # the agent writes
        db.execute("UPDATE memory_index_chunk_recall_metadata SET importance = 4")
    db.close()
    for _ in range(3):  # the change seen, then seen again: built apart, not in the call
        opener.call("memory_search", {"query": "tea note"})
    assert len(queued) > warmed


def test_builds_apart_holds_for_the_thread_that_asks(tmp_path: Path) -> None:
    path = _index(tmp_path / "openclaw-agent.sqlite")
    table = memsearch_chunks.GenerationTables(memsearch_chunks.index_signature, apart=True)
    built_in: list[str] = []

    def build(index: MemoryIndex) -> str:
        built_in.append(threading.current_thread().name)
        return "table"

    with open_memory_index(path) as index:
        with memsearch_chunks.builds_apart(), memsearch_chunks.eagerly():
            assert table.get(index, build) is None  # queued for the builder thread
        assert table.wait(30) and table.get(index, build) == "table"
    assert built_in == ["memlens-index-tables"]
    other = memsearch_chunks.GenerationTables(memsearch_chunks.index_signature, apart=True)
    with open_memory_index(path) as index:
        with memsearch_chunks.builds_apart():
            ran = threading.Thread(
                target=lambda: other.get(index, build) or other.get(index, build)
            )
            ran.start()
            ran.join(30)  # another thread asked twice: built there, in its search
    assert built_in[1:] == [ran.name]


def test_a_private_snapshot_builds_its_tables_in_the_search(tmp_path: Path) -> None:
    """A WAL left without its wal-index is read from a private copy: another connection
    would copy the whole file again, so the search that asks builds the table itself."""
    live = _index(tmp_path / "openclaw-agent.sqlite")
    writer = sqlite3.connect(live)
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    with writer:
        writer.execute("UPDATE memory_index_chunks SET text = 'tea note wal' WHERE id = 'c2'")
    copy = tmp_path / "copy" / "openclaw-agent.sqlite"
    copy.parent.mkdir()
    shutil.copyfile(live, copy)
    shutil.copyfile(f"{live}-wal", f"{copy}-wal")
    writer.close()
    table = memsearch_chunks.GenerationTables(memsearch_chunks.index_signature, apart=True)
    with open_memory_index(copy) as index:
        assert index.db.mode == "snapshot"
        with memsearch_chunks.builds_apart(), memsearch_chunks.eagerly():
            assert table.get(index, lambda i: threading.current_thread().name) == (
                threading.current_thread().name
            )
