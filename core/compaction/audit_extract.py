"""What a loss audit looks for in the summarised messages, found by rule.

The categories, in three groups:

* **identifier** -- ``path`` (file paths in text), ``symbol`` (``foo()``,
  ``CamelCase``, ``camelCase``, ``snake_case``, ``SCREAMING_CASE``, inline code
  that names one), ``error`` (``FooError: ...``, ``error TS1234: ...``, the first
  line of a failed tool result or a failed ``!`` bash run), ``url``, ``id``
  (UUIDs, hashes of 7-64 hex chars with a digit and a letter, ``#123``,
  versions), ``number`` (a number with a unit: ``885 lines``, ``120 ms``,
  ``40%``), ``command`` (bash tool calls, ``!`` bash runs, inline code or ``$``
  lines that start with a known command);
* **file** -- the ``path`` argument of read, edit and write tool calls (``detail``
  says ``read`` or ``modified``), as pi's and OpenClaw's file lists take them;
* **decision**, **todo**, **request** -- sentences: decisions in user and
  assistant text, open TODOs (``TODO``/``FIXME``, unchecked ``- [ ]``, "next
  step", "still need"...), and pending user requests (the last user message of
  the range, a user turn the agent never answered with text, "remember to",
  "later"...).

What is not read, on purpose: the contents of tool results other than their error
lines (file contents would bury the conversation's own identifiers), fenced code
blocks other than their paths and URLs, thinking blocks, ``<recalled-context>``
blocks. Each item is found once, keyed by its normalised text, with every entry
it came from. The regexes are compiled once; the cost is linear in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.compaction.offline import FENCE, LEAD, RECALLED

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from core.transcript.message import Message

IDENTIFIER_CATEGORIES = ("path", "symbol", "error", "url", "id", "number", "command")
CATEGORIES = (*IDENTIFIER_CATEGORIES, "file", "decision", "todo", "request")
SENTENCE_CATEGORIES = frozenset({"decision", "todo", "request"})


def group_of(category: str) -> str:
    """``identifier`` for the identifier categories, else the category itself."""
    return "identifier" if category in IDENTIFIER_CATEGORIES else category


# Which category wins when one text is found as two (a read file named in text too).
_PRIORITY = {c: i for i, c in enumerate(("file", "url", "error", "command", "path", "id"))}

MAX_SENTENCE = 200
MAX_IDENTIFIER = 160

_EXTS = (
    "py|pyi|ts|tsx|js|jsx|mjs|cjs|json|jsonl|json5|md|txt|toml|yaml|yml|ini|cfg|conf|sh|bash"
    "|zsh|rs|go|java|kt|c|h|cc|cpp|hpp|cs|rb|php|swift|sql|db|sqlite|html|css|scss|vue|svelte"
    "|lock|csv|tsv|xml|svg|png|jpg|jpeg|gif|pdf|zip|gz|tar|env|example|bin|npz|wasm|mdx"
)
_INLINE = re.compile(r"`([^`\n]{1,120})`")
_URL = re.compile(r"\bhttps?://[^\s<>\"'`()\[\]{}]+")
_PATH = re.compile(r"(?<![\w/.:@~-])@?((?:~|\.{1,2})?/?(?:[\w.+@-]+/)+[\w.+@-]*)")
_FILE = re.compile(rf"(?<![\w/.@-])[\w-]+(?:\.[\w-]+)*\.(?:{_EXTS})(?![\w/-])")
_UP = re.compile(r"(?:\.\.?/)+")
_HAS_EXT = re.compile(rf"\.(?:{_EXTS})$")
_CALL = re.compile(r"(?<![\w.$])[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\(\)")
_CAMEL = re.compile(
    r"(?<![\w.$-])(?:[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[a-z][a-z0-9]*(?:[A-Z][a-z0-9]+)+)(?![\w$-])"
)
_PRODUCTS = frozenset(
    """JavaScript TypeScript CoffeeScript GitHub GitLab PostgreSQL MySQL MongoDB MariaDB OpenAI
    ChatGPT YouTube LinkedIn PowerShell MacBook WordPress JetBrains PyCharm IntelliJ DevTools
    iPhone iPad macOS iOS""".split()
)
"""CamelCase product names: words of prose, not identifiers of the code."""
_SNAKE = re.compile(
    r"(?<![\w.$-])(?:[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?![\w/-])"
)
_ERROR = re.compile(
    r"(?<![\w.])(?:[A-Z][A-Za-z0-9]*(?:Error|Exception)(?::[ \t]+[^\n`]{1,140}|(?![\w:]))"
    r"|error(?:\[E\d+\]|[ \t]+TS\d+):[ \t]+[^\n`]{1,140}"
    r"|(?:ENOENT|EACCES|EADDRINUSE|ECONNREFUSED|ETIMEDOUT|ERR_[A-Z_]+)\b(?::[ \t]+[^\n`]{1,100})?)"
)
_UUID = re.compile(
    r"(?<![\w-])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![\w-])"
)
_HEX = re.compile(r"(?<![\w-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}(?![\w-])")
_ISSUE = re.compile(r"(?<![\w&])#\d{2,}\b")
_TICKET = re.compile(r"(?<![\w-])(?:[A-Z]{2,}\d+(?:-[A-Z]{0,4}\d+)?|[A-Z]{2,}-\d+)(?![\w-])")
_VERSION = re.compile(r"(?<![\w.])v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?(?!\w|\.\d)")
_NUMBER = re.compile(
    r"(?<![\w.])(?:lines?|port)[ \t]\d+(?:-\d+)?\b"
    r"|(?<![\w./])~?\d[\d,]*(?:\.\d+)?(?:[ \t]?%|[ \t-]?(?:ms|s|secs?|seconds?|minutes?|mins?"
    r"|hours?|h|days?|[KMGT]i?B|kB|bytes?|tokens?|lines?|chars?|characters?|px|files?|messages?"
    r"|entries|entry|tests?|calls?|turns?|rows?|items?|MB/s|req/s|k|K|M)\b)"
)
_COMMAND_WORDS = (
    "npm|npx|pnpm|yarn|node|bun|deno|git|python|python3|pip|pytest|uv|ruff|mypy|cargo|go|make"
    "|cmake|docker|kubectl|curl|wget|ls|cd|cat|grep|rg|find|sed|awk|mkdir|rm|mv|cp|chmod|tsc|tsx"
    "|jest|vitest|eslint|prettier|gh|brew|apt|apt-get|sudo|bash|sh|echo|export|memlens|pi"
    "|openclaw|just|poetry|conda|java|mvn|gradle|tar|ssh|scp|kill|ps|which|touch|head|tail|wc"
)
_COMMAND = re.compile(rf"^(?:{_COMMAND_WORDS})(?:\s|$)")
_DOLLAR = re.compile(r"(?m)^[ \t]*\$[ \t]+(\S[^\n]{0,200})")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_DECISION = re.compile(
    r"\b(?:decided|decide to|decision|we'll use|we will use|i'll use|let's (?:use|go with|keep)"
    r"|going with|go with|switch(?:ed)? (?:\w+ ){0,3}to|instead of|rather than|chose|choose to"
    r"|opted|settled on|agreed|keep (?:the|it|them|both|old)|only want|i prefer|we prefer"
    r"|should (?:always|never)|must (?:not|never|always)|don't (?:use|want|touch|change|add)"
    r"|do not (?:use|touch|change))\b",
    re.I,
)
_BOX = re.compile(r"^\s*[-*+]\s*\[ \]\s*(\S.*)$")
_TODO = re.compile(
    r"\b(?:TODO|FIXME|XXX)\b[:\s-]*|\b(?:next steps?|still needs? to|remaining:|not yet (?:done"
    r"|implemented)|left to do|to be done|needs? to be (?:done|fixed|added))\b",
    re.I,
)
_RULE = re.compile(r"\b(?:never|always|must|don't|do not|only)\b", re.I)
"""A user's rule ("never write to the input folder") is a decision too."""
_THANKS = re.compile(r"^\W*(?:ok(?:ay)?|great|thanks?|thank you|cool|nice|perfect|good)\b", re.I)
_LATER = re.compile(
    r"\b(?:remember to|don't forget|do not forget|later|at some point|eventually|after that"
    r"|afterwards|when you're done|once that's done|next,? (?:please|can you))\b",
    re.I,
)
_SPACE = re.compile(r"\s+")
_NOT_NEWLINE = re.compile(r"[^\n]")
_READ_TOOLS = frozenset({"read", "Read", "read_file", "view"})
_WRITE_TOOLS = frozenset(
    {"write", "edit", "Write", "Edit", "MultiEdit", "write_file", "apply_patch"}
)
_BASH_TOOLS = frozenset({"bash", "Bash", "shell", "exec", "run_command"})


@dataclass(slots=True)
class Found:
    """One thing the summarised messages hold, with every entry it came from."""

    text: str
    category: str
    source: list[str] = field(default_factory=list)
    detail: str = ""
    """For a ``file``: ``read`` or ``modified``; else empty."""


def _clean(text: str, limit: int) -> str:
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def key_of(text: str) -> str:
    """The identity of an item's text: case, spaces, quotes and end punctuation ignored."""
    text = text.casefold().replace("`", "").replace('"', "").replace("'", "")
    return _SPACE.sub(" ", text).strip(" .,:;!?()")


class Collector:
    """Items found so far, deduplicated by category group and :func:`key_of` text."""

    def __init__(self) -> None:
        self.items: dict[tuple[str, str], Found] = {}

    def add(self, text: str, category: str, entry_id: str, detail: str = "") -> None:
        """Record *text* as *category* from *entry_id* (a better category wins a tie)."""
        limit = MAX_SENTENCE if category in SENTENCE_CATEGORIES else MAX_IDENTIFIER
        text = _clean(text, limit)
        key = key_of(text)
        if len(key) < 2:
            return
        slot = (group_of(category) if category != "file" else "identifier", key)
        found = self.items.get(slot)
        if found is None:
            self.items[slot] = Found(text, category, [entry_id], detail)
            return
        if entry_id not in found.source:
            found.source.append(entry_id)
        if _PRIORITY.get(category, 99) < _PRIORITY.get(found.category, 99):
            found.category, found.text = category, text
        if category == "file" and (detail == "modified" or not found.detail):
            found.detail = detail


def _blank(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """*text* with each span's characters turned to spaces (its line breaks kept)."""
    parts: list[str] = []
    last = 0
    for start, end in spans:
        parts.append(text[last:start])
        parts.append(_NOT_NEWLINE.sub(" ", text[start:end]))
        last = end
    parts.append(text[last:])
    return "".join(parts)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in spans:
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


def _path_ok(path: str, relaxed: bool) -> bool:
    if "//" in path or path.endswith((".", "-")) or not any(c.isalpha() for c in path):
        return False
    if path.startswith(("/", "~/", "./", "../")) or _HAS_EXT.search(path):
        return True
    slashes = path.rstrip("/").count("/")
    if relaxed:
        return slashes >= 1
    # prose ("Model/thinking/theme", "read/write/edit") is not a folder
    return slashes >= 2 and (path.endswith("/") or path == path.lower())


def _paths(
    text: str, entry_id: str, out: Collector, *, relaxed: bool = False
) -> list[tuple[int, int]]:
    """Record the paths of *text*; return their spans."""
    spans = []
    for m in _PATH.finditer(text):
        path = m.group(1).rstrip(".,:;")
        if _path_ok(path, relaxed):
            out.add(path, "path", entry_id)
            spans.append(m.span())
    for m in _FILE.finditer(text):
        out.add(m.group(0), "path", entry_id)
        spans.append(m.span())
    return sorted(spans)


def _inline(code: str, entry_id: str, out: Collector) -> None:
    """Inline code names one thing: a URL, a path, a command, an error or a symbol."""
    code = code.strip()
    if not code:
        return
    if _URL.fullmatch(code):
        out.add(code, "url", entry_id)
    elif _COMMAND.match(code) and " " in code:
        out.add(code, "command", entry_id)
    elif _ERROR.match(code):
        out.add(code, "error", entry_id)
    elif _UP.fullmatch(code) or (
        " " not in code and ("/" in code or _HAS_EXT.search(code)) and _path_ok(code, True)
    ):
        out.add(code.lstrip("@"), "path", entry_id)
    elif _UUID.fullmatch(code) or _HEX.fullmatch(code):
        out.add(code, "id", entry_id)
    elif _NUMBER.fullmatch(code):
        out.add(code, "number", entry_id)
    elif re.fullmatch(r"[\w$.:<>\[\]-]+(?:\([^()]{0,60}\))?", code) and any(
        c.isalpha() for c in code
    ):
        out.add(code, "symbol", entry_id)


def identifiers(text: str, entry_id: str, out: Collector) -> None:
    """Every identifier of prose *text* (inline code first, fenced code: paths and URLs)."""
    text = RECALLED.sub(" ", text)
    fences = [m.span() for m in FENCE.finditer(text)]
    for start, end in fences:
        block = text[start:end]
        for m in _URL.finditer(block):
            out.add(m.group(0).rstrip(".,:;"), "url", entry_id)
        _paths(_URL.sub(" ", block), entry_id, out)
    prose = _blank(text, fences)
    spans = []
    for m in _INLINE.finditer(prose):
        _inline(m.group(1), entry_id, out)
        spans.append(m.span())
    prose = _blank(prose, spans)
    urls = []
    for m in _URL.finditer(prose):
        out.add(m.group(0).rstrip(".,:;"), "url", entry_id)
        urls.append(m.span())
    prose = _blank(prose, urls)
    for m in _ERROR.finditer(prose):
        out.add(m.group(0).rstrip(), "error", entry_id)
    for m in _DOLLAR.finditer(prose):
        if _COMMAND.match(m.group(1)):
            out.add(m.group(1), "command", entry_id)
    prose = _blank(prose, _merged(_paths(prose, entry_id, out)))
    for rx in (_UUID, _HEX, _ISSUE, _TICKET, _VERSION):
        for m in rx.finditer(prose):
            out.add(m.group(0), "id", entry_id)
    for m in _NUMBER.finditer(prose):
        out.add(m.group(0).lstrip("~"), "number", entry_id)
    for rx in (_CALL, _CAMEL, _SNAKE):
        for m in rx.finditer(prose):
            if m.group(0) not in _PRODUCTS:
                out.add(m.group(0), "symbol", entry_id)


def _sentences(text: str) -> Iterable[str]:
    text = _blank(text, [m.span() for m in FENCE.finditer(RECALLED.sub(" ", text))])
    for line in text.splitlines():
        if line.lstrip().startswith("|"):
            continue  # a table row is not a sentence
        line = LEAD.sub("", line.strip()).replace("**", "")
        for s in _SENTENCE_END.split(line):
            s = s.strip()
            if len(s) >= 12:
                yield s


def _sentence_items(text: str, role: str, entry_id: str, out: Collector) -> None:
    """Decisions and open TODOs of a user or assistant text."""
    prose = _blank(text, [m.span() for m in FENCE.finditer(text)])
    for line in prose.splitlines():
        box = _BOX.match(line)
        m = _TODO.search(line) if box is None else None
        if box is None and m is None:
            continue
        if box is not None:
            item = box.group(1)
        elif m is not None and m.group(0).strip(" :-").upper() in ("TODO", "FIXME", "XXX"):
            item = line[m.end() :]
        else:
            item = line
        item = LEAD.sub("", item.strip()).replace("**", "")
        if len(item) >= 8 and not item.endswith(":"):  # "Next steps:" heads a list
            out.add(item, "todo", entry_id)
    for s in _sentences(text):
        if _DECISION.search(s) or (role == "user" and _RULE.search(s)):
            out.add(s, "decision", entry_id)
        elif role == "user" and _LATER.search(s):
            out.add(s, "request", entry_id)


def _request_text(text: str) -> str:
    """The ask of a user message: its first sentence; empty for a bare thank-you."""
    first = next(iter(_sentences(text)), "") or _clean(text, MAX_SENTENCE)
    if _THANKS.match(first) and len(first.split()) <= 4 and "?" not in first:
        return ""
    return first


def _tool_calls(m: Message, entry_id: str, out: Collector) -> None:
    for call in m.tool_calls():
        args = call.arguments if isinstance(call.arguments, dict) else {}
        path = args.get("path") or args.get("file_path") or args.get("filePath")
        if isinstance(path, str) and path.strip():
            if call.name in _READ_TOOLS:
                out.add(path, "file", entry_id, "read")
            elif call.name in _WRITE_TOOLS:
                out.add(path, "file", entry_id, "modified")
        command = args.get("command") or args.get("cmd")
        if call.name in _BASH_TOOLS and isinstance(command, str) and command.strip():
            out.add(command.strip().splitlines()[0], "command", entry_id)


def _errors(text: str, entry_id: str, out: Collector, *, failed: bool) -> None:
    """Error lines of tool output; a failed run's first line when none matches."""
    found = False
    for n, m in enumerate(_ERROR.finditer(text)):
        if n >= 5:
            break
        out.add(m.group(0).rstrip(), "error", entry_id)
        found = True
    if failed:
        _paths(text[:4000], entry_id, out)
    if failed and not found:
        # npm and shells echo the command first ("> pkg@1.0 check", "$ make")
        lines = (ln.strip() for ln in text.splitlines())
        line = next((ln for ln in lines if ln and ln[0] not in ">$+"), "")
        if line:
            out.add(line, "error", entry_id)


def _pending(messages: Sequence[tuple[str, Message]]) -> set[int]:
    """Positions of user messages whose request is still open at the cut.

    The last user message of the range, and any user message after which no
    assistant text came before the next user message (aborted, failed, or cut).
    """
    users = [i for i, (_, m) in enumerate(messages) if m.role == "user" and m.text().strip()]
    pending: set[int] = set()
    for n, i in enumerate(users):
        end = users[n + 1] if n + 1 < len(users) else len(messages)
        answered = any(
            m.role == "assistant"
            and m.stop_reason not in ("aborted", "error")
            and any(b.kind == "text" and b.text.strip() for b in m.blocks)
            for _, m in messages[i + 1 : end]
        )
        if not answered or n == len(users) - 1:
            pending.add(i)
    return pending


def extract(messages: Sequence[tuple[str, Message]]) -> list[Found]:
    """Every item of *messages* (``(entry id, message)`` in order), first seen first."""
    out = Collector()
    pending = _pending(messages)
    for pos, (entry_id, m) in enumerate(messages):
        role = m.role
        if role in ("user", "assistant", "custom", "branchSummary", "compactionSummary"):
            text = "\n".join(b.text for b in m.blocks if b.kind == "text" and b.text)
            identifiers(text, entry_id, out)
            if role in ("user", "assistant", "compactionSummary"):
                _sentence_items(text, role, entry_id, out)
            ask = _request_text(text) if pos in pending else ""
            if ask:
                out.add(ask, "request", entry_id)
            _tool_calls(m, entry_id, out)
        elif role == "toolResult":
            _errors(m.text(), entry_id, out, failed=m.is_error)
        elif role == "bashExecution":
            command = m.blocks[0].text if m.blocks else ""
            if command.strip():
                out.add(command.strip().splitlines()[0], "command", entry_id)
            code = m.raw.get("exitCode")
            output = m.blocks[1].text if len(m.blocks) > 1 else ""
            _errors(output, entry_id, out, failed=isinstance(code, int) and code != 0)
    return list(out.items.values())
