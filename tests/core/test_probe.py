"""Probe questions (issue 20 #2): made by rule from the audit, answered from the summary, graded.

A built session whose items are known; the questions it gives (every category, the
same each time, capped and spread); grades of right, rephrased, unknown and wrong
answers; lenient reading of the model's answer; ``memlens audit --probe`` against a
real HTTP server on 127.0.0.1 that answers, fails (500), hangs past the time limit
or talks nonsense (exit 1, a clear reason, no file touched); the audit without a
model unchanged.
"""

from __future__ import annotations

from functools import partial

import orjson
import pytest

from core.cli.main import run_cli
from core.compaction.audit import AuditItem, audit_compaction
from core.compaction.probe import (
    ProbeError,
    grade,
    parse_answers,
    probe_summary,
    run_probes,
)
from core.compaction.probe_questions import PROBE_CATEGORIES, Conversation, Probe, generate
from core.llm import OpenAICompatibleClient
from core.llm import http as llm_http
from core.llm.retry import RetryPolicy
from core.transcript import load_transcript
from core.transcript.normalize import normalize_message
from tests.llm_server import Reply

from .build import STAMP, assistant, lines, user, write_file

SECRET = "sk-ant-api03-" + "q" * 40
SUMMARY = (
    "## Decisions\n- keep the YAML loader, parse dates as UTC strings\n"
    "## Files\n- src/app/loader.py (modified)\n## Errors\nKeyError: 'model'\n"
)


def _call(text, name, call_id, args):
    content = [{"type": "text", "text": text}] if text else []
    content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
    return {"role": "assistant", "content": content, "stopReason": "toolUse"}


def _result(call_id, name, text, *, error=False):
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": error,
    }


def session_objects():
    """Messages with an item of every kind, a compaction summarising them, one kept turn."""
    msgs = [
        user(
            "Please fix the crash in the loader; the traceback says `KeyError: 'model'` "
            f"every single time. Remember to bump the release to v1.2.3 later. key={SECRET}"
        ),
        _call("Reading the loader first.", "read", "r1", {"path": "src/app/loader.py"}),
        _result("r1", "read", "def load(path):\n    return parse(path)['model']\n"),
        _call(
            "We decided to keep the YAML loader and parse dates as UTC strings, because "
            "timezones broke the nightly import. The helper `parse_dates()` handles it.",
            "edit",
            "w1",
            {"path": "src/app/loader.py", "newText": "def parse_dates(rows):\n    pass\n"},
        ),
        _result("w1", "edit", "Edited src/app/loader.py"),
        _call("", "write", "w2", {"path": "src/app/schema.py", "content": "class RowSchema:\n"}),
        _result("w2", "write", "Wrote src/app/schema.py"),
        _call(
            "TODO: document the nightly import retry policy in the runbook.",
            "bash",
            "b1",
            {"command": "pytest tests/test_loader.py -q"},
        ),
        _result("b1", "bash", "AssertionError: expected 3 rows, got 2", error=True),
        user("Thanks. Then look at the exporter too."),
        assistant("Looking at the exporter now."),
    ]
    objs = []
    parent = None
    for i, m in enumerate(msgs, 1):
        objs.append(
            {
                "type": "message",
                "id": f"e{i:07d}",
                "parentId": parent,
                "timestamp": STAMP,
                "message": m,
            }
        )
        parent = objs[-1]["id"]
    objs.append(
        {
            "type": "compaction",
            "id": "c0000001",
            "parentId": parent,
            "timestamp": STAMP,
            "summary": SUMMARY,
            "firstKeptEntryId": "e0000010",
            "tokensBefore": 5000,
        }
    )
    return objs


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    path = tmp_path_factory.mktemp("probe") / "s.jsonl"
    write_file(path, lines(session_objects()))
    return path


@pytest.fixture(scope="module")
def audited(built):
    session = load_transcript(built)
    messages = [(e.id, e.message) for e in session.entries if e.message is not None]
    return audit_compaction(session), messages


@pytest.fixture(scope="module")
def probes(audited):
    audit, messages = audited
    return generate(audit.items, Conversation(messages))


@pytest.fixture(autouse=True)
def quick_back_off(monkeypatch):
    """Retries as many as ever, back-offs of milliseconds (the HTTP is still real)."""
    monkeypatch.setattr(llm_http, "RetryPolicy", partial(RetryPolicy, base=0.01, cap=0.02))


def _answers(texts):
    content = orjson.dumps({"answers": [{"n": n, "answer": t} for n, t in enumerate(texts, 1)]})
    return Reply(
        200, {"choices": [{"message": {"content": content.decode()}, "finish_reason": "stop"}]}
    )


def _by_question(probes):
    return {p.question: p for p in probes}


# -- the questions -----------------------------------------------------------------------------


def test_questions_cover_every_category_from_the_audit_items(audited, probes):
    audit, messages = audited
    assert {p.category for p in probes} == set(PROBE_CATEGORIES)
    items = {(i.text, i.source) for i in audit.items}
    assert all((p.expected, p.source) in items for p in probes)  # each asks for an item
    q = _by_question(probes)
    assert q["What error did `pytest tests/test_loader.py -q` fail with?"].expected == (
        "AssertionError: expected 3 rows, got 2"
    )
    assert q["Which file holds `RowSchema`?"].expected == "src/app/schema.py"
    assert q["Which file did the agent modify last?"].expected == "src/app/schema.py"
    decision = next(p for p in probes if p.category == "decision")
    assert decision.expected.startswith("We decided to keep the YAML loader")
    cloze = next(p for p in probes if p.expected == "v1.2.3")
    assert "bump the release to ____ later" in cloze.question
    # the quote hides the other questions' answers and the user's secret
    assert "KeyError: 'model'" not in cloze.question and SECRET not in cloze.question
    # the same audit gives the same questions
    assert generate(audit.items, Conversation(messages)) == probes


def test_the_cap_spreads_the_questions_over_the_categories(audited):
    audit, messages = audited
    few = generate(audit.items, Conversation(messages), 4)
    assert [p.category for p in few] == list(PROBE_CATEGORIES)
    assert generate(audit.items, Conversation(messages), 0) == []


def test_a_blank_stands_for_a_whole_name_and_keeps_enough_words():
    said = normalize_message(
        user(
            "Ship WP13 before the review. We keep WP1 for the release notes of the spring. "
            "See src/app for the code."
        )
    )
    conv = Conversation([("u1", said)])
    items = [
        AuditItem("WP1", "id", "lost", ("u1",)),
        AuditItem("src/app", "path", "lost", ("u1",)),
        AuditItem("src", "symbol", "lost", ("u1",)),
    ]
    quotes = [p.question.partition(": ")[2] for p in generate(items, conv)]
    # WP13 is not WP1; "src" only stands inside the path "src/app": no question of its own
    assert quotes == [
        "“…See ____ for the code.”",
        "“…We keep ____ for the release notes of the spring.…”",
    ]


# -- grading -----------------------------------------------------------------------------------


def test_grades_exact_normalised_unknown_wrong():
    path = Probe("Which file?", "file", "src/app/loader.py", "file", ("e1",))
    assert grade(path, "It was src/app/loader.py.") == "exact"
    assert grade(path, "SRC/App/Loader.py") == "normalised"
    assert grade(path, "app/loader.py") == "normalised"  # a tail of two components
    assert grade(path, "Unknown: the summary does not say.") == "unknown"
    assert grade(path, "") == "unknown"
    assert grade(path, "src/app/exporter.py") == "wrong"
    number = Probe("How long?", "identifier", "1,100 lines", "number", ("e1",))
    assert grade(number, "a 1100-line file") == "normalised"


def test_a_sentence_is_graded_on_the_words_the_question_does_not_give():
    decision = Probe(
        "What was decided about yaml loader?",
        "decision",
        "We decided to keep the YAML loader and parse dates as UTC strings.",
        "decision",
        ("e4",),
        ("loader", "yaml"),
    )
    rephrased = "Keep the YAML loader, parse dates as UTC strings: timezones broke the import."
    assert grade(decision, rephrased) == "normalised"
    assert grade(decision, "Something about the YAML loader.") == "wrong"  # parrots the topic
    assert grade(decision, "not mentioned in the summary") == "unknown"


def test_answers_are_read_leniently():
    def read(text, n=2):
        return parse_answers(text, n)[0]

    fenced = '```json\n{"answers": [{"n": 1, "answer": "a"}, {"n": 2, "answer": "b"},]}\n```'
    assert read(fenced) == ["a", "b"]
    assert read('Here: [{"n": "2", "answer": "b"}, {"n": 1, "answer": "a"}]') == ["a", "b"]
    assert read('{"1": "a", "2": ["b", "c"]}') == ["a", "b; c"]
    assert read('["a", "b"]') == ["a", "b"]
    cut, notes = parse_answers('{"answers": [{"n": 1, "answer": "a"}, {"n": 2, "ans', 2)
    assert cut == ["a", None] and any("not complete JSON" in n for n in notes)
    assert read("1. a\n2) b") == ["a", "b"]
    assert read("I cannot help with that.") == [None, None]
    # JSON's strings are read as strings: a comma before a bracket, braces in an answer
    assert read('{"answers": [{"n": 1, "answer": "f(x,]"}, {"n": 2, "answer": "b"}]}') == [
        "f(x,]",
        "b",
    ]
    braces = '{"answers": [{"n": 1, "answer": "use {} here"}, {"n": 2, "answer": "b'
    assert read(braces) == ["use {} here", None]


# -- asking a model ----------------------------------------------------------------------------


def test_the_model_sees_the_summary_alone_redacted(server, audited, probes):
    audit, messages = audited
    server.add(_answers([p.expected for p in probes]))
    client = OpenAICompatibleClient(f"{server.url}/v1", "m", timeout=5, sleep=lambda _s: None)
    try:
        run = run_probes(audit, messages, client)
    finally:
        client.close()
    assert len(server.seen) == 1  # one call for every question
    sent = server.seen[0].body["messages"]
    assert "ONLY the summary" in sent[0]["content"]
    prompt = sent[1]["content"]
    assert SUMMARY.strip() in prompt and SECRET not in prompt
    assert "Looking at the exporter now." not in prompt  # no message is sent
    assert all(r.grade == "exact" for r in run.results)
    assert run.total().score == 1.0 and set(run.scores()) == set(PROBE_CATEGORIES)


def test_model_written_questions_are_graded_apart(server, audited, probes):
    audit, messages = audited
    own = {"questions": [{"question": "Which loader is kept?", "answer": "the YAML loader"}]}
    server.add(
        Reply(200, {"choices": [{"message": {"content": orjson.dumps(own).decode()}}]}),
        _answers(["unknown"] * len(probes) + ["They kept the YAML loader"]),
    )
    client = OpenAICompatibleClient(f"{server.url}/v1", "m", timeout=5, sleep=lambda _s: None)
    try:
        run = run_probes(audit, messages, client, extra=3)
    finally:
        client.close()
    assert "Looking at the exporter" not in str(server.seen[0].body)  # after the cut
    assert "timezones broke the nightly import" in str(server.seen[0].body)
    assert run.results[-1].probe.category == "model" and run.results[-1].grade == "exact"
    assert run.scores()["model"].score == 1.0 and run.total().score == 0.0


def test_an_unreadable_answer_is_an_error(server, probes):
    server.add(Reply(200, {"choices": [{"message": {"content": "I'd rather not."}}]}))
    client = OpenAICompatibleClient(f"{server.url}/v1", "m", timeout=5, sleep=lambda _s: None)
    with pytest.raises(ProbeError, match="no readable answers"):
        probe_summary(client, SUMMARY, probes)
    client.close()


# -- the CLI -----------------------------------------------------------------------------------


def _files(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def test_cli_probe_json(server, built, probes, capsys, monkeypatch):
    monkeypatch.setenv("MEMLENS_PROBE_KEY", "sk-probe-" + "k" * 30)
    answers = [p.expected if n % 2 == 0 else "unknown" for n, p in enumerate(probes)]
    server.add(_answers(answers))
    spec = f"openai:{server.url}/v1:probe-model"
    code = run_cli(
        ["audit", str(built), "--probe", "--llm", spec, "--key-env", "MEMLENS_PROBE_KEY", "--json"]
    )
    out = capsys.readouterr()
    assert code == 0, out.err
    payload = orjson.loads(out.out)
    assert payload["items"] and payload["probes"]["run"] is True
    assert payload["probes"]["model"] == spec
    questions = payload["probes"]["questions"]
    assert [q["question"] for q in questions] == [p.question for p in probes]
    assert {"question", "category", "expected", "answer", "grade", "source"} <= set(questions[0])
    assert [q["grade"] for q in questions] == [
        "exact" if n % 2 == 0 else "unknown" for n in range(len(probes))
    ]
    total = payload["probes"]["total"]
    assert total["exact"] == (len(probes) + 1) // 2 and total["unknown"] == len(probes) // 2
    assert set(payload["probes"]["scores"]) == set(PROBE_CATEGORIES)
    assert server.seen[0].headers["authorization"] == "Bearer sk-probe-" + "k" * 30
    assert "sk-probe-" not in out.out + out.err  # the key is sent, never printed


@pytest.mark.parametrize(
    ("replies", "extra", "reason"),
    [
        ([Reply(500, {"error": "down"})] * 3, [], "HTTP 500"),
        ([Reply(200, {"choices": []}, delay=1.0)], ["--timeout", "0.3"], "time limit"),
        ([Reply(200, b"<html>not json</html>")], [], "the model call failed"),
        ([Reply(200, {"choices": [{"message": {"content": "no idea"}}]})], [], "no readable"),
        ([Reply(200, {"choices": [{"message": {"refusal": "I can't"}}]})], [], "refused"),
    ],
    ids=["500", "timeout", "garbage", "nonsense", "refused"],
)
def test_cli_probe_failure_exits_1_and_writes_nothing(
    server, built, capsys, replies, extra, reason
):
    server.add(*replies)
    before = _files(built.parent)
    spec = f"openai:{server.url}/v1:m"
    assert run_cli(["audit", str(built), "--probe", "--llm", spec, "--json", *extra]) == 1
    out = capsys.readouterr()
    assert out.out == "" and "probes: " in out.err and reason in out.err
    assert "nothing was written" in out.err
    assert _files(built.parent) == before


def test_audit_without_a_model_is_unchanged(built, capsys):
    audit = audit_compaction(load_transcript(built)).to_json()
    for extra in ([], ["--probe"], ["--probe", "--llm", "offline"]):
        assert run_cli(["audit", str(built), "--json", *extra]) == 0
        payload = orjson.loads(capsys.readouterr().out)
        probes = payload.pop("probes")
        assert payload == audit and probes["run"] is False
    assert "no model" in probes["reason"]
    assert run_cli(["audit", str(built)]) == 0
    assert "probes: not run" in capsys.readouterr().out
