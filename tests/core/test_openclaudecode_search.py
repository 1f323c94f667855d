"""OpenClaudeCode memory search over memory_fts: the design's query and the agent's score."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from core.openclaudecode import MemoryFts, search_memory
from core.openclaw.memsearch_text import bm25_rank_to_score

FIXTURE = Path(__file__).parents[1] / "data" / "openclaudecode" / "home"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    dest = tmp_path / "home"
    shutil.copytree(FIXTURE, dest)
    return dest / "openclaudecode.db"


def _bm25(db: Path, match: str) -> dict[str, float]:
    con = sqlite3.connect(db)
    try:
        rows = con.execute(
            "SELECT id, bm25(memory_fts) FROM memory_fts WHERE memory_fts MATCH ?", (match,)
        ).fetchall()
    finally:
        con.close()
    return {str(r[0]): float(r[1]) for r in rows}


def test_and_joined_quoted_tokens_and_the_agents_score(db):
    result = search_memory(db, 'deploy "window"?')
    assert result.match == '"deploy" AND "window"'
    assert result.reason is None
    expected = _bm25(db, result.match)
    assert {h.id for h in result.hits} == set(expected)
    for hit in result.hits:
        assert "deploy" in hit.text.lower() and "window" in hit.text.lower()
        assert hit.rank == pytest.approx(expected[hit.id])
        assert hit.rank < 0  # FTS5's rank is the negative bm25
        # the agent's bm25RankToScore: -r / (1 - r) for a negative rank
        assert hit.score == pytest.approx(-hit.rank / (1 - hit.rank))
        assert hit.score == pytest.approx(bm25_rank_to_score(hit.rank))
        assert 0 < hit.score < 1
    ranks = [h.rank for h in result.hits]
    assert ranks == sorted(ranks)  # ORDER BY rank: best first
    top = result.hits[0]
    assert top.session_key == "telegram:5054873275" and top.channel == "telegram"
    assert top.timestamp == 1_790_000_360_000  # from memory_chunks
    assert top.source == "session"


def test_filters(db):
    every = search_memory(db, "deploy")
    assert {h.session_key for h in every.hits} == {
        "telegram:5054873275", "discord:918273645546372819"
    }  # fmt: skip
    discord = search_memory(db, "deploy", channel="discord")
    assert [h.id for h in discord.hits] == ["mem-dc-1"]
    one = search_memory(db, "deploy", session_key="telegram:5054873275")
    assert one.hits and {h.session_key for h in one.hits} == {"telegram:5054873275"}
    memory = search_memory(db, "rollback", source="memory")
    assert [h.id for h in memory.hits] == ["mem-tg-1"]
    assert search_memory(db, "deploy", channel="whatsapp").hits == ()


def test_max_results_and_min_score(db):
    every = search_memory(db, "deploy", max_results=100)
    assert len(every.hits) >= 4
    two = search_memory(db, "deploy", max_results=2)
    assert [h.id for h in two.hits] == [h.id for h in every.hits[:2]]
    cut = (every.hits[1].score + every.hits[2].score) / 2
    above = search_memory(db, "deploy", max_results=100, min_score=cut)
    assert [h.id for h in above.hits] == [h.id for h in every.hits[:2]]
    assert all(h.score >= cut for h in above.hits)
    with pytest.raises(ValueError, match="max_results"):
        search_memory(db, "deploy", max_results=0)


def test_blank_queries_give_a_reason_not_an_exception(db):
    assert search_memory(db, "   ").reason == "empty query"
    none = search_memory(db, "?! ,, --")
    assert none.hits == () and none.match is None
    assert none.reason == "no searchable token in the query"
    # FTS5 syntax in a query is quoted away, never an error
    assert search_memory(db, 'deploy OR NEAR(") *').match == '"deploy" AND "OR" AND "NEAR"'


def test_a_folder_or_an_open_database_and_nothing_written(db):
    root = db.parent
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in root.iterdir()
              if p.is_file()}  # fmt: skip
    mtime = db.stat().st_mtime_ns
    by_folder = search_memory(root, "potions")
    assert [h.session_key for h in by_folder.hits] == ["discord:918273645546372819"] * 2
    with MemoryFts(db) as fts:
        for _ in range(3):
            assert fts.search("oat milk").hits[0].session_key == "whatsapp:15551234567"
    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in root.iterdir()
             if p.is_file()}  # fmt: skip
    assert after == before and db.stat().st_mtime_ns == mtime
