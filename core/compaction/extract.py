"""Knowledge extraction from compacted messages (algorithms.md section 5).

As memory-context's ``knowledge-extractor.ts``: nothing below
:data:`MIN_MESSAGES` messages; the conversation is the user and assistant text
as ``User: ...`` / ``Assistant: ...`` paragraphs, cut to its *first*
:data:`MAX_CHARS` characters with ``...(truncated)`` appended (the agent keeps
the head, and so do we); below 50 characters of conversation nothing is asked.
The model answers ``{"facts": [{type, content, context}]}``, at most
:data:`MAX_FACTS`.

:func:`summary_lines_keeping` answers the reverse question for provenance: which
lines of a compaction's summary keep a fact (the loss audit's rules,
:mod:`core.compaction.audit_match`, with the fact read as a sentence).

Where memlens differs: each message is redacted before the cut (a secret split
at the cut would no longer match a pattern), recalled-context blocks are left
out, answers are parsed leniently (fences, prose, a bare list, trailing commas,
a truncated answer) with a note for everything dropped, and the facts are only
*proposed* against the log (:func:`core.recall.updater.propose`): nothing is
written here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from core.compaction.audit_extract import Found
from core.compaction.audit_match import Haystack
from core.compaction.offline import RECALLED, extract_facts_offline
from core.io import jsonio
from core.io.jobs import check
from core.io.json_answer import answer_body, complete_objects
from core.io.jsstr import js_len, js_slice
from core.recall.updater import Candidate, propose
from core.safety.redact import redact
from core.store.knowledge import FACT_TYPES

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.io.jobs import CancelCheck
    from core.llm.base import LLMClient
    from core.recall.updater import ProposedOperation
    from core.store.knowledge import KnowledgeLog
    from core.transcript.message import Message

MIN_MESSAGES = 5
MAX_CHARS = 8000
MAX_FACTS = 15
CUT_NOTE = "the answer stopped at the output-token limit"
MIN_CONVERSATION_CHARS = 50
MAX_TOKENS = 2048
TRUNCATED = "\n...(truncated)"
_FACT_KEYS = frozenset({"type", "content"})


SYSTEM_PROMPT = """\
You extract durable technical knowledge from a coding agent's conversation.

Answer with JSON only, no prose and no markdown, in exactly this shape:
{"facts": [{"type": "...", "content": "...", "context": "..."}]}

Types (use these names only):
- decision: a technical or design choice that was made, e.g. "Use PostgreSQL instead of MySQL".
- implementation: where and how something was built, e.g. "Webhook handler is in src/api/stripe.ts".
- config: a non-secret setting, endpoint, port, path, flag or environment variable name.
- issue: a known bug, error, limitation or workaround.
- task_state: the current state of ongoing work: done, in progress, blocked, not started.
- architecture: how the system is organised: components, layers, data flow, patterns.

Rules:
- At most 15 facts; fewer is fine, none is fine ({"facts": []}).
- One concise sentence per fact in "content"; "context" says briefly why or where it came up.
- Keep exact identifiers verbatim: file paths, function and class names, commands,
  URLs, ports, versions, error messages.
- Write the facts in the language of the conversation.

Never extract:
- secrets of any kind: passwords, API keys, tokens, credentials, private URLs with keys;
- greetings, thanks, small talk or acknowledgements ("ok", "got it");
- temporary debugging steps, or changes that were later reverted;
- ideas that were discussed but not adopted;
- raw file contents or command output (extract what was decided about them instead)."""


@dataclass(frozen=True, slots=True)
class ExtractionResult:
    """What one extraction proposes; nothing in it has been written.

    Parameters
    ----------
    candidates
        The facts found, redacted, in the order found.
    operations
        :func:`core.recall.updater.propose` against the log, one per candidate.
    notes
        What was dropped or recovered, and why.
    source
        ``"offline"`` or the client's name.
    skipped
        Why nothing was extracted, when nothing was (else None).
    unreadable
        Why the model's answer could not be read whole (cut at the output-token limit,
        no JSON, only some objects complete), when it could not: the facts proposed are
        then only those read, and writing them is a lossy fallback (else None).
    """

    candidates: tuple[Candidate, ...] = ()
    operations: tuple[ProposedOperation, ...] = ()
    notes: tuple[str, ...] = ()
    source: str = "offline"
    skipped: str | None = None
    unreadable: str | None = None


def _text(m: Message) -> str:
    # Text blocks only, as the agent's extractMessageText: no tool calls or results.
    text = "\n".join(b.text for b in m.blocks if b.kind == "text" and b.text)
    return RECALLED.sub("", text).strip()


def conversation_text(messages: Sequence[Message]) -> str:
    """The conversation as the extraction prompt shows it.

    ``User: ...`` / ``Assistant: ...`` paragraphs (user and assistant text only;
    tool calls and results left out), each redacted, joined by blank lines, then
    cut to the first :data:`MAX_CHARS` characters plus ``...(truncated)``.
    """
    lines = []
    for m in messages:
        if m.role not in ("user", "assistant"):
            continue
        text = _text(m)
        if text:
            lines.append(f"{'Assistant' if m.role == 'assistant' else 'User'}: {redact(text)}")
    out = "\n\n".join(lines)
    return js_slice(out, MAX_CHARS) + TRUNCATED if js_len(out) > MAX_CHARS else out


def extraction_prompt(conversation: str) -> tuple[str, str]:
    """The ``(system, user)`` prompt pair asking for the facts of *conversation*."""
    return SYSTEM_PROMPT, f"Conversation:\n\n{conversation}\n\nReturn the JSON now."


# -- parsing the answer -------------------------------------------------------------------
def _raw_facts(text: str, notes: list[str]) -> tuple[list[Any], str | None]:
    """The answer's fact values, and why it could not be read whole (None: it was)."""
    body = answer_body(text)
    starts = [i for i in (body.find("{"), body.find("[")) if i >= 0]
    if not starts:
        notes.append("no JSON found in the answer")
        return [], notes[-1]
    for start in sorted(starts):
        values, _ = jsonio.split_run_together(body[start:])
        value = values[0] if values else None
        if isinstance(value, dict) and isinstance(value.get("facts"), list):
            return list(value["facts"]), None
        if isinstance(value, list):
            return value, None
        if isinstance(value, dict) and value.keys() & _FACT_KEYS:
            return [value], None
    recovered = [v for v in complete_objects(body) if "facts" not in v and v.keys() & _FACT_KEYS]
    if recovered:
        notes.append(
            f"the answer was not complete JSON; recovered {len(recovered)} complete fact(s)"
        )
    else:
        notes.append("the answer held no readable facts")
    return recovered, notes[-1]


def _text_field(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) else None


def parse_facts(text: str) -> tuple[list[Candidate], list[str], str | None]:
    """Read the model's answer leniently.

    Accepts plain JSON, JSON inside ```json fences, prose around it, a top-level
    list instead of ``{"facts": [...]}``, trailing commas, and a truncated answer
    (the facts complete before the cut are kept). Types are matched case-
    insensitively (``task-state`` reads as ``task_state``).

    Returns
    -------
    candidates, notes, unreadable
        At most :data:`MAX_FACTS` candidates (trimmed, not yet redacted), one note
        per thing dropped or recovered, saying why, and why the answer could not be
        read whole (no JSON, only some facts complete), or None when it was.
    """
    notes: list[str] = []
    out: list[Candidate] = []
    raws, unreadable = _raw_facts(text, notes)
    for n, raw in enumerate(raws, 1):
        if not isinstance(raw, dict):
            notes.append(f"fact {n} dropped: not an object")
            continue
        ftype = (_text_field(raw.get("type")) or "").lower().replace("-", "_").replace(" ", "_")
        content = _text_field(raw.get("content"))
        if ftype not in FACT_TYPES:
            notes.append(f"fact {n} dropped: unknown type {raw.get('type')!r}")
        elif not content:
            notes.append(f"fact {n} dropped: no content")
        else:
            out.append(Candidate(ftype, content, _text_field(raw.get("context")) or None))
    if len(out) > MAX_FACTS:
        notes.append(f"{len(out) - MAX_FACTS} fact(s) beyond the limit of {MAX_FACTS} dropped")
        out = out[:MAX_FACTS]
    return out, notes, unreadable


# -- the extraction ------------------------------------------------------------------------
def _ask(
    client: LLMClient, conversation: str, cancelled: CancelCheck | None
) -> tuple[str, bool, str | None]:
    """The answer, whether it was cut at the token limit, and the error if it failed."""
    from core.llm.base import ChatMessage, LLMError  # needed only with a client

    system, user = extraction_prompt(conversation)
    try:
        completion = client.complete(
            [ChatMessage("user", user)],
            system=system,
            max_tokens=MAX_TOKENS,
            temperature=0.0,
            cancelled=cancelled,
        )
    except LLMError as exc:
        return "", False, str(exc)
    return completion.text, completion.truncated, None


def extract_knowledge(
    messages: Sequence[Message],
    log: KnowledgeLog,
    *,
    client: LLMClient | None = None,
    allow_delete: bool = False,
    cancelled: CancelCheck | None = None,
) -> ExtractionResult:
    """Find facts in *messages* and propose what to do with each against *log*.

    Parameters
    ----------
    messages
        The messages compacted away, oldest first.
    log
        The knowledge log; only read.
    client
        The model to ask; None uses :func:`~core.compaction.offline.extract_facts_offline`.
    allow_delete
        Passed to :func:`~core.recall.updater.propose`.
    cancelled
        Checked before the work and passed to the client.

    Returns
    -------
    ExtractionResult
        Candidates and proposed operations (nothing is written), or ``skipped``
        with the reason.

        A failed model call (:class:`~core.llm.base.LLMError`) is ``skipped`` with
        its message, as the agent returns no facts then. An answer that could not be
        read whole says why in ``unreadable`` (the facts read are still proposed).

    Raises
    ------
    core.io.jobs.Cancelled
        When *cancelled* says so.
    """
    source = "offline" if client is None else client.name
    unreadable: str | None = None
    if len(messages) < MIN_MESSAGES:
        return ExtractionResult(
            source=source,
            skipped=f"{len(messages)} message(s): extraction needs at least {MIN_MESSAGES}",
        )
    check(cancelled, "knowledge extraction")
    notes: list[str] = []
    if client is None:
        candidates = extract_facts_offline(messages)
    else:
        conversation = conversation_text(messages)
        if len(conversation.strip()) < MIN_CONVERSATION_CHARS:
            return ExtractionResult(
                source=source,
                skipped=f"less than {MIN_CONVERSATION_CHARS} characters of conversation",
            )
        answer, truncated, error = _ask(client, conversation, cancelled)
        if error is not None:
            return ExtractionResult(source=source, skipped=f"the model call failed: {error}")
        parsed, notes_, unreadable = parse_facts(answer)
        if truncated:  # even a whole JSON value: the facts after it were never written
            notes.append(CUT_NOTE)
            unreadable = CUT_NOTE if unreadable is None else f"{CUT_NOTE}; {unreadable}"
        notes.extend(notes_)
        candidates = [
            Candidate(c.type, redact(c.content), None if c.context is None else redact(c.context))
            for c in parsed
        ]
    operations = propose(log, candidates, allow_delete=allow_delete)
    return ExtractionResult(
        tuple(candidates), tuple(operations), tuple(notes), source, unreadable=unreadable
    )


# -- which summary lines keep a fact -------------------------------------------------------
@lru_cache(maxsize=4096)
def _line_haystack(line: str) -> Haystack:
    return Haystack(line)


def summary_lines_keeping(fact: str, summary: str) -> list[tuple[int, str, str]]:
    """The lines of *summary* that keep the fact *fact*: ``(number from 1, line, status)``.

    *status* is the loss audit's (:func:`core.compaction.audit_match.status_of`):
    ``kept`` when the fact's text is in the line as it is, ``normalised`` when
    the line holds enough of its content words (a summary rephrases). Lines that
    keep neither are left out; so are blank lines.
    """
    item = Found(fact.strip(), "decision")
    if not item.text:
        return []
    out = []
    for n, line in enumerate(summary.splitlines(), 1):
        if not line.strip():
            continue
        hay = _line_haystack(line)
        if hay.exact(item):
            out.append((n, line, "kept"))
        elif hay.loose(item):
            out.append((n, line, "normalised"))
    return out
