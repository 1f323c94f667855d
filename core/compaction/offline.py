"""The offline provider: extractive summaries and facts by rule, no model.

:func:`offline_summary` fills the five headings of the safeguard summary
(algorithms.md section 8) from the user and assistant text itself:

* **Decisions** -- sentences that say "decided", "we'll use", "let's use",
  "going with", "switch to", "instead of", "chose", "opted for", "settled on".
* **Open TODOs** -- TODO/FIXME, "next:", "still need", "remaining", "not yet",
  unchecked ``- [ ]`` items (ticked later as ``- [x]`` -> gone), and "I'll"/"we
  will" plans in the last :data:`PLAN_MESSAGES` assistant texts (earlier plans
  were most likely carried out).
* **Constraints/Rules** -- user sentences with must/never/always/don't/only/
  should not/required/make sure/avoid.
* **Pending user asks** -- user messages after the last assistant text, and the
  questions of the last :data:`LAST_TURNS` user messages.
* **Exact identifiers** -- error messages, file paths, ``foo()`` / ``Foo.bar``,
  URLs, short commit hashes, versions, then inline code spans, taken in turn by
  kind (most frequent first) so that no kind crowds out the others. Error lines
  of failed tool results count too; other tool output does not (file contents).

Fenced code, tables, code-like lines, tool calls and tool results never make a
sentence; a ``<recalled-context>`` block is not the user's words and is skipped.
Each section keeps at most :data:`MAX_ITEMS` items of at most
:data:`MAX_ITEM_CHARS` characters; when there are more, Decisions, Open TODOs and
Pending user asks keep the most recent (later decisions revise earlier ones),
Constraints/Rules and Exact identifiers the first ones. Everything is redacted;
an identifier that needed redaction is dropped (it is no longer exact).

:func:`extract_facts_offline` applies similar rules to produce knowledge
candidates of the six fact types.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.compaction.previous_summary import (
    EMPTY,
    HEADINGS,
    MAX_ITEM_CHARS,  # noqa: F401  (part of this module's API: the item limit)
    carried_sections,
    clip,
    parse_summary,
    union_carried,
)
from core.recall.updater import Candidate
from core.safety.redact import redact
from core.store.knowledge import FACT_TYPES

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from core.transcript.message import Message

LABEL = "_Offline summary (extracted by memlens without a model)._"
MAX_ITEMS = 12
MAX_FACTS = 15
LAST_TURNS = 3
PLAN_MESSAGES = 3
_KEEP_RECENT = frozenset({"Decisions", "Open TODOs", "Pending user asks"})

_I = re.IGNORECASE
RECALLED = re.compile(r"<recalled-context\b.*?(?:</recalled-context>|\Z)", re.S)
FENCE = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[ \t]*$|\Z)", re.S | re.M)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'`(\[*_])")
LEAD = re.compile(r"^(?:>\s*)*(?:#{1,6}\s+|[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+)*")
_EMPHASIS = re.compile(r"\*\*|__")
_SPACE = re.compile(r"\s+")
_CODE_START = re.compile(
    r"^(?:import\s|from\s+\S+\s+import\s|export\s|const\s|let\s|var\s|def\s|class\s+\w+\s*[:({]"
    r"|function[\s(]|return\b|if\s*\(|for\s*\(|while\s*\(|#include|//|/\*|\*/|@\w+\(|[{}\])]"
    r"|\$\s|</?[a-zA-Z][^>]*>$)"
)
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.+)$")
_STEP = re.compile(
    r"^(?:(?:now|first|then|ok(?:ay)?|next|so|great|good|perfect|alright),?\s+)*"
    r"(?:let me|let's(?! (?:use|go with|switch|keep|stick|not)\b)|I'll now|now I'll)\b",
    _I,
)
_JSONISH = re.compile(r'[{,\[]\s*"[\w-]+"\s*:')
_CHECKBOX = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[([ xX])\]\s+(.+)$", re.M)

_DECISION = re.compile(
    r"\b(?:decided|decide to|we'll use|we will use|let's use|let's go with|going with"
    r"|go with|switch(?:ed|ing)? to|instead of|chose|chosen|opted for|settled on"
    r"|we'll go with|agreed (?:on|to))\b",
    _I,
)
_TODO = re.compile(
    r"\bTODO\b|\bFIXME\b|\bnext:|\bnext steps?\b|\bstill (?:need|have) to\b|\bstill needs?\b"
    r"|\bnext (?:is|up)\b|\bremaining\b|\bnot yet\b|\byet to\b|\bleft to do\b",
    _I,
)
_PLAN = re.compile(
    r"\b(?:I'll|I will|we'll|we will|I'm going to|I am going to|we're going to)\b", _I
)
_CONSTRAINT = re.compile(
    r"\b(?:must|mustn't|never|always|don't|do not|only|should not|shouldn't|required"
    r"|make sure|avoid|at most|no more than)\b",
    _I,
)

_URL = re.compile(r"https?://[^\s<>()\[\]{}\"'`]+")
_ERRORS = (
    re.compile(r"(?<![\w.])[A-Z][A-Za-z0-9]*(?:Error|Exception)(?::\s|\s*\()[^\n`]*"),
    re.compile(
        r"\b(?:ENOENT|EACCES|EADDRINUSE|ECONNREFUSED|ECONNRESET|EPERM|EEXIST|ENOTDIR"
        r"|EISDIR|ETIMEDOUT|EPIPE|EMFILE)\b[^\n`]*"
    ),
    re.compile(r"(?<![\w.])error(?:\[E\d+\]| TS\d+):\s+\S[^\n`]*", _I),
    re.compile(r"^\s*(?:error|fatal):\s+\S[^\n`]*", _I),
)
_EXTS = (
    "py|pyi|ts|tsx|js|jsx|mjs|cjs|json|jsonl|md|toml|yaml|yml|rs|go|java|kt|swift|c|h|cc"
    "|cpp|hpp|cs|rb|php|sh|bash|zsh|css|scss|html|sql|txt|lock|cfg|ini|env|xml|proto|vue"
)
_PATH = re.compile(r"(?<![\w/.:@-])@?((?:~|\.{1,2})?/?(?:[\w@.+-]+/)+[\w@.+-]+)")
_FILE = re.compile(rf"(?<![\w/.@-])[\w-]+(?:\.[\w-]+)*\.(?:{_EXTS})(?![\w/-])")
_HAS_EXT = re.compile(rf"\.(?:{_EXTS}|[A-Za-z][A-Za-z0-9]{{0,7}})$")
_CALL = re.compile(r"(?<![\w.$])[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\(\)")
_MEMBER = re.compile(rf"(?<![\w.$/])[A-Z][\w$]*\.(?!(?:{_EXTS})\b)[a-z_$][\w$]*(?![\w$(/]|\.\w)")
_COMMIT = re.compile(r"(?<![\w-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,12}(?![\w-])")
_VERSION = re.compile(r"(?<![\w.])(?:[@\w/-]+@)?v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?(?!\w|\.\w)")
_INLINE = re.compile(r"`([^`\n]{2,80})`")
_IDENTIFIER_LIKE = re.compile(r"[^A-Za-z ]|[a-z][A-Z]|^[A-Z]{2,}")
"""A code span worth keeping: not a plain word (``Text``, ``dim``)."""
_KINDS = ("error", "path", "function", "url", "commit", "version", "code")


@dataclass(frozen=True, slots=True)
class _Said:
    """The prose of one user or assistant message."""

    index: int
    role: str
    text: str
    """The message's text blocks, recalled blocks removed."""
    prose: str
    """:attr:`text` without fenced code."""


def _said(messages: Sequence[Message]) -> list[_Said]:
    out = []
    for i, m in enumerate(messages):
        if m.role not in ("user", "assistant"):
            continue
        text = "\n".join(b.text for b in m.blocks if b.kind == "text" and b.text)
        text = RECALLED.sub("", text).strip()
        if text:
            out.append(_Said(i, m.role, text, FENCE.sub("", text)))
    return out


def looks_like_code(line: str) -> bool:
    """True for a line that reads as source code rather than prose."""
    s = line.strip()
    if not s or s.startswith("|") or s.endswith(("{", ";", "=>", "(")):
        return True
    if _CODE_START.match(s) or _JSONISH.search(s):
        return True
    symbols = sum(1 for ch in s if ch in "{}[]();=<>$\\")
    return symbols / len(s) > 0.1


def sentences(prose: str) -> list[str]:
    """The prose sentences of *prose*, markdown markers removed.

    Wrapped lines of a paragraph or list item are joined; a blank line, a code-like
    line, a heading, a bullet or a quote starts a new unit.
    """
    units: list[str] = []
    joinable = False
    for raw in prose.splitlines():
        line = raw.strip()
        lead = LEAD.match(line)
        cut = lead.end() if lead else 0
        line = _EMPHASIS.sub("", line[cut:])
        if not line or raw.lstrip().startswith("|") or looks_like_code(line):
            joinable = False
            continue
        if joinable and cut == 0:
            units[-1] += " " + line
        else:
            units.append(line)
        joinable = not raw.lstrip().startswith("#")
    out = []
    for unit in units:
        for part in _SENTENCE_END.split(unit):
            part = part.strip()
            if len(part) >= 3 and not looks_like_code(part):
                out.append(part)
    return out


def _norm(s: str) -> str:
    return s.replace("\u2019", "'")


def _key(item: str) -> str:
    return _SPACE.sub(" ", item.replace("`", "").lower()).strip(" .;:")


# -- identifiers --------------------------------------------------------------------------
def _error_lines(text: str) -> Iterable[str]:
    for line in text.splitlines():
        for pattern in _ERRORS:
            m = pattern.search(line)
            if m:
                if not looks_like_code(m.group(0)):
                    yield m.group(0).strip().rstrip("`")
                break


def _path_ok(p: str) -> bool:
    if "//" in p or p.endswith("/"):
        return False
    return p.startswith(("/", "~/", "./", "../")) or _HAS_EXT.search(p) is not None


def _scan(said: _Said) -> Iterable[tuple[str, str]]:
    yield from (("error", e) for e in _error_lines(said.text))
    prose = said.prose
    for m in _URL.finditer(prose):
        yield "url", m.group(0).rstrip(".,;:!?")
    prose = _URL.sub(" ", prose)
    for m in _PATH.finditer(prose):
        p = m.group(1).rstrip(".,;:!?")
        if _path_ok(p):
            yield "path", p
    for m in _FILE.finditer(prose):
        yield "path", m.group(0)
    for pattern in (_CALL, _MEMBER):
        yield from (("function", m.group(0)) for m in pattern.finditer(prose))
    yield from (("commit", m.group(0)) for m in _COMMIT.finditer(prose))
    yield from (("version", m.group(0)) for m in _VERSION.finditer(prose))
    for m in _INLINE.finditer(prose):
        code = m.group(1).strip()
        if _IDENTIFIER_LIKE.search(code) and len(code) >= 3:
            yield "code", code


def _prefer_full_paths(paths: Counter[str], code: Counter[str]) -> None:
    """Count a bare ``main.ts`` for the longest ``.../main.ts`` seen: that one is exact."""
    full: dict[str, str] = {}
    for p in sorted(paths, key=len):
        if "/" in p:
            full[p.rsplit("/", 1)[1]] = p
    for name, p in full.items():
        paths[p] += paths.pop(name, 0) + code.pop(name, 0)


def _identifiers(said: list[_Said], messages: Sequence[Message]) -> list[str]:
    found: dict[str, Counter[str]] = {k: Counter() for k in _KINDS}
    first: dict[str, int] = {}
    hits: list[tuple[str, str]] = []
    for s in said:
        hits.extend(_scan(s))
    for m in messages:  # failures the tools reported; their other output is file contents
        if m.role in ("toolResult", "bashExecution") and m.is_error:
            hits.extend(("error", e) for e in _error_lines(m.text()))
    for kind, value in hits:
        value = clip(value)
        if len(value) < 2 or "[REDACTED" in value:
            continue
        found[kind][value] += 1
        first.setdefault(value, len(first))
    _prefer_full_paths(found["path"], found["code"])
    ranked = {k: sorted(c, key=lambda v: (-c[v], first[v])) for k, c in found.items()}
    out: list[str] = []
    seen: set[str] = set()
    while any(ranked.values()) and len(out) < MAX_ITEMS:
        for kind in _KINDS:
            while ranked[kind]:
                value = ranked[kind].pop(0)
                if _key(value) not in seen:
                    seen.add(_key(value))
                    out.append(value)
                    break
            if len(out) >= MAX_ITEMS:
                break
    return [f"`{v}`" if "`" not in v else v for v in out]


# -- sections ------------------------------------------------------------------------------
def _pending(said: list[_Said]) -> list[str]:
    last_answer = max((s.index for s in said if s.role == "assistant"), default=-1)
    users = [s for s in said if s.role == "user"]
    out: list[str] = []
    for pos, s in enumerate(users):
        if s.index > last_answer:  # not answered yet, however far back
            out.append(clip(s.prose or s.text))
        elif pos >= len(users) - LAST_TURNS:
            out.extend(clip(q) for q in sentences(s.prose) if q.endswith("?"))
    return out


def _listed_after_todo(prose: str) -> list[str]:
    """The list items under a "Remaining:" / "Next steps:" / "TODO:" line."""
    out: list[str] = []
    under = False
    for line in prose.splitlines():
        item = _ITEM.match(line)
        if item and under:
            if not item.group(1).startswith(("[x]", "[X]")):
                out.append(clip(_EMPHASIS.sub("", LEAD.sub("", line.strip()))))
        elif line.strip():
            plain = _norm(line.strip())
            under = not item and plain.endswith(":") and _TODO.search(plain) is not None
    return out


def _sections(messages: Sequence[Message]) -> dict[str, list[str]]:
    said = _said(messages)
    sec: dict[str, list[str]] = {h: [] for h in HEADINGS}
    assistants = [s.index for s in said if s.role == "assistant"]
    plan_from = assistants[-PLAN_MESSAGES] if len(assistants) >= PLAN_MESSAGES else -1
    done: set[str] = set()
    for s in said:
        for m in _CHECKBOX.finditer(s.prose):
            item = clip(_EMPHASIS.sub("", m.group(2)))
            if m.group(1) == " ":
                sec["Open TODOs"].append(item)
            else:
                done.add(_key(item))
        sec["Open TODOs"].extend(_listed_after_todo(s.prose))
        for sentence in sentences(s.prose):
            plain = _norm(sentence)
            if plain.endswith("?"):
                continue
            if s.role == "user" and _CONSTRAINT.search(plain):
                sec["Constraints/Rules"].append(clip(sentence))
            elif plain.endswith(":") or _STEP.match(plain):
                continue  # a lead-in to a list or a tool call, not a statement
            elif _DECISION.search(plain):
                sec["Decisions"].append(clip(sentence))
            elif _TODO.search(plain) or (
                s.role == "assistant" and s.index >= plan_from and _PLAN.search(plain)
            ):
                sec["Open TODOs"].append(clip(sentence))
    sec["Open TODOs"] = [t for t in sec["Open TODOs"] if _key(t) not in done]
    sec["Pending user asks"] = _pending(said)
    sec["Exact identifiers"] = _identifiers(said, messages)
    return sec


def _dedupe(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        k = _key(item)
        if k and k != _key(EMPTY) and k not in seen:
            seen.add(k)
            out.append(item)
    return out


def _cap(heading: str, items: list[str]) -> list[str]:
    if len(items) <= MAX_ITEMS:
        return items
    return items[-MAX_ITEMS:] if heading in _KEEP_RECENT else items[:MAX_ITEMS]


def render(sections: dict[str, list[str]], carried: Sequence[tuple[str, str]] = ()) -> str:
    """The summary text: the label, the *carried* sections, then each of the five headings.

    *carried* are the previous summary's own sections (:func:`carried_sections`),
    redacted, before the five headings with their bullets or ``(none)``.
    """
    parts = [LABEL]
    parts += [f"## {title}\n{redact(body)}" for title, body in carried]
    for h in HEADINGS:
        items = _cap(h, _dedupe(redact(i) for i in sections.get(h, [])))
        body = "\n".join(f"- {i}" for i in items) if items else EMPTY
        parts.append(f"## {h}\n{body}")
    return "\n\n".join(parts) + "\n"


def offline_summary(messages: Sequence[Message], *, previous_summary: str | None = None) -> str:
    """An extractive summary of *messages* under the five required headings.

    Parameters
    ----------
    messages
        The messages to summarise, oldest first.
    previous_summary
        The previous compaction's summary. The bullets of its five headings are
        carried forward (first), the new ones added after them, duplicates
        dropped; its other sections (pi's Goal, Progress, Next Steps...) are
        kept as they were, before the five (:func:`carried_sections`).

    Returns
    -------
    str
        The label line, then ``## Decisions``, ``## Open TODOs``,
        ``## Constraints/Rules``, ``## Pending user asks``, ``## Exact identifiers``,
        each with bullets or ``(none)``. Deterministic and redacted.
    """
    new = _sections(messages)
    if not previous_summary:
        return render(new)
    old = parse_summary(previous_summary)
    return render({h: old[h] + new[h] for h in HEADINGS}, carried_sections(previous_summary))


def offline_merge(summaries: Sequence[str]) -> str:
    """Merge partial summaries heading by heading (union, order kept).

    The sections beside the five headings (:func:`carried_sections`) are kept
    once each, the first summary's first.
    """
    parsed = [parse_summary(s) for s in summaries]
    return render(
        {h: [i for p in parsed for i in p[h]] for h in HEADINGS}, union_carried(summaries)
    )


# -- facts ---------------------------------------------------------------------------------
_GREETING = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|thx|ok(?:ay)?|got it|sure|great|cool|nice|perfect"
    r"|awesome|sounds good|yes|no|yep|nope|lgtm|alright|good (?:morning|catch|idea))\b",
    _I,
)
_DEBUG = re.compile(
    r"\b(?:debugging|debug (?:print|log|output|statement|code)|console\.log|print\("
    r"|temporar(?:y|ily)|for now|quick(?:ly)? (?:test|check)|let me (?:check|see|look|try|run"
    r"|read|verify|inspect|get|find|search|grep|open)|let's (?:check|see|look|try))\b",
    _I,
)
_ISSUE = re.compile(
    r"\b(?:bug|fails?|failing|failed|broken|crash(?:es|ed|ing)?|regression|doesn't work"
    r"|does not work|not working|workaround)\b",
    _I,
)
_TASK = re.compile(
    r"\b(?:(?:is|are|now|all|was|were|been) (?:done|complete)|completed|finished"
    r"|in progress|blocked|wip|not yet (?:implemented|done)|is pending|merged|shipped)\b",
    _I,
)
_IMPL = re.compile(
    r"(?<!be )\b(?:implemented|added|created|refactored|rewrote|moved|renamed|extracted|introduced"
    r"|replaced)\b",
    _I,
)
_SETTING = re.compile(
    r"\b(?:config\w*|settings?|env(?:ironment)?|flags?|options?|variables?|toml|yaml|json"
    r"|defaults?|set to|parameters?)\b",
    _I,
)
_CONFIG = re.compile(
    r"(?<![=!<>\w])[A-Za-z_][\w.-]*\s*=\s*[^\s=]+|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b"
    r"|(?<![\w-])--[a-z][\w-]+"
)
_PORT = re.compile(r"\bport\s*:?\s*\d{2,5}\b|\blocalhost:\d{2,5}\b|127\.0\.0\.1:\d{2,5}", _I)
_ARCH = re.compile(
    r"\b(?:module|layer|service|component|package|subsystem|backend|frontend|server|client)\b"
    r".{0,80}\b(?:talks to|calls|depends on|sits (?:between|on top of)|communicates with"
    r"|delegates to|wraps|is built on|publishes to|subscribes to)\b"
    r"|\buses? (?:an? |the )?(?!(?:the|an?)\b)[\w/-]+(?: [\w/-]+)? (?:pattern|architecture)\b"
    r"|\b(?:event[- ]driven|pub/sub|microservices?|dependency injection)\b",
    _I,
)


def _has_identifier(sentence: str) -> bool:
    s = _URL.sub(" ", sentence)
    return bool(
        _INLINE.search(s)
        or _CALL.search(s)
        or _MEMBER.search(s)
        or _FILE.search(s)
        or any(_path_ok(m.group(1)) for m in _PATH.finditer(s))
    )


def _fact_type(s: str) -> str | None:
    if _DECISION.search(s):
        return "decision"
    if _ARCH.search(s):
        return "architecture"
    if _PORT.search(s) or (_CONFIG.search(s) and _SETTING.search(s)):
        return "config"
    if _IMPL.search(s) and _has_identifier(s):
        return "implementation"
    if any(p.search(s) for p in _ERRORS) or _ISSUE.search(s):
        return "issue"
    if _TASK.search(s):
        return "task_state"
    return None


def _worth_a_fact(sentence: str) -> bool:
    s = _norm(sentence)
    return (
        len(s) >= 20
        and len(s.split()) >= 4
        and not s.endswith(("?", ":"))
        and not _STEP.match(s)
        and not (_GREETING.match(s) and len(s) < 40)
        and not _DEBUG.search(s)
    )


def extract_facts_offline(messages: Sequence[Message]) -> list[Candidate]:
    """Knowledge candidates of the six fact types, found by rule.

    Only user and assistant prose is read (never tool calls, tool results,
    fenced code or code-like lines). Greetings, questions and temporary debug
    steps are skipped; a candidate still holding ``[REDACTED`` after redaction is
    dropped. The context is the user request the fact was said under. When more
    than :data:`MAX_FACTS` are found, the types take turns (newest first) and the
    chosen ones are returned in conversation order. Deterministic.
    """
    found: list[tuple[int, Candidate]] = []
    seen: set[str] = set()
    topic: str | None = None
    for s in _said(messages):
        if s.role == "user":
            first = next(iter(sentences(s.prose)), "")
            topic = clip(first, 120) if first else None
        for sentence in sentences(s.prose):
            if not _worth_a_fact(sentence):
                continue
            ftype = _fact_type(_norm(sentence))
            content = clip(sentence)
            if ftype is None or "[REDACTED" in content or _key(content) in seen:
                continue
            seen.add(_key(content))
            context = topic if topic and _key(topic) not in _key(content) else None
            if context is not None and "[REDACTED" in context:
                context = None
            found.append((len(found), Candidate(ftype, content, context)))
    if len(found) <= MAX_FACTS:
        return [c for _, c in found]
    by_type = {t: [f for f in reversed(found) if f[1].type == t] for t in FACT_TYPES}
    chosen: list[tuple[int, Candidate]] = []
    while len(chosen) < MAX_FACTS:
        for t in FACT_TYPES:
            if by_type[t] and len(chosen) < MAX_FACTS:
                chosen.append(by_type[t].pop(0))
    return [c for _, c in sorted(chosen, key=lambda f: f[0])]
