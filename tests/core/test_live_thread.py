"""Live mode's read phase builds and checks everything; its apply phase only attaches.

The read runs in a worker thread here, as in the app, and the apply on this (the
"GUI") thread: the parsing, entry building, checks, announcement detection and
summaries must all run in the worker, and the read must leave the loaded session
as it was until the apply.
"""

from __future__ import annotations

import itertools
import random
import threading
from typing import Any

import orjson
import pytest

import core.live.follow as follow_mod
import core.live.session as session_mod
from core.dataset.load import load_dataset, summarize
from core.io.jsonio import read_jsonl
from core.live.draft import SessionDraft
from core.live.follow import LiveFollower
from core.live.session import (
    attach_append,
    cursor_from_bytes,
    prepare_append,
)
from core.transcript import parse_transcript

from .build import extend_session_objects

HEADER = {"type": "session", "version": 3, "id": "5e551017-0000-4000-8000-000000000001"}
HEADER4 = {**HEADER, "version": 4, "id": "5e551017-0000-4000-8000-000000000004"}


def line(obj: dict[str, Any]) -> bytes:
    return orjson.dumps(obj) + b"\n"


def message(eid: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}]}
    if role == "assistant":
        msg["usage"] = {"input": 100, "output": 10}
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": "t", "message": msg}


def entry_fields(e):
    return (e.index, e.line, e.offset, e.type, e.id, e.parent_id, e.raw, e.synthetic_id)


def tree_state(tree):
    if tree is None:
        return None
    nodes = {
        k: (n.parent, n.leaf, n.append_parent, n.side, n.control) for k, n in tree.nodes.items()
    }
    return (
        tree.leaf,
        tree.append_parent,
        tree.latest_reset,
        nodes,
        set(tree.reset_descendants),
        set(tree.invalid),
    )


def session_state(s):
    return (
        [entry_fields(e) for e in s.entries],
        list(s.by_id),
        s.children,
        sorted((p.line, p.message) for p in s.problems),
        tree_state(s.tree),
        s.leaf.id if s.leaf is not None else None,
    )


def without_problems(state):
    # live mode checks a v4 entry's raw parentId as it comes, the loader the tree's
    # parents of the whole file: their parent problems differ (not the point here)
    return state[:3] + state[4:]


def test_the_apply_step_does_no_parsing_and_no_checking(tmp_path, monkeypatch):
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(HEADER) + line(message("a0", None, "user", "hello")))
    data = load_dataset(path)
    (session,) = data.sessions
    follower = LiveFollower(data)
    calls: dict[str, list[int]] = {}

    def spy(module: Any, name: str) -> None:
        real = getattr(module, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls.setdefault(name, []).append(threading.get_ident())
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    spy(follow_mod, "read_jsonl")  # parsing
    spy(follow_mod, "summarize")  # the session summary
    spy(session_mod, "_entry")  # entry building and the entry-level checks
    spy(session_mod, "message_problems")
    spy(session_mod, "announcements")  # compaction and memory-flush detection
    burst = [message("a1", "a0", "assistant", "hi"), message("a1", "a0", "user", "again")]
    burst.append(
        {"type": "compaction", "id": "c1", "parentId": "a1", "timestamp": "t", "summary": "S",
         "firstKeptEntryId": "a1", "tokensBefore": 1234}
    )  # fmt: skip
    burst.append(message("u2", "gone", "user", "Pre-compaction memory flush. Store it."))
    with path.open("ab") as fh:
        fh.write(b"".join(line(o) for o in burst))
    follower.mark_dirty(str(path))
    before = session_state(session)
    summaries = list(data.summaries)
    read: list[Any] = []
    worker = threading.Thread(target=lambda: read.append(follower.read(follower.take_dirty())))
    worker.start()
    worker.join()
    assert session_state(session) == before  # the read changed nothing the views read
    assert data.summaries == summaries
    main = threading.get_ident()
    on_main = {name: idents.count(main) for name, idents in calls.items()}
    changes = follower.apply(read[0])
    assert set(calls) == {"read_jsonl", "summarize", "_entry", "message_problems", "announcements"}
    assert all(worker.ident in idents for idents in calls.values())
    # nothing ran on the GUI thread, during the read nor during the apply
    assert on_main == dict.fromkeys(calls, 0)
    assert {name: idents.count(main) for name, idents in calls.items()} == on_main
    # and the apply attached all of it
    assert [e.id for e in changes.entries[session.id]] == ["a1", "a1", "c1", "u2"]
    messages = [p.message for p in changes.problems]
    assert any("duplicate entry id 'a1'" in m for m in messages)
    assert any("parentId 'gone' is not in the file" in m for m in messages)
    assert [a.kind for a in changes.announcements] == ["compaction", "memory_flush"]
    assert changes.summaries_changed == [session.id]
    assert data.summaries[0].entries == 5
    whole = parse_transcript(path.read_bytes(), str(path))
    assert session_state(session) == session_state(whole)


def v4_rows(rng: random.Random, n: int) -> list[dict[str, Any]]:
    """OpenClaw rows that move its tree every way: side appends, leaf rows, resets."""
    rows: list[dict[str, Any]] = []
    ids: list[str] = []
    for i in range(n):
        eid = f"e{i:03d}"
        prev = ids[-1] if ids else None
        pick = rng.random()
        if pick < 0.08 and ids:
            rows.append({"type": "leaf", "id": eid, "parentId": prev, "targetId": rng.choice(ids)})
        elif pick < 0.11:
            rows.append({"type": "leaf", "id": eid, "parentId": prev, "targetId": "nowhere"})
        elif pick < 0.15:
            rows.append({"type": "reset", "id": eid, "parentId": prev, "timestamp": "t"})
        elif pick < 0.22:
            rows.append({**message(eid, prev, "user", "aside"), "appendMode": "side"})
        elif pick < 0.27:
            rows.append({**message(eid, "unknown", "user", "stale parent")})
        elif pick < 0.31:
            row = message(eid, prev, "assistant", "no parent key")
            del row["parentId"]
            rows.append(row)
        elif pick < 0.34 and ids:
            rows.append(message(rng.choice(ids), prev, "user", "duplicate"))
        elif pick < 0.37:
            rows.append({"type": "compaction", "id": eid, "parentId": prev, "summary": "S",
                         "firstKeptEntryId": prev, "timestamp": "t"})  # fmt: skip
        else:
            role = "user" if i % 2 else "assistant"
            rows.append(message(eid, rng.choice(ids[-3:]) if ids else None, role, f"m{i}"))
        ids.append(eid)
    return rows


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_openclaw_tree_built_in_batches_of_one_read_equals_the_file_loaded_whole(seed):
    rng = random.Random(seed)
    data = line(HEADER4) + b"".join(line(r) for r in v4_rows(rng, 160))
    ends = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    cuts = [*sorted(rng.sample(ends[1:-1], 8)), len(data)]
    name = "v4.jsonl"
    session = parse_transcript(data[: cuts[0]], name)
    cursor = cursor_from_bytes(session, data[: cuts[0]])
    pending = []
    draft = SessionDraft(session)
    before = session_state(session)
    for start, end in itertools.pairwise(cuts):
        first_line = data[:start].count(b"\n") + 1
        read = read_jsonl(data[start:end], name, first_line=first_line, base_offset=start)
        pending.append(prepare_append(cursor, draft, read.objects, read.problems))
        if rng.random() < 0.4:  # a read ends here: its steps are applied
            assert session_state(session) == before
            for added in pending:
                attach_append(session, added)
            pending, draft = [], SessionDraft(session)
            before = session_state(session)
    for added in pending:
        attach_append(session, added)
    assert session.tree is not None
    whole = parse_transcript(data, name)
    assert without_problems(session_state(session)) == without_problems(session_state(whole))
    # each batch attached before the next one is built: the same problems
    one_by_one = parse_transcript(data[: cuts[0]], name)
    cursor = cursor_from_bytes(one_by_one, data[: cuts[0]])
    for start, end in itertools.pairwise(cuts):
        first_line = data[:start].count(b"\n") + 1
        read = read_jsonl(data[start:end], name, first_line=first_line, base_offset=start)
        extend_session_objects(cursor, read.objects, read.problems)
    assert session_state(session) == session_state(one_by_one)


def test_openclaw_session_followed_live_equals_the_file_loaded_whole(tmp_path):
    rng = random.Random(7)
    path = tmp_path / "v4.jsonl"
    rows = v4_rows(rng, 120)
    path.write_bytes(line(HEADER4) + b"".join(line(r) for r in rows[:20]))
    data = load_dataset(path)
    (session,) = data.sessions
    follower = LiveFollower(data)
    for start in range(20, 120, 25):
        with path.open("ab") as fh:
            fh.write(b"".join(line(r) for r in rows[start : start + 25]))
        follower.mark_dirty(str(path))
        changes = follower.poll()
        assert session.id in changes.sessions_changed
    whole = parse_transcript(path.read_bytes(), str(path))
    assert without_problems(session_state(session)) == without_problems(session_state(whole))
    assert data.summaries[0].entries == len(whole.entries)
    assert data.summaries[0] == summarize(
        whole, data.summaries[0].agent, data.summaries[0].modified
    )


def test_knowledge_lines_are_parsed_in_the_read_phase(tmp_path, monkeypatch):
    from types import SimpleNamespace

    import core.live.store as store_mod
    from core.io.tail import Tail
    from core.live.changes import LiveChanges, LiveRead
    from core.live.store import read_knowledge_lines
    from core.store.knowledge import load_knowledge

    path = tmp_path / "knowledge.jsonl"
    path.write_bytes(line({"id": "f1", "type": "decision", "content": "use orjson"}))
    log = load_knowledge(path)
    follower = SimpleNamespace(
        data=SimpleNamespace(knowledge=log), recall=None, forget_problems=lambda *_: None
    )
    tail = Tail(log.path, log.size, line=log.lines + 1)
    with path.open("ab") as fh:
        fh.write(line({"id": "f2", "type": "config", "content": "port 8080"}) + b"not json\n")
    threads: list[int] = []
    real = store_mod.read_jsonl

    def spy(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(store_mod, "read_jsonl", spy)
    out = LiveRead()
    worker = threading.Thread(target=lambda: read_knowledge_lines(follower, tail, out))
    worker.start()
    worker.join()
    assert threads == [worker.ident] and set(log.facts) == {"f1"}
    changes = LiveChanges()
    for step in out.steps:
        step(changes)
    assert threads == [worker.ident]  # the apply replayed what the worker parsed
    assert set(log.facts) == {"f1", "f2"} and changes.facts_changed == ["f2"]
    assert [p.line for p in changes.problems] == [3]
