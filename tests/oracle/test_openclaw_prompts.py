"""The oracle tier: OpenClaw's own summary instruction builders against memlens's.

``tests/oracle/openclaw_prompts.mjs`` evaluates the source text of OpenClaw
2026.9.6's ``buildCompactionStructureInstructions`` and
``buildCompactionSummarizationInstructions`` (dist/builtin-openclaw-*.mjs; they are
not exported, so their declarations are read from the bundle, found by content) with
its exported ``wrapUntrustedPromptDataBlock`` and ``resolveCompactionInstructions``.
For every combination of identifier policy, custom instructions, ``/compact`` focus
and latest request, memlens's :class:`~core.compaction.sections.SummaryInstructions`
must produce the same text, byte for byte.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import orjson
import pytest

from core.compaction.sections import (
    SummaryInstructions,
    exact_identifiers_instruction,
    identifier_preservation,
)

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).with_name("openclaw_prompts.mjs")

POLICIES = [None, "strict", "off", "custom"]
CUSTOM = [
    None,
    "",
    "   ",
    "Keep the deploy checklist.",
    "  two\r\nlines <b>bold</b> & \u0007bell\u200b\u2028 ",
    "ünïcødé 😀 " * 90,  # past 800 code points, astral characters at the cut
]
IDENTIFIER_INSTRUCTIONS = [None, "", "Keep ticket ids like ABC-123 <verbatim>."]
FOCUS = [None, "", "Focus on the migration"]
LATEST = [None, "Finish the release notes <v2> please", "x" * 4100]


def _cases() -> list[dict[str, str | None]]:
    cases = []
    for policy, custom, ident in itertools.product(POLICIES, CUSTOM, IDENTIFIER_INSTRUCTIONS):
        cases.append(
            {
                "identifierPolicy": policy,
                "customInstructions": custom,
                "identifierInstructions": ident,
            }
        )
    for focus, latest, custom in itertools.product(FOCUS, LATEST, CUSTOM[:4]):
        cases.append({"focus": focus, "latestRequest": latest, "customInstructions": custom})
    return cases


def _memlens(case: dict[str, str | None]) -> dict[str, str | None]:
    s = SummaryInstructions(
        custom_instructions=case.get("customInstructions"),
        identifier_policy=case.get("identifierPolicy"),  # type: ignore[arg-type]
        identifier_instructions=case.get("identifierInstructions"),
        focus=case.get("focus"),
        latest_request=case.get("latestRequest"),
    )
    return {
        "resolved": s.resolved,
        "structured": s.structured,
        "summaryFocus": s.focus_for(""),
        "summaryTail": s.summary_tail(),
        "mergeTail": s.merge_tail(),
        "turnPrefixTail": s.turn_prefix_tail(),
        "exactIdentifiers": exact_identifiers_instruction(
            s.identifier_policy, s.identifier_instructions
        ),
        "identifierPreservation": identifier_preservation(
            s.identifier_policy, s.identifier_instructions
        ),
    }


def test_memlens_builds_the_agents_summary_instructions(openclaw, tmp_path):
    cases = _cases()
    path = tmp_path / "cases.json"
    path.write_bytes(orjson.dumps(cases))
    theirs = openclaw.run(SCRIPT, str(path), timeout=180)
    assert len(theirs) == len(cases)
    for case, agent in zip(cases, theirs, strict=True):
        assert _memlens(case) == agent, case


def test_the_policy_texts_differ_as_the_agent_says(openclaw):
    # The cases above would pass on a constant; prove the policies really shape the text.
    strict = SummaryInstructions(identifier_policy="strict").summary_tail()
    off = SummaryInstructions(identifier_policy="off").summary_tail()
    assert "Additional focus: Preserve all opaque identifiers exactly as written" in strict
    assert "Additional focus:" not in off
    assert "include identifiers only when needed for continuity" in off
