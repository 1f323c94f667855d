"""Issue 17, recall side: short session ids, a store folder opened alone, one block count."""

from __future__ import annotations

import orjson
import pytest

from bench.corpus import write_store
from core.cli.main import run_cli
from core.dataset.load import load_dataset
from core.dataset.store_sessions import STORAGE
from core.recall.block import BLOCK_ESTIMATOR, block_token_count
from core.recall.short_ids import short_ids
from core.store.segments import load_segments

NOW = 1_790_000_000_000


def test_short_ids_grow_past_a_shared_prefix():
    a = "0123456789-aaaa-4bbb-8ccc-000000000001"
    b = "0123456789-bbbb-4bbb-8ccc-000000000002"  # the same first 10 characters as a
    c = "fedcba98-7654-4321-8000-000000000003"
    short = short_ids([a, b, c])
    assert short[a] != short[b]
    assert short[a] == a[:12] and short[b] == b[:12]  # one character past "0123456789-"
    assert short[c] == c[:8]  # nothing shares its prefix: 8 characters
    assert all(len(s) >= 8 and full.startswith(s) for full, s in short.items())


def test_a_store_folder_opened_alone_lists_its_sessions(tmp_path):
    folder = tmp_path / "store"
    ids = write_store(folder, 60, now_ms=NOW, sessions=4)
    before = sorted((p.name, p.stat().st_size) for p in folder.iterdir())
    data = load_dataset(folder, now_ms=NOW)
    assert data.discovery.kind == "memory-context"
    segments = load_segments(folder / "segments.jsonl", max_segments=-1, eviction_days=0)
    by_session: dict[str, list[str]] = {}
    for seg in sorted(segments.segments, key=lambda s: (s.timestamp, s.line)):
        by_session.setdefault(seg.session_id, []).append(seg.id)
    assert {s.id for s in data.summaries} == set(by_session) == {f"session-{i}" for i in range(4)}
    assert all(s.storage == STORAGE and s.messages == 15 for s in data.summaries)
    for session in data.sessions:
        # one message entry a segment, oldest first, the segment's id as the entry's
        assert [e.id for e in session.entries] == by_session[session.id]
        assert session.leaf is not None and session.leaf.id == by_session[session.id][-1]
    assert set(ids) == {e.id for s in data.sessions for e in s.entries}
    assert any("rebuilt from" in n for n in data.discovery.notes)
    # read-only: the store is as it was, and no session path names a file
    assert sorted((p.name, p.stat().st_size) for p in folder.iterdir()) == before
    assert not any((tmp_path / s.path).exists() for s in data.summaries)


def test_a_rebuilt_session_is_never_compacted_into(tmp_path):
    """No transcript behind it: a compaction is refused with the reason, nothing written."""
    from core.compaction.checks import check_agent_owned
    from core.compaction.refusals import CompactionRefused

    folder = tmp_path / "store"
    write_store(folder, 20, now_ms=NOW, sessions=2)
    before = sorted((p.name, p.stat().st_size) for p in folder.iterdir())
    session = load_dataset(folder, now_ms=NOW).sessions[0]
    with pytest.raises(CompactionRefused, match="rebuilt from memory-context's archived"):
        check_agent_owned(session)
    assert sorted((p.name, p.stat().st_size) for p in folder.iterdir()) == before


def test_a_home_with_transcripts_gets_no_rebuilt_sessions(tmp_path):
    home = tmp_path / "home"
    write_store(home / "memory" / "context", 20, now_ms=NOW, sessions=2)
    (home / "agents" / "main" / "sessions").mkdir(parents=True)
    (home / "agents" / "main" / "sessions" / "s1.jsonl").write_bytes(
        b'{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00Z"}\n'
    )
    data = load_dataset(home, now_ms=NOW)
    assert [s.storage for s in data.summaries] == ["jsonl"]


@pytest.fixture
def home(tmp_path):
    home = tmp_path / "home"
    write_store(home / "memory" / "context", 200, now_ms=NOW)
    (home / "openclaw.json").write_text(
        "{agents: {defaults: {memoryContext: {evictionDays: 0, crossSession: false}}}}"
    )
    return home


def test_cli_recall_counts_the_block_as_every_view_and_says_how(capsys, home):
    code = run_cli(["recall", str(home), "fix the parser cache", "--min-score", "0", "--json"])
    out = orjson.loads(capsys.readouterr().out)
    assert code == 0 and out["block"]
    assert out["block_tokens"] == block_token_count(out["block"])
    assert out["block_tokens_estimator"] == BLOCK_ESTIMATOR
    assert run_cli(["recall", str(home), "fix the parser cache", "--min-score", "0"]) == 0
    assert f"tokens, {BLOCK_ESTIMATOR}):" in capsys.readouterr().out
