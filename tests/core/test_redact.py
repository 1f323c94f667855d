"""The six redaction patterns of memory-context, in order."""

from __future__ import annotations

import pytest

from core.redact import maybe_redact, redact

CASES = [
    (
        "Authorization: Bearer eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.abcdef.ghijkl",
        "Authorization: Bearer [REDACTED]",
    ),
    ("authorization = bearer abcdefghijklmnopqrstuvwxyz", "authorization = bearer [REDACTED]"),
    ("curl -H 'X: Bearer abcdefghijklmnopqrstu_-.' x", "curl -H 'X: Bearer [REDACTED]' x"),
    ("bearer abcdefghijklmnopqrstuvwxyz", "bearer abcdefghijklmnopqrstuvwxyz"),  # case-sensitive
    ('apiKey: "sk-proj-abc123def456ghi789jkl012"', 'apiKey: "[REDACTED]'),
    ("API_KEY=abcdefghijklmnop", "API_KEY=[REDACTED]"),
    ("api-key = 'abcdefghijklmnopqr'", "api-key = '[REDACTED]"),
    ("api_key=short", "api_key=short"),  # under 16 chars
    ('token = "FAKE_TOKEN_VALUE_abc123def456ghi789"', 'token = "[REDACTED]'),
    ("TOKEN: abcdefghijklmnopqrstuvwxyz", "TOKEN: [REDACTED]"),
    (
        "endpointSecret = c0a6592f0b276f3cd6cca09a631f60a9e22fe2703ae47975",
        "endpointSecret = [REDACTED_HEX]",
    ),
    ("sha " + "A" * 31 + "0", "sha [REDACTED_HEX]"),
    ("blob " + "ab+/" * 16 + "x==", "blob [REDACTED_B64]=="),
    # JS \\b semantics: a run ending in "/" has no word boundary after it, so no match
    ("blob " + "ab+/" * 16, "blob " + "ab+/" * 16),
    (
        "I created src/payment/webhook.ts with Stripe integration",
        "I created src/payment/webhook.ts with Stripe integration",
    ),
    (
        "const port = 18789; const host = 'localhost';",
        "const port = 18789; const host = 'localhost';",
    ),
    ("deadbeef" * 3, "deadbeef" * 3),  # 24 hex chars: kept
]


@pytest.mark.parametrize(("text", "want"), CASES)
def test_patterns(text, want):
    assert redact(text) == want


def test_maybe_redact_switch():
    secret = "token=abcdefghijklmnopqrstuvwxyz"
    assert maybe_redact(secret, False) == secret
    assert maybe_redact(secret, True) == "token=[REDACTED]"


def test_idempotent():
    text = " ".join(t for t, _ in CASES)
    once = redact(text)
    assert redact(once) == once
