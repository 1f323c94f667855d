"""The demo OpenClaw home: reproducible, complete, and readable by memlens' own loaders."""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from contextlib import closing
from datetime import UTC, datetime
from itertools import pairwise

import json5
import numpy as np
import orjson
import pytest

from core.demo.build import DemoSummary, write_demo
from core.embed.hashembed import embed
from core.store.knowledge import FACT_TYPES, load_knowledge
from core.store.segments import DAY_MS, load_segments
from core.store.vectors import load_vectors
from core.transcript.loader import load_transcript
from core.transcript.replay import compactions, context_at

NOW = 1_775_001_600_000  # 2026-04-01T00:00:00Z
SMALL = 300
HEADINGS = (
    "## Decisions",
    "## Open TODOs",
    "## Constraints/Rules",
    "## Pending user asks",
    "## Exact identifiers",
)


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> DemoSummary:
    return write_demo(tmp_path_factory.mktemp("demo") / "home", now_ms=NOW, segments=SMALL)


@pytest.fixture(scope="module")
def sessions(demo):
    return {p.name: load_transcript(p) for p in demo.transcripts}


def _tree(root):
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_same_seed_and_now_give_identical_bytes(demo, tmp_path):
    again = write_demo(tmp_path / "again", now_ms=NOW, segments=SMALL)
    first, second = _tree(demo.root), _tree(again.root)
    assert sorted(first) == sorted(second)
    for name, data in first.items():
        assert data == second[name], name
    other = _tree(write_demo(tmp_path / "other", seed=8, now_ms=NOW, segments=SMALL).root)
    assert set(other) != set(first)  # session ids, hence file names, come from the seed
    assert other["memory/context/knowledge.jsonl"] != first["memory/context/knowledge.jsonl"]


def test_refuses_a_non_empty_destination(tmp_path):
    dest = tmp_path / "home"
    dest.mkdir()
    (dest / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="not empty"):
        write_demo(dest, now_ms=NOW, segments=20)
    assert sorted(p.name for p in dest.iterdir()) == ["notes.txt"]
    summary = write_demo(dest, now_ms=NOW, segments=20, force=True)
    assert (dest / "notes.txt").read_text() == "mine"
    assert summary.config.is_file()
    # force writes over the demo's own files instead of appending to them
    again = write_demo(dest, now_ms=NOW, segments=20, force=True)
    assert again.knowledge_file.read_bytes() == summary.knowledge_file.read_bytes()
    with pytest.raises(FileExistsError, match="not a folder"):
        write_demo(dest / "notes.txt", now_ms=NOW, segments=20, force=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert write_demo(empty, now_ms=NOW, segments=20).sessions == 12


def test_every_transcript_loads_without_errors(demo, sessions):
    assert len(sessions) == demo.sessions == 12
    for name, s in sessions.items():
        assert [p for p in s.problems if p.severity == "error"] == [], name
        assert s.version == 3 and s.header["cwd"].startswith("/home/dev/projects/")
        assert all(re.fullmatch(r"[0-9a-f]{8}", e.id) for e in s.entries)
        assert not any(e.synthetic_id for e in s.entries)
        assert s.entries[0].parent_id is None
        assert all(e.parent_id in s.by_id for e in s.entries[1:]), name
        msgs = [e.message for e in s.entries if e.type == "message"]
        assert all(isinstance(m.timestamp, int) for m in msgs if m is not None)
        pairs = s.tool_pairs().values()
        assert all(p.call_entry and len(p.result_entries) == 1 for p in pairs), name


def test_agents_sessions_and_stores(demo, sessions):
    assert sorted(p.name for p in (demo.root / "agents").iterdir()) == ["main", "reviewer"]
    per_agent = Counter(p.parent.parent.name for p in demo.transcripts)
    assert per_agent == {"main": 8, "reviewer": 4}
    topic = [p.name for p in demo.transcripts if "-topic-" in p.name]
    assert len(topic) == 1 and "%3A%20" in topic[0]
    sizes = sorted(len([e for e in s.entries if e.type == "message"]) for s in sessions.values())
    assert sizes[0] >= 25 and 1400 <= sizes[-1] <= 1700
    assert demo.messages == sum(sizes)
    for store_path in demo.session_stores:
        store = orjson.loads(store_path.read_bytes())
        assert store_path.read_text().startswith('{\n  "agent:')  # 2-space pretty JSON
        for key, entry in store.items():
            assert key.startswith("agent:")
            s = sessions[entry["sessionFile"]]
            assert (store_path.parent / entry["sessionFile"]).is_file()
            assert s.id == entry["sessionId"]
            assert entry["compactionCount"] == len(s.compaction_entries())
            assert entry["updatedAt"] <= NOW and entry["contextTokens"] == 200_000
            assert entry["totalTokens"] > entry["outputTokens"] > 0
            assert isinstance(entry["channelMeta"], dict)  # a field memlens does not know
            if "memoryFlushAt" in entry:
                assert entry["memoryFlushCompactionCount"] == entry["compactionCount"] - 1


def test_compactions_branches_and_entry_types(demo, sessions):
    counts = [len(s.compaction_entries()) for s in sessions.values()]
    assert sum(counts) == demo.compactions >= 4 and max(counts) >= 2
    branched = [s for s in sessions.values() if s.branch_points()]
    assert branched and demo.branches >= 1
    point = branched[0].branch_points()[0]
    assert len(branched[0].children[point.id]) == 2
    types = Counter(e.type for s in sessions.values() for e in s.entries)
    for kind in (
        "message",
        "model_change",
        "thinking_level_change",
        "custom",
        "label",
        "session_info",
        "compaction",
        "branch_summary",
    ):
        assert types[kind] > 0, kind
    roles = set().union(*(s.role_counts() for s in sessions.values()))
    assert {"user", "assistant", "toolResult", "bashExecution"} <= roles
    custom = {
        e.raw["customType"] for s in sessions.values() for e in s.entries if e.type == "custom"
    }
    assert "openclaw.cache-ttl" in custom


def test_compacted_context_starts_with_the_summary(sessions):
    compacted = [s for s in sessions.values() if s.compaction_entries()]
    assert compacted
    for s in compacted:
        ctx = context_at(s)
        assert ctx[0].message.role == "compactionSummary"
        summary = ctx[0].message.text()
        assert all(h in summary for h in HEADINGS)
        for info in compactions(s):
            raw = info.entry.raw
            assert raw["firstKeptEntryId"] in s.by_id
            assert s.by_id[raw["firstKeptEntryId"]].message.role in ("user", "assistant")
            assert set(raw["details"]) == {"readFiles", "modifiedFiles", "toolFailures"}
            assert 150_000 < info.tokens_before <= 185_000
            assert info.tokens_after < info.tokens_before // 3
            assert info.kept and info.replaced


def test_usage_grows_and_drops_after_each_compaction(sessions):
    s = max(sessions.values(), key=lambda s: len(s.entries))
    path = s.path_to(s.leaf.id)
    totals, drops = [], 0
    for e in path:
        if e.type == "compaction":
            drops += 1
            totals.append(None)
        elif e.message is not None and e.message.usage:
            totals.append(e.message.usage["totalTokens"])
    assert drops >= 2
    runs, run = [], []
    for t in totals:
        if t is None:
            runs.append(run)
            run = []
        else:
            run.append(t)
    runs.append(run)
    for before, after in pairwise(runs):
        assert after[0] < before[-1] // 3
    for r in runs:
        # without a compaction the context only grows (the output part varies a little)
        assert all(b >= a - 100 for a, b in pairwise(r))
    usage = next(e.message.usage for e in path if e.message and e.message.usage)
    assert usage["totalTokens"] == sum(
        usage[k] for k in ("input", "output", "cacheRead", "cacheWrite")
    )
    assert set(usage["cost"]) == {"input", "output", "cacheRead", "cacheWrite", "total"}


def test_failing_tool_calls_are_fixed(sessions):
    errors = [
        e
        for s in sessions.values()
        for e in s.entries
        if e.message and e.message.role == "toolResult" and e.message.is_error
    ]
    assert len(errors) > 10
    texts = " ".join(e.message.text() for e in errors)
    assert "Could not find the exact text" in texts and "Command exited with code 1" in texts


def test_segments_store(demo):
    load = load_segments(demo.segments_file, now_ms=NOW)
    assert len(load.segments) == demo.segments == SMALL
    assert load.duplicates == demo.duplicate_lines == 2
    errors = [p for p in load.problems if p.severity == "error"]
    assert len(errors) == demo.invalid_lines == 1 and "role" in errors[0].message
    assert load.evicted_age == 0
    ages = [(NOW - s.timestamp) / DAY_MS for s in load.segments]
    assert 0 < min(ages) and 45 < max(ages) <= 60
    raw = demo.segments_file.read_text()
    assert "[REDACTED]" in raw and "Bearer [REDACTED]" in raw
    assert "sk_live_" not in raw and "ghp_" not in raw
    ids = {s.session_id for s in load.segments}
    live = {load_transcript(p).id for p in demo.transcripts}
    assert ids & live and ids - live  # from current transcripts and from older sessions


def test_vectors_cover_all_but_a_few_segments(demo):
    vectors = load_vectors(demo.vectors_file)
    segs = load_segments(demo.segments_file, now_ms=NOW).segments
    missing = [s for s in segs if s.id not in set(vectors.ids)]
    assert vectors.dim == 384 and not vectors.problems
    assert len(vectors.ids) == demo.vectors == len(segs) - len(missing)
    assert 1 <= len(missing) <= 50
    by_id = {s.id: s for s in segs}
    for row in (0, len(vectors.ids) // 2, len(vectors.ids) - 1):
        expected = embed(by_id[vectors.ids[row]].content)
        assert np.array_equal(vectors.matrix[row], expected)


def test_knowledge_log(demo):
    log = load_knowledge(demo.knowledge_file)
    assert not log.problems
    assert len(log.facts) == demo.facts and 50 <= demo.facts <= 80
    assert log.lines == demo.fact_lines > demo.facts
    assert {f.type for f in log.facts.values()} == set(FACT_TYPES)
    counts = log.counts()
    assert counts["superseded"] >= 3 and counts["deleted"] >= 1
    assert max(len(log.chain(f.id)) for f in log.facts.values()) == 3
    updated = [
        fid
        for fid, lines in log.history.items()
        if len(lines) > 1 and log.facts[fid].status == "active"
    ]
    assert len(updated) >= 3
    stamps = [f.timestamp for f in log.facts.values()]
    assert NOW - 60 * DAY_MS < min(stamps) and max(stamps) < NOW


def test_config_is_json5_with_the_memory_settings(demo):
    text = demo.config.read_text()
    assert text.startswith("//")
    cfg = json5.loads(text)
    defaults = cfg["agents"]["defaults"]
    assert defaults["memoryContext"] == {
        "enabled": True,
        "hardCapTokens": 4000,
        "embeddingModel": "hash",
        "redaction": True,
        "knowledgeExtraction": True,
        "maxSegments": 20000,
        "evictionDays": 90,
        "crossSession": False,
    }
    assert defaults["compaction"] == {
        "mode": "safeguard",
        "reserveTokensFloor": 20000,
        "maxHistoryShare": 0.5,
        "memoryFlush": {"enabled": True, "softThresholdTokens": 4000},
    }
    assert defaults["contextTokens"] == 200000
    (model,) = cfg["models"]["providers"]["anthropic"]["models"]
    assert model["contextWindow"] == 200000


def test_memory_index_and_workspace_notes(demo):
    assert 2 <= len(demo.workspace_notes) <= 3
    with closing(sqlite3.connect(demo.memory_index)) as db:
        (meta,) = db.execute("SELECT value FROM meta WHERE key = 'memory_index_meta_v1'")
        assert orjson.loads(meta[0])["vectorDims"] == 384
        files = {
            row[0]: row for row in db.execute("SELECT path, source, hash, mtime, size FROM files")
        }
        chunks = db.execute(
            "SELECT path, source, start_line, end_line, text, embedding FROM chunks"
        ).fetchall()
        cached = db.execute("SELECT count(*) FROM embedding_cache").fetchone()[0]
    assert len(chunks) == demo.chunks and 20 <= len(chunks) <= 60
    assert cached == len({c[4] for c in chunks})
    assert {c[1] for c in chunks} == {"memory", "sessions"}
    notes = {f"memory/{p.name}": p for p in demo.workspace_notes}
    assert {p for p, row in files.items() if row[1] == "memory"} == set(notes)
    for path, source, start, end, text, embedding in chunks:
        assert path in files and files[path][1] == source and start <= end
        assert len(orjson.loads(embedding)) == 384
        if source == "memory":
            lines = notes[path].read_text().splitlines()
            assert text == "\n".join(lines[start - 1 : end])
            assert files[path][4] == notes[path].stat().st_size


@pytest.mark.slow
def test_default_size(tmp_path):
    summary = write_demo(tmp_path / "home", now_ms=NOW)
    assert summary.segments == 3000
    assert summary.vectors == 2950
    lines = summary.segments_file.read_bytes().count(b"\n")
    assert lines == 3000 + summary.duplicate_lines + summary.invalid_lines


def test_now_defaults_to_the_start_of_the_utc_day(tmp_path):
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    start = int(today.timestamp() * 1000)
    summary = write_demo(tmp_path / "home", segments=20)
    updated = [
        e["updatedAt"]
        for p in summary.session_stores
        for e in orjson.loads(p.read_bytes()).values()
    ]
    assert start - 15 * DAY_MS < min(updated) and max(updated) < start
    assert load_segments(summary.segments_file).evicted_age == 0
