"""The six redaction patterns of memory-context, in order, then memlens's extras."""

from __future__ import annotations

import orjson
import pytest

from core.safety.redact import maybe_redact, redact

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


# Issue 13: every common secret shape (all fake), with what stays and what goes.
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYFAKEFAKEKY"
PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACBFAKEFAKEFAKEFAKE=\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJGQUtFIn0.FAKE_fake-FAKE_fake-FAKE"
SHAPES = [
    # OpenAI, Anthropic
    ("OPENAI_KEY: sk-FAKEfakeFAKEfake0123456789FAKEfake01234567", "OPENAI_KEY: [REDACTED]"),
    (
        "client = OpenAI(api_key='sk-proj-FAKE_fake-FAKE0123456789abcdefFAKE')",
        "client = OpenAI(api_key='[REDACTED])",  # the agent's pattern eats the quote
    ),
    (
        "key sk-ant-api03-FAKEfake_FAKE-fake0123456789FAKEfakeFAKE-AA in the log",
        "key [REDACTED] in the log",
    ),
    # Stripe: secret and restricted keys; publishable keys are public by design
    ("stripe.api_key = 'sk_live_FAKEfake0123456789FAKEfake'", "stripe.api_key = '[REDACTED]"),
    ("charge(key='sk_test_FAKEfake0123456789FAKEfake')", "charge(key='[REDACTED]')"),
    (
        "rk_live_FAKEfake0123456789FAKEfake rk_test_FAKEfake0123456789FAKEfake "
        "pk_live_FAKEfake0123456789FAKEfake",
        "[REDACTED] [REDACTED] pk_live_FAKEfake0123456789FAKEfake",
    ),
    # GitHub
    (
        "git push https://ghp_FAKEfake0123456789FAKEfake01234567@github.com/o/r.git",
        "git push https://[REDACTED]@github.com/o/r.git",
    ),
    (
        "gho_FAKEfake0123456789FAKEfake012345678 ghu_FAKEfake0123456789FAKEfake012345678 "
        "ghs_FAKEfake0123456789FAKEfake012345678 ghr_FAKEfake0123456789FAKEfake012345678",
        "[REDACTED] [REDACTED] [REDACTED] [REDACTED]",
    ),
    (
        "GH=github_pat_11FAKEFAKE0123456789ab_FAKEfake0123456789FAKEfake0123456789"
        "FAKEfake0123456789FAKE1",
        "GH=[REDACTED]",
    ),
    # Slack
    (
        "xoxb-0000000000-0000000000000-FAKEfakeFAKEfakeFAKEfake xoxp-1-2-3-FAKEFAKEFAKE "
        "xoxa-2-FAKEfake0123 xoxr-FAKEfake0123 xoxs-FAKEfake0123 xapp-1-A000-000-FAKEfake0123",
        "[REDACTED] [REDACTED] [REDACTED] [REDACTED] [REDACTED] [REDACTED]",
    ),
    (
        "https://hooks.slack.com/services/T0000/B0000/FAKEfakeFAKEfake",
        "https://hooks.slack.com/services/[REDACTED]",
    ),
    # AWS: key ids, and secret keys next to them or labelled
    (f"AKIAFAKEFAKEFAKEFAKE {AWS_SECRET}", "[REDACTED] [REDACTED]"),
    (f"ASIAFAKEFAKEFAKEFAKE:{AWS_SECRET}", "[REDACTED]:[REDACTED]"),
    (
        f"AccessKeyId,SecretAccessKey\nAKIAFAKEFAKEFAKEFAKE,{AWS_SECRET}",
        "AccessKeyId,SecretAccessKey\n[REDACTED],[REDACTED]",
    ),
    (f"aws_secret_access_key = {AWS_SECRET}", "aws_secret_access_key = [REDACTED]"),
    (f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}", "AWS_SECRET_ACCESS_KEY=[REDACTED]"),
    (f'{{"SecretAccessKey": "{AWS_SECRET}"}}', '{"SecretAccessKey": "[REDACTED]"}'),
    (
        f"aws configure set aws_secret_access_key {AWS_SECRET}",
        "aws configure set aws_secret_access_key [REDACTED]",
    ),
    ("AWS_SESSION_TOKEN=FQoGZXIvYXdzFAKEfakeFAKEfake", "AWS_SESSION_TOKEN=[REDACTED]"),
    # Google, npm, Hugging Face
    (
        "https://maps.googleapis.com/maps/api/geocode/json?key=AIzaFAKEfake0123456789FAKEfake0123456",
        "https://maps.googleapis.com/maps/api/geocode/json?key=[REDACTED]",
    ),
    (
        "//registry.npmjs.org/:_authToken=npm_FAKEfake0123456789FAKEfake0123456789",
        "//registry.npmjs.org/:_authToken=[REDACTED]",
    ),
    (
        "HF_TOKEN=hf_FAKEfakeFAKEfakeFAKEfakeFAKEfake01 ; login(hf_FAKEfakeFAKEfakeFAKEfakeFAKEfake01)",
        "HF_TOKEN=[REDACTED] ; login([REDACTED])",
    ),
    # JWTs, all three parts
    (f"curl -H 'Authorization: Bearer {JWT}' x", "curl -H 'Authorization: Bearer [REDACTED] x"),
    (f"id_token {JWT} seen", "id_token [REDACTED] seen"),
    (f'{{"text":"token is {JWT}\\nnext"}}', '{"text":"token is [REDACTED]\\nnext"}'),
    # PEM private keys: every line, also in JSON strings, source code, cut-off output
    (PEM, "-----BEGIN OPENSSH PRIVATE KEY-----\n[REDACTED]\n-----END OPENSSH PRIVATE KEY-----"),
    (
        orjson.dumps({"private_key": PEM}).decode(),
        # the agent's base64 pattern took the "n" of the first "\\n" with the first line
        '{"private_key":"-----BEGIN OPENSSH PRIVATE KEY-----[REDACTED]\\n'
        '-----END OPENSSH PRIVATE KEY-----"}',
    ),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,FAKEFAKE\n"
        "\nMIIEFAKEfakeFAKE\nfake==\n-----END RSA PRIVATE KEY-----",
        "-----BEGIN RSA PRIVATE KEY-----\n[REDACTED]\n-----END RSA PRIVATE KEY-----",
    ),
    (
        "-----BEGIN EC PRIVATE KEY-----\r\nMHcCAQEEIFAKEfakeFAKEfake\r\n-----END EC PRIVATE KEY-----\r\n",
        "-----BEGIN EC PRIVATE KEY-----\r\n[REDACTED]\r\n-----END EC PRIVATE KEY-----\r\n",
    ),
    (
        'key = (\n    "-----BEGIN PRIVATE KEY-----\\n"\n    "MIIEvFAKEfakeFAKEfake\\n"\n'
        '    "-----END PRIVATE KEY-----\\n"\n)',
        'key = (\n    "-----BEGIN PRIVATE KEY-----\\n[REDACTED]-----END PRIVATE KEY-----\\n"\n)',
    ),
    (
        "cat id_rsa\n-----BEGIN PRIVATE KEY-----\nMIIEvFAKEfakeFAKEfake0123\nFAKEfakeFAKEfake0123\n"
        "[output truncated]",
        "cat id_rsa\n-----BEGIN PRIVATE KEY-----\n[REDACTED]\n[output truncated]",
    ),
    (
        "-----BEGIN DSA PRIVATE KEY-----\nMIIBuwIBAAKBgQFAKEfake\n-----END DSA PRIVATE KEY-----",
        "-----BEGIN DSA PRIVATE KEY-----\n[REDACTED]\n-----END DSA PRIVATE KEY-----",
    ),
    (
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHzBJBgkqhkiG9w0BBQ0wFAKE\n"
        "-----END ENCRYPTED PRIVATE KEY-----",
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\n[REDACTED]\n-----END ENCRYPTED PRIVATE KEY-----",
    ),
    # Authorization and other headers
    ("Authorization: Bearer abcdefghijklmnop1234", "Authorization: Bearer [REDACTED]"),
    ("authorization: bearer abcdefghijklmnop1234", "authorization: bearer [REDACTED]"),
    ("Authorization: Basic RkFLRTpGQUtF", "Authorization: Basic [REDACTED]"),
    (
        "Authorization: token ghp_FAKEfakeFAKEfake0123456789FAKEfake01",
        "Authorization: token [REDACTED]",
    ),
    ("x-api-key: FAKEfake01234567", "x-api-key: [REDACTED]"),
    ("X-Auth-Token: FAKEfake0123456789", "X-Auth-Token: [REDACTED]"),
    (
        "Set-Cookie: session=FAKEfake0123; Path=/; HttpOnly",
        "Set-Cookie: session=[REDACTED]; Path=/; HttpOnly",
    ),
    # passwords in URLs
    ("postgres://user:FAKEpass@host/db", "postgres://user:[REDACTED]@host/db"),
    ("redis://:FAKEpassword01@cache:6379/0", "redis://:[REDACTED]@cache:6379/0"),
    (
        "mongodb+srv://admin:FAKE%40pass@cluster0.example.net/db",
        "mongodb+srv://admin:[REDACTED]@cluster0.example.net/db",
    ),
    (
        "https://x-access-token:FAKEfake0123@github.com/o/r",
        "https://x-access-token:[REDACTED]@github.com/o/r",
    ),
    ("see ?access_token=FAKEfake0123&page=2", "see ?access_token=[REDACTED]&page=2"),
    # .env-style lines
    ("DATABASE_PASSWORD=FAKEpass01", "DATABASE_PASSWORD=[REDACTED]"),
    (
        "MY_SERVICE_KEY=abc\nDB_PASSWORD=1234\npassword: abc",
        "MY_SERVICE_KEY=[REDACTED]\nDB_PASSWORD=[REDACTED]\npassword: [REDACTED]",
    ),
    ("MY_SERVICE_KEY=FAKEfake01", "MY_SERVICE_KEY=[REDACTED]"),
    ("STRIPE_SECRET=FAKEfake01", "STRIPE_SECRET=[REDACTED]"),
    ('export FOO_TOKEN="FAKE fake 01"', 'export FOO_TOKEN="[REDACTED]"'),
    (
        "my_service_key=FAKEfake01\nexport stripe_key='FAKE 01'",
        "my_service_key=[REDACTED]\nexport stripe_key='[REDACTED]'",
    ),
    (
        "settings.py: SECRET_KEY = 'django-insecure-FAKEfake0123'",
        "settings.py: SECRET_KEY = '[REDACTED]'",
    ),
    ('password = "correct horse battery staple"', 'password = "[REDACTED]"'),
    ("DB_PASSWORD=pa;ss,wo&rd next", "DB_PASSWORD=[REDACTED] next"),
    (
        "Server=db;User Id=sa;Password=FAKEpass01;Database=app",
        "Server=db;User Id=sa;Password=[REDACTED];Database=app",
    ),
    (
        "https://x.example/login?user=bob&password=FAKEpass01&next=/home",
        "https://x.example/login?user=bob&password=[REDACTED]&next=/home",
    ),
    # command lines, XML
    ("mysql -u root --password=FAKEpass01 app", "mysql -u root --password=[REDACTED] app"),
    ("curl -u admin:FAKEpass01 https://x", "curl -u admin:[REDACTED] https://x"),
    ("<password>FAKEpass01</password>", "<password>[REDACTED]</password>"),
    # JSON strings, escapes, markdown
    (
        orjson.dumps(
            {
                "arguments": orjson.dumps(
                    {"env": {"OPENAI_API_KEY": "sk-FAKEfake0123456789"}}
                ).decode()
            }
        ).decode(),
        '{"arguments":"{\\"env\\":{\\"OPENAI_API_KEY\\":\\"[REDACTED]\\"}}"}',
    ),
    (
        "line one\\nsk-FAKEfakeFAKEfake0123456789 in an escaped string",
        "line one\\n[REDACTED] in an escaped string",
    ),
    (
        "```bash\nexport ANTHROPIC_API_KEY=sk-ant-api03-FAKEfakeFAKEfake0123456789-AA\n```",
        "```bash\nexport ANTHROPIC_API_KEY=[REDACTED]\n```",
    ),
    (
        "| service | key |\n|---|---|\n| npm | `npm_FAKEfakeFAKEfake0123456789FAKEfake01` |",
        "| service | key |\n|---|---|\n| npm | `[REDACTED]` |",
    ),
    (
        "2026-01-01T00:00:00Z INFO using ghs_FAKEfakeFAKEfake0123456789FAKEfake01 for auth",
        "2026-01-01T00:00:00Z INFO using [REDACTED] for auth",
    ),
]


@pytest.mark.parametrize(("text", "want"), SHAPES)
def test_every_common_secret_shape(text, want):
    assert redact(text) == want
    assert redact(want) == want


KEPT = [
    "task-runner risk-assessment disk-usage sk_learn sklearn skip-tests",
    "an sk-learn-compatible-estimator-interface",
    "src/core/agent-session.ts /Users/me/pi-mono/packages/tui/src/editor.ts",
    "550e8400-e29b-41d4-a716-446655440000",
    "token 550e8400-e29b-41d4-a716-446655440000",
    "commit 4b825dc642c (short SHAs stay)",
    "hf_hub_download npm_config_cache github_pat_example gh_pages",
    "fetch(url, { credentials: 'include' }); const password = getpass();",
    "password=self.password; token=os.environ['GITHUB_TOKEN']",
    "password: string; token?: string; sort_key = lambda x: x; primary_key=True",
    "sorted(rows, sort_key=by_name)\n    cache_key = f'user:{uid}'",
    "Authorization: required",
    "Authorization: Bearer ${TOKEN}",
    'headers = {"Authorization": f"Bearer {token}"}',
    "the --token flag; --max-tokens 100; docker run -u 1000:1000 img",
    "MAX_TOKEN=4096 api_key=short password: null api_key: ${OPENAI_API_KEY}",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AFAKE\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIBFAKEfake\n-----END CERTIFICATE-----",
    "-----BEGIN PRIVATE KEY----- and -----END PRIVATE KEY----- frame a PKCS#8 key.",
    "https://github.com/badlogic/pi-mono/blob/main/README.md?tab=readme#setup",
    "git@github.com:org/repo.git ssh://git@github.com/org/repo",
    "?page=2&sort=name&key=users&code=200",
    "Cookie: it is a small file the browser keeps",
    "pk_live_FAKEfake0123456789FAKEfake",
    # a word after "token:" / "password:" that is code or prose, not a value
    "if token: return True\nelif password: continue",
    "access_token: AccessToken = get_token()",
    "- token: handled by the refresh middleware",
    "Password: must contain a digit and a capital letter",
]


@pytest.mark.parametrize("text", KEPT)
def test_ordinary_text_is_kept(text):
    assert redact(text) == text


@pytest.mark.parametrize(
    "text",
    ["password: hunter\n", "secret: letmeinplease", "password: hunter2 ok", "token: abcdefgh,"],
)
def test_a_word_alone_after_a_secret_label_is_still_a_value(text):
    assert "[REDACTED]" in redact(text)


def test_every_agent_pattern_still_applies_first():
    from core.safety.redact import EXTRA_PATTERNS, PATTERNS

    assert len(PATTERNS) == 6 and EXTRA_PATTERNS
    # what the agent masks, memlens masks identically (its label and marker)
    assert redact("token: abcdefghijklmnopqrstuvwxyz") == "token: [REDACTED]"
    assert redact("x " + "0f" * 20) == "x [REDACTED_HEX]"


def test_linear_time_on_adversarial_text():
    # No timing assert: a catastrophic pattern would take minutes on these, so a
    # generous bound catches it without flaking on a busy machine.
    import threading

    size = 300_000  # quadratic on this is ~10^10 steps: minutes, far past the bound below
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
        "sk-a",
        "ghp_",
        "--password ",
        "Set-Cookie: ",
        "SecretAccessKey ",
        "\\nmy_key=",
        "AKIA" + "A" * 16 + " " + "a" * 39,  # a secret one char short, every time
        "[REDACTED]=",
        "Bearer [REDACTED]~",
        "password a",
        "<a",
        "?a&",
        "-----BEGIN PRIVATE KEY-----" + "A" * 20 + "-----END PRIVATE KEY-----",
    ]
    units.append("".join(units))
    for unit in units:
        text = unit * (size // len(unit))
        worker = threading.Thread(target=redact, args=(text,), daemon=True)
        worker.start()
        worker.join(timeout=20)  # ~0.1 s when linear; a quadratic pattern takes minutes
        assert not worker.is_alive(), f"redact is not linear on {unit[:40]!r} * N"


def test_maybe_redact_switch():
    secret = "token=abcdefghijklmnopqrstuvwxyz"
    assert maybe_redact(secret, False) == secret
    assert maybe_redact(secret, True) == "token=[REDACTED]"


def test_idempotent():
    text = " ".join(t for t, _ in [*CASES, *BROADER])
    once = redact(text)
    assert redact(once) == once
