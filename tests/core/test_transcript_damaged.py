"""Damaged transcripts: built in tmp_path from the real fixture lines."""

from __future__ import annotations

import pytest

from core.io.jsonio import read_jsonl
from core.io.problems import FormatError
from core.transcript import load_transcript, parse_transcript


def _lines(fixtures_dir, n=12):
    return (fixtures_dir / "large-session.jsonl").read_bytes().split(b"\n")[:n]


def test_two_objects_run_together_yield_both(fixtures_dir, tmp_path):
    lines = _lines(fixtures_dir)
    glued = [*lines[:3], lines[3] + lines[4], *lines[5:]]
    path = tmp_path / "glued.jsonl"
    path.write_bytes(b"\n".join(glued) + b"\n")
    s = load_transcript(path)
    clean = parse_transcript(b"\n".join(lines) + b"\n", "clean")
    assert [e.raw for e in s.entries] == [e.raw for e in clean.entries]
    # objects keep their #N: each object of the glued line counted
    assert [e.index for e in s.entries] == list(range(1, len(lines)))
    assert s.entries[2].line == s.entries[3].line == 4
    warn = [p for p in s.problems if "run together" in p.message]
    assert len(warn) == 1 and warn[0].line == 4 and warn[0].file == str(path)


def test_each_kind_of_bad_line_is_skipped_and_reported(fixtures_dir, tmp_path):
    lines = _lines(fixtures_dir, 8)
    body = [
        lines[0],  # 1 header
        lines[1],  # 2
        b"",  # 3 blank
        b'{"type":"message", "oops"',  # 4 invalid JSON
        b"\xff\xfe" + lines[2][2:],  # 5 invalid UTF-8
        lines[3],  # 6
        lines[4] + b'{"type":"mess',  # 7 object + garbage
        lines[5],  # 8
        lines[6][: len(lines[6]) // 2],  # 9 partial last line, no newline
    ]
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(b"\n".join(body))
    before = path.read_bytes()
    s = load_transcript(path)
    assert path.read_bytes() == before
    by_line = {p.line: p for p in s.problems}
    assert by_line[3].severity == "info" and "blank" in by_line[3].message
    assert "invalid JSON" in by_line[4].message
    assert "invalid UTF-8" in by_line[5].message
    assert "invalid JSON" in by_line[7].message and "after recovering 1" in by_line[7].message
    assert "partial last line" in by_line[9].message
    assert all(p.file == str(path) for p in s.problems)
    assert [e.line for e in s.entries] == [2, 6, 7, 8]


def test_not_a_transcript(tmp_path):
    path = tmp_path / "segments.jsonl"
    path.write_bytes(b'{"id":"x","sessionId":"s","role":"user","content":"hi","timestamp":1}\n')
    with pytest.raises(FormatError, match="not a pi transcript") as err:
        load_transcript(path)
    assert str(path) in str(err.value)
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(FormatError, match="no JSON object"):
        load_transcript(empty)


def test_unreadable_file_names_the_file(tmp_path):
    with pytest.raises(FormatError, match="cannot read") as err:
        load_transcript(tmp_path / "missing.jsonl")
    assert "missing.jsonl" in str(err.value)


def test_read_jsonl_tail_offsets():
    data = b'{"a":1}\n{"b":2}\n{"c":'
    read = read_jsonl(data, "f", first_line=10, base_offset=100)
    assert [(o.line, o.offset, o.value) for o in read.objects] == [
        (10, 100, {"a": 1}),
        (11, 108, {"b": 2}),
    ]
    assert read.partial_tail == b'{"c":'
    assert read.problems[0].line == 12
