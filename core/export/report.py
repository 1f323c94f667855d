"""The HTML reports: a session's timeline, a compaction plan (and its summary, if run).

Each is one self-contained page: CSS inline, the timeline chart as inline SVG
(:func:`core.export.svg.timeline_svg`), a screenshot only as a ``data:`` URI, no script
and nothing fetched. Every text from a session (ids, paths, message snippets, the
summary) is redacted (:func:`core.safety.redact.redact`) and escaped before it is
written into the page.
"""

from __future__ import annotations

import base64
import math
from typing import TYPE_CHECKING

from core import __version__
from core.context.terms import (
    CHARS4_ESTIMATE,
    CONTEXT_TOKENS,
    MESSAGE_TOKENS,
    THRESHOLD_TERMS,
    source_label,
)
from core.export.svg import safe_text, timeline_svg
from core.timeline.summary import message_summary

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from datetime import datetime

    from core.compaction.plan import CompactionPlan, PlanItem
    from core.compaction.run import CompactionRun
    from core.timeline.arrays import Timeline
    from core.transcript.model import Session

__all__ = ["compaction_report", "timeline_report"]

_CSS = """
body { font: 14px/1.45 Helvetica, Arial, sans-serif; color: #222; margin: 24px auto;
       max-width: 1180px; padding: 0 16px; background: #fff; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 28px; }
.meta { color: #555; margin: 0 0 12px; } .meta code { word-break: break-all; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { border-bottom: 1px solid #e2e2e2; padding: 3px 8px; text-align: left;
         vertical-align: top; }
th { background: #f3f3f3; position: sticky; top: 0; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.off td { color: #888; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 16px; }
dt { color: #555; } dd { margin: 0; }
pre { background: #f6f6f6; padding: 10px; white-space: pre-wrap; word-break: break-word;
      border-radius: 4px; font-size: 12.5px; }
.chart svg, .shot img { max-width: 100%; height: auto; border: 1px solid #ddd; }
.note { color: #666; font-size: 12.5px; }
.bad { color: #b00020; }
"""


def _page(title: str, sections: Iterable[str], *, generated: datetime, version: str) -> str:
    stamp = generated.isoformat(timespec="seconds")
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f'<meta name="generator" content="memlens {safe_text(version)}">',
            f"<title>{safe_text(title)}</title>",
            f"<style>{_CSS}</style>",
            "</head><body>",
            f"<h1>{safe_text(title)}</h1>",
            f'<p class="meta">memlens {safe_text(version)} · generated {safe_text(stamp)} · '
            "secrets redacted</p>",
            *sections,
            "</body></html>",
            "",
        ]
    )


def _session_block(session: Session) -> str:
    messages = len(session.messages())
    return (
        f'<p class="meta">session <code>{safe_text(session.id)}</code><br>'
        f"file <code>{safe_text(session.path)}</code><br>"
        f"{len(session.entries):,} entries · {messages:,} messages</p>"
    )


def _table(head: Sequence[str], rows: Iterable[str], *, empty: str = "none") -> str:
    cells = "".join(f"<th>{safe_text(h)}</th>" for h in head)
    body = "\n".join(rows)
    if not body:
        body = f'<tr><td colspan="{len(head)}" class="note">{safe_text(empty)}</td></tr>'
    return f"<table><thead><tr>{cells}</tr></thead><tbody>\n{body}\n</tbody></table>"


def _tokens(value: float) -> str:
    return f"{value:,.0f}" if math.isfinite(value) else "-"


def _entry_rows(session: Session, timeline: Timeline) -> list[str]:
    rows = []
    measured = timeline.measured
    for pos, entry_id in enumerate(timeline.entry_ids):
        entry = session.by_id.get(entry_id)
        message = entry.message if entry is not None else None
        role = message.role if message is not None else "?"
        how = source_label("measured" if measured[pos] else "estimated")
        off = "" if timeline.on_path[pos] else ' class="off"'
        rows.append(
            f"<tr{off}><td class=n>#{int(timeline.entry_index[pos])}</td>"
            f"<td>{safe_text(role)}</td>"
            f"<td class=n>{int(timeline.tokens[pos]):,}</td>"
            f"<td class=n>{_tokens(float(timeline.context[pos]))}</td>"
            f"<td>{how}</td>"
            f"<td>{'yes' if timeline.on_path[pos] else 'no'}</td>"
            f"<td>{safe_text(timeline.summary(pos))}</td></tr>"
        )
    return rows


def _compaction_rows(session: Session, timeline: Timeline) -> list[str]:
    rows = []
    for marker in timeline.compactions:
        entry = session.by_id.get(marker.entry_id)
        number = f"#{entry.index}" if entry is not None else "?"
        before = "recorded" if marker.before_recorded else "estimated"
        after = "recorded" if marker.after_recorded else "estimated"
        rows.append(
            f"<tr><td class=n>{safe_text(number)}</td>"
            f"<td class=n>{marker.tokens_before:,} → {marker.tokens_after:,}</td>"
            f"<td>before {before}, after {after}</td>"
            f"<td class=n>{marker.tokens_before - marker.tokens_after:,}</td>"
            f"<td>{'yes' if marker.on_path else 'no'}</td></tr>"
        )
    return rows


def _terms(timeline: Timeline | None) -> str:
    """What each number and line means: the words every view of memlens uses."""
    pairs = [(t.name, t.help) for t in (CONTEXT_TOKENS, CHARS4_ESTIMATE, MESSAGE_TOKENS)]
    lines = timeline.thresholds if timeline is not None else ()
    pairs += [
        (THRESHOLD_TERMS[line.key].name, THRESHOLD_TERMS[line.key].line)
        for line in lines
        if line.key in THRESHOLD_TERMS
    ]
    return "<details><summary>What the numbers mean</summary>" + _facts(pairs) + "</details>"


def _chart(timeline: Timeline, *, cut_entry_id: str | None = None) -> str:
    svg = timeline_svg(timeline, cut_entry_id=cut_entry_id)
    return f'<div class="chart">{svg}</div>'


def timeline_report(
    session: Session,
    timeline: Timeline,
    *,
    generated: datetime,
    version: str = __version__,
    screenshot_png: bytes | None = None,
) -> str:
    """The HTML page of *session*'s timeline: the chart, its compactions and every message.

    Parameters
    ----------
    session
        The session the timeline was built from (for ``#N``, roles and the path).
    timeline
        Its arrays (:func:`core.timeline.arrays.build_timeline`).
    generated
        When the report is made (shown in its header).
    version
        The memlens version shown.
    screenshot_png
        The timeline as the app showed it, embedded as a ``data:`` URI (optional).
    """
    sections = [
        _session_block(session),
        "<h2>Timeline</h2>",
        _chart(timeline),
        '<p class="note">x: entry #N of each message; bars: the message tokens of each '
        "message; curve: the context tokens along the current path.</p>",
        _terms(timeline),
    ]
    if screenshot_png:
        data = base64.b64encode(screenshot_png).decode("ascii")
        sections += [
            "<h2>As shown in memlens</h2>",
            f'<div class="shot"><img alt="the timeline view" src="data:image/png;base64,{data}">'
            "</div>",
        ]
    sections += [
        f"<h2>Compactions ({len(timeline.compactions)})</h2>",
        _table(
            ("#N", "tokens before → after", "figures", "freed", "on path"),
            _compaction_rows(session, timeline),
            empty="no compaction in this session",
        ),
        f"<h2>Entries ({len(timeline):,} messages)</h2>",
        _table(
            (
                "#N",
                "role",
                MESSAGE_TOKENS.name,
                CONTEXT_TOKENS.name,
                "source",
                "on path",
                "summary",
            ),
            _entry_rows(session, timeline),
            empty="no message in this session",
        ),
    ]
    return _page(
        f"Timeline of session {session.id}", sections, generated=generated, version=version
    )


def _item_rows(items: Sequence[PlanItem], part: str) -> list[str]:
    return [
        f"<tr><td class=n>#{item.entry.index}</td><td>{safe_text(part)}</td>"
        f"<td>{safe_text(item.message.role)}</td><td class=n>{item.tokens:,}</td>"
        f"<td>{safe_text(message_summary(item.entry, item.message, item.tokens, 0.0))}</td></tr>"
        for item in items
    ]


def _facts(pairs: Iterable[tuple[str, str]]) -> str:
    items = "".join(f"<dt>{safe_text(k)}</dt><dd>{safe_text(v)}</dd>" for k, v in pairs)
    return f"<dl>{items}</dl>"


def _plan_facts(plan: CompactionPlan, session: Session) -> str:
    first = session.by_id.get(plan.first_kept_entry_id)
    how = source_label("measured" if plan.tokens_before_measured else "estimated")
    pairs = [
        ("status", "ready" if plan.ok else f"cannot compact: {plan.reason}"),
        ("tokens before → after", f"{plan.tokens_before:,} → {plan.expected_tokens_after():,}"),
        ("tokens before", f"{plan.tokens_before:,} ({how})"),
        ("summarised", f"{plan.tokens_summarized:,} tokens (pi's estimate)"),
        ("kept verbatim", f"{plan.tokens_kept:,} tokens"),
        ("expected after", f"{plan.expected_tokens_after():,} (kept + 0.8 x reserve)"),
        ("first kept entry", f"#{first.index}" if first is not None else "-"),
        ("split turn", "yes" if plan.is_split_turn else "no"),
        ("model calls", f"{plan.calls}"),
        (
            "settings",
            f"window {plan.window:,} · reserve {plan.reserve_tokens:,} · "
            f"keep recent {plan.keep_recent_tokens:,} · history share {plan.max_history_share:g}",
        ),
    ]
    if plan.read_files or plan.modified_files:
        pairs.append(("files read", ", ".join(plan.read_files) or "-"))
        pairs.append(("files modified", ", ".join(plan.modified_files) or "-"))
    return _facts(pairs)


def _run_section(run: CompactionRun) -> list[str]:
    summary = run.summary
    failure = run.failure
    pairs = [
        ("provider", summary.provider if summary is not None else "-"),
        ("calls", str(summary.calls) if summary is not None else "0"),
        ("written", "yes" if run.written else "no (not written to the transcript)"),
    ]
    if run.backup is not None:
        pairs.append(("backup", str(run.backup)))
    if failure is not None:
        pairs.append(("failure", f"{failure.step}: {failure.kind} {failure.message}".strip()))
    out = ["<h2>Summary</h2>", _facts(pairs)]
    if summary is not None:
        out.append(f"<pre>{safe_text(summary.summary)}</pre>")
    return out


def compaction_report(
    plan: CompactionPlan,
    session: Session,
    *,
    generated: datetime,
    run: CompactionRun | None = None,
    timeline: Timeline | None = None,
    version: str = __version__,
) -> str:
    """The HTML page of a compaction: the plan, the chart with its cut point, the summary.

    Parameters
    ----------
    plan
        The plan (:func:`core.compaction.plan.plan_compaction`).
    session
        The session planned.
    generated
        When the report is made.
    run
        The summary run, when one was made (written or not).
    timeline
        The session's timeline: drawn with the cut point when it is the same session.
    version
        The memlens version shown.
    """
    sections = [_session_block(session), "<h2>Plan</h2>", _plan_facts(plan, session)]
    if timeline is not None and timeline.session_id == plan.session_id:
        sections += ["<h2>Timeline</h2>", _chart(timeline, cut_entry_id=plan.first_kept_entry_id)]
    if run is not None:
        sections += _run_section(run)
    rows = [
        *_item_rows(plan.history_dropped, "history dropped"),
        *_item_rows(plan.summarize, "summarised"),
        *_item_rows(plan.turn_prefix, "turn prefix"),
        *_item_rows(plan.kept, "kept"),
    ]
    sections += [
        "<h2>Messages</h2>",
        _table(("#N", "part", "role", "tokens", "summary"), rows, empty="nothing to compact"),
    ]
    if plan.previous_summary:
        sections += [
            "<h2>Previous summary</h2>",
            f"<pre>{safe_text(plan.previous_summary)}</pre>",
        ]
    return _page(
        f"Compaction report for session {session.id}",
        sections,
        generated=generated,
        version=version,
    )
