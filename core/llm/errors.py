"""Reading an error answer: its text, and which :data:`~core.llm.base.ErrorKind` it is."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from core.io import jsonio

if TYPE_CHECKING:
    import httpx

    from core.llm.base import ErrorKind

_DETAIL_CHARS = 300

# OpenAI / vLLM: "This model's maximum context length is 8192 tokens", code
# context_length_exceeded; Anthropic: "prompt is too long: 210000 tokens > 200000
# maximum", "input length and `max_tokens` exceed context limit"; llama.cpp: "the
# request exceeds the available context size" (exceed_context_size_error); others:
# "too many tokens", "context window".
_OVERFLOW = re.compile(
    r"context[ _-]?(length|window|size|limit)"
    r"|maximum context|max(imum)?[ _-]?context"
    r"|too many tokens|prompt is too long|input is too long|prompt too long"
    r"|exceeds? (the )?(available |maximum )?context"
    r"|reduce the length of the (messages|prompt)"
    r"|input is too large"
)

# OpenAI: model_not_found, "The model `x` does not exist", unsupported_parameter /
# unsupported_value ("'max_tokens' is not supported with this model"); Ollama:
# 'model "x" not found, try pulling it first'; Anthropic: not_found_error "model: x";
# vLLM/LM Studio/pydantic servers: "does not support", "extra inputs are not permitted".
_CAPABILITY = re.compile(
    r"model[_ ]not[_ ]found|not_found_error|model\b.{0,80}\b(not found|does not exist"
    r"|is not available|not supported|unknown|no such)"
    r"|(unknown|invalid|unsupported) model"
    r"|unsupported[_ ](parameter|value)|unknown (parameter|field|argument)"
    r"|unrecognized (request )?argument|not supported|does not support"
    r"|extra inputs are not permitted|not implemented",
    re.S,
)


def error_detail(response: httpx.Response) -> tuple[str, str]:
    """The server's explanation of an error answer, and a lowercase text to classify.

    Understands the OpenAI (``{"error": {"message", "type", "code"}}``), Anthropic
    (``{"type": "error", "error": {...}}``), Ollama (``{"error": "..."}``), vLLM
    (``{"message", "type", "code"}``) and FastAPI (``{"detail": ...}``) shapes;
    anything else is shown as (shortened) text.
    """
    try:
        data: Any = jsonio.loads(response.content)
    except jsonio.JSONDecodeError:
        data = None
    message = ""
    codes: list[str] = []
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, str):
            message = err
        elif isinstance(err, dict):
            message = _text(err.get("message")) or _text(err.get("detail"))
            codes = [_text(err.get(key)) for key in ("type", "code")]
        if not message:
            message = _text(data.get("message")) or _text(data.get("detail"))
    if not message:
        message = response.text
    message = " ".join(message.split())
    if len(message) > _DETAIL_CHARS:
        message = message[: _DETAIL_CHARS - 3] + "..."
    haystack = " ".join([message, *codes]).lower()
    return message, haystack


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return jsonio.dumps(value).decode("utf-8", "replace")


def looks_like_overflow(haystack: str) -> bool:
    """True for an error that says the prompt does not fit the context window."""
    return _OVERFLOW.search(haystack) is not None


def looks_like_capability(haystack: str) -> bool:
    """True for an error that says the model is unknown or rejects a parameter."""
    return _CAPABILITY.search(haystack) is not None


def classify(status: int, haystack: str) -> ErrorKind:
    """The kind of an HTTP error answer.

    Parameters
    ----------
    status
        The HTTP status (>= 300).
    haystack
        Lowercase message, type and code from :func:`error_detail`.
    """
    if status in (401, 402, 403):
        return "auth"
    if status == 429:
        return "rate_limit"
    if status == 408:
        return "timeout"
    if status == 413 or (status >= 400 and looks_like_overflow(haystack)):
        return "overflow"
    if status == 501:
        return "capability"
    if status >= 500:
        return "server"
    if status == 404:
        # A 404 that does not mention the model is a wrong URL (e.g. missing /v1).
        return "capability" if "model" in haystack else "config"
    if looks_like_capability(haystack) or status in (400, 422):
        # An unexplained 400/422 means this endpoint rejects the request as built:
        # another model or server may accept it.
        return "capability"
    return "config"


LABELS: dict[ErrorKind, str] = {
    "auth": "credentials refused",
    "rate_limit": "rate limited",
    "server": "server error",
    "timeout": "timed out",
    "connection": "connection failed",
    "bad_response": "unusable answer",
    "overflow": "prompt too long for the model's context window",
    "capability": "the model cannot serve this request",
    "config": "check the endpoint settings",
    "refusal": "the model refused",
    "deadline": "total time limit reached",
}
