from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from core.io.problems import FormatError
from core.openclaw.session_rows import row_fields
from core.openclaw.sessions_store import (
    REMOVE,
    apply_changes,
    load_sessions_store,
    parse_sessions_store,
    render_sessions_store,
    update_sessions_store,
)

if TYPE_CHECKING:
    from pathlib import Path

KEY = "agent:main:telegram:direct:123"


def store_obj() -> dict[str, Any]:
    return {
        KEY: {
            "sessionId": "4f1c2d3e-aaaa-bbbb-cccc-1234567890ab",
            "updatedAt": 1767225600123,
            "systemSent": True,  # unknown to memlens: must survive
            "sessionFile": "/home/u/.openclaw/agents/main/sessions/4f1c.jsonl",
            "compactionCount": 3,
            "memoryFlushAt": 1767225500000,
            "memoryFlushCompactionCount": 2,
            "totalTokens": 151234,
            "totalTokensFresh": True,
            "inputTokens": 150000,
            "outputTokens": 1234,
            "contextTokens": 200000,
            "modelOverride": "anthropic/claude-sonnet-4-5",
            "thinkingLevel": "low",
            "origin": {"provider": "telegram", "chatType": "direct", "tags": ["a", "é"]},
            "skillsSnapshot": {"prompt": "...", "skills": [{"name": "x"}]},
        },
        "agent:main:main": {"updatedAt": 1767225000000, "sessionId": "s2", "zeta": 1, "alpha": 2},
        "agent:main:broken": "not an object",
        "agent:main:list": [1, 2],
    }


def write_store(tmp_path: Path, obj: Any, *, newline: bool = False) -> Path:
    path = tmp_path / "sessions.json"
    text = json.dumps(obj, indent=2, ensure_ascii=False) + ("\n" if newline else "")
    path.write_bytes(text.encode("utf-8"))
    return path


def test_typed_accessors(tmp_path: Path) -> None:
    store = load_sessions_store(write_store(tmp_path, store_obj()))
    e = store[KEY]
    assert e.key == KEY
    assert e.session_id == "4f1c2d3e-aaaa-bbbb-cccc-1234567890ab"
    assert e.updated_at == 1767225600123
    assert e.session_file == "/home/u/.openclaw/agents/main/sessions/4f1c.jsonl"
    assert e.compaction_count == 3
    assert e.total_tokens == 151234
    assert e.input_tokens == 150000
    assert e.output_tokens == 1234
    assert e.context_tokens == 200000
    # The fields without an accessor are shown as the session row shows them.
    shown = {f.key: f.value for f in row_fields(e)}
    assert shown["memoryFlushAt"] == "2025-12-31 23:58 UTC"
    assert shown["memoryFlushCompactionCount"] == "2"
    assert shown["modelOverride"] == "anthropic/claude-sonnet-4-5"
    assert shown["thinkingLevel"] == "low"
    assert e.raw["systemSent"] is True
    assert e.line == 2
    other = store["agent:main:main"]
    assert other.compaction_count is None
    assert {f.key for f in row_fields(other)} == {"key", "sessionId", "updatedAt"}
    assert list(store.entries) == [KEY, "agent:main:main"]
    assert len(store) == 2


def test_accessors_ignore_wrong_types() -> None:
    data = json.dumps(
        {"k": {"totalTokens": "12", "compactionCount": True, "updatedAt": 5.0, "sessionId": 7}}
    ).encode()
    e = parse_sessions_store(data)["k"]
    assert e.total_tokens is None
    assert e.compaction_count is None
    assert e.updated_at == 5
    assert e.session_id is None


def test_non_object_entries_are_problems_and_kept(tmp_path: Path) -> None:
    path = write_store(tmp_path, store_obj())
    store = load_sessions_store(path)
    assert "agent:main:broken" not in store.entries
    assert store.raw["agent:main:broken"] == "not an object"
    assert [(p.severity, p.file) for p in store.problems] == [("warning", str(path))] * 2
    text = path.read_text()
    lines = text.splitlines()
    broken = store.problems[0]
    assert "agent:main:broken" in broken.message
    assert lines[broken.line - 1].startswith('  "agent:main:broken":')
    assert "an array" in store.problems[1].message

    update_sessions_store(path, {KEY: {"compactionCount": 4}})
    after = json.loads(path.read_text())
    assert after["agent:main:broken"] == "not an object"
    assert after["agent:main:list"] == [1, 2]


def test_unchanged_round_trip_is_byte_identical(tmp_path: Path) -> None:
    for newline in (False, True):
        path = write_store(tmp_path, store_obj(), newline=newline)
        before = path.read_bytes()
        store = load_sessions_store(path)
        assert render_sessions_store(store.raw, trailing_newline=store.trailing_newline) == before
        update_sessions_store(path, {}, backup=False)
        assert path.read_bytes() == before


def test_ascii_json_dumps_round_trip(tmp_path: Path) -> None:
    # Exactly what the task asks: a file from json.dumps(obj, indent=2) comes back as is.
    obj = store_obj()
    obj[KEY]["origin"]["tags"] = ["a", "b"]
    path = tmp_path / "sessions.json"
    path.write_text(json.dumps(obj, indent=2))
    before = path.read_bytes()
    update_sessions_store(path, {}, backup=False)
    assert path.read_bytes() == before


def test_changed_field_keeps_everything_else(tmp_path: Path) -> None:
    path = write_store(tmp_path, store_obj())
    result = update_sessions_store(
        path,
        {
            KEY: {"compactionCount": 4, "memoryFlushAt": REMOVE, "memlensNote": "x"},
            "agent:main:main": {"totalTokens": 10},
        },
    )
    after = json.loads(path.read_bytes())
    expected = store_obj()
    expected[KEY]["compactionCount"] = 4
    del expected[KEY]["memoryFlushAt"]
    expected[KEY]["memlensNote"] = "x"
    expected["agent:main:main"]["totalTokens"] = 10
    assert after == expected
    # Order: top-level keys and fields as before; a changed field stays in place,
    # a new one goes last.
    assert list(after) == list(expected)
    assert list(after[KEY]) == list(expected[KEY])
    assert list(after[KEY]).index("compactionCount") == 4
    assert list(after[KEY])[-1] == "memlensNote"
    assert list(after["agent:main:main"]) == [
        "updatedAt",
        "sessionId",
        "zeta",
        "alpha",
        "totalTokens",
    ]
    # The written bytes are what json.dumps(indent=2) makes of the same object.
    assert path.read_bytes() == json.dumps(expected, indent=2, ensure_ascii=False).encode()
    assert result.store[KEY].compaction_count == 4
    assert "memoryFlushAt" not in result.store[KEY].raw


def test_backup_is_created_and_holds_the_old_bytes(tmp_path: Path) -> None:
    path = write_store(tmp_path, store_obj())
    before = path.read_bytes()
    result = update_sessions_store(path, {KEY: {"totalTokens": 1}})
    assert result.backup is not None
    assert result.backup.parent == tmp_path
    assert result.backup.name.startswith("sessions.json.memlens-backup-")
    assert result.backup.read_bytes() == before
    assert path.read_bytes() != before


def test_write_is_atomic_no_temp_files_left(tmp_path: Path) -> None:
    path = write_store(tmp_path, store_obj())
    update_sessions_store(path, {KEY: {"totalTokens": 1}}, backup=False)
    update_sessions_store(path, {KEY: {"totalTokens": 2}}, backup=False)
    assert [p.name for p in tmp_path.iterdir()] == ["sessions.json"]
    assert load_sessions_store(path)[KEY].total_tokens == 2


def test_write_rereads_the_file(tmp_path: Path) -> None:
    path = write_store(tmp_path, store_obj())
    load_sessions_store(path)
    # The agent adds a session after memlens loaded the store.
    obj = store_obj()
    obj["agent:main:new"] = {"sessionId": "n"}
    write_store(tmp_path, obj)
    update_sessions_store(path, {KEY: {"totalTokens": 1}}, backup=False)
    assert json.loads(path.read_bytes())["agent:main:new"] == {"sessionId": "n"}


def test_bad_changes_leave_the_file_untouched(tmp_path: Path) -> None:
    path = write_store(tmp_path, store_obj())
    before = path.read_bytes()
    with pytest.raises(KeyError, match="no session"):
        update_sessions_store(path, {"agent:nope": {"totalTokens": 1}})
    with pytest.raises(TypeError, match="not an object"):
        update_sessions_store(path, {"agent:main:broken": {"totalTokens": 1}})
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["sessions.json"]


def test_apply_changes_does_not_mutate_its_input() -> None:
    raw = store_obj()
    snapshot = json.dumps(raw)
    out = apply_changes(raw, {KEY: {"totalTokens": 0}})
    assert json.dumps(raw) == snapshot
    assert out[KEY]["totalTokens"] == 0


def test_bad_json_gives_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "sessions.json"
    path.write_bytes(b'{\n  "a": {\n    "sessionId": "x",\n  }\n}\n')
    with pytest.raises(FormatError) as info:
        load_sessions_store(path)
    assert info.value.file == str(path)
    assert info.value.line == 3  # the trailing comma
    assert "column" in info.value.detail
    assert str(info.value).startswith(f"{path}:3: invalid JSON")


@pytest.mark.parametrize(
    ("data", "message"),
    [(b"", "empty"), (b"  \n", "empty"), (b"[1]", "top level"), (b'"x"', "top level")],
)
def test_not_a_store(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "sessions.json"
    path.write_bytes(data)
    with pytest.raises(FormatError, match=message):
        load_sessions_store(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="cannot read"):
        load_sessions_store(tmp_path / "sessions.json")
