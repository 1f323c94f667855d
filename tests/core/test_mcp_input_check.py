"""memlens's check of a call's arguments answers as the SDK's ``jsonschema.validate``.

The server registers its tools with the SDK's validation off and checks the
arguments itself: those memlens's own check passes go through (it is stricter than the
schemas), the others to one validator per tool (the SDK checks the schema against its
metaschema on every call): for any arguments, the same message, or none.
"""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from core.mcp.schemas import INPUT_SCHEMAS as SCHEMAS
from core.mcp.schemas import argument_error
from core.mcp.server import InputCheck

CHECK = InputCheck(SCHEMAS)

_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False, width=32),
    st.text(max_size=3), st.sampled_from(["", "tea", "memory", "sessions", "all", "seed"]),
)  # fmt: skip
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=2), max_leaves=3)


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    name = draw(st.sampled_from(sorted(SCHEMAS)))
    props = sorted(SCHEMAS[name]["properties"])
    keys = draw(st.lists(st.sampled_from([*props, "bogus", "Query"]), max_size=4, unique=True))
    return name, {k: draw(_values) for k in keys}


def _sdk(name: str, arguments: dict[str, Any]) -> str | None:
    """What the SDK's handler answers (``mcp.server.lowlevel.server``), or None."""
    try:
        jsonschema.validate(instance=arguments, schema=SCHEMAS[name])
    except jsonschema.ValidationError as e:
        return f"Input validation error: {e.message}"
    return None


@settings(max_examples=400, deadline=None)
@given(calls())
def test_the_same_answer_as_the_sdks_validation(call: tuple[str, dict[str, Any]]) -> None:
    name, arguments = call
    sdk = _sdk(name, arguments)
    assert CHECK.error(name, arguments) == sdk
    if argument_error(name, arguments) is None:  # the fast path: stricter than the schema
        assert sdk is None


def test_each_schema_is_checked_once_and_unknown_tools_pass_through() -> None:
    check = InputCheck(SCHEMAS)
    assert check.error("memory_search", {"query": "tea"}) is None
    assert check.validators == {}  # arguments that pass need no validator
    missing = "Input validation error: 'query' is a required property"
    assert check.error("memory_search", {}) == missing
    kept = check.validators["memory_search"]  # its schema checked against the metaschema
    for _ in range(3):
        assert check.error("memory_search", {"query": "tea"}) is None
        assert check.error("memory_search", {}) == missing
    assert check.validators == {"memory_search": kept}  # the same validator, not made again
    assert check.error("forget_everything", {"x": 1}) is None  # the call itself says so
