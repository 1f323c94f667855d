"""Secret redaction, pattern for pattern as memory-context's ``redaction.ts``.

Applied, in this order, before memlens writes text or sends it to an LLM:
Authorization headers, standalone Bearer tokens, ``api_key``-style values,
``token=`` values, 32+ hex chars and 64+ base64 chars. Labels are kept; values
become ``[REDACTED]`` (``[REDACTED_HEX]``, ``[REDACTED_B64]``).
"""

from __future__ import annotations

import re

# JavaScript's \s; \b and the classes below are ASCII as in JS without the u flag.
_S = "[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"
_NS = _S.replace("[", "[^", 1)

PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(rf"\b(Authorization{_S}*[:=]{_S}*)(Bearer{_S}+){_NS}{{20,}}", re.I | re.A),
        r"\1\2[REDACTED]",
    ),
    (re.compile(rf"\bBearer{_S}+[A-Za-z0-9_\-.]{{20,}}", re.A), "Bearer [REDACTED]"),
    (
        re.compile(
            rf"\b(api[_-]?key{_S}*[:=]{_S}*[\"']?)[A-Za-z0-9_\-./+]{{16,}}[\"']?", re.I | re.A
        ),
        r"\1[REDACTED]",
    ),
    (
        re.compile(rf"\b(token{_S}*[:=]{_S}*[\"']?)[A-Za-z0-9_\-./+]{{20,}}[\"']?", re.I | re.A),
        r"\1[REDACTED]",
    ),
    (re.compile(r"\b[0-9a-f]{32,}\b", re.I | re.A), "[REDACTED_HEX]"),
    (re.compile(r"\b[A-Za-z0-9+/]{64,}={0,2}\b", re.A), "[REDACTED_B64]"),
)


def redact(text: str) -> str:
    """Mask secrets in *text* (the agent's six patterns, in its order)."""
    for pattern, replacement in PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def maybe_redact(text: str, enabled: bool) -> str:
    """Redact when *enabled* (the ``memoryContext.redaction`` setting)."""
    return redact(text) if enabled else text
