"""Probe a compaction's summary with a model: questions about what it replaced, graded.

The questions are made by rule from the loss audit's items
(:mod:`core.compaction.probe_questions`), so each has a known answer. The model
sees the summary alone (redacted) and the numbered questions, and answers in JSON
in one call; the answer is read leniently (fences, prose around it, a bare list,
trailing commas, a cut answer, numbered lines). Each answer is graded against the
item the messages hold, with the loss audit's matching
(:mod:`core.compaction.audit_match`):

* ``exact`` -- the expected text is in the answer as it is;
* ``normalised`` -- it is there once both are normalised (case, quotes, a path's
  tail, a number's unit...); for a sentence (decision, TODO, request) when at
  least :data:`~core.compaction.audit_match.SENTENCE_COVERAGE` of its content
  words are in the answer, not counting those the question gives away nor the
  words that only mark a decision or a TODO (plural and tense endings ignored);
* ``unknown`` -- the model said the summary does not tell (or gave no answer);
* ``wrong`` -- anything else.

With *extra* the model first writes questions of its own, with their answers,
from the (redacted) summarised conversation; they are graded the same way under
the category ``model`` and left out of the total: the graded core never depends
on them. A failed, timed-out or refused call raises :class:`ProbeError` with a
sentence to show; nothing is written, ever.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.compaction.audit_extract import SENTENCE_CATEGORIES, Found
from core.compaction.audit_match import SENTENCE_COVERAGE, Haystack, content_words, normalise
from core.compaction.probe_questions import (
    MARKERS,
    PROBE_CATEGORIES,
    Conversation,
    Probe,
    generate,
)
from core.io import jsonio
from core.io.jobs import check
from core.io.json_answer import answer_body, complete_objects
from core.safety.redact import redact

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from core.compaction.audit import LossAudit
    from core.io.jobs import CancelCheck
    from core.llm.base import LLMClient
    from core.transcript.message import Message

GRADES = ("exact", "normalised", "unknown", "wrong")
MAX_TOKENS = 2048
MAX_EXTRA = 8
_ENDINGS = ("ing", "ed", "es", "s", "e")
_NUMBERED = re.compile(r"(?m)^\s*(\d{1,3})[.):]\s+(.+?)\s*$")
_UNKNOWN = re.compile(
    r"^\W*(?:unknown|not (?:stated|mentioned|given|known|in the summary)|n/?a|none"
    r"|i (?:don't|do not) know|the summary does(?: not|n't) (?:say|mention|tell))\b",
    re.I,
)

SYSTEM_PROMPT = """\
You answer questions about a coding session using ONLY the summary you are given.
The summary replaced the conversation; you have nothing else. Do not guess: when the
summary does not tell, answer "unknown".

Answer with JSON only, no prose and no markdown, in exactly this shape:
{"answers": [{"n": 1, "answer": "..."}, {"n": 2, "answer": "..."}]}

One entry per question, in order. Keep identifiers verbatim: file paths, function
and class names, commands, error messages, URLs, ids, numbers with their units.
For a blank (____), give what goes in it."""

EXTRA_PROMPT = """\
You write quiz questions about a coding agent's conversation, to test whether a
summary of it kept what matters: identifiers, files, decisions, and what was last
or still to do. Each answer must be short and stated in the conversation.

Answer with JSON only, in exactly this shape:
{"questions": [{"question": "...", "answer": "..."}]}"""


class ProbeError(RuntimeError):
    """The probe could not be run (the model call failed or its answer was unreadable)."""


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """A question, the model's answer and its grade."""

    probe: Probe
    answer: str
    grade: str

    def to_json(self) -> dict[str, Any]:
        """An element of ``probes.questions`` in ``memlens audit --probe --json``."""
        return {
            "question": self.probe.question,
            "category": self.probe.category,
            "kind": self.probe.kind,
            "expected": self.probe.expected,
            "answer": self.answer,
            "grade": self.grade,
            "source": list(self.probe.source),
        }


@dataclass(frozen=True, slots=True)
class ProbeScore:
    """Grades of the questions of one category (or all of them)."""

    questions: int
    exact: int
    normalised: int
    unknown: int
    wrong: int

    @property
    def score(self) -> float:
        """Answered right (exact or normalised) over every question (0 when none)."""
        return (self.exact + self.normalised) / self.questions if self.questions else 0.0

    def to_json(self) -> dict[str, Any]:
        """Counts and ``score``."""
        return {
            "questions": self.questions,
            "exact": self.exact,
            "normalised": self.normalised,
            "unknown": self.unknown,
            "wrong": self.wrong,
            "score": round(self.score, 4),
        }


def probe_score(results: Sequence[ProbeResult]) -> ProbeScore:
    """The :class:`ProbeScore` of *results*."""
    counts = dict.fromkeys(GRADES, 0)
    for r in results:
        counts[r.grade] += 1
    return ProbeScore(len(results), *(counts[g] for g in GRADES))


@dataclass(slots=True)
class ProbeRun:
    """Every question asked of one summary, answered and graded."""

    model: str
    results: list[ProbeResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def scores(self) -> dict[str, ProbeScore]:
        """A score per category that has questions (``model`` last)."""
        out: dict[str, ProbeScore] = {}
        for category in (*PROBE_CATEGORIES, "model"):
            mine = [r for r in self.results if r.probe.category == category]
            if mine:
                out[category] = probe_score(mine)
        return out

    def total(self) -> ProbeScore:
        """The score of the rule-made questions (the model's own left out)."""
        return probe_score([r for r in self.results if r.probe.category != "model"])

    def to_json(self) -> dict[str, Any]:
        """``probes`` of ``memlens audit --probe --json``."""
        return {
            "run": True,
            "model": self.model,
            "questions": [r.to_json() for r in self.results],
            "scores": {c: s.to_json() for c, s in self.scores().items()},
            "total": self.total().to_json(),
            "notes": list(self.notes),
            "seconds": round(self.seconds, 3),
        }


# -- grading -------------------------------------------------------------------------------------
def _stems(words: set[str]) -> set[str]:
    """Words without a plural or tense ending (``parsed``, ``parses`` and ``parse`` meet)."""
    out = set()
    for w in words:
        for end in _ENDINGS:
            if w.endswith(end) and len(w) - len(end) >= 3:
                w = w[: -len(end)]
                break
        out.add(w)
    return out


def _words_graded(probe: Probe) -> set[str]:
    """The expected sentence's content words, less those the question gives and the markers."""
    return _stems(content_words(probe.expected) - set(probe.topic) - MARKERS)


def grade(probe: Probe, answer: str) -> str:
    """``exact``, ``normalised``, ``unknown`` or ``wrong`` (see the module docstring)."""
    text = answer.strip()
    if probe.expected and probe.expected in text:
        return "exact"
    if probe.kind in SENTENCE_CATEGORIES or probe.kind == "model":
        if normalise(probe.expected) in normalise(text):
            return "normalised"
        graded = _words_graded(probe)
        said = _stems(content_words(text))
        if graded and len(graded & said) >= SENTENCE_COVERAGE * len(graded):
            return "normalised"
    elif text and Haystack(text).loose(Found(probe.expected, probe.kind)):
        return "normalised"
    if not text or _UNKNOWN.match(text):
        return "unknown"
    return "wrong"


# -- asking ----------------------------------------------------------------------------------------
def questions_prompt(summary: str, probes: Sequence[Probe]) -> str:
    """The user message: the summary (redacted) and the numbered questions."""
    numbered = "\n".join(f"{n}. {p.question}" for n, p in enumerate(probes, 1))
    return (
        f"Summary:\n<<<\n{redact(summary)}\n>>>\n\nQuestions:\n{redact(numbered)}\n\n"
        "Return the JSON now."
    )


def _json_values(text: str) -> list[Any]:
    body = answer_body(text)
    for start in sorted(i for i in (body.find("{"), body.find("[")) if i >= 0):
        values, _ = jsonio.split_run_together(body[start:])
        if values:
            return values
    # a cut answer: the objects complete before the cut (those holding no other object)
    return [v for v in complete_objects(body) if not any(isinstance(x, dict) for x in v.values())]


def _answer_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "; ".join(v.strip() for v in value)
    return None


def _numbered(entries: Sequence[Any]) -> dict[int, str]:
    out: dict[int, str] = {}
    for pos, e in enumerate(entries, 1):
        if isinstance(e, dict):
            n = e.get("n", e.get("number", e.get("id", pos)))
            text = _answer_text(e.get("answer", e.get("a")))
        else:
            n, text = pos, _answer_text(e)
        if isinstance(n, str) and n.strip().isdigit():
            n = int(n)
        if isinstance(n, int) and text is not None:
            out.setdefault(n, text)
    return out


def parse_answers(text: str, count: int) -> tuple[list[str | None], list[str]]:
    """The answers to questions 1..*count* (None where none came), and notes.

    Reads ``{"answers": [{"n", "answer"}]}``, a bare list of those or of strings,
    ``{"1": "..."}``, objects complete before a cut, or ``1. answer`` lines.
    """
    notes: list[str] = []
    values = _json_values(text)
    found: dict[int, str] = {}
    for value in values:
        if isinstance(value, dict) and isinstance(value.get("answers"), list):
            found = _numbered(value["answers"])
        elif isinstance(value, dict) and value and all(str(k).isdigit() for k in value):
            found = {int(k): t for k, v in value.items() if (t := _answer_text(v)) is not None}
        elif isinstance(value, list):
            found = _numbered(value)
        if found:
            break
    if not found and values and all(isinstance(v, dict) for v in values):
        found = _numbered([v for v in values if "answer" in v or "a" in v])
        if found:
            notes.append(f"the answer was not complete JSON; read {len(found)} answer(s)")
    if not found:
        found = {int(m.group(1)): m.group(2) for m in _NUMBERED.finditer(text)}
        if found:
            notes.append("the answer was not JSON; read its numbered lines")
    answers: list[str | None] = [found.get(n) for n in range(1, count + 1)]
    missing = sum(a is None for a in answers)
    if found and missing:
        notes.append(f"{missing} question(s) got no answer (graded unknown)")
    return answers, notes


def _complete(
    client: LLMClient, system: str, user: str, cancelled: CancelCheck | None
) -> tuple[str, bool]:
    from core.llm.base import ChatMessage, LLMError

    try:
        completion = client.complete(
            [ChatMessage("user", user)],
            system=system,
            max_tokens=MAX_TOKENS,
            temperature=0.0,
            cancelled=cancelled,
        )
    except LLMError as exc:
        raise ProbeError(f"the model call failed: {exc}") from None
    return completion.text, completion.truncated


def extra_probes(
    client: LLMClient, messages: Sequence[Message], count: int, cancelled: CancelCheck | None
) -> tuple[list[Probe], list[str]]:
    """Up to *count* questions the model writes from the conversation, with its answers."""
    from core.compaction.extract import conversation_text

    conversation = conversation_text(messages)
    user = f"Conversation:\n\n{conversation}\n\nWrite at most {count} questions. JSON only."
    text, _ = _complete(client, EXTRA_PROMPT, user, cancelled)
    out: list[Probe] = []
    for value in _json_values(text):
        rows = value.get("questions") if isinstance(value, dict) else value
        for row in rows if isinstance(rows, list) else []:
            if not isinstance(row, dict):
                continue
            q, a = _answer_text(row.get("question")), _answer_text(row.get("answer"))
            if q and a and len(out) < count:
                given = tuple(sorted(content_words(q)))
                out.append(Probe(redact(q), "model", redact(a), "model", (), given))
        if out:
            break
    notes = [] if out else ["the model wrote no readable questions of its own"]
    return out, notes


def probe_summary(
    client: LLMClient,
    summary: str,
    probes: Sequence[Probe],
    *,
    extra: Sequence[Probe] = (),
    cancelled: CancelCheck | None = None,
) -> ProbeRun:
    """Ask *client* *probes* (and *extra*) about *summary* alone, in one call; grade them.

    Raises
    ------
    ProbeError
        When the call fails, times out or is refused, or its answer holds no answer.
    core.io.jobs.Cancelled
        When *cancelled* says so.
    """
    start = time.monotonic()
    asked = [*probes, *extra]
    run = ProbeRun(client.name)
    if not asked:
        run.notes.append("no question to ask: the summarised messages hold no usable item")
        return run
    check(cancelled, "probe")
    text, truncated = _complete(client, SYSTEM_PROMPT, questions_prompt(summary, asked), cancelled)
    answers, notes = parse_answers(text, len(asked))
    if all(a is None for a in answers):
        shown = " ".join(text.split())[:120]
        raise ProbeError(f"the model's answer held no readable answers: {shown!r}")
    if truncated:
        notes.insert(0, "the answer stopped at the output-token limit")
    run.notes += notes
    for p, a in zip(asked, answers, strict=True):
        answer = redact(a or "")
        run.results.append(ProbeResult(p, answer, grade(p, answer)))
    run.seconds = time.monotonic() - start
    return run


def run_probes(
    audit: LossAudit,
    messages: Sequence[tuple[str, Message]],
    client: LLMClient,
    *,
    limit: int | None = None,
    extra: int = 0,
    cancelled: CancelCheck | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> ProbeRun:
    """Make the questions of *audit*, ask *client* about its summary alone, grade them.

    Parameters
    ----------
    audit
        The loss audit of the compaction (or dry run) probed.
    messages
        ``(entry id, message)`` of the session, in file order: the questions quote
        the messages the items came from.
    client
        The model (see :func:`core.llm.parse_llm_spec`).
    limit
        At most this many rule-made questions (default
        :data:`~core.compaction.probe_questions.DEFAULT_PROBES`).
    extra
        Questions the model may add of its own (0: none; at most :data:`MAX_EXTRA`).

    Raises
    ------
    ProbeError
        When a model call fails or its answer is unreadable.
    """
    start = time.monotonic()
    report = progress or (lambda done, total, label: None)
    conv = Conversation(messages)
    report(0, 3, "making the questions")
    probes = generate(audit.items, conv) if limit is None else generate(audit.items, conv, limit)
    own: list[Probe] = []
    notes: list[str] = []
    if extra > 0:
        report(1, 3, f"{client.name} writes questions")
        sources = {s for i in audit.items for s in i.source}
        spots = sorted(conv.position[s] for s in sources if s in conv.position)
        span = [m for _, m in messages[spots[0] : spots[-1] + 1]] if spots else []
        own, notes = extra_probes(client, span, min(extra, MAX_EXTRA), cancelled)
    report(2, 3, f"{client.name} answers from the summary")
    run = probe_summary(client, audit.summary, probes, extra=own, cancelled=cancelled)
    run.notes = notes + run.notes
    run.seconds = time.monotonic() - start
    report(3, 3, "graded")
    return run
