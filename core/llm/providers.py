"""The two wire formats: OpenAI chat completions (and its many clones) and Anthropic messages."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from core.io.jsonio import as_int
from core.llm.base import Usage
from core.llm.http import BadResponse, HttpProvider, answer_error

if TYPE_CHECKING:
    import random
    from collections.abc import Callable, Sequence

    import httpx

    from core.llm.base import ChatMessage
    from core.llm.deadline import Deadline

ANTHROPIC_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"


class OpenAICompatibleClient(HttpProvider):
    """``POST {base_url}/chat/completions``: OpenAI, Ollama, llama.cpp, vLLM, LM Studio.

    Parameters
    ----------
    base_url
        The API root, e.g. ``http://127.0.0.1:11434/v1`` (Ollama) or
        ``https://api.openai.com/v1``.
    model
        Sent as ``model`` (llama.cpp ignores it).
    api_key_env
        Name of the environment variable holding the key, read at each call and
        sent as ``Authorization: Bearer``; None sends no key (local servers).
    timeout
        Seconds allowed for connecting and for each read, unless given apart.
    retries
        Retries after the first attempt on 429, 5xx, timeouts and connection errors
        (2: three attempts, as OpenClaw's summary call makes).
    transport
        An ``httpx`` transport (tests, proxies); None for the default.
    sleep, rng
        Back-off sleep and jitter source (injectable for tests).
    connect_timeout, read_timeout
        Seconds to connect, and between bytes of an answer (default: *timeout*).
    deadline
        A :class:`~core.llm.deadline.Deadline` every call must end by (see
        :meth:`~core.llm.http.HttpProvider.complete`).
    """

    provider = "openai"
    path = "/chat/completions"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str | None = None,
        timeout: float = 60.0,
        retries: int = 2,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        connect_timeout: float | None = None,
        read_timeout: float | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        super().__init__(
            base_url,
            model,
            api_key_env=api_key_env,
            timeout=timeout,
            retries=retries,
            transport=transport,
            sleep=sleep,
            rng=rng,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            deadline=deadline,
        )

    @property
    def name(self) -> str:
        """``openai:URL:MODEL``."""
        return f"openai:{self.display_url}:{self.model}"

    def build_headers(self, key: str | None) -> dict[str, str]:
        """JSON headers plus ``Authorization: Bearer`` when a key is configured."""
        headers = {"content-type": "application/json", "accept": "application/json"}
        if key is not None:
            headers["authorization"] = f"Bearer {key}"
        return headers

    def build_body(
        self,
        messages: Sequence[ChatMessage],
        system: str | None,
        max_tokens: int,
        temperature: float | None,
    ) -> dict[str, Any]:
        """The system prompt goes first, as a ``system`` message."""
        wire = [{"role": "system", "content": system}] if system is not None else []
        wire.extend({"role": m.role, "content": m.content} for m in messages)
        body: dict[str, Any] = {"model": self.model, "messages": wire, "max_tokens": max_tokens}
        if temperature is not None:
            body["temperature"] = temperature
        return body

    def parse_answer(self, data: Any) -> tuple[str, str | None, Usage, str | None]:
        """``choices[0].message.content`` (a string, or a list of text parts)."""
        if not isinstance(data, dict):
            raise BadResponse("the answer is not a JSON object")
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise answer_error(data, "choices")
        choice = choices[0]
        message = choice.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            content = "".join(
                part["text"]
                for part in content
                if isinstance(part, dict) and isinstance(part.get("text"), str)
            )
        refusal = message.get("refusal") if isinstance(message, dict) else None
        if isinstance(refusal, str) and refusal.strip():
            text = " ".join(refusal.split())[:200]
            raise BadResponse(f"the model refused: {text!r}", "refusal")
        if not isinstance(content, str):
            raise BadResponse("the answer has no choices[0].message.content")
        usage = data.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        return (
            content,
            _str_or_none(data.get("model")),
            Usage(as_int(usage.get("prompt_tokens")), as_int(usage.get("completion_tokens"))),
            _str_or_none(choice.get("finish_reason")),
        )


class AnthropicClient(HttpProvider):
    """``POST {base_url}/v1/messages`` with ``anthropic-version: 2023-06-01``.

    Parameters are those of :class:`OpenAICompatibleClient`; the key (sent as
    ``x-api-key``) comes from ``ANTHROPIC_API_KEY`` unless *api_key_env* names
    another variable (None sends no key, for a proxy that adds it).
    """

    provider = "anthropic"
    path = "/v1/messages"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = ANTHROPIC_URL,
        api_key_env: str | None = "ANTHROPIC_API_KEY",
        timeout: float = 60.0,
        retries: int = 2,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        connect_timeout: float | None = None,
        read_timeout: float | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        super().__init__(
            base_url,
            model,
            api_key_env=api_key_env,
            timeout=timeout,
            retries=retries,
            transport=transport,
            sleep=sleep,
            rng=rng,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            deadline=deadline,
        )

    @property
    def name(self) -> str:
        """``anthropic:MODEL``."""
        return f"anthropic:{self.model}"

    def build_headers(self, key: str | None) -> dict[str, str]:
        """JSON headers, ``anthropic-version`` and ``x-api-key`` when a key is configured."""
        headers = {
            "content-type": "application/json",
            "accept": "application/json",
            "anthropic-version": ANTHROPIC_VERSION,
        }
        if key is not None:
            headers["x-api-key"] = key
        return headers

    def build_body(
        self,
        messages: Sequence[ChatMessage],
        system: str | None,
        max_tokens: int,
        temperature: float | None,
    ) -> dict[str, Any]:
        """The system prompt goes in the top-level ``system`` field."""
        body: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens}
        if system is not None:
            body["system"] = system
        body["messages"] = [{"role": m.role, "content": m.content} for m in messages]
        if temperature is not None:
            body["temperature"] = temperature
        return body

    def parse_answer(self, data: Any) -> tuple[str, str | None, Usage, str | None]:
        """The ``text`` blocks of ``content``, concatenated (other blocks are skipped).

        Input tokens include cache reads and writes, which Anthropic counts apart.
        """
        if not isinstance(data, dict):
            raise BadResponse("the answer is not a JSON object")
        content = data.get("content")
        if not isinstance(content, list):
            raise answer_error(data, "content")
        text = "".join(
            block["text"]
            for block in content
            if isinstance(block, dict)
            and block.get("type") == "text"
            and isinstance(block.get("text"), str)
        )
        usage = data.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        counts = [
            as_int(usage.get(k))
            for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        ]
        input_tokens = None if counts[0] is None else sum(c or 0 for c in counts)
        return (
            text,
            _str_or_none(data.get("model")),
            Usage(input_tokens, as_int(usage.get("output_tokens"))),
            _str_or_none(data.get("stop_reason")),
        )


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
