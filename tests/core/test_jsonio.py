"""The one JSON module: lenient JSONL reading that accepts no more than JSON, lossless writes."""

from __future__ import annotations

import orjson

from core.io import jsonio
from core.store.knowledge import load_knowledge
from core.store.segments import load_segments
from core.transcript import context_at, load_transcript


def test_fallback_reader_rejects_nan_infinity_and_overflow(tmp_path):
    data = (
        b'{"id":"a","sessionId":"s","role":"user","content":"x","timestamp":Infinity}\n'
        b'{"id":"b","sessionId":"s","role":"user","content":"y","timestamp":NaN}\n'
        b'{"id":"c","sessionId":"s","role":"user","content":"z","timestamp":-1e400}\n'
        b'{"id":"d","sessionId":"s","role":"user","content":"ok","timestamp":1}'
        b'{"id":"e","sessionId":"s","role":"user","content":"w","timestamp":-Infinity}\n'
    )
    read = jsonio.read_jsonl(data, "segments.jsonl")
    assert [o.value["id"] for o in read.objects] == ["d"]
    messages = [p.message for p in read.problems]
    assert "Infinity is not JSON; line skipped" in messages[0]
    assert "NaN is not JSON" in messages[1]
    assert "out of range" in messages[2]
    assert "-Infinity is not JSON after recovering 1 object(s)" in messages[3]
    p = tmp_path / "segments.jsonl"
    p.write_bytes(data)
    assert [s.id for s in load_segments(p, eviction_days=0).segments] == ["d"]
    k = tmp_path / "knowledge.jsonl"
    k.write_bytes(b'{"id":"f","type":"decision","content":"x","timestamp":NaN}\n')
    log = load_knowledge(k)
    assert log.facts == {} and "NaN is not JSON" in log.problems[0].message


def test_transcript_line_with_nan_is_skipped_not_a_crash(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_bytes(
        b'{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}\n'
        b'{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2026-01-01T00:00:01Z",'
        b'"message":{"role":"user","content":"hi","timestamp":NaN}}\n'
    )
    s = load_transcript(p)
    assert context_at(s) == [] and "NaN is not JSON" in s.problems[0].message


def test_lone_surrogates_are_written_as_json_stringify_escapes(tmp_path):
    assert jsonio.dumps({"a": "x\ud83dy"}) == b'{"a":"x\\ud83dy"}'  # JSON.stringify's bytes
    assert jsonio.dumps_line(["\udc00", float("nan")]) == b'["\\udc00",null]\n'
    # a pair held as two code points is one character, as in JavaScript
    assert jsonio.dumps("\ud83d\ude00") == '"😀"'.encode()
    assert jsonio.dumps({"a": "\ud83d", 1: "é"}, pretty=True, sort_keys=True) == (
        '{\n  "1": "é",\n  "a": "\\ud83d"\n}'.encode()
    )
    # an edit of a fact whose content holds one (JS .slice() cut an emoji) keeps it
    p = tmp_path / "knowledge.jsonl"
    p.write_bytes(b'{"id":"f1","type":"decision","content":"use \\ud83d only","timestamp":1}\n')
    log = load_knowledge(p)
    log.update("f1", context="ctx")
    last = p.read_bytes().splitlines()[-1]
    assert b'"content":"use \\ud83d only"' in last
    assert orjson.loads(last.replace(b"\\ud83d", b"?"))["context"] == "ctx"
    assert load_knowledge(p).facts["f1"].content == "use \ud83d only"


def test_integers_beyond_64_bits_are_written_not_refused(tmp_path):
    # the fallback reader keeps them (a line orjson refused for another reason)
    p = tmp_path / "knowledge.jsonl"
    p.write_bytes(
        b'{"id":"f1","type":"decision","content":"x \\ud83d","timestamp":1,"n":1000000000000000000000000}\n'
    )
    log = load_knowledge(p)
    log.delete("f1")
    assert b'"n":1000000000000000000000000' in p.read_bytes().splitlines()[-1]
    assert jsonio.dumps({"t": 10**30}) == b'{"t":1000000000000000000000000000000}'


def test_gc_paused_freezes_what_it_built_only_when_asked():
    import gc

    from core.io.jsonio import freeze_after_pauses, gc_paused

    gc.unfreeze()
    try:
        with gc_paused():
            assert not gc.isenabled()
            built = [{"i": i} for i in range(1000)]
        assert gc.isenabled() and gc.get_freeze_count() == 0  # the CLI and tests: as ever
        freeze_after_pauses(True)
        with gc_paused():
            built = [{"i": i} for i in range(1000)]
        # Kept out of later collections: walking them at once held the GIL ~70 ms.
        assert gc.isenabled() and gc.get_freeze_count() >= len(built)
    finally:
        freeze_after_pauses(False)
        gc.unfreeze()
