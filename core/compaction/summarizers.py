"""The summarisers: an LLM through :mod:`core.llm`, or the offline extractor.

Both satisfy :class:`Summarizer`; :func:`serialize` turns messages into the text a
model reads, and :func:`looks_like_refusal` spots a model declining the task.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from core.compaction.prompts import (
    CHECKPOINT_FORMAT,
    MERGE_INSTRUCTIONS,
    REQUIRED_HEADINGS,
    SYSTEM_PROMPT,
    TURN_PREFIX_HEADINGS,
    TURN_PREFIX_PROMPT,
    UPDATE_RULES,
)
from core.io import jsonio
from core.io.jobs import check
from core.io.jsstr import js_len, js_slice
from core.safety.redact import redact
from core.transcript.provider import missing_results

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.compaction.sections import SummaryInstructions
    from core.io.jobs import CancelCheck
    from core.llm.base import ErrorKind
    from core.transcript.message import Message


TOOL_RESULT_CHARS = 2000


class Summarizer(Protocol):
    """What produces summaries: an LLM provider or the offline extractor."""

    @property
    def name(self) -> str: ...  # noqa: D102

    def summarize(
        self,
        messages: Sequence[Message],
        *,
        previous: str | None,
        instructions: str | None,
        max_tokens: int,
        cancelled: CancelCheck | None,
    ) -> str:
        """Summarise *messages* (updating *previous* when given)."""
        ...

    def summarize_turn_prefix(
        self, messages: Sequence[Message], *, max_tokens: int, cancelled: CancelCheck | None
    ) -> str:
        """Summarise the start of a split turn."""
        ...

    def merge(
        self,
        summaries: Sequence[str],
        *,
        previous: str | None,
        max_tokens: int,
        cancelled: CancelCheck | None,
    ) -> str:
        """Merge partial summaries into one."""
        ...


# -- serialising messages for a model -------------------------------------------
def _truncate(text: str, limit: int) -> str:
    total = js_len(text)
    if total <= limit:
        return text
    head = js_slice(text, limit)
    return f"{head}\n\n[... {total - js_len(head)} more characters truncated]"


def serialize(messages: Sequence[Message]) -> str:
    """The conversation as tagged text, so a model summarises instead of replying."""
    parts: list[str] = []
    missing = missing_results(messages)
    for n, m in enumerate(messages):
        role = m.role
        if role == "assistant":
            thinking = [b.text for b in m.blocks if b.kind == "thinking" and b.text]
            texts = [b.text for b in m.blocks if b.kind == "text" and b.text]
            calls = []
            for c in m.tool_calls():
                args = c.arguments if isinstance(c.arguments, dict) else {"input": c.arguments}
                shown = ", ".join(f"{k}={jsonio.dumps(v).decode()}" for k, v in args.items())
                calls.append(f"{c.name}({shown})")
            if thinking:
                parts.append("[Assistant thinking]: " + "\n".join(thinking))
            if texts:
                parts.append("[Assistant]: " + "\n".join(texts))
            if calls:
                parts.append("[Assistant tool calls]: " + "; ".join(calls))
            # a call whose result was never written: what pi sends in its place
            parts.extend(
                f"[Tool result]: {r.text()} (synthetic: the {r.tool_name or 'tool'} result "
                "was never written)"
                for r in missing.get(n, ())
            )
        elif role == "toolResult":
            text = m.text()
            if text:
                parts.append(f"[Tool result]: {_truncate(text, TOOL_RESULT_CHARS)}")
        elif role == "bashExecution":
            out = str(m.raw.get("output") or "") or "(no output)"
            parts.append(f"[User]: Ran `{m.raw.get('command', '')}`\n{_truncate(out, 2000)}")
        elif role in ("compactionSummary", "branchSummary"):
            parts.append(f"[User]: (earlier summary)\n{m.text()}")
        else:
            text = m.text()
            if text:
                parts.append(f"[User]: {text}")
    return redact("\n\n".join(parts))


# "I'm sorry, but I can't help with that", "I cannot assist", "As an AI...": a model
# declining the task instead of writing a checkpoint.
_REFUSAL = re.compile(
    r"^\W*(?:i['\u2019]?m sorry|i am sorry|sorry\b|i apologi[sz]e|unfortunately,? i\b"
    r"|i can(?:not|['\u2019]?t)\b|i['\u2019]?m (?:not able|unable)|i am (?:not able|unable)"
    r"|i (?:won['\u2019]?t|will not|must decline)\b|as an ai\b)",
    re.IGNORECASE,
)


def looks_like_refusal(text: str) -> bool:
    """True for an answer that declines the task rather than summarising.

    It must start like a refusal and hold no Markdown heading: a checkpoint
    always has its headings, a refusal never does.
    """
    stripped = text.strip()
    return bool(_REFUSAL.match(stripped[:300])) and re.search(r"(?m)^#{1,6} ", stripped) is None


@dataclass(slots=True)
class LLMSummarizer:
    """Summaries from a model through an :mod:`core.llm` client.

    An empty answer, or one that is a refusal (:func:`looks_like_refusal`), is a
    failed call (:class:`~core.llm.base.LLMError`, ``bad_response`` or
    ``refusal``), never a summary.
    """

    client: object
    """Anything with ``name`` and ``complete(messages, *, system, max_tokens, ...)``."""
    instructions: SummaryInstructions | None = None
    """Custom instructions and identifier policy (None: OpenClaw's defaults). Their
    text is appended to every prompt where OpenClaw's safeguard puts it."""
    last: Any = field(default=None, repr=False)
    """The last :class:`~core.llm.base.Completion` (attempts, seconds), for the call log."""

    @property
    def name(self) -> str:
        """The client's name."""
        return str(getattr(self.client, "name", "llm"))

    @property
    def endpoint(self) -> str:
        """The client's URL without credentials ("" when it has none)."""
        return str(getattr(self.client, "display_url", ""))

    def _instructions(self, focus: str | None = None) -> SummaryInstructions:
        from core.compaction.sections import SummaryInstructions

        base = self.instructions or SummaryInstructions()
        return replace(base, focus=focus) if focus else base

    def _ask(
        self,
        prompt: str,
        max_tokens: int,
        cancelled: CancelCheck | None,
        headings: Sequence[str] = REQUIRED_HEADINGS,
    ) -> str:
        """The model's answer to *prompt*; :class:`LLMError` when it is no summary.

        An empty answer, a refusal, an answer cut at the token limit and an answer
        with none of the asked-for *headings* (the model replied to the conversation
        instead of summarising it) are failed calls, never summaries.
        """
        from core.llm import ChatMessage, LLMError

        self.last = None
        completion = self.client.complete(  # type: ignore[attr-defined]
            [ChatMessage("user", prompt)],
            system=SYSTEM_PROMPT,
            max_tokens=max_tokens,
            cancelled=cancelled,
        )
        self.last = completion
        text = str(completion.text).strip()
        shown = " ".join(text.split())[:160]
        kind: ErrorKind = "bad_response"
        if not text:
            why = "the answer is empty"
        elif looks_like_refusal(text):
            kind, why = "refusal", f"the model refused: {shown!r}"
        elif getattr(completion, "truncated", False):
            why = f"the answer was cut at the {max_tokens:,}-token limit"
        elif not any(h.lower() in text.lower() for h in headings):
            why = f"the answer is not a summary (none of its headings): {shown!r}"
        else:
            return text
        raise LLMError(
            kind,
            why,
            client=str(getattr(completion, "client", "") or self.name),
            attempts=int(getattr(completion, "attempts", 1)),
            endpoint=self.endpoint,
        )

    def summarize(
        self,
        messages: Sequence[Message],
        *,
        previous: str | None,
        instructions: str | None,
        max_tokens: int,
        cancelled: CancelCheck | None,
    ) -> str:
        """Summarise with the checkpoint prompt."""
        prompt = f"<conversation>\n{serialize(messages)}\n</conversation>\n\n"
        if previous:
            prompt += f"<previous-summary>\n{previous}\n</previous-summary>\n\n{UPDATE_RULES}\n\n"
        prompt += CHECKPOINT_FORMAT + "\n\n" + self._instructions(instructions).summary_tail()
        return self._ask(prompt, max_tokens, cancelled)

    def summarize_turn_prefix(
        self, messages: Sequence[Message], *, max_tokens: int, cancelled: CancelCheck | None
    ) -> str:
        """Summarise the start of a split turn."""
        prompt = f"<conversation>\n{serialize(messages)}\n</conversation>\n\n{TURN_PREFIX_PROMPT}"
        prompt += self._instructions().turn_prefix_tail()
        return self._ask(prompt, max_tokens, cancelled, TURN_PREFIX_HEADINGS + REQUIRED_HEADINGS)

    def merge(
        self,
        summaries: Sequence[str],
        *,
        previous: str | None,
        max_tokens: int,
        cancelled: CancelCheck | None,
    ) -> str:
        """Merge partial checkpoints with the merge instructions."""
        body = "\n\n".join(f"<partial-summary>\n{s}\n</partial-summary>" for s in summaries)
        prompt = body + "\n\n"
        if previous:
            prompt += f"<previous-summary>\n{previous}\n</previous-summary>\n\n{UPDATE_RULES}\n\n"
        prompt += f"{MERGE_INSTRUCTIONS}\n\n{CHECKPOINT_FORMAT}\n\n"
        prompt += self._instructions().merge_tail()
        return self._ask(prompt, max_tokens, cancelled)


@dataclass(slots=True)
class OfflineSummarizer:
    """Deterministic extractive summaries, no model (the default)."""

    name: str = "offline"

    def summarize(
        self,
        messages: Sequence[Message],
        *,
        previous: str | None,
        instructions: str | None,
        max_tokens: int,
        cancelled: CancelCheck | None,
    ) -> str:
        """Extract the headings from the messages."""
        from core.compaction.offline import offline_summary

        check(cancelled, "offline summary")
        return offline_summary(messages, previous_summary=previous)

    def summarize_turn_prefix(
        self, messages: Sequence[Message], *, max_tokens: int, cancelled: CancelCheck | None
    ) -> str:
        """Extract a summary of the start of a split turn."""
        from core.compaction.offline import offline_summary

        return offline_summary(messages)

    def merge(
        self,
        summaries: Sequence[str],
        *,
        previous: str | None,
        max_tokens: int,
        cancelled: CancelCheck | None,
    ) -> str:
        """Union the partial summaries heading by heading."""
        from core.compaction.offline import offline_merge

        return offline_merge([*([previous] if previous else []), *summaries])
