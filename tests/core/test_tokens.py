"""Both token estimators, with JavaScript string lengths."""

from __future__ import annotations

import json

import pytest

from core.io.jsstr import js_json_len, js_len, js_number
from core.transcript.normalize import normalize_message
from core.transcript.tokens import estimate_message, estimate_text, usage_total


def test_js_len_counts_utf16_units():
    assert js_len("") == 0
    assert js_len("abc") == 3
    assert js_len("é") == 1
    assert js_len("日本") == 2
    assert js_len("😀") == 2  # a surrogate pair
    assert js_len("a😀b𝐀") == 6


def test_estimate_text_is_ceil_len_over_3_at_least_1():
    assert estimate_text("") == 1
    assert estimate_text("ab") == 1
    assert estimate_text("abcd") == 2
    assert estimate_text("😀😀") == 2  # 4 units
    assert estimate_text("x" * 300) == 100


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"a": 1.0, "b": "é\n"}, '{"a":1,"b":"é\\n"}'),
        (
            {"path": "/a/b.py", "n": [1, 2.5, None, True]},
            '{"path":"/a/b.py","n":[1,2.5,null,true]}',
        ),
        ({"q": 'say "hi"\\', "c": "\x01"}, '{"q":"say \\"hi\\"\\\\","c":"\\u0001"}'),
        ({}, "{}"),
        ([], "[]"),
        ({"emoji": "😀"}, '{"emoji":"😀"}'),
        (
            {"big": 1e21, "small": 1e-7, "mid": 0.000001},
            '{"big":1e+21,"small":1e-7,"mid":0.000001}',
        ),
    ],
)
def test_js_json_len_matches_json_stringify(value, expected):
    # `expected` is what JSON.stringify prints; its JS length is js_len of it
    assert js_json_len(value) == js_len(expected)


def test_js_number_formatting():
    assert [js_number(x) for x in (1.0, -0.5, 1e21, 1.5e-7, 123456789.125, 2)] == [
        "1",
        "-0.5",
        "1e+21",
        "1.5e-7",
        "123456789.125",
        "2",
    ]


def test_pi_estimator_per_role():
    def est(msg):
        return estimate_message(normalize_message(msg))

    assert est({"role": "user", "content": "abcdefgh"}) == 2
    assert est({"role": "user", "content": [{"type": "text", "text": "abcde"}]}) == 2
    assert (
        est(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "abcd"},
                    {"type": "thinking", "thinking": "efgh"},
                    {"type": "toolCall", "id": "1", "name": "bash", "arguments": {"command": "ls"}},
                ],
            }
        )
        == 7
    )  # 4 + 4 + len('bash') 4 + len('{"command":"ls"}') 16 = 28 -> 7
    assert (
        est(
            {
                "role": "toolResult",
                "toolCallId": "1",
                "content": [
                    {"type": "text", "text": "x" * 7},
                    {"type": "image", "data": "", "mimeType": "image/png"},
                ],
            }
        )
        == 1202
    )  # (7 + 4800) / 4
    assert est({"role": "bashExecution", "command": "ls", "output": "a.py", "exitCode": 0}) == 2
    assert est({"role": "custom", "customType": "x", "content": "abcd", "display": True}) == 1


def test_usage_total():
    assert usage_total({"totalTokens": 10, "input": 1}) == 10
    assert usage_total({"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4}) == 10
    assert usage_total({"input": 0, "output": 0, "totalTokens": 0}) == 0
    assert usage_total(None) is None


def test_stringify_oracle_against_python_json_for_ascii():
    # For ASCII-only data without floats, JSON.stringify equals compact json.dumps.
    value = {"a": [1, 2, {"b": "c d\t"}], "e": None, "f": False}
    assert js_json_len(value) == len(json.dumps(value, separators=(",", ":")))
