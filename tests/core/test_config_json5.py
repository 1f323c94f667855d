"""openclaw.json through pyjson5: same values as before, errors with line and column."""

from __future__ import annotations

import math
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import json5
import pytest

from bench.bench_config import make_config
from core.io.problems import FormatError
from core.openclaw.config import (
    MemoryContextConfig,
    load_openclaw_config,
    parse_openclaw_config,
)
from core.openclaw.config_json5 import MAX_DEPTH, ConfigSyntaxError
from tests.conftest import ROOT

if TYPE_CHECKING:
    from pathlib import Path

FEATURES = [
    "// line comment\n{a: 1, /* block */ b: [1, 2,], }",
    "{'single': 'quoted', \"double\": \"q\", $id: 1, _x: 2, ünïcode: 3}",
    "{hex: 0x1F, HEX: 0XFF, neg: -0x10, plus: +1, lead: .5, trail: 5., exp: 1.5e3, E: 2E-2}",
    "{inf: Infinity, ninf: -Infinity, pinf: +Infinity, nan: NaN, nnan: -NaN}",
    "{multi: 'one \\\ntwo', esc: '\\x41\\u00e9\\t\\'\\\"\\0', emoji: '😀'}",
    '{dup: 1, dup: 2, "nested": {"deep": [{"x": [null, true, false]}]}}',
    "{big: 123456789012345678901234567890, tiny: 1e-400, zero: -0, negz: -0.0}",
    "\ufeff{bom: true}",
    "{\r\n  crlf: 'yes',\r\n}\r\n",
    "{ls: 1,\u2028ps: 2\u2029}",
]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("text", FEATURES)
def test_json5_features_give_the_values_json5_gave(text: str, tmp_path: Path) -> None:
    expected = json5.loads(text.removeprefix("\ufeff"))
    assert _same(parse_openclaw_config(text).raw, expected)
    path = tmp_path / "openclaw.json"
    path.write_text(text, encoding="utf-8", newline="")
    assert _same(load_openclaw_config(path).raw, expected)  # the bytes path


def test_surrogate_pair_escapes_make_one_character() -> None:
    # As JavaScript reads them (json5 kept two lone surrogates).
    assert parse_openclaw_config("{e: '\\ud83d\\ude00'}").raw == {"e": "😀"}


def test_a_generated_large_config_matches_json5(tmp_path: Path) -> None:
    text = make_config(150_000)
    path = tmp_path / "openclaw.json"
    path.write_text(text, encoding="utf-8")
    cfg = load_openclaw_config(path)
    assert cfg.problems == ()
    assert _same(cfg.raw, json5.loads(text))
    assert len(cfg.models) >= 200 and cfg.context_tokens == 200000


# --- syntax errors: file, line and column -------------------------------------------

ERROR_AT_7_12 = """\
{
  agents: {
    defaults: {
      contextTokens: 200000,
      memoryContext: {
        enabled: true,
        hardCap: 4000 5000,
      },
    },
  },
}
"""


def test_syntax_error_names_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "openclaw.json"
    path.write_text(ERROR_AT_7_12, encoding="utf-8")
    with pytest.raises(ConfigSyntaxError) as info:
        load_openclaw_config(path)
    err = info.value
    assert (err.file, err.line, err.column) == (str(path), 7, 23)
    assert str(err) == (
        f"{path}:7: invalid JSON5 at line 7, column 23: expected ',' or '}}', found '5'"
    )


@pytest.mark.parametrize(
    ("text", "line", "column", "needle"),
    [
        ("{\n  a: 1,\n  b: @,\n}", 3, 6, "expected a value, found '@'"),
        ('{\n  "a" 1\n}', 2, 7, "expected ':', found '1'"),
        ("{\n  a: [1,, 2],\n}", 2, 9, "unexpected ','"),
        ("{\n  a: tru,\n}", 2, 6, "unknown word 'tru'"),
        ("{\n  a: -,\n}", 2, 6, "invalid number '-'"),
        ("{a: 1}\n  // done\n  extra", 3, 3, "unexpected 'e' after the end of the document"),
        ("{\n  a: 'never closed\n}", 2, 6, "the string that starts here is never closed"),
        ("{\n  a: 1, /* open", 2, 10, "the comment that starts here is never closed"),
        ("{\n  list: [\n    1,\n", 2, 9, "the array that starts here is never closed"),
        ("{\n  a: 1,\n", 1, 1, "the object that starts here is never closed (the file ends"),
        ("", 1, 1, "the file is empty or only comments"),
        ("// nothing\n", 1, 1, "the file is empty or only comments"),
        ("{\n  'é😀': 1 2}", 2, 11, "expected ',' or '}', found '2'"),
        ("{\n  1: 2}", 2, 3, "expected a key, found '1'"),
        ("{\n  a: Infinit}", 2, 6, "unknown word 'Infinit'"),
        ('{\n  a: "\\udc00"}', 2, 6, "escape must be half of a surrogate pair"),
    ],
)
def test_syntax_errors_are_placed(text: str, line: int, column: int, needle: str) -> None:
    with pytest.raises(ConfigSyntaxError) as info:
        parse_openclaw_config(text, "oc.json")
    err = info.value
    assert (err.line, err.column) == (line, column), str(err)
    assert needle in err.detail
    assert str(err).startswith(f"oc.json:{line}: invalid JSON5 at line {line}, column {column}: ")


def test_the_bytes_path_gives_columns_in_characters(tmp_path: Path) -> None:
    path = tmp_path / "openclaw.json"
    path.write_text("\ufeff{\n  'é😀': 1 2}", encoding="utf-8")
    with pytest.raises(ConfigSyntaxError) as info:
        load_openclaw_config(path)
    assert (info.value.line, info.value.column) == (2, 11)


def test_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "openclaw.json"
    path.write_bytes(b'{\n  a: 1,\n  b: "\xff",\n}')
    with pytest.raises(FormatError) as info:
        load_openclaw_config(path)
    assert info.value.line == 3 and "invalid UTF-8 at byte 17" in str(info.value)


def test_a_folder_or_fifo_is_not_read(tmp_path: Path) -> None:
    folder = tmp_path / "openclaw.json"
    folder.mkdir()
    with pytest.raises(FormatError, match="not a regular file"):
        load_openclaw_config(folder)
    if hasattr(__import__("os"), "mkfifo"):
        import os

        fifo = tmp_path / "fifo.json"
        os.mkfifo(fifo)
        with pytest.raises(FormatError, match="not a regular file"):
            load_openclaw_config(fifo)  # would block forever if opened


# --- numbers no double holds -------------------------------------------------------


def test_1e400_in_a_checked_field_is_a_problem_and_the_default_is_used() -> None:
    text = "{\n  agents: {\n    defaults: {\n      memoryContext: { hardCapTokens: 1e400 },\n"
    text += "    },\n  },\n}\n"
    cfg = parse_openclaw_config(text, "oc.json")
    assert cfg.memory_context == MemoryContextConfig()
    assert [(p.line, p.severity, p.message) for p in cfg.problems] == [
        (4, "warning", "number 1e400 at column 39 is out of range; read as Infinity"),
        (
            4,
            "error",
            "agents.defaults.memoryContext.hardCapTokens: must be an integer >= 1, got inf",
        ),
    ]


def test_5000_digits_in_context_tokens() -> None:
    text = "{agents: {defaults: {\n  contextTokens: " + "9" * 5000 + ",\n}}}"
    cfg = parse_openclaw_config(text, "oc.json")
    assert cfg.context_tokens is None
    warning, error = cfg.problems
    assert warning.line == 2 and "(5000 digits) at column 18 is out of range" in warning.message
    assert error.line == 2
    assert error.message == "agents.defaults.contextTokens: must be an integer >= 1, got inf"


@pytest.mark.parametrize(
    ("literal", "shown"),
    [
        ("9" * 400, "an integer of 400 digits (out of range)"),
        ("0x" + "F" * 5000, "an integer of about 6021 digits (out of range)"),
        ("-" + "9" * 400, "a negative integer of 400 digits (out of range)"),
        ("1e300", "1e+300 (out of range)"),
        ("9007199254740992", "9007199254740992 (out of range)"),
        ("-Infinity", "-inf"),
        ("NaN", "nan"),
    ],
)
def test_absurd_numbers_in_checked_fields(literal: str, shown: str) -> None:
    text = f"{{agents: {{defaults: {{memoryContext: {{maxSegments: {literal}}}}}}}}}"
    cfg = parse_openclaw_config(text)
    assert [p.message for p in cfg.errors] == [
        f"agents.defaults.memoryContext.maxSegments: must be an integer >= 1, got {shown}"
    ]
    assert cfg.memory_context.max_segments == 20000


def test_huge_model_sizes_are_warnings() -> None:
    text = "{models: {providers: {p: {models: [{id: 'm', contextWindow: 1e999}]}}}}"
    cfg = parse_openclaw_config(text)
    assert cfg.errors == ()
    assert [p.severity for p in cfg.problems] == ["warning", "warning"]
    assert cfg.context_window_for("p/m") == (200000, "default")


def test_out_of_range_numbers_elsewhere_read_as_infinity_untouched_in_strings() -> None:
    text = "{\n  x: 1e400, y: -1e999,\n  s: '1e400', /* 1e400 */ k1e400: 1e308,\n}"
    cfg = parse_openclaw_config(text, "oc.json")
    assert cfg.raw == {"x": math.inf, "y": -math.inf, "s": "1e400", "k1e400": 1e308}
    assert [(p.line, p.severity) for p in cfg.problems] == [(2, "warning"), (2, "warning")]
    assert "number -1e999 at column 16" in cfg.problems[1].message


def test_a_syntax_error_after_a_huge_number_is_placed_in_the_original_text() -> None:
    text = "{\n  a: " + "1" * 5000 + ",\n  b: 1e400, c: @,\n}"
    with pytest.raises(ConfigSyntaxError) as info:
        parse_openclaw_config(text)
    assert (info.value.line, info.value.column) == (3, 16)


# --- nesting -------------------------------------------------------------------------


def test_nesting_deeper_than_the_limit_is_a_placed_error() -> None:
    text = "{\n  a: " + "[" * (MAX_DEPTH + 50)
    with pytest.raises(ConfigSyntaxError) as info:
        parse_openclaw_config(text, "oc.json")
    assert (info.value.line, info.value.column) == (2, MAX_DEPTH + 5)  # the object is level 1
    assert "nested too deeply" in info.value.detail
    ok = "{a: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}"
    assert parse_openclaw_config(ok).problems == ()


def test_100000_levels_never_crash(tmp_path: Path) -> None:
    # In a child process: a parser that recursed in C would take pytest down.
    for i, opener in enumerate(("[", "{a:")):
        path = tmp_path / f"deep{i}.json"
        path.write_text("{\n deep: " + opener * 100_000, encoding="utf-8")
        code = (
            "import sys\n"
            "from core.openclaw.config import load_openclaw_config\n"
            "from core.openclaw.config_json5 import ConfigSyntaxError\n"
            "try:\n"
            f"    load_openclaw_config({str(path)!r})\n"
            "except ConfigSyntaxError as exc:\n"
            "    print(exc)\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"{path}:2: invalid JSON5 at line 2, column ")
        assert "nested too deeply" in done.stdout


def test_a_deep_caller_stack_still_gives_a_placed_error() -> None:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(150)
    try:
        with pytest.raises(FormatError) as info:
            parse_openclaw_config("{a: " + "[" * 190 + "]" * 190 + "}", "oc.json")
    finally:
        sys.setrecursionlimit(limit)
    assert info.value.line == 1 and "nested too deeply" in str(info.value)


# --- many faults: lines stay right ----------------------------------------------------


def test_many_bad_model_entries_each_get_their_providers_line() -> None:
    providers = ",\n".join(
        f"  p{i}: {{models: [{{id: 'm', contextWindow: 'x'}}]}}" for i in range(3000)
    )
    cfg = parse_openclaw_config("{models: {providers: {\n" + providers + "\n}}}")
    assert len(cfg.problems) == 3000
    assert [p.line for p in cfg.problems] == list(range(2, 3002))


def test_fault_lines_with_quotes_longer_names_and_duplicates() -> None:
    text = """{
  agents: {
    defaults: {
      memoryContext: {
        myhardCapTokens: 1,
        "hardCapTokens": 0,
        'maxSegments' : -1,
        enabled: 1,
        enabled: 2,
      },
    },
  },
}"""
    cfg = parse_openclaw_config(text)
    assert [(p.line, p.message.split(":")[0]) for p in cfg.problems] == [
        (5, "agents.defaults.memoryContext.myhardCapTokens"),
        (6, "agents.defaults.memoryContext.hardCapTokens"),
        (7, "agents.defaults.memoryContext.maxSegments"),
        (8, "agents.defaults.memoryContext.enabled"),
    ]


def test_twenty_thousand_unknown_keys_are_placed_in_linear_time() -> None:
    # Searching each key from its section's start took minutes here; now < 1 s.
    keys = ",\n".join(f"      unknownKey{i}: {i}" for i in range(20_000))
    cfg = parse_openclaw_config("{agents: {defaults: {memoryContext: {\n" + keys + "\n}}}}")
    assert [p.line for p in cfg.problems] == list(range(2, 20_002))


def test_a_top_level_that_is_not_an_object_names_its_line() -> None:
    with pytest.raises(FormatError) as info:
        parse_openclaw_config("// a list?\n\n  [1, 2]\n", "oc.json")
    assert str(info.value) == "oc.json:3: the top level must be an object, got an array at column 3"
