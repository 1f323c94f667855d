"""A model's JSON answer: trailing commas and cut objects, read as JSON reads strings."""

from __future__ import annotations

from core.io.json_answer import answer_body, complete_objects, without_trailing_commas


def test_trailing_commas_go_outside_strings_only() -> None:
    text = '{"a": ",]", "b": "say \\",}\\"", "c": [1, 2, ], "d": "\\\\",}'
    assert without_trailing_commas(text) == (
        '{"a": ",]", "b": "say \\",}\\"", "c": [1, 2 ], "d": "\\\\"}'
    )
    assert answer_body('Here:\n```json\n{"x": [1,],}\n```\nbye').strip() == '{"x": [1]}'


def test_complete_objects_of_a_cut_answer() -> None:
    text = '{"facts": [{"a": "}{", "b": 1}, {"c": "\\"}"}, {"d": "cut'
    assert complete_objects(text) == [{"a": "}{", "b": 1}, {"c": '"}'}]
