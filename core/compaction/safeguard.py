"""The compaction safeguard: required headings and appended sections within 16,000 chars.

After the model's summary, OpenClaw guarantees the required headings and appends the
split-turn context, the last turns verbatim, the tool failures and the file lists;
when the whole is too long the body is shrunk and marked truncated.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from core.compaction.prompts import REQUIRED_HEADINGS
from core.io.jsstr import js_len, js_slice
from core.safety.redact import redact

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.compaction.plan import CompactionPlan, PlanItem


MAX_SUMMARY_CHARS = 16_000
TRUNCATED_MARKER = "[Compaction summary truncated to fit budget]"
RECENT_TURNS, RECENT_TURN_CHARS = 3, 600
MAX_TOOL_FAILURES, TOOL_FAILURE_CHARS = 8, 240
FILE_SECTION_CHARS, FILE_TOTAL_CHARS = 900, 2000


# -- the safeguard -------------------------------------------------------------------
def tool_failures(items: Sequence[PlanItem]) -> list[dict[str, str]]:
    """Failed tool results: tool name and error text."""
    out = []
    for i in items:
        m = i.message
        if m.role == "toolResult" and (m.is_error or any(b.is_error for b in m.blocks)):
            out.append({"toolName": m.tool_name or "tool", "error": redact(m.text().strip())})
    return out


def _ensure_headings(body: str) -> str:
    missing = [h for h in REQUIRED_HEADINGS if h not in body]
    if not missing:
        return body.strip()
    return body.strip() + "".join(f"\n\n{h}\n(none)" for h in missing)


def _recent_turns(items: Sequence[PlanItem]) -> str:
    turns: list[list[str]] = []
    for i in items:
        m = i.message
        if m.role == "user" and m.text().strip():
            turns.append([f"**User:** {m.text().strip()}"])
        elif m.role == "assistant" and turns:
            text = "\n".join(b.text for b in m.blocks if b.kind == "text" and b.text).strip()
            if text:
                turns[-1].append(f"**Assistant:** {text}")
    if not turns:
        return ""
    shown = []
    for turn in turns[-RECENT_TURNS:]:
        text = "\n".join(turn)
        if js_len(text) > RECENT_TURN_CHARS:
            text = js_slice(text, RECENT_TURN_CHARS - 1) + "…"
        shown.append(text)
    return "## Recent turns preserved verbatim\n\n" + redact("\n\n".join(shown))


def _failures_section(failures: Sequence[dict[str, str]]) -> str:
    if not failures:
        return ""
    lines = []
    for f in failures[:MAX_TOOL_FAILURES]:
        text = " ".join(f["error"].split())
        if js_len(text) > TOOL_FAILURE_CHARS:
            text = js_slice(text, TOOL_FAILURE_CHARS - 1) + "…"
        lines.append(f"- {f['toolName']}: {text}")
    if len(failures) > MAX_TOOL_FAILURES:
        lines.append(f"...and {len(failures) - MAX_TOOL_FAILURES} more")
    return "## Tool Failures\n" + "\n".join(lines)


def _file_section(tag: str, files: Sequence[str], budget: int) -> str:
    if not files or budget <= len(tag) * 2 + 6:
        return ""
    shown: list[str] = []
    used = len(f"<{tag}>\n\n</{tag}>")
    for f in files:
        if used + js_len(f) + 1 > budget:
            shown.append(f"...and {len(files) - len(shown)} more")
            break
        shown.append(f)
        used += js_len(f) + 1
    return redact(f"<{tag}>\n" + "\n".join(shown) + f"\n</{tag}>")


def _shrink(body: str, limit: int) -> str:
    """Cut the longest sections of *body* until it fits, keeping every heading."""
    sections = re.split(r"(?m)^(?=## )", body)
    sizes = [js_len(s) for s in sections]
    while sum(sizes) > limit:
        longest = max(range(len(sections)), key=lambda k: sizes[k])
        excess = sum(sizes) - limit
        head, _, rest = sections[longest].partition("\n")
        keep = max(0, js_len(rest) - excess - 2)
        cut = f"{head}\n{js_slice(rest, keep).rstrip()}…\n"
        if js_len(cut) >= sizes[longest]:
            break  # nothing left to cut here; the final cap does the rest
        sections[longest], sizes[longest] = cut, js_len(cut)
    return "".join(sections)


def safeguard(
    body: str,
    plan: CompactionPlan,
    turn_prefix: str | None,
    failures: Sequence[dict[str, str]],
    *,
    notice: str | None = None,
) -> tuple[str, bool]:
    """Required headings, then the appended sections, all within 16,000 chars.

    A *notice* (see :func:`fallback_notice`) is the first line, kept whole: the
    rest is fitted into what it leaves.
    """
    if notice:
        notice = redact(" ".join(notice.split()))
        cap = MAX_SUMMARY_CHARS - js_len(notice) - 2
        text, truncated = _fit(body, plan, turn_prefix, failures, cap)
        return f"{notice}\n\n{text}", truncated
    return _fit(body, plan, turn_prefix, failures, MAX_SUMMARY_CHARS)


def _fit(
    body: str,
    plan: CompactionPlan,
    turn_prefix: str | None,
    failures: Sequence[dict[str, str]],
    cap: int,
) -> tuple[str, bool]:
    body = redact(_ensure_headings(body))
    suffix_parts = []
    if turn_prefix:
        suffix_parts.append(f"---\n\n**Turn Context (split turn):**\n\n{redact(turn_prefix)}")
    recent = _recent_turns([*plan.summarize, *plan.turn_prefix])
    if recent:
        suffix_parts.append(recent)
    failures_text = _failures_section(failures)
    if failures_text:
        suffix_parts.append(failures_text)
    read = _file_section("read-files", plan.read_files, FILE_SECTION_CHARS)
    modified = _file_section(
        "modified-files",
        plan.modified_files,
        min(FILE_SECTION_CHARS, FILE_TOTAL_CHARS - js_len(read)),
    )
    files = "\n\n".join(p for p in (read, modified) if p)
    if files:
        suffix_parts.append(files)
    suffix = "\n\n".join(suffix_parts)
    # Every size in JavaScript string units: the cap is the agent's.
    marker = len(TRUNCATED_MARKER)  # ASCII

    def tail(text: str) -> int:
        return js_len(text) + 2 if text else 0

    body_len = js_len(body)
    if body_len + tail(suffix) <= cap:
        return (body + ("\n\n" + suffix if suffix else "")), False
    room = cap - marker - 4 - tail(suffix)
    if room < 2000:  # the suffix itself is too long: keep the body, shorten the suffix
        suffix = js_slice(suffix, max(0, cap - body_len - marker - 8))
        room = cap - marker - 4 - tail(suffix)
    body = _shrink(body, room)
    text = body.rstrip() + ("\n\n" + suffix if suffix else "") + "\n\n" + TRUNCATED_MARKER
    return js_slice(text, cap), True
