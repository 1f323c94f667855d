"""A failed summary never becomes a written compaction; every compaction ends in bounded time.

``memlens compact --write --llm openai:...`` against a real HTTP server on 127.0.0.1
that fails in every way a summariser can: for each fault the command exits 1, names
the call, the endpoint and the reason on one stderr line, and leaves every file of
the OpenClaw home byte-identical (backups included: no new file). With
``--allow-fallback`` the fallback is written, and its first line says it is one.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
import time
from functools import partial
from typing import TYPE_CHECKING

import orjson
import pytest

from core.cli.main import run_cli
from core.demo.build import write_demo
from core.llm import http as llm_http
from core.llm.retry import RetryPolicy
from core.llm.watch import WATCHDOG_THREAD
from tests.core.summary_fault_server import MAX_HOLD, Fault, ok_answer, running

if TYPE_CHECKING:
    from pathlib import Path

NOW = 1_795_305_600_000
SESSION = "57b355d7-a4ad-4175-b7cd-8c1338e69d98"  # v3, 35 messages summarised in 2 calls
OLD = time.time() - 3600
HEADINGS = "\n\n".join(
    f"{h}\n- from the model"
    for h in (
        "## Decisions",
        "## Open TODOs",
        "## Constraints/Rules",
        "## Pending user asks",
        "## Exact identifiers",
    )
)


@pytest.fixture
def faulty():
    with running() as server:
        yield server


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    root = tmp_path_factory.mktemp("faults") / "home"
    write_demo(root, now_ms=NOW, segments=40)
    return root


@pytest.fixture
def home(template, tmp_path, fixtures_dir):
    """An OpenClaw home: the demo session, a copy of a real fixture, a memory-context store."""
    root = tmp_path / "home"
    sessions = root / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    shutil.copyfile(
        template / "agents/main/sessions" / f"{SESSION}.jsonl", sessions / f"{SESSION}.jsonl"
    )
    shutil.copyfile(fixtures_dir / "before-compaction.jsonl", sessions / "before-compaction.jsonl")
    shutil.copytree(template / "memory" / "context", root / "memory" / "context")
    for p in sessions.iterdir():
        os.utime(p, (OLD, OLD))  # not "modified in the last few seconds"
    return root


@pytest.fixture(autouse=True)
def quick_back_off(monkeypatch):
    """Retries as many as ever, back-offs of milliseconds (the HTTP is still real)."""
    monkeypatch.setattr(llm_http, "RetryPolicy", partial(RetryPolicy, base=0.01, cap=0.02))


def tree(root: Path) -> dict[str, str]:
    """Every file under *root* and the SHA-256 of its bytes."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def transcript(home: Path, name: str = SESSION) -> Path:
    return home / "agents" / "main" / "sessions" / f"{name}.jsonl"


def compact(home, url, *extra, name=SESSION):  # type: ignore[no-untyped-def]
    return run_cli(
        ["compact", str(transcript(home, name)), "--write", "--llm", f"openai:{url}/v1:m", *extra]
    )


def refusal_body(**choice):  # type: ignore[no-untyped-def]
    base = {"message": {"role": "assistant", "content": ""}, "finish_reason": "stop"}
    base.update(choice)
    return {"model": "m", "choices": [base]}


FAULTS = {
    "http-500": (
        Fault(status=500, body={"error": {"message": "boom"}}),
        "HTTP 500, server error: boom",
    ),
    "http-429": (
        Fault(status=429, body={"error": {"message": "slow down"}}, headers={"retry-after": "0"}),
        "HTTP 429, rate limited: slow down",
    ),
    "overflow-400": (
        Fault(
            status=400,
            body={"error": {"message": "This model's maximum context length is 8192 tokens"}},
        ),
        "HTTP 400, prompt too long",
    ),
    "auth-401": (
        Fault(status=401, body={"error": {"message": "bad key"}}),
        "HTTP 401, credentials refused",
    ),
    "malformed-json": (Fault(body=b'{"choices": [ {"message": '), "the answer is not JSON"),
    "empty-answer": (Fault(body=ok_answer("")), "the answer is empty"),
    "refusal-text": (
        Fault(body=ok_answer("I'm sorry, but I can't help with that.")),
        "the model refused: \"I'm sorry, but I can't help with that.\"",
    ),
    "refusal-content-filter": (
        Fault(body=refusal_body(finish_reason="content_filter")),
        "the model refused to answer (finish reason 'content_filter')",
    ),
    "refusal-field": (
        Fault(
            body=refusal_body(
                message={"role": "assistant", "content": None, "refusal": "I can't do that"}
            )
        ),
        'the model refused: "I can\'t do that"',
    ),
    # a model that answered the conversation instead of summarising it
    "not-a-summary": (
        Fault(body=ok_answer("Hello! How can I help you with your project today?")),
        "the answer is not a summary (none of its headings)",
    ),
    "cut-at-the-limit": (
        Fault(
            body=refusal_body(
                message={"role": "assistant", "content": "## Decisions\n- half a"},
                finish_reason="length",
            )
        ),
        "the answer was cut at the",
    ),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_failed_summary_writes_nothing_and_says_why(capsys, home, faulty, fault):
    reply, reason = FAULTS[fault]
    faulty.set(reply)
    before = tree(home)
    assert compact(home, faulty.url) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        "memlens: error: summary failed, nothing was written"
    )
    assert "call 1 of 2 (summarising chunk 1 of 1)" in err  # which call
    assert f"openai:{faulty.url}/v1:m" in err  # against which endpoint
    assert reason in err  # and why
    assert "--allow-fallback" in err
    assert tree(home) == before  # transcript, backups, segments, facts: byte-identical
    assert faulty.requests  # the server was asked


def test_retries_are_counted_in_the_message(capsys, home, faulty):
    faulty.set(Fault(status=500, body={"error": {"message": "boom"}}))
    assert compact(home, faulty.url) == 1
    assert "failed after 3 attempts: HTTP 500" in capsys.readouterr().err


def test_a_timeout_writes_nothing(capsys, home, faulty):
    faulty.set(Fault(mode="hang"))
    before = tree(home)
    assert compact(home, faulty.url, "--read-timeout", "0.3", "--timeout", "30") == 1
    err = capsys.readouterr().err
    assert "call 1 of 2 (summarising chunk 1 of 1)" in err
    # the read timeout ended each attempt, never the server's (absent) answer
    assert "failed after 3 attempts: no answer within 0.3 s" in err
    assert tree(home) == before


def test_a_missing_api_key_writes_nothing_and_sends_nothing(capsys, home, faulty, monkeypatch):
    monkeypatch.delenv("MEMLENS_FAULT_KEY", raising=False)
    before = tree(home)
    assert compact(home, faulty.url, "--key-env", "MEMLENS_FAULT_KEY") == 1
    err = capsys.readouterr().err
    assert "call 1 of 2 (summarising chunk 1 of 1)" in err and faulty.url in err
    assert "environment variable MEMLENS_FAULT_KEY is not set" in err
    assert tree(home) == before and faulty.requests == []


def test_a_hanging_server_is_cut_at_the_total_deadline(capsys, home, faulty):
    faulty.set(Fault(mode="hang"))
    before = tree(home)
    # a read timeout past the server's hold: only the deadline can make the client hang up
    assert compact(home, faulty.url, "--timeout", "2", "--read-timeout", str(2 * MAX_HOLD)) == 1
    err = capsys.readouterr().err
    assert "the total time limit of 2 s ran out while waiting for the answer" in err
    assert "call 1 of 2 (summarising chunk 1 of 1)" in err and faulty.url in err
    assert faulty.wait_closed(1, timeout=3)  # the server saw the connection closed
    assert tree(home) == before
    assert not [t for t in threading.enumerate() if t.name == WATCHDOG_THREAD]


def test_a_trickling_server_is_cut_at_the_total_deadline(capsys, home, faulty):
    """A byte every 0.2 s defeats the 1 s read timeout; the 2 s deadline does not care."""
    faulty.set(Fault(mode="trickle", every=0.2))
    before = tree(home)
    assert compact(home, faulty.url, "--timeout", "2", "--read-timeout", "1") == 1
    assert "the total time limit of 2 s ran out" in capsys.readouterr().err
    assert faulty.wait_closed(1, timeout=3)
    assert tree(home) == before


def test_a_dry_run_with_a_failed_summary_also_fails(capsys, home, faulty):
    faulty.set(Fault(status=500, body={"error": {"message": "boom"}}))
    before = tree(home)
    path = transcript(home)
    code = run_cli(["compact", str(path), "--llm", f"openai:{faulty.url}/v1:m", "--json"])
    out, err = capsys.readouterr()
    assert code == 1 and "summary failed" in err
    payload = orjson.loads(out)
    assert payload["error"] == err.removeprefix("memlens: error: ").strip()
    assert payload["written"] is False and payload["degraded"] is True
    calls = payload["attempts"]
    assert calls[0]["ok"] is False and calls[0]["status"] == 500 and calls[0]["attempts"] == 3
    assert calls[0]["endpoint"] == f"{faulty.url}/v1" and calls[0]["kind"] == "server"
    assert payload["summary"].startswith("[memlens fallback summary:")  # what would be written
    assert tree(home) == before


def test_allow_fallback_writes_one_entry_that_says_it_is_a_fallback(capsys, home, faulty):
    faulty.set(Fault(status=500, body={"error": {"message": "boom"}}))
    path = transcript(home)
    before = path.read_bytes()
    assert compact(home, faulty.url, "--allow-fallback", "--json") == 0
    out = orjson.loads(capsys.readouterr().out)
    assert out["written"] and out["degraded"] and out["backup"]
    after = path.read_bytes()
    assert after.startswith(before)
    added = after[len(before) :].splitlines()
    assert len(added) == 1
    entry = orjson.loads(added[0])
    first = entry["summary"].splitlines()[0]
    assert first.startswith("[memlens fallback summary: the summariser openai:")
    assert "HTTP 500" in first and "not a real summary" in first
    assert entry["type"] == "compaction" and entry["id"] == out["entry"]["id"]


def test_a_working_summariser_still_writes(capsys, home, faulty):
    """The control: the same set-up with a server that answers writes the compaction."""
    good = Fault(body=ok_answer(HEADINGS))
    faulty.set(Fault(body=ok_answer('{"facts": []}')), good, good)  # the extraction's: no fact
    path = transcript(home)
    before = path.read_bytes()
    assert compact(home, faulty.url, "--json") == 0
    out = orjson.loads(capsys.readouterr().out)
    assert out["written"] and not out["degraded"] and out["failure"] is None
    assert [c["step"] for c in out["attempts"]] == [
        "summarising chunk 1 of 1",
        "summarising the split turn",
        "extracting knowledge",
    ]
    entry = orjson.loads(path.read_bytes()[len(before) :])
    assert entry["summary"].startswith("## Decisions")


def test_the_real_fixture_is_never_written_by_a_failed_summary(capsys, home, faulty):
    faulty.set(
        Fault(status=503, body={"error": {"message": "overloaded"}}, headers={"retry-after": "0"})
    )
    before = tree(home)
    assert compact(home, faulty.url, name="before-compaction") == 1
    err = capsys.readouterr().err
    assert "summary failed, nothing was written" in err and "HTTP 503" in err
    assert tree(home) == before


def test_a_failed_extraction_writes_nothing_unless_allowed(capsys, home, faulty):
    """The summary calls answer, the knowledge extraction gets a 500: no silent loss of facts."""
    good = Fault(body=ok_answer(HEADINGS))
    faulty.set(Fault(status=500, body={"error": {"message": "boom"}}), good, good)
    before = tree(home)
    assert compact(home, faulty.url) == 1
    err = capsys.readouterr().err
    assert err.startswith("memlens: error: knowledge extraction failed, nothing was written")
    assert "(extracting knowledge)" in err and "HTTP 500" in err
    assert "write the compaction with only the facts read (none if the call failed)" in err
    assert tree(home) == before
    faulty.set(Fault(status=500, body={"error": {"message": "boom"}}), good, good)
    path = transcript(home)
    size = path.stat().st_size
    assert compact(home, faulty.url, "--allow-fallback", "--json") == 0
    out = orjson.loads(capsys.readouterr().out)
    assert out["written"] and out["facts_written"] == []
    entry = orjson.loads(path.read_bytes()[size:])
    assert entry["summary"].startswith("## Decisions")  # the summary itself is real


CUT = '{"facts": [{"type": "decision", "content": "Use SQLite for the cache"}, {"type": "is'


@pytest.mark.parametrize(
    ("answer", "finish", "why", "read"),
    [
        (CUT, "length", "the answer stopped at the output-token limit", 1),
        (CUT, "stop", "the answer was not complete JSON; recovered 1 complete fact(s)", 1),
        ("Sorry, I cannot help with that.", "stop", "no JSON found in the answer", 0),
        ('{"facts": []}', "length", "the answer stopped at the output-token limit", 0),
    ],
)
def test_an_extraction_answer_read_in_part_writes_nothing_unless_allowed(
    capsys, home, faulty, answer, finish, why, read
):
    """A parse failure is a failure: the facts not read would be lost without a word."""
    good = Fault(body=ok_answer(HEADINGS))
    cut = ok_answer(answer)
    cut["choices"][0]["finish_reason"] = finish
    faulty.set(Fault(body=cut), good, good)
    before = tree(home)
    assert compact(home, faulty.url) == 1
    err = capsys.readouterr().err
    assert err.startswith("memlens: error: knowledge extraction failed, nothing was written")
    assert "(extracting knowledge)" in err and why in err
    assert tree(home) == before
    faulty.set(Fault(body=cut), good, good)
    path = transcript(home)
    size = path.stat().st_size
    assert compact(home, faulty.url, "--allow-fallback", "--json") == 0  # asked for: written
    out = orjson.loads(capsys.readouterr().out)
    assert out["written"] and out["degraded"] and why in out["failure"]
    assert len(out["facts_written"]) == read  # only the facts read
    assert orjson.loads(path.read_bytes()[size:])["summary"].startswith("## Decisions")


def test_no_extraction_is_sent_after_a_failed_summary(capsys, home, faulty):
    faulty.set(Fault(status=500, body={"error": {"message": "boom"}}))
    assert compact(home, faulty.url, "--json") == 1
    out = orjson.loads(capsys.readouterr().out)
    assert "extracting knowledge" not in [c["step"] for c in out["attempts"]]
    assert "knowledge extraction skipped: the summary failed" in out["notes"]


@pytest.mark.parametrize(
    "key", ["s3cr3tPW\nline2", "sk-proj-abcdefghij0123456789\u2026", "pass word"]
)
def test_a_key_that_cannot_be_sent_is_refused_and_never_shown(
    capsys, home, faulty, monkeypatch, key
):
    """A pasted key with a line break, a space or a non-ASCII character: refused, never echoed."""
    monkeypatch.setenv("MEMLENS_ODD_KEY", key)
    before = tree(home)
    assert compact(home, faulty.url, "--key-env", "MEMLENS_ODD_KEY") == 1
    captured = capsys.readouterr()
    assert "holds a space, a line break or a non-ASCII character" in captured.err
    assert tree(home) == before
    # even the fallback written on request carries no part of the key
    assert compact(home, faulty.url, "--key-env", "MEMLENS_ODD_KEY", "--allow-fallback") == 0
    captured2 = capsys.readouterr()
    shown = captured.out + captured.err + captured2.out + captured2.err
    for part in (key, repr(key)[1:-1], "s3cr3tPW", "abcdefghij0123456789", "pass word"):
        assert part not in shown
    assert tree(home) != before
    for path in home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert b"s3cr3tPW" not in data and b"abcdefghij0123456789" not in data
    assert faulty.requests == []  # never sent
