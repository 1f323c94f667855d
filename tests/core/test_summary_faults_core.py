"""Bounded time and cancel, in the LLM client and in a compaction: the connection is closed.

A real HTTP server on 127.0.0.1 that accepts a request and never answers (or trickles)
tells when the client hung up; the tests check that a cancel or the total deadline
closed the connection at once and left no thread behind.
"""

from __future__ import annotations

import os
import threading
import time
from functools import partial

import pytest

from core.compaction.call_log import FALLBACK_PREFIX
from core.compaction.plan import plan_compaction
from core.compaction.provider import InterruptibleClient, ProviderChoice, Timeouts, open_provider
from core.compaction.run import SummaryFailed, compact
from core.compaction.safeguard import MAX_SUMMARY_CHARS, safeguard
from core.compaction.summarize import summarize_plan
from core.compaction.summarizers import LLMSummarizer, OfflineSummarizer, looks_like_refusal
from core.compaction.write import write_compaction
from core.io.jobs import Cancelled
from core.io.jsstr import js_len
from core.llm import ChatMessage, Deadline, LLMError, OpenAICompatibleClient
from core.llm import http as llm_http
from core.llm.retry import RetryPolicy
from core.llm.watch import WATCHDOG_THREAD
from core.transcript import load_transcript
from tests.core.summary_fault_server import MAX_HOLD, Fault, ok_answer, running

from .build import chain, lines, write_file

HELLO = [ChatMessage("user", "hello")]
PAST_HOLD = 2 * MAX_HOLD
"""A read timeout the server's hold never reaches. The server records only the client's
hang-ups (``wait_closed``), so with it a recorded hang-up proves that the cancel or the
deadline cut the request, not a timeout: a check of what happened, not of how long it took."""


@pytest.fixture
def faulty():
    with running() as server:
        yield server


def llm_threads() -> list[threading.Thread]:
    return [
        t for t in threading.enumerate() if t.name == WATCHDOG_THREAD or t.name.startswith("llm ")
    ]


def no_llm_thread_after(grace: float = 2.0) -> bool:
    end = time.monotonic() + grace
    while time.monotonic() < end:
        if not llm_threads():
            return True
        time.sleep(0.02)
    return False


def cancel_after(seconds: float):  # type: ignore[no-untyped-def]
    at = time.monotonic() + seconds
    return lambda: time.monotonic() > at


# -- the client ----------------------------------------------------------------------------------


def test_cancel_closes_the_connection_at_once(faulty):
    faulty.set(Fault(mode="hang"))
    client = OpenAICompatibleClient(f"{faulty.url}/v1", "m", timeout=PAST_HOLD)
    with pytest.raises(Cancelled):
        client.complete(HELLO, cancelled=cancel_after(0.3))
    assert faulty.wait_closed(1, timeout=2)  # the server saw EOF: the socket was shut down
    assert no_llm_thread_after()  # no thread left waiting on the server
    assert len(faulty.requests) == 1  # and no retry after the cancel
    client.close()


def test_cancel_through_the_app_wrapper_closes_the_connection(faulty):
    faulty.set(Fault(mode="trickle", every=0.1))
    opened = open_provider(
        ProviderChoice("Slow", f"openai:{faulty.url}/v1:m"), Timeouts(connect=5, read=30, total=60)
    )
    client = opened.client
    assert isinstance(client, InterruptibleClient)
    with pytest.raises(Cancelled):
        client.complete(HELLO, cancelled=cancel_after(0.3))
    assert client.abandoned == 1
    assert faulty.wait_closed(1, timeout=2)
    assert no_llm_thread_after()
    opened.close()


def test_the_deadline_cuts_a_hanging_request(faulty):
    faulty.set(Fault(mode="hang"))
    client = OpenAICompatibleClient(
        f"{faulty.url}/v1", "m", timeout=PAST_HOLD, deadline=Deadline(1.0)
    )
    with pytest.raises(LLMError) as info:
        client.complete(HELLO)
    assert info.value.kind == "deadline" and not info.value.retryable
    assert "the total time limit of 1 s ran out while waiting" in str(info.value)
    assert info.value.endpoint == f"{faulty.url}/v1"
    assert faulty.wait_closed(1, timeout=2)
    assert no_llm_thread_after()
    assert len(faulty.requests) == 1  # no retry past the deadline
    client.close()


def test_the_deadline_cuts_a_trickling_answer(faulty):
    faulty.set(Fault(mode="trickle", every=0.1))
    client = OpenAICompatibleClient(
        f"{faulty.url}/v1", "m", read_timeout=0.5, connect_timeout=5, deadline=Deadline(1.0)
    )
    with pytest.raises(LLMError) as info:
        client.complete(HELLO)
    assert info.value.kind == "deadline"  # the trickle beats the read timeout: only the deadline
    assert faulty.wait_closed(1, timeout=2)
    client.close()


def test_no_back_off_past_the_deadline(faulty):
    faulty.set(
        Fault(status=429, body={"error": {"message": "slow"}}, headers={"retry-after": "30"})
    )
    slept: list[float] = []
    client = OpenAICompatibleClient(
        f"{faulty.url}/v1", "m", sleep=slept.append, deadline=Deadline(5.0)
    )
    with pytest.raises(LLMError) as info:
        client.complete(HELLO)
    assert info.value.kind == "deadline" and slept == []  # it did not wait 30 s to fail later
    assert "last error: HTTP 429, rate limited: slow" in str(info.value)
    assert info.value.attempts == 1


def test_an_expired_deadline_sends_nothing(faulty):
    clock = [0.0]
    deadline = Deadline(1.0, clock=lambda: clock[0])
    clock[0] = 2.0
    client = OpenAICompatibleClient(f"{faulty.url}/v1", "m", deadline=deadline)
    with pytest.raises(LLMError) as info:
        client.complete(HELLO)
    assert info.value.kind == "deadline" and faulty.requests == []


def test_connect_and_read_timeouts_are_separate(faulty):
    faulty.set(Fault(mode="hang"))
    client = OpenAICompatibleClient(
        f"{faulty.url}/v1", "m", connect_timeout=7, read_timeout=0.3, retries=0
    )
    assert (client.timeouts.connect, client.timeouts.read) == (7, 0.3)
    with pytest.raises(LLMError) as info:
        client.complete(HELLO)
    assert info.value.kind == "timeout" and "no answer within 0.3 s" in str(info.value)


# -- the compaction --------------------------------------------------------------------------


@pytest.fixture
def small(tmp_path):
    p = tmp_path / "s.jsonl"
    write_file(p, lines(chain(12)))
    old = time.time() - 60
    os.utime(p, (old, old))
    return p


def test_a_compaction_is_cancelled_at_once_and_writes_nothing(faulty, small):
    faulty.set(Fault(mode="hang"))
    before = small.read_bytes()
    opened = open_provider(
        ProviderChoice("Hang", f"openai:{faulty.url}/v1:m"),
        Timeouts(connect=5, read=PAST_HOLD, total=2 * PAST_HOLD),
    )
    session = load_transcript(small)
    with pytest.raises(Cancelled):
        compact(
            session,
            summarizer=opened.summarizer,
            keep_recent_tokens=2000,
            cancelled=cancel_after(0.3),
        )
    opened.close()
    assert faulty.wait_closed(1, timeout=2) and no_llm_thread_after()
    assert small.read_bytes() == before and list(small.parent.iterdir()) == [small]


def test_the_total_deadline_covers_retries_and_the_whole_ladder(faulty, small, monkeypatch):
    """Every call of the run shares one deadline: once it passes, the rest fail at once."""
    monkeypatch.setattr(llm_http, "RetryPolicy", partial(RetryPolicy, base=0.01, cap=0.02))
    faulty.set(Fault(mode="hang"))
    opened = open_provider(
        ProviderChoice("Hang", f"openai:{faulty.url}/v1:m"),
        Timeouts(connect=5, read=PAST_HOLD, total=1.5),
    )
    session = load_transcript(small)
    run = compact(session, summarizer=opened.summarizer, keep_recent_tokens=2000)
    opened.close()
    assert faulty.wait_closed(1, timeout=2)  # the deadline cut the hanging request
    assert run.summary is not None and run.summary.degraded
    kinds = [c.kind for c in run.call_log]
    assert kinds and set(kinds) == {"deadline"}
    assert len(faulty.requests) == 1  # the later ladder steps never reached the server
    with pytest.raises(SummaryFailed, match=r"total time limit of 1\.5 s ran out"):
        write_compaction(run, session)
    assert [p.name for p in small.parent.iterdir()] == ["s.jsonl"]  # no backup either


def test_a_failed_run_is_refused_before_anything_is_written(faulty, tmp_path, small):
    faulty.set(Fault(status=401, body={"error": {"message": "bad key"}}))
    store = tmp_path / "store"
    store.mkdir()
    (store / "segments.jsonl").write_bytes(b"")
    (store / "knowledge.jsonl").write_bytes(b"")
    opened = open_provider(ProviderChoice("Auth", f"openai:{faulty.url}/v1:m"))
    session = load_transcript(small)
    run = compact(
        session,
        summarizer=opened.summarizer,
        keep_recent_tokens=2000,
        store_dir=store,
        extract_client=opened.client,
    )
    opened.close()
    failure = run.failure
    assert failure is not None and failure.kind == "auth" and failure.status == 401
    assert failure.endpoint == f"{faulty.url}/v1" and failure.attempts == 1
    snapshot = {
        p: p.read_bytes() for p in (small, store / "segments.jsonl", store / "knowledge.jsonl")
    }
    for force in (False, True):  # --force never implies the fallback
        with pytest.raises(SummaryFailed) as info:
            write_compaction(run, session, store_dir=store, force=force)
        assert "HTTP 401" in str(info.value) and faulty.url in str(info.value)
    assert {p: p.read_bytes() for p in snapshot} == snapshot
    assert sorted(p.name for p in small.parent.iterdir()) == ["s.jsonl", "store"]
    write_compaction(run, session, store_dir=store, allow_fallback=True)
    assert run.written and run.backup is not None
    assert run.entry is not None and run.entry["summary"].startswith(FALLBACK_PREFIX)


def test_the_offline_summariser_is_never_a_failure(small):
    session = load_transcript(small)
    run = compact(session, summarizer=OfflineSummarizer(), keep_recent_tokens=2000)
    assert run.summary is not None and not run.summary.degraded and run.failure is None
    assert all(c.ok and c.client == "offline" for c in run.call_log)
    assert not run.summary.summary.startswith(FALLBACK_PREFIX)


def test_the_fallback_notice_survives_the_safeguard(fixtures_dir, faulty):
    s = load_transcript(fixtures_dir / "before-compaction.jsonl")
    plan = plan_compaction(s, at="#358")
    faulty.set(Fault(status=400, body={"error": {"message": "maximum context length exceeded"}}))
    client = OpenAICompatibleClient(f"{faulty.url}/v1", "m")
    run = summarize_plan(plan, LLMSummarizer(client))
    client.close()
    first = run.summary.splitlines()[0]
    assert first.startswith(FALLBACK_PREFIX) and "HTTP 400" in first
    assert js_len(run.summary) <= MAX_SUMMARY_CHARS
    # a body far over the cap is cut; the notice line is not
    notice = first
    text, truncated = safeguard(
        "## Decisions\n" + "x " * 40_000, plan, "p" * 9000, [], notice=notice
    )
    assert truncated and text.splitlines()[0] == notice and js_len(text) <= MAX_SUMMARY_CHARS


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("I'm sorry, but I can't help with that.", True),
        ("I’m sorry, I cannot assist with this request.", True),
        ("I cannot summarise this conversation.", True),
        ("As an AI, I must decline.", True),
        ("## Decisions\n- I'm sorry to say the build broke", False),
        ("Summary follows.\n## Decisions\n- x", False),
    ],
)
def test_refusal_texts(text, refused):
    assert looks_like_refusal(text) is refused


def test_a_refusal_or_empty_answer_is_a_failed_call_not_a_summary(faulty, small):
    session = load_transcript(small)
    for answer, kind in (
        ("I'm sorry, but I can't help with that", "refusal"),
        ("   ", "bad_response"),
    ):
        faulty.set(Fault(body=ok_answer(answer)))
        client = OpenAICompatibleClient(f"{faulty.url}/v1", "m")
        run = compact(session, summarizer=LLMSummarizer(client), keep_recent_tokens=2000)
        client.close()
        assert run.failure is not None and run.failure.kind == kind
        assert run.summary is not None and run.summary.summary.startswith(FALLBACK_PREFIX)


def test_an_extraction_cut_by_the_deadline_fails_the_run(faulty, tmp_path, small):
    """The knowledge extraction shares the deadline; cut by it, the run is not written."""
    checkpoint = "\n\n".join(f"## {h}\n- x" for h in ("Decisions", "Open TODOs"))
    store = tmp_path / "store"
    store.mkdir()
    (store / "segments.jsonl").write_bytes(b"")
    (store / "knowledge.jsonl").write_bytes(b"")
    session = load_transcript(small)
    plan = plan_compaction(session, keep_recent_tokens=2000)
    assert len(plan.summarize) >= 5  # enough messages for an extraction
    # every summary call is answered; the extraction (the next call) hangs
    faulty.set(Fault(mode="hang"), *[Fault(body=ok_answer(checkpoint))] * plan.calls)
    opened = open_provider(
        ProviderChoice("Late", f"openai:{faulty.url}/v1:m"),
        Timeouts(connect=5, read=PAST_HOLD, total=2),
    )
    run = compact(
        session,
        summarizer=opened.summarizer,
        keep_recent_tokens=2000,
        store_dir=store,
        extract_client=opened.client,
    )
    opened.close()
    assert faulty.wait_closed(1, timeout=2)  # the deadline cut the hanging extraction
    assert run.summary is not None and not run.summary.degraded
    failure = run.failure
    assert failure is not None and failure.kind == "deadline"
    assert failure.step == "extracting knowledge"
    with pytest.raises(SummaryFailed, match="extracting knowledge"):
        write_compaction(run, session, store_dir=store)
    assert faulty.wait_closed(1, timeout=2)
