"""LLM clients against a real HTTP server on 127.0.0.1 with scripted answers."""

from __future__ import annotations

import random
import socket
import threading
import time
from typing import Any

import pytest

from core.io import jsonio
from core.io.jobs import Cancelled
from core.llm import (
    AnthropicClient,
    ChatMessage,
    FallbackChain,
    LLMError,
    OpenAICompatibleClient,
    RetryPolicy,
    parse_llm_spec,
)
from core.llm.retry import SLEEP_STEP

KEY_ENV = "MEMLENS_TEST_LLM_KEY"
KEY = "sk-test-0123456789abcdefghijKLMN"
HELLO = [ChatMessage("user", "hello")]


from tests.llm_server import Reply, Script  # noqa: E402  (the server fixture is in conftest)


class MidRng(random.Random):
    """Jitter factor exactly 1: the delays are the undisturbed doubling."""

    def uniform(self, a: float, b: float) -> float:
        return (a + b) / 2


class EdgeRng(random.Random):
    """Jitter factors alternating at the low and high bounds."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def uniform(self, a: float, b: float) -> float:
        self.calls += 1
        return a if self.calls % 2 else b


def _options(sleeps: list[float] | None, kw: dict[str, Any]) -> dict[str, Any]:
    """Short timeouts, no jitter, and a sleep that records (or forbids) back-offs."""
    kw.setdefault("timeout", 2.0)
    kw.setdefault("rng", MidRng())
    kw.setdefault("sleep", sleeps.append if sleeps is not None else _no_sleep)
    return kw


def openai(script: Script, sleeps: list[float] | None = None, **kw: Any) -> OpenAICompatibleClient:
    model = kw.pop("model", "llama3")
    return OpenAICompatibleClient(script.url + "/v1", model, **_options(sleeps, kw))


def anthropic(script: Script, sleeps: list[float] | None = None, **kw: Any) -> AnthropicClient:
    model = kw.pop("model", "claude-sonnet-4-5")
    return AnthropicClient(model, base_url=script.url, **_options(sleeps, kw))


def _no_sleep(seconds: float) -> None:
    raise AssertionError(f"unexpected back-off of {seconds} s")


def oa_ok(text: str = "hi there", model: str = "llama3", finish: str = "stop") -> Reply:
    return Reply(
        200,
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": finish,
                }
            ],
            "usage": {"prompt_tokens": 17, "completion_tokens": 4, "total_tokens": 21},
        },
    )


def an_ok() -> Reply:
    return Reply(
        200,
        {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [
                {"type": "text", "text": "Hello"},
                {"type": "tool_use", "id": "t1", "name": "x", "input": {}},
                {"type": "text", "text": " world"},
            ],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 12, "output_tokens": 3, "cache_read_input_tokens": 5},
        },
    )


def oa_error(status: int, message: str, code: str | None = None) -> Reply:
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": code}
    return Reply(status, {"error": error})


def an_error(status: int, kind: str, message: str) -> Reply:
    return Reply(status, {"type": "error", "error": {"type": kind, "message": message}})


# -- success, wire format ----------------------------------------------------------


def test_openai_success_wire_format(server: Script, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    server.add(oa_ok())
    with openai(server, api_key_env=KEY_ENV) as client:
        done = client.complete(
            [
                ChatMessage("user", "hello"),
                ChatMessage("assistant", "hi"),
                ChatMessage("user", "x"),
            ],
            system="be brief",
            max_tokens=64,
            temperature=0.1,
        )
    assert done.text == "hi there"
    assert (done.provider, done.model, done.finish_reason) == ("openai", "llama3", "stop")
    assert (done.usage.input_tokens, done.usage.output_tokens) == (17, 4)
    assert done.attempts == 1 and done.seconds >= 0 and not done.truncated
    assert done.client == f"openai:{server.url}/v1:llama3"
    [seen] = server.seen
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.headers["content-type"] == "application/json"
    assert seen.body == {
        "model": "llama3",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": "hi"},
            {"role": "user", "content": "x"},
        ],
        "max_tokens": 64,
        "temperature": 0.1,
    }


def test_openai_without_key_sends_no_authorization(server: Script) -> None:
    server.add(oa_ok(finish="length"))
    done = openai(server).complete(HELLO, temperature=None)
    assert done.truncated
    [seen] = server.seen
    assert "authorization" not in seen.headers
    assert seen.body["messages"] == [{"role": "user", "content": "hello"}]
    assert "temperature" not in seen.body


def test_openai_content_parts_and_missing_usage(server: Script) -> None:
    server.add(
        Reply(
            200,
            {"choices": [{"message": {"content": [{"type": "text", "text": "a"}, {"text": "b"}]}}]},
        )
    )
    done = openai(server).complete(HELLO)
    assert done.text == "ab"
    assert done.model == "llama3"  # the server did not say: the one asked for
    assert done.usage.input_tokens is None and done.finish_reason is None


def test_anthropic_success_wire_format(server: Script, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    server.add(an_ok())
    client = anthropic(server, api_key_env=KEY_ENV)
    done = client.complete(HELLO, system="you summarise", max_tokens=300)
    assert done.text == "Hello world"
    assert done.model == "claude-sonnet-4-5-20250929"
    assert done.provider == "anthropic" and done.client == "anthropic:claude-sonnet-4-5"
    assert (done.usage.input_tokens, done.usage.output_tokens) == (17, 3)
    assert done.finish_reason == "end_turn"
    [seen] = server.seen
    assert seen.path == "/v1/messages"
    assert seen.headers["x-api-key"] == KEY
    assert seen.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in seen.headers
    assert seen.body == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 300,
        "system": "you summarise",
        "messages": [{"role": "user", "content": "hello"}],
        "temperature": 0.2,
    }
    client.close()


def test_anthropic_default_key_variable(server: Script, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server.add(an_ok())
    anthropic(server).complete(HELLO)
    assert server.seen[0].headers["x-api-key"] == KEY
    assert "system" not in server.seen[0].body


def test_everything_sent_is_redacted(server: Script) -> None:
    server.add(oa_ok(), an_ok())
    secret = "api_key=abcdefghijklmnop0123456789"
    bearer = "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.signature"
    hexkey = "deadbeef" * 5
    messages = [ChatMessage("user", f"use {secret} now"), ChatMessage("assistant", hexkey)]
    openai(server).complete(messages, system=f"header was {bearer}")
    anthropic(server, api_key_env=None).complete(messages, system=f"header was {bearer}")
    for seen in server.seen:
        sent = jsonio.dumps(seen.body).decode()
        assert "abcdefghijklmnop0123456789" not in sent
        assert "eyJhbGciOiJIUzI1NiJ9" not in sent
        assert hexkey not in sent
        assert "api_key=[REDACTED]" in sent and "[REDACTED_HEX]" in sent
        assert "Authorization: Bearer [REDACTED]" in sent
    assert server.seen[0].body["messages"][0]["role"] == "system"
    assert server.seen[1].body["system"] == "header was Authorization: Bearer [REDACTED]"


# -- the key ---------------------------------------------------------------------


def test_missing_key_variable_is_a_config_error(
    server: Script, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(LLMError) as info:
        openai(server, api_key_env=KEY_ENV).complete(HELLO)
    assert info.value.kind == "config" and info.value.attempts == 0
    assert KEY_ENV in str(info.value)
    assert server.seen == []


def test_key_is_read_at_call_time_and_never_shown(
    server: Script, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = openai(server, api_key_env=KEY_ENV)
    monkeypatch.setenv(KEY_ENV, KEY)
    server.add(oa_error(401, f"Incorrect API key provided: {KEY}.", "invalid_api_key"))
    with pytest.raises(LLMError) as info:
        client.complete(HELLO)
    err = info.value
    assert (err.kind, err.status, err.attempts) == ("auth", 401, 1)
    assert KEY not in str(err) and KEY not in repr(err.args)
    assert KEY_ENV in str(err)
    assert KEY not in repr(vars(client)) and KEY not in repr(client)
    monkeypatch.setenv(KEY_ENV, "sk-rotated-key-000000000000")
    server.add(oa_ok())
    client.complete(HELLO)
    assert server.seen[-1].headers["authorization"] == "Bearer sk-rotated-key-000000000000"


# -- retries -----------------------------------------------------------------------


def test_server_errors_back_off_doubling_then_succeed(server: Script) -> None:
    server.add(Reply(500, {"error": "boom"}), Reply(502, b"<html>bad gateway</html>"))
    server.add(oa_ok())
    sleeps: list[float] = []
    done = openai(server, sleeps).complete(HELLO)  # 3 attempts, as OpenClaw's retryAsync
    assert done.text == "hi there" and done.attempts == 3
    assert sleeps == [0.5, 1.0]
    assert len(server.seen) == 3


def test_back_off_is_capped_at_five_seconds(server: Script) -> None:
    server.add(*[Reply(500, {"error": "down"}) for _ in range(7)])
    sleeps: list[float] = []
    with pytest.raises(LLMError) as info:
        openai(server, sleeps, retries=6).complete(HELLO)
    assert (info.value.kind, info.value.status, info.value.attempts) == ("server", 500, 7)
    assert sleeps == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]


def test_jitter_bounds(server: Script) -> None:
    server.add(*[Reply(500, {"error": "down"}) for _ in range(5)])
    sleeps: list[float] = []
    with pytest.raises(LLMError):
        openai(server, sleeps, retries=4, rng=EdgeRng()).complete(HELLO)
    # 0.4 s is held at the 0.5 s floor (OpenClaw's minDelayMs)
    assert sleeps == pytest.approx([0.5, 1.2, 1.6, 4.8])

    policy = RetryPolicy()
    rng = random.Random(7)
    for retry, nominal in enumerate([0.5, 1.0, 2.0, 4.0, 8.0]):
        draws = [policy.delay(retry, rng) for _ in range(500)]
        assert min(draws) >= max(0.5, min(5.0, nominal) * 0.8) - 1e-12  # capped, then jittered
        assert max(draws) <= min(5.0, nominal * 1.2) + 1e-12
        assert all(abs(d * 1000 - round(d * 1000)) < 1e-6 for d in draws)  # whole ms
        if nominal * 1.2 < 5.0:  # really jittered: up, and down unless at the floor
            assert max(draws) > nominal * 1.1
            assert min(draws) < nominal * 0.9 or nominal == 0.5


def test_retry_after_overrides_back_off(server: Script) -> None:
    server.add(Reply(429, {"error": {"message": "slow down"}}, {"Retry-After": "2"}))
    server.add(Reply(503, {"error": "maintenance"}, {"Retry-After": "120"}))
    server.add(Reply(429, {"error": "again"}, {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}))
    server.add(oa_ok())
    sleeps: list[float] = []
    done = openai(server, sleeps, retries=3).complete(HELLO)
    assert done.attempts == 4
    # 2 s as asked; 120 s bounded to 30 s; an HTTP date is not read: computed (third retry).
    assert sleeps == [2.0, 30.0, 2.0]


def test_rate_limit_gives_up_after_three_attempts(server: Script) -> None:
    server.add(*[Reply(429, {"error": {"message": "rate limited"}}) for _ in range(4)])
    sleeps: list[float] = []
    with pytest.raises(LLMError) as info:
        openai(server, sleeps).complete(HELLO)
    assert (info.value.kind, info.value.status, info.value.attempts) == ("rate_limit", 429, 3)
    assert len(server.seen) == 3 and sleeps == [0.5, 1.0]


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_no_retry_on_client_errors(server: Script, status: int) -> None:
    server.add(oa_error(status, "nope"), oa_ok())
    with pytest.raises(LLMError) as info:
        openai(server).complete(HELLO)  # _no_sleep: any back-off fails the test
    assert info.value.status == status and info.value.attempts == 1
    assert len(server.seen) == 1


def test_timeout_is_retried(server: Script) -> None:
    server.add(Reply(delay=0.6), oa_ok())
    sleeps: list[float] = []
    started = time.monotonic()
    done = openai(server, sleeps, timeout=0.2).complete(HELLO)
    took = time.monotonic() - started
    assert done.attempts == 2 and sleeps == [0.5]
    assert 0 <= done.seconds <= took  # the whole call, in seconds (the back-off is not slept)


def test_timeout_error_when_retries_run_out(server: Script) -> None:
    server.add(Reply(delay=0.6))
    with pytest.raises(LLMError) as info:
        openai(server, timeout=0.2, retries=0).complete(HELLO)
    assert info.value.kind == "timeout" and info.value.status is None
    assert "0.2 s" in str(info.value)


def test_connection_refused_is_retried() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    sleeps: list[float] = []
    client = OpenAICompatibleClient(
        f"http://127.0.0.1:{port}/v1", "m", timeout=0.5, sleep=sleeps.append, rng=MidRng()
    )
    with pytest.raises(LLMError) as info:
        client.complete(HELLO)
    assert (info.value.kind, info.value.attempts) == ("connection", 3)
    assert sleeps == [0.5, 1.0]
    assert f"127.0.0.1:{port}" in str(info.value)


# -- cancellation ------------------------------------------------------------------


def test_cancel_during_back_off(server: Script) -> None:
    server.add(Reply(500, {"error": "down"}), oa_ok())
    flag = {"cancel": False}
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) == 2:
            flag["cancel"] = True

    with pytest.raises(Cancelled):
        openai(server, sleep=sleep).complete(HELLO, cancelled=lambda: flag["cancel"])
    assert len(server.seen) == 1  # the second attempt was never made
    assert sleeps == [SLEEP_STEP, SLEEP_STEP]  # the 0.5 s wait, in steps, cut short


def test_back_off_in_steps_still_sums_to_the_delay(server: Script) -> None:
    server.add(Reply(500, {"error": "down"}), oa_ok())
    sleeps: list[float] = []
    done = openai(server, sleeps).complete(HELLO, cancelled=lambda: False)
    assert done.attempts == 2
    assert max(sleeps) <= SLEEP_STEP and sum(sleeps) == pytest.approx(0.5)


def test_cancel_before_the_first_attempt(server: Script) -> None:
    with pytest.raises(Cancelled):
        openai(server).complete(HELLO, cancelled=lambda: True)
    assert server.seen == []


# -- error kinds -------------------------------------------------------------------


def test_malformed_json_is_bad_response(server: Script) -> None:
    server.add(Reply(200, b'{"choices": [ {"message": '))
    with pytest.raises(LLMError) as info:
        openai(server).complete(HELLO)
    assert (info.value.kind, info.value.attempts) == ("bad_response", 1)
    assert "not JSON" in str(info.value)


@pytest.mark.parametrize(
    "body",
    [
        {"id": "x", "object": "chat.completion"},
        {"choices": []},
        {"choices": [{"message": {"role": "assistant", "content": None}}]},
        [1, 2],
    ],
)
def test_missing_fields_are_bad_response(server: Script, body: Any) -> None:
    server.add(Reply(200, body))
    with pytest.raises(LLMError) as info:
        openai(server).complete(HELLO)
    assert info.value.kind == "bad_response"


def test_anthropic_missing_content_is_bad_response(server: Script) -> None:
    server.add(Reply(200, {"id": "msg", "type": "message"}))
    with pytest.raises(LLMError) as info:
        anthropic(server, api_key_env=None).complete(HELLO)
    assert info.value.kind == "bad_response"


@pytest.mark.parametrize(
    "reply",
    [
        oa_error(
            400,
            "This model's maximum context length is 8192 tokens. However, your messages "
            "resulted in 9120 tokens. Please reduce the length of the messages.",
            "context_length_exceeded",
        ),
        an_error(
            400, "invalid_request_error", "prompt is too long: 215034 tokens > 200000 maximum"
        ),
        an_error(
            400,
            "invalid_request_error",
            "input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000",
        ),
        Reply(
            400,
            {
                "error": {
                    "code": 400,
                    "message": "the request exceeds the available context size, try increasing it",
                    "type": "exceed_context_size_error",
                }
            },
        ),
        Reply(413, b"Request Entity Too Large"),
        Reply(400, {"error": "too many tokens in prompt"}),
    ],
    ids=["openai", "anthropic", "anthropic-max-tokens", "llama.cpp", "413", "plain"],
)
def test_context_overflow(server: Script, reply: Reply) -> None:
    server.add(reply)
    with pytest.raises(LLMError) as info:
        openai(server).complete(HELLO)
    assert info.value.kind == "overflow" and info.value.attempts == 1


def test_anthropic_overflow(server: Script) -> None:
    server.add(
        an_error(400, "invalid_request_error", "prompt is too long: 215034 tokens > 200000 maximum")
    )
    with pytest.raises(LLMError) as info:
        anthropic(server, api_key_env=None).complete(HELLO)
    assert (info.value.kind, info.value.status) == ("overflow", 400)
    assert "prompt is too long" in str(info.value)
    assert str(info.value).startswith("anthropic:claude-sonnet-4-5: HTTP 400")


@pytest.mark.parametrize(
    "reply",
    [
        oa_error(
            404,
            "The model `gpt-9` does not exist or you do not have access to it.",
            "model_not_found",
        ),
        Reply(
            404,
            {
                "error": {
                    "message": 'model "llama9" not found, try pulling it first',
                    "type": "api_error",
                }
            },
        ),
        an_error(404, "not_found_error", "model: claude-nope"),
        oa_error(
            400,
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            "unsupported_parameter",
        ),
        Reply(400, {"object": "error", "message": "The model `x` does not exist.", "code": 404}),
    ],
    ids=["openai-404", "ollama-404", "anthropic-404", "unsupported-parameter", "vllm"],
)
def test_capability_errors(server: Script, reply: Reply) -> None:
    server.add(reply)
    with pytest.raises(LLMError) as info:
        openai(server).complete(HELLO)
    assert info.value.kind == "capability" and info.value.attempts == 1


def test_404_without_model_is_a_config_error(server: Script) -> None:
    server.add(Reply(404, b"404 page not found"))
    with pytest.raises(LLMError) as info:
        openai(server).complete(HELLO)
    assert info.value.kind == "config"
    assert "404 page not found" in str(info.value)


def test_error_body_secrets_are_redacted(server: Script) -> None:
    server.add(Reply(500, {"error": "upstream said token=abcdefghijklmnopqrstuvwxyz012"}))
    with pytest.raises(LLMError) as info:
        openai(server, retries=0).complete(HELLO)
    assert "abcdefghijklmnopqrstuvwxyz012" not in str(info.value)
    assert "token=[REDACTED]" in str(info.value)


# -- fallback chain ----------------------------------------------------------------


def test_fallback_chain_moves_on_capability(server: Script) -> None:
    server.add(oa_error(404, "The model `big` does not exist.", "model_not_found"))
    server.add(Reply(200, b"<html>not an API</html>"))
    server.add(oa_ok(model="small"))
    chain = FallbackChain(
        [openai(server, model="big"), openai(server, model="odd"), openai(server, model="small")]
    )
    done = chain.complete(HELLO, system="s")
    assert done.text == "hi there" and done.model == "small"
    assert chain.answered_by == done.client == f"openai:{server.url}/v1:small"
    assert len(done.skipped) == 2 and "big" in done.skipped[0] and "odd" in done.skipped[1]
    assert [s.body["model"] for s in server.seen] == ["big", "odd", "small"]
    assert chain.name.count(" -> ") == 2
    chain.close()


def test_fallback_chain_stops_on_other_errors(server: Script) -> None:
    server.add(oa_error(401, "bad key"), oa_ok())
    chain = FallbackChain([openai(server, model="a"), openai(server, model="b")])
    with pytest.raises(LLMError) as info:
        chain.complete(HELLO)
    assert info.value.kind == "auth" and len(server.seen) == 1
    assert chain.answered_by is None


def test_fallback_chain_all_fail(server: Script) -> None:
    server.add(oa_error(404, "model a not found"), an_error(404, "not_found_error", "model: b"))
    chain = FallbackChain(
        [openai(server, model="a"), anthropic(server, model="b", api_key_env=None)]
    )
    with pytest.raises(LLMError) as info:
        chain.complete(HELLO)
    assert info.value.kind == "capability" and info.value.attempts == 2
    assert "openai:" in str(info.value) and "anthropic:b" in str(info.value)
    assert [s.path for s in server.seen] == ["/v1/chat/completions", "/v1/messages"]
    with pytest.raises(ValueError):
        FallbackChain([])


# -- parse_llm_spec ----------------------------------------------------------------


def test_parse_llm_spec() -> None:
    assert parse_llm_spec("offline") is None
    client = parse_llm_spec("openai:http://127.0.0.1:8080/v1:llama3")
    assert isinstance(client, OpenAICompatibleClient)
    assert (client.base_url, client.model, client.api_key_env) == (
        "http://127.0.0.1:8080/v1",
        "llama3",
        None,
    )
    assert client.name == "openai:http://127.0.0.1:8080/v1:llama3"
    # Ollama tags hold a colon: the model is everything after the URL.
    tagged = parse_llm_spec("openai:http://localhost:11434/v1:qwen2.5-coder:7b", api_key_env="K")
    assert isinstance(tagged, OpenAICompatibleClient)
    assert (tagged.base_url, tagged.model, tagged.api_key_env) == (
        "http://localhost:11434/v1",
        "qwen2.5-coder:7b",
        "K",
    )
    cloud = parse_llm_spec(
        "openai:https://api.openai.com/v1:gpt-4o-mini", api_key_env="OPENAI_API_KEY"
    )
    assert isinstance(cloud, OpenAICompatibleClient) and cloud.model == "gpt-4o-mini"
    claude = parse_llm_spec("anthropic:claude-sonnet-4-5")
    assert isinstance(claude, AnthropicClient)
    assert (claude.model, claude.api_key_env, claude.base_url) == (
        "claude-sonnet-4-5",
        "ANTHROPIC_API_KEY",
        "https://api.anthropic.com",
    )
    assert claude.name == "anthropic:claude-sonnet-4-5"
    for name in (client.name, tagged.name, cloud.name, claude.name):
        again = parse_llm_spec(name)
        assert again is not None and again.name == name


@pytest.mark.parametrize(
    "spec",
    ["", "gpt-4", "openai:llama3", "openai:http://127.0.0.1:8080/v1", "anthropic:", "ollama:x"],
)
def test_parse_llm_spec_rejects(spec: str) -> None:
    with pytest.raises(ValueError, match=r"offline.*openai:URL:MODEL.*anthropic:MODEL"):
        parse_llm_spec(spec)


# -- refusals and empty answers (issue 13) -------------------------------------------


@pytest.mark.parametrize(
    ("reply", "kind", "text"),
    [
        (oa_ok(""), "bad_response", "the answer is empty"),
        (oa_ok("  \n"), "bad_response", "the answer is empty"),
        (oa_ok("", finish="length"), "bad_response", "empty (finish reason 'length')"),
        (oa_ok("partial", finish="content_filter"), "refusal", "content_filter"),
        (
            Reply(
                200,
                {
                    "choices": [
                        {
                            "message": {"content": None, "refusal": "I can't help with that."},
                            "finish_reason": "stop",
                        }
                    ]
                },
            ),
            "refusal",
            'the model refused: "I can\'t help with that."',
        ),
    ],
)
def test_openai_empty_and_refused_answers_are_errors(
    server: Script, reply: Reply, kind: str, text: str
) -> None:
    server.add(reply)
    with pytest.raises(LLMError) as info:
        openai(server).complete(HELLO)
    assert info.value.kind == kind and text in str(info.value)
    assert not info.value.retryable and len(server.seen) == 1
    assert info.value.endpoint == f"{server.url}/v1"


def test_anthropic_refusal_stop_reason(server: Script, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server.add(
        Reply(
            200,
            {
                "type": "message",
                "content": [{"type": "text", "text": ""}],
                "stop_reason": "refusal",
                "model": "claude",
            },
        )
    )
    with pytest.raises(LLMError) as info:
        anthropic(server).complete(HELLO)
    assert info.value.kind == "refusal" and "'refusal'" in str(info.value)
    assert KEY not in str(info.value)


def test_parse_llm_spec_passes_timeouts_and_deadline() -> None:
    from core.llm import Deadline

    deadline = Deadline(30)
    client = parse_llm_spec(
        "openai:http://127.0.0.1:9/v1:m", connect_timeout=3, read_timeout=40, deadline=deadline
    )
    assert client is not None
    assert (client.timeouts.connect, client.timeouts.read) == (3, 40)
    assert client.deadline is deadline
    client.close()
    default = parse_llm_spec("anthropic:claude-x")
    assert default is not None and default.deadline is None
    assert (default.timeouts.connect, default.timeouts.read) == (60, 60)
    default.close()


def test_spec_with_credentials_in_the_url_never_shows_them(server: Script) -> None:
    server.add(Reply(500, {"error": {"message": "down"}}))
    url = server.url.replace("http://", "http://alice:s3cr3t-pw@")
    client = parse_llm_spec(f"openai:{url}/v1:m")
    assert client is not None and "s3cr3t" not in client.name
    client._policy = RetryPolicy(retries=0)
    with pytest.raises(LLMError) as info:
        client.complete(HELLO)
    assert "s3cr3t" not in str(info.value) and info.value.endpoint == f"{server.url}/v1"
    assert server.seen[0].headers["authorization"].startswith("Basic ")  # sent, not shown
    client.close()
    with pytest.raises(ValueError) as bad:
        parse_llm_spec("openai:ftp://bob:hunter2@host/v1:m")
    assert "hunter2" not in str(bad.value)


def _bounded(call: Any) -> BaseException | None:
    """What *call* raised, waited for in a thread for a bounded time (as ``qtbot.waitUntil``).

    The connect below would otherwise end with its 30 s timeout: a call still running
    after the wait means the cancel or the deadline did not cut it.
    """
    raised: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as exc:
            raised.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "still connecting: only the connect timeout would end it"
    return raised[0] if raised else None


def test_cancel_and_deadline_cut_a_connect_that_hangs() -> None:
    """A host that never completes the TCP handshake: cancel and the deadline end the wait."""
    from core.io.jobs import Cancelled
    from core.llm.deadline import Deadline
    from core.llm.providers import OpenAICompatibleClient

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(0)  # never accepts: once its backlog is full, connects hang
    port = srv.getsockname()[1]
    fillers = []
    for _ in range(8):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        fillers.append(s)
    time.sleep(0.2)
    try:
        client = OpenAICompatibleClient(
            f"http://127.0.0.1:{port}/v1", "m", connect_timeout=30, retries=0
        )
        stop = threading.Event()
        threading.Timer(0.3, stop.set).start()
        cut = _bounded(lambda: client.complete(HELLO, cancelled=stop.is_set))
        assert isinstance(cut, Cancelled)
        client.deadline = Deadline(1.0)
        cut = _bounded(lambda: client.complete(HELLO))
        assert isinstance(cut, LLMError) and cut.kind == "deadline"
        client.close()
    finally:
        for s in fillers:
            s.close()
        srv.close()


def test_a_client_made_only_to_check_a_spec_opens_no_connection_pool(monkeypatch):
    """The app makes a client per provider choice to check it: no TLS context for that."""
    from core.llm import http as llm_http
    from core.llm import parse_llm_spec

    made: list[object] = []

    class Recorder(llm_http.httpx.Client):
        def __init__(self, *args, **kwargs):
            made.append(self)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(llm_http.httpx, "Client", Recorder)
    client = parse_llm_spec("openai:https://models.example.invalid/v1:m", api_key_env=None)
    assert client is not None and client.model == "m"
    client.close()
    assert made == []
