r"""Secret redaction: memory-context's ``redaction.ts`` pattern for pattern, then more.

Applied before memlens writes text or sends it to an LLM. First the agent's six
patterns, in its order (:data:`PATTERNS`): Authorization headers, standalone Bearer
tokens, ``api_key``/``token=`` values, 32+ hex chars, 64+ base64 chars. Then
memlens's own (:data:`EXTRA_PATTERNS`): PEM private key blocks, JWTs, key prefixes
(OpenAI, Anthropic, Stripe, GitHub, GitLab, Slack, Google, npm, Hugging Face, ...),
AWS key ids and the secret key next to them, credentials in URLs, Authorization and
Cookie headers, and values whose label ends in a secret word (``MY_SERVICE_KEY=``,
``"SecretAccessKey": "..."``, ``password:``, ``--token x``). Masking more than the
agent is fine, less is not. Labels are kept; values become ``[REDACTED]``.

Secrets are found wherever they sit, JSON strings included, where the char before a
key may be the "n" of a ``\n`` escape (so "a key starts after no letter, or right
after an escape" rather than ``\b``). A key's body may already hold the agent's
``[REDACTED_B64]``: the shapes accept such markers, so no tail of a key survives.
Every pattern starts on a literal or a small class and uses possessive or bounded runs
where a failed match could rescan: the cost stays linear in the text.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from collections.abc import Callable

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

Replacement: TypeAlias = "str | Callable[[re.Match[str]], str]"

REDACTED = "[REDACTED]"
# What an earlier pattern left behind; it may sit inside a key's body.
_MARK = r"\[REDACTED(?:_HEX|_B64)?\]"


def _after(width: int) -> str:
    r"""Whether the key whose first *width* chars were just read started where one may.

    Not after a letter, digit or "_", or right after a JSON or C escape (the "n"
    of "\\n" is a letter), a \\uXXXX escape or a %XX URL escape. Checked after the
    key's literal head rather than before it, so that ``re`` scans for the head's
    first char at C speed instead of trying every position.
    """
    n = f".{{{width}}}"
    return (
        rf"(?:(?<![A-Za-z0-9_]{n})|(?<=\\[nrtbfv]{n})|(?<=\\u[0-9A-Fa-f]{{4}}{n})"
        rf"|(?<=%[0-9A-Fa-f]{{2}}{n}))"
    )


def _anycase(word: str) -> str:
    """*word* in any case, its first char a class (``re`` finds those fast, not ``re.I``)."""
    return f"[{word[0].upper()}{word[0].lower()}](?i:{word[1:]})"


_B = rf"(?:[A-Za-z0-9_\-]|{_MARK})"  # a base64url body char, or a marker


def _body(least: int) -> str:
    """A key body: *least* base64url chars or more, or any run holding a marker."""
    return rf"(?:[A-Za-z0-9_\-]*+{_MARK}{_B}*+|{_B}{{{least},}}+)"


_QUOTE = r"\\{0,3}[\"'`]?"  # a quote (maybe JSON-escaped) between a label and its value
_SEP = rf"{_S}*+(?:=>|:=|[:=])"


# --- PEM private key blocks ----------------------------------------------------------

_PEM_LABEL = r"((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)"
_PEM_BEGIN = re.compile(rf"-----BEGIN {_PEM_LABEL}-----")
_PEM_END = re.compile(rf"-----END {_PEM_LABEL}-----")
# What may sit between BEGIN and END: base64 lines, their breaks (real or escaped),
# quotes and "+" of a string split across source lines, Proc-Type/DEK-Info headers.
_PEM_BODY = re.compile(rf"(?:[A-Za-z0-9+/=\s\"',:.\\\-]|{_MARK})*+")
# Without a usable END (cut off, or prose in between): the base64 lines that follow.
_PEM_LINES = re.compile(
    rf"(?:(?:[ \t\"'+,]|\r?\n|\\+[rn])*+(?:Proc-Type|DEK-Info|Comment):[^\r\n\\]*+"
    rf"|(?:[ \t\"'+,]|\r?\n|\\+[rn])*+(?:[A-Za-z0-9+/=]|{_MARK}){{16,}}+)*+"
)
# Key material has long base64 runs (prose naming BEGIN and END lines has not).
_PEM_KEYISH = re.compile(rf"[A-Za-z0-9+/=]{{16}}|{_MARK}")
_PEM_EDGE = re.compile(r"(?:\r?\n|\\+[rn]|[ \t])*+")
_PEM_MAX_BODY = 65_536


def _pem_body(body: str) -> str:
    """*body* as ``[REDACTED]`` between the line breaks it started and ended with."""
    lead = _PEM_EDGE.match(body)
    head = lead.group() if lead else ""
    rest = body
    while True:  # trailing breaks, real or escaped (as in JSON strings)
        cut = len(rest.rstrip(" \t\r\n"))
        while cut >= 2 and rest[cut - 1] in "nr" and rest[cut - 2] == "\\":
            cut -= 2
            while cut > 0 and rest[cut - 1] == "\\":
                cut -= 1
        if cut == len(rest):
            break
        rest = rest[:cut]
    tail = body[len(rest) :]
    if len(head) >= len(body) - len(tail):
        return body  # nothing between the breaks
    return head + REDACTED + tail


def _redact_pem(text: str) -> str:
    """Every private key block's body as ``[REDACTED]``; BEGIN/END lines kept."""
    if "PRIVATE KEY" not in text:
        return text
    out: list[str] = []
    pos = 0
    end: re.Match[str] | None = None
    ends_left = True
    while begin := _PEM_BEGIN.search(text, pos):
        start = begin.end()
        if ends_left and (end is None or end.start() < start):
            end = _PEM_END.search(text, start)  # each END is searched for once
            ends_left = end is not None
        after = _PEM_BEGIN.search(text, start)
        stop = after.start() if after else len(text)
        out.append(text[pos:start])
        if (
            end is not None
            and end.start() >= start
            and end.start() <= stop
            and end.start() - start <= _PEM_MAX_BODY
            and _PEM_BODY.fullmatch(text, start, end.start())
            and _PEM_KEYISH.search(text, start, end.start())
        ):
            out.append(_pem_body(text[start : end.start()]))
            pos = end.start()
        else:
            lines = _PEM_LINES.match(text, start, stop)
            cut = lines.end() if lines else start
            out.append(_pem_body(text[start:cut]))
            pos = cut
    out.append(text[pos:])
    return "".join(out)


# --- labelled values -------------------------------------------------------------------

# The key's own prefix (GITHUB_, OPENAI_, client) stays outside the match, which
# starts at the secret word (dispatched on its first char, see _anycase): api_key,
# access_key, account_key, secret(_key), password, passwd, passphrase, private_key,
# token, client_secret, credential(s), _pwd, _pass, _auth and env-style FOO_KEY.
_SECRET_WORD = (
    r"[AaSsPpTtCc_](?:(?<=[Aa])(?i:pi[_\-]?key|ccess[_\-]?key|ccount[_\-]?key)"
    r"|(?<=[Ss])(?i:ecret(?:[_\-]?key)?)|(?<=[Pp])(?i:ass(?:word|wd|phrase)|rivate[_\-]?key)"
    r"|(?<=[Tt])(?i:oken)|(?<=[Cc])(?i:lient[_\-]?secret|redentials?)"
    r"|(?<=_)(?:(?i:pwd|pass|auth)|(?<=[A-Z0-9]_)KEY))"
)
_UNQUOTED = r"[^\s\"'`<>,;()\[\]{}\\|&]"
_KEYISH = r"[A-Za-z0-9/+_\-.=]"
# label = value, label: value, "label": "value"; or, one scan for both, "label value"
# ("aws configure set aws_secret_access_key wJalr...") when the value looks like a key.
_KV = re.compile(
    rf"(?P<label>(?P<word>{_SECRET_WORD}){_QUOTE}"
    rf"(?:(?P<sep>{_SEP}){_S}*+{_QUOTE}|[ \t]++{_QUOTE}(?={_KEYISH}{{16}})))"
    rf"(?(sep)(?P<value>(?<=\")[^\"\\\r\n]++|(?<=')[^'\\\r\n]++|(?<=`)[^`\\\r\n]++"
    rf"|(?<![\"'`\\])(?:{_UNQUOTED}|{_MARK})++)(?P<call>[(\[]?)"
    r"(?P<rest>(?:[^\s\"'`\\<>&;,]|[&;,](?![\w.\-]++=))*+)"
    rf"|(?P<spaced>{_KEYISH}{{16,}}+)(?=[\s\"'`,;)\]}}]|$))",
    re.A,
)
# A lower-case .env line whose name ends in _key ("my_service_key=..."): at a line's
# start with no spaces around "=", so that Python's "cache_key = ..." and keyword
# arguments ("sort_key=...") stay.
_ENV_KEY_LINE = re.compile(
    r"_key=(?!\[REDACTED|\$)(\"[^\"\\\r\n]++\"|'[^'\\\r\n]++'|[^\s\"'`\\]{6,}+)"
)
_ENV_NAME = re.compile(r"(?:export[ \t]+)?[a-z0-9_]*")


def _env_key_line(m: re.Match[str]) -> str:
    # The name must start its line (real or escaped break), looked for at most 200
    # chars back so a long line of "_key=" costs no more than a short one.
    text, start = m.string, m.start()
    floor = max(0, start - 200)
    line = text.rfind("\n", floor, start) + 1
    escaped = text.rfind("\\n", floor, start)
    line = max(line, escaped + 2 if escaped >= 0 else 0)
    if (line == 0 and start > 200) or not _ENV_NAME.fullmatch(text, line, start):
        return m.group()
    value = m.group(1)
    quote = value[0] if value[0] in "\"'" else ""
    if value.strip("\"'").lower() in _NOT_SECRET or (
        not quote and re.fullmatch(r"[A-Za-z_.]+", value)  # sort_key=lambda: code
    ):
        return m.group()
    return "_key=" + quote + REDACTED + quote


# Values that are types, literals or placeholders rather than secrets.
_NOT_SECRET = frozenset(
    "undefined null none nil true false yes no string number boolean str int bool bytes "
    "any unknown object optional required include omit same-origin secretstr".split()
)
_REFERENCE = re.compile(r"(?:\$|\{\{|%\(|<|\[REDACTED|-----BEGIN |process\.env\b|os\.environ)")
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_SECRETISH = re.compile(r"key|token|secret|pass|pwd|auth|credential", re.I)
_PASSWORDISH = re.compile(r"pass|pwd", re.I)


def _kv_spaced(m: re.Match[str]) -> str:
    value = m.group("spaced")
    keyish = (
        any(c.isdigit() for c in value)
        and (
            (any(c.isupper() for c in value) and any(c.islower() for c in value))
            or "/" in value
            or "+" in value
        )
        and not _DOTTED.fullmatch(value)
        and not _PATH.match(value)
    )
    return m.group("label") + REDACTED if keyish else m.group()


# After "token:" or "password:", a word of letters that reads as code or prose is no
# value: "if token: return True", "- token: handled by the middleware",
# "access_token: AccessToken = ...", "Password: must contain a digit".
_CODE_WORDS = frozenset(
    "return continue break pass raise yield await async lambda none null true false not "
    "and or in is if else elif for while with try except finally def class import from "
    "del assert new this self let const var function typeof void".split()
)
_PROSE_AFTER = re.compile(r"[ \t]+[A-Za-z(]")
_TYPE_AFTER = re.compile(r"[ \t]*[=,)\]]")


def _prose_or_code(m: re.Match[str], value: str) -> bool:
    """True for a letters-only word after a colon that is a keyword, a type or prose."""
    if ":" not in (m.group("sep") or "") or not value.isalpha() or m.group("call"):
        return False
    if m.group("word").isupper():
        return False  # an env-style name (DATABASE_PASSWORD: ...) always holds a value
    if value.lower() in _CODE_WORDS:
        return True
    after = m.string[m.end("value") : m.end("value") + 2]
    if not after or after[0] in "\r\n":
        return False  # "password: hunter" alone on its line is a value
    end = m.end("value")
    if value[0].isupper() and _TYPE_AFTER.match(m.string, end):
        return True  # a type annotation: "token: AccessToken = ..."
    return bool(_PROSE_AFTER.match(m.string, end))


def _kv(m: re.Match[str]) -> str:
    if m.group("sep") is None:
        return _kv_spaced(m)
    value = m.group("value")
    word = m.group("word")
    quoted = m.group("label")[-1:] in "\"'`"
    # a .env value or a password runs to the next space: "DB_PASSWORD=pa;ss,wo&rd"
    whole = not quoted and (word.isupper() or bool(_PASSWORDISH.search(word)))
    lower = value.lower()
    spared = (
        bool(_REFERENCE.match(value))
        or lower in _NOT_SECRET
        or lower.replace("_", "").replace("-", "") == word.lower().strip("_-")
        or (
            not quoted
            and (
                # a password or an env-style name (FOO_KEY=abc) holds a secret however
                # short; "api_key=short" stays, as the agent leaves it
                len(value + m.group("call") + m.group("rest") if whole else value)
                < (3 if whole else 6)
                or (value.isdigit() and len(value) < 8 and not _PASSWORDISH.search(word))
                or bool(m.group("call"))  # a call or subscript: code, not a literal
                or (bool(_DOTTED.fullmatch(value)) and bool(_SECRETISH.search(value)))
            )
        )
    )
    if spared or (not quoted and _prose_or_code(m, value)):
        return m.group()
    if whole:
        return m.group("label") + REDACTED
    return m.group("label") + REDACTED + m.group("call") + m.group("rest")


# Authorization/Proxy-Authorization headers with any scheme, and Cookie headers.
_AUTH_HEADER = re.compile(
    rf"(?P<label>{_anycase('authorization')}{_QUOTE}{_SEP}{_S}*+{_QUOTE}"
    rf"(?P<scheme>(?i:bearer|basic|token|bot|digest|negotiate|ntlm|apikey|sso-key|key|otp"
    rf"|hmac|aws4-hmac-sha256)[ \t]++)?)"
    rf"(?!\[REDACTED|\$|\{{)(?P<value>[^\s\"'\\,;<>]{{8,}}+)",
    re.A,
)


def _auth_header(m: re.Match[str]) -> str:
    value = m.group("value")
    if not m.group("scheme") and re.fullmatch(r"[A-Za-z]+", value):
        return m.group()  # "Authorization: required" is prose
    return m.group("label") + REDACTED


# bearer in any case (the agent's standalone pattern wants "Bearer")
_BEARER = re.compile(
    rf"({_anycase('bearer')}{_after(6)}{_S}++)(?!\[REDACTED)([A-Za-z0-9_\-.~+/]{{20,}}+=*)",
    re.A,
)
_PATH = re.compile(r"(?:\.{0,2}/|.*/[\w\-]+\.[A-Za-z]{1,5}$)", re.A)


def _bearer(m: re.Match[str]) -> str:
    if _PATH.match(m.group(2)):
        return m.group()  # "Bearer src/auth/session.ts": a path, not a token
    return m.group(1) + REDACTED


_COOKIE = re.compile(
    rf"([SsCc](?:(?<=[Ss])(?i:et-cookie)|(?<=[Cc])(?i:ookie)){_QUOTE}{_S}*+:{_S}*+{_QUOTE})"
    r"([^\r\n\"'\\]++)"
)
_COOKIE_PAIR = re.compile(r"([\w.\-]+=)(?!\[REDACTED)([^;,\s]++)")
_COOKIE_ATTRIBUTES = frozenset(
    "path domain expires max-age samesite secure httponly priority partitioned".split()
)


def _cookie(m: re.Match[str]) -> str:
    def pair(p: re.Match[str]) -> str:
        if p.group(1)[:-1].lower() in _COOKIE_ATTRIBUTES:
            return p.group()
        return p.group(1) + REDACTED

    return m.group(1) + _COOKIE_PAIR.sub(pair, m.group(2))


# --flag value on a command line
_CLI_FLAG = re.compile(
    r"(-(?<![\w\-]-)-?[\w\-]{0,40}?(?:password|passwd|token|secret|api-?key|access-?key)"
    r"(?:[ \t]++|=))"
    r"(?![\-$<\[])(\"[^\"\r\n]++\"|'[^'\r\n]++'|[^\s\"'\\]++)",
    re.I | re.A,
)


def _cli_flag(m: re.Match[str]) -> str:
    value = m.group(2)
    if re.fullmatch(r"[a-z]+[.,;:)]*", value) and "=" not in m.group(1):
        return m.group()  # "the --token flag" is prose
    quote = value[0] if value[0] in "\"'" else ""
    return m.group(1) + quote + REDACTED + quote


# curl -u user:password, --user user:password
_CURL_USER = re.compile(
    r"(-(?<!\S-)(?:u|-user)(?:[ \t]++|=)[\"']?[^\s:\"'$]++:)(?!\$|\d++(?![^\s\"']))[^\s\"']++"
)
# <password>x</password>, <apiKey>x</apiKey>
_XML = re.compile(
    r"(<[\w:.\-]{0,64}?(?:password|passwd|secret|token|api[_\-]?key|access[_\-]?key"
    r"|private[_\-]?key|client[_\-]?secret)>)(?!\[REDACTED)[^<\r\n]++(?=</)",
    re.I | re.A,
)


# --- URLs --------------------------------------------------------------------------------

# scheme://user:password@host (the last "@" of the authority ends the password)
_URL_PASSWORD = re.compile(
    r"(:\\?/\\?/[^\s:/@\\\"'<>]*+:)(?!\[REDACTED\]@)[^\s/?#\"'<>\\]+(?=@)", re.A
)
# scheme://token@host (userinfo alone, when it is long and has a digit)
_URL_USER_TOKEN = re.compile(r"(:\\?/\\?/)(?=[^\s:/@]*\d)[A-Za-z0-9_\-.~%]{16,}+(?=@)", re.A)
_URL_PARAM = re.compile(
    r"(?P<label>[?&;](?P<name>[\w.\-]{0,40}?(?:token|secret|password|passwd|signature"
    r"|api[_\-]?key|apikey|access[_\-]?key|credential)|sig|key|code|auth|pwd|sid)=)"
    r"(?!\[REDACTED)(?P<value>[^&;#\s\"'<>\\]++)",
    re.I | re.A,
)
_WEBHOOK = re.compile(
    r"((?:hooks\.slack\.com/(?:services|workflows|triggers)/"
    r"|discord(?:app)?\.com/api/webhooks/|webhook\.office\.com/webhookb2/))"
    rf"(?:[A-Za-z0-9_\-/@.]|{_MARK})++",
    re.A,
)


def _url_param(m: re.Match[str]) -> str:
    if m.group("name").lower() in ("key", "code", "sig", "auth", "sid") and (
        len(m.group("value")) < 12
    ):
        return m.group()  # ?key=users, ?code=200
    return m.group("label") + REDACTED


# --- key shapes --------------------------------------------------------------------------

_JWT = re.compile(
    rf"(?:eyJ{_after(3)}(?<!-eyJ){_B}{{5,}}+\.{_B}++|{_MARK}\.(?:eyJ|{_MARK}){_B}*+)"
    rf"(?:\.{_B}*+(?:\.{_B}++){{0,2}})?",
    re.A,
)
# (literal head, rest): the head's first char lets re skip ahead at C speed
_KEY_SHAPES = (
    # OpenAI, Anthropic; a digit somewhere, so "sk-learn-compatible-estimators" stays
    ("sk-", rf"(?=[A-Za-z_\-]{{0,200}}+[0-9\[])(?:ant-|proj-|svcacct-|admin-)?{_body(20)}"),
    ("sk_", r"(?:live|test)_[A-Za-z0-9]{16,}+"),  # Stripe secret
    ("rk_", r"(?:live|test)_[A-Za-z0-9]{16,}+"),  # Stripe restricted
    ("whsec_", r"[A-Za-z0-9+/=]{20,}+"),  # Stripe webhook signing secret
    ("gh", r"[pousr]_[A-Za-z0-9]{20,}+"),  # GitHub
    ("github_pat_", r"[A-Za-z0-9_]{20,}+"),
    ("gl", rf"(?:pat|ptt|dt|rt|cbt|imt|agent)-{_body(20)}"),  # GitLab
    ("xox", rf"[a-z]-{_body(10)}"),  # Slack: xoxb, xoxp, xoxa, xoxr, xoxs, xoxe, xoxc, xoxd
    ("xapp-", _body(10)),
    ("AIza", _body(30)),  # Google
    ("ya29.", _body(20)),
    ("GOCSPX-", _body(20)),
    ("npm_", r"[A-Za-z0-9]{30,}+"),
    ("hf_", r"[A-Za-z0-9]{30,}+"),  # Hugging Face
    ("pypi-AgE", _body(30)),
    ("gsk_", r"[A-Za-z0-9]{30,}+"),  # Groq
    ("xai-", r"[A-Za-z0-9]{30,}+"),
    ("r8_", r"[A-Za-z0-9]{30,}+"),  # Replicate
    ("dckr_pat_", r"[A-Za-z0-9_\-]{20,}+"),  # Docker Hub
    ("dop_v1_", r"[a-f0-9]{32,}+"),  # DigitalOcean
    ("shp", r"(?:at|ca|pa|ss)_[a-fA-F0-9]{32,}+"),  # Shopify
    ("SG.", r"[A-Za-z0-9_\-]{16,}+\.[A-Za-z0-9_\-]{16,}+"),  # SendGrid
    ("AGE-SECRET-KEY-1", r"[0-9A-Z]{50,}+"),
)
_PREFIXED = re.compile(
    "|".join(re.escape(head) + _after(len(head)) + rest for head, rest in _KEY_SHAPES), re.A
)
# AWS access key ids, and a secret access key (40 base64 chars; 30-100 taken, for
# hand-made fakes) within 80 chars after one
_AWS_ID = r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA)[A-Z0-9]{16}"
_AWS = re.compile(
    rf"{_AWS_ID}{_after(20)}(?![A-Za-z0-9])"
    r"(?:(?P<gap>[\s\S]{1,80}?)(?:(?<![A-Za-z0-9/+])|(?<=\\[nrt]))"
    r"[A-Za-z0-9/+]{30,100}+(?![A-Za-z0-9/+=]))?",
    re.A,
)
# A key id the agent's token/api_key pattern already took ("token = 'AKIA... <secret>'"):
# a mixed-case 40-char secret right after the marker.
_AWS_AFTER_MARK = re.compile(
    r"(\[REDACTED\](?:[ \t,:;|/]{1,3}|\r?\n|\\n))"
    r"(?=[A-Za-z0-9/+]{0,39}[0-9/+])(?=[A-Za-z0-9/+]{0,39}[A-Z])(?=[A-Za-z0-9/+]{0,39}[a-z])"
    r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
    re.A,
)
_AWS_ID_ALONE = re.compile(rf"{_AWS_ID}{_after(20)}(?![A-Za-z0-9])", re.A)


def _aws(m: re.Match[str]) -> str:
    gap = m.group("gap")
    if gap is None:
        return REDACTED
    # the gap may hold the next key id (its secret being the one this match took)
    return REDACTED + _AWS_ID_ALONE.sub(REDACTED, gap) + REDACTED


# --- the passes, in order ---------------------------------------------------------------

# The agent's Bearer/api_key/token patterns stop at the first char outside their
# class: "Bearer abc...~xyz" leaves "~xyz", "token=a_long_label=value" leaves
# "=value". What sticks to the marker goes too.
_TAIL = re.compile(
    r"(\[REDACTED\])(?:[~!$%^*=]|(?<=Bearer \[REDACTED\])[+/])[^\s\"'`<>,;()\[\]{}\\|&@#]*+"
)

EXTRA_PATTERNS: tuple[tuple[re.Pattern[str], Replacement], ...] = (
    (_TAIL, r"\1"),
    (_JWT, REDACTED),
    (_PREFIXED, REDACTED),
    (_AWS, _aws),
    (_AWS_AFTER_MARK, r"\1[REDACTED]"),
    (_WEBHOOK, r"\1[REDACTED]"),
    (_URL_PASSWORD, r"\1[REDACTED]"),
    (_URL_USER_TOKEN, r"\1[REDACTED]"),
    (_URL_PARAM, _url_param),
    (_AUTH_HEADER, _auth_header),
    (_BEARER, _bearer),
    (_COOKIE, _cookie),
    (_KV, _kv),
    (_ENV_KEY_LINE, _env_key_line),
    (_CLI_FLAG, _cli_flag),
    (_CURL_USER, r"\1[REDACTED]"),
    (_XML, r"\1[REDACTED]"),
)
"""memlens's passes after the agent's: (pattern, replacement) for ``re.sub``.

PEM private key blocks go first of all (:func:`redact`), before the labels and
shapes below can cut a block's header apart from its body.
"""


def redact(text: str) -> str:
    """Mask secrets in *text*: the agent's six patterns in its order, then the extras."""
    for pattern, replacement in PATTERNS:
        text = pattern.sub(replacement, text)
    text = _redact_pem(text)
    for extra, repl in EXTRA_PATTERNS:
        text = extra.sub(repl, text)
    return text


def maybe_redact(text: str, enabled: bool) -> str:
    """Redact when *enabled* (the ``memoryContext.redaction`` setting)."""
    return redact(text) if enabled else text
