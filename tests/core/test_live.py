"""core.live.follow: appended lines reach the loaded sessions, warm set, warm store and fact log."""

from __future__ import annotations

import itertools
import os
import random

import orjson
import pytest

from core.dataset.load import load_dataset
from core.dataset.open_recall import open_recall
from core.demo.build import write_demo
from core.io.jsonio import read_jsonl
from core.live.follow import LiveFollower
from core.live.session import session_cursor
from core.live.store import apply_knowledge
from core.store.knowledge import load_knowledge
from core.transcript import load_transcript, parse_transcript
from tests.demo_copy import demo_copy

from .build import extend_session_objects

NOW = 1_760_000_000_000


def entry_fields(e):
    return (
        e.index,
        e.line,
        e.offset,
        e.type,
        e.id,
        e.parent_id,
        e.timestamp,
        e.raw,
        e.synthetic_id,
        e.recovered,
    )


def problem_set(problems):
    return sorted((p.line, p.message, p.severity) for p in problems)


def split_points(data: bytes, rng: random.Random, n: int) -> list[int]:
    ends = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    return sorted(set(rng.sample(ends, min(n, len(ends)))))


def assert_same(a, b):
    assert [entry_fields(e) for e in a.entries] == [entry_fields(e) for e in b.entries]
    assert a.by_id.keys() == b.by_id.keys()
    assert a.children == b.children
    assert problem_set(a.problems) == problem_set(b.problems)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo") / "home"
    write_demo(root, now_ms=NOW, segments=300)
    return root


def extend_session(cursor, data, *, first_line, base_offset):
    """What live mode does with appended lines: parse them (its read phase), add them."""
    session = cursor.session
    read = read_jsonl(data, session.path, first_line=first_line, base_offset=base_offset)
    added = extend_session_objects(cursor, read.objects, read.problems)
    session.size = max(session.size, base_offset + len(data))
    return added


def transcripts(fixtures_dir, demo):
    return sorted(fixtures_dir.glob("*.jsonl")) + sorted(
        (demo / "agents").glob("*/sessions/*.jsonl")
    )


def test_session_loaded_in_pieces_equals_session_loaded_whole(fixtures_dir, demo):
    rng = random.Random(5)
    files = transcripts(fixtures_dir, demo)
    assert len(files) >= 5
    for path in files:
        data = path.read_bytes()
        whole = parse_transcript(data, str(path))
        for cut in split_points(data, rng, 4):
            if cut == len(data):
                continue
            try:
                part = parse_transcript(data[:cut], str(path))
            except Exception:
                continue  # the header is not in the prefix
            cursor = session_cursor(part)
            rest = data[cut:]
            # Two appends: pieces of the rest, each ending on a line boundary.
            mid = rest.find(b"\n", len(rest) // 2) + 1 or len(rest)
            line = data[:cut].count(b"\n") + 1
            extend_session(cursor, rest[:mid], first_line=line, base_offset=cut)
            extend_session(
                cursor, rest[mid:], first_line=line + rest[:mid].count(b"\n"), base_offset=cut + mid
            )
            assert_same(part, whole)


def test_damaged_lines_in_pieces_match_the_loader(fixtures_dir, tmp_path):
    lines = (fixtures_dir / "large-session.jsonl").read_bytes().split(b"\n")[:30]
    body = [
        *lines[:5],
        b"",
        b'{"type":"message", "oops"',
        lines[5] + lines[6],
        b"[1,2]",
        b'{"no":"type"}',
        *lines[7:],
    ]
    data = b"\n".join(body) + b"\n"
    whole = parse_transcript(data, "f")
    for cut in [i + 1 for i, b in enumerate(data) if b == 0x0A][1:-1]:
        part = parse_transcript(data[:cut], "f")
        cursor = session_cursor(part, trailing_objects=_skipped_after_last(data[:cut], part))
        added = extend_session(
            cursor, data[cut:], first_line=data[:cut].count(b"\n") + 1, base_offset=cut
        )
        assert_same(part, whole)
        bad = [p for p in added.problems if p.severity == "error"]
        assert all(p.file == "f" and p.line > data[:cut].count(b"\n") for p in bad)


def _skipped_after_last(prefix, session):
    from core.live.session import cursor_from_bytes

    return cursor_from_bytes(session, prefix).next_index - (session.entries[-1].index + 1)


# -- the follower over a demo data set --------------------------------------------------------
def append(path, *objs, raw: bytes = b""):
    with open(path, "ab") as fh:
        fh.write(b"".join(orjson.dumps(o) + b"\n" for o in objs) + raw)


ids = (f"{n:08x}" for n in itertools.count(0xA0000000))


def message(parent, role, text, ts=NOW):
    return {
        "type": "message",
        "id": next(ids),
        "parentId": parent,
        "timestamp": "2025-10-09T10:00:00.000Z",
        "message": {"role": role, "content": [{"type": "text", "text": text}], "timestamp": ts},
    }


@pytest.fixture
def live(tmp_path):
    root = tmp_path / "home"
    demo_copy(root, now_ms=NOW, segments=300)
    data = load_dataset(root, now_ms=NOW)
    recall = open_recall(data, cache_dir=None, now_ms=NOW)
    return data, recall, LiveFollower(data, recall, clock=lambda: NOW)


def test_transcript_appends_with_a_compaction_and_a_flush_announced(live):
    data, _recall, follower = live
    session = max(data.sessions, key=lambda s: len(s.entries))
    before = len(session.entries)
    assert not follower.poll(everything=True)  # nothing changed yet
    leaf = session.leaf.id
    flush = message(leaf, "user", "Pre-compaction memory flush. Store durable memories now.")
    reply = message(flush["id"], "assistant", "NO_REPLY")
    compaction = {
        "type": "compaction",
        "id": next(ids),
        "parentId": reply["id"],
        "timestamp": "2025-10-09T10:01:00.000Z",
        "summary": "## Goal\nShip it.",
        "firstKeptEntryId": flush["id"],
        "tokensBefore": 150_000,
    }
    append(session.path, flush, reply, compaction)
    follower.mark_dirty(session.path)
    changes = follower.poll()
    assert changes.sessions_changed == [session.id]
    assert [e.id for e in changes.entries[session.id]] == [
        flush["id"],
        reply["id"],
        compaction["id"],
    ]
    assert len(session.entries) == before + 3 and session.leaf.id == compaction["id"]
    assert session.compaction_entries()[-1].raw["tokensBefore"] == 150_000
    kinds = [(a.kind, a.session_id) for a in changes.announcements]
    assert kinds == [("memory_flush", session.id), ("compaction", session.id)]
    assert "150,000 tokens before" in changes.announcements[1].message
    summary = next(s for s in data.summaries if s.path == session.path)
    assert summary.entries == before + 3
    # The same flush recorded by the gateway in sessions.json is not announced twice...
    store_path = next(a.sessions_json for a in data.discovery.agents if a.name == "main")
    raw = orjson.loads(store_path.read_bytes())
    key = next(k for k, v in raw.items() if v["sessionId"] == session.id)
    raw[key]["memoryFlushAt"] = NOW + 5
    tmp = store_path.with_suffix(".tmp")
    tmp.write_bytes(orjson.dumps(raw, option=orjson.OPT_INDENT_2))
    os.replace(tmp, store_path)
    follower.mark_dirty(str(store_path))
    changes = follower.poll()
    assert changes.stores_changed == ["main"] and changes.announcements == []
    assert data.stores["main"].entries[key].raw["memoryFlushAt"] == NOW + 5
    # ...but one recorded only there is.
    other = next(k for k in raw if k != key)
    raw[other]["memoryFlushAt"] = NOW + 9
    store_path.write_bytes(orjson.dumps(raw, option=orjson.OPT_INDENT_2))
    changes = follower.poll(everything=True)
    assert [a.kind for a in changes.announcements] == ["memory_flush"]
    assert changes.announcements[0].session_id == raw[other]["sessionId"]
    # OpenClaw 2026.9 records it as memoryFlush{kind, compactionCount}, with no time
    raw[other]["memoryFlush"] = {"kind": "failed", "compactionCount": 7, "failureCount": 1}
    store_path.write_bytes(orjson.dumps(raw, option=orjson.OPT_INDENT_2))
    changes = follower.poll(everything=True)
    (note,) = changes.announcements
    assert note.message.startswith("Failed memory flush recorded in sessions.json")
    assert "(compaction cycle 7)" in note.message
    # a compaction alone (compactionCount moves, the flush record does not) is no flush
    raw[other]["compactionCount"] = int(raw[other].get("compactionCount") or 0) + 1
    store_path.write_bytes(orjson.dumps(raw, option=orjson.OPT_INDENT_2))
    assert follower.poll(everything=True).announcements == []


def test_partial_line_and_bad_line_in_a_transcript(live):
    data, _recall, follower = live
    session = data.sessions[0]
    n = len(session.entries)
    line_count = open(session.path, "rb").read().count(b"\n")
    good = message(session.leaf.id, "user", "hello")
    text = orjson.dumps(good) + b"\n"
    append(session.path, raw=text[:20])
    assert not follower.poll(everything=True).entries  # half a line: nothing yet
    append(session.path, raw=text[20:] + b'{"type":"message","id":"broken\n')
    changes = follower.poll(everything=True)
    assert [e.id for e in changes.entries[session.id]] == [good["id"]]
    assert session.entries[-1].line == line_count + 1
    bad = [p for p in changes.problems if p.severity == "error"]
    assert len(bad) == 1 and bad[0].file == session.path and bad[0].line == line_count + 2
    assert bad[0] in data.problems and bad[0] in session.problems
    assert len(session.entries) == n + 1


def test_segments_appends_reach_the_warm_set_and_the_warm_store(live):
    data, recall, follower = live
    store = recall.store
    n_store, n_load = len(store), len(data.segments.segments)
    sid = data.sessions[0].id
    seg = {
        "id": "11111111-2222-4333-8444-555555555555",
        "sessionId": sid,
        "timestamp": NOW - 1000,
        "role": "user",
        "content": "Live mode test: the zebra-quokka protocol ships on Friday",
        "tokens": 20,
        "metadata": {"topics": [], "entities": []},
    }
    dup = {**seg, "id": "99999999-2222-4333-8444-555555555555"}  # same dedup key
    old = {
        **seg,
        "id": "22222222-2222-4333-8444-555555555555",
        "content": "ancient",
        "timestamp": 1,
    }
    lines_before = open(data.segments.path, "rb").read().count(b"\n")
    append(data.segments.path, seg, dup, old, {"id": 3, "sessionId": sid})
    follower.mark_dirty(data.segments.path)
    changes = follower.poll()
    assert changes.segments_added == 1 and changes.segments_indexed == 1
    assert len(store) == n_store + 1 and store.get(seg["id"]) is not None
    assert data.segments.segments[-1].id == seg["id"] and len(data.segments.segments) == n_load + 1
    assert data.segments.segments[-1].line == lines_before + 1
    bad = [p for p in changes.problems if p.severity == "error"]
    assert [(p.file, p.line) for p in bad] == [(data.segments.path, lines_before + 4)]
    # Searchable at once by BM25; the vector comes from embed_missing.
    assert store.missing_vector_slots() == [store.slot_of[seg["id"]]]
    assert store.embed_missing(save=False) == 1
    from core.recall.hybrid import SearchConfig, search

    result = search(
        store, "zebra-quokka protocol", SearchConfig(min_score=0.0), session_id=sid, now_ms=NOW
    )
    assert result.hits and result.hits[0].segment.id == seg["id"]
    # memlens's own archive through the store is not indexed twice.
    mine = store.add(sid, "assistant", "Archived by memlens: the otter-lynx plan")
    assert mine is not None
    follower.mark_dirty(data.segments.path)
    changes = follower.poll()
    assert changes.segments_added == 1 and changes.segments_indexed == 0
    assert sum(1 for s in store.live() if s.id == mine.id) == 1


def test_segments_follow_into_a_store_opened_later(tmp_path):
    root = tmp_path / "home"
    write_demo(root, now_ms=NOW, segments=50)
    data = load_dataset(root, now_ms=NOW)
    follower = LiveFollower(data, None, clock=lambda: NOW)
    recall = open_recall(data, cache_dir=None, now_ms=NOW)  # opened before the append...
    seg = {
        "id": "x1",
        "sessionId": "s",
        "timestamp": NOW,
        "role": "user",
        "content": "late arrival",
    }
    append(data.segments.path, seg)
    assert follower.poll(everything=True).segments_added == 1
    assert recall.store.get("x1") is None
    assert follower.set_recall(recall) == 1  # ...and handed over after it
    assert recall.store.get("x1") is not None


def test_knowledge_appends_reach_the_log_and_the_index(live):
    data, recall, follower = live
    log = data.knowledge
    lines_before = log.lines
    fid = "f-live-1"
    append(
        log.path,
        {
            "id": fid,
            "type": "decision",
            "content": "Use the heron cache for live mode",
            "timestamp": NOW,
        },
    )
    follower.mark_dirty(log.path)
    changes = follower.poll()
    assert changes.facts_changed == [fid]
    assert log.facts[fid].line == lines_before + 1
    hits = recall.knowledge.search("heron cache")
    assert [h.fact.id for h in hits] == [fid]
    append(
        log.path,
        {"id": fid, "type": "decision", "content": "x", "_deleted": True, "timestamp": NOW + 1},
        {"id": "bad"},
    )
    changes = follower.poll(everything=True)
    assert log.facts[fid].status == "deleted" and changes.facts_changed == [fid]
    assert [(p.file, p.line) for p in changes.problems] == [(log.path, lines_before + 3)]
    assert fid not in [h.fact.id for h in recall.knowledge.search("heron cache")]


def test_own_fact_edits_interleaved_with_the_agent_are_applied_once(live):
    data, _recall, follower = live
    log = data.knowledge
    start = log.lines
    # The agent appends a line; memlens edits before the follower read it.
    append(log.path, {"id": "agent-1", "type": "issue", "content": "agent fact", "timestamp": NOW})
    target = next(iter(log.facts))
    log.update(target, content="edited by memlens")
    added = log.add("task_state", "added by memlens")
    append(
        log.path,
        {"id": target, "type": "decision", "content": "agent wins last", "timestamp": NOW + 2},
    )
    follower.poll(everything=True)
    fresh = load_knowledge(log.path)
    assert log.lines == fresh.lines and log.size == fresh.size == os.path.getsize(log.path)
    assert {k: (f.content, f.status, f.line) for k, f in log.facts.items()} == {
        k: (f.content, f.status, f.line) for k, f in fresh.facts.items()
    }
    for fid, lines in fresh.history.items():
        assert [(h.line, h.offset) for h in log.history[fid]] == [(h.line, h.offset) for h in lines]
    assert log.facts[target].content == "agent wins last"
    assert log.facts[added.id].line == start + 3
    # memlens's own edit with nothing in between: still once.
    log.add("issue", "another of ours")
    follower.poll(everything=True)
    assert sum(len(v) for v in log.history.values()) == sum(
        len(v) for v in load_knowledge(log.path).history.values()
    )


def test_apply_knowledge_alone_skips_lines_already_replayed(tmp_path):
    p = tmp_path / "knowledge.jsonl"
    p.write_bytes(b"")
    log = load_knowledge(p)
    log.add("decision", "one")
    data = p.read_bytes()
    out = apply_knowledge(log, data, first_line=1, offset=0)
    assert len(log.history[next(iter(log.facts))]) == 1 and out.lines == 1


def test_resets_reload_the_file(live, tmp_path):
    data, recall, follower = live
    session = data.sessions[2]
    obj = session
    # Transcript replaced by a rename (atomic rewrite) holding only its first lines.
    lines = open(session.path, "rb").read().split(b"\n")
    tmp = tmp_path / "t.jsonl"
    tmp.write_bytes(b"\n".join(lines[:4]) + b"\n")
    os.replace(tmp, session.path)
    changes = follower.poll(everything=True)
    assert session.path in changes.resets and session.id in changes.sessions_changed
    assert obj is data.sessions[2] and len(session.entries) == 3
    assert [entry_fields(e) for e in session.entries] == [
        entry_fields(e) for e in load_transcript(session.path).entries
    ]
    # Appends after the reset carry on from the new content.
    append(session.path, message(session.leaf.id, "user", "after reset"))
    changes = follower.poll(everything=True)
    assert len(changes.entries[session.id]) == 1 and session.entries[-1].line == 5
    # knowledge.jsonl truncated: the log is replayed from what is left.
    log = data.knowledge
    kept = open(log.path, "rb").read().split(b"\n")[:3]
    with open(log.path, "r+b") as fh:
        fh.truncate(0)
        fh.write(b"\n".join(kept) + b"\n")
    changes = follower.poll(everything=True)
    assert log.path in changes.resets and len(log.history) == len(load_knowledge(log.path).history)
    assert recall.knowledge.log is log
    # segments.jsonl replaced: the warm set is reloaded and the store must be reopened.
    seg_lines = open(data.segments.path, "rb").read().split(b"\n")[:10]
    tmp.write_bytes(b"\n".join(seg_lines) + b"\n")
    os.replace(tmp, data.segments.path)
    changes = follower.poll(everything=True)
    from core.store.segments import load_segments

    expect = load_segments(data.segments.path, now_ms=NOW).segments
    assert changes.store_reopen_needed and data.segments.segments == expect and len(expect) >= 9
    assert follower.segments.store is None


def test_new_transcript_appears(live):
    data, _recall, follower = live
    folder = data.discovery.agents[0].sessions_dir
    path = folder / "new-session.jsonl"
    header = {
        "type": "session",
        "version": 3,
        "id": "new-session-id",
        "timestamp": "2025-10-09T10:00:00.000Z",
        "cwd": "/x",
    }
    path.write_bytes(orjson.dumps(header)[:10])  # the agent is writing the header
    follower.mark_dirty(str(folder))
    assert follower.poll().sessions_added == []
    path.write_bytes(orjson.dumps(header) + b"\n")
    follower.mark_dirty(str(folder))
    changes = follower.poll()
    assert changes.sessions_added == ["new-session-id"]
    assert data.session("new-session-id").path == str(path)
    assert any(s.id == "new-session-id" for s in data.summaries)
    assert str(path) in follower.files()
    append(path, message(None, "user", "first words"))
    follower.mark_dirty(str(path))
    changes = follower.poll()
    assert changes.sessions_changed == ["new-session-id"]
    # A .jsonl that is not a transcript is left alone.
    (folder / "other.jsonl").write_bytes(b'{"a":1}\n')
    assert not follower.poll(everything=True).sessions_added


def test_session_reloaded_by_the_app_is_followed(live):
    data, _recall, follower = live
    session = data.sessions[1]
    append(session.path, message(session.leaf.id, "user", "one"))
    # The app reloads the session itself (after its own write, say): a new object.
    fresh = load_transcript(session.path)
    data.sessions[1] = fresh
    append(session.path, message(fresh.leaf.id, "user", "two"))
    changes = follower.poll(everything=True)
    assert [e.raw["message"]["content"][0]["text"] for e in changes.entries[fresh.id]] == ["two"]
    assert [entry_fields(e) for e in fresh.entries] == [
        entry_fields(e) for e in load_transcript(session.path).entries
    ]


def test_agent_and_memlens_append_facts_at_once_every_line_once(tmp_path):
    """A writer process appends facts while memlens edits the same log and follows it."""
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = tmp_path / "home"
    write_demo(root, now_ms=NOW, segments=20)
    data = load_dataset(root, now_ms=NOW)
    follower = LiveFollower(data, None, clock=lambda: NOW)
    log = data.knowledge
    writer = Path(__file__).resolve().parent.parent / "live_writer.py"
    proc = subprocess.Popen(
        [
            sys.executable,
            str(writer),
            str(root),
            "--kinds",
            "fact",
            "--count",
            "150",
            "--rate",
            "150",
            "--seed",
            "4",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    rng = random.Random(3)
    ours = []
    while proc.poll() is None:
        action = rng.random()
        live_ids = [f for f, v in log.facts.items() if v.status == "active"]
        if action < 0.4:
            ours.append(log.add("decision", f"memlens fact {len(ours)}").id)
        elif action < 0.7 and live_ids:
            log.update(rng.choice(live_ids), content=f"edited {rng.random():.6f}")
        else:
            follower.poll(everything=True)
        time.sleep(rng.uniform(0, 0.004))
    out, _ = proc.communicate()
    follower.poll(everything=True)
    theirs = [orjson.loads(line)["id"] for line in out.splitlines()]
    fresh = load_knowledge(log.path)
    assert all(i in log.facts for i in theirs + ours)
    assert {k: (f.content, f.status, f.line) for k, f in log.facts.items()} == {
        k: (f.content, f.status, f.line) for k, f in fresh.facts.items()
    }
    for fid, lines in fresh.history.items():
        assert [(h.line, h.offset) for h in log.history[fid]] == [(h.line, h.offset) for h in lines]
    assert log.lines == fresh.lines and not [p for p in log.problems if p.severity == "error"]


def test_slow_summaries_are_refreshed_less_often(live, monkeypatch):
    import time
    from types import SimpleNamespace

    import core.live.follow as live_mod

    data, _recall, follower = live
    real = live_mod.summarize
    now = [1_000.0]  # the follower's clock: summaries cost exactly what this says

    def slow(*args):
        now[0] += 0.01
        return real(*args)

    monkeypatch.setattr(live_mod, "time", SimpleNamespace(monotonic=lambda: now[0], time=time.time))
    monkeypatch.setattr(live_mod, "summarize", slow)  # 10 ms: over the budget below
    monkeypatch.setattr(live_mod, "SUMMARY_BUDGET", 0.005)
    session = data.sessions[3]
    append(session.path, message(session.leaf.id, "user", "one"))
    assert follower.poll(everything=True).summaries_changed == [session.id]
    append(session.path, message(session.leaf.id, "user", "two"))
    now[0] += 0.1  # half of the 20 x 10 ms wait
    changes = follower.poll(everything=True)
    assert changes.sessions_changed == [session.id] and changes.summaries_changed == []
    summary = next(s for s in data.summaries if s.path == session.path)
    assert summary.entries == len(session.entries) - 1  # stale for now
    now[0] += 0.15  # past 20 times the cost since the last summary
    assert follower.poll(everything=True).summaries_changed == [session.id]
    summary = next(s for s in data.summaries if s.path == session.path)
    assert summary.entries == len(session.entries)


def test_a_single_opened_transcript_never_pulls_in_its_neighbours(fixtures_dir, tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    chosen = folder / "chosen.jsonl"
    chosen.write_bytes((fixtures_dir / "before-compaction.jsonl").read_bytes())
    (folder / "neighbour.jsonl").write_bytes((fixtures_dir / "large-session.jsonl").read_bytes())
    data = load_dataset(chosen)
    follower = LiveFollower(data)
    follower.mark_dirty(str(folder))
    changes = follower.poll(everything=True)
    assert changes.sessions_added == []
    assert [s.path for s in data.sessions] == [str(chosen)]
    assert len(data.summaries) == 1
