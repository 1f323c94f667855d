"""Issue 17, defect 8: the activity log says whose file each write touched."""

from __future__ import annotations

import threading

import orjson

from core.io.fsutil import add_write_observer, append_lines, atomic_write, remove_write_observer
from core.safety.activity import ActivityLog, load_activity, owner_of
from core.safety.activity_owner import AGENT, MEMLENS, OwnFiles, own_writes


def test_writes_in_an_own_writes_scope_are_memlens_own_and_say_why(tmp_path):
    own = OwnFiles.of([tmp_path / "cache"], places=[tmp_path / "cache" / "demo"])
    log = ActivityLog(tmp_path / "data" / "activity.jsonl", own_files=own)
    agent = tmp_path / "home" / "knowledge.jsonl"
    agent.parent.mkdir()
    demo = tmp_path / "cache" / "demo" / "knowledge.jsonl"
    demo.parent.mkdir(parents=True)
    add_write_observer(log.record)
    try:
        with own_writes("demo data"):
            append_lines(demo, b"{}\n")  # generating the demo: memlens's own
            # another thread writing meanwhile is not inside the scope
            other = threading.Thread(target=lambda: append_lines(agent, b"{}\n"))
            other.start()
            other.join()
        append_lines(demo, b"{}\n")  # the user's fact in the demo home: the agent's data
        atomic_write(tmp_path / "cache" / "vectors-hash-1.bin", b"VMEM", backup=False)
    finally:
        remove_write_observer(log.record)
    read = load_activity(log.path)
    assert [(r.path, log.owner(r)) for r in read.records] == [
        (str(demo), MEMLENS),
        (str(agent), AGENT),
        (str(demo), AGENT),
        (str(tmp_path / "cache" / "vectors-hash-1.bin"), MEMLENS),
    ]
    assert read.records[0].summary == "demo data: appended 1 line"
    lines = [orjson.loads(x) for x in log.path.read_bytes().splitlines()]
    assert [x.get("owner") for x in lines] == ["memlens", None, None, "memlens"]


def test_older_lines_without_an_owner_are_decided_by_their_place(tmp_path):
    cache = tmp_path / "cache"
    path = tmp_path / "activity.jsonl"
    lines = [
        {"time": 1, "file": str(cache / "demo" / "k.jsonl"), "action": "append", "lines": 1},
        {"time": 2, "file": str(cache / "vectors-x.bin"), "action": "create", "lines": 0},
        {"time": 3, "file": str(tmp_path / "home" / "s.jsonl"), "action": "append", "lines": 1},
    ]
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    log = ActivityLog(path, own_files=OwnFiles.of([cache], places=[cache / "demo"]))
    items = log.load().items
    assert [owner_of(i) for i in items] == [AGENT, AGENT, AGENT]  # the file does not say
    assert [log.owner(i) for i in items] == [AGENT, MEMLENS, AGENT]  # the place does
