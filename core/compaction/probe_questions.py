"""Probe questions made by rule from a loss audit's items: reproducible, graded exactly.

Each question asks for one audit item (:class:`~core.compaction.audit.AuditItem`), so
its expected answer is known and its sources are the item's entries. Four
categories, as probe-based evaluation of context compression asks them:

* ``identifier`` -- recall: a sentence of the conversation with the identifier
  blanked (``Fill the blank: "the crash is in ____ when ..."``); an error as
  "What error did `COMMAND` fail with?" when the failed call is known;
* ``file`` -- artifacts: "Which file did the agent modify while working on
  `SYMBOL`?", "Which file holds `NAME`?" (a name an edit or write defined);
* ``decision`` -- "What was decided about TOPIC?";
* ``continuation`` -- what was last and what is next: the last error, the file
  modified last, the user's last pending request, each open TODO.

The topic of a sentence question is an identifier it names or its first content
words; those words are given away by the question and are not counted when the
answer is graded (:attr:`Probe.topic`). Every text taken from the messages is
redacted. No model is involved: the same audit gives the same questions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from core.compaction.audit_extract import IDENTIFIER_CATEGORIES, SENTENCE_CATEGORIES
from core.compaction.audit_match import content_words
from core.safety.redact import redact

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from core.compaction.audit import AuditItem
    from core.transcript.message import Message

PROBE_CATEGORIES = ("identifier", "file", "decision", "continuation")
DEFAULT_PROBES = 24
BLANK = "____"
MAX_CONTEXT = 220
"""Characters of a sentence shown around a blank."""
MIN_CONTEXT_WORDS = 4
"""Words a blanked sentence must keep besides the blank to be answerable."""
MIN_GRADED_WORDS = 2
MAX_TOPIC = 48
"""Characters of an identifier a question may name as its topic."""
"""Content words a sentence answer is graded on, beyond its topic; fewer: no question."""

MARKERS = frozenset(
    """decided decide decision we'll i'll let's going switch switched instead rather chose
    choose opted settled agreed keep prefer should never always must don't todo fixme next
    step steps still need needs remaining left done remember forget later eventually
    afterwards please also""".split()
)
"""Words that say a sentence is a decision, TODO or request: not its topic."""
_ORDERED_WORD = re.compile(r"[a-z0-9][a-z0-9_'-]{3,}")
_DEFINED = re.compile(
    r"\b(?:def|class|function|fn|func|interface|struct|enum|type|const)\s+([A-Za-z_$][\w$]{2,})"
)
_SPACE = re.compile(r"\s+")
_LETTERS = re.compile(r"[A-Za-z]{2,}")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_INLINE_CODE = re.compile(r"`[^`]*`")
_EDIT_KEYS = ("newText", "new_string", "new_str", "content", "newContent", "patch")
_IDENTIFIER_ORDER = ("error", "path", "symbol", "command", "url", "id", "number")


@dataclass(frozen=True, slots=True)
class Probe:
    """One question, the answer the messages give, and where it came from.

    Parameters
    ----------
    question
        What the model is asked (redacted).
    category
        One of :data:`PROBE_CATEGORIES`, or ``model`` for a question the model wrote.
    expected
        The audit item's text: the answer graded against.
    kind
        How the answer is matched: the audit item's category (``path``, ``file``,
        ``decision``...), or ``model``.
    source
        Entry ids the expected answer came from.
    topic
        Words the question gives away (not counted when grading a sentence).
    """

    question: str
    category: str
    expected: str
    kind: str
    source: tuple[str, ...]
    topic: tuple[str, ...] = ()


class Conversation:
    """The session's messages by entry id, their order, and each tool call by its id."""

    def __init__(self, messages: Iterable[tuple[str, Message]]) -> None:
        self.by_id: dict[str, Message] = {}
        self.position: dict[str, int] = {}
        self.calls: dict[str, tuple[str, str, dict[str, object]]] = {}
        for n, (entry_id, m) in enumerate(messages):
            self.by_id[entry_id] = m
            self.position[entry_id] = n
            for call in m.tool_calls():
                args = call.arguments if isinstance(call.arguments, dict) else {}
                if call.tool_id:
                    self.calls[call.tool_id] = (entry_id, call.name, args)

    def last(self, item: AuditItem) -> int:
        """Position of the latest entry *item* came from (-1: none known)."""
        return max((self.position.get(s, -1) for s in item.source), default=-1)

    def text(self, entry_id: str) -> str:
        """The text of an entry's message (text blocks and tool results)."""
        m = self.by_id.get(entry_id)
        return m.text() if m is not None else ""


def _clean(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _span(line: str, at: int, length: int) -> tuple[int, int]:
    """The sentence of *line* holding ``line[at:at+length]``; with the one before if short."""
    ends = [m.span() for m in _SENTENCE_END.finditer(line)]
    starts = [0, *(e for _, e in ends if e <= at)]
    start = starts[-1]
    end = next((b for b, _ in ends if b >= at + length), len(line))
    if len(starts) > 1 and len(_LETTERS.findall(line[start:end])) <= MIN_CONTEXT_WORDS:
        start = starts[-2]
    start = max(start, at - MAX_CONTEXT // 2)
    end = min(end, at + length + MAX_CONTEXT // 2)
    if start > 0 and line[start - 1] not in " \t" and " " in line[start:at]:
        start = line.index(" ", start) + 1  # not from the middle of a word
    if end < len(line) and line[end] not in " \t" and " " in line[at + length : end]:
        end = line.rindex(" ", at + length, end)
    return start, end


def _whole(line: str, text: str) -> list[int]:
    """Where *text* stands in *line* as a whole (not inside a longer word, path or name)."""
    out: list[int] = []
    at = line.find(text)
    while at >= 0:
        end = at + len(text)
        before = line[at - 1] if at else " "
        after = line[end : end + 2]
        inside = (before.isalnum() or before == "_") and (text[0].isalnum() or text[0] == "_")
        longer = bool(after) and (
            after[0].isalnum()
            or after[0] == "_"
            or (after[0] == "/" and bool(after[1:].strip()))
            or (after[0] in ".-" and after[1:].isalnum())
        )
        if not inside and not longer:
            out.append(at)
        at = line.find(text, at + 1)
    return out


def context_words(quote: str) -> int:
    """Words of *quote* outside inline code, blanks and elisions: what makes it answerable."""
    return len(_LETTERS.findall(_INLINE_CODE.sub(" ", quote.replace(BLANK, " "))))


def _cloze(item: AuditItem, conv: Conversation) -> str | None:
    """The sentence of the item's first message holding it, the item blanked; None if none fits."""
    for entry_id in item.source:
        for line in conv.text(entry_id).splitlines():
            spots = _whole(line, item.text)
            if not spots:
                continue
            start, end = _span(line, spots[0], len(item.text))
            parts, last = [], start
            for at in (a for a in spots if a >= start and a + len(item.text) <= end):
                parts += [line[last:at], BLANK]
                last = at + len(item.text)
            snippet = _clean(redact("".join([*parts, line[last:end]]))).strip("*# ")
            if context_words(snippet) >= MIN_CONTEXT_WORDS and BLANK in snippet:
                lead = "…" if line[:start].strip() else ""
                tail = "…" if line[end:].strip(" .!?") else ""
                return f"{lead}{snippet}{tail}"
    return None


def _failed_call(item: AuditItem, conv: Conversation) -> tuple[str, str, dict[str, object]] | None:
    """The tool call whose result gave the error *item*, when its result is among the sources."""
    for entry_id in item.source:
        m = conv.by_id.get(entry_id)
        if m is not None and m.role == "toolResult":
            for call_id in m.result_ids():
                found = conv.calls.get(call_id)
                if found is not None:
                    return found
    return None


def _error_question(item: AuditItem, conv: Conversation) -> str | None:
    call = _failed_call(item, conv)
    if call is not None:
        _, name, args = call
        command = args.get("command") or args.get("cmd")
        if isinstance(command, str) and command.strip():
            return f"What error did `{redact(command.strip().splitlines()[0])}` fail with?"
        path = args.get("path") or args.get("file_path")
        if isinstance(path, str) and path.strip():
            return f"What error did the {name} call on `{redact(path)}` give?"
    cloze = _cloze(item, conv)
    return None if cloze is None else f"Fill the blank, as the conversation had it: “{cloze}”"


def identifier_probes(items: Sequence[AuditItem], conv: Conversation) -> list[Probe]:
    """Recall questions, round-robin over the identifier categories (errors first)."""
    queues: dict[str, list[Probe]] = {c: [] for c in _IDENTIFIER_ORDER}
    for item in items:
        if item.category not in IDENTIFIER_CATEGORIES:
            continue
        if item.category == "error":
            question = _error_question(item, conv)
        else:
            cloze = _cloze(item, conv)
            question = cloze and f"Fill the blank, as the conversation had it: “{cloze}”"
        if question:
            queues[item.category].append(
                Probe(question, "identifier", item.text, item.category, item.source)
            )
    return _round_robin(list(queues.values()))


def _defined_names(entry_id: str, conv: Conversation) -> list[str]:
    """Names an edit or write of the entry defines (``def foo``, ``class Bar``...)."""
    m = conv.by_id.get(entry_id)
    names: list[str] = []
    for call in m.tool_calls() if m is not None else ():
        args = call.arguments if isinstance(call.arguments, dict) else {}
        for key in _EDIT_KEYS:
            value = args.get(key)
            if isinstance(value, str):
                names += [n for n in _DEFINED.findall(value) if n not in names]
    return names


def file_probes(items: Sequence[AuditItem], conv: Conversation) -> list[Probe]:
    """Artifact questions: the file read or modified while working on a symbol, or defining it."""
    symbols = [i for i in items if i.category == "symbol"]
    out: list[Probe] = []
    for item in items:
        if item.category != "file":
            continue
        verb = "modify" if item.detail == "modified" else "read"
        path = item.text.casefold()
        near = next(
            (
                s.text
                for s in symbols
                if set(s.source) & set(item.source) and s.text.casefold() not in path
            ),
            None,
        )
        if near is not None:
            question = f"Which file did the agent {verb} while working on `{redact(near)}`?"
        else:
            names = [
                n
                for entry_id in item.source
                for n in _defined_names(entry_id, conv)
                if n.casefold() not in path
            ]
            if not names:
                continue
            question = f"Which file holds `{redact(names[0])}`?"
        out.append(Probe(question, "file", item.text, "file", item.source))
    return out


def _ordered_words(text: str) -> list[str]:
    keep = content_words(text)
    out: list[str] = []
    for w in _ORDERED_WORD.findall(text.casefold()):
        w = w.strip("'-")
        if w in keep and w not in MARKERS and w not in out:
            out.append(w)
    return out


def topic_of(item: AuditItem, identifiers: Sequence[AuditItem]) -> tuple[str, tuple[str, ...]]:
    """What a sentence item is about, for the question, and the words that gives away.

    An identifier the sentence names, when enough words are left to grade; else its
    first content words (two, or one when that leaves too few to grade). ``("", ())``
    when the sentence is too short to ask about.
    """
    words = _ordered_words(item.text)
    for ident in identifiers:
        if 3 <= len(ident.text) <= MAX_TOPIC and _whole(item.text, ident.text):
            given = set(_ordered_words(ident.text)) | set(ident.text.casefold().split())
            if len([w for w in words if w not in given]) >= MIN_GRADED_WORDS:
                return f"`{ident.text}`", tuple(sorted(given))
    n = min(2, len(words) - MIN_GRADED_WORDS)
    if n < 1:
        return "", ()
    return " ".join(words[:n]), tuple(words[:n])


def sentence_probes(items: Sequence[AuditItem], conv: Conversation) -> list[Probe]:
    """Decisions, and the continuation questions: the last error, file, request; open TODOs."""
    idents = [i for i in items if i.category in ("symbol", "path", "file")]
    decisions: list[Probe] = []
    todos: list[Probe] = []
    for item in items:
        if item.category not in SENTENCE_CATEGORIES:
            continue
        topic, given = topic_of(item, idents)
        if not topic:
            continue
        topic = redact(topic)
        if item.category == "decision":
            question = f"What was decided about {topic}?"
            decisions.append(Probe(question, "decision", item.text, "decision", item.source, given))
        elif item.category == "todo":
            question = f"What was still to do about {topic}?"
            todos.append(Probe(question, "continuation", item.text, "todo", item.source, given))
    return [*decisions, *_lasts(items, conv), *todos]


def _latest(items: Iterable[AuditItem], conv: Conversation) -> AuditItem | None:
    best: AuditItem | None = None
    for item in items:
        if best is None or conv.last(item) >= conv.last(best):
            best = item
    return best


def _lasts(items: Sequence[AuditItem], conv: Conversation) -> list[Probe]:
    """What was last: the error, the file modified, the user's pending request."""
    out: list[Probe] = []
    error = _latest((i for i in items if i.category == "error"), conv)
    if error is not None:
        question = "What was the last error a command or tool call failed with?"
        out.append(Probe(question, "continuation", error.text, "error", error.source))
    edited = _latest((i for i in items if i.category == "file" and i.detail == "modified"), conv)
    if edited is not None:
        question = "Which file did the agent modify last?"
        out.append(Probe(question, "continuation", edited.text, "file", edited.source))
    request = _latest((i for i in items if i.category == "request"), conv)
    if request is not None and len(content_words(request.text)) >= MIN_GRADED_WORDS:
        question = "What did the user ask last that was still pending?"
        out.append(Probe(question, "continuation", request.text, "request", request.source))
    return out


def _round_robin(queues: Sequence[Sequence[Probe]], limit: int | None = None) -> list[Probe]:
    out: list[Probe] = []
    seen: set[str] = set()
    depth = max((len(q) for q in queues), default=0)
    for n in range(depth):
        for q in queues:
            if n < len(q) and q[n].question not in seen:
                seen.add(q[n].question)
                out.append(q[n])
                if limit is not None and len(out) >= limit:
                    return out
    return out


def generate(
    items: Sequence[AuditItem], conversation: Conversation, limit: int = DEFAULT_PROBES
) -> list[Probe]:
    """At most *limit* questions about *items*, spread over :data:`PROBE_CATEGORIES`.

    The categories take turns (identifier, file, decision, continuation), each in its
    own order: the same items give the same questions.
    """
    if limit < 1:
        return []
    sentences = sentence_probes(items, conversation)
    by_category = {
        "identifier": identifier_probes(items, conversation),
        "file": file_probes(items, conversation),
        "decision": [p for p in sentences if p.category == "decision"],
        "continuation": [p for p in sentences if p.category == "continuation"],
    }
    ordered = _round_robin([by_category[c] for c in PROBE_CATEGORIES])
    chosen, rest = ordered[:limit], ordered[limit:]
    while True:
        shown = [_without_answers(p, chosen) for p in chosen]
        keep = [p for p in shown if p is not None]
        if len(keep) == len(chosen) or not rest:
            return keep
        # a quote left with too little to go on: the next questions take its place
        chosen = [p for p, q in zip(chosen, shown, strict=True) if q is not None]
        chosen += rest[: limit - len(chosen)]
        rest = rest[limit - len(keep) :]


def _without_answers(probe: Probe, chosen: Sequence[Probe]) -> Probe | None:
    """*probe* with the other questions' answers elided from its quote (None: too little left).

    The questions are asked together: a quote that holds another question's answer
    would hand it over.
    """
    if BLANK not in probe.question:
        return probe
    question = probe.question
    for other in chosen:
        text = other.expected
        if other is not probe and len(text) >= 4:
            question = question.replace(text, "…")
    if question == probe.question:
        return probe
    if context_words(question.partition("“")[2]) < MIN_CONTEXT_WORDS:
        return None
    return replace(probe, question=question)
