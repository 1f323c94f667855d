"""JavaScript semantics the agent's numbers depend on (values checked against Node)."""

from __future__ import annotations

import hashlib

from core.io.jsstr import js_json_len, js_len, js_number, js_round, js_slice, js_trim, js_utf8
from core.store.knowledge import content_hash
from core.store.segments import dedup_key


def test_math_round_rounds_halves_up():
    # Math.round(2.5) = 3, Math.round(-2.5) = -2; Python's round gives 2 and -2
    assert [js_round(x) for x in (2.5, 3.5, -2.5, -0.5, 1.4999, 0.49999999999999994)] == [
        3,
        4,
        -2,
        0,
        1,
        0,
    ]


def test_number_to_string_of_small_floats():
    # String(x) in Node
    cases = {
        1e-5: "0.00001",
        1.234567890123e-5: "0.00001234567890123",
        -3.5e-6: "-0.0000035",
        1e-6: "0.000001",
        1e-7: "1e-7",
        1.5e-7: "1.5e-7",
        5e-324: "5e-324",
        1e21: "1e+21",
        123.456: "123.456",
    }
    assert {x: js_number(x) for x in cases} == cases
    assert js_json_len({"t": 1.234567890123e-5}) == len('{"t":0.00001234567890123}')


def test_string_trim_is_javascripts():
    # trim() strips U+FEFF and Zs, not U+0085 or U+001C..U+001F (Python's strip does)
    assert js_trim("\ufeff\u3000 x \u00a0\u2028") == "x"
    assert js_trim("\x85x\x1c") == "\x85x\x1c"
    # so the knowledge dedup hash is the agent's (Node: sha256 of trim().toLowerCase())
    assert content_hash("\ufeffUse X \x85") == "0b2234c8a991cd17"
    assert (
        content_hash("\ufeffUse X \x85") == hashlib.sha256("use x \x85".encode()).hexdigest()[:16]
    )
    assert content_hash("\x85Use X") != content_hash("Use X")


def test_node_utf8_of_lone_surrogates():
    # Node hashes a lone surrogate as U+FFFD; a pair held as two code points as one character
    assert js_utf8("a\ud83d") == b"a\xef\xbf\xbd"
    assert js_utf8("\ud83d\ude00") == "😀".encode()
    assert dedup_key("s", "user", "a\ud83d") == "s:user:51d277510ba4bf97"  # Node's digest


def test_slice_counts_utf16_units_and_keeps_pairs_whole():
    assert js_slice("a😀b", 2) == "a" and js_slice("a😀b", 3) == "a😀"
    assert js_len(js_slice("😀" * 10, 7)) == 6
    assert js_slice("abc", 0) == "" and js_slice("abc", 10) == "abc"


def test_a_lone_surrogate_is_escaped_as_json_stringify_does():
    from core.io.jsstr import js_json_len

    assert js_json_len("a\ud83db") == 2 + 2 + 6  # "a\\ud83db"
    assert js_json_len("a\udc00") == 2 + 1 + 6
    assert js_json_len("\ud83d\ude00") == 2 + 2  # a pair stays as it is
    assert js_json_len("😀") == 4
