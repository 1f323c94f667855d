"""Property tests: every common secret shape is redacted in every realistic context.

Each shape strategy draws a realistic secret (right prefix, alphabet and length,
random bytes for the body) and says which parts of it are secret. Each context
embeds it in text an agent's transcript holds: a JSON string serialised with
orjson (quotes and ``\\n`` escapes around it), Python/JS code, a log line, a
shell export, a URL, markdown. The output must hold no 8-char window of any
secret part, and the context's own words must survive.
"""

from __future__ import annotations

import base64
import string
from dataclasses import dataclass

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.safety.redact import PATTERNS, redact

ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
UPPER_DIGITS = string.ascii_uppercase + string.digits

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@dataclass(frozen=True)
class Secret:
    text: str  # the whole shape as written (label included)
    parts: tuple[str, ...]  # what must not survive
    multiline: bool = False


def body(alphabet: str, size: int) -> st.SearchStrategy[str]:
    """*size* chars of *alphabet*, from random bytes (as real keys are)."""
    return st.binary(min_size=size, max_size=size).map(
        lambda b: "".join(alphabet[x % len(alphabet)] for x in b)
    )


def windows(part: str, width: int = 8) -> list[str]:
    if len(part) <= width:
        return [part]
    return [part[i : i + width] for i in range(len(part) - width + 1)]


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


# --- shapes ----------------------------------------------------------------------------


@st.composite
def prefixed(draw: st.DrawFn) -> Secret:
    """A key with a well-known prefix."""
    kind = draw(
        st.sampled_from(
            [
                ("sk-", ALNUM, 48),  # OpenAI (legacy)
                ("sk-proj-", URLSAFE, 156),  # OpenAI project key
                ("sk-svcacct-", URLSAFE, 120),
                ("sk-ant-api03-", URLSAFE, 93),  # Anthropic
                ("sk-ant-admin01-", URLSAFE, 93),
                ("sk_live_", ALNUM, 99),  # Stripe
                ("sk_test_", ALNUM, 24),
                ("rk_live_", ALNUM, 99),
                ("rk_test_", ALNUM, 24),
                ("ghp_", ALNUM, 36),  # GitHub
                ("gho_", ALNUM, 36),
                ("ghu_", ALNUM, 36),
                ("ghs_", ALNUM, 36),
                ("ghr_", ALNUM, 36),
                ("glpat-", URLSAFE, 20),  # GitLab
                ("AIza", URLSAFE, 35),  # Google
                ("npm_", ALNUM, 36),  # npm
                ("hf_", string.ascii_letters, 34),  # Hugging Face
                ("hf_", ALNUM, 37),
                ("xai-", ALNUM, 80),
                ("gsk_", ALNUM, 52),
            ]
        )
    )
    prefix, alphabet, size = kind
    secret = draw(body(alphabet, size))
    if prefix.startswith("sk-"):  # real keys have digits; "sk-learn-style" is prose
        secret = secret[:10] + draw(body(string.digits, 1)) + secret[11:]
    if prefix.startswith("sk-ant-"):
        secret += "AA"
    return Secret(prefix + secret, (secret,))


@st.composite
def github_fine_grained(draw: st.DrawFn) -> Secret:
    head, tail = draw(body(ALNUM, 22)), draw(body(ALNUM, 59))
    return Secret(f"github_pat_{head}_{tail}", (head, tail))


@st.composite
def slack(draw: st.DrawFn) -> Secret:
    kind = draw(
        st.sampled_from(["xoxb", "xoxp", "xoxa", "xoxr", "xoxs", "xoxe", "xoxc", "xoxd", "xapp"])
    )
    a = draw(body(string.digits, draw(st.integers(10, 13))))
    b = draw(body(string.digits, draw(st.integers(10, 13))))
    c = draw(body(ALNUM, draw(st.sampled_from([24, 32]))))
    if kind == "xapp":
        return Secret(f"xapp-1-A{a}-{b}-{c}", (a, b, c))
    if kind == "xoxp":
        d = draw(body(string.digits, 12))
        return Secret(f"xoxp-{a}-{b}-{d}-{c}", (a, b, d, c))
    return Secret(f"{kind}-{a}-{b}-{c}", (a, b, c))


@st.composite
def aws(draw: st.DrawFn) -> Secret:
    key_id = draw(body(UPPER_DIGITS, 16))
    prefix = draw(st.sampled_from(["AKIA", "ASIA"]))
    # AWS secret keys mix cases and digits (a 40-char run of one class is not one)
    secret = draw(body(B64, 37)) + draw(body(string.ascii_uppercase, 1))
    secret = secret[:12] + draw(body(string.ascii_lowercase, 1)) + secret[12:]
    secret = secret[:25] + draw(body(string.digits, 1)) + secret[25:]
    form = draw(st.integers(0, 6))
    if form == 0:
        sep = draw(st.sampled_from([" ", "\t", ",", ":", " / ", " secret: ", "\n"]))
        text = f"{prefix}{key_id}{sep}{secret}"
    elif form == 1:
        text = f"aws_access_key_id = {prefix}{key_id}\naws_secret_access_key = {secret}"
    elif form == 2:
        text = f"AWS_ACCESS_KEY_ID={prefix}{key_id}\nAWS_SECRET_ACCESS_KEY={secret}"
    elif form == 3:
        text = f'{{"AccessKeyId": "{prefix}{key_id}", "SecretAccessKey": "{secret}"}}'
    elif form == 4:
        text = f"export AWS_SECRET_ACCESS_KEY={secret}"
    elif form == 5:
        text = f"aws_secret_access_key={secret}"
    else:
        text = f'"SecretAccessKey":"{secret}"'
    parts = (secret,) if form >= 4 else (key_id, secret)
    return Secret(text, parts, "\n" in text)


@st.composite
def jwt(draw: st.DrawFn) -> Secret:
    alg = draw(st.sampled_from(["HS256", "RS256", "ES256"]))
    header = {"alg": alg, "typ": "JWT"}
    if draw(st.booleans()):
        header["kid"] = draw(body(ALNUM, 20))
    sub = draw(body(ALNUM, draw(st.integers(8, 40))))
    payload = {"sub": sub, "iat": draw(st.integers(1_500_000_000, 1_900_000_000))}
    if draw(st.booleans()):
        payload["email"] = f"{sub[:6]}@example.com"
        payload["scope"] = "read write admin"
    sig = b64url(draw(st.binary(min_size=32, max_size=256)))
    h, p = b64url(orjson.dumps(header)), b64url(orjson.dumps(payload))
    return Secret(f"{h}.{p}.{sig}", (h[3:], p[3:], sig))


@st.composite
def pem(draw: st.DrawFn) -> Secret:
    label = draw(
        st.sampled_from(
            [
                "PRIVATE KEY",
                "RSA PRIVATE KEY",
                "EC PRIVATE KEY",
                "OPENSSH PRIVATE KEY",
                "ENCRYPTED PRIVATE KEY",
                "DSA PRIVATE KEY",
                "PGP PRIVATE KEY BLOCK",
            ]
        )
    )
    raw = base64.b64encode(draw(st.binary(min_size=40, max_size=700))).decode()
    width = 70 if label.startswith("OPENSSH") else 64
    lines = [raw[i : i + width] for i in range(0, len(raw), width)]
    head: list[str] = []
    if label == "RSA PRIVATE KEY" and draw(st.booleans()):
        iv = draw(body(HEX, 32)).upper()
        head = ["Proc-Type: 4,ENCRYPTED", f"DEK-Info: AES-128-CBC,{iv}", ""]
    block = "\n".join([f"-----BEGIN {label}-----", *head, *lines, f"-----END {label}-----"])
    return Secret(block, tuple(lines), True)


ENV_NAMES = [
    "DATABASE_PASSWORD",
    "MY_SERVICE_KEY",
    "STRIPE_SECRET",
    "FOO_TOKEN",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GITHUB_TOKEN",
    "SLACK_BOT_TOKEN",
    "JWT_SECRET",
    "SECRET_KEY",
    "CLIENT_SECRET",
    "SMTP_PASS",
    "REDIS_PASSWORD",
    "SIGNING_KEY",
    "DB_PASSWD",
    "AUTH_TOKEN",
    "ENCRYPTION_KEY",
    "NPM_AUTH",
    "aws_session_token",
    "db_password",
]
PASSWORD_CHARS = ALNUM + "!@#%^*_+=.~-:"


@st.composite
def env_line(draw: st.DrawFn) -> Secret:
    """A .env / YAML / shell / Dockerfile line whose name ends in a secret word."""
    name = draw(st.sampled_from(ENV_NAMES))
    value = draw(body(PASSWORD_CHARS, draw(st.integers(8, 40))))
    form = draw(st.integers(0, 6))
    if form == 0:
        text = f"{name}={value}"
    elif form == 1:
        text = f'export {name}="{value}"'
    elif form == 2:
        text = f"export {name}='{value}'"
    elif form == 3:
        text = f"{name}: {value}"
    elif form == 4:
        text = f'"{name}": "{value}"'
    elif form == 5:
        text = f"ENV {name}={value}"
    else:  # a quoted value with spaces: every word is secret
        value = " ".join([value[:8], value[8:]]) if len(value) > 16 else value
        text = f'{name}="{value}"'
    return Secret(text, tuple(value.split()))


@st.composite
def url_password(draw: st.DrawFn) -> Secret:
    scheme = draw(st.sampled_from(["postgres", "postgresql", "mysql", "redis", "https", "amqp"]))
    user = draw(st.sampled_from(["user", "admin", "x-access-token", "oauth2", "app_user", ""]))
    password = draw(body(ALNUM + "!*_+.~-", draw(st.integers(8, 40))))
    if draw(st.booleans()):  # unencoded "@" or ":" inside, as people paste them
        password = password[:4] + draw(st.sampled_from(["@", ":", "%40"])) + password[4:]
    host = draw(st.sampled_from(["db.internal:5432/app", "github.com/org/repo.git", "host"]))
    return Secret(f"{scheme}://{user}:{password}@{host}", (password,))


@st.composite
def header(draw: st.DrawFn) -> Secret:
    token = draw(body(ALNUM + "._~-", draw(st.integers(20, 60))))
    form = draw(st.integers(0, 6))
    if form == 0:
        return Secret(f"Authorization: Bearer {token}", (token,))
    if form == 1:
        return Secret(f"authorization: bearer {token}", (token,))
    if form == 2:
        basic = base64.b64encode(f"user:{token}".encode()).decode()
        return Secret(f"Authorization: Basic {basic}", (basic,))
    if form == 3:
        key = draw(body(ALNUM, draw(st.integers(16, 40))))
        return Secret(f"x-api-key: {key}", (key,))
    if form == 4:
        return Secret(f"Authorization: Token {token}", (token,))
    if form == 5:
        return Secret(f'"Authorization": "Bearer {token}"', (token,))
    return Secret(f"Proxy-Authorization: Basic {token}", (token,))


SHAPES = st.one_of(
    prefixed(),
    github_fine_grained(),
    slack(),
    aws(),
    jwt(),
    pem(),
    env_line(),
    url_password(),
    header(),
)

# --- contexts ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Context:
    text: str
    kept: tuple[str, ...]  # words of the context that must survive


def in_json(s: str) -> Context:
    doc = {"role": "toolResult", "note": "alpha bravo", "key": s, "tail": "charlie"}
    return Context(orjson.dumps(doc).decode(), ("toolResult", "alpha bravo"))


def in_json_pretty(s: str) -> Context:
    doc = {"content": [{"type": "text", "text": f"found this:\n{s}\nend of file"}]}
    return Context(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode(), ("found this:",))


def js_string(s: str) -> str:
    return f"'{s}'" if "'" not in s else f"`{s}`"


def in_code_js(s: str) -> Context:
    return Context(
        f"function init() {{\n  const value = {js_string(s)}; // delta echo\n}}", ("delta echo",)
    )


def in_code_py(s: str) -> Context:
    return Context(f'client = Client(\n    "{s}",\n    timeout=30,\n)', ("client = Client(",))


def in_code_token(s: str) -> Context:
    return Context(
        f"const token = {js_string(s)};\nconsole.log(foxtrot);", ("console.log(foxtrot);",)
    )


def in_log(s: str) -> Context:
    return Context(
        f"2026-01-01T00:00:00Z INFO using {s} for auth\n2026-01-01T00:00:01Z INFO ready",
        ("2026-01-01T00:00:00Z INFO using", "for auth", "INFO ready"),
    )


def in_shell(s: str) -> Context:
    return Context(f'$ export SOME_VALUE="{s}"\n$ ./deploy.sh --env prod', ("./deploy.sh",))


def in_markdown(s: str) -> Context:
    return Context(
        f"## Setup\n\nPut this in `.env`:\n\n```\n{s}\n```\n\nThen run `make golf`.",
        ("## Setup", "Put this in `.env`:", "Then run `make golf`."),
    )


def in_markdown_inline(s: str) -> Context:
    return Context(f"| name | value |\n|---|---|\n| hotel | `{s}` |", ("| hotel |",))


def in_url(s: str) -> Context:
    return Context(
        f"GET https://api.example.com/v1/items?q={s}&page=2 returned 200",
        ("GET https://api.example.com/v1/items?q=", "returned 200"),
    )


def in_nested_json(s: str) -> Context:
    inner = orjson.dumps({"secret_holder": s}).decode()
    # "india" goes first: the agent's Authorization pattern eats up to the next space
    return Context(orjson.dumps({"name": "india", "arguments": inner}).decode(), ("india",))


ONE_LINE_CONTEXTS = [
    in_json,
    in_json_pretty,
    in_code_js,
    in_code_py,
    in_code_token,
    in_log,
    in_shell,
    in_markdown,
    in_markdown_inline,
    in_url,
    in_nested_json,
]
MULTILINE_CONTEXTS = [in_json, in_json_pretty, in_code_py, in_markdown, in_log, in_nested_json]


def check(secret: Secret, context: Context) -> None:
    out = redact(context.text)
    for part in secret.parts:
        for w in windows(part):
            assert w not in out, (w, secret.text, out)
    for word in context.kept:
        assert word in out, (word, out)


@PROPERTY
@given(SHAPES, st.sampled_from(ONE_LINE_CONTEXTS + MULTILINE_CONTEXTS))
def test_every_shape_is_redacted_in_every_context(secret, make):
    if secret.multiline and make not in MULTILINE_CONTEXTS:
        make = in_json
    check(secret, make(secret.text))


# One test per shape too, so a failure names the shape.


@PROPERTY
@given(prefixed(), st.sampled_from(ONE_LINE_CONTEXTS))
def test_prefixed_keys(secret, make):
    check(secret, make(secret.text))


@PROPERTY
@given(github_fine_grained(), st.sampled_from(ONE_LINE_CONTEXTS))
def test_github_fine_grained_tokens(secret, make):
    check(secret, make(secret.text))


@PROPERTY
@given(slack(), st.sampled_from(ONE_LINE_CONTEXTS))
def test_slack_tokens(secret, make):
    check(secret, make(secret.text))


@PROPERTY
@given(aws(), st.sampled_from(MULTILINE_CONTEXTS))
def test_aws_key_ids_and_secret_keys(secret, make):
    check(secret, make(secret.text))


@PROPERTY
@given(jwt(), st.sampled_from(ONE_LINE_CONTEXTS))
def test_jwts_all_three_parts(secret, make):
    check(secret, make(secret.text))


@PROPERTY
@given(pem(), st.sampled_from(MULTILINE_CONTEXTS))
def test_pem_private_key_blocks_every_line(secret, make):
    check(secret, make(secret.text))
    out = redact(make(secret.text).text)
    assert "PRIVATE KEY" in out  # the BEGIN/END labels stay


@PROPERTY
@given(env_line(), st.sampled_from([*MULTILINE_CONTEXTS, in_markdown_inline]))
def test_env_lines(secret, make):
    check(secret, make(secret.text))


@PROPERTY
@given(url_password(), st.sampled_from(ONE_LINE_CONTEXTS))
def test_passwords_in_urls(secret, make):
    check(secret, make(secret.text))


@PROPERTY
@given(header(), st.sampled_from([in_json, in_log, in_markdown, in_code_py, in_nested_json]))
def test_authorization_headers(secret, make):
    check(secret, make(secret.text))


@PROPERTY
@given(st.lists(SHAPES, min_size=1, max_size=4), st.sampled_from(MULTILINE_CONTEXTS))
def test_idempotent(secrets, make):
    text = make("\n".join(s.text for s in secrets)).text
    once = redact(text)
    assert redact(once) == once


# --- ordinary text stays -----------------------------------------------------------------

ORDINARY = [
    "the",
    "tokenizer",
    "splits",
    "words;",
    "task-runner",
    "risk-assessment",
    "disk-usage",
    "sk_learn",
    "sklearn",
    "ask-user",
    "skip-tests",
    "src/core/agent-session.ts",
    "packages/coding-agent/docs/theme.md",
    "/Users/me/workspaces/pi-mono/packages/tui/src/editor.ts",
    "C:\\Users\\me\\project\\main.py",
    "550e8400-e29b-41d4-a716-446655440000",
    "max_tokens=4096",
    "tokensBefore:",
    "175004",
    "hf_hub_download",
    "npm_config_cache",
    "github_pat_example",
    "getUserName()",
    "AKIA",
    "eyJ",
    "Bearer",
    "authentication",
    "password",
    "secret",
    "token",
    "secrets",
    "api_key_env",
    "https://github.com/badlogic/pi-mono/blob/main/README.md",
    "http://localhost:8080/api?page=2&sort=name",
    "git@github.com:org/repo.git",
    "ssh://git@github.com/org/repo",
    "v1.2.3",
    "2026-01-01T00:00:00Z",
    "const",
    "port",
    "18789;",
    "interface",
    "{",
    "}",
    "primary_key=True",
    "sort_key=lambda",
    "password: string",
    "token?: string",
    "credentials: 'include'",
    "password=getpass()",
    "token=os.environ['GITHUB_TOKEN']",
    "api_key=None",
    "OPENAI_API_KEY",
    "os.environ['OPENAI_API_KEY']",
    "Authorization: required",
    "Authorization: Bearer ${TOKEN}",
    "--max-tokens 100",
    "docker run -u 1000:1000",
    "-----BEGIN CERTIFICATE-----",
    "-----BEGIN PUBLIC KEY-----",
    "the --token flag",
    "pk_live_publishable",
]


def agent_redact(text: str) -> str:
    """What memory-context's own six patterns make of *text*."""
    for pattern, replacement in PATTERNS:
        text = pattern.sub(replacement, text)
    return text


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(ORDINARY), min_size=1, max_size=30), st.sampled_from([" ", "\n"]))
def test_ordinary_text_is_left_as_the_agent_leaves_it(words, sep):
    # (no bare "=" in the vocabulary: "password = anything" is a real assignment;
    # "Bearer <uuid>" is masked by the agent's own pattern, so by memlens too)
    text = sep.join(words)
    assert redact(text) == agent_redact(text)


def test_git_shas_are_masked_as_the_agent_masks_them():
    sha = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    assert redact(f"commit {sha} (HEAD)") == "commit [REDACTED_HEX] (HEAD)"
    assert redact(f"commit {sha[:12]} (HEAD)") == f"commit {sha[:12]} (HEAD)"


def test_ordinary_text_in_json_is_left_alone():
    # indented: in compact JSON the agent's Authorization pattern eats across items
    doc = {"words": ORDINARY, "text": " ".join(ORDINARY)}
    text = orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode()
    assert redact(text) == text
