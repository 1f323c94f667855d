"""The oracle tier: OpenClaw's own compaction planning decides what memlens plans.

``openclaw_plan.mjs`` imports OpenClaw's bundled ``compaction-planning-*.mjs``
(found at run time, its export aliases read from its ``export {...}`` line) and
runs, on the messages memlens would summarise, what the compaction safeguard
(``dist/builtin-openclaw-*.mjs``, after ``buildHistoryPrunePlan({``) runs:
``buildHistoryPrunePlan`` (the trigger ``newContentTokens > maxHistoryTokens`` and
``pruneHistoryForContextShare``), ``computeAdaptiveChunkRatio`` and
``buildSummaryChunks`` over the dropped messages, then the ratio, the stage split
(``buildStageSplitPlan``) and the summary chunks of what is left. memlens's
:func:`core.compaction.plan.plan_compaction` must agree field by field.

The messages are converted to pi ``AgentMessage`` objects from the raw
transcript entries, as OpenClaw's ``getMessageFromEntryForCompaction`` does.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from core.compaction.plan import (
    PlanItem,
    adaptive_chunk_ratio,
    openclaw_estimate,
    plan_compaction,
    planning_tokens,
)
from core.transcript import load_transcript
from tests.core.build import STAMP, assistant, entry, lines, user, write_file

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).with_name("openclaw_plan.mjs")


def agent_message(item: PlanItem) -> dict[str, Any]:
    """The ``AgentMessage`` OpenClaw builds from the entry of *item*."""
    raw = item.entry.raw
    kind = raw.get("type")
    if kind == "message":
        return dict(raw["message"])
    if kind == "custom_message":
        return {
            "role": "custom",
            "customType": raw.get("customType"),
            "content": raw.get("content"),
            "display": raw.get("display", True),
            "details": raw.get("details"),
            "timestamp": 0,
        }
    if kind == "branch_summary":
        return {"role": "branchSummary", "summary": raw.get("summary"), "fromId": raw.get("fromId")}
    raise AssertionError(f"no message for entry type {kind!r}")


def openclaw_plans(openclaw, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return list(openclaw.run(SCRIPT, stdin=cases))


def _names(items: list[PlanItem], base: list[PlanItem]) -> list[Any]:
    """Index in *base* of each item (by entry), or ``{"synthetic": id}``."""
    where = {id(b.entry): k for k, b in enumerate(base)}
    out: list[Any] = []
    for i in items:
        details = i.message.raw.get("details")
        if isinstance(details, dict) and details.get("openclawSyntheticMissingToolResult"):
            out.append({"synthetic": i.message.tool_call_id})
        else:
            out.append(where[id(i.entry)])
    return out


def _chunks(chunks: list[list[int]], of: list[PlanItem], base: list[PlanItem]) -> list[Any]:
    """Each chunk (indexes into *of*) as names in *base*."""
    return [_names([of[k] for k in chunk], base) for chunk in chunks]


def memlens_plan(session, **kw: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """memlens's answer, and the case to ask OpenClaw (the unpruned messages)."""
    share = kw.pop("max_history_share", 0.5)
    base = plan_compaction(session, max_history_share=1e12, **kw)  # never prunes
    plan = plan_compaction(session, max_history_share=share, **kw)
    assert base.ok and plan.ok, plan.reason
    assert base.history_dropped == [] and base.summarize and plan.tokens_before
    case = {
        "window": plan.window,
        "share": share,
        "tokensBefore": plan.tokens_before,
        "summarize": [agent_message(i) for i in base.summarize],
        "turnPrefix": [agent_message(i) for i in base.turn_prefix],
        "previousSummary": plan.previous_summary,
        # the dropped history's summary is not known before its call: memlens takes it
        # at its output budget, and so is it handed to OpenClaw
        "droppedSummary": "s" * (4 * math.floor(0.8 * plan.reserve_tokens)),
    }
    prefix = [f"p{k}" for k in range(len(plan.turn_prefix))]
    runtime = [
        i.message.raw.get("customType") == "openclaw.runtime-context" for i in base.summarize
    ]
    worker = planning_tokens(base.summarize)[1] if runtime.count(False) >= 64 else None
    mine: dict[str, Any] = {
        "perMessage": [openclaw_estimate(i.message) for i in base.summarize],
        "workerPerMessage": worker,
        "summarizableTokens": plan.summarizable_tokens,
        "newContentTokens": plan.new_content_tokens,
        "maxHistoryTokens": plan.max_history_tokens,
        "summarize": _names(plan.summarize, base.summarize),
        "ratio": plan.chunk_ratio,
        "maxChunkTokens": plan.max_chunk_tokens,
        "parts": _chunks(plan.parts, plan.summarize, base.summarize),
        "chunks": _chunks(plan.chunks, plan.summarize, base.summarize),
        "calls": plan.main_calls,
        "prefix": {
            "parts": [[prefix[k] for k in part] for part in plan.prefix_parts],
            "chunks": [[prefix[k] for k in chunk] for chunk in plan.prefix_chunks],
            "calls": plan.prefix_calls,
        },
    }
    if plan.history_dropped_chunks:
        mine["pruned"] = {
            "droppedChunks": plan.history_dropped_chunks,
            "dropped": _names(plan.history_dropped, base.summarize),
            "kept": mine["summarize"],
            "ratio": plan.history_chunk_ratio,
            "maxChunkTokens": plan.history_max_chunk_tokens,
            "parts": _chunks(plan.history_parts, plan.history_dropped, base.summarize),
            "chunks": _chunks(plan.history_chunks, plan.history_dropped, base.summarize),
            "calls": plan.history_calls,
        }
    assert plan.calls == plan.main_calls + plan.prefix_calls + plan.history_calls
    return mine, case


def compare(mine: dict[str, Any], theirs: dict[str, Any]) -> None:
    pruned = theirs.pop("pruned")
    if pruned is not None and pruned["droppedChunks"] == 0:
        pruned = None  # triggered, but nothing split: the safeguard changes nothing
    if pruned is not None:
        pruned.pop("budgetTokens")
    assert mine.pop("pruned", None) == pruned
    for key, value in theirs.items():
        assert mine[key] == value, key


# -- sessions ------------------------------------------------------------------------------
def _call(ids: list[str], text: str = "", *, stop: str = "toolUse") -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [
        {"type": "toolCall", "id": cid, "name": "read", "arguments": {"path": f"/w/{cid}.py"}}
        for cid in ids
    ]
    return {"role": "assistant", "content": content, "stopReason": stop, "timestamp": 1}


def _result(cid: str | None, chars: int, **extra: Any) -> dict[str, Any]:
    m: dict[str, Any] = {
        "role": "toolResult",
        "toolName": "read",
        "content": [{"type": "text", "text": "r" * chars}],
        "isError": False,
        "details": {"bytes": chars},
        "timestamp": 1,
        **extra,
    }
    if cid is not None:
        m["toolCallId"] = cid
    return m


def _session(tmp_path: Path, name: str, messages: list[dict[str, Any]]):
    objs, parent = [], None
    for k, m in enumerate(messages, 1):
        if m.get("type"):  # a non-message entry given whole
            objs.append({**m, "id": f"{k:08x}", "parentId": parent, "timestamp": STAMP})
        else:
            objs.append(entry(k, parent, m))
        parent = f"{k:08x}"
    path = tmp_path / f"{name}.jsonl"
    write_file(path, lines(objs))
    return load_transcript(path)


def _tool_heavy(turns: int) -> list[dict[str, Any]]:
    """Turns of calls and results with every pairing OpenClaw's repair cares about."""
    out: list[dict[str, Any]] = []
    for t in range(turns):
        out.append(user(f"turn {t}: read the files " + "please " * (50 + 37 * (t % 5))))
        a, b = f"t{t}a", f"t{t}b"
        kind = t % 7
        if kind == 0:  # two calls, results in order
            out += [_call([a, b], "reading"), _result(a, 3000), _result(b, 1200)]
        elif kind == 1:  # results in reverse order, a user nudge between
            out += [_call([a, b]), _result(b, 800), user("go on"), _result(a, 5000)]
        elif kind == 2:  # a lost result: the repair inserts a synthetic one
            out += [_call([a, b]), _result(a, 2600)]
        elif kind == 3:  # an aborted call whose result still came
            out += [_call([a], stop="aborted"), _result(a, 900)]
        elif kind == 4:  # a duplicated result and a legacy result without an id
            out += [_call([a]), _result(a, 1500), _result(a, 1500), _call([b]), _result(None, 700)]
        elif kind == 5:  # CJK text and an image in a user message
            out.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "看看这个截图 " * 90 + "𠀀𠀁"},
                        {"type": "image", "data": "AAAA" * 50, "mimeType": "image/png"},
                    ],
                    "timestamp": 1,
                }
            )
            out += [_call([a], "好的"), _result(a, 2000)]
        else:  # bash, a custom message, a branch summary, runtime context
            out.append(
                {"role": "bashExecution", "command": "ls -la", "output": "x" * 1800, "exitCode": 0}
            )
            out.append(
                {
                    "type": "custom_message",
                    "customType": "note",
                    "content": "n " * 300,
                    "display": True,
                }
            )
            out.append({"type": "branch_summary", "fromId": "00000001", "summary": "s " * 400})
            out.append(
                {
                    "type": "custom_message",
                    "customType": "openclaw.runtime-context",
                    "content": "ctx " * 500,
                    "display": False,
                }
            )
        out.append(assistant(f"done with turn {t} " + "ok " * (40 + 13 * (t % 4)), 2000 * (t + 1)))
    return out


@pytest.mark.parametrize(
    ("fixture", "at"),
    [
        ("large-session.jsonl", None),
        ("before-compaction.jsonl", "#358"),
        ("before-compaction.jsonl", "#627"),
    ],
)
def test_tokens_before_is_openclaws(openclaw, pi_package, fixtures_dir, fixture, at):
    """The trigger's tokensBefore: prepareCompaction's estimateContextTokens of the context."""
    path = fixtures_dir / fixture
    args = ["--tokens-before", str(pi_package), str(path), *([at] if at else [])]
    theirs = openclaw.run(SCRIPT, *args)
    plan = plan_compaction(load_transcript(path), at=at)
    assert plan.tokens_before == theirs["tokens"] and plan.tokens_before_measured


# -- every plan below: memlens's, and OpenClaw's in one Node run ----------------------------
# (each run loads OpenClaw's bundle, about 1 s of CPU: every test's cases go in the same run;
# openclaw_plan.mjs answers each case on its own)

REAL_RUNS = [
    {"window": w, "keep_recent_tokens": k, "max_history_share": share}
    for w, k, share in [
        (200_000, 20_000, 0.5),
        (8_000, 2_000, 0.5),
        (20_000, 2_000, 0.5),
        (60_000, 2_000, 0.5),
        (128_000, 8_000, 0.3),
        (100_000, 20_000, 0.8),
    ]
]
TOOL_RUNS = [
    {"window": w, "keep_recent_tokens": k, "max_history_share": share}
    for w, k, share in [
        (4_000, 300, 0.5),
        (6_000, 500, 0.5),
        (9_000, 1_000, 0.4),
        (12_000, 700, 0.6),
        (16_000, 2_000, 0.5),
        (30_000, 1_500, 0.25),
        (200_000, 20_000, 0.5),
    ]
]
WORKER_VIEWS: list[tuple[int, dict[str, Any]]] = [
    (0, {"window": 200_000, "keep_recent_tokens": 5_000}),
    (0, {"window": 1_000_000, "keep_recent_tokens": 5_000}),
    (100_000, {"window": 120_000, "keep_recent_tokens": 60_000, "max_history_share": 0.3}),
    (150_000, {"window": 200_000, "keep_recent_tokens": 20_000}),
]
Runs = list[tuple[Any, dict[str, Any]]]


def _groups(fixtures: Path, tmp: Path) -> dict[str, tuple[Any, Runs]]:
    """Each test's session and runs (a label, memlens's keyword arguments), by name."""
    groups: dict[str, tuple[Any, Runs]] = {
        "large": (load_transcript(fixtures / "large-session.jsonl"), [(None, {})])
    }
    for fixture, at in (("large-session.jsonl", [None]),
                        ("before-compaction.jsonl", ["#358", "#627", None])):  # fmt: skip
        runs: Runs = [((where, kw), {"at": where, **kw}) for where in at for kw in REAL_RUNS]
        groups[fixture] = (load_transcript(fixtures / fixture), runs)
    for turns in (14, 40):
        tools = _session(tmp, f"tools{turns}", _tool_heavy(turns))
        ok = [kw for kw in TOOL_RUNS if plan_compaction(tools, **kw).ok]
        groups[f"tools{turns}"] = (tools, [(kw, kw) for kw in ok])
    msgs: list[dict[str, Any]] = []
    for k in range(6):
        msgs.append(user("u" * 60_000) if k % 2 == 0 else assistant("a" * 60_000))
    msgs.append(user("last"))
    groups["adaptive"] = (
        _session(tmp, "big", msgs),
        [(None, {"window": 60_000, "keep_recent_tokens": 10})],
    )
    for n, (usage, kw) in enumerate(WORKER_VIEWS):
        worker = [m for k in range(16) for m in _big(k, usage)]
        groups[f"worker{n}"] = (_session(tmp, f"big-worker{n}", worker), [(kw, kw)])
    return groups


@pytest.fixture(scope="module")
def planned(
    openclaw: Any, fixtures_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, list[tuple[Any, dict[str, Any], dict[str, Any], dict[str, Any]]]]:
    """By name, each run's label, memlens's plan, the case and OpenClaw's plan of it."""
    groups = _groups(fixtures_dir, tmp_path_factory.mktemp("plans"))
    mine = {
        name: [(label, *memlens_plan(session, **kw)) for label, kw in runs]
        for name, (session, runs) in groups.items()
    }
    answers = iter(openclaw_plans(openclaw, [c for runs in mine.values() for *_, c in runs]))
    out = {name: [(*run, next(answers)) for run in runs] for name, runs in mine.items()}
    assert next(answers, None) is None
    return out


def test_large_real_session_drops_nothing(planned):
    """At the agent's settings OpenClaw prunes nothing of this 1,000-message session."""
    [(_, mine, case, theirs)] = planned["large"]
    assert theirs["pruned"] is None and "pruned" not in mine
    assert len(case["summarize"]) > 500
    # the worker's projection rounds texts past its budget apart: not the direct estimate
    assert theirs["workerPerMessage"] != theirs["perMessage"]
    compare(mine, theirs)


@pytest.mark.parametrize("fixture", ["large-session.jsonl", "before-compaction.jsonl"])
def test_real_sessions_field_by_field(planned, fixture):
    runs = planned[fixture]
    assert any(t["pruned"] and t["pruned"]["droppedChunks"] for *_, t in runs)
    for run, mine, _case, theirs in runs:
        try:
            compare(mine, theirs)
        except AssertionError as exc:
            raise AssertionError(f"{fixture} {run}: {exc}") from exc


@pytest.mark.parametrize("turns", [14, 40])
def test_generated_sessions_with_tool_pairs_around_the_cut(planned, turns):
    runs = planned[f"tools{turns}"]
    pruned = [t for *_, t in runs if t["pruned"] and t["pruned"]["droppedChunks"]]
    assert pruned, "no run triggered pruning"
    if turns == 40:  # repair made up a result, and dropped results along the way
        assert any(isinstance(x, dict) for t in pruned for x in t["pruned"]["kept"])
    for kw, mine, _case, theirs in runs:
        try:
            compare(mine, theirs)
        except AssertionError as exc:
            raise AssertionError(f"{kw}: {exc}") from exc


def test_adaptive_ratio_matches_on_large_messages(planned):
    """The ratio's lower clamp is the literal 0.25 reduction, as in OpenClaw."""
    [(_, mine, _case, theirs)] = planned["adaptive"]
    compare(mine, theirs)
    assert mine["ratio"] == adaptive_chunk_ratio([15_000] * 6, 60_000) == 0.15000000000000002


def _big(k: int, usage: int = 0) -> list[dict[str, Any]]:
    """Messages past the worker projection's limits (32,768 chars a text, 262,144 a list)."""
    thinking = {"type": "thinking", "thinking": "思考 " * 9000}
    calls = {
        "type": "toolCall",
        "id": f"w{k}",
        "name": "write",
        "arguments": {"path": f"/w/{k}.py", "content": "x = 1\n" * 7000 + "写入"},
    }
    return [
        user(f"task {k} " + "describe the change in detail " * (1400 if k % 3 == 0 else 40)),
        {
            "role": "assistant",
            "content": [thinking, {"type": "text", "text": "plan"}, calls],
            "stopReason": "toolUse",
            "timestamp": 1,
        },
        _result(f"w{k}", 36_000 if k % 2 else 900),
        {"role": "bashExecution", "command": "pytest -q", "output": "." * 34_000, "exitCode": 0},
        assistant(f"done {k} " + "ok " * 30, usage * (k + 1)),
    ]


@pytest.mark.parametrize(("usage", "view"), [(u, n) for n, (u, _) in enumerate(WORKER_VIEWS)])
def test_the_planning_worker_view_on_large_messages(planned, usage, view):
    [(_, mine, _case, theirs)] = planned[f"worker{view}"]
    assert theirs["workerPerMessage"] and theirs["workerPerMessage"] != theirs["perMessage"]
    assert bool(usage) == bool(theirs["pruned"] and theirs["pruned"]["droppedChunks"])
    compare(mine, theirs)
