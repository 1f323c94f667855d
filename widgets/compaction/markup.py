"""HTML for the compaction view: a summary with its sections, and one side of a text diff.

Every piece of text is escaped; the only markup is what is built here.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from core.compaction.prompts import REQUIRED_HEADINGS

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.compaction.sections import SummarySection
    from core.compaction.textdiff import DiffRow

_BOLD = re.compile(r"\*\*(.+?)\*\*")
_CODE = re.compile(r"`([^`\n]+)`")
_ITALIC = re.compile(r"(?<![\w&])_([^_\n]+)_(?!\w)")
_REQUIRED = {h[3:] for h in REQUIRED_HEADINGS}


@dataclass(frozen=True, slots=True)
class DiffColors:
    """Backgrounds of a diff, already blended with the view's base colour."""

    removed: str
    added: str
    changed: str
    changed_strong: str
    gap: str
    muted: str


def blend(base: str, tint: str, alpha: float) -> str:
    """``#rrggbb`` of *tint* laid over *base* with opacity *alpha*."""
    b = [int(base[i : i + 2], 16) for i in (1, 3, 5)]
    t = [int(tint[i : i + 2], 16) for i in (1, 3, 5)]
    mixed = [round(x + (y - x) * alpha) for x, y in zip(b, t, strict=True)]
    return "#" + "".join(f"{v:02x}" for v in mixed)


def diff_colors(base: str, text: str) -> DiffColors:
    """Colours readable on *base* (light or dark), tinted red, green and amber."""
    return DiffColors(
        removed=blend(base, "#e5484d", 0.22),
        added=blend(base, "#30a46c", 0.22),
        changed=blend(base, "#f5a524", 0.18),
        changed_strong=blend(base, "#f5a524", 0.45),
        gap=blend(base, text, 0.06),
        muted=blend(base, text, 0.45),
    )


def inline(text: str) -> str:
    """Escaped *text* with ``**bold**`` and ```code``` turned into markup."""
    out = html.escape(text, quote=False)
    out = _BOLD.sub(r"<b>\1</b>", out)
    out = _ITALIC.sub(r"<i>\1</i>", out)
    return _CODE.sub(r"<code>\1</code>", out)


def anchor(n: int) -> str:
    """The anchor name of section *n* in :func:`summary_html`."""
    return f"section-{n}"


def summary_html(sections: Sequence[SummarySection], muted: str) -> str:
    """The summary, one heading per section (anchored), bodies kept line by line."""
    parts: list[str] = []
    for n, sec in enumerate(sections):
        parts.append(f'<a name="{anchor(n)}"></a>')
        if sec.title:
            tag = "h3" if sec.level <= 2 else "h4"
            parts.append(
                f'<{tag} style="margin-top:14px; margin-bottom:4px">{inline(sec.title)}</{tag}>'
            )
        lines = sec.body.split("\n") if sec.body else []
        if not sec.body.strip() or sec.body.strip() == "(none)":
            parts.append(f'<p style="margin:0; color:{muted}"><i>(nothing)</i></p>')
            continue
        block: list[str] = []
        for line in lines:
            if line.strip() == "---":
                if block:
                    parts.append(_para(block))
                    block = []
                parts.append("<hr/>")
            else:
                block.append(inline(line))
        if block:
            parts.append(_para(block))
    return "\n".join(parts)


def _para(lines: list[str]) -> str:
    return '<p style="margin:0; white-space:pre-wrap">' + "<br/>".join(lines) + "</p>"


def is_required(title: str) -> bool:
    """True for one of the five headings every summary must have."""
    return title in _REQUIRED


Side = Literal["left", "right"]


def diff_side_html(
    rows: Sequence[DiffRow],
    side: Side,
    colors: DiffColors,
    spans: dict[int, list[tuple[int, int]]] | None = None,
) -> str:
    """One pane of the side-by-side diff: one unwrapped line per row, so both panes align.

    Parameters
    ----------
    spans
        For ``replace`` rows (by row number): character ranges to mark strongly.
    """
    width = max(
        [len(str(r.left_line if side == "left" else r.right_line or "")) for r in rows] + [2]
    )
    out: list[str] = []
    for n, row in enumerate(rows):
        text = row.left if side == "left" else row.right
        number = row.left_line if side == "left" else row.right_line
        if text is None:
            bg = colors.gap
            body = "&nbsp;"
        else:
            bg = {
                "equal": "",
                "replace": colors.changed,
                "delete": colors.removed,
                "insert": colors.added,
            }[row.kind]
            body = _marked(text, (spans or {}).get(n, []), colors.changed_strong) or "&nbsp;"
        num = html.escape(str(number) if number is not None else "").rjust(width)
        style = "margin:0; white-space:pre" + (f"; background-color:{bg}" if bg else "")
        out.append(
            f'<p style="{style}"><span style="color:{colors.muted}">{num.replace(" ", "&nbsp;")}'
            f"&nbsp;&nbsp;</span>{body}</p>"
        )
    return "\n".join(out)


def _marked(text: str, spans: Sequence[tuple[int, int]], strong: str) -> str:
    if not spans:
        return html.escape(text, quote=False)
    out: list[str] = []
    at = 0
    for start, end in spans:
        out.append(html.escape(text[at:start], quote=False))
        out.append(
            f'<span style="background-color:{strong}">'
            f"{html.escape(text[start:end], quote=False)}</span>"
        )
        at = end
    out.append(html.escape(text[at:], quote=False))
    return "".join(out)
