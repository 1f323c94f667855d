"""The six redaction patterns of memory-context, in order, then memlens's extras."""

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
    # the agent's standalone pattern is case-sensitive; memlens masks any case
    ("bearer abcdefghijklmnopqrstuvwxyz", "bearer [REDACTED]"),
    ("Bearer " + "x" * 19, "Bearer " + "x" * 19),  # under 20 chars
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


BROADER = [
    ("export OPENAI_API_KEY=sk-abcdefghijklmnopqrst", "export OPENAI_API_KEY=[REDACTED]"),
    ("OPENAI_API_KEY=abc12345", "OPENAI_API_KEY=[REDACTED]"),
    (
        "export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "export GITHUB_TOKEN=[REDACTED]",
    ),
    ('{"apiKey": "sk-abcdefghijklmnopqrst"}', '{"apiKey": "[REDACTED]"}'),
    ('{"token": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}', '{"token": "[REDACTED]"}'),
    (
        'process.env.SLACK_BOT_TOKEN = "xoxb-1234-5678-abcdef"',
        'process.env.SLACK_BOT_TOKEN = "[REDACTED]"',
    ),
    (
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "AWS_SECRET_ACCESS_KEY=[REDACTED]",
    ),
    ("DB_PASSWORD: correcthorse", "DB_PASSWORD: [REDACTED]"),
    (
        "curl -H 'authorization: bearer abcdefghijklmnopqrstuvwxyz123'",
        "curl -H 'authorization: bearer [REDACTED]",  # the agent's pattern eats the quote
    ),
    ("postgres://bob:hunter2secret@db:5432/app", "postgres://bob:[REDACTED]@db:5432/app"),
    ("key sk-ant-api03-abcdefghijklmnopqrstuvwxyz in a sentence", "key [REDACTED] in a sentence"),
    ("AKIAIOSFODNN7EXAMPLE", "[REDACTED]"),
    # ordinary code and prose keep their words
    ("max_tokens=4096, tokensBefore: 175004", "max_tokens=4096, tokensBefore: 175004"),
    (
        "interface C { apiKey: string; token: undefined }",
        "interface C { apiKey: string; token: undefined }",
    ),
    (
        "the tokenizer splits words; secrets live in the vault",
        "the tokenizer splits words; secrets live in the vault",
    ),
    ("https://example.com:8080/a@b", "https://example.com:8080/a@b"),
]


@pytest.mark.parametrize(("text", "want"), BROADER)
def test_masks_more_than_the_agent(text, want):
    assert redact(text) == want


def test_every_agent_pattern_still_applies_first():
    from core.redact import EXTRA_PATTERNS, PATTERNS

    assert len(PATTERNS) == 6 and EXTRA_PATTERNS
    # what the agent masks, memlens masks identically (its label and marker)
    assert redact("token: abcdefghijklmnopqrstuvwxyz") == "token: [REDACTED]"
    assert redact("x " + "0f" * 20) == "x [REDACTED_HEX]"


def test_linear_time_on_adversarial_text():
    # No timing assert: a catastrophic pattern would take minutes on these, so a
    # generous bound catches it without flaking on a busy machine.
    import threading

    size = 1_000_000
    units = [
        "a-",
        "_.",
        "token:" + " " * 40,
        "://a:",
        "sk-",
        "eyJa.",
        "eyJ-",
        "[REDACTED_B64].",
        "-----BEGIN PRIVATE KEY-----\nAAAA\n",
        "-----BEGIN RSA PRIVATE KEY-----\\n",
        "-----END PRIVATE KEY-----",
        "AKIAAAAAAAAAAAAAAAAA ",
        "[REDACTED] ",
        "PASSWORD=",
        'password: "',
        "Authorization: ",
        "Cookie: a=",
        "--token ",
        "<password>",
        "?token=",
        "bearer ",
        "A",
        "a/",
    ]
    texts = [u * (size // len(u)) for u in units]
    texts.append("".join(units) * (size // len("".join(units))))
    done: list[int] = []

    def work():
        for text in texts:
            redact(text)
            done.append(1)

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(timeout=20 * len(texts))
    assert len(done) == len(texts), f"stuck on {units[len(done)]!r}"


def test_maybe_redact_switch():
    secret = "token=abcdefghijklmnopqrstuvwxyz"
    assert maybe_redact(secret, False) == secret
    assert maybe_redact(secret, True) == "token=[REDACTED]"


def test_idempotent():
    text = " ".join(t for t, _ in [*CASES, *BROADER])
    once = redact(text)
    assert redact(once) == once
