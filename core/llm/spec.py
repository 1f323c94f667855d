"""``--llm`` specs: ``offline``, ``openai:URL:MODEL``, ``anthropic:MODEL``."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from core.llm.providers import AnthropicClient, OpenAICompatibleClient

if TYPE_CHECKING:
    from core.llm.deadline import Deadline
    from core.llm.http import HttpProvider

SPEC_FORMS = (
    "'offline'",
    "'openai:URL:MODEL' (e.g. openai:http://127.0.0.1:11434/v1:llama3.1:8b)",
    "'anthropic:MODEL' (e.g. anthropic:claude-sonnet-4-5)",
)

_USERINFO = re.compile(r"(?<=://)[^/@\s]*@")

# The URL ends where its path ends: scheme://host[:port][/path-without-colons]. The
# port is taken only when followed by '/', ':' or the end, so that the model, which
# may itself hold colons (Ollama tags such as llama3.1:8b), is all that follows.
_OPENAI = re.compile(
    r"(?P<url>https?://(?:[^/@\s]*@)?(?:\[[0-9A-Fa-f:.]+\]|[^/:\s\[\]@]+)"
    r"(?::\d+(?=[/:]|$))?+(?:/[^:\s]*)?)"
    r":(?P<model>\S+)"
)


def parse_llm_spec(
    spec: str,
    *,
    api_key_env: str | None = None,
    connect_timeout: float | None = None,
    read_timeout: float | None = None,
    deadline: Deadline | None = None,
) -> HttpProvider | None:
    """The client a spec names, or None for ``offline``.

    Parameters
    ----------
    spec
        ``offline``; ``openai:URL:MODEL`` for any OpenAI-compatible server (the
        model is everything after the URL, colons included; a ``user:password@``
        in the URL is sent as basic auth and never shown); ``anthropic:MODEL``.
    api_key_env
        Environment variable holding the key. None means no key for ``openai:``
        (local servers) and ``ANTHROPIC_API_KEY`` for ``anthropic:``.
    connect_timeout, read_timeout
        Seconds to connect, and between bytes of an answer (None: the client's
        default of 60 s).
    deadline
        The total time limit of the job the client serves (None: none).

    Raises
    ------
    ValueError
        For any other spec; the message lists the accepted forms.
    """
    options: dict[str, Any] = {
        "connect_timeout": connect_timeout,
        "read_timeout": read_timeout,
        "deadline": deadline,
    }
    text = spec.strip()
    if text == "offline":
        return None
    kind, _, rest = text.partition(":")
    if kind == "openai":
        match = _OPENAI.fullmatch(rest)
        if match is not None:
            return OpenAICompatibleClient(
                match["url"], match["model"], api_key_env=api_key_env, **options
            )
    elif kind == "anthropic" and rest and not any(c.isspace() for c in rest):
        return AnthropicClient(rest, api_key_env=api_key_env or "ANTHROPIC_API_KEY", **options)
    shown = _USERINFO.sub("", spec)  # never echo a password given in the URL
    raise ValueError(f"unknown LLM spec {shown!r}: use one of " + ", ".join(SPEC_FORMS))
