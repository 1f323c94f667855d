"""A session snapshot is what a job reads while live mode extends the session it came from.

The soak test found timeline builds failing (``KeyError`` in the walk, ``dictionary
changed size during iteration``) when a job walked the live session itself.
"""

from __future__ import annotations

import itertools
import threading

import numpy as np
import orjson

from core.dataset.load import load_dataset
from core.demo.build import write_demo
from core.live.follow import LiveFollower
from core.timeline.arrays import build_timeline
from core.transcript import load_transcript

NOW = 1_760_000_000_000
ids = (f"{n:08x}" for n in itertools.count(0xB0000000))


def _message(parent: str, role: str, text: str) -> dict[str, object]:
    return {
        "type": "message",
        "id": next(ids),
        "parentId": parent,
        "timestamp": "2025-10-09T10:00:00.000Z",
        "message": {"role": role, "content": [{"type": "text", "text": text}], "timestamp": NOW},
    }


def _timeline_fields(session):
    t = build_timeline(session)
    return [
        np.asarray(getattr(t, name)).tolist()
        for name in ("entry_ids", "tokens", "on_path", "parent_pos")
    ]


def test_a_snapshot_stays_as_taken_while_live_mode_extends_the_session(tmp_path):
    root = tmp_path / "home"
    write_demo(root, now_ms=NOW, segments=50)
    data = load_dataset(root, now_ms=NOW)
    follower = LiveFollower(data, None, clock=lambda: NOW)
    session = max(data.sessions, key=lambda s: len(s.entries))
    before_bytes = open(session.path, "rb").read()
    snap = session.snapshot()
    errors: list[BaseException] = []
    stop = threading.Event()
    builds = [0]

    def build() -> None:  # a timeline job, as the inspector runs it
        try:
            while not stop.is_set():
                build_timeline(snap)
                snap.parent_breaks()
                builds[0] += 1
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=build)
    worker.start()
    try:
        parent = session.leaf.id
        for i in range(30):
            branch = parent if i % 5 else session.entries[len(session.entries) // 2].id
            q = _message(branch, "user", f"question {i}")
            a = _message(q["id"], "assistant", f"answer {i}")
            with open(session.path, "ab") as fh:
                fh.write(orjson.dumps(q) + b"\n" + orjson.dumps(a) + b"\n")
            parent = a["id"]
            follower.mark_dirty(session.path)
            follower.poll()
    finally:
        stop.set()
        worker.join(timeout=60)
    assert not worker.is_alive()
    assert errors == []
    assert builds[0] > 0
    assert len(session.entries) == len(snap.entries) + 60
    old = tmp_path / "old.jsonl"
    old.write_bytes(before_bytes)
    fresh = load_transcript(old)
    assert [e.id for e in snap.entries] == [e.id for e in fresh.entries]
    assert snap.children == fresh.children
    assert _timeline_fields(snap) == _timeline_fields(fresh)
