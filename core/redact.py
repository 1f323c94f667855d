"""Secret redaction: memory-context's ``redaction.ts`` pattern for pattern, then more.

Applied before memlens writes text or sends it to an LLM. First the agent's six
patterns, in its order (:data:`PATTERNS`): Authorization headers, standalone
Bearer tokens, ``api_key``-style values, ``token=`` values, 32+ hex chars and
64+ base64 chars. Then memlens's own (:data:`EXTRA_PATTERNS`), for what those
miss: ``bearer`` in any case, env-style and JSON keys that end in a secret word
(``OPENAI_API_KEY=``, ``GITHUB_TOKEN=``, ``"apiKey": "..."``, ``password:``),
passwords in URLs and well-known key prefixes. Masking more than the agent is
fine; masking less is not. Labels are kept; values become ``[REDACTED]``
(``[REDACTED_HEX]``, ``[REDACTED_B64]``).
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


# The key's own prefix (GITHUB_, OPENAI_, client) stays outside the match: the
# pattern starts at the secret word, so its cost stays linear in the text.
_SECRET_WORD = (
    r"(?:api[_\-]?key|token|secret|password|passwd|access[_\-]?key|private[_\-]?key"
    r"|credentials?)"
)
_SPARED = r"(?!\[REDACTED|(?:undefined|null|true|false|string|number|boolean)\b)"
_VALUE_END = _S[1:-1] + "\"'<>,;"

EXTRA_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # bearer in any case (the agent's standalone pattern wants "Bearer")
    (
        re.compile(rf"\b(bearer{_S}+){_SPARED}[A-Za-z0-9_\-.~+/]{{20,}}=*", re.I | re.A),
        r"\1[REDACTED]",
    ),
    # KEY=value, KEY: value, "key": "value" where the key ends in a secret word
    (
        re.compile(
            rf"({_SECRET_WORD}[\"']?{_S}*[:=]{_S}*[\"']?){_SPARED}[^{_VALUE_END}]{{8,}}",
            re.I | re.A,
        ),
        r"\1[REDACTED]",
    ),
    # scheme://user:password@host
    (re.compile(r"(://[^\s:/@]+:)[^\s:/@]+(@)", re.A), r"\1[REDACTED]\2"),
    # well-known key prefixes: OpenAI/Anthropic, GitHub, Slack, AWS access key ids
    (
        re.compile(
            r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}"
            r"|xox[abposr]-[A-Za-z0-9\-]{10,}|AKIA[0-9A-Z]{16}\b)",
            re.A,
        ),
        "[REDACTED]",
    ),
)


def redact(text: str) -> str:
    """Mask secrets in *text*: the agent's six patterns in its order, then the extras."""
    for pattern, replacement in PATTERNS:
        text = pattern.sub(replacement, text)
    for pattern, replacement in EXTRA_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def maybe_redact(text: str, enabled: bool) -> str:
    """Redact when *enabled* (the ``memoryContext.redaction`` setting)."""
    return redact(text) if enabled else text
