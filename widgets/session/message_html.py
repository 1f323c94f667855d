"""HTML of one transcript entry for a QTextBrowser, in the palette's colours.

Every piece of content goes through :func:`html.escape`; links are numbered
(``entry:<n>`` opens ``Rendered.links[n]``, ``fold:<n>`` expands or folds the block
``Rendered.folds[n]``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from PySide6.QtGui import QColor, QFontDatabase, QPalette

from core.io import jsonio
from core.transcript.parts import (
    arguments_text,
    clip_lines,
    collapse_line,
    format_bytes,
    message_parts,
    tool_call,
    tool_results,
    usage_line,
)
from core.transcript.tokens import estimate_message, usage_total
from widgets.common.palette import is_dark
from widgets.common.text import esc

if TYPE_CHECKING:
    from collections.abc import Set

    from core.transcript.model import Entry, Message, Session, ToolPair
    from core.transcript.parts import Part

ROLE_COLOURS: dict[str, tuple[str, str]] = {
    "user": ("#1f6feb", "#58a6ff"),
    "assistant": ("#8250df", "#bc8cff"),
    "toolResult": ("#9a6700", "#d29922"),
    "bashExecution": ("#bc4c00", "#f0883e"),
    "compactionSummary": ("#1a7f37", "#3fb950"),
    "branchSummary": ("#0a7ea4", "#39c5cf"),
    "custom": ("#bf3989", "#f778ba"),
    "system": ("#57606a", "#8b949e"),
    "recalled": ("#0969da", "#79c0ff"),
    "thinking": ("#6e7781", "#8b949e"),
    "error": ("#cf222e", "#f85149"),
    "other": ("#6e7781", "#8b949e"),
}
"""Role colours (light palette, dark palette), readable on either background."""

TEXT_LINES = 80
"""Text blocks longer than this are clipped until expanded."""
MONO_LINES = 30
"""Tool arguments and results longer than this are clipped until expanded."""


def role_colour(role: str, dark: bool) -> QColor:
    """The colour of *role* for a light or dark palette."""
    light_c, dark_c = ROLE_COLOURS.get(role, ROLE_COLOURS["other"])
    return QColor(dark_c if dark else light_c)


def mix(a: QColor, b: QColor, share: float) -> QColor:
    """*a* with *share* of *b* mixed in."""
    return QColor.fromRgbF(
        a.redF() * (1 - share) + b.redF() * share,
        a.greenF() * (1 - share) + b.greenF() * share,
        a.blueF() * (1 - share) + b.blueF() * share,
    )


@dataclass(frozen=True, slots=True)
class Theme:
    """Colours and the monospace family of the rendered HTML, taken from a palette."""

    dark: bool
    text: str
    muted: str
    base: str
    card: str
    head: str
    border: str
    mono: str

    @classmethod
    def from_palette(cls, palette: QPalette) -> Theme:
        """The theme for *palette* (light or dark)."""
        base = palette.color(QPalette.ColorRole.Base)
        text = palette.color(QPalette.ColorRole.Text)
        return cls(
            dark=is_dark(palette),
            text=text.name(),
            muted=mix(text, base, 0.45).name(),
            base=base.name(),
            card=mix(base, text, 0.02).name(),
            head=mix(base, text, 0.07).name(),
            border=mix(base, text, 0.2).name(),
            mono=QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family(),
        )

    def colour(self, role: str) -> str:
        """``#rrggbb`` of *role*."""
        return role_colour(role, self.dark).name()

    def highlight(self) -> str:
        """``#rrggbb`` behind a highlighted summary line (the summary's colour, faint)."""
        return mix(QColor(self.base), role_colour("compactionSummary", self.dark), 0.28).name()


@dataclass(frozen=True, slots=True)
class Sub:
    """A sub-header row inside a card (a tool result under its call)."""

    title: str
    right: str = ""


@dataclass(slots=True)
class Rendered:
    """The HTML of an entry's header and body, and the entry ids its links open."""

    header: str = ""
    body: str = ""
    links: list[str] = field(default_factory=list)
    folds: list[str] = field(default_factory=list)
    """The fold keys ``fold:<n>`` links toggle."""


def when(timestamp: str | int | None) -> str:
    """``YYYY-MM-DD HH:MM:SS`` (UTC) of an ISO string or epoch milliseconds."""
    if isinstance(timestamp, int):
        return datetime.fromtimestamp(timestamp / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(timestamp, str) and timestamp:
        return timestamp.replace("T", " ").replace("Z", "")[:19]
    return ""


def pretty_json(raw: Any) -> str:
    """*raw* as indented JSON (orjson), or its repr if it cannot be serialised."""
    try:
        return jsonio.dumps(raw, pretty=True).decode("utf-8")
    except TypeError:
        return repr(raw)


SUMMARY_ANCHOR = "summary-line-"
"""The anchor name of a compaction summary's line *n* is this plus *n* (from 1)."""


def _tokens(n: int) -> str:
    return f"≈ {n:,} tok"


class EntryRenderer:
    """Builds the HTML of one entry of *session*."""

    def __init__(
        self,
        session: Session,
        pairs: dict[str, ToolPair],
        theme: Theme,
        expanded: Set[str],
        *,
        highlight_line: int | None = None,
    ) -> None:
        self.session = session
        self.highlight_line = highlight_line
        self.pairs = pairs
        self.t = theme
        self.expanded = expanded
        self.links: list[str] = []
        self.folds: list[str] = []
        self.out: list[str] = []

    # pieces -----------------------------------------------------------------------------

    def entry_link(self, entry_id: str) -> str:
        """A link that opens *entry_id*."""
        self.links.append(entry_id)
        return f'<a href="entry:{len(self.links) - 1}">{esc(entry_id)}</a>'

    def fold_link(self, key: str, label: str) -> str:
        """A link that expands or folds the block *key*."""
        self.folds.append(key)
        return f'<a href="fold:{len(self.folds) - 1}">{esc(label)}</a>'

    def muted(self, text: str) -> str:
        """*text* in the muted colour."""
        return f'<span style="color:{self.t.muted}">{esc(text)}</span>'

    def title(self, role: str, text: str, mono: bool = False) -> str:
        """A block title in *role*'s colour."""
        family = f"font-family:'{esc(self.t.mono)}';" if mono else ""
        return (
            f'<span style="color:{self.t.colour(role)};font-weight:600;{family}">{esc(text)}</span>'
        )

    def text(self, text: str, key: str, mono: bool, limit: int) -> str:
        """*text* with its line breaks, clipped to *limit* lines unless *key* is expanded."""
        shown, hidden = (text, 0) if key in self.expanded else clip_lines(text, limit)
        family = f"font-family:'{esc(self.t.mono)}';" if mono else ""
        out = f'<div style="white-space:pre-wrap;{family}">{esc(shown)}</div>'
        if hidden:
            out += (
                f"<div>{self.muted('… ')}{self.fold_link(key, f'show {hidden:,} more lines')}</div>"
            )
        elif key in self.expanded and text.count("\n") >= limit:
            out += f"<div>{self.fold_link(key, 'show less')}</div>"
        return out

    def arguments(self, arguments: Any, key: str) -> str:
        """Tool arguments: one row per key with strings shown as they are, else JSON."""
        if not isinstance(arguments, dict) or not arguments:
            return self.text(arguments_text(arguments), key, True, MONO_LINES)
        rows = []
        for name, value in arguments.items():
            shown = value if isinstance(value, str) else arguments_text(value)
            rows.append(
                f'<tr><td style="color:{self.t.muted};padding:0 12px 0 0;'
                f"font-family:'{esc(self.t.mono)}';\">{esc(str(name))}</td>"
                f"<td>{self.text(shown, f'{key}.{name}', True, MONO_LINES)}</td></tr>"
            )
        return f'<table cellspacing="0" cellpadding="0">{"".join(rows)}</table>'

    def summary_lines(self, summary: str) -> str:
        """A compaction's summary, one paragraph per line, each named ``summary-line-<n>``.

        The names let the view scroll to a line and tell which line a point is on;
        :attr:`highlight_line` gets a faint background.
        """
        if not summary:
            return self.muted("(empty summary)")
        rows = []
        for n, line in enumerate(summary.splitlines(), 1):
            style = "margin:0;white-space:pre-wrap;"
            if n == self.highlight_line:
                style += f"background-color:{self.t.highlight()};"
            rows.append(
                f'<p style="{style}"><a name="{SUMMARY_ANCHOR}{n}"></a>{esc(line) or "&nbsp;"}</p>'
            )
        return "".join(rows)

    def facts(self, pairs: list[tuple[str, str]]) -> None:
        """A two-column table of names and (already escaped) values."""
        rows = "".join(
            f'<tr><td style="color:{self.t.muted};padding:1px 16px 1px 0;">{esc(k)}</td>'
            f"<td>{v}</td></tr>"
            for k, v in pairs
        )
        self.out.append(f'<table cellspacing="0" cellpadding="0">{rows}</table>')

    def card(self, stripe: str, title: str, right: str, rows: list[str | Sub]) -> None:
        """A block: a header row (title, figures) over body rows, a coloured left stripe."""
        t = self.t
        line = f"1px solid {t.border}"
        left = f"3px solid {t.colour(stripe)}"

        def head(cells: tuple[str, str], top: str) -> str:
            return (
                f'<tr><td style="background-color:{t.head};padding:3px 8px;border-left:{left};'
                f'border-top:{top};border-bottom:{line};border-right:none;">{cells[0]}</td>'
                f'<td align="right" style="background-color:{t.head};color:{t.muted};'
                f"padding:3px 8px;border-right:{line};border-top:{top};border-bottom:{line};"
                f'border-left:none;">{cells[1]}</td></tr>'
            )

        out = [head((title, right), line)]
        for i, row in enumerate(rows):
            if isinstance(row, Sub):
                out.append(head((row.title, row.right), "none"))
                continue
            bottom = line if i == len(rows) - 1 else "none"
            out.append(
                f'<tr><td colspan="2" style="padding:4px 8px;border-left:{left};'
                f'border-right:{line};border-bottom:{bottom};">{row}</td></tr>'
            )
        self.out.append(
            '<table width="100%" cellspacing="0" cellpadding="0" '
            f'style="border-collapse:collapse;margin-top:8px;background-color:{t.card};">'
            f"{''.join(out)}</table>"
        )

    # entries ----------------------------------------------------------------------------

    def render(self, entry: Entry) -> Rendered:
        """The header and body HTML of *entry*."""
        msg = entry.message
        if entry.type == "compaction":
            self._compaction(entry)
        elif entry.type == "branch_summary" and msg is not None:
            self._branch_summary(entry, msg)
        elif msg is not None:
            self._message(msg)
        else:
            self._other(entry)
        return Rendered(self._header(entry, msg), "".join(self.out), self.links, self.folds)

    def _header(self, entry: Entry, msg: Message | None) -> str:
        t = self.t
        label = msg.role if msg is not None else entry.type
        colour = t.colour(label if label in ROLE_COLOURS else "other")
        pill = (
            f'<span style="background-color:{colour};color:{t.base};font-weight:600;">'
            f"&nbsp;{esc(label)}&nbsp;</span>"
        )
        bits = [f"#{entry.index}", f"line {entry.line}", entry.id, when(entry.timestamp)]
        if msg is not None:
            bits += [msg.model, f"stop: {msg.stop_reason}" if msg.stop_reason else ""]
        first = " · ".join(esc(b) for b in bits if b)
        if entry.recovered:
            first += "<br>" + self.title(
                "error",
                f"Never seen by the agent: it cannot parse line {entry.line} (objects run "
                "together), or the file's header line, and drops it. memlens shows it, but "
                "leaves it out of every replayed context, token count, plan and trim.",
            )
        if msg is None:
            return f"{pill}&nbsp;&nbsp;{first}"
        figures = [f"pi estimate {estimate_message(msg):,} tokens"]
        if usage_total(msg.usage):
            figures.append(f"usage: {usage_line(msg.usage)}")
        return f"{pill}&nbsp;&nbsp;{first}<br>{self.muted(' · '.join(figures))}"

    def _message(self, msg: Message) -> None:
        if msg.role == "toolResult" and msg.tool_call_id in self.pairs:
            self._answered_call(self.pairs[msg.tool_call_id])
        for i, part in enumerate(message_parts(msg)):
            self._part(msg.role, part, i)
        if not msg.blocks:
            self.out.append(f"<p>{self.muted('(no content)')}</p>")

    def _part(self, role: str, part: Part, i: int) -> None:
        tok = _tokens(part.tokens)
        if part.kind == "thinking":
            key = f"thinking-{i}"
            opened = key in self.expanded
            title = self.fold_link(key, f"{'▾' if opened else '▸'} {part.title}")
            if opened:
                style = f"white-space:pre-wrap;font-style:italic;color:{self.t.muted}"
                row = f'<div style="{style}">{esc(part.body)}</div>'
            else:
                row = f"<i>{self.muted(collapse_line(part.body, 160) or '(empty)')}</i>"
            self.card("thinking", title, tok, [row])
        elif part.kind == "tool_call":
            self._call(part, tok)
        elif part.kind == "image":
            size = format_bytes(part.size) if part.size else "size unknown"
            row = self.muted(f"[image placeholder] {part.mime or 'unknown type'} · {size}")
            self.card("other", self.title("other", "Image"), tok, [row])
        else:
            colour = "error" if part.is_error else role
            title = part.title + (f" · {part.images} image(s)" if part.images else "")
            mono = part.kind in ("tool_result", "other") or role in ("toolResult", "bashExecution")
            body = self.text(part.body, f"text-{i}", mono, MONO_LINES if mono else TEXT_LINES)
            self.card(colour, self.title(colour, title), tok, [body])

    def _call(self, part: Part, tok: str) -> None:
        title = self.title("assistant", f"⚙ {part.title}", mono=True)
        if part.tool_id:
            title += "&nbsp;&nbsp;" + self.muted(part.tool_id)
        rows: list[str | Sub] = [self.arguments(part.arguments, f"args-{part.tool_id}")]
        pair = self.pairs.get(part.tool_id)
        results = tool_results(self.session, pair) if pair is not None else []
        if not results:
            rows.append(Sub(self.title("error", "↳ no result in this transcript")))
        for j, res in enumerate(results):
            role = "error" if res.is_error else "toolResult"
            label = "↳ error result" if res.is_error else "↳ result"
            extra = f" · {res.images} image(s)" if res.images else ""
            right = f"{esc(_tokens(res.tokens))}{esc(extra)} · {self.entry_link(res.entry_id)}"
            rows.append(Sub(self.title(role, label), right))
            rows.append(self.text(res.text, f"result-{part.tool_id}-{j}", True, MONO_LINES))
        self.card("assistant", title, tok, rows)

    def _answered_call(self, pair: ToolPair) -> None:
        block = tool_call(self.session, pair)
        if block is None or pair.call_entry is None:
            return
        title = self.title("assistant", f"⚙ call: {block.name}", mono=True)
        right = f"{esc(block.tool_id)} · {self.entry_link(pair.call_entry)}"
        self.card("assistant", title, right, [self.arguments(block.arguments, "call-args")])

    def _compaction(self, entry: Entry) -> None:
        raw = entry.raw
        first = str(raw.get("firstKeptEntryId") or "")
        facts: list[tuple[str, str]] = []
        for key in ("tokensBefore", "tokensAfter"):
            value = jsonio.as_int(raw.get(key))
            facts.append((key, f"{value:,}" if value is not None else self.muted("not recorded")))
        kept = self.session.by_id.get(first)
        if kept is not None:
            facts.append(("firstKeptEntryId", f"{self.entry_link(first)} (#{kept.index})"))
        else:
            facts.append(("firstKeptEntryId", esc(first) or self.muted("none")))
        self.facts(facts)
        msg = entry.message
        tok = _tokens(estimate_message(msg)) if msg is not None else ""
        summary = str(raw.get("summary") or "")
        self.card(
            "compactionSummary",
            self.title("compactionSummary", "Summary"),
            tok,
            [self.summary_lines(summary)],
        )
        details = raw.get("details")
        if details:
            body = self.text(arguments_text(details), "details", True, MONO_LINES)
            self.card("other", self.title("other", "Details"), "", [body])

    def _branch_summary(self, entry: Entry, msg: Message) -> None:
        source = str(entry.raw.get("fromId") or "")
        if source in self.session.by_id:
            self.facts([("fromId", self.entry_link(source))])
        text = msg.blocks[0].text if msg.blocks else ""
        self.card(
            "branchSummary",
            self.title("branchSummary", "Branch summary"),
            _tokens(estimate_message(msg)),
            [self.text(text, "summary", False, 100_000)],
        )

    def _other(self, entry: Entry) -> None:
        skip = {"type", "id", "parentId", "timestamp"}
        facts = [
            (k, esc(collapse_line(str(v), 200)))
            for k, v in entry.raw.items()
            if k not in skip and isinstance(v, (str, int, float, bool))
        ]
        if facts:
            self.facts(facts)
        note = "not part of the model's context" if entry.type != "message" else "no message"
        body = self.text(pretty_json(entry.raw), "raw", True, 200)
        self.card("other", self.title("other", f"{entry.type} entry"), self.muted(note), [body])
