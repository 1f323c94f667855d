"""LLM clients over httpx: OpenAI-compatible servers and Anthropic, with retries and fallback.

Calls are synchronous; run them in a worker thread. Every text sent is redacted
first (:func:`core.safety.redact.redact`), and API keys are read from the environment
at call time, never stored.
"""

from __future__ import annotations

from core.llm.base import (
    DEFAULT_MAX_TOKENS,
    ChatMessage,
    Completion,
    ErrorKind,
    LLMClient,
    LLMError,
    Usage,
)
from core.llm.chain import FALL_THROUGH, FallbackChain
from core.llm.deadline import Deadline
from core.llm.providers import AnthropicClient, OpenAICompatibleClient
from core.llm.retry import RetryPolicy
from core.llm.spec import parse_llm_spec

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "FALL_THROUGH",
    "AnthropicClient",
    "ChatMessage",
    "Completion",
    "Deadline",
    "ErrorKind",
    "FallbackChain",
    "LLMClient",
    "LLMError",
    "OpenAICompatibleClient",
    "RetryPolicy",
    "Usage",
    "parse_llm_spec",
]
