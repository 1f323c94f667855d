"""segments.jsonl: validation, dedup key, eviction by age and count, appends."""

from __future__ import annotations

import hashlib

import orjson

from core.store.segments import (
    DAY_MS,
    append_segments,
    dedup_key,
    load_segments,
    make_segment,
    oldest_first,
    parse_segments,
)

NOW = 1_800_000_000_000


def seg(i, **over):
    base = {
        "id": f"id-{i}",
        "sessionId": "s1",
        "timestamp": NOW - i * 1000,
        "role": "user",
        "content": f"message number {i}",
        "tokens": 6,
        "metadata": {"topics": ["programming"], "entities": []},
    }
    base.update(over)
    return base


def data(*objs):
    return b"".join(orjson.dumps(o) + b"\n" for o in objs)


def test_dedup_key_is_the_agents():
    content = "héllo"
    digest = hashlib.sha256(content.encode()).hexdigest()[:16]
    assert dedup_key("s", "user", content) == f"s:user:{digest}"


def test_validation_rules():
    load = parse_segments(
        data(
            seg(1),
            seg(2, id=5),
            seg(3, sessionId=None),
            seg(4, role="system"),
            seg(5, content=["x"]),
            seg(6, timestamp="yesterday"),
            seg(7, timestamp=True),
            [1, 2],
            seg(8, tokens=None, metadata=None),
        ),
        "segments.jsonl",
        now_ms=NOW,
    )
    assert [s.id for s in load.segments] == ["id-1", "id-8"]
    assert load.segments[1].tokens == 6  # ceil(len("message number 8") / 3)
    assert [p.line for p in load.problems] == [2, 3, 4, 5, 6, 7, 8]
    assert "role must be user or assistant" in load.problems[2].message
    assert load.valid == 2


def test_first_of_a_dedup_key_wins():
    load = parse_segments(
        data(
            seg(1),
            seg(2, content="message number 1"),
            seg(3, role="assistant", content="message number 1"),
        ),
        "s",
        now_ms=NOW,
    )
    assert [s.id for s in load.segments] == ["id-1", "id-3"]
    assert load.duplicates == 1


def test_eviction_by_age_and_by_count():
    objs = [seg(i, timestamp=NOW - i * DAY_MS, content=f"c{i}") for i in range(10)]
    load = parse_segments(data(*reversed(objs)), "s", now_ms=NOW, eviction_days=5, max_segments=3)
    # days 6..9 are older than 5 days: kept in the file, not in the warm set
    assert load.evicted_age == 4
    # of the 6 left (file order: oldest first), the oldest 3 go
    assert [s.id for s in load.segments] == ["id-2", "id-1", "id-0"]
    assert load.evicted_count == 3
    everything = parse_segments(data(*objs), "s", now_ms=NOW, eviction_days=0, max_segments=100)
    assert len(everything.segments) == 10


def test_make_and_append_segment(tmp_path):
    path = tmp_path / "segments.jsonl"
    path.write_bytes(data(seg(1))[:-1])  # the agent's last line has no newline yet
    s = make_segment(
        "s2",
        "assistant",
        "Use postgres. api_key=abcdefghijklmnopqrstuvwx see https://x.io",
        timestamp=NOW,
        new_id=lambda: "fixed-id",
    )
    assert "abcdefghijklmnop" not in s.content and "api_key=[REDACTED]" in s.content
    assert s.tokens == -(-len(s.content) // 3)
    assert "database" in s.topics
    assert {
        "type": "url",
        "value": "https://x.io",
        "offset": s.content.index("https"),
    } in s.entities
    result = append_segments(path, [s])
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and orjson.loads(lines[1])["id"] == "fixed-id"
    assert result.offset == len(orjson.dumps(seg(1)))
    loaded = load_segments(path, now_ms=NOW)
    assert [x.id for x in loaded.segments] == ["id-1", "fixed-id"]
    assert loaded.segments[1].to_json() == {**s.to_json()}


def test_missing_file_is_empty(tmp_path):
    assert load_segments(tmp_path / "none.jsonl").segments == []


def test_max_segments_evicts_by_timestamp_then_file_order():
    # file order is not age: a late archive of an old message, and equal timestamps
    objs = [
        seg(1, timestamp=NOW - 1000, content="a"),
        seg(2, timestamp=NOW - 10, content="b"),  # newest
        seg(3, timestamp=NOW - 5000, content="c"),  # oldest, archived late
        seg(4, timestamp=NOW - 1000, content="d"),  # ties with id-1, later in the file
    ]
    load = parse_segments(data(*objs), "s", now_ms=NOW, max_segments=2)
    assert [s.id for s in load.segments] == ["id-2", "id-4"]  # in file order
    assert load.evicted_count == 2
    assert oldest_first([5, 1, 5, 0]) == [3, 1, 0, 2]
